"""lax.gather / lax.scatter* with XLA dimension numbers (functrans.lax_gather): values against
a loop-per-row numpy reference of XLA's semantics (windows, collapsed/inserted and batching
axes, modes clip / fill(_value) / drop / promise_in_bounds), eager and jitted, vmap against a
loop, gradients against finite differences (scatter mul with repeated indices included),
scatter_apply, and JAX's checks of the dimension numbers."""
import itertools

import numpy as np
import pytest

import functrans as ft
from functrans import lax
from functrans.test_util import check_grads

G, S = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers


# --------------------------------------------------------------------------- references

def _starts(shape, idx_row, b, index_map, obatch, ibatch):
    start = [0] * len(shape)
    for j, d in enumerate(index_map):
        start[d] = int(idx_row[j])
    for d, e in zip(obatch, ibatch):
        start[d] = b[e]
    return start


def _fix(start, shape, sizes, index_map, clip):
    """Clamp (clip) or say whether every window of ``index_map`` fits."""
    ok = all(0 <= start[d] <= shape[d] - sizes[d] for d in index_map)
    if clip:
        for d in index_map:
            start[d] = min(max(start[d], 0), shape[d] - sizes[d])
    return start, ok


def np_gather(x, idx, dn, sizes, mode="promise_in_bounds", fill=np.nan):
    nb, drop = idx.ndim - 1, set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    kept = [d for d in range(x.ndim) if d not in drop]
    raw = np.empty(idx.shape[:-1] + tuple(sizes[d] for d in kept), x.dtype)
    for b in np.ndindex(*idx.shape[:-1]):
        start = _starts(x.shape, idx[b], b, dn.start_index_map, dn.operand_batching_dims,
                        dn.start_indices_batching_dims)
        start, ok = _fix(start, x.shape, sizes, dn.start_index_map, mode != "fill")
        win = x[tuple(slice(s, s + n) for s, n in zip(start, sizes))]
        raw[b] = win.reshape(raw.shape[nb:]) if ok or mode != "fill" else fill
    batch = iter(range(nb))
    perm = [nb + dn.offset_dims.index(q) if q in dn.offset_dims else next(batch)
            for q in range(raw.ndim)]
    return np.transpose(raw, perm)


_OPS = {"set": lambda a, u: u, "add": np.add, "mul": np.multiply, "min": np.minimum,
        "max": np.maximum, "sub": np.subtract}


def np_scatter(x, idx, u, dn, op, mode="drop"):
    out = np.array(x, copy=True)
    drop = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    kept = [d for d in range(x.ndim) if d not in drop]
    sizes = [1] * x.ndim
    for d, w in zip(kept, dn.update_window_dims):
        sizes[d] = u.shape[w]
    scatter_axes = [a for a in range(u.ndim) if a not in dn.update_window_dims]
    for b in np.ndindex(*idx.shape[:-1]):
        start = _starts(x.shape, idx[b], b, dn.scatter_dims_to_operand_dims,
                        dn.operand_batching_dims, dn.scatter_indices_batching_dims)
        start, ok = _fix(start, x.shape, sizes, dn.scatter_dims_to_operand_dims, mode == "clip")
        if not ok and mode != "clip":
            continue
        sel = [slice(None)] * u.ndim
        for a, i in zip(scatter_axes, b):
            sel[a] = i
        region = tuple(slice(s, s + n) for s, n in zip(start, sizes))
        out[region] = _OPS[op](out[region], u[tuple(sel)].reshape(out[region].shape))
    return out


# --------------------------------------------------------------------------- cases
# (operand shape, indices shape, index high, dnums, slice sizes): JAX's testGather rows, plus
# windows on indexed axes, a partial window of an unindexed axis and offset dims moved.

GATHERS = [
    ((5,), (2, 1), 5, G((), (0,), (0,)), (1,)),
    ((10,), (3, 1), 10, G((1,), (), (0,)), (2,)),
    ((10, 5), (3, 1), 10, G((1,), (0,), (0,)), (1, 3)),
    ((10, 5), (2, 2), 10, G((1,), (0,), (0, 1)), (1, 3)),
    ((2, 5), (2, 2, 1), 5, G((), (1,), (1,), (0,), (0,)), (1, 1)),
    ((2, 3, 10), (3, 2, 1), 10, G((2,), (), (2,), (0, 1), (1, 0)), (1, 1, 3)),
    ((4, 6, 3), (2, 3, 2), 6, G((0, 3), (1,), (1, 0)), (2, 1, 3)),
    ((4, 6), (3, 1), 6, G((0, 2), (), (1,)), (4, 4)),
    ((3, 4, 5), (2, 1), 4, G((1,), (1, 2), (1,)), (3, 1, 1)),
    ((0,), (0, 1), 1, G((), (0,), (0,)), (1,)),
]


