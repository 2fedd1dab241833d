"""The CPU backend's native ``sort`` (``backends/llvm/sort``): bit for bit the
primitive's numpy impl (a stable argsort/lexsort, then a gather) on every native dtype,
along every dimension, with one or several keys and passengers, through strided and
broadcast views, with NaNs, signed zeros, infinities and many ties; no host step, also
inside a jitted loop and for the library functions built on it."""
import time

import ml_dtypes
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.primitives.sorting import sort_p
from backends.llvm.sort_lanes import LANES_MAX, PLACES_MAX, WIDE_MAX

_DTYPES = ["float64", "float32", "int64", "int32", "uint64", "uint32", "bool"]
_SHAPES = [(0,), (1,), (2,), (17,), (3, 0), (1, 5), (4, 1), (3, 33), (2, 3, 4), (70,), (9, 16),
           (2, 200)]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        special = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0])
        x = np.round(rng.standard_normal(shape) * 2)            # many ties
        pick = rng.random(shape) < 0.3
        return np.where(pick, special[rng.integers(0, len(special), shape)], x).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    huge = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    small = rng.integers(max(info.min, -3), 4, shape).astype(dtype)
    ext = np.array([info.min, info.max, 0], dtype)[rng.integers(0, 3, shape)]
    r = rng.random(shape)
    return np.where(r < 0.3, huge, np.where(r < 0.45, ext, small)).astype(dtype)


def _bits(a):
    return np.ascontiguousarray(np.asarray(a)).tobytes()


def _check(f, args, what):
    jf = ft.jit(f, backend="cpu")
    assert jf.lower(*args).compile().cost_analysis()["host steps"] == 0, what
    got, want = jf(*args), f(*args)          # eager: the primitive's numpy impl
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, what
        assert _bits(g) == _bits(w), f"{what}: {g} != {w}"   # NaN payloads and -0.0 too


@pytest.mark.parametrize("dtype", _DTYPES)
def test_one_key_matches_the_numpy_impl(dtype):
    for j, shape in enumerate(_SHAPES):
        x, pas = _data(shape, dtype), _data(shape, "float64", 1)

        def every_dim(a, p, nd=len(shape), stable=bool(j % 2)):   # one compile per shape
            outs = []
            for d in range(nd):
                outs += sort_p.bind(a, dimension=d, is_stable=stable, num_keys=1)
                outs += sort_p.bind(a, p, dimension=d, is_stable=not stable, num_keys=1)
            return outs
        _check(every_dim, (x, pas), f"{dtype} {shape}")


@pytest.mark.parametrize("dtype", _DTYPES)
def test_several_keys_are_lexicographic(dtype):
    for shape in [(40,), (3, 21), (5, 2, 6)]:
        k0, k1 = _data(shape, dtype, 2), _data(shape, "float32", 3)
        k2 = _data(shape, "int32", 4) % 3
        ps = [_data(shape, t, 5) for t in ("bool", "uint64", "float64")]

        def every_dim(a, b, c, p, q, nd=len(shape)):
            outs = []
            for d in range(nd):
                outs += sort_p.bind(a, b, c, p, dimension=d, is_stable=False, num_keys=2)
                outs += sort_p.bind(b, a, c, p, q, dimension=d, is_stable=True, num_keys=3)
            return outs
        _check(every_dim, (k0, k1, k2, ps[0], ps[1]), f"2 and 3 keys {dtype} {shape}")
        _check(lambda a, b, p: sort_p.bind(a, b, p, dimension=0, is_stable=True, num_keys=2),
               (k2, k0, ps[2]), f"int key first {dtype} {shape}")


def test_complex_passengers_move_as_they_are():
    x = _data((4, 30), "float32", 8)
    z = np.empty((4, 30), np.complex64)
    z.real, z.imag = _data((4, 30), "float32", 9), _data((4, 30), "float32", 10)
    _check(lambda a, b: lax.sort((a, b), num_keys=1), (x, z), "complex64 passenger")
    _check(lambda a, b: lax.sort((a, b.astype(np.complex128)), num_keys=1, dimension=0),
           (x, z), "complex128 passenger")


def test_views_and_literals_are_read_in_place():
    x = _data((6, 35), "float64")
    _check(lambda a: fnp.sort(a.T, axis=0), (x,), "transposed")
    _check(lambda a: fnp.sort(a[::2, 3:], axis=1), (x,), "strided slice")
    _check(lambda a: lax.sort((fnp.broadcast_to(a[:, :1], (6, 35)), a), num_keys=1,
                              dimension=1), (x,), "broadcast key")
    _check(lambda a: lax.sort((a, fnp.zeros_like(a) + 2.0), num_keys=1), (x,), "constant passenger")


def test_library_functions_on_sort_are_native():
    x = _data((5, 40), "float64", 7)
    _check(lambda a: fnp.argsort(a, axis=-1), (x,), "argsort")
    _check(lambda a: fnp.sort(a, axis=0), (x,), "fnp.sort")
    _check(lambda a: fnp.lexsort((a[0], a[1])), (x,), "lexsort")
    _check(lambda a: lax.top_k(a, 5), (np.nan_to_num(x),), "top_k")
    xs = np.random.default_rng(0).standard_normal((5, 41))
    _check(lambda a: fnp.median(a, axis=1), (xs,), "median")


