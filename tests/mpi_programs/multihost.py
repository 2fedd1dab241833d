"""JAX's multi-process helpers on functrans's MPI runtime: multihost_utils (allgather
stacked / tiled on pytrees of several dtypes, broadcast_one_to_all from any source,
assert_equal / sync_global_devices, shape mismatches raising on every process, host-local
<-> global arrays), make_array_from_callback / _process_local_data / _single_device_arrays
on 1-d and 2-d meshes with split, replicated and tuple-of-axes dimensions, mesh_utils'
device meshes as Mesh(devices, names), and comm_stats' count of an allgather. Every value
is compared exactly with a numpy model. Prints ``OK <count>`` on rank 0."""
import numpy as np

import functrans as ft
from functrans import lax
from functrans.experimental import mesh_utils, multihost_utils as mu
from functrans.experimental.shard_map import shard_map
from functrans.sharding import Mesh, P

ft.distributed.initialize()
n, r = ft.process_count(), ft.process_index()
count = 0


def same(got, want, what):
    global count
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype or not np.array_equal(got, want):
        raise AssertionError(f"{what}: got {got.dtype}{got.shape} {got.tolist()}, want "
                             f"{want.dtype}{want.shape} {want.tolist()}")
    count += 1


def raises(exc, text, fn, what):
    global count
    try:
        fn()
    except exc as e:
        if text not in str(e):
            raise AssertionError(f"{what}: message {e} lacks {text!r}") from None
        count += 1
        return
    raise AssertionError(f"{what}: no {exc.__name__}")


def per_rank(k):
    """Rank k's leaves: several dtypes, a scalar, a 2-d array."""
    return {"i": np.arange(3) + 10 * k, "h": np.float16([k, 0.5]), "b": np.array([k % 2 == 1]),
            "c": np.complex64([1j * k]), "s": np.float64(k), "m": np.full((2, 2), k, np.int8)}


# ---- process_allgather
mine, all_ = per_rank(r), [per_rank(k) for k in range(n)]
stacked = mu.process_allgather(mine)
tiled = mu.process_allgather(mine, tiled=True)
for key in mine:
    same(stacked[key], np.stack([a[key] for a in all_]), f"allgather {key}")
    want = np.concatenate([np.atleast_1d(a[key]) for a in all_])
    want = want.reshape(()) if n == 1 and np.ndim(mine[key]) == 0 else want   # JAX's rule
    same(tiled[key], want, f"allgather tiled {key}")
ft.distributed.reset_comm_stats()
_, stats = ft.distributed.measure_comm(lambda: mu.process_allgather(np.ones(4)))
same(stats.get("all_gather", {"bytes_sent": 0})["bytes_sent"], (n - 1) * 32,
     "allgather counted")
if n > 1:
    raises(ValueError, "process 1", lambda: mu.process_allgather(np.ones(r + 1)),
           "allgather shapes differ")
mesh = Mesh(mesh_utils.create_device_mesh((n,)), ("i",))
G = np.arange(4.0 * n * 3).reshape(4 * n, 3)
g = ft.device_put(G, ft.NamedSharding(mesh, P("i")))
same(mu.process_allgather(g, tiled=True), G, "allgather of a global array")
if n > 1:
    raises(ValueError, "tiled=True", lambda: mu.process_allgather(g), "global untiled")

# ---- broadcast_one_to_all, assert_equal, sync_global_devices
got = mu.broadcast_one_to_all(mine)
for key in mine:
    same(got[key], np.asarray(all_[0][key]), f"broadcast {key}")
got = mu.broadcast_one_to_all(mine, is_source=r == n - 1)
for key in mine:
    same(got[key], np.asarray(all_[n - 1][key]), f"broadcast from last {key}")
mu.assert_equal({"a": np.arange(3), "s": 2.0})
mu.sync_global_devices("step 1")
if n > 1:
    raises(AssertionError, "values differ", lambda: mu.assert_equal(np.float64(r),
                                                                    "values differ"),
           "assert_equal differing")
    raises(AssertionError, "name mismatch", lambda: mu.sync_global_devices(f"rank {r}"),
           "sync names differ")


