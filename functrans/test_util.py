"""``ft.test_util.check_grads``: derivative checks against finite differences, as
``jax.test_util.check_grads``.

Forward mode compares ``jvp``'s tangent with a central difference along a random
direction; reverse mode checks the inner-product identity
``<t, conj(vjp(conj(ct)))> = <J t, ct>`` (``<a, b> = Re sum(conj(a) b)``), JAX's
convention: ``vjp`` is the plain transpose of the linear map, not its adjoint, so for
complex functions the cotangent is conjugated on the way in and out. ``order=2`` repeats the checks on the
``jvp`` and ``vjp`` functions themselves (their derivatives), and so on.

>>> import functrans.numpy as fnp
>>> check_grads(lambda x: fnp.sin(x) * x, (fnp.asarray([0.5, 1.0]),), order=2)
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import dtype_kind

from .autodiff import jvp, vjp
from .tree_util import tree_flatten, tree_leaves, tree_map

__all__ = ["check_grads", "check_jvp", "check_vjp"]

_EPS = {np.dtype(np.float64): 1e-4, np.dtype(np.float32): 1e-2,
        np.dtype(np.complex128): 1e-4, np.dtype(np.complex64): 1e-2}
_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 2e-2,
        np.dtype(np.complex128): 1e-5, np.dtype(np.complex64): 2e-2}


def _dtype_of(tree):
    dts = [np.asarray(x).dtype for x in tree_leaves(tree)]
    for dt in dts:
        if dtype_kind(dt) not in "fc":
            raise TypeError(f"check_grads: every input must be floating or complex, got {dt}")
    return min(dts, key=lambda d: d.itemsize) if dts else np.dtype(np.float64)


def _random_like(rng, tree):
    def draw(x):
        x = np.asarray(x)
        r = rng.normal(size=x.shape)
        if dtype_kind(x.dtype) == "c":
            r = r + 1j * rng.normal(size=x.shape)
        return r.astype(x.dtype)
    return tree_map(draw, tree)


def _axpy(a, x, y):
    return tree_map(lambda xi, yi: np.asarray(yi) + a * np.asarray(xi), x, y)


def _numerical_jvp(f, primals, tangents, eps):
    plus = f(*_axpy(eps, tangents, primals))
    minus = f(*_axpy(-eps, tangents, primals))
    return tree_map(lambda p, m: (np.asarray(p) - np.asarray(m)) / (2 * eps), plus, minus)


def _inner(x, y):
    return sum(np.real(np.vdot(np.asarray(a).ravel(), np.asarray(b).ravel()))
               for a, b in zip(tree_leaves(x), tree_leaves(y)))


def _conj(tree):
    return tree_map(lambda x: np.conj(np.asarray(x)), tree)


def _assert_close(what, got, want, atol, rtol, against="finite differences"):
    got_l, got_t = tree_flatten(got)
    want_l, want_t = tree_flatten(want)
    if got_t != want_t:
        raise AssertionError(f"{what}: structures differ: {got_t} vs {want_t}")
    for g, w in zip(got_l, want_l):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or not np.allclose(g, w, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(g - w)) if g.shape == w.shape else "shape mismatch"
            raise AssertionError(f"{what} does not match {against} (max abs error "
                                 f"{err}; atol={atol}, rtol={rtol}):\n{g}\nvs\n{w}")


def _tols(args, atol, rtol, eps):
    dt = _dtype_of(args)
    return (_TOL.get(dt, 1e-5) if atol is None else atol, _TOL.get(dt, 1e-5) if rtol is None
            else rtol, _EPS.get(dt, 1e-4) if eps is None else eps)


def check_jvp(f: Callable[..., Any], f_jvp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None, eps: float | None = None,
              err_msg: str = "", *, _rng: np.random.Generator | None = None) -> None:
    """Check ``f_jvp`` (``partial(jvp, f)``: ``(primals, tangents) -> (out, tangent_out)``)
    along a random tangent: its output against ``f``, its tangent against a central
    difference (``jax.test_util.check_jvp``'s signature).

    >>> import functools, functrans as ft, functrans.numpy as fnp
    >>> check_jvp(fnp.exp, functools.partial(ft.jvp, fnp.exp), (fnp.asarray([0.1, 0.2]),))
    """
    rng = _rng if _rng is not None else np.random.default_rng(0)
    args = tuple(args)
    atol, rtol, eps = _tols(args, atol, rtol, eps)
    tangents = _random_like(rng, args)
    out, t_out = f_jvp(args, tangents)
    _assert_close(f"{err_msg} jvp primal".strip(), out, f(*args), atol, rtol, "f's output")
    _assert_close(f"{err_msg} jvp".strip(), t_out, _numerical_jvp(f, args, tangents, eps),
                  atol, rtol)


def check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None, eps: float | None = None,
              err_msg: str = "", *, _rng: np.random.Generator | None = None) -> None:
    """Check ``f_vjp`` (``partial(vjp, f)``: ``*args -> (out, vjp_fn)``): its output against
    ``f``, and the identity ``<t, conj(vjp(conj(ct)))> = <J t, ct>`` with ``J t`` a central
    difference (``jax.test_util.check_vjp``'s signature and convention: ``vjp`` transposes
    the linear map; for complex ``f`` it does not conjugate).

    >>> import functools, functrans as ft, functrans.numpy as fnp
    >>> mul = lambda x, y: x * y
    >>> check_vjp(mul, functools.partial(ft.vjp, mul),
    ...           (fnp.asarray([1.0, 2.0]), fnp.asarray([3.0, 4.0])))
    """
    rng = _rng if _rng is not None else np.random.default_rng(1)
    args = tuple(args)
    atol, rtol, eps = _tols(args, atol, rtol, eps)
    out, vjp_fn = f_vjp(*args)
    _assert_close(f"{err_msg} vjp primal".strip(), out, f(*args), atol, rtol, "f's output")
    ct = _random_like(rng, out)
    ct_args = _conj(vjp_fn(_conj(ct)))
    tangents = _random_like(rng, args)
    lhs = _inner(tangents, ct_args)
    rhs = _inner(_numerical_jvp(f, args, tangents, eps), ct)
    _assert_close(f"{err_msg} vjp (inner product <t, conj(vjp(conj(ct)))>)".strip(),
                  np.asarray(lhs), np.asarray(rhs), atol, rtol)


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Check ``f``'s derivatives at ``args`` up to ``order`` in the given ``modes``
    ('fwd', 'rev'); raises ``AssertionError`` naming the failing check.

    >>> import functrans.numpy as fnp
    >>> check_grads(fnp.tanh, (fnp.asarray(0.3),), order=3, modes=["rev"])
    """
    args = tuple(args)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {m!r}; use 'fwd' and/or 'rev'")
    rng = np.random.default_rng(0)

    def check(fun, fargs, level):
        if "fwd" in modes:
            check_jvp(fun, partial(jvp, fun), fargs, atol, rtol, eps, _rng=rng)
            if level > 1:
                tangents = _random_like(rng, fargs)
                check(lambda *p: jvp(fun, p, tangents)[1], fargs, level - 1)
        if "rev" in modes:
            check_vjp(fun, partial(vjp, fun), fargs, atol, rtol, eps, _rng=rng)
            if level > 1:
                ct = _random_like(rng, fun(*fargs))
                check(lambda *p: vjp(fun, *p)[1](ct), fargs, level - 1)
    if order < 1:
        raise ValueError(f"check_grads: order must be >= 1, got {order}")
    check(f, args, order)
    return None


