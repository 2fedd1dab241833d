"""Object code reused across shapes (issue 15): a program that is one flat kernel over
at most ``vmath.LIBRARY_MAX_ELEMENTS`` elements reads its element count from an array at
run time, so its IR, and the object code cached by IR text, serve every such count; a
recompile for a new shape then runs no LLVM. Values must be those of a kernel compiled
for the shape itself. (Times are measured in benchmarks/compile.py.)"""
from __future__ import annotations

import re

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from backends.llvm import cache, program, vmath


@pytest.fixture
def no_disk_cache():
    old = cache.cache_dir
    cache.cache_dir = lambda: None
    cache.clear_memory()
    yield
    cache.cache_dir = old
    cache.clear_memory()


def _own_kernel(monkeypatch, f, *args):
    """``f(*args)`` from a kernel compiled for these shapes with constant counts."""
    with monkeypatch.context() as m:
        m.setattr(program, "count_source", lambda plan, kernel, env: None)
        # jit's caches too: fresh wrappers of one function share its executables (4e7f60c)
        ft.clear_caches()
        cache.clear_memory()
        y = np.asarray(ft.jit(f)(*args))
        ft.clear_caches()
        cache.clear_memory()
    return y


def _compiles():
    return cache.stats["compiles"]


def test_a_new_shape_reuses_the_object_code_and_gives_the_same_values(no_disk_cache,
                                                                       monkeypatch):
    def fn(x, c):
        return fnp.exp(fnp.sin(x) * c) - x
    for dtype in (np.float64, np.float32):
        refs = {}
        shapes = [(3,), (7,), (16,), (17,), (100,), (1024,), (4, 5), (2, 3, 7), (1, 9)]
        for shape in shapes:
            x = np.linspace(-4.0, 4.0, int(np.prod(shape))).reshape(shape).astype(dtype)
            refs[shape] = (x, _own_kernel(monkeypatch, fn, x, dtype(0.5)))
        f = ft.jit(fn)
        f(np.ones(5, dtype), dtype(2.0))
        before = _compiles()
        for shape in shapes:
            x, ref = refs[shape]
            y = np.asarray(f(x, dtype(0.5)))
            assert y.shape == shape and y.dtype == dtype
            np.testing.assert_array_equal(y, ref)
        # one object per rank (rank 1 compiled above): (4, 5) and (1, 9) share one
        assert _compiles() - before == 2


def test_reuse_within_a_rank_compiles_nothing(no_disk_cache):
    f = ft.jit(lambda x, c: fnp.exp(x) * c - 1.0)
    f(np.ones(20, np.float32), np.float32(2.0))
    before = _compiles()
    for n in (17, 64, 999, 1024):
        x = np.linspace(-2.0, 2.0, n).astype(np.float32)
        np.testing.assert_allclose(np.asarray(f(x, np.float32(0.5))), np.exp(x) * 0.5 - 1.0,
                                   rtol=2e-6, atol=1e-6)
    assert _compiles() == before


def test_reductions_read_the_count_from_their_input(no_disk_cache):
    f = ft.jit(lambda x: fnp.sum(fnp.cos(x) * x))
    f(np.ones(8))
    before = _compiles()
    for n in (5, 9, 33, 1000):
        x = np.linspace(0.1, 3.0, n)
        np.testing.assert_allclose(float(f(x)), np.sum(np.cos(x) * x), rtol=1e-13)
    assert _compiles() == before


def test_a_sliced_input_is_read_at_its_offset_for_the_outputs_count(no_disk_cache):
    f = ft.jit(lambda x: fnp.sin(x[2:]) + 1.0)
    for n in (6, 11, 40):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(x[2:]) + 1.0, rtol=1e-15)


def test_larger_kernels_and_programs_of_several_steps_keep_their_constant_counts(
        no_disk_cache):
    big = vmath.LIBRARY_MAX_ELEMENTS + 1
    f = ft.jit(lambda x: fnp.sin(x) * 2.0)
    text = f.lower(np.ones(big)).compile().exe.as_text()
    assert re.search(rf'icmp ult i64 %"[^"]+", {big}\n', text)      # a constant count
    f(np.ones(big))
    before = _compiles()
    f(np.ones(big + 1))
    assert _compiles() == before + 1            # no reuse beyond the library's size
    g = ft.jit(lambda a, b: fnp.tanh(a @ b) + 1.0)
    for n in (3, 4):
        a, b = np.linspace(0, 1, 2 * n).reshape(n, 2), np.ones((2, n))
        np.testing.assert_allclose(np.asarray(g(a, b)), np.tanh(a @ b) + 1.0, rtol=1e-15)


def _chain(x, c):
    for _ in range(9):            # 9 x (sin, mul, mul, add) + cos, sub: >= FOLD_TAIL_EQNS
        x = fnp.sin(x) * 0.5 + x * c
    return fnp.cos(x) - x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_long_counted_kernel_folds_its_tail_and_keeps_its_values(no_disk_cache,
                                                                   monkeypatch, dtype):
    """A run-time count over a long body: the loop's tail runs as masked vector
    iterations (no scalar copy of the body for LLVM to compile), with the values of a
    kernel compiled for the shape (whose tail is scalar) on every tail length."""
    from backends.llvm import kernels
    f = ft.jit(_chain)
    exe = f.lower(np.ones(100, dtype), dtype(0.3)).compile().exe
    (kernel,) = exe.plan.steps
    assert len(kernel.eqns) >= kernels.FOLD_TAIL_EQNS
    text = exe.as_text()
    optimised = text.split("after optimisation")[1]
    assert "llvm.loop.vectorize.predicate.enable" in text
    assert "llvm.masked.store" in optimised
    sfx = "f64" if dtype == np.float64 else "f32"
    scalar = "double" if dtype == np.float64 else "float"
    assert f"call {scalar} @ft_lib_sin_{sfx}(" not in optimised   # no scalar tail
    for n in (3, 8, 17, 100, 1023):
        x = np.linspace(-3.0, 3.0, n).astype(dtype)
        ref = _own_kernel(monkeypatch, _chain, x, dtype(0.3))
        np.testing.assert_array_equal(np.asarray(f(x, dtype(0.3))), ref)


def test_a_short_counted_kernel_keeps_its_unmasked_loop(no_disk_cache):
    f = ft.jit(lambda x: fnp.sin(x) * 2.0)     # masks would cost it ~8% of run time
    text = f.lower(np.ones(100)).compile().exe.as_text()
    assert "predicate.enable" not in text and "llvm.masked.store" not in text
