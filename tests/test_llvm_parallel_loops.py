"""Long elementwise kernels mark their innermost loop parallel (``kernels._loop_md``:
``llvm.loop.parallel_accesses`` over an access group on each load and store of the body),
so LLVM's loop access analysis skips its pairwise dependence checks. The mark must not
change the object code LLVM makes of such a kernel nor its values, and must never be put
on a loop whose iterations depend on each other (reductions, aliased buffers)."""
from __future__ import annotations

import re

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from backends.llvm import cache, engine, kernels


def _sin_chain(n):
    def f(y, c):
        for _ in range(n):
            y = fnp.sin(y) * 0.5 + y * c
        return fnp.sum(y)
    return f


def _text(fun, *args):
    cache.clear_memory()
    return ft.jit(fun).lower(*args).compile().exe.compiled.ir_text


def _object(text):
    mod = engine.parse_and_verify(text)
    engine.optimize(mod)
    with engine.LOCK:
        return engine.target_machine().emit_object(mod)


def _groups_well_formed(text):
    """Every loop ID naming parallel accesses names a distinct group of its own, and
    each group tags loads or stores of one function only."""
    groups = re.findall(r'!"llvm\.loop\.parallel_accesses", (!\d+)', text)
    assert len(groups) == len(set(groups)) > 0
    for g in groups:
        assert re.search(rf"^{g} = distinct !\{{\}}$", text, re.M)
        users = [f for f in re.split(r"\ndefine ", text)
                 if re.search(rf"!llvm\.access\.group {g}\b", f)]
        assert len(users) == 1
    return groups


def test_long_kernels_mark_their_loops_parallel_with_the_same_object_code_and_values(monkeypatch):
    y = np.linspace(0.0, 1.0, 1000)
    f = ft.grad(_sin_chain(100))        # two kernels: the forward one saves 100 cosines
    marked = _text(f, y, 0.3)
    got = np.asarray(ft.jit(f)(y, 0.3))
    with monkeypatch.context() as m:
        m.setattr(kernels, "PARALLEL_LOOP_EQNS", 10 ** 9)
        plain = _text(f, y, 0.3)
        cache.clear_memory()
        want = np.asarray(ft.jit(f)(y, 0.3))
    assert "parallel_accesses" not in plain
    _groups_well_formed(marked)
    # the forward kernel stores the cosines into the workspace: each store is tagged
    fwd = next(k for k in re.split(r"\ndefine ", marked) if k.count("store double") >= 40)
    assert fwd.count("store double") == len(re.findall(r"store double .*access\.group", fwd))
    assert _object(marked) == _object(plain)
    np.testing.assert_array_equal(got, want)


def test_reductions_and_short_kernels_stay_unmarked():
    x = np.linspace(-1.0, 1.0, 64 * 300).reshape(64, 300)

    def rows(a):                 # a long chain summed along each row: a reduction kernel
        for _ in range(20):
            a = fnp.sin(a) * 0.5 + a * 0.25
        return fnp.sum(a, axis=1)
    assert "parallel_accesses" not in _text(rows, x)
    assert "parallel_accesses" not in _text(lambda a: fnp.sin(a) * 2.0 + 1.0, x)
    np.testing.assert_allclose(ft.jit(rows)(x), _rows_numpy(x), rtol=1e-12)


def _rows_numpy(a):
    for _ in range(20):
        a = np.sin(a) * 0.5 + a * 0.25
    return a.sum(axis=1)


def test_a_kernel_writing_over_a_donated_input_stays_unmarked():
    from backends import llvm as cpu
    x = np.linspace(-1.0, 1.0, 4096)

    def chain(a):
        for _ in range(20):
            a = fnp.sin(a) * 0.5 + a * 0.25
        return a
    cache.clear_memory()
    closed = ft.make_jaxpr(chain)(x)
    exe = cpu.compile(closed, donate=(0,))
    assert exe.compiled.aliases == {0: 0}          # the output is the input's buffer
    kernel = next(k for k in re.split(r"\ndefine ", exe.compiled.ir_text)
                  if "store double" in k)
    assert "noalias" not in kernel.split("\n", 1)[0] and "access.group" not in kernel
    want = x
    for _ in range(20):
        want = np.sin(want) * 0.5 + want * 0.25
    np.testing.assert_allclose(exe(np.array(x))[0], want, rtol=1e-12)
