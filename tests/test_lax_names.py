"""Every public name of jax.lax (tests/data/jax_lax_names.txt, listed once from JAX 0.10.2)
is in functrans.lax or in LEFT_OUT with the reason (README lists the same); and the rows
of the names added for it: ragged_dot / ragged_dot_general against a loop (value, both
gradients, vmap, jit), the bit-level functions bit for bit against JAX 0.10.2
(tests/data/jax_lax_bits_reference.npz, made by make_jax_lax_bits_reference.py), the
structure helpers and collectives against JAX's outputs."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
from functrans.test_util import check_grads
from tests.data.jax_lax_bits_cases import _inputs, outputs

ROOT = pathlib.Path(__file__).resolve().parent.parent

_TOKENS = "XLA tokens and ordered effects: functrans has no tokens"
LEFT_OUT = {
    "DotAlgorithm": "dot algorithms of accelerators: products run at their dtype's precision",
    "DotAlgorithmPreset": "dot algorithms of accelerators: products run at their dtype's "
                          "precision",
    "precv": _TOKENS, "psend": _TOKENS,
    "dce_sink": "XLA dead-code-elimination control: nothing to keep alive here",
    "ragged_all_to_all": "a ragged collective of accelerator meshes: not written",
    "scaled_dot": "microscaled (float8) products: no float8 dtypes here",
}
PRIMITIVE_OBJECTS = ("JAX's Primitive objects (`*_p`), for rules written against JAX's "
                     "interpreters; functrans's primitives are in functrans.primitives")


def _names():
    lines = (ROOT / "tests" / "data" / "jax_lax_names.txt").read_text().splitlines()
    return [n.strip() for n in lines if n.strip() and not n.startswith("#")]


def _left_out(name):
    return name in LEFT_OUT or name.endswith("_p")


def test_the_name_list_is_whole():
    names = _names()
    assert len(names) == len(set(names)) == 372
    assert {"ragged_dot", "conv_general_dilated", "scan", "add_p"} <= set(names)


def test_every_jax_lax_name_is_implemented_or_left_out_with_a_reason():
    missing = [n for n in _names() if not hasattr(lax, n) and not _left_out(n)]
    assert not missing, f"neither in functrans.lax nor in LEFT_OUT: {missing}"
    implemented = sum(hasattr(lax, n) for n in _names())
    assert implemented >= 297, implemented   # 297 of 372: all but LEFT_OUT and 51 *_p


# JAX 0.10.2's Primitive.name of the *_p names functrans.lax exports where they differ
# from the name less "_p"
_JAX_PRIMITIVE_NAME = {"linear_solve_p": "custom_linear_solve"}


def test_exported_primitive_objects_are_jax_ops_of_that_name():
    """functrans.lax exports its primitive objects under JAX's *_p names (103 of 154; the
    rest JAX's for ops composed here, and scatter_p, whose functrans primitive carries
    every combining mode); each is the primitive its lax function binds."""
    exported = [n for n in _names() if n.endswith("_p") and hasattr(lax, n)]
    assert len(exported) == 103 and "scatter_p" not in exported
    for n in exported:
        assert getattr(lax, n).name == _JAX_PRIMITIVE_NAME.get(n, n[:-2]), n
    assert lax.integer_pow_p.bind(np.float64(3.0), y=2) == 9.0
    eqns = ft.make_jaxpr(lambda x: lax.fori_loop(0, 2, lambda i, c: lax.integer_pow(c, 3),
                                                 x))(2.0).jaxpr.eqns
    assert {lax.while_p, lax.scan_p} & {e.primitive for e in eqns}


def test_left_out_names_are_really_missing_and_in_the_readme():
    assert not [n for n in LEFT_OUT if hasattr(lax, n)], "implemented names must leave LEFT_OUT"
    assert set(LEFT_OUT) <= set(_names())
    readme = (ROOT / "README.md").read_text()
    for name in LEFT_OUT:
        assert re.search(rf"`(lax\.)?{re.escape(name)}`", readme), f"{name} not in README"
    assert "`*_p`" in readme


# --------------------------------------------------------------------------- ragged dot

def _ragged_loop(lhs, rhs, sizes):
    out = np.zeros((lhs.shape[0], rhs.shape[2]))
    start = 0
    for g, n in enumerate(sizes):
        out[start:start + n] = lhs[start:start + n] @ rhs[g]
        start += n
    return out


def test_ragged_dot_value_gradients_vmap_jit():
    rng = np.random.default_rng(0)
    lhs, rhs = rng.standard_normal((7, 3)), rng.standard_normal((3, 3, 2))
    sizes = np.array([2, 1, 3], np.int32)                  # row 6 is in no group: zeros
    got = lax.ragged_dot(lhs, rhs, sizes)
    np.testing.assert_allclose(np.asarray(got), _ragged_loop(lhs, rhs, sizes), rtol=1e-14)
    assert not np.asarray(got)[6].any()
    over = lax.ragged_dot(lhs, rhs, np.array([4, 4, 4], np.int32))      # cut at m
    np.testing.assert_allclose(np.asarray(over), _ragged_loop(lhs, rhs, [4, 3, 0]), rtol=1e-14)
    f = lambda a, b: lax.ragged_dot(a, b, sizes)          # noqa: E731
    check_grads(f, (lhs, rhs), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(np.asarray(ft.jit(f)(lhs, rhs)), np.asarray(got), rtol=1e-14)
    batched = ft.vmap(f, in_axes=(0, None))(np.stack([lhs, 2 * lhs]), rhs)
    np.testing.assert_allclose(np.asarray(batched)[1], 2 * np.asarray(got), rtol=1e-14)
    f32 = lax.ragged_dot(lhs.astype(np.float32), rhs.astype(np.float32), sizes,
                         preferred_element_type=np.float64)
    assert f32.dtype == np.float64
    ints = lax.ragged_dot(np.ones((3, 2), np.int32), np.ones((2, 2, 1), np.int32),
                          np.array([1, 2], np.int32))
    assert ints.dtype == np.int32 and ints.tolist() == [[2], [2], [2]]
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(lhs, rhs, sizes, group_offset=np.array([1]))
    with pytest.raises(TypeError, match="group_sizes"):
        lax.ragged_dot(lhs, rhs, np.array([2.0, 1.0, 3.0]))


def test_ragged_dot_general_modes():
    rng = np.random.default_rng(1)
    RD = lax.RaggedDotDimensionNumbers
    a, b, sizes = rng.standard_normal((4, 6)), rng.standard_normal((6, 5)), np.array([2, 3, 1])
    out = np.asarray(lax.ragged_dot_general(a, b, sizes, RD((([1], [0]), ([], [])), [1], [])))
    starts = [0, 2, 5, 6]
    want = np.stack([a[:, s:e] @ b[s:e] for s, e in zip(starts[:-1], starts[1:])])
    np.testing.assert_allclose(out, want, rtol=1e-13)            # ragged contraction
    x, y = rng.standard_normal((5, 2, 3)), rng.standard_normal((5, 3, 4))
    out = lax.ragged_dot_general(x, y, np.array([2, 2]), RD((([2], [1]), ([0], [0])), [0], []))
    np.testing.assert_allclose(np.asarray(out), x @ y, rtol=1e-13)   # ragged batch, as JAX
    x, y = rng.standard_normal((2, 7, 3)), rng.standard_normal((3, 2, 3, 4))
    sizes = np.array([2, 1, 3], np.int32)
    out = lax.ragged_dot_general(x, y, sizes, RD((([2], [2]), ([0], [1])), [1], [0]))
    want = np.stack([_ragged_loop(x[i], y[:, i], sizes) for i in range(2)])
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-13)   # batched free ragged dim


# --------------------------------------------------------------------------- bits

def test_bit_functions_equal_jax_bit_for_bit():
    want = np.load(ROOT / "tests" / "data" / "jax_lax_bits_reference.npz")
    got = outputs(lax)
    assert set(got) == set(want.files)
    for k in want.files:
        w = want[k]
        if k == "na64":
            # JAX's CPU kernels read a subnormal operand as zero (DAZ: 5e-324 == 0.0 is True
            # there), so its nextafter(-5e-324, 0.0) is y, +0.0; IEEE's (numpy's) is -0.0
            _, f64, g64, _ = _inputs()
            w = np.where(np.abs(f64) == 5e-324, np.nextafter(f64, g64), w)
        assert got[k].dtype == w.dtype and got[k].shape == w.shape, k
        assert np.array_equal(got[k].view(np.uint8), w.view(np.uint8)), k


def test_bit_functions_compile_natively():
    x = np.array([1, 255, 2**31 - 1, -7], np.int64)
    f = ft.jit(lambda v: (lax.population_count(v), lax.clz(v), lax.mulhi(v, v)))
    assert f.lower(x).compile().cost_analysis()["host steps"] == 0
    for a, b in zip(f(x), (lax.population_count(x), lax.clz(x), lax.mulhi(x, x))):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    y = np.array([1.0 + 2.0 ** -9, 3e38, -1e-40, np.nan, 2.0 ** 200])
    r = ft.jit(lambda v: (lax.reduce_precision(v, 8, 7), lax.nextafter(v, -v)))(y)
    for a, b in zip(r, (lax.reduce_precision(y, 8, 7), lax.nextafter(y, -y))):
        assert np.array_equal(np.asarray(a).view(np.uint64), np.asarray(b).view(np.uint64))


# lax.nextafter's bits from JAX 0.10.2 (CPU) for x toward y, per dtype:
# x = [0, -0, 1, -1, tiny, -tiny, inf, -inf, max, nan, 2, -smallest_normal]
# y = [-0, 0, 1, 0, -1, 1, 0, 0, inf, 1, nan, 0]
NEXTAFTER_JAX_BITS = {
    "float16": [32768, 0, 15360, 48127, 0, 32768, 31743, 64511, 31744, 32256, 32256, 33791],
    "bfloat16": [32768, 0, 16256, 49023, 0, 32768, 32639, 65407, 32640, 32704, 32704, 32895],
    "float32": [2147483648, 0, 1065353216, 3212836863, 0, 2147483648, 2139095039, 4286578687,
                2139095040, 2143289344, 2143289344, 2155872255],
}


@pytest.mark.parametrize("name", sorted(NEXTAFTER_JAX_BITS))
def test_nextafter_equals_jax_bits_including_16_bit_floats(name):
    """Fuzz round 10: lax.nextafter refused float16/bfloat16 (JAX takes them), and a step
    from +-tiny toward zero gave the zero y's sign (-0.0 for nextafter(tiny, -1)); JAX
    keeps x's sign (0.0), as numpy and functrans.numpy.nextafter."""
    dt = np.dtype(ft.numpy.bfloat16) if name == "bfloat16" else np.dtype(name)
    info = ft.numpy.finfo(dt)
    tiny, big, norm = float(info.smallest_subnormal), float(info.max), float(info.smallest_normal)
    x = np.array([0.0, -0.0, 1.0, -1.0, tiny, -tiny, np.inf, -np.inf, big, np.nan, 2.0, -norm])
    y = np.array([-0.0, 0.0, 1.0, 0.0, -1.0, 1.0, 0.0, 0.0, np.inf, 1.0, np.nan, 0.0])
    x, y = x.astype(dt), y.astype(dt)
    ut = {2: np.uint16, 4: np.uint32}[dt.itemsize]
    for f in (lax.nextafter, ft.jit(lax.nextafter)):
        got = np.asarray(f(x, y))
        assert got.dtype == dt
        assert got.view(ut).tolist() == NEXTAFTER_JAX_BITS[name], (f, got.tolist())
    with pytest.raises(TypeError, match="one dtype"):
        lax.nextafter(x, y.astype(np.float64))


