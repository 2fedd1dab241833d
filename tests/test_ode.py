"""functrans.experimental.ode.odeint against jax.experimental.ode.odeint (JAX 0.10.2,
x64; the reference numbers below were printed by it): the same Dormand-Prince steps give
the same values, and the adjoint gives the same gradients (with respect to y0, the
times and the args); plus closed forms, pytrees, jit and vmap."""
from collections import Counter

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.experimental import ode
from functrans.experimental.ode import odeint
from functrans.primitives import call


def _lotka(y, t, a, b):
    return fnp.stack([a * y[0] - b * y[0] * y[1], -y[1] + b * y[0] * y[1]])


_TS = np.array([0., 0.7, 2.0])
_Y0 = np.array([1.0, 0.5])
_JAX_YS = [[1.0, 0.5], [1.7286148367182612, 0.3951030351947497],
           [4.652623517513188, 0.7602085481422817]]
_JAX_GRADS = [[35.19951526590495, -31.89700281406126],
              [-33.123887348046644, 4.753242508667308, 28.370644839379334],
              76.66893963279662, -67.97412234326346]


def test_values_match_jax_step_for_step():
    ys = odeint(_lotka, fnp.asarray(_Y0), fnp.asarray(_TS), 1.0, 0.5)
    np.testing.assert_allclose(np.asarray(ys), _JAX_YS, rtol=1e-12)


def test_adjoint_gradients_match_jax():
    loss = lambda y0, ts, a, b: fnp.sum(odeint(_lotka, y0, ts, a, b) ** 2)
    g = ft.grad(loss, argnums=(0, 1, 2, 3))(fnp.asarray(_Y0), fnp.asarray(_TS), 1.0, 0.5)
    for ours, ref in zip(g, _JAX_GRADS):
        np.testing.assert_allclose(np.asarray(ours), ref, rtol=1e-7)


def test_closed_form_pytree_jit_and_vmap():
    ts = fnp.linspace(0.0, 2.0, 5)
    f = lambda y, t, k: {"x": -k * y["x"], "v": fnp.cos(t) + 0 * y["v"]}
    y0 = {"x": fnp.ones(3), "v": fnp.zeros(())}
    ys = ft.jit(lambda k: odeint(f, y0, ts, k, rtol=1e-10, atol=1e-10))(1.5)
    assert ys["x"].shape == (5, 3) and ys["v"].shape == (5,)
    np.testing.assert_allclose(np.asarray(ys["x"][:, 0]), np.exp(-1.5 * np.asarray(ts)), rtol=1e-8)
    np.testing.assert_allclose(np.asarray(ys["v"]), np.sin(np.asarray(ts)), atol=1e-8)
    ks = fnp.asarray([0.5, 1.0])
    end = ft.vmap(lambda k: odeint(f, y0, ts, k, rtol=1e-10, atol=1e-10)["x"][-1, 0])(ks)
    np.testing.assert_allclose(np.asarray(end), np.exp(-2.0 * np.asarray(ks)), rtol=1e-8)
    dk = ft.grad(lambda k: odeint(f, y0, ts, k, rtol=1e-10, atol=1e-10)["x"][-1, 0])(1.5)
    np.testing.assert_allclose(float(dk), -2.0 * np.exp(-3.0), rtol=1e-6)


def test_errors_and_closures():
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(lambda y, t: -y, fnp.ones(1), fnp.arange(3))
    # as in JAX, a traced value func closes over is closure-converted and differentiated
    ts = fnp.asarray([0., 1.])
    end = lambda k: odeint(lambda y, t: -k * y, fnp.ones(1), ts, rtol=1e-10, atol=1e-10)[1, 0]
    np.testing.assert_allclose(float(ft.grad(end)(1.5)), -np.exp(-1.5), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(end))(fnp.asarray([0.5, 2.0]))),
                               -np.exp(-np.array([0.5, 2.0])), rtol=1e-6)


