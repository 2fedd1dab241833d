"""lax operand rules JAX 0.10.2 has and functrans raised on (session 31), with values
JAX 0.10.2 computed (x64 on), stored here: lax.max/min on complex, lax.conj of real
arrays, lax.pow with an integer exponent array."""
import numpy as np

import functrans as ft
from functrans import lax

NAN = np.nan


def test_max_min_complex_lexicographic_with_jax_derivatives():
    x = np.complex64([1 + 2j, 1 + 1j, 2 + 0j, 1 + 1j, NAN + 0j, 1 + NAN * 1j])
    y = np.complex64([1 + 1j, 0 + 5j, 2 + 0j, 1 + 3j, 0j, 5 + 0j])
    # JAX: the pick is x where the comparison holds, so a NaN part loses
    np.testing.assert_array_equal(lax.max(x, y), [1 + 2j, 1 + 1j, 2, 1 + 3j, 0, 5])
    np.testing.assert_array_equal(lax.min(x, y), [1 + 1j, 5j, 2, 1 + 1j, 0, 5])
    np.testing.assert_array_equal(ft.jit(lax.min)(x, y), [1 + 1j, 5j, 2, 1 + 1j, 0, 5])
    out, t = ft.jvp(lax.max, (x, y), (np.ones(6, np.complex64), np.full(6, 2j, np.complex64)))
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(t, [1, 1, 0.5 + 1j, 2j, 2j, 2j])   # JAX's; tie split
    g = ft.grad(lambda a, b: lax.max(a, b).real, argnums=(0, 1))(np.complex64(1 + 2j),
                                                                np.complex64(1 + 3j))
    np.testing.assert_array_equal(g, [0, 1])
    z = np.complex64([1 + 2j, 1 + 3j, 1 + 3j])
    np.testing.assert_array_equal(ft.grad(lambda a: lax.reduce_max(a, (0,)).real)(z),
                                  [0, 0.5, 0.5])
    np.testing.assert_array_equal(ft.vmap(lax.max)(x[None], y[None])[0], lax.max(x, y))


def test_conj_of_real_is_complex_as_jax():
    x = np.float32([1.0, 2.0])
    z = lax.conj(x)
    assert z.dtype == np.complex64 and lax.conj(np.float64(1)).dtype == np.complex128
    np.testing.assert_array_equal(z, [1, 2])
    p, t = ft.jvp(lax.conj, (x,), (np.float32([3.0, 4.0]),))
    assert t.dtype == np.complex64
    np.testing.assert_array_equal(t, [3, 4])
    (ct,) = ft.vjp(lax.conj, x)[1](np.complex64([1 + 2j, 3 - 1j]))
    assert ct.dtype == np.float32
    np.testing.assert_array_equal(ct, [1, 3])                        # JAX: real(ct)
    assert ft.grad(lambda v: lax.conj(v).imag)(np.float32(1.0)) == 0
    assert ft.grad(lambda v: (lax.conj(v) * (1 + 2j)).real)(np.float64(1.0)) == 1
    assert str(lax.conj(np.float64(-0.0))) == "(-0+0j)"
    for bad in (np.int32([1]), np.array([True]), np.float16([1.0])):
        try:
            lax.conj(bad)
        except TypeError:
            continue
        raise AssertionError(f"lax.conj({bad.dtype}) should raise, as JAX's")


def test_pow_integer_exponent_array_as_jax():
    x = np.float32([1.5, -2.0, 0.0, 0.0, 3.0, -0.5])
    n = np.int64([2, 3, 0, -1, -2, 5])
    v = lax.pow(x, n)
    assert v.dtype == np.float32
    np.testing.assert_allclose(v, [2.25, -8, 1, np.inf, 0.11111111, -0.03125], rtol=1e-7)
    t = ft.jvp(lambda a: lax.pow(a, n), (x,), (np.ones_like(x),))[1]
    want = [3, 12, 0, -np.inf, -0.07407407, 0.3125]
    np.testing.assert_allclose(t, want, rtol=1e-6)
    np.testing.assert_allclose(ft.grad(lambda a: lax.pow(a, n).sum())(x), want, rtol=1e-6)
    d2 = ft.jacfwd(ft.grad(lambda a: lax.pow(a, n).sum()))(x).diagonal()
    np.testing.assert_allclose(d2, [2, -12, 0, np.inf, 0.07407407, -2.5], rtol=1e-6)
    np.testing.assert_allclose(lax.pow(np.complex128([1 + 1j, 2j]), np.int32([3, -2])),
                               [-2 + 2j, -0.25], atol=1e-15)
    assert lax.pow(np.float64([2.0]), np.uint8([3])).dtype == np.float64
    np.testing.assert_array_equal(ft.vmap(lax.pow)(np.float64([[2, 3]]), np.int32([[3, 2]])),
                                  [[8, 9]])
    np.testing.assert_array_equal(ft.jit(lax.pow)(np.float64([2, 3]), np.int32(3)), [8, 27])
    assert lax.pow(2.0, 3) == 8.0


