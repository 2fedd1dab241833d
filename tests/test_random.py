"""functrans.random: Threefry known answers, reproducibility (eager == jit == vmap),
statistics of the distributions, ranges and independence of derived keys."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import random
from functrans.primitives.random import threefry2x32

U32 = np.uint32


# --------------------------------------------------------------------------- the block function

@pytest.mark.parametrize("key,count,want", [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
])
def test_threefry_known_answers(key, count, want):
    # the Random123 known-answer vectors for Threefry-2x32 with 20 rounds
    args = [np.asarray(v, U32) for v in key + count]
    assert [int(w) for w in threefry2x32(*args)] == list(want)


def test_threefry_is_elementwise_and_batches():
    rng = np.random.default_rng(0)
    args = [rng.integers(0, 2 ** 32, (5,), dtype=np.uint64).astype(U32) for _ in range(4)]
    y0, y1 = threefry2x32(*args)
    for i in range(5):
        a, b = threefry2x32(*[np.asarray(x[i]) for x in args])
        assert int(a) == int(y0[i]) and int(b) == int(y1[i])
    v0, v1 = ft.vmap(threefry2x32, in_axes=(0, None, 0, None))(
        args[0], args[1][0], args[2], args[3][0])
    w0, w1 = threefry2x32(args[0], np.full(5, args[1][0]), args[2], np.full(5, args[3][0]))
    np.testing.assert_array_equal(v0, w0)
    np.testing.assert_array_equal(v1, w1)


def test_threefry_rejects_bad_operands():
    z = np.zeros(3, U32)
    with pytest.raises(TypeError, match="uint32"):
        threefry2x32(z, z, z, np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="shape"):
        ft.jit(threefry2x32)(z, z, z, np.zeros(2, U32))


# --------------------------------------------------------------------------- keys

def test_key_words_and_64_bit_seeds():
    assert random.key_data(random.key(5)).tolist() == [0, 5]
    assert random.PRNGKey(2 ** 32 + 3).tolist() == [1, 3]
    assert random.PRNGKey(-1).tolist() == [0xFFFFFFFF, 0xFFFFFFFF]
    assert random.PRNGKey(5).dtype == U32
    traced = ft.jit(random.PRNGKey)(np.int64(-2 ** 33 - 7))
    assert traced.tolist() == random.PRNGKey(-2 ** 33 - 7).tolist()
    traced = ft.jit(random.key)(np.int64(-2 ** 33 - 7))
    assert random.key_data(traced).tolist() == [4294967293, 4294967289]


@pytest.mark.parametrize("bad", [1.5, "seed", None, True, np.zeros(2)])
def test_key_rejects_non_integers(bad):
    with pytest.raises(TypeError, match="key"):
        random.key(bad)


def test_functions_reject_non_keys():
    with pytest.raises(TypeError, match="PRNG key"):
        random.normal(0, (3,))
    with pytest.raises(TypeError, match="PRNG key"):
        random.uniform(np.zeros(2, np.int64), (3,))
    with pytest.raises(TypeError, match="PRNG key"):
        random.split(np.zeros((3,), U32))
    with pytest.raises(ValueError, match="floating dtype"):   # JAX's class
        random.normal(random.key(0), (2,), dtype=np.int32)


def test_split_and_fold_in_give_distinct_streams():
    k = random.PRNGKey(0)
    ks = random.split(k, 8)
    assert ks.shape == (8, 2) and ks.dtype == U32
    folded = np.stack([random.fold_in(k, i) for i in range(8, 16)])
    all_keys = np.concatenate([np.asarray(k)[None], ks, folded])
    assert len({tuple(r) for r in all_keys.tolist()}) == len(all_keys)
    draws = [np.asarray(random.uniform(kk, (4,))) for kk in all_keys]
    assert len({d.tobytes() for d in draws}) == len(draws)
    # reproducible
    np.testing.assert_array_equal(random.split(k, 8), ks)
    np.testing.assert_array_equal(random.fold_in(k, 11), folded[3])
    assert random.split(k, 0).shape == (0, 2)


def test_fold_in_i_is_split_row_i_as_in_jax():
    # JAX's partitionable threefry hashes counter i for both, so they coincide
    k = random.PRNGKey(5)
    np.testing.assert_array_equal(random.split(k, 4),
                                  np.stack([random.fold_in(k, i) for i in range(4)]))


def test_fold_in_with_traced_data_matches_eager():
    k = random.PRNGKey(42)
    got = ft.jit(random.fold_in)(k, np.int64(123456789012))
    np.testing.assert_array_equal(got, random.fold_in(k, np.int64(123456789012)))
    got = ft.vmap(random.fold_in, in_axes=(None, 0))(k, np.arange(4))
    np.testing.assert_array_equal(got, np.stack([random.fold_in(k, i) for i in range(4)]))


# --------------------------------------------------------------------------- reproducibility

_DRAWS = {
    "uniform64": lambda k: random.uniform(k, (7,)),
    "uniform32": lambda k: random.uniform(k, (7,), np.float32),
    "normal64": lambda k: random.normal(k, (3, 3)),
    "normal32": lambda k: random.normal(k, (5,), np.float32),
    "bernoulli": lambda k: random.bernoulli(k, 0.25, (9,)),
    "randint": lambda k: random.randint(k, (9,), -5, 5),
    "permutation": lambda k: random.permutation(k, 9),
    "bits": lambda k: random.bits(k, (5,)),
    "split": lambda k: random.split(k, 3),
}


def _same_draw(got, want):
    """Bits and integers exactly; floats made by transcendental math (normal's log and
    cos) within 4 ulp, since a compiled backend's math may round differently from numpy."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_array_max_ulp(got, want, 4)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(_DRAWS))