def test_index_take_wraps_indices_modulo_the_axis_as_jax():
    """JAX's lax_test testIndexTake draws out-of-range and negative indices: JAX's
    index_take takes them modulo the axis length (it clamped past the end here)."""
    src = np.arange(60).reshape(3, 4, 5)
    idxs = (np.array([-1, 7, 2]), np.array([5, -1, 9]))
    for run in (lambda g: g, lambda g: ft.jit(g, static_argnums=2)):
        got = run(lax.index_take)(src, idxs, (0, 1))
        np.testing.assert_array_equal(got, src[[2, 1, 2], [1, 3, 1]])


def test_reduce_precision_derivative_passes_the_tangent():
    """JAX's lax_test testReducePrecisionGrad: reduce_precision is linear in JAX (its
    tangent is reduce_precision(t)); the bit operations gave a zero gradient here."""
    f = lambda v: lax.reduce_precision(v, 8, 7)   # noqa: E731
    assert float(ft.grad(f)(np.pi)) == 1.0
    assert float(ft.jit(ft.grad(f))(np.float32(2.5))) == 1.0
    assert float(ft.jvp(f, (1.0,), (0.5,))[1]) == 0.5
    np.testing.assert_array_equal(ft.vmap(ft.grad(f))(np.array([1.0, 3e38])), [1.0, 1.0])
    assert float(f(np.pi)) == 3.140625


