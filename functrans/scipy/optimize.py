"""``functrans.scipy.optimize``: ``minimize`` with the BFGS method (and JAX's
``"l-bfgs-experimental-do-not-rely-on-this"`` L-BFGS, which also takes complex ``x``), as
``jax.scipy.optimize`` (the same iterates: Nocedal and Wright's algorithm 6.1 with
the strong-Wolfe line search of ``jax.scipy.optimize``).  The whole solve is one
``lax.while_loop``, so it compiles under ``jit``; gradients of ``fun`` come from
``value_and_grad``.  As in JAX, ``minimize`` itself is not differentiated (the loop
is forward-mode only) and ``x0`` is a 1-D array.  The line search is JAX's to the
letter, including where it gives up sooner than scipy's: on Rosenbrock's function
from (-1.2, 1) both stop with status 3 (the zoom failed) short of the minimum.

>>> import functrans.numpy as fnp
>>> from functrans.scipy.optimize import minimize
>>> r = minimize(lambda x: fnp.sum((x - 3.0) ** 2), fnp.zeros(2), method="BFGS")
>>> [round(float(v), 6) for v in r.x], bool(r.success)
([3.0, 3.0], True)
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .. import lax
from .. import numpy as fnp
from ..autodiff import value_and_grad
from ..typing import ArrayLike
from ._lbfgs import minimize_lbfgs
from ._line_search import line_search

__all__ = ["minimize", "OptimizeResults"]

_BFGS_OPTIONS = ("maxiter", "norm", "gtol", "line_search_maxiter")
_LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
_LBFGS_OPTIONS = ("maxiter", "norm", "maxcor", "ftol", "gtol", "maxfun", "maxgrad", "maxls")


class OptimizeResults(NamedTuple):
    """What :func:`minimize` returns (the fields of ``jax.scipy.optimize``'s):
    ``x`` the solution, ``success``, ``status`` (0 converged, 1 maxiter reached,
    2 + the line search's status when it failed, -1 otherwise), ``fun`` and ``jac``
    (value and gradient at ``x``), ``hess_inv`` (the BFGS inverse-Hessian estimate),
    ``nfev``, ``njev`` (evaluations of ``fun`` and its gradient) and ``nit``.

    >>> OptimizeResults._fields
    ('x', 'success', 'status', 'fun', 'jac', 'hess_inv', 'nfev', 'njev', 'nit')
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


class _BFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    line_search_status: Any


def _bfgs_step(state, fun, norm, gtol, line_search_maxiter):
    """One BFGS iteration: the line search along -H g, then the inverse-Hessian
    update H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T (kept when rho = 1/(y.s)
    is not finite)."""
    p_k = -fnp.dot(state.H_k, state.g_k)
    ls = line_search(fun, state.x_k, p_k, old_fval=state.f_k,
                     old_old_fval=state.old_old_fval, gfk=state.g_k,
                     maxiter=line_search_maxiter)
    s_k = ls.a_k * p_k
    y_k = ls.g_k - state.g_k
    rho_k = 1.0 / fnp.dot(y_k, s_k)
    w = fnp.eye(s_k.shape[0], dtype=s_k.dtype) - rho_k * s_k[:, None] * y_k[None, :]
    H_kp1 = w @ state.H_k @ w.T + rho_k * s_k[:, None] * s_k[None, :]
    H_kp1 = fnp.where(fnp.isfinite(rho_k), H_kp1, state.H_k)
    return _BFGSState(
        converged=fnp.linalg.norm(ls.g_k, ord=norm) < gtol, failed=ls.failed,
        k=state.k + 1, nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev,
        x_k=state.x_k + s_k, f_k=ls.f_k.astype(state.f_k.dtype), g_k=ls.g_k, H_k=H_kp1,
        old_old_fval=state.f_k, line_search_status=ls.status)


def _minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    f_0, g_0 = value_and_grad(fun)(x0)
    int_t = np.int64   # JAX with x64 on (functrans always is): its Python-int counters are int64
    state = _BFGSState(
        converged=fnp.linalg.norm(g_0, ord=norm) < gtol, failed=fnp.asarray(False),
        k=fnp.asarray(0, int_t), nfev=fnp.asarray(1, int_t), ngev=fnp.asarray(1, int_t),
        x_k=x0, f_k=f_0, g_k=g_0, H_k=fnp.eye(x0.shape[0], dtype=x0.dtype),
        old_old_fval=f_0 + fnp.linalg.norm(g_0) / 2,
        line_search_status=fnp.asarray(0, int_t))
    state = lax.while_loop(
        lambda s: ~s.converged & ~s.failed & (s.k < maxiter),
        lambda s: _bfgs_step(s, fun, norm, gtol, line_search_maxiter), state)
    status = fnp.where(state.converged, 0,
                       fnp.where(state.k == maxiter, 1,
                                 fnp.where(state.failed, 2 + state.line_search_status, -1)))
    return OptimizeResults(x=state.x_k, success=state.converged & ~state.failed,
                           status=status.astype(int_t), fun=state.f_k, jac=state.g_k,
                           hess_inv=state.H_k, nfev=state.nfev, njev=state.ngev, nit=state.k)


def _check_x0(x0, complex_ok=False):
    x0 = fnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be a 1-D array, got shape {tuple(x0.shape)}")
    if np.issubdtype(x0.dtype, np.complexfloating) and not complex_ok:
        raise TypeError(f"minimize: x0 must be real for BFGS (complex x0 needs the "
                        f"L-BFGS method), got dtype {x0.dtype}")
    if not np.issubdtype(x0.dtype, np.inexact):
        x0 = x0.astype(np.float64)
    return x0


def minimize(fun: Callable[..., Any], x0: ArrayLike, args: tuple = (), *,
             method: str = "BFGS", tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimise the scalar ``fun(x, *args)`` over the 1-D array ``x`` from ``x0``.

    ``method`` is ``"BFGS"`` (case-insensitive); ``options`` may hold ``maxiter``
    (default ``200 * x0.size``), ``norm`` (the order of the gradient norm tested,
    default inf), ``gtol`` (stop when that norm is below it, default 1e-5) and
    ``line_search_maxiter`` (default 10).  ``"l-bfgs-experimental-do-not-rely-on-this"``
    runs L-BFGS (real or complex ``x0``; options ``maxiter``, ``norm``, ``maxcor``,
    ``ftol``, ``gtol``, ``maxfun``, ``maxgrad``, ``maxls``: see
    :func:`functrans.scipy._lbfgs.minimize_lbfgs`; ``hess_inv`` is None).  As in ``jax.scipy.optimize.minimize``,
    ``tol`` is accepted and unused: set ``options={"gtol": ...}``.  Integer ``x0``
    is taken as float64.

    >>> import functrans.numpy as fnp
    >>> rosen = lambda x: fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> r = minimize(rosen, fnp.array([2.0, 2.0]), method="BFGS")
    >>> [round(float(v), 4) for v in r.x], int(r.status), int(r.nit)
    ([1.0, 1.0], 0, 24)
    """
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: the args argument must be a tuple, got "
                        f"{type(args).__name__}")
    if not callable(fun):
        raise TypeError(f"minimize: fun must be callable, got {type(fun).__name__}")
    if not isinstance(method, str):
        raise TypeError(f"minimize: method must be a string, got {method!r}")
    options = dict(options or {})
    kind = method.lower()
    if kind not in ("bfgs", _LBFGS):
        raise ValueError(f"minimize: method {method!r} not recognized (only 'BFGS' and "
                         f"{_LBFGS!r})")
    known = _BFGS_OPTIONS if kind == "bfgs" else _LBFGS_OPTIONS
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"minimize: unknown option(s) {unknown} for method {method!r}; "
                        f"it takes {list(known)}")
    x0 = _check_x0(x0, complex_ok=kind == _LBFGS)
    if kind == "bfgs":
        return _minimize_bfgs(lambda x: fun(x, *args), x0, **options)
    r = minimize_lbfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                           fun=r.f_k, jac=r.g_k, hess_inv=None, nfev=r.nfev, njev=r.ngev,
                           nit=r.k)
