"""A segment's top-level steps that loop get functions of their own (``segments.outline``)
and identical kernels and steps are compiled once (``fold``): the segment of a 4-layer GPT
training step held 286 loops in one function (LLVM's loop passes grow faster than a
function's size) and each layer's kernels were compiled again. Values do not depend on
either; these tests count functions, they do not time anything."""
from __future__ import annotations

import re

import llvmlite.ir as ir
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from backends.llvm import cache, program, segments
from backends.llvm.fold import fold_identical

_DEFINE = re.compile(r'^define [^@]*@"([^"]+)"\(', re.M)


def _functions(text):
    """{name: body text} of a module's definitions."""
    out = {}
    for m in _DEFINE.finditer(text):
        end = text.index("\n}", m.end())
        out[m.group(1)] = text[m.start():end]
    return out


def _compiled(f, *args):
    cache.clear_memory()
    return ft.jit(f).lower(*args).compile()


def _mlp(x, ws):
    for w in ws:                   # the same layer three times: the same kernel
        x = fnp.tanh(x @ w) * 0.5 + x
    return x


def _kernels(exe):
    return [n for n in _functions(exe.as_text().split("; ---- LLVM IR after")[0])
            if re.fullmatch(r"k\d+", n)]


def test_each_layers_kernels_compiled_once(rng):
    x = rng.standard_normal((16, 32)).astype(np.float32)
    ws = [rng.standard_normal((32, 32)).astype(np.float32) * 0.1 for _ in range(3)]
    exe = _compiled(_mlp, x, ws)
    assert exe.cost_analysis()["functions folded"] == 2
    one = _compiled(_mlp, x, ws[:1])
    assert one.cost_analysis()["functions folded"] == 0
    assert len(_kernels(exe)) == len(_kernels(one)) == 1
    want = x
    for w in ws:
        want = np.tanh(want @ w) * np.float32(0.5) + want
    np.testing.assert_allclose(np.asarray(exe(x, ws)), want, rtol=1e-5, atol=1e-5)


def test_looping_steps_leave_the_segment(rng, monkeypatch):
    monkeypatch.setattr(program, "OUTLINE_STEPS", 1)     # this program is small
    def f(x, w):
        y = fnp.transpose(x @ w).reshape(-1)             # a copy loop (a reshape of a view)
        z = lax.fori_loop(0, 4, lambda i, c: fnp.sin(c) * 0.5 + c, fnp.pad(x, 1))
        return y, z
    x = rng.standard_normal((6, 5)).astype(np.float32)
    w = rng.standard_normal((5, 7)).astype(np.float32)
    exe = _compiled(f, x, w)
    fns = _functions(exe.as_text().split("; ---- LLVM IR after")[0])
    steps = {n: t for n, t in fns.items() if n.startswith("step")}
    assert steps and all("noinline" in t.split("\n", 1)[0] for t in steps.values())
    segs = [t for n, t in fns.items() if n.startswith("seg")]
    assert segs and not any('label %"head' in t for t in segs)   # no loop left there
    y, z = exe(x, w)
    np.testing.assert_allclose(np.asarray(y), (x @ w).T.reshape(-1), rtol=1e-5, atol=1e-5)
    c = np.pad(x, 1)
    for _ in range(4):
        c = np.sin(c) * np.float32(0.5) + c
    np.testing.assert_allclose(np.asarray(z), c, rtol=1e-5, atol=1e-6)


def _kernel(m, name, md_ops=None, callee=None):
    f = ir.Function(m, ir.FunctionType(ir.VoidType(), []), name)
    f.linkage = "internal"
    b = ir.IRBuilder(f.append_basic_block("entry"))
    loop = f.append_basic_block("loop")
    b.branch(loop)
    b.position_at_end(loop)
    if callee is not None:
        b.call(callee, [])
    br = b.branch(loop)
    if md_ops is not None:
        md = m.add_metadata([ir.MetaDataString(m, f"id.{name}")])
        md.operands = (md, *md_ops)       # a loop ID: self-referential, distinct per loop
        br.set_metadata("llvm.loop", md)
    return f


def test_fold_compares_loop_ids_by_content_and_follows_workers():
    m = ir.Module()
    off = m.add_metadata([ir.MetaDataString(m, "llvm.loop.unroll.disable")])
    full = m.add_metadata([ir.MetaDataString(m, "llvm.loop.unroll.full")])
    w1, w2 = _kernel(m, "w1", [off]), _kernel(m, "w2", [off])       # equal loop IDs
    _kernel(m, "w3", [full])                                         # another hint
    _kernel(m, "k1", callee=w1), _kernel(m, "k2", callee=w2)        # equal once w2 is w1
    assert fold_identical(m) == 2
    assert sorted(f.name for f in m.functions) == ["k1", "w1", "w3"]
    assert '@"w2"' not in str(m)


def test_a_small_programs_steps_stay_in_its_segment():
    def f(v):
        return lax.fori_loop(0, 100, lambda i, c: c * 0.9 + fnp.sin(c), fnp.pad(v, 1))
    x = np.linspace(0.0, 1.0, 3)
    exe = _compiled(f, x)
    assert not any(n.startswith("step") for n in _functions(exe.as_text()))
    want = np.pad(x, 1)
    for _ in range(100):
        want = want * 0.9 + np.sin(want)
    np.testing.assert_allclose(np.asarray(exe(x)), want, rtol=1e-12)


