"""checkpoint under jit: the recomputation survives every compile pass, compiled
temporaries fall with it, policies save what JAX's save, and the residual report."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.tree_util import tree_leaves
from jaxpr_ir.passes import simplify

CP = ft.checkpoint_policies


def _mlp(depth, width, batch, seed=0):
    rng = np.random.default_rng(seed)
    params = [(rng.standard_normal((width, width)).astype(np.float32) / np.sqrt(width),
               np.zeros(width, np.float32)) for _ in range(depth)]
    return params, rng.standard_normal((batch, width)).astype(np.float32)


def _layer(h, p):
    return lax.tanh(fnp.matmul(h, p[0]) + p[1])


def _sin_layer(h, p):
    return lax.sin(fnp.matmul(h, p[0]) + p[1])


def _loss_fn(policy="plain", prevent_cse=True, base=_layer):
    layer = base if policy == "plain" else ft.checkpoint(base, policy=policy,
                                                         prevent_cse=prevent_cse)

    def loss(params, x):
        h = x
        for p in params:
            h = layer(h, p)
        return fnp.sum(h * h)
    return loss


def _counts(jaxpr, *names):
    prims = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    return tuple(prims.count(n) for n in names)


def test_recomputation_survives_every_compile_pass():
    params, x = _mlp(4, 8, 4)
    stages = {}
    traced = ft.make_jaxpr(ft.grad(_loss_fn(None)))(params, x)
    simplify(traced, lambda name, j: stages.__setitem__(name, _counts(j, "dot_general", "tanh")))
    plain = simplify(ft.make_jaxpr(ft.grad(_loss_fn()))(params, x))
    # 4 forward + 7 backward products without checkpoint; the recomputation adds 4
    # products and 4 tanh, and keeps them after inlining, folding, CSE, DCE
    assert _counts(plain, "dot_general", "tanh") == (11, 4)
    assert list(stages) == ["inline_calls", "fold_constants", "cse", "dce", "drop_barriers"]
    for name, counts in stages.items():
        assert counts == (15, 8), (name, counts)
    # prevent_cse=False lets CSE merge the recomputation with the forward pass
    merged = simplify(ft.make_jaxpr(ft.grad(_loss_fn(None, prevent_cse=False)))(params, x))
    assert _counts(merged, "dot_general")[0] < 15
    # the barrier never reaches a backend
    assert "optimization_barrier" not in str(simplify(traced))


def test_compiled_temporaries_fall_with_checkpoint_and_gradients_agree():
    # sin: without checkpoint each layer saves its input and cos(z) (too costly to
    # recompute), with it only its input. (A tanh layer's backward needs only its output,
    # 1 - t*t being recomputed from it: checkpointing has nothing to drop there, in XLA too.)
    params, x = _mlp(24, 16, 128)
    temps, grads = {}, {}
    for pol in ("plain", None, CP.everything_saveable):
        jf = ft.jit(ft.grad(_loss_fn(pol, base=_sin_layer)))
        temps[pol] = jf.lower(params, x).compile().cost_analysis()["temp_bytes"]
        grads[pol] = tree_leaves(jf(params, x))
    assert temps[None] <= 0.55 * temps["plain"], temps
    assert abs(temps[CP.everything_saveable] - temps["plain"]) <= 0.01 * temps["plain"], temps
    for pol in (None, CP.everything_saveable):
        for a, b in zip(grads[pol], grads["plain"]):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


def test_everything_saveable_saves_what_no_checkpoint_saves():
    params, x = _mlp(8, 16, 4)
    plain = ft.saved_residuals(_loss_fn(), params, x)
    every = ft.saved_residuals(_loss_fn(CP.everything_saveable), params, x)
    assert (every.count, every.bytes) == (plain.count, plain.bytes)
    assert ft.residuals(_loss_fn(CP.everything_saveable), params, x).bytes == \
        ft.residuals(_loss_fn(), params, x).bytes


# JAX 0.10.2, jax._src.ad_checkpoint.saved_residuals on the model below: the shapes of
# the saved values per policy (f32; x: [4,3], W1: [3,5], W2: [5,3], two layers)
JAX_SAVED = {
    "none": {"3,5": 2, "4,3": 6, "4,5": 4, "5,3": 2},
    "nothing": {"3,5": 2, "4,3": 2, "5,3": 2},
    "everything": {"3,5": 2, "4,3": 6, "4,5": 4, "5,3": 2},
    "dots": {"3,5": 2, "4,3": 4, "4,5": 2, "5,3": 2},
    "dots_nb": {"3,5": 2, "4,3": 4, "4,5": 2, "5,3": 2},
    "only_a": {"3,5": 2, "4,3": 2, "4,5": 2, "5,3": 2},
    "but_a": {"3,5": 2, "4,3": 4, "5,3": 2},
    "both": {"3,5": 2, "4,3": 4, "4,5": 2, "5,3": 2},
    "both_b": {"3,5": 2, "4,3": 4, "5,3": 2},
}


def _named_layer(x, W1, W2):
    h = ft.checkpoint_name(fnp.matmul(x, W1), "a")
    o = ft.checkpoint_name(fnp.matmul(lax.tanh(h), W2), "b")
    return fnp.sin(o) * x


@pytest.mark.parametrize("key,policy", [
    ("none", "plain"), ("nothing", CP.nothing_saveable), ("everything", CP.everything_saveable),
    ("dots", CP.dots_saveable), ("dots_nb", CP.dots_with_no_batch_dims_saveable),
    ("only_a", CP.save_only_these_names("a")), ("but_a", CP.save_any_names_but_these("a")),
    ("both", CP.save_from_both_policies(CP.save_only_these_names("a"),
                                        CP.dots_with_no_batch_dims_saveable)),
    ("both_b", CP.save_from_both_policies(CP.save_only_these_names("b"), CP.nothing_saveable)),
])
def test_policies_save_what_jax_saves(key, policy):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    ps = [(rng.standard_normal((3, 5)).astype(np.float32),
           rng.standard_normal((5, 3)).astype(np.float32)) for _ in range(2)]
    layer = _named_layer if policy == "plain" else ft.checkpoint(_named_layer, policy=policy)

    def loss(ps, x):
        h = x
        for W1, W2 in ps:
            h = layer(h, W1, W2)
        return fnp.sum(h)
    report = ft.saved_residuals(loss, ps, x)
    shapes: dict = {}
    for shape, dtype, nbytes, origin in report.entries:
        assert dtype == np.float32 and nbytes == 4 * int(np.prod(shape))
        # tanh's derivative 1 - y*y reads a broadcast constant 1: functrans keeps one
        # such constant per shape as an operand of the recomputation, JAX inlines it
        if origin.startswith("broadcast_in_dim"):
            continue
        k = ",".join(map(str, shape))
        shapes[k] = shapes.get(k, 0) + 1
    assert shapes == JAX_SAVED[key]
    want = ft.grad(lambda ps, x: fnp.sum(_named_layer(*(_named_layer(x, *ps[0]),) + ps[1])))(ps, x)
    for a, b in zip(tree_leaves(ft.jit(ft.grad(loss))(ps, x)), tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_saved_residuals_report_names_the_line():
    def f(x):
        y = fnp.sin(x)           # the saved cos(x) comes from sin's JVP rule, this line
        return fnp.sum(y * y)
    r = ft.saved_residuals(f, np.ones(3))
    text = str(r)
    assert r.count == len(r.entries) and r.bytes == sum(e[2] for e in r.entries)
    assert "test_remat_jit.py" in text and "total:" in text
    # a Python float argument (JAX's remat guide: print_saved_residuals(f, 3.)) is differentiated
    assert ft.saved_residuals(lambda x: fnp.sin(fnp.sin(x)), 3.0).count == 2
    assert ft.saved_residuals(lambda x, n: fnp.sin(x) * n, 3.0, 2).count == 2   # cos x, n


def test_checkpointed_scan_body_and_nested_checkpoints_under_jit():
    def body(c, w):
        return lax.tanh(c * w + 1.0), None

    def loss(ws, c0, ck):
        b = ft.checkpoint(body) if ck else body
        c, _ = lax.scan(b, c0, ws)
        return fnp.sum(c)
    ws, c0 = np.linspace(0.1, 1.0, 6).reshape(6, 1) * np.ones((6, 3)), np.ones(3)
    want = ft.grad(loss)(ws, c0, False)
    got = ft.jit(ft.grad(loss), static_argnums=2)(ws, c0, True)
    np.testing.assert_allclose(got, want, rtol=1e-12)

    inner = ft.checkpoint(lambda a: fnp.sin(a) * a)
    outer = ft.checkpoint(lambda a: inner(fnp.cos(a)) * a)
    g = ft.jit(ft.grad(lambda a: fnp.sum(outer(a))))(np.array([0.3, 0.7]))
    a = np.array([0.3, 0.7])
    c = np.cos(a)
    ref = (np.cos(c) * c + np.sin(c)) * (-np.sin(a)) * a + np.sin(c) * c
    np.testing.assert_allclose(g, ref, rtol=1e-12)
