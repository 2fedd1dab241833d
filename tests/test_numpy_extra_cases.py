"""Single cases of the functions in test_numpy_extra.py's table where numpy and JAX part
ways or a bug was found: save/load, gufunc vectorize, index dtypes, pad modes, unique
along an axis, special values of fmod/heaviside/remainder/frexp, dtypes kept by cov,
trapezoid and nextafter (the table's value/jit/vmap/grad checks stay in that file)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

rng = np.random.default_rng(1)


def test_save_savez_load_round_trip(tmp_path):
    x, y = fnp.arange(6.0).reshape(2, 3), fnp.asarray([1, 2], dtype=fnp.int32)
    fnp.save(tmp_path / "x.npy", x)
    fnp.savez(tmp_path / "xy.npz", x, y=y)
    np.testing.assert_array_equal(fnp.load(tmp_path / "x.npy"), np.asarray(x))
    with fnp.load(tmp_path / "xy.npz") as z:
        np.testing.assert_array_equal(z["arr_0"], np.asarray(x))
        assert z["y"].dtype == np.int32 and z["y"].tolist() == [1, 2]


def test_vectorize_with_a_gufunc_signature():
    # signature= raised NotImplementedError; JAX's: loop dimensions broadcast and are
    # vmapped over, each argument keeps its core dimensions
    mv = fnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    m = np.arange(24.0).reshape(4, 2, 3)
    np.testing.assert_allclose(mv(m, np.ones(3)), m.sum(-1))
    np.testing.assert_allclose(ft.jit(mv)(m, np.ones(3)), m.sum(-1))
    s = fnp.vectorize(lambda a, b: a * fnp.sum(b), signature="(),(n)->()")
    np.testing.assert_allclose(s(np.arange(3.0), np.ones((3, 4))), [0.0, 4.0, 8.0])
    tot, dbl = fnp.vectorize(lambda v: (fnp.sum(v), v * 2), signature="(n)->(),(n)")(
        np.arange(6.0).reshape(2, 3))
    assert tot.tolist() == [3.0, 12.0] and dbl.shape == (2, 3)
    assert fnp.vectorize(lambda v: v[::-1], signature="(n)->(n)")(np.arange(3.0)).tolist() \
        == [2.0, 1.0, 0.0]
    g = ft.grad(lambda a: fnp.sum(mv(a, np.arange(3.0))))(m)
    np.testing.assert_allclose(g, np.broadcast_to(np.arange(3.0), m.shape))
    with pytest.raises(ValueError, match="core dimension 'n'"):
        fnp.vectorize(lambda a, b: a, signature="(n),(n)->()")(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="signature"):
        fnp.vectorize(lambda a: a, signature="(n)")(np.ones(3))


def test_index_and_count_dtypes_are_jaxs():
    # JAX 0.10.2 with x64: searchsorted/digitize give int32, histogram counts in a's float
    # dtype (joined with the weights'); ported programs compared them and differed
    x = fnp.asarray([0.5, 1.5, 2.5, 0.2])
    assert fnp.searchsorted(fnp.asarray([1.0, 2.0]), x).dtype == np.int32
    assert fnp.digitize(x, fnp.asarray([2.0, 1.0]), right=True).dtype == np.int32
    assert fnp.histogram(x, 3)[0].dtype == np.float64
    assert fnp.histogram(x.astype(np.float32), 3)[0].dtype == np.float32
    assert fnp.histogram(fnp.arange(4), 2)[0].tolist() == [2.0, 2.0]
    w = fnp.ones(4, dtype=np.float32)
    assert fnp.histogram(x, 3, weights=w)[0].dtype == np.float64
    assert fnp.histogram2d(x, x, 2)[0].dtype == np.int64
    assert fnp.histogram2d(x, x, 2, weights=w)[0].dtype == np.float64
    assert fnp.histogram2d(x, x, 2, density=True)[0].dtype == np.float64


@pytest.mark.parametrize("mode,kw", [
    ("linear_ramp", {}), ("linear_ramp", {"end_values": ((1.0, -1.0), (2.0, 3.0))}),
    ("maximum", {}), ("minimum", {"stat_length": 2}), ("mean", {}),
    ("mean", {"stat_length": ((1, 2), (2, 1))}), ("median", {}), ("median", {"stat_length": 2})])
def test_pad_computed_modes_match_numpy(mode, kw):
    """pad's linear_ramp / maximum / minimum / mean / median (a ported program raised
    NotImplementedError): numpy's values eagerly and under jit (axis after axis, corners
    from the padded axes); the gradient flows into the statistic's elements."""
    x = np.array([[0.3, -1.2, 2.0], [0.7, 1.1, -0.4]])
    for w in (2, ((1, 2), (3, 0))):
        want = np.pad(x, w, mode, **kw)
        np.testing.assert_allclose(fnp.pad(x, w, mode, **kw), want, rtol=1e-15)
        np.testing.assert_allclose(ft.jit(lambda a: fnp.pad(a, w, mode, **kw))(x), want, rtol=1e-14)
    g = ft.grad(lambda a: fnp.sum(fnp.pad(a, 1, mode, **kw) ** 2))(x)
    eps = 1e-6
    d = np.zeros_like(x)
    d[0, 1] = eps
    fd = (np.sum(np.pad(x + d, 1, mode, **kw) ** 2) - np.sum(np.pad(x - d, 1, mode, **kw) ** 2)) / (2 * eps)
    np.testing.assert_allclose(g[0, 1], fd, rtol=1e-6)


