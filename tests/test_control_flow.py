"""Structured control flow beyond the op table: each primitive against the Python
if/loop it stands for under jvp, vjp, vmap and jit; switch clamping; a long scan's
reverse pass against the unrolled program; batched while loops whose lanes stop
at different steps; the while_loop reverse-mode error; printed jaxprs with
sub-jaxprs; every bad input named in the issue; Lorenz RK4 with its gradient."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import jaxpr_ir
from backends import interpret
from functrans import lax
from functrans.tree_util import tree_flatten


def _fd_grad(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return g


def _round_trip(fun, *args):
    """make_jaxpr -> check -> print -> parse -> print (identical) -> check -> run."""
    closed = ft.make_jaxpr(fun)(*args)
    jaxpr_ir.check(closed)
    text = str(closed)
    parsed = jaxpr_ir.parse(text)
    assert str(parsed) == text
    jaxpr_ir.check(parsed)
    flat = [np.asarray(a) for a in tree_flatten(args)[0]]
    return text, interpret.eval_jaxpr(parsed, closed.consts, flat)


def _prims(closed, acc=None):
    acc = [] if acc is None else acc
    for e in closed.jaxpr.eqns:
        acc.append((e.primitive.name, e.params))
        for k in e.primitive.subjaxpr_params:
            sub = e.params[k]
            for s in (sub if isinstance(sub, tuple) else (sub,)):
                _prims(s, acc)
    return acc


# ----------------------------------------------------------------------- cond / switch

def _branchy(p, x):
    return lax.cond(p, lambda v: fnp.sum(fnp.sin(v) * v), lambda v: fnp.sum(v * v * v), x)


@pytest.mark.parametrize("p", [True, False])
def test_cond_matches_python_if_in_value_jvp_vjp(p):
    x = np.linspace(-1.0, 1.0, 5)
    ref = (lambda v: np.sum(np.sin(v) * v)) if p else (lambda v: np.sum(v ** 3))
    assert np.isclose(float(_branchy(p, x)), ref(x))
    g = ft.grad(lambda v: _branchy(p, v))(x)
    np.testing.assert_allclose(g, _fd_grad(ref, x), rtol=1e-6, atol=1e-8)
    t = np.cos(np.arange(5.0))
    _, jt = ft.jvp(lambda v: _branchy(p, v), (x,), (t,))
    assert np.isclose(float(jt), float(np.vdot(g, t)))
    # the predicate arrives traced (jit): the same result
    assert np.isclose(float(ft.jit(_branchy, backend="interpret")(p, x)), ref(x))
    gj = ft.jit(ft.grad(_branchy, argnums=1), backend="interpret")(p, x)
    np.testing.assert_allclose(gj, g, rtol=1e-12)


def test_cond_vmap_batched_predicate_becomes_select():
    ps = np.array([True, False, True, False])
    xs = np.random.default_rng(0).standard_normal((4, 3))
    got = ft.vmap(_branchy)(ps, xs)
    want = [_branchy(p, x) for p, x in zip(ps, xs)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    closed = ft.make_jaxpr(ft.vmap(_branchy))(ps, xs)
    names = [n for n, _ in _prims(closed)]
    assert "select_n" in names and "cond" not in names
    # an unbatched predicate keeps one cond of batched branches
    closed = ft.make_jaxpr(ft.vmap(_branchy, in_axes=(None, 0)))(True, xs)
    assert "cond" in [n for n, _ in _prims(closed)]
    np.testing.assert_allclose(ft.vmap(_branchy, in_axes=(None, 0))(True, xs),
                               [_branchy(True, x) for x in xs], rtol=1e-12)
    # vmap of grad with per-lane branches
    g = ft.vmap(ft.grad(_branchy, argnums=1))(ps, xs)
    np.testing.assert_allclose(g, [ft.grad(_branchy, argnums=1)(p, x) for p, x in zip(ps, xs)],
                               rtol=1e-12)


def test_switch_clamps_the_index_eagerly_traced_and_batched():
    fs = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    x = np.float64(2.0)
    want = {-(2 ** 40): 3.0, -1: 3.0, 0: 3.0, 1: 20.0, 2: -2.0, 3: -2.0, 2 ** 40: -2.0}
    for i, w in want.items():
        assert float(lax.switch(i, fs, x)) == w
    sw = ft.jit(lambda i, x: lax.switch(i, fs, x), backend="interpret")
    for i in (-7, 0, 1, 2, 9):
        assert float(sw(np.int32(i), x)) == want.get(i, 3.0 if i < 0 else -2.0)
    idx = np.array([-3, 0, 1, 2, 5], np.int32)
    got = ft.vmap(lambda i: lax.switch(i, fs, x))(idx)
    np.testing.assert_array_equal(got, [3.0, 3.0, 20.0, -2.0, -2.0])
    # one branch: the index is irrelevant
    assert float(lax.switch(4, [lambda x: x * 3.0], x)) == 6.0



def test_cond_operands_and_outputs_are_pytrees_and_closures_work():
    w = fnp.asarray(np.array([1.0, 2.0]))

    def f(p, d):
        return lax.cond(p, lambda d: {"a": d["x"] * w, "b": d["y"]},
                        lambda d: {"a": d["x"] + w, "b": d["y"] * 2.0}, d)
    d = {"x": np.array([3.0, 4.0]), "y": np.float64(5.0)}
    out = f(True, d)
    np.testing.assert_array_equal(out["a"], [3.0, 8.0])
    assert float(f(False, d)["b"]) == 10.0
    g = ft.grad(lambda x: fnp.sum(f(True, {"x": x, "y": 1.0})["a"]))(d["x"])
    np.testing.assert_array_equal(g, [1.0, 2.0])


# ----------------------------------------------------------------------- while_loop

def _collatz_steps(n):
    return lax.while_loop(lambda c: c[0] > 1,
                          lambda c: (lax.cond(c[0] % 2 == 0, lambda m: m // 2, lambda m: 3 * m + 1,
                                              c[0]), c[1] + 1),
                          (n, np.int64(0)))[1]


def _python_collatz(n):
    k = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        k += 1
    return k


def test_vmap_while_loop_lanes_finish_at_different_steps():
    ns = np.array([1, 2, 3, 6, 7, 27], np.int64)
    got = ft.vmap(_collatz_steps)(ns)
    want = [_python_collatz(int(n)) for n in ns]
    np.testing.assert_array_equal(got, want)
    assert len(set(want)) == len(want)   # every lane stops at its own step
    # float carries, trip count from a batched bound; finished lanes stay frozen
    def f(n, x):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0),
                              (np.int64(0), x))
    ns2 = np.array([0, 1, 4, 2])
    xs = np.array([1.0, 2.0, 3.0, 4.0])
    k, v = ft.vmap(f)(ns2, xs)
    np.testing.assert_array_equal(k, ns2)
    ref = []
    for n, x in zip(ns2, xs):
        for _ in range(n):
            x = x * 1.5 + 1.0
        ref.append(x)
    np.testing.assert_allclose(v, ref, rtol=1e-14)
    # the same, jitted and batched on the other operand only
    jf = ft.jit(ft.vmap(f, in_axes=(None, 0)), backend="interpret")
    np.testing.assert_allclose(jf(np.int64(3), xs)[1], xs * 1.5 ** 3 + 1.0 * (1 + 1.5 + 2.25))


def _while_fn(x):
    return lax.while_loop(lambda c: c[1] < 2.0,
                          lambda c: (c[0] * fnp.cos(c[0]) + 1.0, c[1] + 0.25), (x, 0.0))[0]


def test_while_loop_forward_mode_matches_finite_differences_and_python():
    x = np.array([0.3, -0.7, 1.1])
    ref = x.copy()
    for _ in range(8):
        ref = ref * np.cos(ref) + 1.0
    np.testing.assert_allclose(_while_fn(x), ref, rtol=1e-14)
    t = np.array([1.0, -2.0, 0.5])
    _, jt = ft.jvp(_while_fn, (x,), (t,))
    eps = 1e-6
    fd = (np.asarray(_while_fn(x + eps * t)) - np.asarray(_while_fn(x - eps * t))) / (2 * eps)
    np.testing.assert_allclose(jt, fd, rtol=1e-6, atol=1e-8)
    # under jit, and the printed jvp jaxpr round trips
    _, jt2 = ft.jit(lambda x, t: ft.jvp(_while_fn, (x,), (t,)), backend="interpret")(x, t)
    np.testing.assert_allclose(jt2, jt, rtol=1e-12)
    _, outs = _round_trip(lambda x, t: ft.jvp(_while_fn, (x,), (t,)), x, t)
    np.testing.assert_allclose(outs[1], jt, rtol=1e-12)
    # vmap of jvp
    bt = ft.vmap(lambda t: ft.jvp(_while_fn, (x,), (t,))[1])(np.eye(3))
    np.testing.assert_allclose(bt, np.diag(np.asarray(jt) / t), rtol=1e-10)


def test_while_loop_reverse_mode_raises_pointing_to_scan_and_fori_loop():
    with pytest.raises(TypeError, match="Reverse-mode differentiation does not work for "
                                        "lax.while_loop") as e:
        ft.grad(lambda x: fnp.sum(_while_fn(x)))(np.ones(2))
    assert "lax.scan" in str(e.value) and "lax.fori_loop" in str(e.value)
    # fori_loop with traced bounds (under jit) is a while loop
    f = ft.jit(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2.0, x), backend="interpret")
    with pytest.raises(TypeError, match="lax.while_loop"):
        ft.grad(f)(1.0, np.int64(3))



def test_while_loop_forwards_carries_the_body_returns_unchanged():
    """A carry the body passes through becomes a constant of the loop (JAX forwards it
    too), so reverse mode differentiates what only passes through a while loop; a carry
    the loop changes still refuses reverse mode."""
    def f(x):
        i, y, z = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1], s[2] * 2.0),
                                 (0, x, x))
        return fnp.sum(y ** 2) + i * 0.0     # z, changed by the loop, is left out
    x = np.array([0.5, 2.0])
    for g in (ft.grad(f), ft.jit(ft.grad(f)), ft.jacfwd(f)):
        np.testing.assert_allclose(g(x), 2 * x, rtol=1e-14)
    eqn = [e for e in ft.make_jaxpr(f)(x).jaxpr.eqns if e.primitive.name == "while"][0]
    assert len(eqn.outvars) == 2       # i and z; y is a constant of the loop

    def h(x):   # the changing carry reads the forwarded one: values, vmap, forward mode
        return lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1], s[2] * s[1]),
                              (0, x, x))[2]
    xs = np.array([[0.5, 2.0], [1.5, 3.0]])
    np.testing.assert_allclose(ft.vmap(h)(xs), xs ** 4, rtol=1e-14)
    np.testing.assert_allclose(ft.jit(ft.jacfwd(h))(x), np.diag(4 * x ** 3), rtol=1e-14)
    with pytest.raises(TypeError, match="lax.while_loop"):
        ft.grad(lambda v: fnp.sum(h(v)))(x)


# ----------------------------------------------------------------------- fori_loop

def test_fori_loop_static_is_a_reverse_differentiable_scan():
    def f(x):
        return lax.fori_loop(2, 7, lambda i, v: fnp.sin(v) * i + v * 0.5, x)

    def ref(x):
        for i in range(2, 7):
            x = np.sin(x) * i + x * 0.5
        return x
    x = np.array([0.2, -0.4])
    np.testing.assert_allclose(f(x), ref(x), rtol=1e-14)
    closed = ft.make_jaxpr(f)(x)
    assert [n for n, _ in _prims(closed)].count("scan") == 1
    g = ft.grad(lambda v: fnp.sum(f(v)))(x)
    np.testing.assert_allclose(g, _fd_grad(lambda v: np.sum(ref(v)), x), rtol=1e-6)
    # empty and reversed ranges run zero times
    assert float(lax.fori_loop(5, 5, lambda i, v: v + 1.0, 1.0)) == 1.0
    assert float(lax.fori_loop(5, 2, lambda i, v: v + 1.0, 1.0)) == 1.0
    for up in (0, -1):   # ... fully unrolled too (JAX's nonpositive-length test; it raised)
        assert float(lax.fori_loop(0, up, lambda i, v: v + 1.0, 10.0, unroll=True)) == 10.0
        assert float(ft.jit(lambda v: lax.fori_loop(0, up, lambda i, v: v + 1.0, v,
                                                    unroll=True))(10.0)) == 10.0
    # numpy-int bounds are static as well
    out = lax.fori_loop(np.int32(0), np.int32(3), lambda i, v: v * i + 1.0, 1.0)
    assert float(out) == 5.0
    # Python-int bounds give a weakly typed counter: float32 carries stay float32
    out = lax.fori_loop(0, 3, lambda i, v: v * i + 1.0, np.ones(2, np.float32))
    assert out.dtype == np.float32 and out.tolist() == [5.0, 5.0]


def test_fori_loop_traced_bounds_become_a_while_loop():
    f = ft.jit(lambda n, x: lax.fori_loop(0, n, lambda i, v: v * 2.0 + i, x),
               backend="interpret")
    assert float(f(np.int64(4), 1.0)) == ((((1.0 * 2) * 2 + 1) * 2 + 2) * 2 + 3)
    closed = ft.make_jaxpr(lambda n, x: lax.fori_loop(0, n, lambda i, v: v * 2.0, x))(3, 1.0)
    assert "while" in [n for n, _ in _prims(closed)]
    _, t = ft.jvp(lambda x: f(np.int64(3), x), (1.0,), (1.0,))
    assert float(t) == 8.0


# ----------------------------------------------------------------------- scan

def _rnn(w, h0, xs):
    return lax.scan(lambda h, x: (fnp.sin(h * w + x), h * h), h0, xs)


def _rnn_ref(w, h0, xs):
    h, ys = h0, []
    for x in xs:
        ys.append(h * h)
        h = np.sin(h * w + x)
    return h, np.stack(ys)


def test_scan_matches_python_loop_in_value_grad_and_vmap_over_each_operand():
    rng = np.random.default_rng(3)
    w, h0, xs = rng.uniform(0.5, 1.0, 3), rng.standard_normal(3), rng.standard_normal((6, 3))
    h, ys = _rnn(w, h0, xs)
    hr, ysr = _rnn_ref(w, h0, xs)
    np.testing.assert_allclose(h, hr, rtol=1e-14)
    np.testing.assert_allclose(ys, ysr, rtol=1e-14)

    def loss(w, h0, xs):
        h, ys = _rnn(w, h0, xs)
        return fnp.sum(h * h) + fnp.sum(ys * 0.1)

    def loss_ref(w, h0, xs):
        h, ys = _rnn_ref(w, h0, xs)
        return np.sum(h * h) + np.sum(ys * 0.1)
    gs = ft.grad(loss, argnums=(0, 1, 2))(w, h0, xs)
    args = [w, h0, xs]
    for k, g in enumerate(gs):
        fd = _fd_grad(lambda a, k=k: loss_ref(*(args[:k] + [a] + args[k + 1:])), args[k])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    # vmap over each operand alone, and all together
    batch = [rng.uniform(0.5, 1.0, (2, 3)), rng.standard_normal((2, 3)),
             rng.standard_normal((2, 6, 3))]
    for axes in [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, 0)]:
        bargs = [b if a == 0 else x for b, x, a in zip(batch, args, axes)]
        got = ft.vmap(_rnn, in_axes=axes)(*bargs)
        for k in range(2):
            ex = [b[k] if a == 0 else x for b, x, a in zip(batch, args, axes)]
            hr, ysr = _rnn_ref(*ex)
            np.testing.assert_allclose(got[0][k], hr, rtol=1e-13)
            np.testing.assert_allclose(got[1][k], ysr, rtol=1e-13)
        gb = ft.vmap(ft.grad(loss, argnums=(0, 1, 2)), in_axes=axes)(*bargs)
        for k in range(2):
            ex = [b[k] if a == 0 else x for b, x, a in zip(batch, args, axes)]
            for g1, g2 in zip(gb, ft.grad(loss, argnums=(0, 1, 2))(*ex)):
                np.testing.assert_allclose(np.asarray(g1)[k], g2, rtol=1e-10, atol=1e-12)



def test_scan_unroll_zero_means_one_and_true_unrolls_empty_scans():
    # JAX's SCAN_IMPLS run every scan test with unroll=0 (no unrolling); unroll=True of
    # a length-0 scan asked for unroll=0 and raised
    f = lambda c, x: (fnp.sin(c) * x, c)
    xs = np.arange(4.0)
    want = lax.scan(f, 0.5, xs)
    for u in (0, 2, True):
        got = lax.scan(f, 0.5, xs, unroll=u)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    c, ys = lax.scan(f, 0.5, np.zeros(0), unroll=True)
    assert float(c) == 0.5 and ys.shape == (0,)
    with pytest.raises(ValueError, match="unroll"):
        lax.scan(f, 0.5, xs, unroll=-1)

def test_scan_carry_becomes_batched_inside_the_body():
    # the carry starts unbatched; the batched const makes it batched after one step
    w = np.array([0.5, 1.0, 2.0])
    got = ft.vmap(lambda w: lax.scan(lambda c, x: (c * w + x, c), 1.0, np.arange(3.0)),
                  in_axes=0)(w)
    for k, wk in enumerate(w):
        c, ys = lax.scan(lambda c, x: (c * wk + x, c), 1.0, np.arange(3.0))
        np.testing.assert_allclose(got[0][k], c)
        np.testing.assert_allclose(got[1][k], ys)


def test_scan_1000_step_reverse_pass_matches_the_hand_unrolled_program():
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((1000, 2)) * 0.1
    w = np.array([0.9, 1.05])

    def step(c, x):
        return fnp.tanh(c * w + x)

    def scanned(c0):
        c, ys = lax.scan(lambda c, x: (step(c, x), fnp.sum(c * c)), c0, xs)
        return fnp.sum(c) + fnp.sum(ys) * 1e-3

    def unrolled(c0):
        c, acc = c0, 0.0
        for x in xs:
            acc = acc + fnp.sum(c * c)
            c = step(c, x)
        return fnp.sum(c) + acc * 1e-3
    c0 = np.array([0.3, -0.2])
    v1, g1 = ft.value_and_grad(scanned)(c0)
    v2, g2 = ft.value_and_grad(unrolled)(c0)
    np.testing.assert_allclose(v1, v2, rtol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-13)
    # the backward pass is itself one reverse scan
    closed = ft.make_jaxpr(ft.grad(scanned))(c0)
    scans = [p for n, p in _prims(closed) if n == "scan"]
    assert any(p["reverse"] for p in scans) and all(p["length"] == 1000 for p in scans)
    assert len(closed.jaxpr.eqns) < 60   # not unrolled
    np.testing.assert_allclose(ft.jit(ft.grad(scanned), backend="interpret")(c0), g1, rtol=1e-12)


def test_scan_reverse_length_unroll_and_no_xs():
    c, ys = lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=4)
    assert float(c) == 16.0 and ys.tolist() == [1.0, 2.0, 4.0, 8.0]
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0), reverse=True, unroll=2)
    assert float(c) == 6.0 and ys.tolist() == [6.0, 5.0, 3.0, 0.0]
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0), unroll=True)
    assert float(c) == 6.0
    out = lax.map(lambda d: d["a"] * d["b"], {"a": np.arange(3.0), "b": np.ones((3,))})
    assert out.tolist() == [0.0, 1.0, 2.0]


def test_nested_control_flow_under_grad_vmap_and_jit():
    def f(x):
        def body(c, xi):
            c = lax.cond(xi > 0, lambda c: c * xi, lambda c: c + fnp.sin(xi), c)
            inner, _ = lax.scan(lambda a, _: (a * 0.5 + c, None), c, None, length=3)
            return inner, c
        c, ys = lax.scan(body, 1.0, x)
        return c + fnp.sum(ys)

    def ref(x):
        c, acc = 1.0, 0.0
        for xi in x:
            c = c * xi if xi > 0 else c + np.sin(xi)
            acc += c
            a = c
            for _ in range(3):
                a = a * 0.5 + c
            c = a
        return c + acc
    x = np.array([0.5, -0.3, 1.2, -0.8])
    assert np.isclose(float(f(x)), ref(x))
    np.testing.assert_allclose(ft.grad(f)(x), _fd_grad(ref, x), rtol=1e-6)
    np.testing.assert_allclose(ft.jit(ft.grad(f), backend="interpret")(x), ft.grad(f)(x),
                               rtol=1e-12)
    xb = np.stack([x, -x, x * 0.5])
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(xb), [ft.grad(f)(r) for r in xb], rtol=1e-12)
    # second order through a scan: d/dx of the gradient
    h = ft.grad(lambda s: ft.grad(f)(x * s)[0])(1.0)
    fd = (ft.grad(f)(x * (1 + 1e-5))[0] - ft.grad(f)(x * (1 - 1e-5))[0]) / 2e-5
    assert np.isclose(float(h), float(fd), rtol=1e-5)


def test_printed_jaxprs_with_sub_jaxprs_round_trip_under_transforms():
    x = np.array([0.1, 0.2])
    progs = [
        (lambda x: _branchy(True, x), (x,)),
        (lambda i, x: lax.switch(i, [fnp.sin, fnp.cos, lambda v: v * 2.0], x),
         (np.int32(1), x)),
        (lambda x: _rnn(np.ones(2), x, np.ones((3, 2))), (x,)),
        (ft.grad(lambda x: fnp.sum(_rnn(np.ones(2), x, np.ones((3, 2)))[0])), (x,)),
        (ft.grad(lambda x: _branchy(True, x)), (x,)),
        (ft.vmap(_branchy), (np.array([True, False]), np.ones((2, 3)))),
        (ft.vmap(_collatz_steps), (np.array([3, 5]),)),
        (lambda x: lax.fori_loop(0, 3, lambda i, v: v * i, x), (x,)),
    ]
    for fun, args in progs:
        text, outs = _round_trip(fun, *args)
        want = tree_flatten(fun(*args))[0]
        for o, w in zip(outs, want):
            np.testing.assert_allclose(o, w, rtol=1e-12)
    assert "branches=(" in _round_trip(progs[0][0], x)[0]


# ----------------------------------------------------------------------- bad input

def test_bad_inputs_raise_type_errors_naming_types_and_culprits():
    x = np.ones(3)
    with pytest.raises(TypeError, match=r"true_fun has type f64\[2\] but false_fun returns "
                                        r"f64\[3\]"):
        lax.cond(True, lambda v: v[:2], lambda v: v, x)
    with pytest.raises(TypeError, match=r"f32\[3\].*f64\[3\]|f64\[3\].*f32\[3\]"):
        lax.cond(True, lambda v: v.astype(np.float32), lambda v: v, x)
    with pytest.raises(TypeError, match="same structure"):
        lax.cond(True, lambda v: (v, v), lambda v: v, x)
    with pytest.raises(TypeError, match=r"branch 1.*i64\[3\]|branch 0.*f64\[3\]"):
        lax.switch(0, [lambda v: v, lambda v: v.astype(np.int64)], x)
    # loop bodies that change the carry's type
    with pytest.raises(TypeError, match=r"carry element\[1\].*f64\[3\].*f32\[3\]"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype(np.float32)),
                       (0, x))
    with pytest.raises(TypeError, match=r"carry element\['h'\].*f64\[3\].*f64\[1,3\]"):
        lax.scan(lambda c, _: ({"h": fnp.reshape(c["h"], (1, 3))}, None), {"h": x}, None,
                 length=2)
    with pytest.raises(TypeError, match=r"carry.*f64\[3\].*i64\[3\]"):
        lax.fori_loop(0, 2, lambda i, v: v.astype(np.int64), x)
    with pytest.raises(TypeError, match="same structure"):
        lax.scan(lambda c, _: ((c, c), None), x, None, length=2)
    # scan over xs of different leading lengths
    with pytest.raises(TypeError, match=r"xs\[0\] has type f64\[4,2\] \(length 4\).*"
                                        r"xs\[1\] has type f64\[5\] \(length 5\)"):
        lax.scan(lambda c, x: (c, x[0]), 0.0, (np.ones((4, 2)), np.ones(5)))
    with pytest.raises(TypeError, match=r"length=3.*f64\[4\]"):
        lax.scan(lambda c, x: (c, x), 0.0, np.ones(4), length=3)
    with pytest.raises(TypeError, match="scalar"):
        lax.scan(lambda c, x: (c, x), 0.0, np.float64(1.0))
    # switch index: non-scalar, non-integer
    with pytest.raises(TypeError, match=r"index must be an integer scalar, got i64\[2\]"):
        lax.switch(np.array([0, 1]), [lambda v: v], x)
    with pytest.raises(TypeError, match=r"index must be an integer scalar, got f64\[\]"):
        lax.switch(1.0, [lambda v: v], x)
    # predicates: a number is true where nonzero (JAX's pred != 0); complex, non-scalar raise
    for p, want in ((2, 1.0), (0, -1.0), (np.float32(0.5), 1.0), (np.uint8(0), -1.0)):
        assert lax.cond(p, lambda: 1.0, lambda: -1.0) == want
        assert ft.jit(lambda q: lax.cond(q, lambda: 1.0, lambda: -1.0))(p) == want
    with pytest.raises(TypeError, match=r"predicate must be boolean or a real number, got c128"):
        lax.cond(1j, lambda v: v, lambda v: v, x)
    with pytest.raises(TypeError, match=r"predicate must be a scalar, got bool\[2\]"):
        lax.cond(np.array([True, False]), lambda v: v, lambda v: v, x)
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, got i64\[\]"):
        lax.while_loop(lambda c: c, lambda c: c - 1, 3)
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, got bool\[3\]"):
        lax.while_loop(lambda c: c > 0, lambda c: c - 1.0, x)
    with pytest.raises(TypeError, match="pair"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3))
    with pytest.raises(TypeError, match="callable"):
        lax.cond(True, 1.0, lambda v: v, x)
    with pytest.raises(TypeError, match=r"lower and upper must have equal types, got "
                       r"float64 and int64"):   # JAX 0.10.2 raises here too
        lax.fori_loop(0.0, 3, lambda i, v: v, x)


def test_bad_sub_jaxprs_are_rejected_by_the_type_checker():
    closed = ft.make_jaxpr(lambda x: lax.scan(lambda c, x: (c + x, c), 0.0, x))(np.ones(3))
    text = str(closed)
    jaxpr_ir.check(jaxpr_ir.parse(text))
    # a body computing in f32 while the scan's carry and xs are f64
    bad = text.replace("b:f64[]{weak} c:f64[]", "b:f32[]{weak} c:f32[]")
    bad = bad.replace("d:f64[] = add", "d:f32[] = add")
    assert bad.count("f32") == 3
    with pytest.raises(jaxpr_ir.TypeCheckError, match=r"carry element 0 has type f64\[\].*f32\[\]"):
        jaxpr_ir.check(jaxpr_ir.parse(bad))
    # the cond rule names the branch and both types
    from functrans.primitives.control_flow_cond import cond_p
    from functrans.primitives.control_flow_common import trace_hoisted
    f64, f32 = jaxpr_ir.ShapedArray((), "float64"), jaxpr_ir.ShapedArray((), "float32")
    b0, _ = trace_hoisted(lambda v: [v], [f64])
    b1, _ = trace_hoisted(lambda v: [lax.convert_element_type(v, np.float32)], [f64])
    with pytest.raises(TypeError, match=r"output 0 of branch 1 has type f32\[\].*f64\[\]"):
        cond_p.abstract_eval(jaxpr_ir.ShapedArray((), "int32"), f64, branches=(b0, b1))
    with pytest.raises(TypeError, match=r"index must be an int32 scalar, got f64\[\]"):
        cond_p.abstract_eval(f64, f64, branches=(b0, b0))
    with pytest.raises(TypeError, match=r"operand 0 has type f32\[\].*branch 0 expects f64"):
        cond_p.abstract_eval(jaxpr_ir.ShapedArray((), "int32"), f32, branches=(b0, b0))


def test_weak_typed_carries_adopt_the_body_dtype():
    out = lax.fori_loop(0, 3, lambda i, v: v + np.float32(1.0), 0.0)
    assert out.dtype == np.float32 and float(out) == 3.0
    c, _ = lax.scan(lambda c, x: (c * x, None), np.float32(2.0), np.ones(2, np.float32))
    assert c.dtype == np.float32
    out = lax.cond(True, lambda v: v * 2.0, lambda v: 1.0, np.float32(3.0))
    assert out.dtype == np.float32 and float(out) == 6.0


# ----------------------------------------------------------------------- checkpoint

def test_checkpoint_inside_a_scan_body():
    xs = np.linspace(0.0, 1.0, 20)

    def body(c, x):
        return fnp.sin(c * 1.1 + x) * fnp.cos(c), c

    def f(c0, ckpt):
        b = ft.checkpoint(body) if ckpt else body
        c, ys = lax.scan(b, c0, xs)
        return c + fnp.sum(ys)
    body_prims = [n for n, _ in _prims(ft.make_jaxpr(lambda c: f(c, True))(0.3))]
    assert "scan" in body_prims and "checkpoint" in body_prims
    g1 = ft.grad(lambda c: f(c, True))(0.3)
    g2 = ft.grad(lambda c: f(c, False))(0.3)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.grad(lambda c: f(c, True)), backend="interpret")(0.3),
                               g2, rtol=1e-12)


# ----------------------------------------------------------------------- Lorenz RK4

def lorenz_rk4(state, n_steps=5000, dt=1e-3, sigma=10.0, rho=28.0, beta=8.0 / 3.0):
    def deriv(s):
        x, y, z = s
        return sigma * (y - x), x * (rho - z) - y, x * y - beta * z

    def axpy(a, s, d):
        return tuple(si + a * di for si, di in zip(s, d))

    def step(i, s):
        k1 = deriv(s)
        k2 = deriv(axpy(dt / 2, s, k1))
        k3 = deriv(axpy(dt / 2, s, k2))
        k4 = deriv(axpy(dt, s, k3))
        return tuple(si + dt / 6 * (a + 2 * b + 2 * c + d)
                     for si, a, b, c, d in zip(s, k1, k2, k3, k4))
    return lax.fori_loop(0, n_steps, step, tuple(state))


def _python_lorenz(s, n_steps=5000, dt=1e-3, sigma=10.0, rho=28.0, beta=8.0 / 3.0):
    """The same integrator as a plain Python loop over floats."""
    def deriv(s):
        x, y, z = s
        return sigma * (y - x), x * (rho - z) - y, x * y - beta * z
    for _ in range(n_steps):
        k1 = deriv(s)
        k2 = deriv(tuple(a + dt / 2 * b for a, b in zip(s, k1)))
        k3 = deriv(tuple(a + dt / 2 * b for a, b in zip(s, k2)))
        k4 = deriv(tuple(a + dt * b for a, b in zip(s, k3)))
        s = tuple(a + dt / 6 * (p + 2 * q + 2 * r + w) for a, p, q, r, w in zip(s, k1, k2, k3, k4))
    return s


def test_lorenz_rk4_5000_steps_and_its_gradient_against_finite_differences():
    s0 = np.array([1.0, 1.0, 1.0])
    want = _python_lorenz(tuple(s0))
    out = ft.jit(lambda v: lorenz_rk4((v[0], v[1], v[2])), backend="interpret")(s0)
    np.testing.assert_allclose([float(v) for v in out], want, rtol=1e-10)

    # the gradient of one projection of the final state w.r.t. the initial state
    # (reverse mode: a known scan saving residuals, then a reverse scan)
    w = np.array([0.3, -1.2, 0.7])

    def proj(v):
        x, y, z = lorenz_rk4((v[0], v[1], v[2]))
        return w[0] * x + w[1] * y + w[2] * z
    g = ft.jit(ft.grad(proj), backend="interpret")(s0)
    fd = _fd_grad(lambda v: float(np.dot(w, _python_lorenz(tuple(v)))), s0, eps=1e-6)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_lax_map_batch_size_and_clamp_derivatives_as_jax():
    """lax.map(batch_size=) (a ported program raised TypeError): groups of batch_size
    slices scanned with vmap(f) inside, the remainder by one more vmap; lax.clamp's
    derivatives are JAX's (0 at a tie x == lo or x == hi, not min/max's 1/2)."""
    xs = fnp.arange(14.0).reshape(7, 2)
    f = lambda v: (fnp.sin(v).sum(), {"d": v * 2})   # noqa: E731
    want = lax.map(f, xs)
    for bs in (1, 3, 7, 9):
        for run in (lambda g: g, ft.jit):
            got = run(lambda a: lax.map(f, a, batch_size=bs))(xs)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-15)
            np.testing.assert_array_equal(got[1]["d"], want[1]["d"])
    g = ft.grad(lambda a: lax.map(lambda v: fnp.sin(v).sum(), a, batch_size=3).sum())(xs)
    np.testing.assert_allclose(g, np.cos(xs), rtol=1e-15)
    x = fnp.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    gx = ft.vmap(ft.grad(lambda a: lax.clamp(0.0, a, 1.0)))(x)
    np.testing.assert_array_equal(gx, [0.0, 0.0, 1.0, 0.0, 0.0])
    g3 = ft.grad(lambda lo, a, hi: lax.clamp(lo, a, hi), argnums=(0, 1, 2))
    assert [float(v) for v in g3(0.5, 0.2, 1.0)] == [1.0, 0.0, 0.0]
    assert [float(v) for v in g3(0.5, 2.2, 1.0)] == [0.0, 0.0, 1.0]
    np.testing.assert_array_equal(lax.clamp(0, fnp.arange(5), 3), [0, 1, 2, 3, 3])


def test_clamp_zero_d_array_bounds_under_jit():
    """JAX's lax_test testClamp: 0-d array bounds with an (2, 3) operand; jit raised
    (min/max primitives want equal shapes once traced)."""
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    lo, hi = np.array(1, np.int32), np.array(4, np.int32)
    for run in (lambda g: g, ft.jit):
        np.testing.assert_array_equal(run(lax.clamp)(lo, x, hi), np.clip(x, 1, 4))
        np.testing.assert_array_equal(run(lax.clamp)(x - 1, x, hi), np.clip(x, x - 1, 4))

