"""The vectorisation width a kernel's tail-folded loop is told (``KernelEmitter._fold_width``)
is the one LLVM's loop vectoriser picks by itself on this host: the optimised IR with the
width given equals the optimised IR without it. A program that is one long flat kernel over
at most ``vmath.LIBRARY_MAX_ELEMENTS`` elements has such a loop."""
import re

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from backends.llvm import engine

WIDTH = re.compile(r'!\{ ?!"llvm\.loop\.vectorize\.width", i32 (\d+) ?\}')


def _chain(step, n=10):
    def f(y, c):
        for _ in range(n):
            y = step(y, c)
        return fnp.sum(y)
    return f


CASES = {
    "sin chain grad f64": (ft.grad(_chain(lambda y, c: fnp.sin(y) * 0.5 + y * c)),
                           np.linspace(0.0, 1.0, 1000), 0.3),
    "sin chain grad f32": (ft.grad(_chain(lambda y, c: fnp.sin(y) * 0.5 + y * c)),
                           np.linspace(0.0, 1.0, 1000, dtype=np.float32), np.float32(0.3)),
    "polynomial grad f64": (ft.grad(_chain(lambda y, c: y * y * 0.25 - y * c + 1.0)),
                            np.linspace(-1.0, 1.0, 777), 0.3),
    "where and exp f32": (ft.grad(_chain(lambda y, c: fnp.where(y > c, fnp.exp(-y), y * c))),
                          np.linspace(-1.0, 1.0, 500, dtype=np.float32), np.float32(0.1)),
    "pow chain f64": (ft.grad(_chain(lambda y, c: (1.0 + y * y) ** c - y * 0.5, 8)),
                      np.linspace(0.1, 1.0, 1000), 0.7),
}


def _before_after(text):
    before, after = text.split("; ---- LLVM IR after optimisation", 1)
    return before.split("\n", 1)[1], after


def _code(opt_text):
    """The instructions of the optimised module, without metadata and attribute lines."""
    lines = [re.sub(r", !(llvm\.loop|llvm\.access\.group|alias\.scope|noalias|prof) ![0-9]+",
                    "", ln) for ln in opt_text.splitlines()]
    return [ln for ln in lines if ln and not ln.startswith(("!", "attributes", ";"))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_told_width_is_the_vectorisers_choice(name):
    f, *args = CASES[name]
    text = ft.jit(f).lower(*args).compile().as_text()
    before, _ = _before_after(text)
    widths = WIDTH.findall(before)
    if engine.vector_bits(False) is None and engine.vector_bits(True) is None:
        assert not widths            # no AVX, or an AVX-512 CPU of unknown tuning
        return
    assert len(widths) == 1, name    # the program is one kernel with one folded loop
    told = str(engine.optimize(engine.parse_and_verify(before)))
    untold = WIDTH.sub('!{ !"ft.width.untold" }', before)
    chosen = str(engine.optimize(engine.parse_and_verify(untold)))
    assert f"x {'double' if 'f64' in name else 'float'}>" in chosen    # vectorised at all
    assert _code(told) == _code(chosen), name


def test_mixed_precision_loop_is_not_told():
    """float32 values read from float64 buffers: the widest type decides, the width is not
    certain enough to tell."""
    def f(y):
        z = y.astype(np.float32)
        for _ in range(20):
            z = fnp.sin(z) * np.float32(0.5) + z
        return (z.astype(np.float64) * y).sum()
    text = ft.jit(ft.grad(f)).lower(np.linspace(0.0, 1.0, 1000)).compile().as_text()
    assert not WIDTH.findall(_before_after(text)[0])


def test_vector_bits_table():
    """512 only where the function asks for wide vectors on an AVX-512 host; None where
    LLVM's own choice is not known."""
    cpu, features, wide = engine._host_cpu()
    avx512 = "+avx512f" in features.split(",")
    assert engine.vector_bits(True) == (512 if avx512 else None)
    if avx512:
        assert engine.vector_bits(False) in (256, None)
        assert (engine.vector_bits(False) == 256) == (cpu in engine._PREFER_256_NAMES)
