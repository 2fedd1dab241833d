"""The plan cache's key: ``jaxpr_ir.structure.structural_key`` equals for two jaxprs
exactly when their printed texts are equal (and is stricter where the text leaves
something out), so the LLVM plan cache no longer prints a program to look it up."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from backends import llvm
from functrans import lax
from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, parse
from jaxpr_ir.structure import structural_key
from tests.cases import all_cases


def test_key_equals_exactly_when_the_printed_text_equals_over_the_op_table():
    by_key, by_text = {}, {}
    for case in all_cases():
        j = ft.make_jaxpr(case.fun)(*case.make_args(0)).jaxpr
        by_key.setdefault(structural_key(j), set()).add(str(j))
        by_text.setdefault(str(j), set()).add(structural_key(j))
    assert len(by_key) > 500
    assert all(len(texts) == 1 for texts in by_key.values())
    assert all(len(keys) == 1 for keys in by_text.values())


def _add(literal, t="f64"):
    return parse(f"{{ lambda ; x:{t}[]. let y:{t}[] = add x {literal} in (y,) }}")


@pytest.mark.parametrize("a, b, t", [
    ("0.0:f64[]", "-0.0:f64[]", "f64"),          # signed zeros: they print apart, too
    ("1.0:f64[]", "1.0:f64[]{weak}", "f64"),
    ("nan:f64[]", "inf:f64[]", "f64"),
    ("1:i32[]", "2:i32[]", "i32"),
])
def test_literals_that_differ_give_different_keys(a, b, t):
    assert structural_key(_add(a, t)) == structural_key(_add(a, t))
    assert structural_key(_add(a, t)) != structural_key(_add(b, t))


def _with_param(j, name=None, **params):
    """``j`` with ``params`` set on its (first) equation of primitive ``name``."""
    i = next(i for i, e in enumerate(j.eqns) if name in (None, e.primitive.name))
    e = j.eqns[i]
    eqns = list(j.eqns)
    eqns[i] = Eqn(e.primitive, e.inputs, e.outvars, {**e.params, **params})
    return Jaxpr(j.constvars, j.invars, eqns, j.outvars)


def test_params_of_different_types_or_values_give_different_keys():
    j = parse("{ lambda ; x:f32[4]. let y:f32[2] = slice[limit_indices=(2,) "
              "start_indices=(0,) strides=None] x in (y,) }")
    keys = [structural_key(_with_param(j, strides=s)) for s in (None, (1,), (1.0,), (True,))]
    assert len(set(keys)) == 4                     # 1, 1.0 and True are == in Python
    assert structural_key(_with_param(j, strides=(1,))) == keys[1]


def test_nested_closed_jaxpr_consts_are_part_of_the_key():
    branch = parse("{ lambda a:f64[3]; x:f64[3]. let y:f64[3] = mul x a in (y,) }")

    def program(c):
        j = ft.make_jaxpr(lambda p, x: lax.cond(p, lambda x: -x, lambda x: x, x))(
            True, np.ones(3)).jaxpr
        return _with_param(j, "cond", branches=(ClosedJaxpr(branch, [c]),) * 2)
    one, two = program(np.ones(3)), program(np.full(3, 2.0))
    assert str(one) == str(two)                    # the text leaves the consts out
    assert structural_key(one) != structural_key(two)
    assert structural_key(one) == structural_key(program(np.ones(3)))


def test_the_plan_cache_hits_for_the_same_program_traced_again():
    x = np.arange(5.0)
    hits, built = llvm.stats["plan hits"], llvm.stats["plans built"]
    np.testing.assert_array_equal(ft.jit(lambda x: lax.sin(x) * 2.5 + 0.0)(x), np.sin(x) * 2.5)
    np.testing.assert_array_equal(ft.jit(lambda x: lax.sin(x) * 2.5 + 0.0)(x), np.sin(x) * 2.5)
    out = ft.jit(lambda x: lax.sin(x) * 2.5 + -0.0)(x)      # another program: a new plan
    np.testing.assert_array_equal(out, np.sin(x) * 2.5)
    assert llvm.stats["plan hits"] - hits == 1
    assert llvm.stats["plans built"] - built <= 2


def test_a_deferred_custom_jvp_rule_is_keyed_without_being_traced():
    """A custom_jvp rule is traced only when differentiated (a DeferredJaxpr param): the
    key takes its label, the same before and after printing builds it, and never calls
    the rule (eager loops key their compiled bodies with it; it raised TypeError)."""
    calls = []

    @ft.custom_jvp
    def f(x):
        return fnp.sin(x) * x

    @f.defjvp
    def f_jvp(primals, tangents):
        calls.append(1)
        (x,), (dx,) = primals, tangents
        return f(x), dx * (fnp.cos(x) * x + fnp.sin(x))

    x = np.arange(3.0)
    j1, j2 = ft.make_jaxpr(f)(x).jaxpr, ft.make_jaxpr(f)(x).jaxpr
    k = structural_key(j1)
    assert not calls and k == structural_key(j2)
    str(j1)                                   # printing builds the rule
    assert calls and structural_key(j1) == k