def test_argpartition_is_int32_as_jax():
    """JAX 0.10.2 returns int32 argpartition indices (even with x64); it was int64."""
    a = np.array([3.0, 1.0, 2.0, 0.5])
    for f in (fnp.argpartition, ft.jit(fnp.argpartition, static_argnums=1)):
        idx = f(a, 1)
        assert idx.dtype == np.int32 and sorted(a[np.asarray(idx)][:2].tolist()) == [0.5, 1.0]


def test_gradient_with_sample_coordinates_matches_numpy():
    """fnp.gradient(f, x) with 1-d sample coordinates (a ported program raised
    NotImplementedError): numpy's nonuniform second-order weights inside, one-sided ends;
    per axis, mixed with scalar spacings, under jit, differentiable in the coordinates."""
    f = np.array([[0.3, -1.2, 2.0, 0.7], [1.1, -0.4, 0.2, 5.0], [1.0, 2.0, 3.0, 4.5]])
    xs, ys = np.array([0.0, 1.0, 1.5, 3.0]), np.array([0.0, 0.3, 1.0])
    for args, kw in (((xs,), {"axis": 1}), ((ys, xs), {}), ((ys, 2.0), {})):
        want = np.gradient(f, *args, **kw)
        for g in (fnp.gradient, ft.jit(lambda a: fnp.gradient(a, *args, **kw))):
            got = g(f, *args, **kw) if g is fnp.gradient else g(f)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-14)
    d = ft.grad(lambda c: fnp.sum(fnp.gradient(f[0], c)))(xs)
    e = np.eye(4) * 1e-6
    fd = [(np.sum(np.gradient(f[0], xs + h)) - np.sum(np.gradient(f[0], xs - h))) / 2e-6 for h in e]
    np.testing.assert_allclose(d, fd, rtol=1e-6)
    with pytest.raises(ValueError, match="length 4"):
        fnp.gradient(f[0], xs[:3])


def test_unique_along_an_axis_as_jax():
    """unique(axis=) of a concrete array (a ported program raised NotImplementedError):
    numpy's unique slices, index/inverse/counts, size= padding (first slice or
    fill_value), as JAX 0.10.2 gives them; a traced array needs size=."""
    a = np.array([[1, 2], [1, 2], [0, 5]])
    np.testing.assert_array_equal(fnp.unique(a, axis=0), [[0, 5], [1, 2]])
    v, i, inv, c = fnp.unique(a, True, True, True, axis=1)
    assert v.tolist() == a.tolist() and i.tolist() == [0, 1] and inv.tolist() == [0, 1] \
        and c.tolist() == [1, 1]
    assert fnp.unique(a, axis=0, size=3).tolist() == [[0, 5], [1, 2], [0, 5]]
    assert fnp.unique(a, axis=0, size=3, fill_value=-1).tolist() == [[0, 5], [1, 2], [-1, -1]]
    # traced: size= fixes the shape (tests/test_numpy_jax_api.py has JAX's jit values)
    assert ft.jit(lambda x: fnp.unique(x, axis=0, size=3))(a).tolist() == [[0, 5], [1, 2], [0, 5]]
    with pytest.raises(TypeError, match="size="):
        ft.jit(lambda x: fnp.unique(x, axis=0))(a)


