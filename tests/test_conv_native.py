"""``conv_general_dilated`` on the CPU backend (``backends/llvm/conv.py``: shifted GEMMs,
few taps or few outputs) against the interpreter (the numpy impl) over a table of
configurations: padding (negative pads crop), kernel dilation, feature and batch
groups, dimension numbers, 1-D to 3-D, float32/float64, batch 1, a literal operand;
window strides, lhs dilation; the gradients through ``jit``; the common 3x3 compiling
with no host step, inside a loop body too."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from backends.llvm import blas
from functrans import lax
from tests.data.jax_lax_extra_cases import CONV_CASES

# (lhs shape, rhs shape, keyword arguments of lax.conv_general_dilated)
CASES = [
    # 16+ channels per group: one GEMM per tap on shifted views of the padded image
    # (16+ output channels: rows of the GEMMs; fewer: the GEMMs transposed)
    ((3, 16, 9, 8), (16, 16, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
    ((2, 32, 7, 6), (6, 16, 3, 2), dict(window_strides=(1, 1), padding=((2, -1), (-1, 3)),
                                        rhs_dilation=(2, 1), feature_group_count=2)),
    ((4, 16, 5, 5), (4, 16, 3, 3), dict(window_strides=(1, 1), padding=((2, 2), (1, 2)),
                                        lhs_dilation=(2, 1), batch_group_count=2)),
    # fewer: one im2col GEMM per image and group
    ((3, 4, 9, 8), (5, 4, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
    ((1, 4, 9, 8), (5, 4, 3, 3), dict(window_strides=(1, 1), padding="SAME")),      # batch 1
    ((2, 3, 7, 6), (4, 3, 2, 3), dict(window_strides=(1, 1), padding="VALID")),
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(1, 1), padding=((2, -1), (-1, 3)))),
    ((2, 3, 9, 9), (4, 3, 3, 3), dict(window_strides=(1, 1), padding=((1, 2), (0, 0)),
                                      rhs_dilation=(2, 3))),
    ((2, 6, 8, 7), (6, 3, 3, 3), dict(window_strides=(1, 1), padding="SAME",
                                      feature_group_count=2)),
    ((2, 4, 6, 6), (4, 1, 3, 3), dict(window_strides=(1, 1), padding="SAME",
                                      feature_group_count=4)),                     # depthwise
    ((6, 3, 7, 6), (4, 3, 3, 3), dict(window_strides=(1, 1), padding=((1, 1), (2, 0)),
                                      batch_group_count=2)),
    ((2, 8, 8, 3), (3, 3, 3, 5), dict(window_strides=(1, 1), padding="SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((7, 2, 3), (3, 2, 5), dict(window_strides=(1,), padding=((1, 2),), rhs_dilation=(2,),
                                dimension_numbers=("WCN", "WIO", "CWN"))),
    ((2, 3, 11), (4, 3, 5), dict(window_strides=(1,), padding=((0, 0),))),
    ((2, 2, 5, 4, 6), (3, 2, 2, 3, 2), dict(window_strides=(1, 1, 1), padding="SAME")),
    ((3, 4, 5, 5), (2, 4, 1, 1), dict(window_strides=(1, 1), padding="VALID")),     # 1x1
    # few outputs (a kernel larger than the output: the kernel-gradient shape)
    ((3, 2, 8, 8), (4, 2, 7, 6), dict(window_strides=(1, 1), padding=((1, 1), (0, 1)))),
    ((4, 3, 6, 6), (2, 3, 5, 5), dict(window_strides=(1, 1), padding="VALID",
                                      batch_group_count=2)),
    ((2, 4, 6, 6), (4, 2, 5, 6), dict(window_strides=(1, 1), padding=((0, 0), (1, 0)),
                                      feature_group_count=2, rhs_dilation=(1, 1))),
    ((72, 2, 15, 18), (3, 2, 9, 9), dict(window_strides=(1, 1), padding="VALID")),   # N'*Y big
    # window strides (a tap's windows gathered), lhs dilation (a dilated grid)
    ((2, 3, 9, 8), (16, 3, 3, 3), dict(window_strides=(2, 1), padding="SAME")),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(window_strides=(1, 1), padding=((2, 2), (2, 2)),
                                      lhs_dilation=(2, 2))),
    ((2, 4, 9, 10), (6, 2, 3, 2), dict(window_strides=(2, 3), padding=((1, -1), (3, 0)),
                                       lhs_dilation=(2, 1), rhs_dilation=(1, 2),
                                       feature_group_count=2)),
    ((4, 3, 7, 7), (4, 3, 3, 3), dict(window_strides=(3, 2), padding=((-2, 1), (0, 2)),
                                      lhs_dilation=(3, 2), batch_group_count=2)),
    ((2, 3, 11), (2, 3, 6), dict(window_strides=(2,), padding=((0, 0),))),       # few outputs
    ((2, 3, 4, 4), (5, 3, 1, 1), dict(window_strides=(1, 1), padding=((-1, -1), (-2, 0)),
                                      lhs_dilation=(3, 2))),                       # holes
    # lhs dilation, 16+ channels: split by output phase over the undilated image
    ((2, 16, 5, 4), (18, 16, 3, 2), dict(window_strides=(1, 1), padding=((2, -1), (3, 1)),
                                         lhs_dilation=(3, 2), rhs_dilation=(2, 1))),
    ((2, 16, 9, 9), (16, 16, 3, 3), dict(window_strides=(2, 2), padding="SAME")),  # its grads
]


def _data(xs, ws, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype))


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("j,dtype", [(j, np.float64) for j in range(len(CASES))]
                         + [(j, np.float32) for j in (0, 1, 2, 4, 11, 17, 20, 24, 26)])
def test_jit_equals_interpreter(j, dtype):
    xs, ws, kw = CASES[j]
    x, w = _data(xs, ws, dtype, j)
    f = lambda x, w: lax.conv_general_dilated(x, w, **kw)
    jf = ft.jit(f)
    got = np.asarray(jf(x, w))
    with ft.disable_jit():
        want = np.asarray(f(x, w))
    assert got.dtype == want.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **_tol(dtype))
    steps = jf.lower(x, w).compile().cost_analysis()["host steps"]
    assert steps == (0 if blas.available() else 1), (kw, steps)


@pytest.mark.parametrize("j", [0, 20, 24, 27] + [pytest.param(j, marks=pytest.mark.slow)
                                             for j in (1, 2, 6, 8, 11, 17, 22, 26)])
def test_jit_gradients_equal_interpreter(j):
    xs, ws, kw = CASES[j]
    x, w = _data(xs, ws, np.float64, 100 + j)
    ct = np.random.default_rng(j).standard_normal(
        np.shape(lax.conv_general_dilated(x, w, **kw)))

    def loss(x, w):
        return (lax.conv_general_dilated(x, w, **kw) * ct).sum()
    got = ft.jit(ft.grad(loss, argnums=(0, 1)))(x, w)
    with ft.disable_jit():
        want = ft.grad(loss, argnums=(0, 1))(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("j", range(len(CONV_CASES)))
def test_jit_matches_jax_reference(j):
    """The JAX 0.10.2 values of test_lax_extra, through jit(vjp)."""
    import os
    r = np.load(os.path.join(os.path.dirname(__file__), "data", "jax_conv_reference.npz"))
    kw = CONV_CASES[j]["kw"]

    def f(x, w, ct):
        y, vjp = ft.vjp(lambda x, w: lax.conv_general_dilated(x, w, **kw), x, w)
        return (y,) + tuple(vjp(ct))
    outs = ft.jit(f)(r[f"x{j}"], r[f"w{j}"], r[f"ct{j}"])
    for got, key in zip(outs, ("y", "gx", "gw")):
        np.testing.assert_allclose(np.asarray(got), r[f"{key}{j}"], rtol=1e-10, atol=1e-12,
                                   err_msg=key)


def test_resnet_3x3_and_its_gradient_have_no_host_step():
    x, w = _data((2, 8, 6, 6), (8, 8, 3, 3), np.float32, 0)

    def loss(x, w):
        y = lax.conv(x, w, (1, 1), "SAME")
        return (y * y).sum()
    for f in (lambda x, w: lax.conv(x, w, (1, 1), "SAME"), ft.grad(loss, argnums=(0, 1))):
        assert ft.jit(f).lower(x, w).compile().cost_analysis()["host steps"] == 0


def test_conv_in_a_loop_body_stays_native():
    x, w = _data((2, 3, 6, 6), (3, 3, 3, 3), np.float64, 1)
    w = w * 0.2

    def f(x, w):
        return lax.fori_loop(0, 3, lambda i, y: fnp.tanh(lax.conv(y, w, (1, 1), "SAME")), x)
    jf = ft.jit(f)
    assert jf.lower(x, w).compile().cost_analysis()["host steps"] == 0
    with ft.disable_jit():
        want = np.asarray(f(x, w))
    np.testing.assert_allclose(np.asarray(jf(x, w)), want, rtol=1e-12, atol=1e-12)


def test_literal_kernel_and_vmap():
    """A kernel built from a literal (a broadcast scalar: no buffer) and a vmapped
    convolution (batched into more groups) compile natively and agree."""
    x, w = _data((3, 2, 4, 7, 7), (3, 4, 3, 3), np.float32, 2)

    def f(x):
        return lax.conv(x, fnp.full((3, 4, 3, 3), 0.5, np.float32), (1, 1), "SAME")
    g = ft.vmap(lambda x, w: lax.conv(x, w, (1, 1), "SAME"), in_axes=(0, None))
    for fn, args in ((f, (x[0],)), (g, (x, np.stack([w] * 1)[0]))):
        jf = ft.jit(fn)
        assert jf.lower(*args).compile().cost_analysis()["host steps"] == 0
        with ft.disable_jit():
            want = np.asarray(fn(*args))
        np.testing.assert_allclose(np.asarray(jf(*args)), want, rtol=2e-5, atol=2e-5)


def test_same_bits_on_one_thread_and_on_the_pool(monkeypatch):
    """The kernel cotangent sums its features in fixed blocks and the forward pass one
    image per work item: the pool's thread count does not change a bit of the result."""
    from backends.llvm import threads
    x, w = _data((4, 6, 9, 9), (5, 6, 3, 3), np.float32, 3)

    def loss(x, w):
        y = lax.conv(x, w, (1, 1), "SAME")
        return (y * fnp.sin(y)).sum()
    f = ft.jit(ft.value_and_grad(loss, argnums=(0, 1)))
    monkeypatch.setattr(threads, "balance", lambda now=None: threads._NTHREADS.value)
    runs = []
    for n in (1, threads.num_threads()):
        monkeypatch.setattr(threads._NTHREADS, "value", n)
        runs.append([np.asarray(v) for v in ft.tree_util.tree_leaves(f(x, w))])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