def test_sort_inside_a_loop_runs_natively():
    def f(x):
        return lax.fori_loop(0, 200, lambda i, c: fnp.sort(c) * 0.5 + 1.0, x)
    x = np.array([3.0, -1.0, np.nan, 0.0, -0.0])
    _check(f, (x,), "fori_loop of sort")


@pytest.mark.slow
def test_large_sort_is_about_as_fast_as_numpy():
    # ratios within one run, alternating, medians: a loose bound (noisy shared machines)
    x = np.random.default_rng(0).standard_normal(1_000_000)
    js = ft.jit(lambda a: fnp.sort(a))
    assert _bits(js(x)) == _bits(np.sort(x, kind="stable"))
    ours, theirs = [], []
    for _ in range(5):
        t = time.perf_counter(); js(x); ours.append(time.perf_counter() - t)
        t = time.perf_counter(); np.sort(x, kind="stable"); theirs.append(time.perf_counter() - t)
    assert np.median(ours) < 3.0 * np.median(theirs)


def test_complex_keys_sort_by_real_then_imaginary_as_jax():
    """JAX's lax_test testSortNumKeys sorts complex keys (lexicographic (re, im)); the
    sort primitive refused a complex key."""
    k = np.array([1 + 2j, 1 + 1j, 5j, -1 - 1j, 1 + 1j], np.complex64)
    v = np.arange(5.0)
    want = np.array([-1 - 1j, 5j, 1 + 1j, 1 + 1j, 1 + 2j], np.complex64)
    for run in (lambda g: g, ft.jit):
        got_k, got_v = run(lambda a, b: lax.sort((a, b), num_keys=1))(k, v)
        np.testing.assert_array_equal(got_k, want)
        np.testing.assert_array_equal(got_v, [3.0, 2.0, 1.0, 4.0, 0.0])
    np.testing.assert_array_equal(ft.vmap(lax.sort)(np.stack([k, k[::-1]])), [want, want])
    assert lax.sort(k).dtype == np.complex64


def _with_odd_floats(x, seed):
    """``x`` (a float array) with NaNs of other payloads and signs, -0.0, 0.0, +-inf and
    the extremes at random places: the radix keys' special cases."""
    rng = np.random.default_rng(seed)
    it = np.dtype(f"u{x.dtype.itemsize}")
    w = 8 * x.dtype.itemsize
    exp = int(np.asarray(np.inf, x.dtype).view(it))
    odd = np.array([exp | 1, exp | (1 << (w - 2)) | 5, (1 << (w - 1)) | exp | 7,
                    1 << (w - 1), 0, exp, (1 << (w - 1)) | exp, 1,
                    int(np.asarray(np.finfo(x.dtype).max, x.dtype).view(it))], it).view(x.dtype)
    x = x.copy()
    pick = rng.random(x.shape) < 0.2
    x[pick] = odd[rng.integers(0, len(odd), int(pick.sum()))]
    return x


@pytest.mark.parametrize("dtype", _DTYPES)
def test_long_rows_radix_threads_and_specials(dtype):
    """Rows past insertion's length (the radix passes), many rows (split over the
    threads), along either axis, alone and with positions riding along; NaN payloads,
    signed zeros, infinities, extremes and ties land where the numpy impl puts them."""
    x = _data((24, 700), dtype, 11)
    if np.dtype(dtype).kind == "f":
        x = _with_odd_floats(x, 12)
    p = _data((24, 700), "int32", 13)

    def both_axes(a, q):
        outs = []
        for d in (0, 1):
            outs += sort_p.bind(a, dimension=d, is_stable=True, num_keys=1)
            outs += sort_p.bind(a, q, dimension=d, is_stable=True, num_keys=1)
            outs += sort_p.bind(q % 3, a, q, dimension=d, is_stable=True, num_keys=2)
        return outs
    _check(both_axes, (x, p), f"long rows {dtype}")
    _check(lambda a: [fnp.argsort(a), fnp.sort(a, descending=True),
                      fnp.argsort(a, descending=True)], (x[:3].ravel(),), f"descending {dtype}")


def test_all_equal_rows_and_one_long_row():
    """Digits every key shares are skipped (an all-equal row: no pass at all); one long
    row, its NaNs all canonical, and one of only zeros of both signs."""
    rng = np.random.default_rng(3)
    long = rng.standard_normal(30_000)
    long[rng.random(30_000) < 0.01] = np.nan
    zeros = np.where(rng.random(500) < 0.5, -0.0, 0.0).astype(np.float32)
    for x in (np.full((3, 100), 7, np.int64), long, zeros, np.full(200, -np.nan)):
        _check(lambda a: [fnp.sort(a), fnp.argsort(a)], (x,), f"{x.dtype} {x.shape}")