def test_vmap_batches_each_loop_body_a_bounded_number_of_times(loop_batchings):
    """vmap of odeint (issue #15: 47 s eagerly, jit(vmap(grad)) over 3 minutes): the
    custom_vjp's call, fwd and bwd nest scan > while (a batched predicate: lanes take
    different steps) > fori_loop, several adjoint levels deep. Each loop body is batched
    at most a few times for each set of batch dims (before: up to 486 times, 3684
    batchings in all); the values are a Python loop's over the lanes."""
    calls = loop_batchings
    ts, y0, a = fnp.asarray([0., 0.7]), fnp.asarray(_Y0), np.array([1.0, 1.2])
    with ft.enable_checks(False):   # the other tests type-check these programs (10x slower)
        ys = ft.vmap(lambda k: odeint(_lotka, y0, ts, k, 0.5, rtol=1e-6, atol=1e-6))(a)
    for i, k in enumerate(a):
        np.testing.assert_allclose(np.asarray(ys[i]),
                                   np.asarray(odeint(_lotka, y0, ts, k, 0.5, rtol=1e-6,
                                                     atol=1e-6)), rtol=1e-13)
    assert max(calls.values()) <= 4 and sum(calls.values()) < 200, sorted(calls.values())
    # jit of it compiles once; the second call reuses the executable
    jf = ft.jit(ft.vmap(lambda k: odeint(_lotka, y0, ts, k, 0.5, rtol=1e-6, atol=1e-6)))
    with ft.enable_checks(False):
        for _ in range(2):
            np.testing.assert_allclose(np.asarray(jf(a)), np.asarray(ys), rtol=1e-13)
    assert jf.cache_info()["misses"] == 1 and jf.cache_info()["hits"] == 1, jf.cache_info()


def _eqn_counts(jaxpr, acc):
    for e in jaxpr.eqns:
        acc[e.primitive.name] += 1
        for k in e.primitive.subjaxpr_params:
            sub = e.params.get(k)
            for c in (sub if isinstance(sub, (tuple, list)) else (sub,)):
                if c is not None:
                    _eqn_counts(getattr(c, "jaxpr", c), acc)
    return acc


def test_two_adjoint_levels_grad_of_grad_matches_jax():
    """custom_vjp traces its rules when bound, so each adjoint level nested in the
    backward pass is traced (and batched under vmap) whether or not it is used: the
    program of one odeint held 4 of them (9726 equations, vmap(odeint) 4.3 s eagerly,
    vmap(grad) 14 s). Two levels give grad and grad of grad (JAX 0.10.2's value below;
    its third order raises); a third order raises the while_loop reverse-mode error."""
    ts = fnp.linspace(0.0, 1.0, 2)
    f = lambda y, t, a: fnp.stack([a * y[0] - 0.4 * y[0] * y[1],  # noqa: E731
                                   -0.4 * y[1] + 0.1 * y[0] * y[1]])
    loss = lambda a: fnp.sum(odeint(f, fnp.array([10.0, 5.0]), ts, a,  # noqa: E731
                                    rtol=1e-6, atol=1e-6))
    counts = _eqn_counts(ft.make_jaxpr(loss)(1.1).jaxpr, Counter())
    assert counts["custom_vjp_call"] == 2 and counts["while"] == 5, counts
    with ft.enable_checks(False):   # the other tests type-check these programs (10x slower)
        g2 = ft.grad(ft.grad(loss))(1.1)
        np.testing.assert_allclose(float(g2), 2.2805899656768354, rtol=1e-9)
        with pytest.raises(TypeError, match="does not work for lax.while_loop"):
            ft.grad(ft.grad(ft.grad(loss)))(1.1)


