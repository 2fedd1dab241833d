"""functrans.numpy against JAX 0.10.2 where they used to differ (values computed with
JAX 0.10.2, x64 on, and stored here: the tests never import jax)."""
import json
import os

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from tests.data import jnp_pet_cases as pc

_SPACING_IN = [-1., 1., 0., -0., np.inf, -np.inf, np.nan, 6e-8, -6e-8, 65504, -65504, 1e-45,
               -1e-45, 5e-324, -5e-324, 3.5, -1e30]
# jnp.spacing(jnp.array(_SPACING_IN, dtype)) as float.hex(): float16 steps towards +inf
# (numpy's float16 rule), the others away from zero with x's sign (-0.0 included)
_SPACING_JAX = {
    'float16': [
        '0x1.0000000000000p-11', '0x1.0000000000000p-10',
        '0x1.0000000000000p-24', '0x1.0000000000000p-24',
        'nan', 'inf',
        'nan', '0x1.0000000000000p-24',
        '0x1.0000000000000p-24', 'inf',
        '0x1.0000000000000p+5', '0x1.0000000000000p-24',
        '0x1.0000000000000p-24', '0x1.0000000000000p-24',
        '0x1.0000000000000p-24', '0x1.0000000000000p-9',
        'inf',
    ],
    'bfloat16': [
        '-0x1.0000000000000p-7', '0x1.0000000000000p-7',
        '0x1.0000000000000p-133', '-0x1.0000000000000p-133',
        'nan', 'nan',
        'nan', '0x1.0000000000000p-31',
        '-0x1.0000000000000p-31', '0x1.0000000000000p+9',
        '-0x1.0000000000000p+9', '0x1.0000000000000p-133',
        '-0x1.0000000000000p-133', '0x1.0000000000000p-133',
        '-0x1.0000000000000p-133', '0x1.0000000000000p-6',
        '-0x1.0000000000000p+92',
    ],
    'float32': [
        '-0x1.0000000000000p-23', '0x1.0000000000000p-23',
        '0x1.0000000000000p-149', '-0x1.0000000000000p-149',
        'nan', 'nan',
        'nan', '0x1.0000000000000p-47',
        '-0x1.0000000000000p-47', '0x1.0000000000000p-8',
        '-0x1.0000000000000p-8', '0x1.0000000000000p-149',
        '-0x1.0000000000000p-149', '0x1.0000000000000p-149',
        '-0x1.0000000000000p-149', '0x1.0000000000000p-22',
        '-0x1.0000000000000p+76',
    ],
    'float64': [
        '-0x1.0000000000000p-52', '0x1.0000000000000p-52',
        '0x0.0000000000001p-1022', '-0x0.0000000000001p-1022',
        'nan', 'nan',
        'nan', '0x1.0000000000000p-76',
        '-0x1.0000000000000p-76', '0x1.0000000000000p-37',
        '-0x1.0000000000000p-37', '0x1.0000000000000p-202',
        '-0x1.0000000000000p-202', '0x0.0000000000001p-1022',
        '-0x0.0000000000001p-1022', '0x1.0000000000000p-51',
        '-0x1.0000000000000p+47',
    ],
}


@pytest.mark.parametrize("dtype", sorted(_SPACING_JAX))
@pytest.mark.parametrize("jit", [False, True])
def test_spacing_matches_jax_every_float_dtype(dtype, jit):
    f = ft.jit(fnp.spacing) if jit else fnp.spacing
    got = np.asarray(f(fnp.array(_SPACING_IN, dtype=dtype))).astype(np.float64)
    want = np.array([float.fromhex(v) for v in _SPACING_JAX[dtype]])
    np.testing.assert_array_equal(got, want)
    num = ~np.isnan(want)                      # (a NaN's sign bit is the hardware's)
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))


@pytest.mark.parametrize("fn", [fnp.var, fnp.std])
def test_var_std_without_degrees_of_freedom_are_nan(fn):
    # JAX: where(n - ddof > 0, ss / (n - ddof), nan); numpy gives inf
    a = fnp.array([1.0, 2.0])
    for ddof in (2, 3):
        assert np.isnan(float(fn(a, ddof=ddof)))
        assert np.isnan(float(ft.jit(lambda v: fn(v, ddof=ddof))(a)))
        assert np.isnan(float(fn(a, correction=ddof)))
    np.testing.assert_array_equal(np.asarray(ft.grad(lambda v: fn(v, ddof=2))(a)),
                                  [np.nan, np.nan])           # JAX's gradient too
    m = fnp.array([[1.0, 2.0], [3.0, 5.0]])
    mask = fnp.array([[True, True], [True, False]])
    np.testing.assert_array_equal(np.asarray(fnp.var(m, axis=1, ddof=1, where=mask)),
                                  [0.5, np.nan])
    assert np.isnan(np.asarray(fnp.var(m, axis=0, ddof=2, keepdims=True))).all()
    assert float(fn(a, ddof=1)) == pytest.approx(0.5 if fn is fnp.var else 0.5 ** 0.5)
    assert fn(fnp.array([1, 2], dtype="float16"), ddof=2).dtype == np.float16
    # nanvar/nanstd: NaN too (count of non-NaN entries - ddof <= 0)
    b = fnp.array([1.0, 2.0, np.nan])
    assert np.isnan(float(fnp.nanvar(b, ddof=2))) and np.isnan(float(fnp.nanstd(b, ddof=3)))


