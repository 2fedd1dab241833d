"""Eager ``scan`` / ``fori_loop`` / ``while_loop`` long enough run as one compiled call
(``functrans.primitives.control_flow_eager``), cached under the loop's structure; small,
traced, effectful and non-CPU loops stay interpreted. Compiles are counted with a
compile hook (each eager loop compiles as ``eager_<primitive>``)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import compiler, lax
from functrans.primitives.control_flow_eager import EAGER_COMPILE_MIN

N = EAGER_COMPILE_MIN        # a one-equation body this long compiles


class _Count(compiler.CompileHook):
    def __init__(self):
        self.names = []

    def start(self, c):
        self.names.append(c.name)


@pytest.fixture
def compiles():
    ft.clear_caches()
    hook = compiler.add_hook(_Count())
    yield hook.names
    compiler.remove_hook(hook)


def _eager(names):
    return [n for n in names if n.startswith("eager_")]


def _rnn(w, xs):
    def cell(h, x):
        h = fnp.tanh(w @ h + x)
        return h, h[0]
    return lax.scan(cell, fnp.zeros(4, "float32"), xs)


def test_long_scan_compiles_once_and_matches_jit(compiles):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 4)).astype(np.float32) * 0.5
    xs = rng.standard_normal((N // 4, 4)).astype(np.float32)
    h, ys = _rnn(w, xs)
    assert _eager(compiles) == ["eager_scan"]
    hj, ysj = ft.jit(_rnn)(w, xs)
    np.testing.assert_array_equal(np.asarray(h), np.asarray(hj))
    np.testing.assert_array_equal(np.asarray(ys), np.asarray(ysj))
    # new values, a new closure (the body is retraced): the cached executable runs
    w2, xs2 = w[::-1].copy(), xs[::-1].copy()
    h2, ys2 = _rnn(w2, xs2)
    assert _eager(compiles) == ["eager_scan"]
    np.testing.assert_array_equal(np.asarray(ys2), np.asarray(ft.jit(_rnn)(w2, xs2)[1]))
    # and the interpreter agrees to float32 rounding
    with ft.disable_jit():
        np.testing.assert_allclose(np.asarray(_rnn(w2, xs2)[1]), np.asarray(ys2), rtol=1e-5,
                                   atol=1e-6)
    assert _eager(compiles) == ["eager_scan"]


def test_small_scan_stays_interpreted(compiles):
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(100.0))
    assert float(c) == 4950.0 and _eager(compiles) == []


def test_fori_loop_euler_matches_jit(compiles):
    def euler(x0):
        def step(i, x):
            return x + 1e-3 * fnp.stack([x[1], -fnp.sin(x[0])])
        return lax.fori_loop(0, N // 4, step, x0)
    x0 = np.array([1.0, 0.0])
    got = euler(x0)
    assert _eager(compiles) == ["eager_scan"]
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ft.jit(euler)(x0)))


def _newton(n, i0=0, e0=0.0):
    def body(s):
        i, e = s
        m = i.astype("float64") * 1e-3
        return i + 1, e - (e - 0.3 * fnp.sin(e) - m) / (1 - 0.3 * fnp.cos(e))
    return lax.while_loop(lambda s: s[0] < n, body, (fnp.int32(i0), fnp.float64(e0)))


def test_long_while_compiles_and_matches_jit(compiles):
    i, e = _newton(N)
    assert int(i) == N and _eager(compiles) == ["eager_while"]
    np.testing.assert_array_equal(np.asarray(e), np.asarray(ft.jit(_newton)(N)[1]))
    # another carry, another trip count: the cached executable, at once
    i2, e2 = _newton(N, 5, 0.5)
    assert int(i2) == N and _eager(compiles) == ["eager_while"]
    np.testing.assert_array_equal(np.asarray(e2), np.asarray(ft.jit(_newton)(N, 5, 0.5)[1]))


def test_short_while_stays_interpreted(compiles):
    i, e = _newton(20)
    assert int(i) == 20 and _eager(compiles) == []
    np.testing.assert_allclose(float(e), float(ft.jit(_newton)(20)[1]), rtol=1e-14)


def test_effects_in_body_run_once_per_step_in_order(compiles):
    seen = []

    def body(c, x):
        ft.debug.callback(lambda v: seen.append(int(v)), x)
        for _ in range(100):         # a body large enough: steps x size > the threshold
            c = c + 1.0
        return c, None
    steps = EAGER_COMPILE_MIN // 100 + 1
    c, _ = lax.scan(body, 0.0, np.arange(steps))
    assert float(c) == 100.0 * steps
    assert seen == list(range(steps)) and _eager(compiles) == []


def test_traced_loops_unchanged(compiles):
    xs = np.ones(N)

    def total(c0):
        return lax.scan(lambda c, x: (c + x * c0, None), c0, xs)[0]
    assert ft.vmap(total)(np.array([1.0, 2.0])).tolist() == [N + 1.0, 2.0 * (N + 1)]
    assert float(ft.jit(ft.grad(total))(1.0)) == N + 1
    assert _eager(compiles) == []


def _rnn_loss(w, xs):
    h, ys = _rnn(w, xs)
    return fnp.sum(ys) + fnp.sum(h)


def test_eager_derivatives_run_their_loops_compiled_with_jits_values(compiles):
    # the forward scan with residuals (the JVP rule's, on concrete primals) and the
    # transposed reverse scan (the backward pass's) were interpreted step by step
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 4)).astype(np.float32) * 0.5
    xs = rng.standard_normal((N // 4, 4)).astype(np.float32)
    g = ft.grad(_rnn_loss)(w, xs)
    assert _eager(compiles) == ["eager_scan", "eager_scan"]
    np.testing.assert_array_equal(np.asarray(g), np.asarray(ft.jit(ft.grad(_rnn_loss))(w, xs)))
    v, g2 = ft.value_and_grad(_rnn_loss)(w, xs)       # the cached executables
    y, pull = ft.vjp(_rnn_loss, w, xs)
    assert _eager(compiles) == ["eager_scan", "eager_scan"]
    np.testing.assert_array_equal(np.asarray(g2), np.asarray(g))
    np.testing.assert_array_equal(np.asarray(pull(np.float32(1.0))[0]), np.asarray(g))
    assert float(v) == float(y)     # (the final sums are numpy's, jit's are fused: rounding)
    np.testing.assert_allclose(float(v), float(ft.jit(_rnn_loss)(w, xs)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(_rnn(w, xs)[1]), np.asarray(ft.jit(_rnn)(w, xs)[1]))

    def euler(k, x0):
        def step(i, x):
            return x + 1e-3 * fnp.stack([x[1], -k * fnp.sin(x[0])])
        return fnp.sum(lax.fori_loop(0, N // 4, step, x0))
    gk = ft.grad(euler, argnums=(0, 1))(0.7, np.array([1.0, 0.0]))
    want = ft.jit(ft.grad(euler, argnums=(0, 1)))(0.7, np.array([1.0, 0.0]))
    for a, b in zip(gk, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    n = len(_eager(compiles))
    assert n >= 5          # 3 above, and euler's forward and reverse loops
    # jvp: its trace with values computes the primal loop (compiled too), then the JVP loop
    tw = np.ones_like(w)
    _, t = ft.jvp(lambda w: _rnn(w, xs)[1], (w,), (tw,))
    np.testing.assert_array_equal(np.asarray(t), np.asarray(
        ft.jit(lambda w, tw: ft.jvp(lambda w: _rnn(w, xs)[1], (w,), (tw,))[1])(w, tw)))
    assert len(_eager(compiles)) > n
    n = len(_eager(compiles))
    with ft.disable_jit():           # a veto holds under grad too: interpreted
        np.testing.assert_allclose(np.asarray(ft.grad(_rnn_loss)(w, xs[:N // 8])),
                                   np.asarray(ft.jit(ft.grad(_rnn_loss))(w, xs[:N // 8])),
                                   rtol=2e-4, atol=1e-5)
    assert len(_eager(compiles)) == n


def test_disable_jit_and_interpret_backend_stay_interpreted(compiles, monkeypatch):
    xs = np.ones(N)
    with ft.disable_jit():
        assert float(lax.scan(lambda c, x: (c + x, None), 0.0, xs)[0]) == N
    monkeypatch.setenv("FUNCTRANS_BACKEND", "interpret")
    assert float(lax.scan(lambda c, x: (c + x, None), 0.0, xs)[0]) == N
    assert _eager(compiles) == []


def test_debug_nans_checks_a_long_body_eagerly(compiles):
    xs = np.ones(N)
    xs[-1] = -1.0
    ft.config.update("debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) .*eager operation"):
            lax.scan(lambda c, t: (c + fnp.log(t), None), 0.0, xs)
    finally:
        ft.config.update("debug_nans", False)
    assert _eager(compiles) == []


def test_errors_in_long_bodies_still_raise(compiles):
    with pytest.raises(TypeError, match="carry"):
        lax.scan(lambda c, x: (fnp.stack([c, x]), None), 0.0, np.ones(N))
    with pytest.raises(TypeError, match="carry|body"):
        lax.while_loop(lambda c: c < 1e9, lambda c: fnp.stack([c, c]), 0.0)
    assert _eager(compiles) == []


def test_few_steps_of_a_large_body_stay_interpreted(compiles):
    # 64 steps x 600 equations passes EAGER_COMPILE_MIN, yet compiling 600 equations
    # (~1 ms each) costs more than interpreting them 64 times
    def body(c, x):
        for _ in range(300):
            c = fnp.sin(c) + x
        return c, None
    c, _ = lax.scan(body, np.zeros(2), np.ones((64, 2)))
    assert np.isfinite(np.asarray(c)).all() and _eager(compiles) == []