# --------------------------------------------------------------------------- structure

def test_structure_helpers_as_jax():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert lax.broadcast(np.ones(3), (2, 5)).shape == (2, 5, 3)
    assert lax.broadcast_to_rank(np.ones(3), 3).shape == (1, 1, 3)
    assert lax.collapse(x, 1).shape == (2, 12) and lax.collapse(x, 0, 2).shape == (6, 4)
    assert lax.index_in_dim(x, -1, 2, keepdims=False).tolist() == x[:, :, -1].tolist()
    assert [p.shape for p in lax.split(x, [1, 3], 2)] == [(2, 3, 1), (2, 3, 3)]
    assert [u.tolist() for u in lax.unstack(x, 1)] == [x[:, i].tolist() for i in range(3)]
    np.testing.assert_array_equal(lax.index_take(x, (np.array([1, 0]), np.array([2, 1])),
                                                 (0, 2)), [[14, 18, 22], [1, 5, 9]])
    np.testing.assert_array_equal(lax.tile(np.array([[1, 2]]), (2, 2)),
                                  [[1, 2, 1, 2], [1, 2, 1, 2]])
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(np.zeros((3, 2)),
                                                                  np.ones(2), -1, 0)[2], [1, 1])
    assert lax.select(np.array([True, False]), np.ones(2), np.zeros(2)).tolist() == [1.0, 0.0]
    assert lax.full_like(np.zeros(2, np.float32), 3, shape=(3,)).tolist() == [3.0] * 3
    assert lax.dtype(1.0) == np.float64 and lax.shape_as_value((2, 3)).dtype == np.int32
    s, p = lax.reduce((x[0], np.ones((3, 4))), (0.0, 0.0),
                      lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,))
    np.testing.assert_array_equal(s, x[0].sum(0))
    np.testing.assert_array_equal(p, np.zeros(4))
    assert lax.reduce(x[0], 1.0, lax.add, (1,)).tolist() == (x[0].sum(1) + 1).tolist()
    assert lax.reduce_xor(np.array([[1, 2, 4], [7, 7, 1]], np.int32), (1,)).tolist() == [7, 1]
    v, i = lax.approx_max_k(np.array([[3.0, 1, 2], [0, 5, 4]]), 2)
    assert v.tolist() == [[3, 2], [5, 4]] and i.tolist() == [[0, 2], [1, 2]]
    v, i = lax.approx_min_k(np.array([[3.0, 1, 2], [0, 5, 4]]), 2, reduction_dimension=0)
    assert v.tolist() == [[0, 1, 2], [3, 5, 4]] and i.dtype == np.int32
    assert lax.round(np.array([2.5, -0.5])).tolist() == [3.0, -1.0]        # JAX's default
    assert np.asarray(lax.fft(np.arange(4.0), lax.FftType.RFFT, (4,))).shape == (3,)
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == \
        ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_transpose_shape_tuple((1, 4, 4, 3), (3, 3, 3, 5), (2, 2), "SAME",
                                          ("NHWC", "HWIO", "NHWC")) == (1, 8, 8, 5)
    assert lax.reduce_window_shape_tuple((6, 5), (2, 2), (2, 1), ((0, 0), (1, 0))) == (3, 5)