def test_eager_jit_vmap_agree_exactly(name):
    f = _DRAWS[name]
    k = random.PRNGKey(1234)       # raw words (tests/test_typed_keys.py: typed keys)
    eager = np.asarray(f(k))
    np.testing.assert_array_equal(np.asarray(f(k)), eager)
    _same_draw(ft.jit(f)(k), eager)
    ks = random.split(k, 4)
    loop = np.stack([np.asarray(f(kk)) for kk in ks])
    np.testing.assert_array_equal(np.asarray(ft.vmap(f)(ks)), loop)
    _same_draw(ft.jit(ft.vmap(f))(ks), loop)
    np.testing.assert_array_equal(np.asarray(ft.vmap(f, in_axes=1)(np.asarray(ks).T)), loop)


def test_same_key_same_numbers_different_key_different_numbers():
    a = random.normal(random.key(7), (100,))
    b = random.normal(random.key(7), (100,))
    c = random.normal(random.key(8), (100,))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_prefix_shapes_are_consistent():
    # the same key drawn at a different shape is a different draw, never an error
    k = random.key(3)
    assert random.uniform(k, (2, 3)).shape == (2, 3)
    assert random.uniform(k, 4).shape == (4,)
    assert random.uniform(k).shape == ()


# --------------------------------------------------------------------------- statistics

def test_normal_statistics():
    x = np.asarray(random.normal(random.key(0), (100_000,)))
    assert x.dtype == np.float64
    assert abs(x.mean()) < 0.015
    assert abs(x.var() - 1.0) < 0.02
    assert abs(np.mean(x ** 3)) < 0.05          # symmetric
    assert abs(np.mean(x ** 4) - 3.0) < 0.1     # Gaussian kurtosis
    assert abs(np.mean(np.abs(x) < 1.0) - 0.6827) < 0.01


def test_normal_float32_statistics():
    x = np.asarray(random.normal(random.key(1), (100_000,), np.float32))
    assert x.dtype == np.float32 and np.isfinite(x).all()
    assert abs(x.mean()) < 0.015 and abs(x.var() - 1.0) < 0.02


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_range_and_moments(dtype):
    x = np.asarray(random.uniform(random.key(2), (100_000,), dtype, minval=-1.0, maxval=3.0))
    assert x.dtype == dtype
    assert x.min() >= -1.0 and x.max() < 3.0
    assert abs(x.mean() - 1.0) < 0.02
    assert abs(x.var() - 16.0 / 12.0) < 0.03
    hist = np.histogram(x, bins=10, range=(-1, 3))[0]
    assert hist.min() > 9_500 and hist.max() < 10_500


