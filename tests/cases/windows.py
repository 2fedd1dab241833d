"""Table rows for ``lax.reduce_window`` and its helpers: every monoid, strides, named and
explicit padding (negative crops), base and window dilation, a non-identity initial
value. The reference folds each window directly (padding contributes nothing, the
initial value enters once, as in JAX)."""
import numpy as np

from functrans import lax
from tests.cases import OpCase, gen, randn

_NP = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}


def window_reference(x, init, op, window, strides, padding, base_dilation=None,
                     window_dilation=None):
    nd = x.ndim
    bd = base_dilation or (1,) * nd
    wdil = window_dilation or (1,) * nd
    eff = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    if isinstance(padding, str):
        padding = lax.padtype_to_pads(x.shape, eff, strides, padding)
    # positions of the dilated, padded base that hold an element of x
    size = [(n - 1) * b + 1 + lo + hi for n, b, (lo, hi) in zip(x.shape, bd, padding)]
    out_shape = [max(0, (s - e) // st + 1) for s, e, st in zip(size, eff, strides)]
    out = np.full(out_shape, init, x.dtype)
    for o in np.ndindex(*out_shape):
        acc = np.asarray(init, x.dtype)
        for t in np.ndindex(*window):
            src = []
            for j in range(nd):
                q = o[j] * strides[j] + t[j] * wdil[j] - padding[j][0]
                if q < 0 or q % bd[j] or q // bd[j] >= x.shape[j]:
                    break
                src.append(q // bd[j])
            else:
                acc = _NP[op](acc, x[tuple(src)])
        out[o] = acc
    return out


def _case(name, op, shape, init, window, strides, padding, **kw):
    return OpCase(name, lambda x: lax.reduce_window(x, init, getattr(lax, op), window, strides,
                                                    padding, **kw),
                  gen(randn(*shape)),
                  lambda x: window_reference(x, init, op, window, strides, padding, **kw))


CASES = [
    _case("reduce_window_sum_3d", "add", (2, 5, 6), 0.0, (1, 2, 3), (1, 2, 1),
          [(0, 0), (1, 0), (1, 2)]),
    _case("reduce_window_max_same", "max", (4, 7), -np.inf, (2, 3), (2, 2), "SAME"),
    _case("reduce_window_min_base_dilation", "min", (6, 5), np.inf, (3, 2), (1, 1),
          [(-1, 1), (1, 0)], base_dilation=(2, 1)),
    _case("reduce_window_mul", "mul", (5, 4), 1.0, (2, 2), (1, 2), "VALID"),
    _case("reduce_window_add_init_dilated", "add", (3, 8), 1.5, (1, 3), (1, 2), "SAME",
          window_dilation=(1, 2)),
    _case("reduce_window_max_pool", "max", (2, 6, 6), -np.inf, (1, 2, 2), (1, 2, 2), "VALID"),
    OpCase("reduce_window_sum_helper", lambda x: lax.reduce_window_sum(x, (2, 2), (1, 1), "SAME"),
           gen(randn(3, 4)),
           lambda x: window_reference(x, 0.0, "add", (2, 2), (1, 1), "SAME")),
    OpCase("reduce_window_max_helper", lambda x: lax.reduce_window_max(x, (3,), (2,)),
           gen(randn(7)), lambda x: window_reference(x, -np.inf, "max", (3,), (2,), "VALID")),
]
