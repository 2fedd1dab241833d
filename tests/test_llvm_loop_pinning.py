"""Kernels called inside a compiled loop stay inlinable into the loop's segment only while
that segment stays small (``split.PIN_BUDGET``): a large loop body inlined whole made one
function whose LLVM time grows faster than its size (an adaptive RK45 solve with its
forward Jacobian: 13.3 s -> 6.9 s of compile, run time within 3%). Values do not depend
on where a kernel's code lives."""
from __future__ import annotations

import re

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from backends.llvm import cache, split

# a kernel that is called, not inlined, loses its internal linkage (it may move to another
# part of the module: split_module)
_CALLED = re.compile(r'define void @"k\d+"\([^)]*\)[^\n]*noinline')


def _body_chain(n):
    def f(y0, c):
        def body(i, y):
            for _ in range(n):          # one long fused kernel per loop trip
                y = fnp.sin(y) * 0.5 + y * c
            return fnp.cumsum(y) * 1e-3 + y
        return lax.fori_loop(0, 5, body, y0)
    return f


def _compile(f, *args):
    cache.clear_memory()
    exe = ft.jit(f).lower(*args).compile()
    return exe.as_text(), [np.asarray(o) for o in ft.tree_util.tree_leaves(exe(*args))]


def _reference(n, y, c):
    for _ in range(5):
        for _ in range(n):
            y = np.sin(y) * 0.5 + y * c
        y = np.cumsum(y) * 1e-3 + y
    return y


def test_a_heavy_loop_body_calls_its_kernels_a_light_one_keeps_them_inlinable(monkeypatch):
    monkeypatch.setattr(split, "MIN_SPLIT_WEIGHT", 0)     # a small module may split too
    y, c = np.linspace(-1.0, 1.0, 300), 0.3
    f = _body_chain(6)
    light_text, light = _compile(f, y, c)
    assert not _CALLED.search(light_text)            # under the budget: inlinable
    monkeypatch.setattr(split, "PIN_BUDGET", 0)
    heavy_text, heavy = _compile(f, y, c)
    assert _CALLED.search(heavy_text)                # over it: called
    np.testing.assert_array_equal(light[0], heavy[0])
    np.testing.assert_allclose(heavy[0], _reference(6, y, c), rtol=1e-12)


def test_two_scans_compile_in_two_parts_with_their_kernels(monkeypatch, rng):
    """A program with two loop bodies (a scan and its gradient's reverse scan) outlines
    them (``program.OUTLINE_BODIES``); each step moves to a part of its own with the
    kernels its loop calls, still inlinable there (internal), so the two bodies compile
    on two threads. Values agree with the one-part module's (f32 sums may round apart)."""
    import backends.llvm as cpu
    from backends.llvm import engine, program
    w = (rng.standard_normal((64, 64)) * 0.1).astype(np.float32)
    xs = rng.standard_normal((20, 8, 64)).astype(np.float32)

    def loss(w, xs):
        def cell(h, x):
            h = fnp.tanh(h @ w + x) * 0.9 + fnp.sin(x) * 0.1
            return h, fnp.sum(h * h)
        _, ys = lax.scan(cell, fnp.zeros((8, 64), np.float32), xs)
        return fnp.mean(ys)
    f = ft.jit(ft.value_and_grad(loss))
    monkeypatch.setattr(engine, "workers", lambda: 2)
    monkeypatch.setattr(split, "MIN_SPLIT_WEIGHT", 0)     # a small module may split too
    parts, real = [], cpu.split_module

    def record(m, n):
        whole, texts = real(m, n)
        parts.append(texts)
        return whole, texts
    monkeypatch.setattr(cpu, "split_module", record)
    cache.clear_memory()
    v, g = f(w, xs)
    assert len(parts[-1]) == 2
    step_part = [t for t in parts[-1] if not re.search(r'^define [^@]*@"seg\d+"', t, re.M)]
    assert step_part and re.search(r'^define ptr @"step\d+"', step_part[0], re.M)
    assert re.search(r'^define internal void @"k\d+"', step_part[0], re.M)   # inlinable
    monkeypatch.setattr(program, "OUTLINE_BODIES", 10 ** 9)
    cache.clear_memory()
    v1, g1 = ft.jit(ft.value_and_grad(loss))(w, xs)
    assert not any(re.search(r'^define [^@]*@"step', t, re.M) for t in parts[-1])
    np.testing.assert_allclose(np.asarray(v), np.asarray(v1), rtol=1e-6)   # f32 sums
    np.testing.assert_allclose(np.asarray(g), np.asarray(g1), rtol=1e-5, atol=1e-6)
