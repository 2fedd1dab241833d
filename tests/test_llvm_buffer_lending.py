"""Temporaries of the CPU backend: a cheap elementwise value of values saved anyway is
recomputed where it is read instead of saved (``backends.fusion``'s ``recompute``), and
temporaries live inside the caller's output buffers until each output is first written
(``backends.llvm.values.Lender``, buffer assignment as XLA's). Each program below would
give wrong numbers if a temporary were placed in a buffer still (or already) in use:
read by the step writing the output, an output aliased to a donated input, a value a
host step reads, several temporaries alive at once in one output."""
from __future__ import annotations

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from backends.fusion import Kernel
from backends.llvm.program import plan_jaxpr
from backends.llvm.values import Lender
from functrans import lax


def _temps(f, *args):
    return ft.jit(f, backend="cpu").lower(*args).compile().cost_analysis()["temp_bytes"]


def _agree(f, *args):
    """The interpreter's values within float32 roundings of the largest magnitude (a
    temporary written over a live buffer gives errors of the values' own size)."""
    want = ft.tree_util.tree_leaves(ft.jit(f, backend="interpret")(*args))
    got = [np.asarray(g) for g in ft.tree_util.tree_leaves(ft.jit(f, backend="cpu")(*args))]
    for g, w in zip(got, want):
        w = np.asarray(w)
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-5 * max(1.0, np.abs(w).max()))
    return got


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _mlp_loss(act):
    def loss(ps, x):
        h = x
        for w, b in ps:
            h = act(fnp.matmul(h, w) + b)
        return fnp.sum(h * h)
    return loss


def _mlp(depth, width, batch):
    return ([(_rand(width, width, seed=i) / np.float32(np.sqrt(width)), _rand(width, seed=i))
             for i in range(depth)], _rand(batch, width, seed=99))


def _kernel_outputs(f, *args):
    plan = plan_jaxpr(ft.make_jaxpr(f)(*args).jaxpr)
    return [len(s.outputs) for s in plan.steps if isinstance(s, Kernel)]


# --------------------------------------------------------------------------- recompute

def test_tanh_derivative_is_recomputed_from_the_saved_output_and_cos_is_saved():
    ps, x = _mlp(2, 8, 4)
    # the first layer's kernel writes tanh's output only (not 1 - t*t too)
    assert _kernel_outputs(ft.grad(_mlp_loss(lax.tanh)), ps, x)[0] == 1
    # cos is compute-heavy: sin's layer saves sin's output and cos(z)
    assert _kernel_outputs(ft.grad(_mlp_loss(lax.sin)), ps, x)[0] == 2
    for act in (lax.tanh, lax.sin):
        _agree(ft.grad(_mlp_loss(act)), ps, x)


def test_recomputation_never_keeps_more_alive_than_it_frees():
    a, w = _rand(16, 16), _rand(16, 16, seed=1)

    def f(a, w):
        p, q = a @ w, w @ a          # both dead after c = p * q ...
        c = p * q
        d = a @ a                    # ... a product later, c is read again
        return fnp.sin(c) + d, a * 2.0 + d

    # recomputing c where it is read would keep p and q alive instead of c: not done
    plan = plan_jaxpr(ft.make_jaxpr(f)(a, w).jaxpr)
    first = [s for s in plan.steps if isinstance(s, Kernel)][0]
    assert [e.primitive.name for e in first.eqns] == ["mul"] and len(first.outputs) == 1
    _agree(f, a, w)

    def g(a, w):
        c = a * 3.0 - 1.0            # from an input, alive anyway: recomputed where read
        d = fnp.tanh(c) @ w
        return fnp.exp(c) + d

    assert _kernel_outputs(g, a, w)[0] == 1       # tanh(c) only, not c
    _agree(g, a, w)

    def h(a, w, b):
        c = a * w + b                 # its reader would read a, w and b instead of c
        d = fnp.tanh(c) @ w
        return fnp.exp(c) + d

    b = _rand(16, 16, seed=2)
    assert _kernel_outputs(h, a, w, b)[0] == 2    # more bytes read than saved: c stays
    _agree(h, a, w, b)


# --------------------------------------------------------------------------- lending

def test_lender_places_disjoint_ranges_and_never_at_or_after_the_first_write():
    lender = Lender()
    lender.add(7, 256, 4, written_at=10)
    lender.add(8, 256, 4, written_at=4)
    assert lender.place(128, 4, 0, 3) == (8, 0)        # the output written soonest
    assert lender.place(128, 4, 3, 3) == (8, 128)      # alive at step 3 with the first
    assert lender.place(64, 4, 2, 4) == (7, 0)         # read at 4, when 8 is written
    assert lender.place(256, 4, 4, 9) is None          # 7's first 64 bytes are busy to 4
    assert lender.place(192, 4, 4, 9) == (7, 64)
    assert lender.place(4, 4, 0, 10) is None           # read where 7 is written
    assert lender.place(8, 8, 0, 1) is None            # float64 in float32 buffers
    assert lender.place(64, 4, 5, 9) == (7, 0)         # free again after step 4
    assert lender.place(64, 4, 4, 9) is None           # 7 is full over [4, 9]


