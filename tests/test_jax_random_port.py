"""Regressions found by running JAX 0.10.2's tests/random_test.py and random_lax_test.py
against functrans (driver in /work/jt31/jtrand). Key words are JAX 0.10.2's (x64 on)."""
import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp
from functrans import random

# (seed, type, JAX's key_data): random_test.test_prng_seeds_and_keys plus narrow dtypes
_SEEDS = [
    (-1, int, [4294967295, 4294967295]),
    (-2, np.int32, [0, 4294967294]),
    (-3, np.int64, [4294967295, 4294967293]),
    (-2, np.int16, [0, 4294967294]),
    (-5, np.int8, [0, 4294967291]),
    (2 ** 32 - 3, np.uint32, [0, 4294967293]),
    (np.iinfo(np.int32).min - 100, int, [4294967295, 2147483548]),
    (np.iinfo(np.int32).min - 101, np.int64, [4294967295, 2147483547]),
    (2 ** 64 - 5, np.uint64, [4294967295, 4294967291]),
]


@pytest.mark.parametrize("seed,typ,want", _SEEDS)
def test_seed_words_follow_the_seed_dtype(seed, typ, want):
    """random_test.test_prng_seeds_and_keys: JAX shifts the seed right by 32 in its own
    dtype, so a negative seed of 32 bits or fewer has high word 0; functrans sign-extended
    to 64 bits (np.int32(-2) gave [2**32-1, 2**32-2]: other keys, other draws)."""
    s = typ(seed)
    assert random.key_data(random.PRNGKey(s)).tolist() == want
    assert random.key_data(random.key(np.asarray(s))).tolist() == want
    assert random.key_data(ft.jit(random.PRNGKey)(s)).tolist() == want
    assert random.key_data(ft.jit(random.key)(fnp.asarray(s))).tolist() == want


def test_clone_takes_arrays_of_keys():
    """random_test.test_random_clone: clone of split keys (shape (5,)) under no
    transform, jit and vmap; functrans raised TypeError 'expected a single PRNG key'."""
    keys = random.split(random.key(0), 5)
    want = random.key_data(keys).tolist()
    assert random.key_data(random.clone(keys)).tolist() == want
    assert random.key_data(ft.jit(random.clone)(keys)).tolist() == want
    assert random.key_data(ft.vmap(random.clone)(keys)).tolist() == want
    raw = random.split(random.PRNGKey(0), 3)
    assert np.asarray(random.clone(raw)).tolist() == np.asarray(raw).tolist()
    with pytest.raises(TypeError, match="clone"):
        random.clone(np.zeros(3, np.uint32))


def test_dynamic_slice_in_dim_jax_keywords():
    """random_test.test_dynamic_slice calls lax.dynamic_slice_in_dim(keys, 1,
    slice_size=2, axis=0) with JAX's keyword names; functrans named them size/start."""
    x = np.arange(12).reshape(4, 3)
    got = lax.dynamic_slice_in_dim(operand=x, start_index=1, slice_size=2, axis=0)
    assert np.asarray(got).tolist() == x[1:3].tolist()
    got = lax.dynamic_index_in_dim(operand=x, index=-1, axis=1, keepdims=False)
    assert np.asarray(got).tolist() == x[:, 2].tolist()
    keys = random.split(random.key(3), 4)
    sl = lax.dynamic_slice_in_dim(keys, 1, slice_size=2)
    assert random.key_data(sl).tolist() == random.key_data(keys).tolist()[1:3]


def test_ball_and_generalized_normal_take_a_traced_p():
    """random_lax_test.testBall / testGeneralizedNormal: jit(lambda key, p: ball(key, d,
    p, ...)) traces ``p``; functrans converted it to a numpy scalar
    (TracerArrayConversionError). JAX 0.10.2's values (within an ulp or two: the power
    is a transcendental)."""
    b = ft.jit(lambda k, p: random.ball(k, 3, p, (2,), np.float32))(random.PRNGKey(123), 1.5)
    assert b.dtype == np.float32
    want = [[-0.7449297308921814, -0.33324432373046875, -0.04611147195100784],
            [-0.4355982542037964, -0.26391923427581787, -0.6529917120933533]]
    np.testing.assert_allclose(np.asarray(b), want, rtol=3e-7)
    g = ft.jit(lambda k, p: random.generalized_normal(k, p, (4,), np.float64))(
        random.PRNGKey(1), 0.7)
    want = [-3.2787023889148266, -0.7200185389942387, -1.1453885190051465, 5.354822103632863]
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-14)
    # eager (Python p) and jitted (traced p) agree
    e = random.ball(random.PRNGKey(123), 3, 1.5, (2,), np.float32)
    np.testing.assert_allclose(np.asarray(e), np.asarray(b), rtol=3e-7)