def _idx(shape, high, seed, low=None):
    rng = np.random.default_rng(seed)
    return rng.integers(-high if low is None else low, 2 * high, shape).astype(np.int32)


@pytest.mark.parametrize("case", range(len(GATHERS)))
@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_gather_values_eager_and_jit(case, mode):
    shape, ishape, high, dn, sizes = GATHERS[case]
    x = np.random.default_rng(case).standard_normal(shape)
    idx = _idx(ishape, high, case, low=0 if mode == "promise_in_bounds" else None)
    want = np_gather(x, idx, dn, sizes, mode, fill=-7.0)
    f = lambda x, i: lax.gather(x, i, dn, sizes, mode=mode, fill_value=-7.0)
    np.testing.assert_array_equal(f(x, idx), want)
    np.testing.assert_array_equal(ft.jit(f)(x, idx), want)


def test_gather_fill_defaults_by_dtype():
    d = G((1,), (), (0,))
    i = np.array([[9]])
    for dt, want in [(np.float32, np.nan), (np.int32, np.iinfo(np.int32).min),
                     (np.uint8, 255), (np.bool_, True)]:
        got = lax.gather(np.zeros(4, dt), i, d, (2,), mode="fill")
        assert got.dtype == dt
        np.testing.assert_array_equal(got, np.full((1, 2), want, dt))
    ints = np.arange(5, dtype=np.int16 if False else np.int32)
    np.testing.assert_array_equal(lax.gather(ints, np.array([[3]], np.uint8), d, (2,)), [[3, 4]])


@pytest.mark.parametrize("case", [1, 3, 4, 6, 7, 8])
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_grads(case, mode):
    shape, ishape, high, dn, sizes = GATHERS[case]
    x = np.random.default_rng(case).standard_normal(shape)
    idx = _idx(ishape, high, case)
    check_grads(lambda x: lax.gather(x, idx, dn, sizes, mode=mode, fill_value=2.0), (x,),
                order=2 if case == 6 else 1)


@pytest.mark.parametrize("case", [2, 4, 6, 7])
def test_gather_vmap_against_a_loop(case):
    shape, ishape, high, dn, sizes = GATHERS[case]
    rng = np.random.default_rng(case)
    xs = rng.standard_normal((3,) + shape)
    idxs = np.stack([_idx(ishape, high, case + k) for k in range(3)])
    f = lambda x, i: lax.gather(x, i, dn, sizes, mode="fill", fill_value=0.5)
    for axes, args in [((0, 0), (xs, idxs)), ((0, None), (xs, idxs[0])),
                       ((None, 0), (xs[0], idxs))]:
        want = np.stack([f(*[a[k] if ax == 0 else a for a, ax in zip(args, axes)])
                         for k in range(3)])
        np.testing.assert_array_equal(ft.vmap(f, in_axes=axes)(*args), want)


# (operand shape, indices shape, index high, updates shape, dnums): JAX's testScatter rows
# plus windows on indexed axes and batching axes.
SCATTERS = [
    ((5,), (2, 1), 5, (2,), S((), (0,), (0,))),
    ((10,), (3, 1), 10, (3, 3), S((1,), (), (0,))),
    ((10, 5), (3, 1), 10, (3, 3), S((1,), (0,), (0,))),
    ((2, 5), (2, 2, 1), 5, (2, 2), S((), (1,), (1,), (0,), (0,))),
    ((2, 3, 10), (3, 2, 1), 10, (3, 2, 3), S((2,), (), (2,), (0, 1), (1, 0))),
    ((4, 6), (3, 2), 6, (2, 3, 3), S((0, 2), (), (0, 1))),
    ((6, 4), (5, 1), 6, (4, 5), S((0,), (0,), (0,))),
    ((5, 6), (3, 1), 5, (3, 4), S((1,), (0,), (0,))),    # axis 1: a window at 0 of 4 < 6
]


@pytest.mark.parametrize("case", range(len(SCATTERS)))
@pytest.mark.parametrize("op", ["set", "add", "sub", "mul", "min", "max"])
def test_scatter_values_eager_and_jit(case, op):
    shape, ishape, high, ushape, dn = SCATTERS[case]
    rng = np.random.default_rng(case)
    x, u = rng.standard_normal(shape), rng.standard_normal(ushape)
    fn = getattr(lax, "scatter" if op == "set" else f"scatter_{op}")
    for mode in ["clip", "fill", "promise_in_bounds"]:
        idx = _idx(ishape, high, case + 7, low=0 if mode == "promise_in_bounds" else None)
        if op == "set":     # unique in-range rows: XLA leaves the winner of a repeat open
            idx = _idx(ishape, high, case + 7, low=0)
        want = np_scatter(x, idx, u, dn, op, "clip" if mode == "clip" else "drop")
        f = lambda x, i, u: fn(x, i, u, dn, mode=mode)
        np.testing.assert_allclose(f(x, idx, u), want, rtol=1e-14)
        np.testing.assert_allclose(ft.jit(f)(x, idx, u), want, rtol=1e-14)


