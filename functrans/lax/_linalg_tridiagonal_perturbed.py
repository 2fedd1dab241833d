"""``tridiagonal_solve(..., perturb_singular=True)``'s solver, as JAX's CPU kernel
(jaxlib's ``SolveWithGaussianEliminationWithPivotingAndPerturbSingular``, after
LAPACK's ``?lagtf``/``?lagts``): elimination with row swaps chosen by scaled pivots
(``|u_kk| / (row 1-norm)`` against ``|sub| / (row 1-norm)``), then back substitution in
which a pivot of magnitude below 1 is perturbed (by ``eps max|U|``, doubled until the
row's quotient cannot overflow) or, when tiny, the row is scaled up instead. Singular
systems so get a finite solution (inverse iteration's use). Rows along axis 0: the
coefficients ``(m, ...)``, right-hand sides ``(m, ..., n)``.

>>> import numpy as np
>>> x = solve_perturbed(np.zeros(2), np.array([1.0, 0.0]), np.zeros(2), np.ones((2, 1)))
>>> bool(np.isfinite(np.asarray(x)).all())
True
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..primitives.control_flow import scan, while_loop
from ..typing import Array

__all__ = ["solve_perturbed"]


def _limits(dtype):
    """LAPACK xLAMCH's safe minimum and its reciprocal for the real type of ``dtype``."""
    fi = np.finfo(dtype)
    tiny, small = float(fi.tiny), 1.0 / float(fi.max)
    safemin = tiny if small < tiny else small * (1.0 + float(fi.eps))
    return safemin, 1.0 / safemin, float(fi.eps)


def _eliminate(dl, d, du, b):
    """The forward sweep: per row the pivot, its two superdiagonal entries, the reduced
    right-hand side, and ``max|U|``."""
    m = d.shape[0]
    zero = fnp.zeros_like(d[0])
    du_rows = fnp.concatenate([du[1:-1], zero[None]], axis=0)   # du[m-1] is outside A
    inner = fnp.arange(m - 1) < m - 2                           # rows k < m - 2

    def step(carry, row):
        u0, u1, x, scale1, big = carry
        sub, dn, dun, bn, early = row
        scale2 = fnp.abs(sub) + fnp.abs(dn) + fnp.abs(dun)
        piv1 = fnp.where(u0 == 0, 0, fnp.abs(u0) / fnp.where(scale1 == 0, 1, scale1))
        piv2 = fnp.abs(sub) / fnp.where(scale2 == 0, 1, scale2)
        keep = (sub == 0) | (piv2 <= piv1)
        f = fnp.where(keep, sub / fnp.where(u0 == 0, 1, u0), u0 / fnp.where(sub == 0, 1, sub))
        f = fnp.where(sub == 0, 0, f)
        k = keep[..., None]
        done = (fnp.where(keep, u0, sub), fnp.where(keep, u1, dn), fnp.where(keep, zero, dun),
                fnp.where(k, x, bn))
        nu0 = fnp.where(keep, dn - f * u1, u1 - f * dn)
        nu1 = fnp.where(keep, dun, -f * dun)
        nx = fnp.where(k, bn - f[..., None] * x, x - f[..., None] * bn)
        nscale = fnp.where(keep, scale2, fnp.abs(nu0) + fnp.abs(nu1))
        row_max = fnp.maximum(fnp.maximum(fnp.abs(done[0]), fnp.abs(done[1])), fnp.abs(done[2]))
        big = fnp.where(early, fnp.maximum(big, row_max), big)
        return (nu0, nu1, nx, nscale, big), done
    start = (d[0], du[0], b[0], fnp.abs(d[0]) + fnp.abs(du[0]),
             fnp.maximum(fnp.abs(d[0]), fnp.abs(du[0])))
    (u0, _, x, _, big), (p, q, r, y) = scan(
        step, start, (dl[1:], d[1:], du_rows, b[1:], inner))
    big = fnp.maximum(big, fnp.abs(u0))
    cat = lambda rows, last: fnp.concatenate([rows, last[None]], axis=0)   # noqa: E731
    return cat(p, u0), cat(q, zero), cat(r, zero), cat(y, x), big


def _perturb_pivot(perturb, p, rhs, safemin, bignum):
    """JAX's MaybePerturbPivot for a batch of pivots ``p`` and rows ``rhs`` (..., n):
    ``(p, rhs)`` with ``|p| >= 1`` untouched."""
    rdt = fnp.real(p).dtype
    sign = fnp.where(fnp.signbit(fnp.real(p)), -1.0, 1.0).astype(rdt)
    perturb = sign * fnp.maximum(fnp.abs(perturb), safemin).astype(rdt)
    max_factor = fnp.max(fnp.abs(rhs), axis=-1)
    ones = fnp.ones_like(max_factor)

    def active(state):
        p, _, _, stop = state
        return (fnp.abs(p) < 1) & ~stop

    def step(state):
        p, pert, scale, stop = state
        a = fnp.abs(p)
        run = active(state)
        tiny = a < safemin
        add = fnp.where(tiny, (a == 0) | (max_factor * safemin > a), max_factor > a * bignum)
        grow = run & tiny & ~add
        p = fnp.where(run & add, p + pert, fnp.where(grow, p * bignum, p))
        pert = fnp.where(run & add, pert * 2, pert)
        scale = fnp.where(grow, bignum, scale)
        return p, pert, scale, stop | (run & ~add)
    p, _, scale, _ = while_loop(lambda s: fnp.any(active(s)), step,
                                (p, perturb, ones, fnp.zeros(p.shape, bool)))
    return p, rhs * scale.astype(rhs.dtype)[..., None]


def solve_perturbed(dl: Array, d: Array, du: Array, b: Array) -> Array:
    """``A⁻¹ b`` for the tridiagonal ``A`` (rows along axis 0), small pivots perturbed
    as JAX's CPU kernel does (see the module docstring)."""
    dl, d, du, b = (fnp.asarray(x) for x in (dl, d, du, b))
    safemin, bignum, eps = _limits(fnp.real(d).dtype)
    if d.shape[0] == 1:
        p, rhs = _perturb_pivot(eps * fnp.abs(d[0]), d[0], b[0], safemin, bignum)
        return (rhs / p[..., None])[None]         # a division here, as JAX's kernel
    u0, u1, u2, y, big = _eliminate(dl, d, du, b)
    perturb = eps * big

    def substitute(carry, row):
        x1, x2 = carry
        p, q, r, yi = row
        p, rhs = _perturb_pivot(perturb, p, yi - q[..., None] * x1 - r[..., None] * x2,
                                safemin, bignum)
        x = rhs * (1 / p)[..., None]
        return (x, x1), x
    zx = fnp.zeros_like(b[0])
    _, x = scan(substitute, (zx, zx), (u0, u1, u2, y), reverse=True)
    return x
