"""Forward and reverse mode beyond the primitive table: nesting without perturbation
confusion, closed forms of higher derivatives, Jacobians and Hessians, Python control
flow under differentiation, residuals after DCE, the pjit JVP split, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import jaxpr_ir
from functrans.jacobians import jacobian_mode
from functrans.tree_util import tree_leaves, tree_map


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# --------------------------------------------------------------------------- nesting

def test_perturbation_confusion_classic():
    assert float(ft.grad(lambda x: ft.grad(lambda y: x * y)(1.0))(2.0)) == 1.0


def test_perturbation_confusion_family():
    # d/dx [d/dy (x*y*y) at y=x] = d/dx 2x^2 = 4x
    assert float(ft.grad(lambda x: ft.grad(lambda y: x * y * y)(x))(2.0)) == 8.0
    # forward mode inside forward mode
    _, t = ft.jvp(lambda x: ft.jvp(lambda y: x * y, (1.0,), (1.0,))[1], (2.0,), (1.0,))
    assert float(t) == 1.0
    # reverse inside forward and forward inside reverse
    _, t = ft.jvp(lambda x: ft.grad(lambda y: x * y)(1.0), (2.0,), (1.0,))
    assert float(t) == 1.0
    assert float(ft.grad(lambda x: ft.jvp(lambda y: x * y, (1.0,), (1.0,))[1])(2.0)) == 1.0
    # a vjp_fn closing over the outer variable
    def outer(x):
        _, f_vjp = ft.vjp(lambda y: x * fnp.sin(y), 0.5)
        return f_vjp(1.0)[0]
    close(ft.grad(outer)(2.0), np.cos(0.5))


def test_third_derivative_of_sin():
    close(ft.grad(ft.grad(ft.grad(fnp.sin)))(0.7), -np.cos(0.7))
    close(ft.grad(ft.grad(ft.grad(ft.grad(fnp.sin))))(0.7), np.sin(0.7))


def test_compositions_agree():
    f = lambda x: fnp.sin(x) * x  # noqa: E731
    d1 = lambda x: np.cos(x) * x + np.sin(x)  # noqa: E731
    d2 = lambda x: -np.sin(x) * x + 2 * np.cos(x)  # noqa: E731
    x = 0.9
    close(ft.jvp(ft.grad(f), (x,), (1.0,))[1], d2(x))
    close(ft.grad(lambda x: ft.jvp(f, (x,), (1.0,))[1])(x), d2(x))
    xs = np.linspace(-1, 1, 5)
    close(ft.vmap(ft.grad(f))(xs), d1(xs))
    close(ft.grad(lambda v: fnp.sum(ft.vmap(f)(v)))(xs), d1(xs))
    close(ft.grad(ft.jit(f))(x), d1(x))
    close(ft.jit(ft.grad(f))(x), d1(x))
    close(ft.grad(ft.grad(ft.jit(f)))(x), d2(x))
    close(ft.jit(ft.grad(ft.grad(f)))(x), d2(x))
    close(ft.vmap(ft.grad(ft.grad(f)))(xs), d2(xs))


def test_grad_argnums_pytrees_and_aux():
    def f(p, x, scale):
        return scale * fnp.sum(p["w"] * x) + p["b"][0] ** 2, {"aux": x}
    p = {"w": np.arange(3.0), "b": [np.float64(2.0)]}
    x = np.ones(3)
    (g_p, g_x), aux = ft.grad(f, argnums=(0, 1), has_aux=True)(p, x, 3.0)
    close(g_p["w"], 3.0 * x)
    close(g_p["b"][0], 4.0)
    close(g_x, 3.0 * p["w"])
    close(aux["aux"], x)
    (v, aux2), g = ft.value_and_grad(f, argnums=2, has_aux=True)(p, x, 3.0)
    close(g, np.sum(p["w"] * x))
    close(v, 3.0 * 3.0 + 4.0)


# --------------------------------------------------------------------------- closed forms

def test_hessian_of_quadratic_form():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    H = ft.hessian(lambda x: fnp.dot(x, fnp.dot(A, x)))(rng.standard_normal(5))
    close(H, A + A.T)


def test_jacobian_of_linear_map_is_the_matrix():
    rng = np.random.default_rng(1)
    for shape in [(3, 5), (5, 3), (4, 4)]:
        M = rng.standard_normal(shape)
        x = rng.standard_normal(shape[1])
        for jac in (ft.jacfwd, ft.jacrev, ft.jacobian):
            close(jac(lambda v: fnp.dot(M, v))(x), M)


def test_jacobians_agree_on_pytrees():
    def f(p, x):
        return {"a": fnp.sin(p["w"]) * x, "b": fnp.sum(p["w"] * p["w"]) * x[0]}
    p = {"w": np.array([0.1, 0.2, 0.3])}
    x = np.array([1.0, 2.0, 3.0])
    jf = ft.jacfwd(f, argnums=(0, 1))(p, x)
    jr = ft.jacrev(f, argnums=(0, 1))(p, x)
    for a, b in zip(tree_leaves(jf), tree_leaves(jr)):
        close(a, b)
    assert np.shape(jf["a"][0]["w"]) == (3, 3)
    assert np.shape(jf["b"][1]) == (3,)
    close(jf["a"][0]["w"], np.diag(np.cos(p["w"]) * x))


def test_jacobian_matrix_input_and_output_shapes():
    x = np.arange(6.0).reshape(2, 3)
    J = ft.jacrev(lambda m: fnp.sin(m))(x)
    assert J.shape == (2, 3, 2, 3)
    close(J.reshape(6, 6), np.diag(np.cos(x).ravel()))
    close(ft.jacfwd(lambda m: fnp.sin(m))(x), J)


def test_jacobian_picks_mode_by_size():
    wide = lambda x: fnp.sum(x * x)               # noqa: E731  6 inputs -> 1 output
    tall = lambda x: fnp.outer(x, x)              # noqa: E731  2 inputs -> 4 outputs
    assert jacobian_mode(wide, 0, False, np.ones(6)) == "rev"
    assert jacobian_mode(tall, 0, False, np.ones(2)) == "fwd"
    assert jacobian_mode(lambda x: x * 2.0, 0, False, np.ones(3)) == "rev"  # tie
    close(ft.jacobian(tall)(np.array([1.0, 2.0])), ft.jacrev(tall)(np.array([1.0, 2.0])))


def test_jacobian_has_aux_and_hessian_has_aux():
    j, aux = ft.jacfwd(lambda x: (fnp.sin(x), x * 2.0), has_aux=True)(np.zeros(2))
    close(j, np.eye(2))
    close(aux, np.zeros(2))
    j, aux = ft.jacrev(lambda x: (fnp.sin(x), {"k": x}), has_aux=True)(np.zeros(2))
    close(j, np.eye(2))
    close(aux["k"], np.zeros(2))
    h, aux = ft.hessian(lambda x: (fnp.sum(x ** 3), x), has_aux=True)(np.array([1.0, 2.0]))
    close(h, np.diag([6.0, 12.0]))


def test_jacobian_under_jit_and_vmap():
    f = lambda x: fnp.sin(x) * x[0]  # noqa: E731
    x = np.array([0.3, 0.4])
    close(ft.jit(ft.jacrev(f))(x), ft.jacfwd(f)(x))
    xs = np.stack([x, 2 * x])
    close(ft.vmap(ft.jacfwd(f))(xs)[1], ft.jacrev(f)(2 * x))


# --------------------------------------------------------------------------- control flow

def test_python_control_flow_on_values_under_grad_jvp_vjp():
    def f(x):
        if x > 0:
            return x * x
        return -x * x * x
    assert float(ft.grad(f)(3.0)) == 6.0
    assert float(ft.grad(f)(-1.0)) == -3.0
    assert float(ft.jvp(f, (3.0,), (1.0,))[1]) == 6.0
    assert float(ft.vjp(f, -1.0)[1](1.0)[0]) == -3.0

    def newton_sqrt(a):
        x = a
        while fnp.abs(x * x - a) > 1e-12:      # a while loop on a tolerance
            x = 0.5 * (x + a / x)
        return x
    close(ft.grad(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0), 1e-8)

    # a known value is read with stop_gradient: float(x) itself would detach x from
    # the derivative, and raises (tests/test_no_silent_errors_conversions.py)
    logged = []

    def g(x):
        logged.append(float(ft.lax.stop_gradient(x)))
        return fnp.sin(x)
    ft.grad(g)(0.25)
    ft.jvp(g, (0.5,), (1.0,))
    assert logged == [0.25, 0.5]


def test_control_flow_under_jit_raises_with_user_line():
    def f(x):
        if x > 0:  # the line the error must name
            return x
        return -x
    with pytest.raises(ft.errors.ConcretizationError) as e:
        ft.jit(ft.grad(f))(1.0)
    assert "test_autodiff.py" in str(e.value)
    with pytest.raises(ft.errors.ConcretizationError):
        ft.grad(ft.jit(f))(1.0)


# --------------------------------------------------------------------------- residuals

def test_residuals_after_dce_skip_unused_tangent_work():
    def f(x):
        unused = fnp.exp(x) * fnp.cos(x)   # noqa: F841  its tangent work is dead
        return fnp.sum(x * x)
    r = ft.residuals(f, np.ones(4))
    assert r.count == 1 and r.bytes == 32
    assert r.entries[0][2] == "argument leaf 0"
    assert "1 residuals, 32 bytes" in str(r)


def test_linearize_reuses_saved_linearisation():
    y, f_jvp = ft.linearize(lambda x: fnp.sin(x) * x, 0.5)
    close(y, np.sin(0.5) * 0.5)
    close(f_jvp(2.0), 2.0 * (np.cos(0.5) * 0.5 + np.sin(0.5)))


# --------------------------------------------------------------------------- IR transforms

def _eval(closed, args):
    return ft.eval_jaxpr(closed.jaxpr, closed.consts, list(args))


def test_partial_eval_splits_and_recombines():
    from functrans.transforms import partial_eval
    f = lambda x, y: [fnp.sin(x) * y + fnp.cos(x), fnp.exp(x)]  # noqa: E731
    closed = ft.make_jaxpr(f)(np.ones(3), np.ones(3))
    known, unknown, out_known = partial_eval(closed, [True, False])
    assert out_known == [False, True]
    names = [e.primitive.name for e in unknown.jaxpr.eqns]
    assert "sin" not in names and "cos" not in names and "exp" not in names
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, -1.0, 2.0])
    kout = _eval(known, [x])
    exp_out, res = kout[:1], kout[1:]
    uout = _eval(unknown, list(res) + [y])
    full = _eval(closed, [x, y])
    close(uout[0], full[0])
    close(exp_out[0], full[1])
    for piece in (known, unknown):
        text = str(piece)
        assert str(jaxpr_ir.parse(text)) == text


def test_jvp_and_transpose_jaxpr_round_trip():
    from functrans.transforms import jvp_jaxpr, transpose_jaxpr
    closed = ft.make_jaxpr(lambda x: fnp.sin(x) * x)(np.ones(2))
    jj = jvp_jaxpr(closed)
    jaxpr_ir.check(jj)
    text = str(jj)
    assert str(jaxpr_ir.parse(text)) == text
    x, t = np.array([0.3, 0.6]), np.array([1.0, 2.0])
    out, tout = _eval(jj, [x, t])
    close(tout, (np.cos(x) * x + np.sin(x)) * t)
    lin = ft.make_jaxpr(lambda t: t * 3.0)(np.ones(2))
    tj = transpose_jaxpr(lin, [True])
    close(_eval(tj, [np.ones(2)])[0], 3.0 * np.ones(2))


def test_grad_jaxpr_prints_parses_and_reruns():
    from backends import interpret
    f = ft.grad(lambda x: fnp.sum(fnp.sin(x) * x))
    x = np.array([0.1, 0.5, 0.9])
    closed = ft.make_jaxpr(f)(x)
    text = str(closed)
    parsed = jaxpr_ir.parse(text)
    jaxpr_ir.check(parsed)
    close(interpret.eval_jaxpr(parsed, closed.consts, [x])[0], f(x))


def test_pjit_jvp_does_not_recompute_the_primal():
    f = ft.jit(lambda x: fnp.sum(fnp.sin(x) * x))
    closed = ft.make_jaxpr(ft.grad(f))(np.ones(3))
    calls = [e for e in closed.jaxpr.eqns if e.primitive.name == "pjit"]
    assert len(calls) == 2
    lin_body = calls[1].params["jaxpr"].jaxpr
    assert all(e.primitive.name not in ("sin", "cos") for e in lin_body.eqns)
    close(ft.grad(f)(np.ones(3)), np.cos(1.0) + np.sin(1.0))
    y, t = ft.jvp(f, (np.ones(3),), (np.ones(3),))
    close(t, 3 * (np.cos(1.0) + np.sin(1.0)))


# --------------------------------------------------------------------------- bad input

def test_grad_bad_input_errors():
    with pytest.raises(TypeError, match="scalar"):
        ft.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(TypeError, match="floating output"):
        ft.grad(lambda x: (x > 0).astype(np.int64))(1.0)
    with pytest.raises(TypeError, match="has_aux"):
        ft.grad(lambda x: (x, x))(1.0)
    with pytest.raises(TypeError, match="argnums"):
        ft.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with pytest.raises(TypeError, match="int64"):
        ft.grad(lambda x: x * 2)(np.int64(3))
    with pytest.raises(TypeError, match="int"):
        ft.jacrev(lambda x: x)(np.arange(3))


def test_vjp_cotangent_errors_name_both_types():
    _, f_vjp = ft.vjp(lambda x: fnp.sin(x), np.ones(3))
    with pytest.raises(TypeError, match=r"f64\[2\].*f64\[3\]"):
        f_vjp(np.ones(2))
    with pytest.raises(TypeError, match=r"f32\[3\].*f64\[3\]"):
        f_vjp(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="structure"):
        f_vjp((np.ones(3), np.ones(3)))
    with pytest.raises(TypeError, match="tangent"):
        ft.jvp(fnp.sin, (np.ones(3),), (np.ones(2),))


def test_vjp_function_is_a_pytree_through_jit():
    # JAX's vjp-objects guide: fwd = jit(lambda *a: vjp(f, *a)), bwd = jit(f_vjp(ct))
    def layer(w, x):
        return fnp.tanh(x @ w)

    fwd = ft.jit(lambda w, x: ft.vjp(layer, w, x))
    bwd = ft.jit(lambda f_vjp, ct: f_vjp(ct))
    w, x = np.full((3, 3), 0.3), np.arange(6.0).reshape(2, 3) / 6
    y, f_vjp = fwd(w, x)
    assert len(tree_leaves(f_vjp)) > 0      # the residuals are its leaves
    dw, dx = bwd(f_vjp, np.ones_like(y))
    rw, rx = ft.grad(lambda w, x: fnp.sum(layer(w, x)), argnums=(0, 1))(w, x)
    np.testing.assert_allclose(dw, rw, rtol=1e-12)
    np.testing.assert_allclose(dx, rx, rtol=1e-12)
    scaled = tree_map(lambda r: r, f_vjp)   # rebuilt from its leaves, still callable
    np.testing.assert_allclose(scaled(np.ones_like(y))[0], rw, rtol=1e-12)


def test_fwd_and_bwd_compiles_bwd_once():
    fwd, bwd = ft.fwd_and_bwd(lambda w, x: fnp.sum(fnp.tanh(x @ w)), argnums=(0, 1))
    w, x = np.full((3, 3), 0.2), np.ones((2, 3))
    for k in range(3):
        y, res = fwd(w * k, x)
        dw, dx = bwd(res, 1.0)
    rw, rx = ft.grad(lambda w, x: fnp.sum(fnp.tanh(x @ w)), argnums=(0, 1))(w * 2, x)
    np.testing.assert_allclose(dw, rw, rtol=1e-12)
    np.testing.assert_allclose(dx, rx, rtol=1e-12)
    assert bwd.cache_info()["misses"] == 1
    one = ft.fwd_and_bwd(lambda w: fnp.sum(w ** 2), argnums=0, jitted=False)
    np.testing.assert_allclose(one[1](one[0](w)[1], 1.0), 2 * w)


def test_integer_inputs_get_zero_tangents_when_not_differentiated():
    g = ft.grad(lambda x, n: x * n, argnums=0)(2.0, 3)
    assert float(g) == 3.0
    y, t = ft.jvp(lambda x, n: x * n, (2.0, 3), (1.0, 0))
    assert float(t) == 3.0


def test_grad_result_types_follow_inputs():
    g = ft.grad(lambda x: fnp.sum(x * x))(np.ones(3, np.float32))
    assert g.dtype == np.float32 and isinstance(g, ft.Array)
    gs = tree_map(np.shape, ft.grad(lambda p: fnp.sum(p[0]) * p[1])((np.ones(2), 3.0)))
    assert gs == ((2,), ())


def test_values_user_code_sees_are_arrays_although_rules_compute_on_plain_ndarrays():
    """Rules run with ``tracing.INTERNAL`` set (no Array views on intermediates); every
    value that reaches user code is still an ``ft.Array``: results of grad/vjp/
    linearize, and plain values inside the differentiated function."""
    from functrans import lax
    seen = []

    def f(x):
        y = lax.stop_gradient(fnp.sin(x))        # a value with a zero tangent: plain
        seen.append(y)
        z = y.at[0].set(2.0)                     # .at works on it, as on any eager value
        return fnp.sum(z * x * fnp.cos(x))

    x = np.linspace(0.1, 1.0, 4)
    g = ft.grad(f)(x)
    assert type(seen[0]) is ft.Array and type(g) is ft.Array
    y, pullback = ft.vjp(f, x)
    (ct,) = pullback(np.float64(1.0))
    assert type(y) is ft.Array and type(ct) is ft.Array
    np.testing.assert_allclose(ct, g, rtol=1e-14)
    y, f_jvp = ft.linearize(f, x)
    assert type(y) is ft.Array and type(f_jvp(np.ones(4))) is ft.Array
    assert tracing_internal() is False           # restored after the rules ran
    with pytest.raises(TypeError, match="while_loop"):   # raised inside the backward pass
        ft.grad(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x))(1.0)
    assert tracing_internal() is False           # ... and restored after an error too


def tracing_internal():
    from functrans import tracing
    return tracing.INTERNAL.on


def test_rule_mode_is_per_thread():
    """While one thread's backward pass runs (rules on plain ndarrays), eager lax
    results in another thread are still Arrays."""
    import threading
    from functrans import lax, tracing
    seen, started, release = [], threading.Event(), threading.Event()

    def other():
        started.wait(5)
        seen.append(type(lax.sin(np.ones(3))))
        release.set()

    th = threading.Thread(target=other)
    th.start()
    prev, tracing.INTERNAL.on = tracing.INTERNAL.on, True   # as inside a rule, this thread
    try:
        started.set()
        release.wait(5)
    finally:
        tracing.INTERNAL.on = prev
    th.join(5)
    assert seen == [ft.Array]