def test_pow_odd_exponent_beyond_float_range_keeps_sign():
    """JAX converts the exponent to the base's dtype: 16777217 becomes 16777216 in
    float32 and (-1)**16777217 comes out +1; the maths (and this) give -1."""
    x = np.float32([-1, -1, -0.0, 1.0000001, -1])
    n = np.int64([16777217, 16777216, -16777217, 16777217, -2 ** 63])
    got = lax.pow(x, n)
    np.testing.assert_allclose(got, [-1, 1, -np.inf, 7.3890553, 1], rtol=1e-6)
    np.testing.assert_array_equal(ft.jit(lax.pow)(x, n), got)
    assert lax.pow(np.float32([-1]), np.uint64([2 ** 64 - 1]))[0] == -1
    assert lax.pow(np.float64([-1]), np.int64([2 ** 53 + 1]))[0] == -1
    # d/dx x**n = n x**(n-1) = n at x = -1 for odd n
    assert ft.grad(lambda a: lax.pow(a, np.int64(16777217)))(np.float32(-1.0)) == 16777216.0


# --------------------------------------------------------------------------- signatures
# JAX 0.10.2's parameter names of every public jax.lax function (inspect.signature,
# tests/data/jax_lax_signatures.json): functrans.lax takes each by keyword, and in
# JAX's positional order, except where listed here with the reason.
SIGNATURE_LEFT = {
    "all_gather": "to=: collectives are the distributed helper's area (session 31)",
    "scan": "_split_transpose: a private flag of JAX's scan transpose",
    "random_gamma_grad": "JAX's signature is (*args)",
}
_SKIP_PARAMS = {"out_sharding", "sharding"}   # no sharding of single results here


def _jax_signatures():
    import json
    import os
    path = os.path.join(os.path.dirname(__file__), "data", "jax_lax_signatures.json")
    with open(path) as f:
        return json.load(f)