def test_uniform_may_round_to_maxval_as_jax_does():
    # [1, 1 + ulp): u * ulp + 1 rounds to maxval for u >= 1/2, in JAX as here
    hi = np.nextafter(1.0, 2.0)
    x = np.asarray(random.uniform(random.key(0), (1000,), minval=1.0, maxval=hi))
    assert set(x.tolist()) == {1.0, hi}
    x = np.asarray(random.uniform(random.key(0), (1000,), np.float32, 0.0, 1e-30))
    assert (x >= 0).all() and (x < np.float32(1e-30)).all()


def test_uniform_float64_uses_52_bits():
    x = np.asarray(random.uniform(random.key(5), (1000,)))
    scaled = x * 2.0 ** 52
    np.testing.assert_array_equal(scaled, np.floor(scaled))
    # more than float32 resolution: some draws are not multiples of 2**-23
    assert np.any((x * 2.0 ** 23) != np.floor(x * 2.0 ** 23))


def test_bernoulli_frequency():
    x = np.asarray(random.bernoulli(random.key(3), 0.3, (100_000,)))
    assert x.dtype == np.bool_
    assert abs(x.mean() - 0.3) < 0.01
    assert not np.asarray(random.bernoulli(random.key(3), 0.0, (100,))).any()
    assert np.asarray(random.bernoulli(random.key(3), 1.0, (100,))).all()


def test_randint_bounds_and_uniformity():
    x = np.asarray(random.randint(random.key(4), (60_000,), -3, 3))
    assert x.dtype == np.int64
    assert x.min() == -3 and x.max() == 2
    counts = np.bincount(x + 3)
    assert counts.min() > 9_500 and counts.max() < 10_500
    y = np.asarray(random.randint(random.key(4), (1000,), 0, 10, dtype=np.int32))
    assert y.dtype == np.int32 and y.min() >= 0 and y.max() < 10
    # empty range gives minval, as in JAX
    assert (np.asarray(random.randint(random.key(4), (5,), 7, 7)) == 7).all()
    big = np.asarray(random.randint(random.key(4), (1000,), -2 ** 40, 2 ** 40))
    assert big.min() >= -2 ** 40 and big.max() < 2 ** 40 and np.abs(big).max() > 2 ** 38


def test_randint_rejects_float_bounds():
    with pytest.raises(TypeError, match="randint"):
        random.randint(random.key(0), (3,), 0.5, 3)
    with pytest.raises(TypeError, match="randint"):
        random.randint(random.key(0), (3,), 0, 3, dtype=np.float64)


def test_permutation_is_a_permutation():
    k = random.key(9)
    for n in (0, 1, 2, 17, 1000):
        p = np.asarray(random.permutation(k, n))
        assert p.dtype == np.int64
        assert sorted(p.tolist()) == list(range(n))
    x = np.arange(20.0).reshape(5, 4)
    px = np.asarray(random.permutation(k, x))
    assert sorted(px[:, 0].tolist()) == x[:, 0].tolist()
    np.testing.assert_array_equal(np.sort(px, axis=0), x)
    for row in px:      # rows move as a whole
        assert (row - row[0] == np.arange(4)).all()
    ind = np.asarray(random.permutation(k, x, axis=1, independent=True))
    np.testing.assert_array_equal(np.sort(ind, axis=1), x)


def test_permutation_is_roughly_uniform():
    ks = random.split(random.key(11), 3000)
    firsts = np.asarray(ft.vmap(lambda k: random.permutation(k, 3))(ks))
    counts = {}
    for p in map(tuple, firsts.tolist()):
        counts[p] = counts.get(p, 0) + 1
    assert len(counts) == 6 and min(counts.values()) > 400


def test_choice():
    k = random.key(12)
    c = np.asarray(random.choice(k, 5, (20_000,), p=np.array([0.1, 0.0, 0.2, 0.3, 0.4])))
    freq = np.bincount(c, minlength=5) / c.size
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.2, 0.3, 0.4], atol=0.015)
    s = np.asarray(random.choice(k, np.arange(10) * 10, (10,), replace=False))
    assert sorted(s.tolist()) == list(range(0, 100, 10))
    with pytest.raises(ValueError, match="larger sample"):
        random.choice(k, 3, (4,), replace=False)