def test_a_temporary_read_where_the_output_is_written_is_not_lent_that_output():
    x, w = _rand(64, 64), _rand(64, 64, seed=1)

    def f(x, w):
        t = fnp.tanh(x @ w)          # dies in the product that writes the output
        return t @ w

    # x @ w lives in the output until t is written; t is read by the output's step
    assert _temps(f, x, w) == 64 * 64 * 4
    _agree(f, x, w)


def test_several_temporaries_alive_at_once_share_one_large_output():
    n = 32
    x = _rand(n, n) / np.float32(4)

    def f(x):
        a = x @ x
        b = a @ x
        c = fnp.tanh(a) @ b
        d = c @ a
        return d[:, :, None] * x[None, :, :]

    # a, b, tanh(a), c live at once before the (n, n, n) output is written; only d,
    # read where it is written, is in the workspace
    assert _temps(f, x) == n * n * 4
    _agree(f, x)


def test_an_output_aliased_to_a_donated_input_lends_nothing():
    n = 48
    buf = ft.jit(lambda v: v + 0.0)(_rand(n, n, seed=3))
    y, w = _rand(n, n, seed=4), _rand(n, n, seed=5) / np.float32(8)
    want = np.asarray(buf) * 2.0 + np.tanh(np.tanh(y @ w) @ w)

    def f(buf, y, w):
        t = fnp.tanh(fnp.tanh(y @ w) @ w)   # temporaries while buf is still unread
        return buf * 2.0 + t

    where = buf.__array_interface__["data"][0]
    out = ft.jit(f, backend="cpu", donate_argnums=0)(buf, y, w)
    assert out.__array_interface__["data"][0] == where     # written over buf
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_values_a_host_step_reads_and_outputs_returned_twice():
    x, w = _rand(32, 32), _rand(32, 32, seed=1)

    def f(x, w):
        t = x @ w
        bits = lax.bitcast_convert_type(t, np.int32)      # a host step reads t
        u = lax.bitcast_convert_type(bits + 1, np.float32) @ w
        v = (u @ w)[:, :, None] * x[None]
        return v, v, u, x

    got = _agree(f, x, w)
    np.testing.assert_array_equal(got[0], got[1])


def test_mlp_gradient_keeps_its_activations_in_the_gradient_buffers(monkeypatch):
    import backends.llvm as cpu
    ps, x = _mlp(6, 64, 32)       # activations 8 KiB, each weight gradient 16 KiB
    lent = {}
    for act in (lax.tanh, lax.sin):
        _agree(ft.grad(_mlp_loss(act)), ps, x)
        lent[act] = _temps(ft.grad(_mlp_loss(act)), ps, x)
    cpu.clear_plans()
    monkeypatch.setattr(Lender, "place", lambda self, *a: None)
    try:
        for act in (lax.tanh, lax.sin):
            # saved: 5 activations (and 6 cos(z) for sin), 8 KiB each
            assert _temps(ft.grad(_mlp_loss(act)), ps, x) >= 3 * lent[act] >= 3 * 8192
    finally:
        cpu.clear_plans()


def test_temp_bytes_is_what_a_call_with_lent_buffers_allocates_beyond_its_outputs():
    import tracemalloc
    from backends.llvm import runtime
    ps, x = _mlp(6, 64, 32)
    flat = ft.tree_util.tree_leaves((ps, x))
    exe = ft.jit(ft.grad(_mlp_loss(lax.sin)), backend="cpu").lower(ps, x).compile().exe
    assert exe.temp_bytes > runtime.HELD_WORKSPACE
    for run in (exe, exe.fast_runner()):       # the general and the dispatch path
        run(*flat)
        runtime.POOL.clear()
        tracemalloc.start()
        try:
            outs = run(*flat)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        temps = peak - sum(o.nbytes for o in outs)
        # the workspace, plus the Python objects of the call and of its 12 arrays
        assert exe.temp_bytes <= temps <= exe.temp_bytes + 2048 + 400 * len(outs), \
            (temps, exe.temp_bytes)


def test_a_loop_reads_a_temporary_living_in_a_later_output():
    x, w = _rand(16, 16), _rand(16, 16, seed=1) / np.float32(4)

    def f(x, w):
        t = fnp.tanh(x @ w)          # lives in z's buffer while the loop reads it
        y = lax.fori_loop(0, 3, lambda i, c: fnp.tanh(c @ w) + t, t)
        s = lax.scan(lambda c, r: (c + r * t[0], c), t[1], t)[1]
        z = (y @ w + s)[:, :, None] * x[None]
        return z, y

    assert _temps(f, x, w) <= 2 * 16 * 16 * 4      # 3 of them without lending
    _agree(f, x, w)