def test_lax_functions_take_jax_parameter_names():
    import inspect
    bad = []
    for name, params in _jax_signatures().items():
        if name in SIGNATURE_LEFT or not hasattr(lax, name):
            continue
        sig = inspect.signature(getattr(lax, name))
        ours = [p.name for p in sig.parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        theirs = [n for n, kind in params if n not in _SKIP_PARAMS]
        if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            continue
        missing = [n for n in theirs if n not in ours]
        positional = [n for n, kind in params if kind != "KEYWORD_ONLY"]
        order = [n for n in ours if n in positional] != [n for n in positional if n in ours]
        if missing or order:
            bad.append((name, missing, ours, theirs))
    assert not bad, bad
    assert not [n for n in SIGNATURE_LEFT if n not in _jax_signatures()]


def test_jax_keyword_names_run():
    x = np.arange(6.0)
    np.testing.assert_array_equal(lax.full(shape=(2,), fill_value=3.0), [3.0, 3.0])
    np.testing.assert_array_equal(lax.clamp(min=1.0, x=x, max=3.0), np.clip(x, 1, 3))
    np.testing.assert_array_equal(lax.slice(operand=x, start_indices=(1,), limit_indices=(3,)),
                                  [1.0, 2.0])
    np.testing.assert_array_equal(lax.squeeze(array=x[None], dimensions=(0,)), x)
    np.testing.assert_array_equal(lax.expand_dims(array=x, dimensions=(0,)), x[None])
    np.testing.assert_array_equal(lax.reduce_sum(operand=x, axes=(0,)), 15.0)
    np.testing.assert_array_equal(lax.dynamic_slice(operand=x, start_indices=(4,),
                                                    slice_sizes=(2,)), [4.0, 5.0])
    np.testing.assert_array_equal(lax.dynamic_update_slice(operand=x, update=x[:1],
                                                           start_indices=(5,))[-1], 0.0)
    np.testing.assert_array_equal(lax.pad(operand=x[:2], padding_value=0.0,
                                          padding_config=((1, 0, 0),)), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(lax.transpose(operand=x.reshape(2, 3), permutation=(1, 0)),
                                  x.reshape(2, 3).T)
    # lax.polygamma(m, x): a floating order, as JAX's (values from JAX 0.10.2)
    np.testing.assert_allclose(lax.polygamma(m=np.array([0.0, 1.0, 2.5]), x=np.arange(1.0, 4)),
                               [-0.5772156649015329, 0.6449340668482264, np.nan], rtol=1e-13)
    np.testing.assert_allclose(ft.grad(lambda v: lax.polygamma(1.0, v))(2.0),
                               -0.40411380631918803, rtol=1e-13)
    try:
        lax.polygamma(1, 1.0)
    except TypeError:
        pass
    else:
        raise AssertionError("lax.polygamma with an integer order should raise, as JAX's")


def test_mul_out_dtype_and_accuracy_as_jax():
    x, y = np.float32([1.1, 3.3]), np.float32([1.3, 7.7])
    r = lax.mul(x, y, out_dtype=np.float64)          # JAX: exact products of the f32 values
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r, x.astype(np.float64) * y.astype(np.float64))
    np.testing.assert_array_equal(lax.mul(x, y, out_dtype=np.int32), [1, 21])   # JAX's
    np.testing.assert_array_equal(lax.mul(np.int8([100]), np.int8([3]), out_dtype=np.int32),
                                  [300])
    g = ft.grad(lambda a: lax.mul(a, np.float32(3), out_dtype=np.float64).sum())(np.float32(2))
    assert g == 3.0 and g.dtype == np.float32
    v = np.float32([0.5, 1.0])
    for acc in (None, lax.AccuracyMode.HIGHEST, lax.AccuracyMode.DEFAULT,
                lax.Tolerance(atol=1e-3, rtol=1e-3, ulps=2)):
        np.testing.assert_array_equal(lax.exp(v, accuracy=acc), lax.exp(v))
        np.testing.assert_array_equal(ft.jit(lambda u: lax.tanh(u, accuracy=acc))(v),
                                      ft.jit(lax.tanh)(v))
    for bad in ("bad", 3):
        try:
            lax.sin(v, accuracy=bad)
        except NotImplementedError:
            continue
        raise AssertionError("an unknown accuracy must raise NotImplementedError, as JAX's")
    try:
        lax.Tolerance(atol=-1.0)
    except ValueError:
        pass
    else:
        raise AssertionError("a negative tolerance must raise ValueError, as JAX's")


# --------------------------------------------------------------------------- fori_loop
def test_fori_loop_bounds_as_jax():
    """JAX 0.10.2: float bounds run (concrete ones truncate with int(); the counter is a
    weak integer from int(lower)), traced float bounds count in floats; bounds of two
    dtypes raise unless one is a Python int next to a signed integer; unroll needs
    static bounds (testStaticForiGrad, testForiLoopErrors,
    test_fori_loop_with_dynamic_indices_cannot_unroll). Values from JAX 0.10.2."""
    import pytest
    seen = []

    def body(i, x):
        seen.append((i.dtype, i.weak_type))
        return x + i
    assert lax.fori_loop(0.0, 3.0, body, 0.0) == 3.0
    assert seen[-1] == (np.int64, True)
    assert lax.fori_loop(0.5, 2.7, lambda i, x: x + i, 0.0) == 1.0
    assert lax.fori_loop(-2.5, 1.5, lambda i, x: x + i, 0.0) == -3.0
    assert lax.fori_loop(np.float32(0), np.float32(3), lambda i, x: x + i, 0.0) == 3.0
    assert lax.fori_loop(np.int16(0), 3, lambda i, x: x + i, 0.0) == 3.0
    assert lax.fori_loop(False, True, lambda i, x: x + 1, 0) == 1
    assert ft.jit(lambda lo, hi: lax.fori_loop(lo, hi, lambda i, x: x + i, 0.0))(0.5, 3.0) == 4.5
    # JAX testStaticForiGrad: d/dx of x**3 by a float-bounded loop
    assert ft.grad(lambda x: lax.fori_loop(0.0, 3.0, lambda i, c: c * x, 1.0))(2.0) == 12.0
    for lo, hi in ((np.int16(0), np.int32(3)), (np.uint16(0), np.uint32(3)), (0.0, 3)):
        with pytest.raises(TypeError, match="must have equal types"):
            lax.fori_loop(lo, hi, lambda i, x: x, 0)
    with pytest.raises(ValueError, match="static loop bounds"):
        ft.jit(lambda hi: lax.fori_loop(0, hi, lambda i, x: x + i, 0, unroll=2))(3)
    for u in (1, True, False, None):
        assert ft.jit(lambda hi: lax.fori_loop(0, hi, lambda i, x: x + i, 0, unroll=u))(3) == 3
    # a Python int next to a traced int32 bound: the loop counts in int32 (JAX's)
    dts = []
    ft.jit(lambda hi: lax.fori_loop(0, hi, lambda i, x: (dts.append(i.dtype), x)[1], 0.0))(
        np.int32(3))
    assert dts[-1] == np.int32


def test_switch_operand_keyword_as_jax():
    fs = [lambda x: x + 1, lambda x: x * 2]
    assert lax.switch(1, fs, operand=3.0) == 6.0             # JAX 0.10.2: 6.0
    assert ft.jit(lambda i: lax.switch(i, fs, operand=3.0))(0) == 4.0
    try:
        lax.switch(1, fs, 2.0, operand=3.0)
    except TypeError:
        return
    raise AssertionError("operand= with positional operands should raise, as JAX's")


def test_dot_dimension_numbers_as_jax():
    a, b = np.arange(30.0).reshape(5, 2, 3), np.arange(60.0).reshape(5, 3, 4)
    dn = (((2,), (1,)), ((0,), (0,)))
    np.testing.assert_array_equal(lax.dot(a, b, dimension_numbers=dn), np.matmul(a, b))
    np.testing.assert_array_equal(
        lax.dot(np.ones((2, 3)), np.ones((3, 4)), dimension_numbers=(((1,), (0,)), ((), ()))),
        np.full((2, 4), 3.0))
    g = ft.grad(lambda x: lax.dot(x, b, dimension_numbers=dn,
                                  precision=lax.Precision.HIGHEST).sum())(a)
    np.testing.assert_array_equal(g, np.broadcast_to(b.sum(-1)[:, None, :], a.shape))


def test_conv_transpose_use_consistent_padding_as_jax():
    """JAX 0.10.2 conv_transpose(use_consistent_padding=True): explicit pairs are the
    forward convolution's padding. Inputs drawn as below; outputs stored from JAX
    (tests/data/jax_conv_transpose_consistent.npz, x64)."""
    import os
    ref = np.load(os.path.join(os.path.dirname(__file__), "data",
                               "jax_conv_transpose_consistent.npz"))
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 5, 2)), rng.standard_normal((3, 2, 4))
    x2, w2 = rng.standard_normal((1, 4, 5, 2)), rng.standard_normal((3, 2, 3, 2))
    cases = (([(1, 1)], (2,), None), ([(0, 2)], (1,), (2,)), ([(2, 0)], (3,), None),
             ("SAME", (2,), None))
    for i, (pad, st, dil) in enumerate(cases):
        y = lax.conv_transpose(x, w, st, pad, rhs_dilation=dil, use_consistent_padding=True)
        np.testing.assert_allclose(y, ref[f"arr_{i}"], rtol=1e-13, atol=1e-14)
    y = lax.conv_transpose(x2, w2, (2, 1), [(1, 0), (1, 1)], transpose_kernel=True,
                           use_consistent_padding=True)
    np.testing.assert_allclose(y, ref["arr_4"], rtol=1e-13, atol=1e-14)
    # without the flag explicit pairs pad the transposed convolution (unchanged)
    # (shapes from JAX 0.10.2)
    assert lax.conv_transpose(x, w, (2,), [(0, 3)]).shape == (1, 10, 4)
    assert lax.conv_transpose(x, w, (2,), [(0, 3)], use_consistent_padding=True).shape == \
        (1, 8, 4)