def test_bad_shapes_and_dtypes():
    k = random.key(0)
    with pytest.raises(ValueError, match="negative"):
        random.normal(k, (-1,))
    with pytest.raises(ValueError, match="floating"):   # JAX raises ValueError
        random.uniform(k, (2,), np.int32)
    with pytest.raises(ValueError, match="broadcast"):
        random.uniform(k, (2,), minval=np.zeros(3))


def test_random_inside_grad_of_a_model():
    # random draws are constants to autodiff: a noisy loss still differentiates
    k = random.key(0)

    def loss(w):
        noise = random.normal(k, (3,))
        return fnp.sum((w + noise) ** 2)

    w = np.arange(3.0)
    np.testing.assert_allclose(ft.grad(loss)(w), 2 * (w + np.asarray(random.normal(k, (3,)))))


def test_gumbel_exponential_categorical_statistics():
    k = random.key(13)
    g = np.asarray(random.gumbel(k, (100_000,)))
    assert abs(g.mean() - 0.5772156649) < 0.02 and abs(g.var() - np.pi ** 2 / 6) < 0.05
    e = np.asarray(random.exponential(k, (100_000,)))
    assert e.min() >= 0 and abs(e.mean() - 1.0) < 0.015 and abs(e.var() - 1.0) < 0.04
    p = np.array([0.2, 0.3, 0.5])
    c = np.asarray(random.categorical(k, np.log(p), shape=(30_000,)))
    np.testing.assert_allclose(np.bincount(c, minlength=3) / c.size, p, atol=0.015)
    rows = np.asarray(random.categorical(k, np.log(np.array([[1.0, 0.0], [0.0, 1.0]]) + 1e-300)))
    assert rows.tolist() == [0, 1]
    with pytest.raises(ValueError, match="categorical"):
        random.categorical(k, np.zeros((2, 3)), shape=(4,))


def test_large_eager_draws_run_compiled_with_jit_values():
    R = random
    k = ft.random.PRNGKey(7)
    n = R.EAGER_COMPILE_MIN
    R._compiled_samplers._entries.clear()
    x = ft.random.normal(k, (n,))
    assert len(R._compiled_samplers) == 1
    np.testing.assert_array_equal(x, ft.jit(lambda k: ft.random.normal(k, (n,)))(k))
    np.testing.assert_array_equal(x, ft.random.normal(k, (n,)))       # same draw again
    assert len(R._compiled_samplers) == 1                             # and no new compile
    # a float argument is a traced input, not baked in: new bounds, new values
    u1 = ft.random.uniform(k, (n,), minval=-1.0, maxval=1.0)
    u2 = ft.random.uniform(k, (n,), minval=2.0, maxval=3.0)
    assert float(u1.min()) >= -1.0 and float(u1.max()) < 1.0
    assert float(u2.min()) >= 2.0 and float(u2.max()) < 3.0
    np.testing.assert_array_equal(u1, ft.random.uniform(k, (n,), minval=-1.0, maxval=1.0))
    # an int argument stays static (a population size): each gets its own range
    c = ft.random.choice(k, 3, (n,))
    assert set(np.unique(c).tolist()) == {0, 1, 2}
    assert int(ft.random.choice(k, 1000, (n,)).max()) > 900
    # below the size, or under a trace, nothing is compiled for the draw
    small = ft.random.normal(k, (8,))
    assert small.shape == (8,) and len(R._compiled_samplers) == 4
    jaxpr = ft.make_jaxpr(lambda s: s * ft.random.normal(k, (n,)))(1.0)
    assert "threefry2x32" in str(jaxpr)
    keys = ft.random.split(k, 2)
    batched = ft.vmap(lambda kk: ft.random.normal(kk, (n,)))(keys)
    np.testing.assert_allclose(batched[1], ft.random.normal(keys[1], (n,)), rtol=1e-13)
