"""Each collective on a mesh axis (shard_map over the processes) against its vmap
axis-name version on one process: value, JVP and VJP, plus the VJP against central finite
differences. Run by tests/test_distributed.py under ``mpiexec -n 2`` and ``-n 4``; prints
``OK <count>`` on rank 0; any mismatch raises, which aborts the job."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import Mesh, P

ft.distributed.initialize()
n = ft.process_count()
rng = np.random.default_rng(0)


def close(a, b, what, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol):
        raise AssertionError(f"{what}: mesh {a.tolist()} != vmap {b.tolist()}")


def check(name, f, example_shape, mesh, spec, vmapped):
    """f per member; compare shard_map(f) with vmapped(f) on the same global data."""
    X = rng.normal(size=mesh.axis_sizes + example_shape)
    T = rng.normal(size=X.shape)
    lead = len(mesh.axis_sizes)

    def per_block(x):
        y = f(x.reshape(x.shape[lead:]))
        return y.reshape((1,) * lead + y.shape)

    sharded = ft.shard_map(per_block, mesh, in_specs=spec, out_specs=spec)
    ref = vmapped(f)
    close(sharded(X), ref(X), f"{name} value")
    close(ft.jvp(sharded, (X,), (T,))[1], ft.jvp(ref, (X,), (T,))[1], f"{name} jvp")
    out, back = ft.vjp(sharded, X)
    ct = rng.normal(size=np.shape(out))
    g = back(ct)[0]
    close(g, ft.vjp(ref, X)[1](ct)[0], f"{name} vjp")
    eps = 1e-6
    fd = (np.asarray(sharded(X + eps * T)) - np.asarray(sharded(X - eps * T))) / (2 * eps)
    if abs(np.vdot(g, T) - np.vdot(ct, fd)) > 1e-6 * (1 + abs(np.vdot(g, T))):
        raise AssertionError(f"{name} vjp vs finite differences: {np.vdot(g, T)} vs "
                             f"{np.vdot(ct, fd)}")
    # jit around the shard_map, and jit inside it, agree too
    close(ft.jit(sharded)(X), ref(X), f"{name} jit(shard_map)")
    return 1


mesh = Mesh((n,), ("i",))
vm = lambda f: ft.vmap(f, axis_name="i")   # noqa: E731
ring = [(k, (k + 1) % n) for k in range(n)]
cases = {
    "psum": (lambda x: lax.psum(x * x, "i"), (3,)),
    "pmean": (lambda x: lax.pmean(fnp.sin(x), "i"), (3,)),
    "pmax": (lambda x: lax.pmax(fnp.sin(x), "i"), (3,)),
    "pmin": (lambda x: lax.pmin(fnp.sin(x), "i"), (3,)),
    "all_gather": (lambda x: lax.all_gather(x * x, "i"), (3,)),
    "all_gather_tiled": (lambda x: lax.all_gather(x * x, "i", axis=1, tiled=True), (2, 3)),
    "psum_scatter": (lambda x: lax.psum_scatter(x * x, "i"), (n, 3)),
    "psum_scatter_tiled": (lambda x: lax.psum_scatter(x * x, "i", scatter_dimension=1,
                                                      tiled=True), (3, 2 * n)),
    "all_to_all": (lambda x: lax.all_to_all(x * x, "i", 0, 1), (n, 3)),
    "all_to_all_tiled": (lambda x: lax.all_to_all(x * x, "i", 0, 1, tiled=True), (2 * n, 3)),
    "ppermute": (lambda x: lax.ppermute(x * x, "i", ring), (3,)),
    "ppermute_partial": (lambda x: lax.ppermute(x * x, "i", [(0, n - 1)]), (3,)),
    "axis_index": (lambda x: x * x * (lax.axis_index("i") + 1.0) * lax.axis_size("i"), (3,)),
    "constant_psum": (lambda x: x * lax.psum(2.0, "i"), (3,)),
}
count = 0
for name, (f, shape) in cases.items():
    count += check(name, f, shape, mesh, P("i"), vm)

if n == 4:   # two axes, collectives over one and over both
    mesh2 = Mesh((2, 2), ("a", "b"))
    vm2 = lambda f: ft.vmap(ft.vmap(f, axis_name="b"), axis_name="a")   # noqa: E731
    cases2 = {
        "psum_ab": (lambda x: lax.psum(x * x, ("a", "b")), (3,)),
        "psum_b": (lambda x: lax.psum(fnp.sin(x), "b") * lax.axis_index("a"), (3,)),
        "all_gather_ab": (lambda x: lax.all_gather(x * x, ("a", "b")), (3,)),
        "psum_scatter_ab": (lambda x: lax.psum_scatter(x * x, ("a", "b"), tiled=True), (8,)),
        "axis_index_ab": (lambda x: x * lax.axis_index(("a", "b")), (3,)),
        # over a tuple of axes (members row-major): JAX's ring over a 2-d mesh
        "ppermute_ba": (lambda x: lax.ppermute(x * x, ("b", "a"), [(0, 3), (3, 1), (1, 0)]),
                        (3,)),
        "all_to_all_ab": (lambda x: lax.all_to_all(x * x, ("a", "b"), 0, 1), (4, 3)),
        "all_to_all_ba_tiled": (lambda x: lax.all_to_all(x * x, ("b", "a"), 1, 0, tiled=True),
                                (2, 8)),
    }
    for name, (f, shape) in cases2.items():
        count += check(name, f, shape, mesh2, P("a", "b"), vm2)

# dtypes MPI handles differently: bool (MAX/MIN as uint8), float16, ints, complex
for dt, fn, ref in ((np.bool_, lax.pmax, np.max), (np.bool_, lax.pmin, np.min),
                    (np.float16, lax.psum, np.sum), (np.int32, lax.psum, np.sum),
                    (np.complex128, lax.psum, np.sum), (np.uint8, lax.pmax, np.max)):
    data = (np.arange(2 * n) % 3).astype(dt)
    got = ft.shard_map(lambda v: fn(v, "i"), mesh, in_specs=P("i"), out_specs=P())(data)
    want = ref(data.reshape(n, 2), axis=0).astype(dt)
    if got.dtype != want.dtype or not np.array_equal(got, want):
        raise AssertionError(f"{fn.__name__} of {np.dtype(dt).name}: {got} != {want}")
count += 1

# communication accounting: one psum of 1000 float64, one all_gather, one ppermute
ft.distributed.reset_comm_stats()
ft.shard_map(lambda x: lax.psum(x, "i"), mesh, in_specs=P(), out_specs=P())(np.ones(1000))
ft.shard_map(lambda x: lax.all_gather(x, "i"), mesh, in_specs=P(), out_specs=P())(np.ones(10))
ft.shard_map(lambda x: lax.ppermute(x, "i", [(0, 1 % n)]), mesh, in_specs=P(), out_specs=P(),
             check_rep=False)(np.ones(10))
stats = ft.distributed.comm_stats()
me = ft.process_index()
want = {"psum": {"calls": 1, "bytes_sent": round(2 * (n - 1) / n * 8000),
                 "bytes_received": round(2 * (n - 1) / n * 8000)},
        "all_gather": {"calls": 1, "bytes_sent": (n - 1) * 80, "bytes_received": (n - 1) * 80},
        "ppermute": {"calls": 1, "bytes_sent": 80 if me == 0 else 0,
                     "bytes_received": 80 if me == 1 else 0}}
if me > 1:
    del want["ppermute"]   # neither sends nor receives: no MPI call, none counted
if n == 1:
    want = {}      # a one-process axis needs no MPI
if stats != want:
    raise AssertionError(f"comm_stats {stats} != {want}")
count += 1

if ft.process_index() == 0:
    print("OK", count)