@pytest.mark.parametrize("jit", [False, True])
def test_unique_pads_first_indices_with_the_smallest_value_s_as_jax(jit):
    """Fuzz round 10: with size= past the number of uniques, JAX 0.10.2 pads
    return_index with the first index of the smallest value (its sort's first entry),
    not 0: [2, 0, 1, 2, 2, 2] for [1, nan, 0] (was [2, 0, 1, 0, 0, 0]); along an axis
    the same ([1, 0, 1, 1] for the rows below, was [1, 0, 0, 0])."""
    x = np.array([1.0, np.nan, 0.0], np.float32)
    f = (lambda v: fnp.unique(v, return_index=True, return_counts=True, size=6))
    v, i, c = (ft.jit(f) if jit else f)(x)
    assert i.tolist() == [2, 0, 1, 2, 2, 2] and c.tolist() == [1, 1, 1, 0, 0, 0]
    assert np.asarray(v)[:3].tolist()[:2] == [0.0, 1.0]
    if not jit:
        rows = np.array([[1.0, 2], [0, 1], [1.0, 2]], np.float32)
        _, i, c = fnp.unique(rows, return_index=True, return_counts=True, size=4, axis=0)
        assert i.tolist() == [1, 0, 1, 1] and c.tolist() == [1, 2, 0, 0]


@pytest.mark.parametrize("jit", [False, True])
def test_fmod_heaviside_float_power_i0_special_values_are_jaxs(jit):
    """jax 0.10.2 (and C's fmod): fmod(x, +-inf) is x (it was nan), a zero fmod keeps
    x's sign; heaviside(nan, y) is nan (it was y) and heaviside(0, -0.0) is -0.0;
    float_power keeps float32 (numpy widens); i0 of the largest floats is inf (was 0)."""
    run = (lambda f: ft.jit(f, backend="cpu")) if jit else (lambda f: f)
    sign = lambda v: np.signbit(np.asarray(v)).tolist()  # noqa: E731
    x = np.array([-1.0, -0.0, 0.0, 1e308, -4.0, 4.0, 5.5])
    y = np.array([np.inf, np.inf, -np.inf, np.inf, 2.0, -2.0, -2.0])
    got = run(fnp.fmod)(x, y)
    assert got.tolist() == [-1.0, 0.0, 0.0, 1e308, 0.0, 0.0, 1.5]
    assert sign(got) == [True, True, False, False, True, False, False]
    got = run(fnp.heaviside)(np.array([np.nan, 0.0, -0.0, -2.0, 3.0]),
                             np.array([0.5, -0.0, 0.5, 0.5, 0.5]))
    assert np.isnan(got[0]) and got[1:].tolist() == [0.0, 0.5, 0.0, 1.0] and sign(got[1:2]) == [True]
    f32 = np.array([2.0, 3.0], np.float32)
    assert run(fnp.float_power)(f32, f32).dtype == np.float32
    assert run(fnp.i0)(np.array([1.7e308, -1e308, 3.0])).tolist()[:2] == [np.inf, np.inf]


def test_one_argument_where_takes_size_and_fill_value_under_jit():
    """fnp.where(cond, size=, fill_value=) as JAX's (a round-4 program raised TypeError on
    size=): the nonzero indices padded to ``size``, usable under jit; the three-argument
    form refuses size=."""
    v = np.array([0., 3., 0., -1., 2., 0., 2.])
    got = ft.jit(lambda a: fnp.where(a > 0, size=4, fill_value=-1))(v)
    assert len(got) == 1 and got[0].tolist() == [1, 4, 6, -1]
    assert fnp.where(v > 0)[0].tolist() == [1, 4, 6]
    assert fnp.where(v > 0, v, 0.0).tolist() == [0., 3., 0., 0., 2., 0., 2.]
    with pytest.raises(ValueError, match="one-argument"):
        fnp.where(v > 0, v, 0.0, size=2)


