"""functrans.random against JAX's own draws (tests/data/jax_random_reference.npz, made
once by tests/data/make_jax_random_reference.py with JAX's default PRNG and float64
enabled): keys, bits, integers, shuffles and uniform floats bit for bit; draws through
transcendental functions within a few ulp. Each draw also runs under jit (interpret
and cpu backends) and vmap over keys; erf_inv is checked on a dense grid; the
reparameterised gradients against finite differences."""
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.special as sps

import functrans as ft
from functrans import lax, random
from functrans.lax_special import erf_inv
from tests.data.jax_random_cases import CASES, ERF_INV_GRID, resolve

REF = np.load(Path(__file__).parent / "data" / "jax_random_reference.npz")
SKIPPED_DTYPES: tuple = ()         # dtypes functrans does not have
# cases whose values involve only exact or correctly rounded float operations
EXACT_FLOAT = {"uniform_f32", "uniform_f64", "uniform_range_f64", "uniform_range_f32"}
CALLABLE_CASES = sorted(n for n, (fn, _, _, kw) in CASES.items()
                        if fn != "key_data" and kw.get("dtype") not in SKIPPED_DTYPES)


def _draw_fn(name):
    fn, seed, args, kwargs = CASES[name]
    args = resolve(args, np.asarray)
    return (lambda k: getattr(random, fn)(k, *args, **kwargs)), random.PRNGKey(seed)


def _assert_close_to(got, want, name, f32_rtol=2e-6, f64_rtol=1e-13):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, name
    if want.dtype.kind != "f" or name in EXACT_FLOAT:
        np.testing.assert_array_equal(got, want, err_msg=name)
    elif want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=f32_rtol, atol=1e-7, err_msg=name)
    else:
        np.testing.assert_allclose(got, want, rtol=f64_rtol, atol=1e-15, err_msg=name)


@pytest.mark.parametrize("seed_name", ["key_0", "key_42", "key_big", "key_neg"])
def test_keys_are_jax_key_data(seed_name):
    seed = CASES[seed_name][1]
    np.testing.assert_array_equal(random.PRNGKey(seed), REF[seed_name])
    np.testing.assert_array_equal(random.key_data(random.key(seed)), REF[seed_name])
    np.testing.assert_array_equal(random.key_data(random.wrap_key_data(REF[seed_name])),
                                  REF[seed_name])


@pytest.mark.parametrize("name", CALLABLE_CASES)
def test_eager_draw_equals_jax(name):
    f, k = _draw_fn(name)
    _assert_close_to(f(k), REF[name], name)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("name", CALLABLE_CASES)
def test_jit_draw_equals_jax(name, backend):
    f, k = _draw_fn(name)
    # a compiled backend's log/exp/tan may round differently from numpy's by an ulp or
    # two, which ill-conditioned draws (gumbel's log(-log u)) amplify
    _assert_close_to(ft.jit(f, backend=backend)(k), REF[name], name, f32_rtol=8e-6,
                     f64_rtol=4e-13)


@pytest.mark.parametrize("name", CALLABLE_CASES)
def test_vmap_over_keys_equals_loop(name):
    f, k = _draw_fn(name)
    ks = random.split(k, 3)
    loop = np.stack([np.asarray(f(kk)) for kk in np.asarray(ks)])
    got = np.asarray(ft.vmap(f)(ks))
    if name.startswith("multivariate_normal"):   # batched einsum/svd sum in another order
        np.testing.assert_allclose(got, loop, rtol=1e-14, atol=1e-15)
    else:
        np.testing.assert_array_equal(got, loop)


def test_unsupported_bit_widths_raise():
    with pytest.raises(ValueError, match="int16"):     # JAX: unsigned only, ValueError
        random.bits(random.key(0), (2,), np.int16)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_ulps_from_jax(dtype):
    ref = REF[f"normal_{dtype.replace('float', 'f')}"]
    got = np.asarray(random.normal(random.PRNGKey(1), (500,), dtype))
    ulp = np.abs(got - ref) / np.spacing(np.abs(ref).astype(dtype))
    if dtype == "float32":
        assert ulp.max() <= 3
    else:
        # XLA's float64 log1p is off by up to ~130 ulp for arguments in (-0.45, -0.3),
        # which JAX's erf_inv inherits for |u| in about (0.55, 0.67); elsewhere <= 2 ulp
        assert np.mean(ulp <= 2) > 0.95 and ulp.max() <= 32


