"""functrans.random's argument errors where JAX 0.10.2 (x64) raises, with its error types
and the phrases its own tests match (random_test / random_lax_test), and the seeds JAX
accepts at the edges of the 64-bit range (key data stored from /work/jaxvenv with
JAX_ENABLE_X64=1)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
from functrans import random
from functrans.random_core import counter_words, threefry2x32

kd = random.key_data


@pytest.mark.parametrize("make", [random.key, random.PRNGKey])
def test_seed_errors_as_jax(make):
    name = make.__name__
    for bad in (np.pi, np.float32(1), "1", None, np.array(1.5)):
        with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
            make(bad)
    with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
        ft.jit(make)(1.5)
    with pytest.raises(TypeError, match=f"{name} accepts a scalar seed, but was given an array "
                                        r"of shape \(4,\)"):
        make(np.arange(4))
    with pytest.raises(TypeError, match=f"{name} accepts a scalar seed, but was given a PRNG"):
        make(random.key(0))
    for big in (2 ** 63, 2 ** 64 - 1, -2 ** 63 - 1):          # a Python int is an int64
        with pytest.raises(OverflowError):
            make(big)
        with pytest.raises(OverflowError):
            ft.jit(make)(big)


def test_seeds_at_the_64_bit_edges_as_jax():
    assert kd(random.key(np.uint64(2 ** 64 - 1))).tolist() == [4294967295, 4294967295]
    assert random.PRNGKey(-2 ** 63).tolist() == [2147483648, 0]
    assert random.PRNGKey(2 ** 63 - 1).tolist() == [2147483647, 4294967295]
    assert random.PRNGKey(np.uint64(2 ** 63)).tolist() == [2147483648, 0]


def test_impl_and_dtype_arguments_as_jax():
    dt = random.key_dtype()
    for k in (random.key(42, dtype="threefry2x32"), random.key(42, dtype=dt),
              random.key(42, impl=dt), random.key(42, impl=random.key_impl(random.key(0))),
              random.wrap_key_data(np.array([0, 42], np.uint32), dtype="threefry2x32"),
              random.wrap_key_data(np.array([0, 42], np.uint32), impl=dt)):
        assert k.dtype == dt and kd(k).tolist() == [0, 42]
    for f in (lambda: random.key(42, impl="threefry2x32", dtype=dt),
              lambda: random.wrap_key_data(np.zeros(2, np.uint32), impl="threefry2x32",
                                           dtype=dt)):
        with pytest.raises(ValueError, match="Cannot specify both `impl` and `dtype`"):
            f()
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        random.key(42, impl="unlikely name")
    with pytest.raises(ValueError, match="'rbg' PRNG is not implemented"):
        random.key(42, impl="rbg")
    with pytest.raises(TypeError, match="unrecognized type .* PRNG"):
        random.key(42, impl=object())
    with pytest.raises(TypeError, match="unrecognized type .* PRNG"):
        random.key(42, dtype=np.float32)


def test_sampler_argument_errors_as_jax():
    k = random.key(0)
    for dt in (np.int8, np.float16):
        with pytest.raises(ValueError, match="dtype argument .* must be an unsigned int dtype"):
            random.bits(k, (3, 4), dt)
    for replace in (True, False):
        with pytest.raises(TypeError, match="shape argument must be a sequence"):
            random.choice(k, 5, 2, replace=replace)
    with pytest.raises(ValueError, match="axis 3 is out of bounds"):
        random.permutation(k, 10, axis=3)
    assert random.permutation(k, 10, axis=-1).shape == (10,)
    with pytest.raises(ValueError, match=r"Number of samples without replacement \(5\) cannot "
                                         r"exceed number of categories \(3\)"):
        random.categorical(k, np.zeros(3), shape=(5,), replace=False)


def test_fold_in_data_range_as_jax():
    k = random.key(0)
    for data in (2 ** 40, -1):              # JAX: Python integer out of bounds for uint32
        with pytest.raises(OverflowError):
            random.fold_in(k, data)
    # numpy integers: modulo 2**32, as JAX's (stored key data)
    assert kd(random.fold_in(k, np.int64(2 ** 40 + 7))).tolist() == [2716826189, 292468403]
    assert kd(random.fold_in(k, np.uint64(2 ** 64 - 1))).tolist() == [743310391, 3789761811]


def test_wide_counters_are_the_64_bit_count():
    """Draws of 2**32 or more values count with JAX's two-word 64-bit counter (hi, lo);
    where both forms apply they agree, and hi carries past 2**32."""
    for shape in ((5,), (2, 3), (0,)):
        narrow, wide = counter_words(shape, False), counter_words(shape, True)
        for a, b in zip(narrow, wide):
            assert a.dtype == b.dtype == np.uint32 and a.tolist() == b.tolist()
    i = np.array([2 ** 32 + 5, 2 ** 33 + 1], np.uint64)
    hi = ft.lax.convert_element_type(ft.lax.shift_right_logical(i, np.uint64(32)), np.uint32)
    assert hi.tolist() == [1, 2]
    # JAX: threefry_2x32 of key(0)'s words at count (hi, lo) = (1, 5), its draw 2**32 + 5
    y = threefry2x32(np.uint32(0), np.uint32(0), np.uint32(1), np.uint32(5))
    assert [int(v) for v in y] == JAX_COUNT_1_5


JAX_COUNT_1_5 = [1501764800, 4221794875]   # jax._src.random.threefry2x32.threefry_2x32


def test_key_and_dtype_errors_as_jax():
    ks = random.split(random.key(0))
    for f, name in ((lambda: random.bits(ks, (2,)), "bits"),
                    (lambda: random.gamma(ks, 1.0, (2,)), "gamma"),
                    (lambda: random.fold_in(ks, 0), "fold_in"),
                    (lambda: random.normal(kd(ks), (2,)), "normal")):     # raw keys too
        with pytest.raises(ValueError, match=f"{name} accepts a single key, but was given a "
                                             "key array of shape"):
            f()
    for bad in (np.zeros(3, np.uint32), np.zeros(2, np.int32)):
        with pytest.raises(TypeError, match="invalid PRNG key data"):
            random.bits(bad, (2,))
    for f in (random.normal, random.uniform):
        with pytest.raises(ValueError, match="dtype argument to `.*` must be a floating dtype"):
            f(random.key(0), (2,), np.int32)
    with pytest.raises(TypeError, match="x must be an integer or an array with at least one"):
        random.permutation(random.key(0), 10.0)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        ft.jit(lambda k, n: random.normal(k, (n,)))(random.key(0), 2)