def test_grad_of_grad_through_jit():
    """grad(grad(jit(loss))): the jitted call's JVP gave the residual constants (the
    Runge-Kutta tableau) tangents of zeros instead of symbolic zeros, and the adjoint's
    custom_vjp, which closes over them, raised at second order."""
    ts = fnp.linspace(0.0, 1.0, 2)
    f = lambda y, t, a: fnp.stack([a * y[0] - 0.4 * y[0] * y[1],  # noqa: E731
                                   -0.4 * y[1] + 0.1 * y[0] * y[1]])
    loss = lambda a: fnp.sum(odeint(f, fnp.array([10.0, 5.0]), ts, a,  # noqa: E731
                                    rtol=1e-6, atol=1e-6))
    with ft.enable_checks(False):
        g2 = ft.grad(ft.grad(ft.jit(loss)))(1.1)
        np.testing.assert_allclose(float(g2), 2.2805899656768354, rtol=1e-9)


def test_solver_is_jitted_and_reused():
    # odeint's solve runs under jit as JAX's: a second call with the same func,
    # tolerances and shapes reuses the compiled solver (eager vmap(odeint) of a
    # 2-state system: ~1.1 s per call before, ~0.3 s)
    f = lambda y, t, k: -k * y   # noqa: E731
    ts = fnp.linspace(0.0, 1.0, 3)
    before = ode._jitted_solve.cache_info()
    a = odeint(f, fnp.ones(3), ts, 0.5)
    b = odeint(f, fnp.ones(3), ts, 0.7)
    info = ode._jitted_solve.cache_info()
    assert info["misses"] - before["misses"] == 1, (before, info)
    assert info["hits"] - before["hits"] == 1, (before, info)
    np.testing.assert_allclose(a[-1], np.exp(-0.5), rtol=1e-7)
    np.testing.assert_allclose(b[-1], np.exp(-0.7), rtol=1e-7)


def test_eager_vmap_and_grad_of_odeint_reuse_the_batched_solve(monkeypatch):
    """Issue 15: a second eager vmap(odeint) re-traced the jitted solve, re-batched it
    and recompiled the batched body (0.3-1.5 s per call; JAX 0.10.2 ~3 ms): the solve's
    body closed over constants recorded in the vmap's trace. Now nothing is traced,
    batched or compiled again, and new values (args, y0, a closed-over batched value)
    give new answers."""
    counts = Counter()
    for name in ("vmap_jaxpr", "compile_closed", "transpose_jaxpr"):
        orig = getattr(call, name)
        monkeypatch.setattr(call, name, lambda *a, _o=orig, _n=name, **k:
                            counts.update([_n]) or _o(*a, **k))
    ts, y0 = fnp.asarray([0., 0.7]), fnp.asarray(_Y0)
    solve = ft.vmap(lambda k: odeint(_lotka, y0, ts, k, 0.5, rtol=1e-6, atol=1e-6))
    loss = ft.grad(lambda a: fnp.sum(odeint(_lotka, y0, ts, a, 0.5, rtol=1e-6, atol=1e-6)))
    with ft.enable_checks(False):   # the other tests type-check these programs (10x slower)
        first, g1 = solve(np.array([1.0, 1.2])), loss(1.0)
        counts.clear()
        again, g2 = solve(np.array([0.8, 1.1])), loss(1.2)
        assert not counts, counts
        for i, k in enumerate([0.8, 1.1]):
            np.testing.assert_allclose(again[i], odeint(_lotka, y0, ts, k, 0.5, rtol=1e-6,
                                                        atol=1e-6), rtol=1e-13)
        assert not np.allclose(again, first) and g1 != g2
        np.testing.assert_allclose(g2, ft.grad(lambda a: fnp.sum(odeint(
            lambda y, t, a, b: _lotka(y, t, a, b), y0, ts, a, 0.5, rtol=1e-6,
            atol=1e-6)))(1.2), rtol=1e-12)
        # a func closing over the batched value (closure-converted): right values
        ks = np.array([0.5, 2.0])
        for scale in (1.0, 3.0):
            ys = ft.vmap(lambda k: odeint(lambda y, t: -k * scale * y, fnp.ones(1), ts))(ks)
            np.testing.assert_allclose(ys[:, -1, 0], np.exp(-ks * scale * 0.7), rtol=1e-6)