@pytest.mark.parametrize("dtype", ["float16", "int8", "uint8", "int16", "uint16"])
def test_narrow_dtypes_sort_natively(dtype):
    """float16 / int8 / uint8 / (u)int16 keys and passengers: their bits, no host step
    (they were host steps), in rows for the networks (9), the merged blocks (40), the
    radix passes (700); float16 NaN payloads, signed zeros and infinities as numpy puts
    them; a bfloat16 passenger moves as its bits."""
    for j, shape in enumerate([(30, 9), (7, 40), (3, 700)]):
        x = _data(shape, dtype, 20 + j)
        if np.dtype(dtype).kind == "f":
            x = _with_odd_floats(x, 30 + j)
        p = _data(shape, "int32", 40 + j)
        h = _data(shape, "float32", 50 + j).astype(ml_dtypes.bfloat16)

        def cases(a, q, r):
            outs = list(sort_p.bind(a, dimension=1, is_stable=True, num_keys=1))
            outs += sort_p.bind(a, q, r, dimension=1, is_stable=True, num_keys=1)
            outs += sort_p.bind(q % 3, a, dimension=1, is_stable=True, num_keys=2)
            return outs + [fnp.argsort(a, axis=0)]
        _check(cases, (x, p, h), f"{dtype} {shape}")


def test_bfloat16_keys_sort_natively():
    """bfloat16 keys are floats by their bits (numpy calls the dtype's kind "V"), no host
    step (it was one): NaN payloads and signs after +inf tied in their order, -0.0 and
    0.0 tied, as ml_dtypes' numpy sort puts them; rows through the networks (16), the
    merges (17, 96) and the radix passes (97, 700); alone, with passengers, as the second
    key, and along the other axis."""
    for j, shape in enumerate([(30, 16), (6, 17), (4, 96), (5, 97), (3, 700)]):
        x = _with_odd_floats(_data(shape, "float32", 60 + j).astype(ml_dtypes.bfloat16), 70 + j)
        p = _data(shape, "int32", 80 + j)

        def cases(a, q):
            outs = list(sort_p.bind(a, dimension=1, is_stable=True, num_keys=1))
            outs += sort_p.bind(a, q, dimension=1, is_stable=False, num_keys=1)
            outs += sort_p.bind(q % 3, a, dimension=1, is_stable=True, num_keys=2)
            return outs + [fnp.argsort(a, axis=0), fnp.sort(a, axis=0)]
        _check(cases, (x, p), f"bfloat16 {shape}")


@pytest.mark.parametrize("dtype", _DTYPES + ["float16", "bfloat16", "int8", "uint16"])
def test_lane_groups_match_the_numpy_impl(dtype):
    """Rows of 2..sort_lanes.LANES_MAX are sorted a lane group at a time (the rows as
    vector lanes under one network, its blocks of 16 vectors first in registers: none
    (15), one (16), one and a part (17), six and one (97)): a group exactly full
    (16 x 2), a partial last group sorted row by row (17 x 17, 41 x 97), fewer rows
    than a group (3 x 64: row by row), the longest lane rows and the first too long
    (1024 / 1025; with places 768 / 769, beside 8-byte keys 512 / 513), rows through a
    strided view (axis 0), and enough work to split groups over the threads (64 x 300);
    alone (float NaN payloads and -0.0 put back in the rows holding them, rows beside
    them holding only canonical NaNs and +0.0), as argsort and with
    passengers (keys of up to 4 bytes and their places in 64-bit lanes, 8-byte keys
    beside their places), stable or not."""
    kind = "f" if dtype == "bfloat16" else np.dtype(dtype).kind
    shapes = [(16, 2), (18, 15), (20, 16), (17, 17), (41, 97), (3, 64), (17, LANES_MAX),
              (9, LANES_MAX + 1), (9, PLACES_MAX), (8, PLACES_MAX + 1), (8, WIDE_MAX),
              (8, WIDE_MAX + 1), (64, 300)]
    xs = []
    for j, shape in enumerate(shapes):
        base = "float32" if dtype == "bfloat16" else dtype
        x = _data(shape, base, 90 + j)
        if kind == "f":
            x = _with_odd_floats(x.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else x.dtype),
                                 100 + j)
        xs.append(x)
    if kind == "f":        # odd zeros / NaNs in every other row only: the rest need no fix
        mixed = xs[4].copy()
        clean = mixed[1::2]
        mixed[1::2] = np.where(np.isnan(clean), np.nan, np.where(clean == 0, 0.0, clean))
        xs[4] = mixed
    p = _data((64, 300), "int32", 5)

    def cases(*a):
        outs = []
        for j, x in enumerate(a[:-1]):
            stable = bool(j % 2)
            outs += sort_p.bind(x, dimension=1, is_stable=stable, num_keys=1)
            outs += [fnp.argsort(x, axis=1), fnp.sort(x, axis=0)]
        q = a[-1]
        outs += sort_p.bind(a[-2], q, q.astype("float64"), dimension=1, is_stable=True,
                            num_keys=1)
        return outs + [fnp.argsort(a[1], axis=0)]
    _check(cases, (*xs, p), f"{dtype} lane groups")
