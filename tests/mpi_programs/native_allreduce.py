"""psum/pmax/pmin inside a compiled shard_map body called from native code
(``functrans.primitives.collectives_native``) against the same bodies with every collective
a host step (mpi4py): bit-equal values for each dtype and kind, over a 1-d mesh and each
axis and both axes of a 2 x 2 mesh, on strided and broadcast operands, results small and
large (received into the workspace, then copied out); the same
``comm_stats``; the rewrite really taken. Prints ``OK <count>`` on rank 0."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.primitives.collectives_native import native_collectives, stats
from functrans.sharding import Mesh, P

ft.distributed.initialize()
n, me = ft.process_count(), ft.process_index()
rng = np.random.default_rng(0)
KINDS = {"psum": lax.psum, "pmax": lax.pmax, "pmin": lax.pmin}


def run(f, mesh, spec, x, native):
    """jit(shard_map(f)) on x with the native rewrite on or off: (value, comm_stats)."""
    before = native_collectives(native)
    try:
        g = ft.jit(ft.shard_map(f, mesh, in_specs=spec, out_specs=spec, check_rep=False))
        g(x)
        value, counted = ft.distributed.measure_comm(lambda: g(x))
    finally:
        native_collectives(before)
    return np.asarray(value), counted


def same(name, f, mesh, spec, x):
    got, got_stats = run(f, mesh, spec, x, True)
    want, want_stats = run(f, mesh, spec, x, False)
    if got.dtype != want.dtype or not np.array_equal(got, want):
        raise AssertionError(f"rank {me}, {name}: native {got.tolist()} != host {want.tolist()}")
    if got_stats != want_stats:
        raise AssertionError(f"rank {me}, {name}: counted {got_stats} != {want_stats}")


checks = 0
meshes = [(Mesh((n,), ("i",)), P("i"), ("i",))]
if n == 4:
    m2 = Mesh((2, 2), ("a", "b"))
    meshes.append((m2, P(("a", "b")), ("a", "b", ("a", "b"))))
for mesh, spec, axes in meshes:
    for dtype in ("float64", "float32", "int64", "int32"):
        x = (rng.normal(size=(4 * n, 6)) * 100).astype(dtype)
        for kind, coll in KINDS.items():
            for ax in axes:
                same(f"{kind} {dtype} over {ax}", lambda b, c=coll, a=ax: c(b, a), mesh, spec, x)
                # a strided operand (a transpose view) and one made of a broadcast
                same(f"{kind} {dtype} transposed over {ax}",
                     lambda b, c=coll, a=ax: c(b.T, a).T, mesh, spec, x)
                same(f"{kind} {dtype} of a broadcast over {ax}",
                     lambda b, c=coll, a=ax: b + c(fnp.ones_like(b) * 3, a), mesh, spec, x)
                checks += 3
# an all-reduce inside a jit inside the body (inlined before the rewrite)
same("psum in an inner jit", ft.jit(lambda b: lax.psum(fnp.cos(b), "i")), meshes[0][0],
     meshes[0][1], rng.normal(size=(4 * n, 5)))
checks += 1
# ZeRO-3's pattern: a checkpoint re-gathers the parameters in the backward pass; the
# compiled body must keep both all-gathers (its barrier stops CSE from merging them)
def zero3(s):
    loss = ft.checkpoint(lambda s: fnp.sum(fnp.tanh(lax.all_gather(s, "i", tiled=True)) ** 2))
    value, g = ft.value_and_grad(loss)(s)
    return lax.psum(g, "i") + lax.pmean(value, "i")


got, counted = run(zero3, meshes[0][0], meshes[0][1], rng.normal(size=(4 * n, 3)), True)
if n > 1 and counted["all_gather"]["calls"] != 2:
    raise AssertionError(f"rank {me}: checkpointed all_gather under grad: {counted}")
checks += 1
# a dead all-reduce is neither made nor counted
same("dead psum", lambda b: (lax.psum(b, "i"), b * 2)[1], meshes[0][0], meshes[0][1],
     rng.normal(size=(4 * n, 2)))
checks += 1
# large results (>= 64 KiB per block, MPICH's large-message path) straight into the output
for dtype in ("float64", "float32"):
    big = rng.normal(size=(n * 96, 257)).astype(dtype)        # >= 64 KiB per block
    for kind, coll in KINDS.items():
        same(f"{kind} {dtype} staged", lambda b, c=coll: c(b, "i") * 2, meshes[0][0],
             meshes[0][1], big)
        checks += 1
before = stats["all-reduces rewritten"]
# a body mixing a native all-reduce with host-step collectives, and its gradient
mesh, spec = meshes[0][0], meshes[0][1]
w = rng.normal(size=(4 * n, 3))
same("psum beside all_gather", lambda b: lax.psum(b, "i") + lax.all_gather(b, "i", tiled=True)
     [: b.shape[0]], mesh, spec, w)
g = ft.jit(ft.grad(ft.shard_map(lambda b: fnp.sum(lax.psum(fnp.sin(b), "i") ** 2), mesh,
                                in_specs=spec, out_specs=P())))
native_collectives(False)
want = np.asarray(ft.jit(ft.grad(ft.shard_map(
    lambda b: fnp.sum(lax.psum(fnp.sin(b), "i") ** 2), mesh, in_specs=spec,
    out_specs=P())))(w))
native_collectives(True)
if not np.array_equal(np.asarray(g(w)), want):
    raise AssertionError(f"rank {me}: gradient differs natively")
checks += 2
if n > 1 and not stats["all-reduces rewritten"] > before:
    raise AssertionError(f"rank {me}: no all-reduce was rewritten to a native call")
if me == 0:
    print("OK", checks)