_A = [[1.0, 2.0, np.nan], [3.0, 4.0, 5.0]]
# jnp.<name>(a, axis=[0]) and axis=[0, 1] (a list): JAX 0.10.2 takes lists here, eagerly
# and under jit (numpy's sum does not)
_LIST_AXIS_JAX = {
    "sum": ([4.0, 6.0, np.nan], np.nan), "prod": ([3.0, 8.0, np.nan], np.nan),
    "mean": ([2.0, 3.0, np.nan], np.nan), "var": ([1.0, 1.0, np.nan], np.nan),
    "std": ([1.0, 1.0, np.nan], np.nan), "max": ([3.0, 4.0, np.nan], np.nan),
    "min": ([1.0, 2.0, np.nan], np.nan), "amax": ([3.0, 4.0, np.nan], np.nan),
    "amin": ([1.0, 2.0, np.nan], np.nan), "ptp": ([2.0, 2.0, np.nan], np.nan),
    "average": ([2.0, 3.0, np.nan], np.nan),
}


@pytest.mark.parametrize("name", sorted(_LIST_AXIS_JAX))
@pytest.mark.parametrize("jit", [False, True])
def test_reducers_take_a_list_axis_as_jax(name, jit):
    f = getattr(fnp, name)
    for axis, want in zip(([0], [0, 1]), _LIST_AXIS_JAX[name]):
        g = ft.jit(lambda x: f(x, axis=axis)) if jit else (lambda x: f(x, axis=axis))
        np.testing.assert_allclose(np.asarray(g(fnp.array(_A))), want)


def test_list_axis_with_keepdims_where_initial_and_bools():
    a = fnp.array([[1.0, 2.0], [3.0, 4.0]])
    b = fnp.array([[True, False], [True, True]])
    assert np.asarray(fnp.sum(a, axis=[0], keepdims=True)).tolist() == [[4.0, 6.0]]
    assert np.asarray(fnp.sum(a, axis=[0], where=a > 1)).tolist() == [3.0, 6.0]
    assert float(fnp.max(a, axis=[0, 1], initial=9.0)) == 9.0
    assert np.asarray(fnp.var(a, axis=[0], where=a > 1)).tolist() == [0.0, 1.0]
    assert np.asarray(fnp.all(b, axis=[0])).tolist() == [True, False]
    assert np.asarray(fnp.any(b, axis=[0])).tolist() == [True, True]
    with pytest.raises(TypeError):
        fnp.argmax(a, axis=[0])          # JAX: TypeError too