def test_long_kernel_runs_become_chunks(rng, monkeypatch):
    """A loop body's run of looping steps is emitted in chunks, functions of their own
    that inline their kernels (``segments.Chunk``); the values are the same bits."""
    w = rng.standard_normal((8, 8)) * 0.3

    def f(x):
        def body(i, c):
            c = c / fnp.sum(c * c)         # each reduction ends a kernel
            c = fnp.sin(fnp.dot(w, c)) - fnp.max(c)     # a dot_general's own loops
            c = c * fnp.mean(c) + 1.0
            return fnp.tanh(c) * fnp.min(c)
        return lax.fori_loop(0, 3, body, x)
    x = rng.standard_normal(8)
    whole = _compiled(f, x)
    monkeypatch.setattr(segments, "CHUNK_MIN_LOOPS", 2)
    monkeypatch.setattr(segments, "CHUNK_LOOPS", 2)
    exe = _compiled(f, x)
    fns = _functions(exe.as_text().split("; ---- LLVM IR after")[0])
    chunks = [t.split("\n", 1)[0] for n, t in fns.items() if n.startswith("step")]
    assert not any(n.startswith("step") for n in _functions(whole.as_text()))
    assert len(chunks) >= 2 and all("noinline" in h and h.count("ptr %") == 2 for h in chunks)
    ks = [t.split("\n", 1)[0] for n, t in fns.items() if re.fullmatch(r"k\d+", n)]
    assert ks and all("alwaysinline" in h for h in ks)
    assert np.array_equal(np.asarray(exe(x)), np.asarray(whole(x)))
    c = x
    for _ in range(3):
        c = c / np.sum(c * c)
        c = np.sin(w.astype(np.float32) @ c) - np.max(c)
        c = c * np.mean(c) + 1.0
        c = np.tanh(c) * np.min(c)
    np.testing.assert_allclose(np.asarray(exe(x)), c, rtol=1e-6, atol=1e-7)


def test_chunk_in_chunk_with_scan_rows(rng, monkeypatch):
    """A scan inside a chunked body, its own body chunked too: the rows it reads are
    pointers the outer chunk computes (its own values, not arguments)."""
    m = rng.standard_normal((3, 8)).astype(np.float32)

    def f(x):
        def body(i, c):
            c = c / fnp.sum(c * c)
            c, ys = lax.scan(lambda c, r: (c * r + fnp.sum(c), fnp.max(c) * r), c, m)
            return fnp.sin(c) + fnp.mean(ys)
        return lax.fori_loop(0, 2, body, x)
    x = rng.standard_normal(8).astype(np.float32)
    whole = _compiled(f, x)
    monkeypatch.setattr(segments, "CHUNK_MIN_LOOPS", 2)
    monkeypatch.setattr(segments, "CHUNK_LOOPS", 2)
    exe = _compiled(f, x)
    assert sum(n.startswith("step") for n in _functions(exe.as_text())) >= 2
    assert np.array_equal(np.asarray(exe(x)), np.asarray(whole(x)))
    c = x
    for _ in range(2):
        c = c / np.sum(c * c)
        ys = []
        for r in m:
            ys.append(np.max(c) * r)
            c = c * r + np.sum(c)
        c = np.sin(c) + np.mean(ys)
    np.testing.assert_allclose(np.asarray(exe(x)), c, rtol=1e-3, atol=1e-4)   # f32 sums


def _heads(x, ws):
    b, s, d = x.shape
    for w in ws:       # batched products over (batch, head): operands copied to temporaries
        q = (x @ w).reshape(b, s, 2, d // 2)
        k = x.reshape(b, s, 2, d // 2)
        a = fnp.einsum("bshd,bthd->bhst", q, k) * 0.01
        x = fnp.einsum("bhst,bthd->bshd", a, k).reshape(b, s, d) * 0.1 + x
    return x


def test_steps_with_workspace_temporaries_fold(rng, monkeypatch):
    """A step's workspace temporaries come as arguments (``StepFn.tmps``), not as
    offsets in its code: each layer's copy of a step is the same function."""
    monkeypatch.setattr(program, "OUTLINE_STEPS", 1)
    x = rng.standard_normal((2, 64, 128)).astype(np.float32)
    ws = [rng.standard_normal((128, 128)).astype(np.float32) * 0.1 for _ in range(3)]

    def looping_steps(exe):
        fns = _functions(exe.as_text().split("; ---- LLVM IR after")[0])
        return sorted(n for n, t in fns.items()
                      if n.startswith("step") and "noinline" in t.split("\n", 1)[0])
    one, three = _compiled(_heads, x, ws[:1]), _compiled(_heads, x, ws)
    steps = looping_steps(one)
    assert steps and looping_steps(three) == steps
    want = x
    for w in ws:
        q = (want @ w).reshape(2, 64, 2, 64)
        k = want.reshape(2, 64, 2, 64)
        a = np.einsum("bshd,bthd->bhst", q, k) * np.float32(0.01)
        want = np.einsum("bhst,bthd->bshd", a, k).reshape(2, 64, 128) * np.float32(0.1) + want
    np.testing.assert_allclose(np.asarray(three(x, ws)), want, rtol=1e-4, atol=1e-4)