def test_collectives_under_vmap():
    v = np.array([1.0, 2.0, 3.0])
    assert ft.vmap(lambda a: lax.pshuffle(a, "i", [2, 0, 1]), axis_name="i")(v).tolist() == \
        [3.0, 1.0, 2.0]
    assert ft.vmap(lambda a: lax.pbroadcast(a, "i", 2), axis_name="i")(v).tolist() == [3.0] * 3
    m = np.arange(4.0).reshape(2, 2)
    assert ft.vmap(lambda a: lax.pswapaxes(a, "i", 0), axis_name="i")(m).tolist() == \
        m.T.tolist()


def test_lax_linalg_has_jax_s_signatures_and_defaults():
    # equal to jax.lax.linalg's outputs on these (checked bit for bit with JAX 0.10.2)
    from functrans.lax import linalg as L
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 4, 4))
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    skew = spd + 0.3 * np.triu(np.ones((4, 4)), 1)         # symmetrize_input matters
    sym = (skew + np.swapaxes(skew, -1, -2)) / 2
    np.testing.assert_allclose(L.cholesky(skew), np.linalg.cholesky(sym), rtol=1e-13)
    np.testing.assert_allclose(L.cholesky(skew, symmetrize_input=False),
                               np.linalg.cholesky(np.tril(skew) + np.swapaxes(np.tril(skew, -1),
                                                                              -1, -2)),
                               rtol=1e-13)
    v, w = L.eigh(skew)                                     # (v, w), ascending
    np.testing.assert_allclose(w, np.linalg.eigvalsh(sym), rtol=1e-13)
    np.testing.assert_allclose(sym @ v, v * np.asarray(w)[..., None, :], atol=1e-12)
    z = np.tril(a[0] + 1j * a[1]) + 4 * np.eye(4)
    rhs = rng.standard_normal((4, 2)) + 0j
    np.testing.assert_allclose(L.triangular_solve(z, rhs, left_side=True, lower=True,
                                                  transpose_a=True, conjugate_a=True),
                               np.linalg.solve(z.conj().T, rhs), rtol=1e-12)
    assert [m.shape for m in L.qr(a, full_matrices=False)] == [(2, 4, 4), (2, 4, 4)]
    assert L.lu(a[0])[2].dtype == np.int32 or L.lu(a[0])[2].dtype.kind == "i"
    with pytest.raises(NotImplementedError, match="subset_by_index"):
        L.eigh(spd, subset_by_index=(0, 2))
    q, r, p = L.qr(a, pivoting=True)          # column pivoting, as JAX's (it raised)
    np.testing.assert_allclose(np.asarray(q @ r), np.take_along_axis(a, np.asarray(p)[:, None, :], -1),
                               atol=1e-12)
    d = np.abs(np.diagonal(np.asarray(r), axis1=-2, axis2=-1))
    assert (np.diff(d, axis=-1) <= 1e-12).all()


