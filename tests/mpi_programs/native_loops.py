"""Collectives inside loops and conds of a jitted shard_map call MPI natively
(``functrans.primitives.collectives_native_flow``) and the shard_map is inlined; a while
whose predicate may differ between processes stays a host step; psum / pmax / pmin of
every MPI integer, unsigned, bool, float16 and complex (sum) dtype are native. Each
against the same program with every collective a host step: bit-equal values, the same
``comm_stats``. Prints ``OK <count>`` on rank 0."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.primitives.collectives_native import native_collectives, stats
from functrans.sharding import Mesh, P

ft.distributed.initialize()
n, me = ft.process_count(), ft.process_index()
rng = np.random.default_rng(0)
mesh = Mesh((n,), ("i",))
checks = 0


def run(f, specs, args, native):
    before = native_collectives(native)
    try:
        g = ft.jit(ft.shard_map(f, mesh, in_specs=specs, out_specs=P(), check_rep=False))
        g(*args)
        value, counted = ft.distributed.measure_comm(lambda: g(*args))
    finally:
        native_collectives(before)
    return np.asarray(value), counted


def same(name, f, specs, args, inlined=True):
    """jit(shard_map(f)) native equals its host-step run bit for bit, counts alike, and is
    inlined (or not) as ``inlined`` says."""
    global checks
    want, want_stats = run(f, specs, args, False)
    before = dict(stats)
    got, got_stats = run(f, specs, args, True)
    inl = stats["shard_maps inlined"] > before["shard_maps inlined"]
    if n > 1 and inl != inlined:
        raise AssertionError(f"rank {me}, {name}: inlined {inl}, expected {inlined}")
    rewritten = [stats[k] - before[k] for k in ("all-reduces rewritten", "collectives rewritten")]
    if n > 1 and inlined and not any(rewritten):
        raise AssertionError(f"rank {me}, {name}: no collective rewritten to a native call")
    if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
        raise AssertionError(f"rank {me}, {name}: native {got.tolist()} != host {want.tolist()}")
    if got_stats != want_stats:
        raise AssertionError(f"rank {me}, {name}: counted {got_stats} != {want_stats}")
    checks += 1


w = rng.normal(size=(4 * n, 3))
ring = [(j, (j + 1) % n) for j in range(n)]
same("psum in a scan", lambda b: lax.scan(lambda c, r: (c + lax.psum(r, "i"), None),
                                          fnp.zeros(3), b)[0], P("i"), (w,))
# pipeline parallelism: each micro-batch through this stage, then ppermute to the next
same("ppermute in a scan (GPipe)",
     lambda b: lax.scan(lambda c, r: (lax.ppermute(fnp.tanh(c + r), "i", ring), c), fnp.zeros(3),
                        b)[1], P("i"), (w,))
same("fori_loop (static bounds) of an all_gather and axis_index",
     lambda b: lax.fori_loop(0, 3, lambda k, c: c + lax.all_gather(c * lax.axis_index("i"),
                                                                    "i", tiled=True)[:4], b),
     P("i"), (w,))
same("fori_loop with a replicated traced bound",
     lambda b, m: lax.fori_loop(0, m, lambda k, c: lax.pmax(c, "i") + k, b), (P("i"), P()),
     (w, np.int32(3)))
same("while on a psum'd predicate",
     lambda b: lax.while_loop(lambda c: lax.psum(fnp.sum(c[1]), "i") < 50.0,
                              lambda c: (c[0] + 1, lax.psum(fnp.abs(c[1]), "i")),
                              (0, b))[1], P("i"), (w,))
same("cond on a replicated index, psum in a branch",
     lambda b, s: lax.cond(s > 0, lambda x: lax.psum(x, "i"), lambda x: x * 2.0, b),
     (P("i"), P()), (w, 1.0))
same("nested: psum in a cond (replicated index) in a scan",
     lambda b, s: lax.scan(lambda c, r: (lax.cond(s > 0, lambda x: lax.psum(x, "i"),
                                                  lambda x: x, c + r), None), fnp.zeros(3), b)[0],
     (P("i"), P()), (w, 1.0))
# the analysis is conservative: a cond on a carry that a collective inside a cond made
# (replicated in fact) is not proven the same everywhere: a host step, still equal
same("nested: psum in a cond on the carry in a scan (host step)",
     lambda b: lax.scan(lambda c, r: (lax.cond(fnp.sum(c) > -1e9, lambda x: lax.psum(x, "i"),
                                               lambda x: x, c + r), None), fnp.zeros(3), b)[0],
     P("i"), (w,), inlined=False)
# a predicate on this process's own block may differ between processes: a host step (the
# shard_map is not inlined), still equal
same("while on a local predicate (host step)",
     lambda b: lax.while_loop(lambda c: c[0] < 3 + 0 * fnp.sum(c[1]).astype(int),
                              lambda c: (c[0] + 1, lax.psum(c[1], "i")), (0, b))[1],
     P("i"), (w,), inlined=False)
same("cond on a local index (host step)",
     lambda b: lax.cond(fnp.sum(b) > 1e9, lambda x: lax.psum(x, "i"), lambda x: x + 0.0, b),
     P("i"), (w,), inlined=False)
# reductions of the other dtypes (int16 / uint16 do not exist here) (the host step's own MPI datatype; bool as uint8)
DTYPES = ("int8", "uint8", "uint32", "uint64", "bool", "float16",
          "complex64", "complex128") if n < 4 else ("int8", "uint32", "bool", "float16")
for dtype in DTYPES:
    x = rng.normal(size=(4 * n, 5)) * 100
    x = x > 0 if dtype == "bool" else (np.abs(x) if dtype[0] == "u" else x).astype(dtype)
    ops = {"c": (lax.psum,), "b": (lax.pmax, lax.pmin)}.get(dtype[0], (lax.psum, lax.pmax,
                                                                      lax.pmin))
    for op in ops:                      # (psum of bool is a TypeError, as in JAX)
        same(f"{op.__name__} {dtype}", lambda b, op=op: op(b, "i"), P("i"), (x,))
    if dtype not in ("bool",):
        same(f"psum_scatter {dtype}",
             lambda b: lax.psum_scatter(b, "i", scatter_dimension=0, tiled=True), P("i"), (x,))
# cost_analysis counts the collectives inside the loop per trip, native or not
pipe = lambda b: lax.scan(lambda c, r: (lax.ppermute(c + lax.psum(r, "i"), "i", ring),  # noqa
                                        None), fnp.zeros(3), b)[0]
costs = []
for native in (True, False):
    before = native_collectives(native)
    g = ft.jit(ft.shard_map(pipe, mesh, in_specs=P("i"), out_specs=P(), check_rep=False))
    c = g.lower(w).compile().cost_analysis()
    native_collectives(before)
    costs.append((c["collectives"], c["bytes sent"], c["bytes received"]))
if costs[0] != costs[1] or costs[0][0]["psum"]["calls"] != 4:
    raise AssertionError(f"rank {me}: cost_analysis native {costs[0]} != host {costs[1]}")
checks += 1
if me == 0:
    print("OK", checks)
