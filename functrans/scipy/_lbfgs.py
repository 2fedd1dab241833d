"""Limited-memory BFGS (Nocedal and Wright, *Numerical Optimization*, algorithm 7.4/7.5),
the method ``minimize(..., method="l-bfgs-experimental-do-not-rely-on-this")`` runs, with
``jax.scipy.optimize``'s semantics: the strong-Wolfe line search of BFGS, the last
``maxcor`` steps ``s`` and gradient changes ``y`` kept newest-last, the initial inverse
Hessian ``gamma I`` with ``gamma = (y.s) / (y.y)``, and complex ``x`` handled as in Sorber,
Van Barel and De Lathauwer (2012): inner products ``Re(conj(a) . b)``.  The loop is a
``lax.while_loop`` (it jits).

Status codes: 0 converged, 1 ``maxiter``, 2 ``maxfun``, 3 ``maxgrad`` reached, 4 the last
step decreased ``f`` by less than ``ftol``, 5 the line search failed.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..autodiff import value_and_grad
from ._line_search import line_search

__all__ = ["LBFGSResults", "minimize_lbfgs"]


class LBFGSResults(NamedTuple):
    """The state of :func:`minimize_lbfgs` (the fields of JAX's ``LBFGSResults``):
    ``converged``/``failed`` flags, ``k`` iterations, ``nfev``/``ngev`` evaluations,
    ``x_k``, ``f_k``, ``g_k`` the last iterate, value and gradient, the step, gradient
    change and ``1/Re(y.s)`` histories (newest last), ``gamma``, ``status`` and the last
    line search's ``ls_status``.

    >>> LBFGSResults._fields[:5]
    ('converged', 'failed', 'k', 'nfev', 'ngev')
    """
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _rdot(a, b):
    """``Re(a . b)`` (no conjugation: callers conjugate where the recursion needs it)."""
    return fnp.real(fnp.dot(a, b))


def _direction(state: LBFGSResults):
    """The search direction ``-H g`` by the two-loop recursion over the first
    ``min(k, maxcor)`` history slots counted from the newest (the last) one."""
    rho, s_his, y_his = state.rho_history, state.s_history, state.y_history
    dtype, m = rho.dtype, rho.shape[0]
    used = fnp.minimum(state.k, m)

    def newest_first(j, carry):
        q, alphas = carry
        i = m - 1 - j
        a_i = rho[i] * _rdot(fnp.conj(s_his[i]), q).astype(dtype)
        return q - a_i * fnp.conj(y_his[i]), alphas.at[i].set(a_i)

    q, alphas = lax.fori_loop(0, used, newest_first,
                              (-fnp.conj(state.g_k), fnp.zeros_like(rho)))
    q = state.gamma * q

    def oldest_first(j, q):
        i = m - used + j
        b_i = rho[i] * _rdot(y_his[i], q).astype(dtype)
        return q + (alphas[i] - b_i) * s_his[i]

    return lax.fori_loop(0, used, oldest_first, q)


def _push(history, new):
    """Drop the oldest entry (the first), append ``new`` last."""
    return fnp.concatenate([history[1:], fnp.asarray(new, history.dtype)[None]], axis=0)


def _lbfgs_step(state: LBFGSResults, fun, limits, norm, ftol, gtol, maxls):
    maxiter, maxfun, maxgrad = limits
    p_k = _direction(state)
    ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k, gfk=state.g_k, maxiter=maxls)
    s_k = fnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
    y_k = ls.g_k - state.g_k
    ys = _rdot(y_k, s_k)
    gamma = ys / _rdot(fnp.conj(y_k), y_k)
    status = fnp.where(state.f_k - ls.f_k < ftol, 4, 0)
    status = fnp.where(state.ngev >= maxgrad, 3, status)
    status = fnp.where(state.nfev >= maxfun, 2, status)
    status = fnp.where(state.k >= maxiter, 1, status)
    status = fnp.where(ls.failed, 5, status).astype(state.status.dtype)
    converged = fnp.linalg.norm(ls.g_k, ord=norm) < gtol
    return LBFGSResults(
        converged=converged, failed=(status > 0) & ~converged, k=state.k + 1,
        nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev,
        x_k=(state.x_k + s_k).astype(state.x_k.dtype),
        f_k=fnp.asarray(ls.f_k).astype(state.f_k.dtype),
        g_k=fnp.asarray(ls.g_k).astype(state.g_k.dtype),
        s_history=_push(state.s_history, s_k), y_history=_push(state.y_history, y_k),
        rho_history=_push(state.rho_history, (1.0 / ys).astype(y_k.dtype)),
        gamma=gamma.astype(state.g_k.dtype), status=fnp.where(converged, 0, status),
        ls_status=fnp.asarray(ls.status).astype(state.ls_status.dtype))


def minimize_lbfgs(fun: Callable[[Any], Any], x0: Any, maxiter: float | None = None,
                   norm: float = np.inf, maxcor: int = 10, ftol: float = 2.220446049250313e-09,
                   gtol: float = 1e-05, maxfun: float | None = None,
                   maxgrad: float | None = None, maxls: int = 20) -> LBFGSResults:
    """Minimise the real scalar ``fun(x)`` over the real or complex 1-D ``x`` from ``x0``
    by L-BFGS with a history of ``maxcor`` pairs.  It stops when the ``norm``-norm of the
    gradient is below ``gtol`` or a limit is met (``maxiter`` iterations, default
    ``200 * x0.size`` when no limit is given; ``maxfun``/``maxgrad`` evaluations; a
    decrease below ``ftol``; ``maxls`` line-search steps without a Wolfe point).

    >>> import functrans.numpy as fnp
    >>> r = minimize_lbfgs(lambda x: fnp.sum((x - 2.0) ** 2), fnp.zeros(3))
    >>> [round(float(v), 6) for v in r.x_k], bool(r.converged)
    ([2.0, 2.0, 2.0], True)
    """
    x0 = fnp.asarray(x0)
    d, dtype = x0.shape[0], x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    limits = tuple(np.inf if v is None else v for v in (maxiter, maxfun, maxgrad))
    f_0, g_0 = value_and_grad(fun)(x0)
    i64 = np.int64   # JAX's Python-int counters are int64 with x64 on (functrans always is)
    state = LBFGSResults(
        converged=fnp.asarray(False), failed=fnp.asarray(False), k=fnp.asarray(0, i64),
        nfev=fnp.asarray(1, i64), ngev=fnp.asarray(1, i64), x_k=x0, f_k=f_0, g_k=g_0,
        s_history=fnp.zeros((maxcor, d), dtype), y_history=fnp.zeros((maxcor, d), dtype),
        rho_history=fnp.zeros((maxcor,), dtype), gamma=fnp.asarray(1.0, g_0.dtype),
        status=fnp.asarray(0, i64), ls_status=fnp.asarray(0, i64))
    return lax.while_loop(
        lambda s: ~s.converged & ~s.failed,
        lambda s: _lbfgs_step(s, fun, limits, norm, ftol, gtol, maxls), state)