def test_complex_normal_as_jax():
    """normal(key, shape, complex dtype) as JAX 0.10.2's (it raised TypeError): real and
    imaginary parts from split(key)'s two keys, divided by sqrt(2); eager and jit."""
    want = [0.24862191 - 0.36817454j, -0.81614277 - 0.22538821j, -0.03265663 + 0.50844016j]
    for f in (random.normal, ft.jit(random.normal, static_argnums=(1, 2))):
        got = f(random.PRNGKey(7), (3,), np.complex128)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, want, atol=1e-8)
    c64 = random.normal(random.PRNGKey(7), (2,), np.complex64)
    assert c64.dtype == np.complex64
    np.testing.assert_allclose(c64, [0.7877503 + 0.3211209j, 0.10014845 + 0.66408837j], atol=1e-6)



def test_float16_draws_as_jax():
    """float16 uniform/normal/exponential/bernoulli and erf_inv as JAX 0.10.2's, bit for
    bit (they raised ValueError; mixed-precision programs draw float16 noise, and
    bernoulli with a float16 p draws float16 uniforms): 16-bit words, their top 10 bits
    over 2**10; erf_inv in float32 rounded once. Eager and jit."""
    k = random.PRNGKey(7)
    want = {(random.uniform, ()): [12576, 14304, 12592, 13392, 13880, 14554],
            (random.uniform, (-3, 5)): [48864, 15232, 48848, 47808, 12032, 16232],
            (random.normal, ()): [48113, 42203, 48096, 47336, 46211, 13397],
            (random.exponential, ()): [12694, 14700, 12713, 13574, 14304, 15222]}
    for (fn, rng), bits in want.items():
        for f in (fn, ft.jit(lambda k: fn(k, (6,), np.float16, *rng))):
            got = f(k, (6,), np.float16, *rng) if f is fn else f(k)
            assert got.dtype == np.float16
            assert np.asarray(got).view(np.uint16).tolist() == bits, fn.__name__
    b = random.bernoulli(k, np.float16(0.3), (12,))
    assert np.asarray(b).astype(int).tolist() == [1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1]
    e = erf_inv(np.array([-0.9, -0.3, 0.0, 0.5, 0.999], np.float16))
    assert e.dtype == np.float16
    assert np.asarray(e).view(np.uint16).tolist() == [48295, 46172, 0, 14242, 16554]


# --------------------------------------------------------------------------- erf_inv

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_inv_against_jax_grid(dtype):
    x, want = REF[f"erf_inv_{np.dtype(dtype).name.replace('float', 'f')}"]
    got = np.asarray(erf_inv(x))
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    ulp = np.abs(got[fin] - want[fin]) / np.spacing(np.abs(want[fin]).astype(dtype))
    outside_xla_log1p_band = (np.abs(x[fin]) < 0.55) | (np.abs(x[fin]) > 0.67)
    assert ulp[outside_xla_log1p_band].max() <= 2
    assert ulp.max() <= 32


def test_erf_inv_accuracy_float64():
    # erf(y) == x to within the condition of the problem: one Newton step from y
    # with math.erf lands within 6 ulp of y on a dense grid (Giles' approximation)
    x = np.asarray(ERF_INV_GRID[1:-1] + [1e-300, 0.9999999])
    x = x[np.abs(x) < 1]
    y = np.asarray(erf_inv(x))
    erf = np.vectorize(math.erf)
    newton = y - (erf(y) - x) / (2 / math.sqrt(math.pi) * np.exp(-y * y))
    big = np.abs(x) < 0.999      # near +-1 math.erf's own rounding dominates
    np.testing.assert_array_max_ulp(y[big], newton[big], 6)
    assert erf_inv(np.float64(0.0)) == 0.0
    assert erf_inv(np.float64(1e-300)) == pytest.approx(1e-300 * math.sqrt(math.pi) / 2)
    assert np.isnan(erf_inv(np.float64(1.5)))


def test_erf_inv_derivative_jit_vmap():
    x = np.array([-0.9, -0.3, 0.0, 0.5, 0.99])
    want = math.sqrt(math.pi) / 2 * np.exp(np.asarray(erf_inv(x)) ** 2)
    g = ft.vmap(ft.grad(lax.erf_inv))(x)
    np.testing.assert_allclose(g, want, rtol=1e-14)
    np.testing.assert_array_equal(ft.jit(erf_inv, backend="interpret")(x), erf_inv(x))
    second = ft.grad(ft.grad(lax.erf_inv))(0.5)
    y = float(erf_inv(0.5))
    np.testing.assert_allclose(second, 2 * y * (math.sqrt(math.pi) / 2 * math.exp(y * y)) ** 2,
                               rtol=1e-12)


# --------------------------------------------------------------------------- gradients