def test_jit_accepts_none_for_static_and_donated_arguments():
    """random_lax_test.testChoice / testPermutation call jax.jit(rand,
    static_argnames=None); JAX takes None as 'none' for static_argnums/static_argnames/
    donate_argnums; functrans raised TypeError 'NoneType' object is not iterable."""
    x = np.arange(5)
    perm = ft.jit(lambda k, x: random.permutation(k, x), static_argnames=None)
    assert np.asarray(perm(random.PRNGKey(0), x)).tolist() == \
        np.asarray(random.permutation(random.PRNGKey(0), x)).tolist()
    for kw in ({"static_argnums": None}, {"donate_argnums": None}):
        assert int(ft.jit(lambda v: v + 1, **kw)(1)) == 2


def test_orthogonal_complex_dtypes():
    """random_lax_test.testOrthogonal (complex64/complex128 cases): JAX draws unitary
    matrices; functrans raised ValueError 'dtype must be a floating dtype'. JAX 0.10.2's
    complex128 draw for PRNGKey(0), n = 3 (rounded to 12 digits)."""
    q = random.orthogonal(random.PRNGKey(0), 3, (), np.complex128)
    want = np.array([
        [0.543688847097 - 0.405123910881j, -0.215186765157 + 0.338980150047j,
         0.503607524983 + 0.354180221258j],
        [0.688808135969 + 0.057979234337j, 0.071561134893 - 0.205556782533j,
         -0.044451015172 - 0.687627283189j],
        [0.018321026008 + 0.24924516964j, -0.130366173856 + 0.880009765751j,
         -0.314762009226 - 0.216918270006j]])
    assert q.dtype == np.complex128
    np.testing.assert_allclose(np.asarray(q), want, atol=1e-11)
    q = np.asarray(random.orthogonal(random.PRNGKey(1), 2, (4,), np.complex64, m=3))
    assert q.shape == (4, 2, 3) and q.dtype == np.complex64
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2).conj(), np.broadcast_to(np.eye(2), (4, 2, 2)),
                               atol=2e-6)


def test_gumbel_highest_mode():
    """random_lax_test.testCategorical (mode='highest'): JAX's float32 'highest' gumbel
    reads two words as a 64-bit fraction (right tail past the 32-bit limit); functrans
    raised ValueError. JAX 0.10.2's draws, to 2 float32 ulps (log/log1p rounding)."""
    x = random.gumbel(random.PRNGKey(7), (6,), np.float32, mode="highest")
    want = [-0.11434070765972137, -1.3011914491653442, 1.0195822715759277,
            0.5328795313835144, -0.27202725410461426, 0.003237116849049926]
    assert x.dtype == np.float32
    np.testing.assert_allclose(np.asarray(x), want, rtol=0, atol=2.5e-7)
    big = np.asarray(random.gumbel(random.PRNGKey(7), (200000,), np.float32, mode="highest"))
    # the extremes come from the fixed-point conversion: equal to JAX's
    np.testing.assert_allclose([big.max(), big.min()], [18.198204040527344, -2.5112781524658203],
                               rtol=2e-7)
    j = ft.jit(lambda k: random.gumbel(k, (6,), np.float32, mode="highest"))(random.PRNGKey(7))
    np.testing.assert_allclose(np.asarray(j), want, rtol=0, atol=2.5e-7)
    with pytest.raises(ValueError, match="mode"):
        random.gumbel(random.PRNGKey(0), (2,), mode="top")


def test_permutation_of_a_0d_integer_array():
    """random_lax_test.testPermutation (range_or_shape = int, then np.array(x)): JAX
    permutes arange(n) for a concrete 0-d integer array; functrans raised ValueError.
    JAX 0.10.2: permutation(PRNGKey(0), np.array(10))."""
    want = [0, 1, 8, 5, 6, 4, 3, 2, 7, 9]
    got = random.permutation(random.PRNGKey(0), np.array(10))
    assert got.dtype == np.int64 and np.asarray(got).tolist() == want
    assert np.asarray(random.permutation(random.PRNGKey(0), fnp.asarray(np.int32(10)))).tolist() == want
    assert np.asarray(random.permutation(random.PRNGKey(0), np.array(0))).tolist() == []
    with pytest.raises(TypeError, match="0-d"):     # JAX 0.10.2: TypeError
        random.permutation(random.PRNGKey(0), np.array(2.0))
