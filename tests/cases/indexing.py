"""Table rows for indexing: ``x[idx]`` (basic, advanced, traced), ``x.at[idx]`` updates in
every mode, take/take_along_axis, and the lax primitives dynamic_slice,
dynamic_update_slice, gather and scatter."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.primitives import gather_scatter as gs
from tests.cases import OpCase, gen, ints, randn


def perm(n, k=None, dtype=np.int64):
    """Unique indices (a random permutation prefix): scatter derivatives need them."""
    return lambda rng: rng.permutation(n)[:k if k is not None else n].astype(dtype)


def clamp_idx(i, n):
    i = np.asarray(i)
    return np.clip(np.where(i < 0, i + n, i), 0, n - 1)


def _window_rows(x, starts, w, lo_ok, fill):
    """x[s:s+w] per start (a window of axis 0), ``fill`` where the window does not fit."""
    return np.stack([x[s:s + w] if lo_ok(s) else np.full((w,) + x.shape[1:], fill)
                     for s in starts])


def _scatter_window_ref(x, i, u, op):
    """rows of u (each a (2, 3) window of axis 0) combined into x[s:s+2], out-of-range
    windows dropped (XLA's scatter)."""
    out = np.array(x, copy=True)
    for s, w in zip(i[:, 0], u):
        if 0 <= s <= x.shape[0] - 2:
            out[s:s + 2] = op(out[s:s + 2], w)
    return out


def _mul_at(x, i, u):
    out = np.array(x, copy=True)
    np.multiply.at(out, i[:, 0], u)
    return out


def at_ref(x, idx, v, mode):
    """numpy reference for ``x.at[idx].<mode>(v)`` (in-range unique or accumulating)."""
    out = np.array(x, copy=True)
    v = np.broadcast_to(np.asarray(v, x.dtype), out[idx].shape)
    if mode == "set":
        out[idx] = v
    else:
        {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[mode].at(out, idx, v)
    return out


def _clamped_window(x, starts, sizes):
    st = [min(max(int(s), 0), d - n) for s, d, n in zip(starts, x.shape, sizes)]
    return tuple(slice(s, s + n) for s, n in zip(st, sizes))


def _dus_ref(x, u, i, j):
    out = x.copy()
    out[_clamped_window(x, (i, j), u.shape)] = u
    return out


MASK = np.array([True, False, True, True])

CASES = [
    # basic indexing
    OpCase("getitem_int", lambda x: fnp.asarray(x)[1], gen(randn(3, 4)), lambda x: x[1]),
    OpCase("getitem_negative", lambda x: fnp.asarray(x)[-1, -2], gen(randn(3, 4)), lambda x: x[-1, -2]),
    OpCase("getitem_slices", lambda x: fnp.asarray(x)[1:3, ::2], gen(randn(4, 5)), lambda x: x[1:3, ::2]),
    OpCase("getitem_negative_step", lambda x: fnp.asarray(x)[::-2, 3:0:-1], gen(randn(5, 4)),
           lambda x: x[::-2, 3:0:-1]),
    OpCase("getitem_none_ellipsis", lambda x: fnp.asarray(x)[None, ..., 0, None], gen(randn(2, 3, 4)),
           lambda x: x[None, ..., 0, None]),
    OpCase("getitem_empty_slice", lambda x: fnp.asarray(x)[2:1], gen(randn(3, 2)), lambda x: x[2:1]),
    OpCase("getitem_scalar_operand", lambda x: fnp.asarray(x)[()], gen(randn()), lambda x: x[()]),
    OpCase("getitem_int32", lambda x: fnp.asarray(x)[1:, 0], gen(ints(3, 2, dtype=np.int32)),
           lambda x: x[1:, 0], diff=False),
    # advanced indexing with static indices
    OpCase("getitem_int_list", lambda x: fnp.asarray(x)[[0, 2, -1]], gen(randn(4, 2)), lambda x: x[[0, 2, -1]]),
    OpCase("getitem_adv_middle", lambda x: fnp.asarray(x)[:, [1, 0], 1:], gen(randn(2, 3, 4)),
           lambda x: x[:, [1, 0], 1:]),
    OpCase("getitem_adv_separated", lambda x: fnp.asarray(x)[[0, 1], :, [2, 0]], gen(randn(2, 3, 4)),
           lambda x: x[[0, 1], :, [2, 0]]),
    OpCase("getitem_adv_int_separated", lambda x: fnp.asarray(x)[1, :, [2, 0]], gen(randn(2, 3, 4)),
           lambda x: x[1, :, [2, 0]]),
    OpCase("getitem_adv_broadcast", lambda x: fnp.asarray(x)[[[0], [2]], [1, 0, 1]], gen(randn(3, 2)),
           lambda x: x[[[0], [2]], [1, 0, 1]]),
    OpCase("getitem_adv_none_between", lambda x: fnp.asarray(x)[[0, 1], None, [1, 1]], gen(randn(2, 3, 4)),
           lambda x: x[[0, 1], None, [1, 1]]),
    OpCase("getitem_bool_mask", lambda x: fnp.asarray(x)[:, MASK], gen(randn(2, 4)), lambda x: x[:, MASK]),
    # traced indices: in range here, since eager arguments are static indices and numpy
    # raises for those out of range (clamping under jit is tested in tests/test_indexing.py)
    OpCase("getitem_traced_array", lambda x, i: fnp.asarray(x)[i], gen(randn(5, 2), ints(3, low=-5, high=5)),
           lambda x, i: x[i]),
    OpCase("getitem_traced_axis1", lambda x, i: fnp.asarray(x)[:, i], gen(randn(2, 4), ints(2, 2, low=-4, high=4)),
           lambda x, i: x[:, clamp_idx(i, 4)]),
    OpCase("getitem_traced_two", lambda x, i, j: fnp.asarray(x)[i, 1:, j],
           gen(randn(3, 3, 4), ints(2, low=0, high=3), ints(2, low=-4, high=4)),
           lambda x, i, j: x[i, 1:, j]),
    OpCase("getitem_traced_scalar", lambda x, i: fnp.asarray(x)[i, ::-1], gen(randn(4, 3), ints(low=-4, high=4)),
           lambda x, i: x[int(i), ::-1]),
    OpCase("getitem_traced_scalar_axis1", lambda x, i: fnp.asarray(x)[1:, i], gen(randn(3, 4), ints(low=-4, high=4)),
           lambda x, i: x[1:, int(i)]),
    OpCase("getitem_traced_with_int", lambda x, i: fnp.asarray(x)[i, 2], gen(randn(4, 3), ints(2, 2, low=0, high=4)),
           lambda x, i: x[i, 2]),
    # .at updates
    OpCase("at_set", lambda x, v: fnp.asarray(x).at[1:3].set(v), gen(randn(4, 2), randn(2, 2)),
           lambda x, v: at_ref(x, np.s_[1:3], v, "set")),
    OpCase("at_set_scalar_value", lambda x: fnp.asarray(x).at[::2, 1].set(7.0), gen(randn(4, 2)),
           lambda x: at_ref(x, np.s_[::2, 1], 7.0, "set")),
    OpCase("at_set_traced_idx", lambda x, i, v: fnp.asarray(x).at[i].set(v),
           gen(randn(5, 2), perm(5, 3), randn(3, 2)), lambda x, i, v: at_ref(x, i, v, "set")),
    OpCase("at_add_dupes", lambda x, i, v: fnp.asarray(x).at[i].add(v),
           gen(randn(4), ints(6, low=-4, high=4), randn(6)), lambda x, i, v: at_ref(x, i, v, "add")),
    OpCase("at_add_broadcast", lambda x, v: fnp.asarray(x).at[:, [0, 2]].add(v), gen(randn(2, 3), randn(2)),
           lambda x, v: at_ref(x, np.s_[:, [0, 2]], v, "add")),
    OpCase("at_mul", lambda x, i, v: fnp.asarray(x).at[i, 1:].multiply(v),
           gen(randn(4, 3), perm(4, 2), randn(2, 2)), lambda x, i, v: at_ref(x, np.s_[i, 1:], v, "mul")),
    OpCase("at_min", lambda x, i, v: fnp.asarray(x).at[i].min(v), gen(randn(5), perm(5, 3), randn(3)),
           lambda x, i, v: at_ref(x, i, v, "min")),
    OpCase("at_max", lambda x, v: fnp.asarray(x).at[..., 0].max(v), gen(randn(2, 3), randn(2)),
           lambda x, v: at_ref(x, np.s_[..., 0], v, "max")),
    OpCase("at_out_of_range_dropped", lambda x, v: fnp.asarray(x).at[[1, 7, -9]].set(v), gen(randn(4), randn(3)),
           lambda x, v: at_ref(x, [1], v[:1], "set")),
    OpCase("at_traced_scalar", lambda x, i: fnp.asarray(x).at[i].add(1.0), gen(randn(3, 2), ints(low=-3, high=3)),
           lambda x, i: at_ref(x, int(i), 1.0, "add")),
    OpCase("at_get", lambda x: fnp.asarray(x).at[1, ::-1].get(), gen(randn(2, 3)), lambda x: x[1, ::-1]),
    OpCase("at_int_dtype", lambda x, v: fnp.asarray(x).at[0].set(v), gen(ints(3, 2), randn(2)),
           lambda x, v: at_ref(x, 0, v.astype(np.int64), "set"), diff=False),
    # take / take_along_axis
    OpCase("take_flat", lambda x: fnp.take(x, [5, 0, -1, 9], mode="clip"), gen(randn(2, 3)),
           lambda x: np.take(x, [5, 0, -1, 9], mode="clip")),   # numpy/JAX: -1 clips to 0
    OpCase("take_default_in_range", lambda x: fnp.take(x, [5, 0, -1, -6]), gen(randn(2, 3)),
           lambda x: np.take(x, [5, 0, -1, -6])),
    OpCase("take_traced", lambda x, i: fnp.take(x, i, axis=1, mode="clip"),
           gen(randn(3, 5), ints(2, 2, low=-7, high=7)),
           lambda x, i: np.take(x, i, axis=1, mode="clip")),
    OpCase("take_traced_default", lambda x, i: fnp.take(x, i, axis=1),
           gen(randn(3, 5), ints(2, 2, low=-5, high=5)), lambda x, i: np.take(x, i, axis=1)),
    OpCase("take_fill_int_default", lambda x, i: fnp.take(x, i, mode="fill"),
           gen(ints(4), ints(5, low=-6, high=6)),
           lambda x, i: np.where((i >= -4) & (i < 4), np.take(x, clamp_idx(i, 4)),
                                 np.iinfo(np.int64).min), diff=False),
    OpCase("take_wrap", lambda x, i: fnp.take(x, i, axis=0, mode="wrap"), gen(randn(3, 2), ints(4, low=-7, high=7)),
           lambda x, i: np.take(x, i, axis=0, mode="wrap")),
    OpCase("take_fill", lambda x, i: fnp.take(x, i, mode="fill", fill_value=-1.0), gen(randn(4), ints(5, low=-6, high=6)),
           lambda x, i: np.where((i >= -4) & (i < 4), np.take(x, clamp_idx(i, 4)), -1.0)),
    OpCase("take_along_axis", lambda x, i: fnp.take_along_axis(x, i, axis=1),
           gen(randn(3, 4), ints(3, 2, low=-4, high=4)), lambda x, i: np.take_along_axis(x, i, axis=1)),
    OpCase("take_along_axis_bcast", lambda x, i: fnp.take_along_axis(x, i, axis=0),
           gen(randn(4, 3), ints(2, 1, low=0, high=4)), lambda x, i: np.take_along_axis(x, i, axis=0)),
    # lax primitives
    OpCase("lax_dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
           gen(randn(4, 5), ints(low=-2, high=5), ints(low=0, high=6, dtype=np.int32)),
           lambda x, i, j: x[_clamped_window(x, (i, j), (2, 3))]),
    OpCase("lax_dynamic_update_slice", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
           gen(randn(4, 5), randn(2, 3), ints(low=-2, high=5), ints(low=0, high=6)), _dus_ref),
    OpCase("lax_gather", lambda x, i: gs.gather(x, i, 2), gen(randn(3, 4, 2), ints(5, 2, low=-1, high=5)),
           lambda x, i: x[np.clip(i[:, 0], 0, 2), np.clip(i[:, 1], 0, 3)]),
    OpCase("lax_gather_fill", lambda x, i: gs.gather(x, i, 1, index_mode="fill"), gen(randn(3, 2), ints(4, 1, low=-2, high=5)),
           lambda x, i: np.where(((i >= 0) & (i < 3)), x[np.clip(i[:, 0], 0, 2)], 0.0)),
    OpCase("lax_scatter_add", lambda x, i, u: gs.scatter(x, i, u, 1, "add"),
           gen(randn(4, 2), ints(5, 1, low=-1, high=5), randn(5, 2)),
           lambda x, i, u: at_ref(x, i[(i[:, 0] >= 0) & (i[:, 0] < 4), 0], u[(i[:, 0] >= 0) & (i[:, 0] < 4)], "add")),
    OpCase("lax_scatter_set_2d", lambda x, i, u: gs.scatter(x, i, u, 2, "set"),
           gen(randn(3, 3), lambda rng: np.stack(np.unravel_index(rng.permutation(9)[:4], (3, 3)), -1), randn(4)),
           lambda x, i, u: at_ref(x, (i[:, 0], i[:, 1]), u, "set")),
    # lax.gather / scatter with XLA dimension numbers (composed onto the rows above)
    OpCase("lax_gather_dims_window_fill",
           lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers((1, 2), (), (0,)), (2, 4),
                                   mode="fill", fill_value=0.5),
           gen(randn(5, 4), ints(3, 1, low=-2, high=6)),
           lambda x, i: _window_rows(x, i[:, 0], 2, lambda s: 0 <= s <= 3, 0.5)),
    OpCase("lax_gather_dims_batching",
           lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers((), (1,), (1,), (0,), (0,)),
                                   (1, 1), mode="clip"),
           gen(randn(2, 5), ints(2, 3, 1, low=-2, high=7)),
           lambda x, i: np.take_along_axis(x, np.clip(i[..., 0], 0, 4), axis=1)),
    OpCase("lax_scatter_mul_repeated",
           lambda x, i, u: lax.scatter_mul(x, i, u, lax.ScatterDimensionNumbers((), (0,), (0,))),
           gen(randn(3), lambda rng: np.array([[0], [2], [0], [0], [1]]), randn(5)), _mul_at),
    OpCase("lax_scatter_max_window",
           lambda x, i, u: lax.scatter_max(x, i, u, lax.ScatterDimensionNumbers((1, 2), (), (0,))),
           gen(randn(6, 3), ints(3, 1, low=-1, high=6), randn(3, 2, 3)),
           lambda x, i, u: _scatter_window_ref(x, i, u, np.maximum)),
]
