"""functrans.ops segment reductions against a NumPy loop (JAX's semantics: ids outside
[0, num_segments), negative ones included, are dropped; empty segments hold the identity),
plus grad, jit and vmap."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import ops

_IDS = np.array([0, 2, 0, -1, 5, 2, 1])
_DATA = np.array([[1.0, -2.0], [3.0, 0.5], [2.0, 4.0], [7.0, 7.0], [9.0, 9.0], [-1.0, 1.0],
                  [0.25, 3.0]])


def _ref(red, init, data, ids, n):
    out = np.full((n,) + data.shape[1:], init, data.dtype)
    for row, k in zip(data, ids):
        if 0 <= k < n:
            out[k] = red(out[k], row)
    return out


@pytest.mark.parametrize("name, red, init", [
    ("segment_sum", np.add, 0.0), ("segment_prod", np.multiply, 1.0),
    ("segment_max", np.maximum, -np.inf), ("segment_min", np.minimum, np.inf)])
def test_against_a_loop(name, red, init):
    f = getattr(ops, name)
    got = f(fnp.asarray(_DATA), fnp.asarray(_IDS), 4)
    np.testing.assert_array_equal(np.asarray(got), _ref(red, init, _DATA, _IDS, 4))
    jitted = ft.jit(lambda d, i: f(d, i, 4))(fnp.asarray(_DATA), fnp.asarray(_IDS))
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(got))


def test_int_identity_default_num_segments_grad_vmap():
    got = ops.segment_min(fnp.asarray([3, 1, 2]), fnp.asarray([0, 0, 2]), 3)
    assert got.tolist() == [1, np.iinfo(np.int64).max, 2]
    assert ops.segment_sum(fnp.ones(3), fnp.asarray([0, 3, 3])).tolist() == [1.0, 0.0, 0.0, 2.0]
    g = ft.grad(lambda d: fnp.sum(ops.segment_sum(d, fnp.asarray(_IDS), 4) ** 2))(
        fnp.asarray(_DATA[:, 0]))
    seg = _ref(np.add, 0.0, _DATA[:, 0], _IDS, 4)
    want = [2 * seg[k] if 0 <= k < 4 else 0.0 for k in _IDS]
    np.testing.assert_allclose(np.asarray(g), want)
    v = ft.vmap(lambda d: ops.segment_max(d, fnp.asarray(_IDS), 4), in_axes=1)(fnp.asarray(_DATA))
    np.testing.assert_array_equal(np.asarray(v), _ref(np.maximum, -np.inf, _DATA, _IDS, 4).T)
    with pytest.raises(ValueError, match="segment_ids must be 1-d"):
        ops.segment_sum(fnp.ones(3), fnp.asarray([0, 1]), 2)