def _pet_rows():
    with open(os.path.join(os.path.dirname(__file__), "data",
                           "jnp_preferred_element_type.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("row", _pet_rows(), ids=lambda r: "-".join(r[:4]))
def test_preferred_element_type_of_numpy_contractions_as_jax(row):
    # JAX 0.10.2: lax.dot_general's rule (operands converted first only to a
    # higher-precision type, else the product converted; non-float operands never ask
    # for a narrower type); inner with a scalar converts first; convolve: conv's rule
    fn, la, lb, p, want_dtype, re, im = row
    a, b = pc.mk(fnp, pc.A, la), pc.mk(fnp, pc.B, lb)
    if want_dtype == "TypeError":
        with pytest.raises(TypeError):
            pc.call(fnp, fn, a, b, p)
        return
    got = pc.call(fnp, fn, a, b, p)
    assert str(got.dtype) == want_dtype
    g = np.asarray(got).astype(np.complex128).ravel()
    tol = 1e-2 if want_dtype in ("float16", "bfloat16") else 1e-5
    np.testing.assert_allclose(g.real, re, rtol=tol, atol=tol)
    np.testing.assert_allclose(g.imag, im, rtol=tol, atol=tol)


def test_preferred_element_type_under_jit_and_three_operand_einsum():
    a = fnp.asarray(pc.A.astype(np.float32))
    f = ft.jit(lambda x, y: fnp.matmul(x, y, preferred_element_type=np.int32))
    assert np.asarray(f(a, a)).tolist() == [[107, -58], [-78, 240]]  # JAX: not [[95, -49], ...]
    with pytest.raises(NotImplementedError, match="more than two operands"):
        fnp.einsum("ij,jk,kl->il", a, a, a, preferred_element_type=np.int32)
    out = fnp.einsum("ij,jk,kl->il", a, a, a, preferred_element_type=np.float64)
    np.testing.assert_allclose(np.asarray(out), pc.A @ pc.A @ pc.A, rtol=1e-6)


def test_numpy_views_of_an_array_are_read_only():
    # JAX: np.asarray(jax_array) is read-only; writing into it used to change x itself
    x = fnp.arange(4.0)
    views = [np.asarray(x), np.array(x, copy=False), np.asarray(x[1:]), np.asarray(x.T),
             np.asarray(fnp.add(x, 1.0)), np.asarray(ft.jit(lambda v: v * 2)(x)),
             np.asarray(fnp.asarray([1.0, 2.0])), np.asarray(x.reshape(2, 2))]
    for v in views:
        with pytest.raises(ValueError, match="read-only"):
            v[0] = 5
    assert memoryview(x).readonly
    assert np.shares_memory(np.asarray(x), x)          # still a view (no copy)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    # numpy's own copies of an Array are fresh memory numpy fills: they work
    assert x.astype(np.float32).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert complex(x[1]) == 1.0 and x.repeat(2).shape == (8,)
    # numpy's complex round fills a fresh output through .real/.imag views (it raised
    # "assignment destination is read-only"); the finished result is read-only
    r = fnp.asarray([1.26 + 2.34j, -0.5j]).round(1)
    np.testing.assert_array_equal(np.asarray(r), [1.3 + 2.3j, -0.5j])
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(r)[0] = 0
    # donation still reuses an owned buffer
    f = ft.jit(lambda v: v * 2, donate_argnums=0)
    y = f(fnp.arange(3.0))
    z = f(y)
    assert y.is_deleted() and z.tolist() == [0.0, 4.0, 8.0]


def _unique_axis_data():
    with open(os.path.join(os.path.dirname(__file__), "data", "jnp_unique_axis.json")) as f:
        return json.load(f)


_UNIQUE = _unique_axis_data()


@pytest.mark.parametrize("row", _UNIQUE["rows"], ids=lambda r: "-".join(map(str, r[:4])))
def test_unique_axis_size_under_jit_as_jax(row):
    # jax.jit(jnp.unique(x, axis=, size=, fill_value=, equal_nan=, return_*=True)) values
    k, size, fill_value, equal_nan, want = row
    a, axis = _UNIQUE["cases"][k]
    f = ft.jit(lambda x: fnp.unique(x, return_index=True, return_inverse=True,
                                    return_counts=True, axis=axis, size=size,
                                    fill_value=fill_value, equal_nan=equal_nan))
    got = f(fnp.asarray(np.array(a)))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.array(w, dtype=np.asarray(g).dtype))
    eager = fnp.unique(fnp.asarray(np.array(a)), axis=axis, size=size, fill_value=fill_value,
                       equal_nan=equal_nan)
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(got[0]))


def test_unique_axis_traced_needs_size():
    with pytest.raises(TypeError, match="size="):       # (a ConcretizationError)
        ft.jit(lambda x: fnp.unique(x, axis=0))(fnp.ones((2, 2)))
    # eagerly too, NaN slices are equal under equal_nan (numpy's unique keeps two [1, nan])
    a = fnp.asarray([[1.0, np.nan], [1.0, np.nan], [0.0, 2.0]])
    v, i, inv, c = fnp.unique(a, axis=0, return_index=True, return_inverse=True,
                              return_counts=True)
    np.testing.assert_array_equal(np.asarray(v), [[0.0, 2.0], [1.0, np.nan]])
    assert (np.asarray(i).tolist(), np.asarray(inv).tolist(), np.asarray(c).tolist()) == \
        ([2, 0], [1, 1, 0], [1, 2])                                  # JAX 0.10.2's
    assert fnp.unique(a, axis=0, equal_nan=False).shape == (3, 2)