@pytest.mark.parametrize("case", [0, 2, 3, 5])
@pytest.mark.parametrize("op", ["add", "mul", "min", "max", "set"])
def test_scatter_grads(case, op):
    shape, ishape, high, ushape, dn = SCATTERS[case]
    rng = np.random.default_rng(case)
    x, u = rng.standard_normal(shape), rng.standard_normal(ushape)
    idx = _idx(ishape, high, case + 3)
    fn = getattr(lax, "scatter" if op == "set" else f"scatter_{op}")
    check_grads(lambda x, u: fn(x, idx, u, dn, mode="clip"), (x, u), order=1)
    check_grads(lambda x, u: fn(x, idx, u, dn), (x, u), order=1)


def test_scatter_mul_grad_with_repeated_indices_and_zeros():
    """d/du_r of x * prod(u at r's position) is the product of the *other* rows there,
    zeros included: u = [0, 3, 5, 7] at positions [0, 0, 1, 0] give 21, 0, x1, 0."""
    d = S((), (0,), (0,))
    x, i = np.array([1.0, 2.0, 3.0]), np.array([[0], [0], [1], [0]])
    for u, want in [([2.0, 3.0, 5.0, 7.0], [21.0, 14.0, 2.0, 6.0]),
                    ([0.0, 3.0, 5.0, 7.0], [21.0, 0.0, 2.0, 0.0]),
                    ([0.0, 0.0, 5.0, 7.0], [0.0, 0.0, 2.0, 0.0])]:
        u = np.array(u)
        g = ft.grad(lambda u, i: lax.scatter_mul(x, i, u, d).sum())
        np.testing.assert_allclose(g(u, i), want)
        np.testing.assert_allclose(ft.jit(g)(u, i), want)      # traced indices
        check_grads(lambda x, u: lax.scatter_mul(x, i, u, d), (x, u), order=1)
    check_grads(lambda x, u: lax.scatter_mul(x, i, u, d), (x, np.array([2.0, 3, 5, 7])),
                order=2)


@pytest.mark.parametrize("case", [2, 3, 5])
def test_scatter_vmap_against_a_loop(case):
    shape, ishape, high, ushape, dn = SCATTERS[case]
    rng = np.random.default_rng(case)
    xs, us = rng.standard_normal((3,) + shape), rng.standard_normal((3,) + ushape)
    idxs = np.stack([_idx(ishape, high, case + k) for k in range(3)])
    f = lambda x, i, u: lax.scatter_add(x, i, u, dn)
    for axes in list(itertools.product([0, None], repeat=3))[:-1]:     # not all None
        args = [a if ax == 0 else a[0] for a, ax in zip((xs, idxs, us), axes)]
        want = np.stack([f(*[a[k] if ax == 0 else a for a, ax in zip(args, axes)])
                         for k in range(3)])
        np.testing.assert_allclose(ft.vmap(f, in_axes=axes)(*args), want, rtol=1e-14)


def test_scatter_apply_applies_once_per_row():
    d = S((), (0,), (0,))
    x, i = np.arange(5.0), np.array([[0], [3], [0], [9]])
    want = np.array([0.0 + 2, 1, 2, 3 + 1, 4])
    f = lambda x, i: lax.scatter_apply(x, i, lambda v: v + 1.0, d, update_shape=(4,))
    np.testing.assert_array_equal(f(x, i), want)
    np.testing.assert_array_equal(ft.jit(f)(x, i), want)       # traced: a while loop
    # constant indices: counted while tracing, so grad works under jit too (func twice at 0)
    g0 = ft.jit(ft.grad(lambda x: f(x, i).sum()))
    check_grads(lambda x: f(x, i), (x,), order=1)
    np.testing.assert_array_equal(g0(x), [1.0, 1, 1, 1, 1])
    g = lambda x, i: lax.scatter_apply(x, i, np.sin, S((1,), (0,), (0,)), update_shape=(2, 3),
                                       mode="clip")
    x2 = np.random.default_rng(0).standard_normal((4, 3))
    want2 = x2.copy()
    want2[[3, 1]] = np.sin(x2[[3, 1]])
    np.testing.assert_allclose(ft.jit(g)(x2, np.array([[7], [1]])), want2)