@pytest.mark.parametrize("mode", ["eager", "cpu", "interpret"])
def test_remainder_floor_divide_zero_signs_and_exact_fmod_as_jax(mode):
    """jax 0.10.2: a zero remainder has the dividend's sign (remainder(-4, 2) is -0.0;
    numpy's +0.0), a zero quotient the divisor's (-1 // -3 is -0.0), -1 // inf is -1
    (under jit it was nan: inf - inf), and fmod is exact (fmod(0.3, -1) was
    0.30000000000000004)."""
    run = (lambda f: f) if mode == "eager" else (lambda f: ft.jit(f, backend=mode))
    sign = lambda v: np.signbit(np.asarray(v)).tolist()  # noqa: E731
    x = np.array([-4.0, 4.0, -0.0, -1.0, -1.0, 1.0, 0.3])
    y = np.array([2.0, -2.0, np.inf, -3.0, np.inf, -np.inf, -1.0])
    r = run(fnp.remainder)(x, y)
    assert sign(r[:3]) == [True, False, True] and r[3:].tolist() == [-1.0, np.inf, -np.inf, -0.7]
    q = run(fnp.floor_divide)(x, y)
    assert q.tolist() == [-2.0, -2.0, 0.0, 0.0, -1.0, -1.0, -1.0] and sign(q[2:4]) == [False, True]
    assert run(fnp.fmod)(x, y).tolist() == [-0.0, 0.0, -0.0, -1.0, -1.0, 1.0, 0.3]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_frexp_of_the_largest_floats(dtype):
    """frexp(float max) is (1 - eps/2, 1024) in numpy and JAX; 2**1024 overflowed to inf
    and the mantissa came out 0."""
    fi = np.finfo(dtype)
    x = np.array([fi.max, -fi.max, fi.max / 2, fi.tiny], dtype)
    want_m, want_e = np.frexp(x)
    for f in (fnp.frexp, ft.jit(fnp.frexp, backend="cpu")):
        m, e = f(x)
        assert np.asarray(m).tolist() == want_m.tolist() and np.asarray(e).tolist() == want_e.tolist()


def test_heaviside_result_dtype_is_numpys():
    """heaviside(float32, int8) is float32 as in numpy and JAX (it was float64: each
    integer operand became float64 before promotion)."""
    x = np.array([-1.0, 0.0, 2.0, np.nan], np.float32)
    h = np.array([1, 2, 3, 4], np.int8)
    for f in (fnp.heaviside, ft.jit(fnp.heaviside)):
        got = f(x, h)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, np.heaviside(x, h))


def test_cov_of_float32_stays_float32():
    """cov of float32 data is float32 (as JAX) after the degrees-of-freedom guard of
    0d47025 made the divisor an int64 array (a float64 result of float32 numbers)."""
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    for f in (fnp.cov, ft.jit(fnp.cov)):
        got = f(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, np.cov(x), rtol=1e-5)


def test_trapezoid_nd_x_differenced_along_its_own_axis():
    # JAX's testIntegrateTrapezoid: y (2, 3, 10), x (3, 10), axis=-2 raised (x was
    # differenced along y's axis number 1, which is x's last axis)
    rng = np.random.default_rng(0)
    y, x = rng.normal(size=(2, 3, 10)), rng.normal(size=(3, 10))
    np.testing.assert_allclose(fnp.trapezoid(y, x, axis=-2), np.trapezoid(y, x, axis=-2), rtol=1e-13)


def test_fmod_nextafter_python_float_keeps_float32():
    """fmod(f32, 0.7) and nextafter(f32, 1.0) were float64: the Python float became a
    float64 array before promotion (numpy 2 / NEP 50 and JAX keep float32). Found by
    /work/fuzz_jax (a lax.cond branch returning fmod(t, 0.7) no longer matched the other)."""
    x = np.array([1.5, -2.3, 0.0, 0.7], np.float32)
    for f in (lambda v: (fnp.fmod(v, 0.7), fnp.nextafter(v, 1.0)),
              ft.jit(lambda v: (fnp.fmod(v, 0.7), fnp.nextafter(v, 1.0)))):
        fm, na = f(x)
        assert fm.dtype == np.float32 and na.dtype == np.float32
        np.testing.assert_array_equal(fm, np.fmod(x, 0.7))
        np.testing.assert_array_equal(na, np.nextafter(x, np.float32(1.0)))
    assert fnp.fmod(np.arange(-3, 3, dtype=np.int32), 2).dtype == np.int32
