"""The IR transforms on every case of the shared table: ``jvp_jaxpr``, ``partial_eval``
(both halves), ``transpose_jaxpr`` of the linear part and ``vmap_jaxpr`` produce jaxprs
that ``jaxpr_ir.check`` accepts and that print -> parse -> print identically; the parsed
jaxprs are what is evaluated, and they agree with the direct transforms."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import jaxpr_ir
from backends import interpret
from functrans.transforms import jvp_jaxpr, partial_eval, transpose_jaxpr, vmap_jaxpr
from functrans.tree_util import tree_flatten
from tests.cases import all_cases

TABLE = all_cases()


def _round_trip(closed, what):
    """check_jaxpr after the transform; print -> parse -> print is the identity."""
    jaxpr_ir.check(closed)
    text = str(closed)
    parsed = jaxpr_ir.parse(text)
    assert str(parsed) == text, f"{what}: printed jaxpr does not round-trip"
    jaxpr_ir.check(parsed)
    if not hasattr(parsed, "consts"):
        parsed = jaxpr_ir.ClosedJaxpr(parsed, closed.consts)
    return parsed        # the parsed jaxpr is what is evaluated: the IR stays honest


def _ev(closed, args):
    return interpret.eval_jaxpr(closed.jaxpr, closed.consts, list(args))


def _tol(*arrays):
    low = any(np.asarray(a).dtype in (np.float32, np.complex64) for a in arrays)
    return (2e-4, 2e-4) if low else (1e-8, 1e-9)


def _close(got, want, what):
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{what}: shape {g.shape} vs {w.shape}"
    r, a = _tol(g, w)
    np.testing.assert_allclose(g, w, rtol=r, atol=a, err_msg=what)


@pytest.mark.parametrize("case", TABLE, ids=[c.name for c in TABLE])
def test_ir_transforms_check_round_trip_and_match(case):
    args = case.make_args()
    flat = [np.asarray(a) for a in tree_flatten(args)[0]]
    closed = ft.make_jaxpr(case.fun)(*args)
    n, no = len(closed.jaxpr.invars), len(closed.out_avals)
    if case.diff:
        _check_derivative_transforms(*_differentiated(case, args))
    if case.batch:
        bj, _ = vmap_jaxpr(closed, [0] * n, 3, out_dims_to=[0] * no)
        bj = _round_trip(bj, "vmap_jaxpr")
        exs = [[np.asarray(a) for a in tree_flatten(case.make_args(seed=k))[0]] for k in range(3)]
        got = _ev(bj, [np.stack([e[i] for e in exs]) for i in range(len(flat))])
        for k in range(3):
            for m, (g, w) in enumerate(zip(got, _ev(closed, exs[k]))):
                _close(np.asarray(g)[k], w, f"{case.name}: vmap_jaxpr output {m} example {k}")


def _differentiated(case, args):
    """``case`` as a function of the arguments it differentiates (``diff_argnums``; the
    others closed over as constants: linear_call refuses derivatives in its residuals)."""
    if case.diff_argnums is None:
        return case, case.fun, tuple(args)
    keep = tuple(case.diff_argnums)

    def fun(*xs):
        full = list(args)
        for i, x in zip(keep, xs):
            full[i] = x
        return case.fun(*full)
    return case, fun, tuple(args[i] for i in keep)


def _check_derivative_transforms(case, fun, args):
    flat = [np.asarray(a) for a in tree_flatten(args)[0]]
    closed = ft.make_jaxpr(fun)(*args)
    n, no = len(closed.jaxpr.invars), len(closed.out_avals)
    rng = np.random.default_rng(1)
    tans = [rng.standard_normal(a.shape).astype(a.dtype) if a.dtype.kind == "f"
            else np.zeros(a.shape, a.dtype) for a in flat]
    j = _round_trip(jvp_jaxpr(closed), "jvp_jaxpr")
    full = _ev(j, flat + tans)
    # the direct transform
    fl = [i for i, a in enumerate(flat) if a.dtype.kind == "f"]

    def part(*xs):
        a = list(flat)
        for i, x in zip(fl, xs):
            a[i] = x
        return tree_flatten(fun(*tree_map_unflat(args, a)))[0]
    _, direct = ft.jvp(part, tuple(flat[i] for i in fl), tuple(tans[i] for i in fl))
    for k, (g, w) in enumerate(zip(full[no:], direct)):
        if np.asarray(w).dtype.kind in "fc":
            _close(g, w, f"{case.name}: jvp_jaxpr tangent {k}")
    # partial eval with primals known, tangents unknown; then transpose the linear part
    kj, uj, out_known = partial_eval(j, [True] * n + [False] * n)
    _round_trip(kj, "partial_eval known")
    _round_trip(uj, "partial_eval unknown")
    kout = _ev(kj, flat)
    nk = sum(out_known)
    res = kout[nk:]
    uout = _ev(uj, list(res) + tans)
    ki, ui = iter(kout[:nk]), iter(uout)
    for k, (g, w) in enumerate(zip([next(ki) if kn else next(ui) for kn in out_known], full)):
        _close(g, w, f"{case.name}: partial_eval output {k}")
    tj = _round_trip(transpose_jaxpr(uj, [False] * len(res) + [True] * n), "transpose_jaxpr")
    cts = [rng.standard_normal(a.shape).astype(a.dtype) for a in uj.out_avals]
    cts_in = _ev(tj, list(res) + cts)
    lhs = sum(np.vdot(c, u).real for c, u in zip(cts, uout))
    rhs = sum(np.vdot(c, t).real for c, t in zip(cts_in, tans) if t.dtype.kind in "fc")
    r, a = _tol(*cts, *tans)
    assert np.isclose(lhs, rhs, rtol=r * 10, atol=a * 10), f"{case.name}: <ct, Jt>={lhs} vs {rhs}"


def tree_map_unflat(args, leaves):
    from functrans.tree_util import tree_unflatten
    return tree_unflatten(tree_flatten(args)[1], leaves)


@pytest.mark.parametrize("case", [c for c in TABLE if c.diff], ids=[c.name for c in TABLE if c.diff])
def test_linearize_records_only_equations_that_read_a_tangent(case):
    """``LinearJaxpr.all_linear`` (the backward pass then evaluates nothing forward):
    every equation linearize records reads a tangent input or a value computed from one."""
    from functrans.transforms.partial_eval import linearize_fun
    _, dfun, args = _differentiated(case, case.make_args())
    flat, tree = tree_flatten(args)
    flat = [np.asarray(a) for a in flat]
    mask = [a.dtype.kind in "fc" for a in flat]
    fun = lambda *xs: tree_flatten(dfun(*_unflatten(tree, xs)))[0]  # noqa: E731
    _, lin = linearize_fun(fun, flat, mask)
    linear = set(lin.jaxpr.invars)
    for e in lin.jaxpr.eqns:
        assert any(a in linear for a in e.inputs), f"{case.name}: {e} reads no tangent"
        linear.update(e.outvars)


def _unflatten(tree, xs):
    from functrans.tree_util import tree_unflatten
    return tree_unflatten(tree, list(xs))


def test_cse_compares_sub_jaxprs_by_structure():
    # two traces of the same branches make distinct Var objects: CSE merges the conds
    # (their branches are the same program up to names) but not a cond whose branch differs
    from jaxpr_ir.passes import cse

    def f(p, x):
        a = ft.lax.cond(p, lambda v: v * 2.0, lambda v: v + 1.0, x)
        b = ft.lax.cond(p, lambda v: v * 2.0, lambda v: v + 1.0, x)
        c = ft.lax.cond(p, lambda v: v * 3.0, lambda v: v + 1.0, x)
        return a + b + c

    closed = ft.make_jaxpr(f)(True, 1.0)
    conds = [e for e in closed.jaxpr.eqns if e.primitive.name == "cond"]
    assert len(conds) == 3
    merged = cse(closed)
    assert sum(e.primitive.name == "cond" for e in merged.jaxpr.eqns) == 2
    for p in (True, False):
        x = np.float64(1.5)
        want = interpret.eval_jaxpr(closed.jaxpr, closed.consts, [np.bool_(p), x])
        got = interpret.eval_jaxpr(merged.jaxpr, merged.consts, [np.bool_(p), x])
        assert np.allclose(want, got)
