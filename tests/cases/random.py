"""Table rows for ``functrans.random`` and the ``threefry2x32`` primitive. Random
values have no numpy reference (``ref=None``) and no derivative (``diff=False``);
the table still checks jit == eager, the printed jaxpr round trip, and that vmap
over keys equals a loop. Statistics and reproducibility are in tests/test_random.py."""
import numpy as np

from functrans import random
from functrans.primitives.random import threefry2x32
from tests.cases import OpCase, gen


def _key(rng):
    return rng.integers(0, 2 ** 32, 2, dtype=np.uint64).astype(np.uint32)


def _u32(*shape):
    return lambda rng: rng.integers(0, 2 ** 32, shape, dtype=np.uint64).astype(np.uint32)


CASES = []


def row(name, fun, args=gen(_key), **kw):
    CASES.append(OpCase(name, fun, args, None, diff=False, **kw))


row("threefry2x32", lambda a, b, c, d: threefry2x32(a, b, c, d),
    gen(_u32(4), _u32(4), _u32(4), _u32(4)))
row("threefry2x32_scalar", lambda a, b, c, d: threefry2x32(a, b, c, d),
    gen(_u32(), _u32(), _u32(), _u32()))
row("random_split", lambda k: random.split(k, 3))
row("random_fold_in", lambda k: random.fold_in(k, 7))
row("random_bits", lambda k: random.bits(k, (2, 3)))
row("random_uniform", lambda k: random.uniform(k, (2, 3)))
row("random_uniform_f32_bounds", lambda k: random.uniform(k, (5,), np.float32, -2.0, 3.0))
row("random_uniform_odd_scalar", lambda k: random.uniform(k, ()))
row("random_normal", lambda k: random.normal(k, (3, 2)))
row("random_normal_f32", lambda k: random.normal(k, (5,), np.float32))
row("random_normal_empty", lambda k: random.normal(k, (0, 3)))
row("random_bernoulli", lambda k: random.bernoulli(k, 0.3, (7,)))
row("random_bernoulli_array_p", lambda k, p: random.bernoulli(k, p),
    gen(_key, lambda rng: rng.uniform(0, 1, (4,))))
row("random_randint", lambda k: random.randint(k, (6,), -3, 9))
row("random_randint_int32_array_bounds", lambda k: random.randint(
    k, (2, 3), np.array([0, 10, 100]), np.array([5, 20, 1000]), dtype=np.int32))
row("random_permutation_n", lambda k: random.permutation(k, 6))
row("random_permutation_array", lambda k, x: random.permutation(k, x),
    gen(_key, lambda rng: rng.standard_normal(5)))
row("random_permutation_2d_axis1", lambda k, x: random.permutation(k, x, axis=1),
    gen(_key, lambda rng: rng.standard_normal((2, 4))))
row("random_permutation_independent", lambda k: random.permutation(
    k, np.arange(12.0).reshape(3, 4), axis=1, independent=True))
row("random_choice", lambda k: random.choice(k, 10, (4,)))
row("random_choice_no_replace", lambda k: random.choice(k, np.arange(8.0), (3,), replace=False))
row("random_choice_p", lambda k: random.choice(k, 4, (5,), p=np.array([0.1, 0.2, 0.3, 0.4])))
row("random_key_from_traced_seed", lambda s: random.key(s),
    lambda rng: [np.int64(rng.integers(-2 ** 40, 2 ** 40))])
row("random_gumbel", lambda k: random.gumbel(k, (4,)))
row("random_exponential_f32", lambda k: random.exponential(k, (4,), np.float32))
row("random_categorical", lambda k, l: random.categorical(k, l),
    gen(_key, lambda rng: rng.standard_normal((3, 5))))
