"""scipy.special in float16 and bfloat16 (they raised): the functions JAX 0.10.2 takes in
16 bits compute in float32 and round once to the argument's dtype (one table at the
``functrans.scipy.special`` boundary), eagerly, under jit and under grad; those JAX refuses
in 16 bits (ndtr, ndtri, log_ndtr, spence; owens_t gives float64 there) raise TypeError
naming the dtype."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import functrans as ft
from functrans import lax
from functrans.scipy import special as S

BF = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
# arguments inside each function's domain (integer orders where the function wants them)
ARGS = {1: ([0.3, 1.7, 4.25, 0.05],), 2: ([2.5, 1.0, 3.0, 0.5], [0.3, 1.7, 4.25, 0.05]),
        3: ([2.5, 1.0, 3.0, 0.5], [1.5, 2.0, 0.75, 1.0], [0.3, 0.7, 0.25, 0.05]),
        4: ([0.5, 1.0, 1.5, 0.25], [1.5, 2.0, 0.75, 1.0], [3.5, 4.0, 2.75, 3.0],
            [0.3, 0.7, 0.25, 0.05])}
ARITY = {"beta": 2, "betainc": 3, "betaln": 2, "boxcox": 2, "boxcox1p": 2, "comb": 2,
         "expn": 2, "gammainc": 2, "gammaincc": 2, "hyp1f1": 3, "hyp2f1": 4, "kl_div": 2,
         "multigammaln": 2, "poch": 2, "polygamma": 2, "rel_entr": 2, "xlog1py": 2,
         "xlogy": 2, "zeta": 2}
NAMES = [n for n in S._FLOAT32_FOR_16_BIT if n != "bessel_jn"]


def _args(name, dt):
    if name in ("expn", "polygamma"):               # an integer order, then x
        return [np.array([1, 2, 3, 1]), np.array(ARGS[1][0], dt)]
    if name == "multigammaln":                      # a, then the (static) dimension
        return [np.array([2.5, 3.0, 4.25, 1.75], dt), 2]
    return [np.array(v, dt) for v in ARGS[ARITY.get(name, 1)]]


def _wide(args):
    return [a.astype(np.float32) if getattr(a, "dtype", None) in (F16, BF) else a for a in args]


def _same(got, want, dt, what):
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind == "c":
        assert got.dtype == np.complex64, what
        np.testing.assert_array_equal(got, want, what)
        return
    assert got.dtype == dt, (what, got.dtype)
    w = want.astype(dt)
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), np.isnan(w.astype(np.float32)),
                                  what)
    ok = ~np.isnan(w.astype(np.float32))
    np.testing.assert_array_equal(got[ok].view(np.uint16), w[ok].view(np.uint16), what)


@pytest.mark.parametrize("dt", [F16, BF], ids=["f16", "bf16"])
@pytest.mark.parametrize("name", NAMES)
def test_16_bit_is_float32_rounded_once(name, dt):
    fn = getattr(S, name)
    args = _args(name, dt)
    want = ft.tree_util.tree_leaves(fn(*_wide(args)))
    for f in (fn, ft.jit(fn, static_argnums=(1,) if name == "multigammaln" else ())):
        for g, w in zip(ft.tree_util.tree_leaves(f(*args)), want):
            _same(g, w, dt, name)


@pytest.mark.parametrize("dt", [F16, BF], ids=["f16", "bf16"])
def test_bessel_jn_grad_and_mixed_precision(dt):
    x = np.array([0.5, 1.25, 3.0], dt)
    _same(S.bessel_jn(x, v=2), S.bessel_jn(x.astype(np.float32), v=2), dt, "bessel_jn")
    g = ft.grad(lambda v: S.erf(v).astype(np.float32).sum())(x)
    assert g.dtype == dt
    np.testing.assert_allclose(g.astype(np.float32),
                               2 / np.sqrt(np.pi) * np.exp(-x.astype(np.float32) ** 2),
                               rtol=2 ** -7)
    # with a float32 operand it is float32, computed as before
    assert S.xlogy(x, np.ones(3, np.float32)).dtype == np.float32
    assert S.gammaln(x).dtype == dt and S.gammaln(np.float32(2.5)).dtype == np.float32


@pytest.mark.parametrize("dt", [F16, BF], ids=["f16", "bf16"])
@pytest.mark.parametrize("name", ["ndtr", "ndtri", "log_ndtr", "spence", "owens_t"])
def test_what_jax_refuses_in_16_bits_raises(name, dt):
    args = [np.array([0.3, 0.5], dt)] * (2 if name == "owens_t" else 1)
    with pytest.raises(TypeError, match=dt.name):
        getattr(S, name)(*args)


# JAX 0.10.2's jax.lax values at these points (float16, bfloat16 results)
_LAX_16_BIT = {
    ("digamma", (2.5,)): (0.703125, 0.703125),
    ("igamma", (2.0, 1.5)): (0.442138671875, 0.44140625),
    ("igammac", (2.0, 1.5)): (0.5576171875, 0.55859375),
    ("igamma_grad_a", (2.0, 1.5)): (-0.3134765625, -0.314453125),
    ("bessel_i0e", (1.5,)): (0.367431640625, 0.3671875),
    ("bessel_i1e", (1.5,)): (0.218994140625, 0.21875),
    ("betainc", (2.0, 3.0, 0.4)): (0.5244140625, 0.52734375),
    ("zeta", (3.0, 2.0)): (0.2020263671875, 0.2021484375),
    ("polygamma", (1.0, 2.5)): (0.490478515625, 0.490234375),
    ("random_gamma_grad", (2.0, 1.5)): (0.9365234375, 0.9375),
}


@pytest.mark.parametrize("name,args", list(_LAX_16_BIT))
def test_lax_special_functions_take_16_bit_floats_as_jax(name, args):
    """jax.lax's special functions under their lax names (digamma, igamma, betainc, ...)
    compute float16/bfloat16 operands in float32 and round once, eagerly and under jit
    (they raised "expected real floating inputs")."""
    for dt, want in zip((np.float16, ml_dtypes.bfloat16), _LAX_16_BIT[(name, args)]):
        xs = [np.array([v], dt) for v in args]
        for f in (getattr(lax, name), ft.jit(getattr(lax, name))):
            got = f(*xs)
            assert got.dtype == np.dtype(dt), (name, got.dtype)
            assert float(np.asarray(got)[0]) == want, (name, dt, float(np.asarray(got)[0]))