def _fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("name,draw", [
    ("uniform", lambda k, a: random.uniform(k, (5,), minval=a, maxval=a + 2.0)),
    ("truncated_normal", lambda k, a: random.truncated_normal(k, a, a + 1.5, (5,))),
    ("pareto", lambda k, a: random.pareto(k, a, (5,))),
    ("weibull_min", lambda k, a: random.weibull_min(k, 2.0, a, (5,))),
    ("rayleigh", lambda k, a: random.rayleigh(k, a, (5,))),
    ("lognormal", lambda k, a: random.lognormal(k, a, (5,))),
    ("wald", lambda k, a: random.wald(k, a, (5,))),
    ("triangular", lambda k, a: random.triangular(k, 0.0, a, 3.0, (5,))),
    ("double_sided_maxwell", lambda k, a: random.double_sided_maxwell(k, a, a * a, (5,))),
])
def test_reparameterised_gradients(name, draw):
    k = random.key(3)
    a = 1.3
    total = lambda v: ft.numpy.sum(draw(k, v))          # noqa: E731
    got = float(ft.grad(total)(a))
    want = float(_fd(lambda v: float(total(v)), a))
    assert got == pytest.approx(want, rel=1e-5, abs=1e-7), name
    assert float(ft.jit(ft.grad(total))(a)) == pytest.approx(got, rel=1e-12)


def test_multivariate_normal_gradient_in_mean_and_cov():
    k = random.key(4)
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])

    def total(m, c):
        return ft.numpy.sum(random.multivariate_normal(k, m, c, (4,)) ** 2)

    gm, gc = ft.grad(total, argnums=(0, 1))(mean, cov)
    for i in range(3):
        e = np.zeros(3)
        e[i] = 1e-6
        fd = (float(total(mean + e, cov)) - float(total(mean - e, cov))) / 2e-6
        assert float(gm[i]) == pytest.approx(fd, rel=1e-5)
    e = np.zeros((3, 3))
    e[0, 1] = e[1, 0] = 1e-6      # a symmetric perturbation of cov
    fd = (float(total(mean, cov + e)) - float(total(mean, cov - e))) / 2e-6
    assert float(gc[0, 1] + gc[1, 0]) == pytest.approx(fd, rel=1e-4)


def test_normal_family_draws_are_constants_to_autodiff():
    k = random.key(0)
    g = ft.grad(lambda s: ft.numpy.sum(s * random.normal(k, (3,))))(2.0)
    assert float(g) == pytest.approx(float(np.sum(random.normal(k, (3,)))))


def _gamma_quantile_derivative(a, x, eps=1e-6):
    # the implicit gradient from its definition: the sample held at its CDF value u
    u = sps.gammainc(a, x)
    return (sps.gammaincinv(a + eps, u) - sps.gammaincinv(a - eps, u)) / (2 * eps)


def test_gamma_draws_have_jaxs_implicit_gradient_in_both_modes():
    k = random.key(0)
    a = np.array([0.3, 1.0, 2.5, 40.0])
    x = np.asarray(random.gamma(k, a))
    want = _gamma_quantile_derivative(a, x)
    g = ft.grad(lambda aa: ft.numpy.sum(random.gamma(k, aa)))(a)
    np.testing.assert_allclose(g, want, rtol=1e-5)
    np.testing.assert_allclose(ft.jacfwd(lambda aa: random.gamma(k, aa))(a), np.diag(want),
                               rtol=1e-5, atol=1e-12)
    # log-space draws: d log x = dx / x; jit and vmap keep the rule
    gl = ft.jit(ft.grad(lambda aa: ft.numpy.sum(random.loggamma(k, aa))))(a)
    np.testing.assert_allclose(gl, want / x, rtol=1e-5)
    gv = ft.vmap(ft.grad(lambda aa: random.gamma(k, aa)))(a)    # one scalar draw each
    loop = [float(ft.grad(lambda aa: random.gamma(k, aa))(v)) for v in a]
    np.testing.assert_allclose(gv, loop, rtol=1e-12)
    # the distributions built on gamma inherit it: beta's derivative vs its own quantile
    b = float(random.beta(k, 1.5, 2.0))
    gb = ft.grad(lambda aa: random.beta(k, aa, 2.0))(1.5)
    assert np.isfinite(float(gb)) and float(gb) != 0.0
    assert 0 < b < 1