def test_lax_linalg_cholesky_update():
    # JAX's cholesky_update_test: the upper factor of r^T r + w w^T (it was missing)
    from functrans.lax import linalg as L
    from functrans.test_util import check_grads
    for dtype, atol in [(np.float64, 1e-10), (np.float32, 2e-2)]:
        r = np.triu(np.ones((32, 32))).astype(dtype)
        w = np.arange(1, 33).astype(dtype)
        want = np.linalg.cholesky((r.T @ r + np.outer(w, w)).astype(np.float64), upper=True)
        got = L.cholesky_update(r, w)
        assert got.dtype == dtype
        np.testing.assert_allclose(np.asarray(got), want, atol=atol)
        np.testing.assert_allclose(np.asarray(ft.jit(L.cholesky_update)(r, w)), np.asarray(got),
                                   atol=1e-12 if dtype == np.float64 else 1e-5)
    r0 = np.triu(np.random.default_rng(1).standard_normal((4, 4))) + 3 * np.eye(4)
    w0 = np.array([0.5, 0.0, -1.0, 2.0])         # a zero entry: the identity rotation
    want = np.linalg.cholesky(r0.T @ r0 + np.outer(w0, w0), upper=True)
    np.testing.assert_allclose(np.asarray(L.cholesky_update(r0, w0)), want, atol=1e-13)
    check_grads(L.cholesky_update, (r0, w0), order=2, modes=("fwd", "rev"))
    with pytest.raises(ValueError, match="square"):
        L.cholesky_update(np.ones((2, 3)), np.ones(3))


def test_dot_of_mixed_dtypes_follows_jax():
    """JAX's lax_test testDot pairs dtypes (int32 with int8, float64 with uint64, int32
    with complex128, float32 with int64...): JAX computes in the higher-precision type
    (XLA's order: complex, exponent, mantissa, bits, signed), so int8 with uint8 is
    int8 (wrapping 200) unless preferred_element_type says otherwise. It raised here."""
    x = (np.arange(3) + 200)
    y = np.arange(6).reshape(3, 2) * 3 + 1.5
    want = {(np.int32, np.int8): (np.int32, [4233, 6042]),
            (np.float32, np.int64): (np.float32, [4233.0, 6042.0]),
            (np.int8, np.uint8): (np.int8, [-119, -102]),
            (np.float32, np.complex64): (np.complex64, [4534.5, 6343.5])}
    for (a, b), (dt, vals) in want.items():
        for run in (lambda g: g, ft.jit):
            got = run(lax.dot)(x.astype(a), y.astype(b))
            assert got.dtype == dt, (a, b, got.dtype)
            np.testing.assert_array_equal(got, vals)
    one = lax.dot(np.array([1], np.int8), np.array([200], np.uint8), preferred_element_type=np.int32)
    assert int(one) == 200


def test_reduce_and_or_take_integers_as_jax():
    """JAX's lax_test testNamedReduceOperators: lax.reduce_and/reduce_or of integers are
    bitwise reductions; they raised (the primitives are boolean)."""
    x = np.array([[7, 5, 12], [2, 3, 255]], np.uint8)
    for run in (lambda g: g, ft.jit):
        np.testing.assert_array_equal(run(lambda v: lax.reduce_and(v, (1,)))(x),
                                      np.bitwise_and.reduce(x, axis=1))
        np.testing.assert_array_equal(run(lambda v: lax.reduce_or(v, (0, 1)))(x.astype(np.int32)),
                                      np.bitwise_or.reduce(x.astype(np.int32), axis=(0, 1)))
    assert not bool(lax.reduce_and(np.array([True, False]), (0,)))
