"""Every primitive, from one table (tests/cases/*): value against numpy, jit against
eager, printed jaxpr -> parse -> print and re-run, JVP against central finite
differences, VJP by the inner-product identity, vmap against a Python loop, and
vmap(grad) against a loop of grads. A final test walks the primitive registry and
fails if some primitive is covered by no case or lacks a rule."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import jaxpr_ir
from backends import interpret
from functrans.tree_util import tree_flatten, tree_map
from tests.cases import all_cases

CASES = all_cases()
IDS = [c.name for c in CASES]


def _leaves(x):
    return [np.asarray(v) for v in tree_flatten(x)[0]]


def _assert_tree_close(got, want, rtol, atol, check_dtype=True, what=""):
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w), f"{what}: {len(g)} outputs vs {len(w)}"
    for a, b in zip(g, w):
        assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
        if check_dtype:
            assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs {b.dtype}"
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            r, t = rtol, atol
            if np.float32 in (a.dtype, b.dtype) or np.complex64 in (a.dtype, b.dtype):
                # batched and unbatched float32 kernels may round differently
                r, t = max(rtol, 1e-5), max(atol, 1e-6)
            np.testing.assert_allclose(a, b, rtol=r, atol=t, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


def _diff_argnums(case, args):
    if case.diff_argnums is not None:
        return list(case.diff_argnums)
    return [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_value_against_numpy(case):
    args = case.make_args()
    out = case.fun(*args)
    for leaf in tree_flatten(out)[0]:
        assert isinstance(leaf, ft.Array), f"eager result is {type(leaf).__name__}, not Array"
    if case.ref is not None:
        _assert_tree_close(out, case.ref(*args), case.rtol, case.atol, what=case.name)


@pytest.mark.parametrize("case", [c for c in CASES if c.jit], ids=[c.name for c in CASES if c.jit])
def test_jit_interpret_matches_eager(case):
    args = case.make_args()
    got = ft.jit(case.fun, backend="interpret")(*args)
    _assert_tree_close(got, case.fun(*args), 1e-12, 0, what=case.name)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_printed_jaxpr_round_trips_and_reruns(case):
    args = case.make_args()
    closed = ft.make_jaxpr(case.fun)(*args)
    text = str(closed)
    jaxpr_ir.check(closed)
    parsed = jaxpr_ir.parse(text)
    assert str(parsed) == text
    jaxpr_ir.check(parsed)
    flat_args = [np.asarray(a) for a in tree_flatten(args)[0]]
    outs = interpret.eval_jaxpr(parsed, closed.consts, flat_args)
    _assert_tree_close(outs, _leaves(case.fun(*args)), 1e-12, 0, what=case.name)


DIFF = [c for c in CASES if c.diff]


def _partial(case, args, argnums):
    def f(*xs):
        full = list(args)
        for i, x in zip(argnums, xs):
            full[i] = x
        return case.fun(*full)
    return f


def _float_out_leaves(x):
    return [np.asarray(v, dtype=np.float64) if np.asarray(v).dtype.kind == "f" else None
            for v in tree_flatten(x)[0]]


@pytest.mark.parametrize("case", DIFF, ids=[c.name for c in DIFF])
def test_jvp_against_finite_differences(case):
    args = case.make_args()
    nums = _diff_argnums(case, args)
    if not nums:
        pytest.fail("diff=True but no floating argument; set diff=False")
    rng = np.random.default_rng(1)
    primals = [np.asarray(args[i], np.float64) for i in nums]
    tangents = [rng.standard_normal(p.shape) for p in primals]
    f = _partial(case, args, nums)
    _, tout = ft.jvp(f, tuple(primals), tuple(tangents))
    eps = case.eps
    plus = f(*[p + eps * t for p, t in zip(primals, tangents)])
    minus = f(*[p - eps * t for p, t in zip(primals, tangents)])
    for got, a, b in zip(_float_out_leaves(tout), _float_out_leaves(plus), _float_out_leaves(minus)):
        if got is None or a is None:
            continue
        fd = (a - b) / (2 * eps)
        np.testing.assert_allclose(got, fd, rtol=case.fd_tol, atol=case.fd_tol, err_msg=case.name)


@pytest.mark.parametrize("case", DIFF, ids=[c.name for c in DIFF])
def test_vjp_inner_product_identity(case):
    args = case.make_args()
    nums = _diff_argnums(case, args)
    rng = np.random.default_rng(2)
    primals = [np.asarray(args[i], np.float64) for i in nums]
    tangents = [rng.standard_normal(p.shape) for p in primals]
    f = _partial(case, args, nums)
    out, tout = ft.jvp(f, tuple(primals), tuple(tangents))
    out2, vjp_fn = ft.vjp(f, *primals)
    _assert_tree_close(out2, out, 1e-12, 1e-12, what=case.name + " (vjp primal)")
    cts = tree_map(lambda o: rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype)
                   if np.asarray(o).dtype.kind == "f" else np.zeros_like(np.asarray(o)), out)
    cts_in = vjp_fn(cts)
    lhs = sum(float(np.vdot(np.asarray(c), np.asarray(t)))
              for c, t in zip(tree_flatten(cts)[0], tree_flatten(tout)[0])
              if np.asarray(t).dtype.kind == "f")
    rhs = sum(float(np.vdot(np.asarray(c), t)) for c, t in zip(cts_in, tangents))
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9), f"{case.name}: <ct, J t>={lhs} vs <J^T ct, t>={rhs}"


def _second_order_setup(case, seed):
    args = case.make_args()
    nums = _diff_argnums(case, args)
    rng = np.random.default_rng(seed)
    primals = [np.asarray(args[i], np.float64) for i in nums]
    t1 = [rng.standard_normal(p.shape) for p in primals]
    t2 = [rng.standard_normal(p.shape) for p in primals]
    return _partial(case, args, nums), primals, t1, t2, rng


def _central_difference(g, primals, t, eps):
    plus = _float_out_leaves(g(*[p + eps * d for p, d in zip(primals, t)]))
    minus = _float_out_leaves(g(*[p - eps * d for p, d in zip(primals, t)]))
    return [None if a is None else (a - b) / (2 * eps) for a, b in zip(plus, minus)]


# Known wrong second derivatives, found by these checks and reported (issue 13): each one
# must fail until it is fixed (strict), so a fix is noticed and the entry removed.
SECOND_ORDER_BUGS: dict[str, dict[str, str]] = {"jvp": {}, "vjp": {}}


def _second_order_params(mode):
    known = SECOND_ORDER_BUGS[mode]
    return [pytest.param(c, id=c.name, marks=pytest.mark.xfail(strict=True, reason=known[c.name]))
            if c.name in known else pytest.param(c, id=c.name) for c in DIFF]


@pytest.mark.parametrize("case", _second_order_params("jvp"))
def test_jvp_of_jvp_against_finite_differences(case):
    """Second order, forward: the JVP (direction t2) of the JVP (direction t1) against a
    central difference of the first JVP along t2."""
    f, primals, t1, t2, _ = _second_order_setup(case, 3)

    def first(*p):
        return ft.jvp(f, tuple(p), tuple(t1))[1]

    _, second = ft.jvp(first, tuple(primals), tuple(t2))
    fd = _central_difference(first, primals, t2, case.eps)
    for got, want in zip(_float_out_leaves(second), fd):
        if got is None or want is None:
            continue
        np.testing.assert_allclose(got, want, rtol=case.fd2_tol, atol=case.fd2_tol,
                                   err_msg=case.name)


@pytest.mark.parametrize("case", _second_order_params("vjp"))
def test_vjp_of_vjp_against_finite_differences(case):
    """Second order, reverse: with g(p) = the VJP of f at p for a fixed cotangent,
    <w, dg(p) t2> from the VJP of g must equal it from a central difference of g."""
    f, primals, _, t2, rng = _second_order_setup(case, 4)
    out = f(*primals)
    cts = tree_map(lambda o: rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype)
                   if np.asarray(o).dtype.kind == "f" else np.zeros_like(np.asarray(o)), out)

    def g(*p):
        return tuple(ft.vjp(f, *p)[1](cts))

    g_out, g_vjp = ft.vjp(g, *primals)
    w = [rng.standard_normal(np.shape(o)) for o in g_out]
    rhs = sum(float(np.vdot(np.asarray(c), t)) for c, t in zip(g_vjp(tuple(w)), t2))
    fd = _central_difference(g, primals, t2, case.eps)
    lhs = sum(float(np.vdot(wi, d)) for wi, d in zip(w, fd) if d is not None)
    tol = case.fd2_tol * max(1.0, abs(lhs))
    assert abs(lhs - rhs) <= tol, f"{case.name}: <w, dg t2>={lhs} (differences) vs {rhs} (vjp)"


BATCH = [c for c in CASES if c.batch]


def _batched_args(case, n=3):
    return [case.make_args(seed=k) for k in range(n)]


@pytest.mark.parametrize("case", BATCH, ids=[c.name for c in BATCH])
def test_vmap_against_loop(case):
    examples = _batched_args(case)
    nargs = len(examples[0])
    loop = [case.fun(*ex) for ex in examples]
    want = tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *loop)
    configs = [tuple(0 for _ in range(nargs))]
    configs += [tuple(0 if j == i else None for j in range(nargs)) for i in range(nargs)] if nargs > 1 else []
    for axes in configs:
        stacked = []
        for i in range(nargs):
            if axes[i] is None:
                stacked.append(examples[0][i])
            else:
                stacked.append(np.stack([np.asarray(ex[i]) for ex in examples]))
        if axes == configs[0]:
            expect = want
        else:
            ex_fixed = [[ex[i] if axes[i] is not None else examples[0][i] for i in range(nargs)]
                        for ex in examples]
            expect = tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]),
                              *[case.fun(*e) for e in ex_fixed])
        got = ft.vmap(case.fun, in_axes=axes)(*stacked)
        _assert_tree_close(got, expect, 1e-10, 1e-12, what=f"{case.name} in_axes={axes}")
    # the batch axis last, for every argument that has one
    moved = [np.moveaxis(np.stack([np.asarray(ex[i]) for ex in examples]), 0, -1)
             for i in range(nargs)]
    got = ft.vmap(case.fun, in_axes=-1)(*moved)
    _assert_tree_close(got, want, 1e-10, 1e-12, what=f"{case.name} in_axes=-1")


GRAD_BATCH = [c for c in CASES if c.batch and c.diff]


@pytest.mark.parametrize("case", GRAD_BATCH, ids=[c.name for c in GRAD_BATCH])
def test_vmap_of_grad_against_loop(case):
    examples = _batched_args(case)
    nums = _diff_argnums(case, examples[0])

    def scalar(*xs):
        return sum(ft.numpy.sum(leaf) for leaf in tree_flatten(case.fun(*xs))[0]
                   if leaf.dtype.kind == "f")

    g = ft.grad(scalar, argnums=tuple(nums))
    loop = [g(*ex) for ex in examples]
    want = tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *loop)
    stacked = [np.stack([np.asarray(ex[i]) for ex in examples]) for i in range(len(examples[0]))]
    got = ft.vmap(g)(*stacked)
    _assert_tree_close(got, want, 1e-9, 1e-10, what=case.name)


# --------------------------------------------------------------------------- coverage

def _prims_in(closed, acc):
    for e in closed.jaxpr.eqns if hasattr(closed, "jaxpr") else closed.eqns:
        acc.add(e.primitive.name)
        for k in e.primitive.subjaxpr_params:
            sub = e.params[k]
            for s in (sub if isinstance(sub, (tuple, list)) else (sub,)):
                _prims_in(s, acc)


def _covered_primitives():
    seen = set()
    for case in CASES:
        args = case.make_args()
        _prims_in(ft.make_jaxpr(case.fun)(*args), seen)
        if case.diff:
            nums = _diff_argnums(case, args)
            f = _partial(case, args, nums)
            primals = [np.asarray(args[i], np.float64) for i in nums]

            def jv(*p, f=f):
                return ft.jvp(f, tuple(p), tuple(p))

            def vj(*p, f=f):
                out, fn = ft.vjp(f, *p)
                return fn(out)
            _prims_in(ft.make_jaxpr(jv)(*primals), seen)
            _prims_in(ft.make_jaxpr(vj)(*primals), seen)
    return seen


# primitives whose tests live elsewhere (with the test module that covers them)
TESTED_ELSEWHERE = {
    "pjit": "tests/test_transforms.py",
    # a custom function's call from its own rule, inside that rule's jaxpr
    "custom_self_call": "tests/test_no_silent_errors_custom_rules.py",
    # a user's vmap rule: its values are the rule's, tested against loops there
    "custom_vmap_call": "tests/test_custom_vmap.py",
    # checkify's check: consumed by checkify, raises eagerly, refused when compiled
    "check": "tests/test_checkify.py",
    # host callbacks: a Python function's values, not an operation's
    **{n: "tests/test_callbacks.py" for n in ("pure_callback", "io_callback",
                                              "debug_callback")},
    # collectives never survive into a jaxpr (their named vmap resolves them)
    **{n: "tests/test_vmap.py" for n in ("psum", "pmax", "pmin", "all_gather", "axis_index")},
    **{n: "tests/test_distributed.py" for n in ("psum_scatter", "all_to_all", "ppermute",
                                                "shard_map", "mpi_allreduce",
                                                "mpi_collective", "mpi_alltoall",
                                                "mpi_allgather")},
}


def test_every_primitive_is_in_the_table_and_has_every_rule():
    covered = _covered_primitives()
    missing_case, missing_rule = [], []
    for name, p in sorted(jaxpr_ir.primitives.items()):
        if name.startswith("irt_") or getattr(p, "test_only", False):
            continue
        if name not in covered and name not in TESTED_ELSEWHERE:
            missing_case.append(name)
        for rule in ("abstract_eval", "impl", "batch"):
            if getattr(p, rule) is None:
                missing_rule.append(f"{name}.{rule}")
        if p.jvp is None and not p.not_differentiable:
            missing_rule.append(f"{name}.jvp")
    assert not missing_case, f"primitives covered by no OpCase: {missing_case}"
    assert not missing_rule, f"missing rules: {missing_rule}"
