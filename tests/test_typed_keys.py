"""Typed PRNG keys (``random.key``) against JAX 0.10.2's answers, measured with
``jax.random.key`` in /work/jaxvenv and hard-coded here: shapes, dtype, key data, draws
equal to raw ``PRNGKey`` ones, and keys through jit / vmap / grad / control flow /
pytrees / the array functions that move whole keys."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax, random
from functrans.shard_map import shard_map
from functrans.sharding import Mesh, PartitionSpec as P

kd = random.key_data
SPLIT4 = [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009],
          [2467461003, 3840466878]]                       # JAX: key_data(split(key(0), 4))
# JAX: vmap(lambda k: normal(k, (3,)))(split(key(0), 5)), float32
VMAP_NORMAL = [[1.004014253616333, -0.9063372015953064, -0.7481722235679626],
               [-2.442455768585205, -2.0356805324554443, 0.20554423332214355],
               [1.2956359386444092, 1.3550105094909668, -0.40960556268692017],
               [-0.6219435930252075, 0.6248040795326233, 1.6820775270462036],
               [-1.0208853483200073, 0.6098076701164246, -1.294169306755066]]


def test_key_is_typed_scalar_as_jax():
    k = random.key(0)
    assert k.shape == () and k.ndim == 0 and k.size == 1 and str(k.dtype) == "key<fry>"
    assert fnp.issubdtype(k.dtype, ft.dtypes.prng_key)
    assert not fnp.issubdtype(np.uint32, ft.dtypes.prng_key)
    assert not fnp.issubdtype(k.dtype, np.integer)
    assert kd(k).tolist() == [0, 0] and kd(k).dtype == np.uint32
    assert random.PRNGKey(0).shape == (2,) and random.PRNGKey(0).dtype == np.uint32
    assert random.key_impl(k) == "threefry2x32" and random.key_dtype() == k.dtype
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert isinstance(k, ft.Array) and isinstance(k, fnp.ndarray)       # JAX: a jax.Array
    s = random.split(k, 4)
    assert s.shape == (4,) and kd(s).tolist() == SPLIT4
    assert random.split(k, (2, 3)).shape == (2, 3) and kd(random.split(k, (2, 3))).shape == (2, 3, 2)
    assert kd(random.fold_in(k, 7)).tolist() == [2716826189, 292468403]
    w = random.wrap_key_data(np.array(SPLIT4, np.uint32))
    assert w.shape == (4,) and kd(w).tolist() == SPLIT4


def test_draws_equal_for_typed_and_raw_keys():
    for seed in (0, 3, 2 ** 40 + 5):
        k, r = random.key(seed), random.PRNGKey(seed)
        for draw in (lambda q: random.bits(q, (5,)), lambda q: random.uniform(q, (4,)),
                     lambda q: random.normal(q, (3,)), lambda q: random.randint(q, (4,), 0, 100),
                     lambda q: random.permutation(q, 6), lambda q: random.gamma(q, 2.0, (3,)),
                     lambda q: random.bernoulli(q, 0.5, (5,)), lambda q: random.poisson(q, 3.0, (3,))):
            np.testing.assert_array_equal(draw(k), draw(r))
    assert random.randint(random.key(3), (4,), 0, 100, dtype=np.int32).tolist() == [95, 39, 5, 54]
    assert random.permutation(random.key(3), 6).tolist() == [0, 5, 4, 2, 1, 3]
    assert random.uniform(random.key(1), (2,), dtype=np.float32).tolist() == [
        0.4386324882507324, 0.5337529182434082]


def test_vmap_over_split_keys_draws_jaxs_values():
    got = ft.vmap(lambda k: random.normal(k, (3,), dtype=np.float32))(random.split(random.key(0), 5))
    np.testing.assert_array_max_ulp(np.asarray(got), np.array(VMAP_NORMAL, np.float32), 2)
    out = ft.vmap(lambda k: random.split(k), out_axes=1)(random.split(random.key(0), 4))
    assert out.shape == (2, 4)                                              # JAX's
    keys = random.split(random.key(0), 5)          # negative axes count the keys' axes
    np.testing.assert_array_equal(ft.vmap(lambda k: random.bits(k, (3,)), in_axes=-1)(keys),
                                  ft.vmap(lambda k: random.bits(k, (3,)))(keys))
    assert ft.vmap(lambda k: random.split(k, 3), out_axes=-1)(keys).shape == (3, 5)  # JAX's
    assert ft.vmap(lambda k, x: random.normal(k) + x, in_axes=(None, 0))(
        random.key(0), np.arange(3.0)).shape == (3,)


def test_keys_through_jit_grad_and_control_flow():
    k = random.key(0)
    j = ft.jit(lambda q: random.split(q))(k)
    assert isinstance(j, type(k)) and j.shape == (2,) and kd(j).tolist() == SPLIT4[:2]
    f = ft.jit(lambda q, x: (random.split(q)[0], x + random.normal(q)))
    first, again = f(k, 1.0), f(k, 1.0)                # the second call: jit's fast path
    assert kd(again[0]).tolist() == kd(first[0]).tolist() == SPLIT4[0]
    assert float(again[1]) == float(first[1])
    under = ft.vmap(lambda q: f(q, 1.0)[1])(random.split(k, 2))  # a key over a tracer
    assert float(under[1]) == float(f(random.split(k, 2)[1], 1.0)[1])
    donated = ft.jit(lambda q: random.uniform(q, (2,)), donate_argnums=0)(random.key(1))
    np.testing.assert_array_equal(donated, random.uniform(random.PRNGKey(1), (2,)))
    g = ft.grad(lambda x, q: x * random.normal(q, dtype=np.float32))(1.0, k)
    np.testing.assert_allclose(g, 1.6226422, rtol=1e-6)                     # JAX's
    with pytest.raises(TypeError, match="grad"):
        ft.grad(lambda q: 1.0)(k)
    f0 = np.zeros((), ft.dtypes.float0)                  # JAX's tangent of a key: float0
    y, t = ft.jvp(lambda x, q: (2 * x, random.split(q)), (1.0, k), (1.0, f0))
    assert float(t[0]) == 2.0 and t[1].dtype == ft.dtypes.float0 and t[1].shape == (2,)
    ys = lax.scan(lambda c, _: (random.split(c)[0], random.bits(c)), k, None, length=3)[1]
    assert ys.tolist() == [4070199207, 3617712097, 1214273199]              # JAX's
    step = lambda q: random.split(q)[0]          # noqa: E731
    assert kd(lax.fori_loop(0, 3, lambda i, c: step(c), k)).tolist() == [683029726, 1624662641]
    w = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, step(c[1])), (0, k))[1]
    assert kd(w).tolist() == [683029726, 1624662641]
    assert kd(lax.cond(True, step, lambda q: q, k)).tolist() == SPLIT4[0]
    sw = lax.switch(1, [lambda q: q, lambda q: random.fold_in(q, 7)], k)
    assert kd(sw).tolist() == [2716826189, 292468403]
    assert ft.pmap(lambda q: random.uniform(q, (2,)))(random.split(k, 1)).shape == (1, 2)
    mesh = Mesh(np.array(ft.devices()[:1]), ("x",))
    sm = shard_map(lambda q: random.uniform(q[0], (2,))[None], mesh=mesh, in_specs=P("x"),
                   out_specs=P("x"))(random.split(k, 1))
    np.testing.assert_array_equal(sm[0], random.uniform(random.split(random.PRNGKey(0), 1)[0], (2,)))


def test_keys_are_tree_leaves_and_refuse_arithmetic():
    k = random.key(0)
    leaves = ft.tree.leaves({"a": k, "b": 1})
    assert len(leaves) == 2 and leaves[0] is k
    assert ft.tree.map(lambda x: x.shape, {"k": random.split(k, 3)}) == {"k": (3,)}
    for op in (lambda: k + 1, lambda: k * k, lambda: -k, lambda: 1 - k):
        with pytest.raises(TypeError, match="key<fry>"):
            op()
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)
    with pytest.raises(ValueError, match="normal accepts a single key, but was given a key "
                                         r"array of shape \(2,\)"):      # JAX's ValueError
        random.normal(random.split(k, 2), (2,))
    s = random.split(k, 4)
    assert (s == s[0]).tolist() == [True, False, False, False]             # JAX's
    assert bool(k != random.key(1)) and bool(k == random.key(0))
    assert ft.jit(lambda a, b: a == b)(s, s).tolist() == [True] * 4


def test_array_functions_move_whole_keys():
    k = random.key(0)
    s = random.split(k, 4)
    assert fnp.stack([k, k]).shape == (2,) and fnp.concatenate([s, s]).shape == (8,)
    mask = np.array([True, False, True, False])
    assert kd(fnp.where(mask, s, s[::-1])).tolist() == [SPLIT4[0], SPLIT4[2], SPLIT4[2], SPLIT4[0]]
    assert kd(lax.select(mask, s, s[::-1])).tolist() == kd(fnp.where(mask, s, s[::-1])).tolist()
    assert s.reshape(2, 2).shape == fnp.reshape(s, (2, 2)).shape == (2, 2)
    assert kd(s.reshape(2, 2).T).tolist() == [[SPLIT4[0], SPLIT4[2]], [SPLIT4[1], SPLIT4[3]]]
    assert fnp.squeeze(s[None]).shape == (4,) and fnp.expand_dims(s, -1).shape == (4, 1)
    assert fnp.broadcast_to(k, (3,)).shape == (3,)
    assert kd(fnp.take(s, np.array([1, 0]))).tolist() == [SPLIT4[1], SPLIT4[0]]
    assert kd(s[np.array([3, 1])]).tolist() == [SPLIT4[3], SPLIT4[1]]
    assert kd(s[..., 1]).tolist() == SPLIT4[1] and len(s) == 4 and [q.shape for q in s] == [()] * 4
    assert lax.dynamic_slice(s, (1,), (2,)).shape == (2,)
    got = ft.jit(lambda a, i: lax.dynamic_index_in_dim(a, i, keepdims=False))(s, 2)
    assert got.shape == () and kd(got).tolist() == SPLIT4[2]
    with pytest.raises(TypeError, match="typed PRNG keys"):
        fnp.stack([k, np.zeros(2, np.uint32)])
