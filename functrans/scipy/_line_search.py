"""The strong-Wolfe line search BFGS uses (Nocedal and Wright, *Numerical
Optimization*, algorithms 3.5 and 3.6), with ``jax.scipy.optimize``'s semantics step
for step: the first trial step from the previous decrease, doubling until a bracket,
then a zoom by cubic, quadratic or bisection steps.  Both loops are
``lax.while_loop``s (they jit); every branch is a ``where`` over the whole state, so
the zoom runs (and is skipped by its ``pass_through`` flag) inside the outer loop.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..autodiff import value_and_grad
from ..typing import ArrayLike

__all__ = ["line_search", "LineSearchResults"]

# the curvature test's tolerances of the zoom's interpolation steps (as scipy and JAX)
_DELTA_CUBIC = 0.2
_DELTA_QUAD = 0.1
_ZOOM_MAXITER = 30


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """The minimiser of the cubic through (a, fa) with slope fpa, (b, fb), (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    r1 = fb - fa - fpa * db
    r2 = fc - fa - fpa * dc
    A = (dc ** 2 * r1 - db ** 2 * r2) / denom
    B = (-dc ** 3 * r1 + db ** 3 * r2) / denom
    radical = B * B - 3.0 * A * fpa
    return a + (-B + fnp.sqrt(radical)) / (3.0 * A)


def _quadmin(a, fa, fpa, b, fb):
    """The minimiser of the quadratic through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    B = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * B)


def _replace(state, cond, new):
    """``state`` with the fields in ``new`` taken from ``new`` where ``cond``."""
    return state._replace(**{k: fnp.where(cond, v, getattr(state, k)) for k, v in new.items()})


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom_step(state, phi_and_grad, wolfe_one, wolfe_two):
    """One zoom iteration: a trial step inside the bracket, then the bracket update."""
    dalpha = state.a_hi - state.a_lo
    a = fnp.minimum(state.a_hi, state.a_lo)
    b = fnp.maximum(state.a_hi, state.a_lo)
    # a bracket this thin stops the search; Wolfe is unmet, so the minimiser stops too
    threshold = 1e-5 if np.finfo(dalpha.dtype).bits < 64 else 1e-10
    state = state._replace(failed=state.failed | (dalpha <= threshold))
    a_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi,
                        state.a_rec, state.phi_rec)
    use_cubic = (state.j > 0) & (a_cubic > a + _DELTA_CUBIC * dalpha) \
        & (a_cubic < b - _DELTA_CUBIC * dalpha)
    a_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi, state.phi_hi)
    use_quad = ~use_cubic & (a_quad > a + _DELTA_QUAD * dalpha) \
        & (a_quad < b - _DELTA_QUAD * dalpha)
    a_j = fnp.where(use_cubic, a_cubic, state.a_rec)
    a_j = fnp.where(use_quad, a_quad, a_j)
    a_j = fnp.where(~use_cubic & ~use_quad, (state.a_lo + state.a_hi) / 2.0, a_j)
    phi_j, dphi_j, g_j = phi_and_grad(a_j)
    state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

    hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
    star_to_j = wolfe_two(dphi_j) & ~hi_to_j
    hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & ~hi_to_j & ~star_to_j
    lo_to_j = ~hi_to_j & ~star_to_j
    state = _replace(state, hi_to_j, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
                                          a_rec=state.a_hi, phi_rec=state.phi_hi))
    state = _replace(state, star_to_j, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j,
                                            g_star=g_j))
    state = state._replace(done=star_to_j | state.done)
    state = _replace(state, hi_to_lo, dict(a_hi=state.a_lo, phi_hi=state.phi_lo,
                                           dphi_hi=state.dphi_lo, a_rec=state.a_hi,
                                           phi_rec=state.phi_hi))
    state = _replace(state, lo_to_j & ~hi_to_lo, dict(a_rec=state.a_lo, phi_rec=state.phi_lo))
    state = _replace(state, lo_to_j, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j))
    j = state.j + 1
    return state._replace(j=j, failed=state.failed | (j >= _ZOOM_MAXITER))


def _zoom(phi_and_grad, wolfe_one, wolfe_two, lo, hi, g_0, pass_through):
    """Algorithm 3.6: shrink the bracket ``lo = (a, phi, dphi)``, ``hi`` (same) until
    the strong Wolfe conditions hold; ``pass_through`` skips it (no evaluation)."""
    dt = lo[0].dtype.type
    int_t = np.int64   # JAX with x64 on (functrans always is): its Python-int counters are int64
    state = _ZoomState(
        done=fnp.asarray(False), failed=fnp.asarray(False), j=fnp.asarray(0, int_t),
        a_lo=lo[0], phi_lo=lo[1], dphi_lo=lo[2], a_hi=hi[0], phi_hi=hi[1], dphi_hi=hi[2],
        a_rec=(lo[0] + hi[0]) / 2.0, phi_rec=(lo[1] + hi[1]) / 2.0,
        a_star=fnp.asarray(dt(1)), phi_star=lo[1], dphi_star=lo[2], g_star=g_0,
        nfev=fnp.asarray(0, int_t), ngev=fnp.asarray(0, int_t))
    return lax.while_loop(lambda s: ~s.done & ~pass_through & ~s.failed,
                          lambda s: _zoom_step(s, phi_and_grad, wolfe_one, wolfe_two), state)


class _LineSearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class LineSearchResults(NamedTuple):
    """What :func:`line_search` found: ``failed`` (the strong Wolfe conditions were
    not met), ``nit``, ``nfev``, ``ngev``, ``k``, the step ``a_k``, the value ``f_k``
    and gradient ``g_k`` there, and ``status`` (0 passed, 1 zoom failed, 3 maxiter).

    >>> LineSearchResults._fields[:3]
    ('failed', 'nit', 'nfev')
    """
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def _search_step(state, phi_and_grad, wolfe_one, wolfe_two, start_value, gfk):
    """One trial step of algorithm 3.5 (the step doubles from ``start_value``)."""
    a_i = fnp.where(state.i == 1, start_value, state.a_i1 * 2.0)
    phi_i, dphi_i, g_i = phi_and_grad(a_i)
    nfev, ngev = state.nfev + 1, state.ngev + 1
    star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
    star_to_i = wolfe_two(dphi_i) & ~star_to_zoom1
    star_to_zoom2 = (dphi_i >= 0.0) & ~star_to_zoom1 & ~star_to_i
    prev, here = (state.a_i1, state.phi_i1, state.dphi_i1), (a_i, phi_i, dphi_i)
    zoom1 = _zoom(phi_and_grad, wolfe_one, wolfe_two, prev, here, gfk, ~star_to_zoom1)
    zoom2 = _zoom(phi_and_grad, wolfe_one, wolfe_two, here, prev, gfk, ~star_to_zoom2)
    state = state._replace(nfev=nfev + zoom1.nfev + zoom2.nfev,
                           ngev=ngev + zoom1.ngev + zoom2.ngev)
    star = ("a_star", "phi_star", "dphi_star", "g_star")
    state = _replace(state, star_to_zoom1, {k: getattr(zoom1, k) for k in star})
    state = state._replace(done=star_to_zoom1 | state.done,
                           failed=(star_to_zoom1 & zoom1.failed) | state.failed)
    state = _replace(state, star_to_i, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i,
                                            g_star=g_i))
    state = state._replace(done=star_to_i | state.done)
    state = _replace(state, star_to_zoom2, {k: getattr(zoom2, k) for k in star})
    state = state._replace(done=star_to_zoom2 | state.done,
                           failed=(star_to_zoom2 & zoom2.failed) | state.failed)
    return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)


def line_search(f: Callable[[Any], Any], xk: ArrayLike, pk: ArrayLike,
                old_fval: ArrayLike | None = None, old_old_fval: ArrayLike | None = None,
                gfk: ArrayLike | None = None, c1: float = 1e-4,
                c2: float = 0.9, maxiter: int = 20) -> LineSearchResults:
    """A step along the descent direction ``pk`` from ``xk`` meeting the strong Wolfe
    conditions (sufficient decrease ``c1``, curvature ``c2``), as
    ``jax._src.scipy.optimize.line_search``: ``old_fval``/``gfk`` are f and its
    gradient at ``xk`` (computed when not given); ``old_old_fval`` the previous value,
    which picks the first trial step.

    >>> import functrans.numpy as fnp
    >>> r = line_search(lambda x: fnp.sum(x ** 2), fnp.array([1.0]), fnp.array([-1.0]))
    >>> float(r.a_k), bool(r.failed)
    (1.0, False)
    """
    xk, pk = fnp.asarray(xk), fnp.asarray(pk)
    dt = np.result_type(xk.dtype, pk.dtype)
    if not np.issubdtype(dt, np.inexact):
        dt = np.dtype(np.float64)
    xk, pk = xk.astype(dt), pk.astype(dt)
    rt = np.finfo(dt).dtype   # steps, values and slopes are real (complex x: Re(g . p))

    def phi_and_grad(t):
        phi, g = value_and_grad(f)(xk + fnp.asarray(t, dt) * pk)
        return phi.astype(rt), fnp.real(fnp.dot(g, pk)).astype(rt), g.astype(dt)

    given = old_fval is not None and gfk is not None
    if given:
        phi_0, gfk = fnp.asarray(old_fval, rt), fnp.asarray(gfk, dt)
        dphi_0 = fnp.real(fnp.dot(gfk, pk))
    else:
        phi_0, dphi_0, gfk = phi_and_grad(0.0)
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value = fnp.where(candidate > 1, rt.type(1), candidate).astype(rt)
    else:
        start_value = fnp.asarray(1.0, rt)

    def wolfe_one(a_i, phi_i):   # the negation of the sufficient-decrease condition
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):
        return fnp.abs(dphi_i) <= -c2 * dphi_0

    int_t = np.int64   # JAX with x64 on (functrans always is): its Python-int counters are int64
    state = _LineSearchState(
        done=fnp.asarray(False), failed=fnp.asarray(False),
        # the algorithm counts from 1, as Nocedal and Wright do (scipy's starts at 0)
        i=fnp.asarray(1, int_t), a_i1=fnp.asarray(0.0, rt), phi_i1=phi_0, dphi_i1=dphi_0,
        nfev=fnp.asarray(0 if given else 1, int_t), ngev=fnp.asarray(0 if given else 1, int_t),
        a_star=fnp.asarray(0.0, rt), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)
    state = lax.while_loop(
        lambda s: ~s.done & (s.i <= maxiter) & ~s.failed,
        lambda s: _search_step(s, phi_and_grad, wolfe_one, wolfe_two, start_value, gfk),
        state)
    status = fnp.where(state.failed, 1, fnp.where(state.i > maxiter, 3, 0)).astype(int_t)
    alpha = state.a_star
    if np.finfo(rt).bits != 64:
        # below 64 bits a tiny step stalls the minimiser: keep it at least 1e-8
        alpha = fnp.where(fnp.abs(alpha) < 1e-8, fnp.sign(alpha) * rt.type(1e-8), alpha)
    return LineSearchResults(failed=state.failed | ~state.done, nit=state.i - 1,
                             nfev=state.nfev, ngev=state.ngev, k=state.i, a_k=alpha,
                             f_k=state.phi_star, g_k=state.g_star, status=status)
