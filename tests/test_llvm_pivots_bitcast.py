"""``lu_pivots_to_permutation`` (``backends/llvm/permutation``) and
``bitcast_convert_type`` (a row of ``backends/llvm/ops``) run natively on the CPU
backend: equal to the numpy impls, no host step; out-of-range pivots raise the impl's
error out of the compiled call (called back), never a swap outside a row."""
import numpy as np
import pytest

import functrans as ft
from functrans import lax
from functrans.primitives.linalg_lu import lu, lu_pivots_to_permutation


def _host_steps(f, *args):
    return ft.jit(f).lower(*args).compile().cost_analysis()["host steps"]


@pytest.mark.parametrize("shape,n", [((3,), 3), ((4, 5), 7), ((2, 3, 4), 4), ((0, 3), 3),
                                     ((2, 0), 3), ((1,), 1)])
def test_pivots_match_the_impl(shape, n):
    piv = np.random.default_rng(0).integers(0, n, shape).astype(np.int32)

    def f(p):        # the pivots read in place, and through a reversed view
        return lu_pivots_to_permutation(p, n), lu_pivots_to_permutation(p[..., ::-1], n)
    assert _host_steps(f, piv) == 0
    for got, want in zip(ft.jit(f)(piv), f(piv)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert np.asarray(got).dtype == np.int32


def test_pivots_of_lu_inside_a_loop():
    a = np.random.default_rng(1).standard_normal((5, 5))

    def f(a):
        def body(i, c):
            _, piv, _ = lu(a + c[:, None])
            return c + lu_pivots_to_permutation(piv, 5).astype(np.float64)
        return lax.fori_loop(0, 3, body, np.zeros(5))
    assert _host_steps(f, a) == 0
    np.testing.assert_array_equal(np.asarray(ft.jit(f)(a)), np.asarray(f(a)))


@pytest.mark.parametrize("bad", [[0, 3, 1], [-1, 0, 0], [2**31 - 1, 0, 0]])
def test_out_of_range_pivots_raise_the_impls_error(bad):
    piv = np.array([[0, 1, 2], bad], np.int32)
    jf = ft.jit(lambda p: lu_pivots_to_permutation(p, 3))
    with pytest.raises(ValueError, match="pivots must lie in"):
        jf(piv)
    np.testing.assert_array_equal(np.asarray(jf(piv[:1].repeat(2, 0))), [[0, 1, 2]] * 2)


_PAIRS = [("float32", "uint32"), ("float32", "int32"), ("uint32", "float32"),
          ("int32", "uint32"), ("float64", "uint64"), ("float64", "int64"),
          ("uint64", "float64"), ("int64", "uint64")]


@pytest.mark.parametrize("src,dst", _PAIRS)
def test_bitcast_moves_the_bits(src, dst):
    rng = np.random.default_rng(2)
    if np.dtype(src).kind == "f":
        x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -3e30, 1e-40], src)
    else:
        info = np.iinfo(src)
        x = np.concatenate([np.array([0, 1, info.max, info.min], src),
                            rng.integers(info.min, info.max, 5, dtype=src, endpoint=True)])

    def f(v):        # fused with arithmetic on both sides
        return lax.bitcast_convert_type(v, dst), lax.bitcast_convert_type(v[::-1], dst)
    assert _host_steps(f, x) == 0
    for got, want in zip(ft.jit(f)(x), (x.view(dst), x[::-1].view(dst))):
        got = np.asarray(got)
        assert got.dtype == np.dtype(dst) and got.tobytes() == want.tobytes()


def test_bitcast_round_trip_in_a_loop_keeps_nan_payloads():
    x = np.array([1.0, np.nan, -0.0, 2.5])

    def f(v):
        def body(i, c):
            return lax.bitcast_convert_type(lax.bitcast_convert_type(c, np.int64) + 1,
                                            np.float64)
        return lax.fori_loop(0, 7, body, v)
    assert _host_steps(f, x) == 0
    assert np.asarray(ft.jit(f)(x)).tobytes() == np.asarray(f(x)).tobytes()
