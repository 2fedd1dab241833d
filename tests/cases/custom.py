"""Rows for the custom-derivative and rematerialisation primitives: custom_jvp_call,
custom_vjp_call (and custom_vjp_lin, reached by forward mode), checkpoint, stop_gradient."""
from __future__ import annotations

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen, randn


@ft.custom_jvp
def _sin_times(x, y):
    return fnp.sin(x) * y


@_sin_times.defjvp
def _sin_times_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _sin_times(x, y), fnp.cos(x) * y * tx + fnp.sin(x) * ty


@ft.custom_vjp
def _tanh_times(x, y):
    return lax.tanh(x) * y


def _tanh_times_fwd(x, y):
    t = lax.tanh(x)
    return t * y, (t, y)


def _tanh_times_bwd(res, ct):
    t, y = res
    return ((1.0 - t * t) * y * ct, t * ct)


_tanh_times.defvjp(_tanh_times_fwd, _tanh_times_bwd)

_ckpt = ft.checkpoint(lambda x, y: lax.tanh(fnp.sin(x) * y) * x)
_ckpt_dots = ft.checkpoint(lambda a, b: lax.tanh(fnp.matmul(a, b)),
                           policy=ft.checkpoint_policies.dots_saveable)

CASES = [
    OpCase("custom_jvp_call", _sin_times, gen(randn(3), randn(3)),
           ref=lambda x, y: np.sin(x) * y),
    OpCase("custom_jvp_call_scalar", _sin_times, [np.float64(0.3), np.float64(-1.5)],
           ref=lambda x, y: np.sin(x) * y),
    OpCase("custom_vjp_call", _tanh_times, gen(randn(2, 3), randn(2, 3)),
           ref=lambda x, y: np.tanh(x) * y),
    OpCase("checkpoint", _ckpt, gen(randn(4), randn(4)),
           ref=lambda x, y: np.tanh(np.sin(x) * y) * x),
    OpCase("checkpoint_dots_saveable", _ckpt_dots, gen(randn(2, 3), randn(3, 4)),
           ref=lambda a, b: np.tanh(a @ b)),
    OpCase("checkpoint_name", lambda x: ft.checkpoint_name(fnp.sin(x), "s") * x,
           gen(randn(2, 3)), ref=lambda x: np.sin(x) * x),
    # its derivative is zero by definition, which finite differences cannot see
    OpCase("stop_gradient", ft.stop_gradient, gen(randn(2, 3)), ref=lambda x: x, diff=False),
]