# jnp.quantile & co. with method="inverted_cdf" and weights= (JAX 0.10.2, x64; None = NaN)
_WQ_JAX = {'jit': [1.76, -0.15, 0.76],
 'np_w': [2.24, -0.1, None],
 'nq_nan': [[0.98, -0.98, None], [1.76, -0.1, None]],
 'p_w': [1.87, -0.1, 1.45],
 'q_bad': [1.76, None, 0.76],
 'q_nan': [None, -0.15, None],
 'q_nw': [0.98, -0.15, 0.14],
 'q_pos': [[1.76], [-0.1], [0.44]],
 'q_tuple': 0.41,
 'q_w1_ax1': [[1.76], [-0.1], [0.44]],
 'q_w_all': 0.12,
 'q_w_ax0': [1.76, 0.95, -0.15, 0.12, 0.41],
 'q_w_ax1': [[0.4, -0.98, 0.12],
             [0.4, -0.98, 0.12],
             [1.76, -0.15, 0.76],
             [2.24, 0.41, 1.45],
             [2.24, 0.95, 1.45]]}


def test_weighted_quantiles_as_jax():
    rng = np.random.RandomState(0)
    a = rng.randn(3, 5).round(2)
    w = rng.rand(3, 5).round(2)
    w1 = rng.rand(5).round(2)
    an = a.copy()
    an[0, 1] = np.nan
    an[2, :] = np.nan
    wb = w.copy()
    wb[1, 2] = -1
    m, ic = fnp, {"method": "inverted_cdf"}
    got = {
        "q_w_all": lambda: m.quantile(a, 0.3, weights=w, **ic),
        "q_w_ax1": lambda: m.quantile(a, m.asarray([0., 0.2, 0.5, 0.9, 1.]), axis=1, weights=w,
                                      **ic),
        "q_w1_ax1": lambda: m.quantile(a, 0.5, axis=1, weights=w1, keepdims=True, **ic),
        "q_w_ax0": lambda: m.quantile(a, 0.5, axis=0, weights=w, **ic),
        "q_nw": lambda: m.quantile(a, 0.4, axis=1, **ic),
        "q_bad": lambda: m.quantile(a, 0.5, axis=1, weights=wb, **ic),
        "q_nan": lambda: m.quantile(an, 0.5, axis=1, weights=w, **ic),
        "nq_nan": lambda: m.nanquantile(an, m.asarray([0.1, 0.6]), axis=1, weights=w, **ic),
        "p_w": lambda: m.percentile(a, 75, axis=1, weights=w, **ic),
        "np_w": lambda: m.nanpercentile(an, 75, axis=1, weights=w, **ic),
        "q_tuple": lambda: m.quantile(a, 0.5, axis=(0, 1), weights=w, **ic),
        "jit": lambda: ft.jit(lambda x, v: m.quantile(x, 0.5, axis=1, weights=v, **ic))(a, w),
        "q_pos": lambda: m.quantile(a, 0.5, 1, None, False, "lower", True),  # JAX's order
    }
    for name, f in got.items():
        want = np.array(_WQ_JAX[name], dtype=float)
        np.testing.assert_allclose(np.asarray(f(), dtype=float), want, rtol=1e-6,
                                   err_msg=name)
    with pytest.raises(NotImplementedError, match="inverted_cdf"):
        fnp.quantile(a, 0.5, weights=w)                   # JAX: linear has no weights
    with pytest.raises(NotImplementedError, match="out"):
        fnp.quantile(a, 0.5, out=fnp.zeros(()))


def test_median_polyval_take_jax_arguments():
    # JAX 0.10.2: median(a, axis, out, overwrite_input, keepdims); polyval(..., unroll=)
    a = fnp.asarray([[1.0, 5.0, 2.0], [3.0, np.nan, 4.0]])
    np.testing.assert_array_equal(np.asarray(fnp.median(a, 1, None, False, True)),
                                  [[2.0], [np.nan]])
    np.testing.assert_array_equal(np.asarray(fnp.nanmedian(a, 1, None, False, True)),
                                  [[2.0], [3.5]])
    with pytest.raises(NotImplementedError, match="out"):
        fnp.median(a, out=fnp.zeros(2))
    for unroll in (1, 16, 0, True):
        assert float(fnp.polyval(fnp.asarray([1.0, 2.0, 3.0]), 2.0, unroll=unroll)) == 11.0
    with pytest.raises(TypeError, match="unroll"):
        fnp.polyval(fnp.asarray([1.0]), 2.0, unroll=1.5)


def test_round_takes_jax_argument_names():
    # jnp.round(a, decimals=0, out=None) / jnp.around: a= by name (functrans called it x)
    x = fnp.asarray([1.25, 2.5, -0.35])
    assert fnp.round(a=x, decimals=1).tolist() == [1.2, 2.5, -0.4]
    assert fnp.around(a=x).tolist() == [1.0, 2.0, -0.0]
    assert fnp.round(x, 1, None).tolist() == [1.2, 2.5, -0.4]
    with pytest.raises(NotImplementedError, match="out"):
        fnp.round(x, out=fnp.zeros(3))