# ---- make_array_* on every mesh and spec
def layouts():
    yield Mesh((n,), ("i",)), [P("i"), P(None, "i"), P(), P("i", None)]
    if n == 4:
        m = Mesh(mesh_utils.create_device_mesh((2, 2)), ("a", "b"))
        yield m, [P("a", "b"), P("b", "a"), P(("a", "b")), P(("b", "a")), P(None, "b"),
                  P("a")]
    else:
        yield Mesh((n, 1), ("a", "b")), [P("a", "b"), P(("b", "a")), P(None, "a")]


X = np.arange(8 * 12, dtype=np.int32).reshape(8, 12) * (n + 1)
for m, specs in layouts():
    for spec in specs:
        s = ft.NamedSharding(m, spec)
        seen = []
        out = ft.make_array_from_callback(X.shape, s, lambda idx: seen.append(idx) or X[idx])
        same(out, X, f"callback {m} {spec}")
        assert out.sharding == s and len(seen) == 1
        block = X[seen[0]]
        # this process reads its own block, as in JAX; the blocks of all tile X, each
        # block held by its replicas 0..k-1
        mine_shard, = out.addressable_shards
        same(mine_shard.data, block, f"addressable shard {m} {spec}")
        cover, replicas = np.zeros(X.shape, np.int64), {}
        for g in out.global_shards:
            cover[g.index] += 1
            replicas.setdefault(str(g.index), []).append(g.replica_id)
            # Python ints, as JAX's (they were numpy ints: json.dumps(replica_id) failed)
            assert type(g.replica_id) is int and all(
                type(v) is int for sl in g.index for v in (sl.start, sl.stop) if v is not None)
            assert (g.data is not None) == (g.device == ft.local_devices()[0])
        k = n // len(replicas)
        same(cover, np.full(X.shape, k), f"global shards tile {m} {spec}")
        assert all(sorted(v) == list(range(k)) for v in replicas.values()), replicas
        assert out.is_fully_addressable == (n == 1)
        assert out.is_fully_replicated == (k == n)
        same(ft.make_array_from_process_local_data(s, block), X, f"local data {m} {spec}")
        same(ft.make_array_from_process_local_data(s, {"x": X}, {"x": X.shape})["x"], X,
             f"local data whole {spec}")
        same(ft.make_array_from_single_device_arrays(X.shape, s, [block]), X,
             f"single device arrays {m} {spec}")
        local = mu.global_array_to_host_local_array({"x": out}, m, {"x": spec})["x"]
        same(local, block, f"global to local {spec}")
        same(mu.host_local_array_to_global_array([local], m, spec)[0], X,
             f"local to global {spec}")
if n > 1:
    raises(ValueError, "not divisible", lambda: ft.make_array_from_callback(
        (n + 1,), ft.NamedSharding(mesh, P("i")), lambda idx: np.zeros(1)), "indivisible")
    raises(ValueError, "process 1", lambda: mu.host_local_array_to_global_array(
        np.ones(r + 1), mesh, P("i")), "local blocks of different shapes")

# ---- meshes from devices; shard_map's older import path over one
if n > 1:
    raises(ValueError, "in order", lambda: Mesh(np.array(ft.devices()[::-1]), "i"),
           "devices out of order")
hybrid = mesh_utils.create_hybrid_device_mesh((1,), (n,), process_is_granule=True)
same(np.array([d.id for d in hybrid]), np.arange(n), "hybrid mesh")
f = shard_map(lambda x: lax.psum(x, "i"), mesh, in_specs=P("i"), out_specs=P())
same(f(np.arange(2.0 * n)), np.arange(2.0 * n).reshape(n, 2).sum(0), "shard_map")
# device_put to process 0's device inside a body: the same on every process (it raised on
# the others only, which then left process 0 waiting in the psum)
g = shard_map(lambda x: lax.psum(x + ft.device_put(1.0, ft.devices()[0]), "i"), mesh,
              in_specs=P("i"), out_specs=P())
for h in (g, ft.jit(g)):
    same(h(np.arange(2.0 * n)), np.arange(2.0 * n).reshape(n, 2).sum(0) + n, "device_put body")

if r == 0:
    print("OK", count)