def test_random_gamma_grad_matches_the_quantile_derivative():
    a = np.array([2.0, 0.3, 50.0, 3.0, 0.01, 1e3, 0.5, 1.0])
    x = np.array([1.5, 0.01, 45.0, 20.0, 2.0, 1010.0, 3.0, 1e-5])
    np.testing.assert_allclose(lax.random_gamma_grad(a, x), _gamma_quantile_derivative(a, x),
                               rtol=1e-5)
    # far tails where the density underflows: the prefactor cancels, no 0/0
    assert np.isfinite(np.asarray(lax.random_gamma_grad(0.01, 1e-300)))
    assert np.asarray(lax.random_gamma_grad([2.0, -1.0, 2.0], [0.0, 1.0, -1.0])).tolist()[0] == 0
    assert np.isnan(np.asarray(lax.random_gamma_grad([-1.0, 2.0], [1.0, -1.0]))).all()
    np.testing.assert_allclose(lax.igamma_grad_a(a, x), (sps.gammainc(a + 1e-6, x)
                               - sps.gammainc(a - 1e-6, x)) / 2e-6, rtol=1e-5, atol=1e-12)


def test_shape_derivatives_converge_with_the_values():
    # mpmath (40 digits) references; the continued fraction's derivative used to stop
    # when the value had converged, 4e-5 short at (2, 4.625) and 4e-10 at (3, 20)
    a = np.array([3.0, 2.0, 50.0, 0.3])
    x = np.array([20.0, 4.625, 45.0, 0.01])
    dp = [-9.6806039960773565e-7, -0.0727302967138763, -0.045543292140123876,
          -1.2403581253867568]
    dx = [2.3483460647208337, 1.6040415031227984, 0.95141019221162384, 0.14920695356145891]
    np.testing.assert_allclose(lax.igamma_grad_a(a, x), dp, rtol=1e-13)
    np.testing.assert_allclose(ft.vmap(ft.grad(lax.igamma))(a, x), dp, rtol=1e-13)
    np.testing.assert_allclose(ft.vmap(ft.grad(lax.igammac))(a, x), -np.array(dp), rtol=1e-13)
    np.testing.assert_allclose(lax.random_gamma_grad(a, x), dx, rtol=1e-13)


def test_gamma_moments_and_support():
    x = np.asarray(random.gamma(random.key(5), 0.3, (3000,)))
    assert (x > 0).all() and abs(x.mean() - 0.3) < 0.03 and abs(x.var() - 0.3) < 0.06
    b = np.asarray(random.beta(random.key(6), 2.0, 3.0, (3000,)))
    assert ((b > 0) & (b < 1)).all() and abs(b.mean() - 0.4) < 0.015


def test_lgamma_composite_matches_math_lgamma():
    from functrans.lax_special import lgamma
    xs = np.concatenate([np.linspace(-4.75, 40.0, 997), np.arange(1.0, 171.0)])
    want = np.array([math.lgamma(v) for v in xs])
    got = np.asarray(lgamma(xs))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    assert np.isinf(np.asarray(lgamma(np.array([0.0, -2.0, np.inf])))).all()
    g = ft.grad(lambda x: lgamma(x))(3.0)     # digamma(3) = 1.5 - euler_gamma
    assert float(g) == pytest.approx(1.5 - 0.5772156649015329, rel=1e-10)


def test_multivariate_normal_eigh_uses_the_eigendecomposition():
    """method='eigh' draws mean + V sqrt(w) z with z = normal(key): JAX's factor up to
    the eigenvectors' signs (fnp.linalg.eigh fixes each one's sign by its own rule,
    LAPACK's sign is unspecified), so its draws are not JAX's bit for bit."""
    mean, cov = (np.asarray(a) for a in resolve(("mean_3", "cov_3"), np.asarray))
    k = random.PRNGKey(0)
    got = random.multivariate_normal(k, mean, cov, (4,), method="eigh")
    w, v = (np.asarray(a) for a in ft.numpy.linalg.eigh(cov))
    np.testing.assert_allclose(np.abs(v), np.abs(np.linalg.eigh(cov)[1]), rtol=1e-12)
    z = np.asarray(random.normal(k, (4, 3)))
    np.testing.assert_allclose(got, mean + z @ (v * np.sqrt(w)).T, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="method"):
        random.multivariate_normal(k, mean, cov, method="qr")


def test_samplers_take_jax_keywords():
    """out_sharding (one device: nothing changes), key(impl=), multinomial(unroll=)."""
    k = random.key(0, impl="threefry2x32")
    np.testing.assert_array_equal(random.normal(k, (3,), out_sharding=None),
                                  random.normal(k, (3,)))
    np.testing.assert_array_equal(random.PRNGKey(0, impl="threefry2x32"), random.key_data(k))
    assert random.key_impl(k) == "threefry2x32" and random.key_dtype() == k.dtype
    np.testing.assert_array_equal(
        random.multinomial(k, 5.0, np.array([0.5, 0.5]), unroll=2),
        random.multinomial(k, 5.0, np.array([0.5, 0.5])))
    with pytest.raises(ValueError, match="threefry2x32"):
        random.key(0, impl="rbg")
