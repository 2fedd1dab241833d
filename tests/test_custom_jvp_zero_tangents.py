"""custom_jvp rules given zero tangents: the terms of a rule that multiply a tangent the
caller did not perturb by an infinite (or NaN) partial are zero, not 0 * inf = NaN.

JAX 0.10.2 hands the rule instantiated zeros, so its jvp of ``xlogy(x, y)`` in x alone at
y = 0 is NaN while its grad is -inf (reverse mode drops those terms when it transposes the
rule). functrans's forward mode drops them as well, so jvp, jacfwd and vmaps of them give
the numbers JAX's grad/jacrev give (the expected values below are JAX 0.10.2's grad, x64).
Terms reached through a non-linear operation or a control-flow equation are computed
from instantiated zeros, as JAX computes them.
"""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy.special as fss
import functrans.scipy.stats as fst
from functrans import lax

inf = np.inf


@ft.custom_jvp
def _xlogy_like(x, y):
    return x * fnp.log(y)


@_xlogy_like.defjvp
def _xlogy_like_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlogy_like(x, y), tx * fnp.log(y) + ty * x / y


X = np.array([2.0, 2.0, 2.0, 0.0])
Y = np.array([0.0, -1.0, inf, 3.0])
# JAX 0.10.2 grad (jvp: NaN at every point but the last)
DX = np.array([-inf, np.nan, inf, np.log(3.0)])      # log(y); log(-1) is NaN
DY = np.array([inf, -2.0, 0.0, 0.0])                   # x / y


def _one(i):
    return lambda q, other: (_xlogy_like(q, other) if i == 0 else _xlogy_like(other, q))


MODES = {
    "jvp": lambda f, p, o: ft.jvp(lambda q: f(q, o), (p,), (np.ones_like(p),))[1],
    "jit_jvp": lambda f, p, o: ft.jit(lambda p, o: ft.jvp(
        lambda q: f(q, o), (p,), (fnp.ones_like(p),))[1])(p, o),
    "vmap_grad": lambda f, p, o: ft.vmap(ft.grad(f))(p, o),
    "vmap_jacfwd": lambda f, p, o: ft.vmap(ft.jacfwd(f))(p, o),
    "jit_vmap_jacfwd": lambda f, p, o: ft.jit(ft.vmap(ft.jacfwd(f)))(p, o),
    "vmap_jacrev": lambda f, p, o: ft.vmap(ft.jacrev(f))(p, o),
    "jacfwd_diag": lambda f, p, o: fnp.diagonal(ft.jacfwd(f)(p, o)),
    "jvp_of_vmap": lambda f, p, o: ft.jvp(lambda q: ft.vmap(f)(q, o), (p,),
                                          (np.ones_like(p),))[1],
    "linearize": lambda f, p, o: ft.linearize(lambda q: f(q, o), p)[1](np.ones_like(p)),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("i", [0, 1])
def test_user_rule_unperturbed_argument_times_infinite_partial(mode, i):
    f = _one(i)
    p, o = (X, Y) if i == 0 else (Y, X)
    got = np.asarray(MODES[mode](f, p, o))
    np.testing.assert_array_equal(got, DX if i == 0 else DY)


def test_second_order_through_the_rule():
    # d2/dy2 x log y = -x / y^2; the x tangent is zero in both orders
    h = ft.grad(ft.grad(lambda y: _xlogy_like(2.0, y)))
    hf = ft.jacfwd(ft.jacfwd(lambda y: _xlogy_like(2.0, y)))
    assert float(h(0.5)) == -8.0 and float(hf(0.5)) == -8.0


@ft.custom_jvp
def _in_cond(x, y):
    return x * y


@_in_cond.defjvp
def _in_cond_jvp(primals, tangents):
    # primal and tangent computed in one cond equation: its outputs are computed from
    # instantiated zeros (the primal output must not be taken for a zero)
    (x, y), (tx, ty) = primals, tangents
    return lax.cond(x > 0, lambda: (x * y, tx * y + ty * x),
                    lambda: (x * y, -(tx * y + ty * x)))


@ft.custom_jvp
def _nonlinear(x, y):
    return x * y


@_nonlinear.defjvp
def _nonlinear_jvp(primals, tangents):
    # not a linear rule: cos of a zero tangent is 1, as in JAX's jvp (not a zero term)
    (x, y), (tx, ty) = primals, tangents
    return _nonlinear(x, y), tx * y + fnp.cos(tx) + ty * x


@pytest.mark.parametrize("jit", [False, True])
def test_zero_tangents_in_control_flow_and_nonlinear_ops_follow_jax(jit):
    wrap = ft.jit if jit else (lambda f: f)
    out, t = wrap(lambda x: ft.jvp(lambda q: _in_cond(q, 3.0), (x,), (1.0,)))(2.0)
    assert (float(out), float(t)) == (6.0, 3.0)
    out, t = wrap(lambda x: ft.jvp(lambda q: _in_cond(q, 3.0), (x,), (1.0,)))(-2.0)
    assert (float(out), float(t)) == (-6.0, -3.0)
    out, t = wrap(lambda y: ft.jvp(lambda q: _nonlinear(2.0, q), (y,), (1.0,)))(3.0)
    assert (float(out), float(t)) == (6.0, 3.0)        # JAX 0.10.2: 0 + cos(0) + 2
    out, t = wrap(lambda x: ft.jvp(lambda q: _nonlinear(q, 3.0), (x,), (1.0,)))(2.0)
    assert (float(out), float(t)) == (6.0, 3.0 + np.cos(1.0))


# functrans.scipy functions with custom_jvp rules: (f of one argument, points, JAX 0.10.2's
# grad at the points); functrans's jvp was NaN at each (JAX's jvp is NaN there too)
LIB = [
    ("xlogy_dx", lambda x: fss.xlogy(x, 0.0), [1.0, -2.0], [-inf, -inf]),
    ("xlogy_dy", lambda y: fss.xlogy(2.0, y), [-0.5, inf, 0.0], [-4.0, 0.0, inf]),
    ("xlog1py_dx", lambda x: fss.xlog1py(x, -1.0), [1.0], [-inf]),
    ("xlog1py_dy", lambda y: fss.xlog1py(2.0, y), [-2.0, inf], [-2.0, 0.0]),
    ("owens_t_da", lambda a: fss.owens_t(inf, a), [0.0, -0.0], [0.0, 0.0]),
    # already numbers (kept: the same rules' other arguments)
    ("gamma.logpdf_dx", lambda x: fst.gamma.logpdf(x, 2.5), [0.0], [inf]),
    ("chi2.logpdf_ddf", lambda k: fst.chi2.logpdf(0.0, k), [3.0], [-inf]),
    ("beta.logpdf_db", lambda b: fst.beta.logpdf(1.0, 2.0, b), [3.0], [-inf]),
]


@pytest.mark.parametrize("name,f,xs,want", LIB, ids=[r[0] for r in LIB])
def test_special_functions_single_argument_derivatives(name, f, xs, want):
    xs = np.array(xs)
    jv = ft.jvp(ft.vmap(f), (xs,), (np.ones_like(xs),))[1]
    np.testing.assert_allclose(np.asarray(jv), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(f))(xs)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ft.jit(ft.vmap(ft.jacfwd(f)))(xs)), want, rtol=1e-12)
