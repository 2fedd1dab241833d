"""A ResNet-style 3×3 convolution (batch 32, 64 → 64 channels, 32×32, 'SAME', float32,
NCHW/OIHW): ``jit(lax.conv)`` forward and ``jit(grad)`` of a sum of squares of it with
respect to both operands, against JAX's jitted same when installed (target: ≤ 1.5× JAX).
Without jax in the environment the workload reports functrans alone."""
from __future__ import annotations

import numpy as np

from .harness import Workload

N, C, O, H, W, K = 32, 64, 64, 32, 32, 3


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = (rng.standard_normal((O, C, K, K)) * 0.05).astype(np.float32)
    return x, w


def _candidates(make):
    x, w = _data()
    c = {}
    import functrans as ft
    from functrans import lax
    f = make(ft, lax)
    c["functrans jit"] = lambda: [np.asarray(v) for v in ft.tree_util.tree_leaves(f(x, w))]
    try:
        import jax
        from jax import lax as jlax
        g = make(jax, jlax)
        jx, jw = jax.numpy.asarray(x), jax.numpy.asarray(w)
        c["jax jit"] = lambda: jax.block_until_ready(g(jx, jw))
    except ImportError:
        pass
    return c


def _forward(ft, lax):
    return ft.jit(lambda x, w: lax.conv(x, w, (1, 1), "SAME"))


def _grad(ft, lax):
    def loss(x, w):
        y = lax.conv(x, w, (1, 1), "SAME")
        return (y * y).sum()
    return ft.jit(ft.grad(loss, argnums=(0, 1)))


def _within(ratios):
    return "jax jit" not in ratios or ratios["functrans jit"] <= 1.5 * ratios["jax jit"]


WORKLOADS = [
    Workload("conv 3x3 fwd (32x64x32x32 f32)", lambda: _candidates(_forward),
             baseline="functrans jit", target="≤ 1.5× JAX jit", check=_within, group="conv"),
    Workload("conv 3x3 grad x,w (32x64x32x32 f32)", lambda: _candidates(_grad),
             baseline="functrans jit", target="≤ 1.5× JAX jit", check=_within, group="conv"),
]