def test_modes_and_names():
    assert lax.GatherScatterMode.from_any(None) is lax.GatherScatterMode.FILL_OR_DROP
    assert lax.GatherScatterMode.from_any("drop") is lax.GatherScatterMode.FILL_OR_DROP
    with pytest.raises(ValueError, match="Unknown gather mode"):
        lax.GatherScatterMode.from_any("wrap")
    with pytest.raises(NotImplementedError, match="ONE_HOT"):
        lax.gather(np.ones(3), np.zeros((1, 1), int), G((), (0,), (0,)), (1,), mode="one_hot")
    # gather's default is PROMISE_IN_BOUNDS (clamps), the scatters' FILL_OR_DROP (drops)
    np.testing.assert_array_equal(
        lax.gather(np.arange(3.0), np.array([[5]]), G((), (0,), (0,)), (1,)), [2.0])
    np.testing.assert_array_equal(
        lax.scatter_add(np.zeros(3), np.array([[5]]), np.ones(1), S((), (0,), (0,))), [0, 0, 0])


@pytest.mark.parametrize("args, msg", [
    (((10, 9), (5, 1), G((1, 0), (), (0,)), (1, 9)), "offset_dims in gather op must be sorted"),
    (((10, 9), (5, 1), G((0,), (), (0,)), (1, 9)), "must either be a offset dimension"),
    (((10, 9), (5, 2), G((1,), (0,), (0,)), (1, 9)), "elements in start_index_map"),
    (((10, 9), (5, 1), G((1,), (0,), (3,)), (1, 9)), "Invalid start_index_map"),
    (((10, 9), (5, 1), G((1,), (0,), (0,)), (2, 9)), "collapse slice dims with bound 1"),
    (((10, 9), (5, 1), G((1,), (0,), (0,)), (1, 10)), "Slice size at index 1"),
    (((4, 9), (5, 1), G((1,), (), (1,), (0,), ()), (1, 9)), "operand_batching_dims and "
     "start_indices_batching_dims"),
    (((4, 9), (5, 1), G((1,), (0,), (1,), (0,), (0,)), (1, 9)), "collapsed_slice_dims and "
     "operand_batching_dims in gather op must be disjoint"),
])
def test_gather_dimension_number_errors(args, msg):
    shape, ishape, dn, sizes = args
    with pytest.raises(TypeError, match=msg):
        lax.gather(np.ones(shape), np.zeros(ishape, np.int32), dn, sizes)


@pytest.mark.parametrize("args, msg", [
    (((10, 9), (5, 1), (5, 9), S((1,), (0,), (0, 1))), "elements in "
     "scatter_dims_to_operand_dims"),
    (((10, 9), (5, 1), (5, 9, 1), S((1,), (0,), (0,))), "Updates tensor must be of rank 2"),
    (((10, 9), (5, 1), (5, 10), S((1,), (0,), (0,))), "updates bound is 10, operand bound is 9"),
    (((10, 9), (5, 1), (4, 9), S((1,), (0,), (0,))), "For scatter dimension 0, updates bound "
     "is 4, indices bound is 5"),
    (((10, 9), (5, 1), (5, 9), S((1,), (0,), (7,))), "Invalid scatter_dims_to_operand_dims "
     "mapping"),
    (((10, 9), (5, 1), (5,), S((), (0, 0), (0,))), "inserted_window_dims in scatter op must "
     "not repeat|must be sorted"),
])
def test_scatter_dimension_number_errors(args, msg):
    shape, ishape, ushape, dn = args
    with pytest.raises(TypeError, match=msg):
        lax.scatter_add(np.ones(shape), np.zeros(ishape, np.int32), np.ones(ushape), dn)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.scatter(np.ones(3), np.zeros((1, 1), np.int32), np.ones(1, np.float32),
                    S((), (0,), (0,)))


def test_promise_in_bounds_window_out_of_range_reads_clamped_and_gets_no_gradient():
    """JAX's values and gradients (0.10.2): a window of 3 at start 8 of 10 reads x[7:10]
    (clamped) and its gradient is dropped; in-range windows get theirs."""
    d = G((1,), (), (0,))
    idx = np.array([[5], [9], [0]])
    f = lambda x: (lax.gather(x, idx, d, (3,), mode="promise_in_bounds") * np.arange(3.0)).sum()
    x = np.arange(10.0)
    assert float(f(x)) == 51.0
    np.testing.assert_array_equal(ft.grad(f)(x), [0, 1, 2, 0, 0, 0, 1, 2, 0, 0])
    np.testing.assert_array_equal(ft.jit(ft.grad(f))(x), [0, 1, 2, 0, 0, 0, 1, 2, 0, 0])
