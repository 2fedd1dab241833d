"""all_gather (and psum_scatter, psum, ppermute) in compiled shard_map code copy the buffer at
most once (``functrans.primitives.collectives_native``): all_gather is one MPI_Allgather
whose receive datatype places each member's block along the new axis, the operand read in
place or made contiguous once when strided; psum_scatter's operand is packed member-major
once by the emitter (none when only unit axes precede the scatter dimension); psum and
ppermute read their operand in place or make it contiguous once. Every axis of 0- to 4-d
operands, tiled and untiled, 1-16 byte dtypes, empty, transposed and sliced operands, over
a 1-d mesh and each axis of a 2 x 2 mesh, plus a shard_map output split on its last axis:
(all_gather: a dense operand's member-major result copied into place once when the
member axis does not lead, faster than MPICH with the derived receive type) the native
results (jit with the shard_map inlined, and the body called directly) equal
the host step's (mpi4py) and a numpy model bit for bit and count the same bytes; the
emitted calls and copies (``llvm_mpi.stats``) are exactly the expected ones, and the
rewritten body has no layout equation of its own. The primitive's impl and batching rule
too, and the same emitters inside a fori_loop. complex64 / complex128 all_gather,
psum_scatter, psum and ppermute are native too (counted in ``llvm_mpi.stats``). Prints ``OK <count>`` on rank 0."""
import numpy as np

import functrans as ft
from functrans import lax
from functrans.primitives.collectives_native import _handles, native_body
from functrans.primitives.collectives_native import stats as rewrites
from functrans.primitives.collectives_native_alltoall import allgather_plan, mpi_allgather_p
from functrans.sharding import Mesh, P
from native_common import bits, run

ft.distributed.initialize()
n, me = ft.process_count(), ft.process_index()
rng = np.random.default_rng(2)
DTYPES = ("float32", "float64", "bool", "float16", "int8", "complex128", "int32", "uint8",
          "complex64")
NATIVE = {"float32", "float64", "bool", "complex128", "int32", "complex64", "int8",
          "uint8"}  # mpi_allgather
# psum_scatter / psum / ppermute in native code (complex: MPI's complex types, the host
# step's own, so the same sums)
NATIVE_RS = {"float32", "float64", "int32", "complex64", "complex128"}


def ag_cases(k):
    """(block shape, dtype, axis, tiled, strided) of all_gathers over an axis of k."""
    out, t = [], 0
    for shape in ((), (2 * k,), (2 * k, 3), (k, 3, 2), (2 * k, 2, 3, 2)):
        r = len(shape)
        for axis in range(r + 1):
            for tiled in (False, True):
                if tiled and axis == r:
                    continue
                out.append((shape, DTYPES[t % len(DTYPES)], axis, tiled, None))
                t += 1
    for axis in (0, 1, 2):          # strided: a transposed and a sliced 2-d block
        out.append(((2 * k, 3), "float64", axis, False, "T"))
        out.append(((2 * k, 3), "float32", axis, False, "slice"))
    out.append(((2 * k, 0, 3), "float32", 1, False, None))        # empty
    return out


def rs_cases(k):
    """(block shape, dtype, scatter dimension, strided) of psum_scatters."""
    return [((2 * k, 3 * k), "float32", 0, None), ((2 * k, 3 * k), "float64", 1, None),
            ((1, 3, 2 * k), "float32", 2, None), ((2, 2 * k, 3), "int32", 1, None),
            ((2 * k, 3 * k), "float64", 0, "T"), ((2 * k, 3 * k), "float64", 1, "T"),
            ((2 * k, 3 * k + 1), "float32", 1, "slice"), ((2 * k, 4), "float16", 0, None),
            ((2 * k, 3 * k), "complex128", 1, None), ((2 * k, 3 * k), "complex64", 0, "T")]


def data(shape, dtype):
    x = rng.normal(size=shape) * 100
    if dtype == "bool":
        return x > 0
    if dtype.startswith("complex"):
        return (x + 1j * rng.normal(size=shape)).astype(dtype)
    return x.astype(dtype)


def view(b, strided):
    """The operand the collective reads: the block, its transpose, or a slice of it."""
    if strided == "T":
        return b.T
    if strided == "slice":
        return b[:, 1:]
    return b


def block_of(x, k, j):
    return np.split(x, k, axis=0)[j] if x.ndim else x


def body(ags, rss, ax):
    def f(*blocks):
        a, r, (p, q, pc, qc) = blocks[:len(ags)], blocks[len(ags):-4], blocks[-4:]
        outs = [lax.all_gather(view(b, st), ax, axis=d, tiled=t)
                for b, (_, _, d, t, st) in zip(a, ags)]
        outs += [lax.psum_scatter(view(b, st), ax, scatter_dimension=d, tiled=True)
                 for b, (_, _, d, st) in zip(r, rss)]
        ring = [(i, (i + 1) % N[ax]) for i in range(N[ax])]
        for p_, q_ in ((p, q), (pc, qc)):                  # real, then complex128 / complex64
            outs.append(lax.psum(p_.T, ax))                             # strided: one copy
            outs.append(lax.psum(p_, ax))                               # dense: none
            outs.append(lax.ppermute(q_[:, 1:], ax, ring))              # strided: one copy
            outs.append(lax.ppermute(q_, ax, ring))
        outs.append(q * 2)          # split on its last axis below: gathered natively
        return tuple(outs)
    return f


N = {}


def models(xs, ags, rss, k, i):
    want = []
    for x, (_, _, d, t, st) in zip(xs, ags):
        parts = [view(block_of(x, k, j), st) for j in range(k)]
        want.append(np.concatenate(parts, axis=d) if t else np.stack(parts, axis=d))
    for x, (_, _, d, st) in zip(xs[len(ags):], rss):
        total = sum(view(block_of(x, k, j), st) for j in range(k))
        want.append(np.split(total, k, axis=d)[i])
    return want


def expected(ags, rss):
    """{kind: (calls, copies)} the emitters should note for the native cases."""
    # a copy: a strided operand made contiguous, or a dense one's member-major result
    # copied into place when the member axis does not lead
    ag = [st is not None or np.prod(view(np.empty(sh), st).shape[:d]) > 1
          for sh, dt, d, t, st in ags if dt in NATIVE and np.prod(sh) > 0]
    rs = [st is not None or np.prod(sh[:d]) > 1 for sh, dt, d, st in rss if dt in NATIVE_RS]
    # + 1 gather of the shard_map output split on its last axis (copied into place)
    return {"allgather": (len(ag) + 1, sum(ag) + 1), "reduce_scatter": (len(rs), sum(rs)),
            "allreduce": (4, 2), "sendrecv": (4, 2)}


def check_mesh(mesh, ax, fresh=True):
    """All cases over axis ``ax`` of ``mesh`` in one shard_map. Returns checks made."""
    from backends.llvm.llvm_mpi import stats as emitted
    k, i = mesh.axis_size(ax), mesh.axis_index(ax)
    N[ax] = k
    ags, rss = ag_cases(k), rs_cases(k)
    xs = [data((k * sh[0],) + sh[1:] if sh else (), dt) for sh, dt, *_ in ags]
    xs += [data((k * sh[0],) + sh[1:], dt) for sh, dt, *_ in rss]
    xs += [data((2 * k, 3), "float64"), data((2 * k, 3), "float32"),
           data((2 * k, 3), "complex128"), data((2 * k, 3), "complex64")]
    specs = tuple(P(ax) if x.ndim else P() for x in xs)
    outs = (P(),) * (len(ags) + len(rss) + 8) + (P(None, ax),)
    sm = ft.shard_map(body(ags, rss, ax), mesh, in_specs=specs, out_specs=outs,
                      check_rep=False)
    host, host_stats = run(ft.jit(sm), xs, False)
    for h, w, case in zip(host, models(xs, ags, rss, k, i), ags + rss):
        # a sum of more than two: MPI's order, not numpy's
        if bits(h) != bits(w) and not (len(case) == 4 and np.allclose(h, w, rtol=1e-2, atol=1)):
            raise AssertionError(f"rank {me}, host step {case} over {ax}: {h} != {w}")
    checks = len(ags) + len(rss)
    want = expected(ags, rss)
    for wrap in (ft.jit, lambda g: g):                # inlined; the body compiled alone
        before, inlined = dict(emitted), rewrites["shard_maps inlined"]
        got, got_stats = run(wrap(sm), xs, True)
        if wrap is ft.jit and rewrites["shard_maps inlined"] == inlined:
            raise AssertionError(f"rank {me}: the shard_map over {ax} was not inlined")
        w = dict(want)
        if wrap is not ft.jit:       # the output is gathered by the host step
            w["allgather"] = (w["allgather"][0] - 1, w["allgather"][1] - 1)
        for kind, pair in w.items():
            d = tuple(emitted[f"{kind} {s}"] - before[f"{kind} {s}"] for s in ("calls", "copies"))
            if d not in ((pair,) if fresh else ((0, 0), pair)):
                raise AssertionError(f"rank {me}, over {ax}: {d[0]} {kind} calls emitted "
                                     f"making {d[1]} copies, want {pair}")
        extra = ([("psum",)] * 2 + [("ppermute",)] * 2) * 2 + [("output",)]
        for g_, h, case in zip(got, host, ags + rss + extra):
            if bits(g_) != bits(h):
                raise AssertionError(f"rank {me}, native {case} over {ax}: {g_} != {h}")
        if got_stats != host_stats:
            raise AssertionError(f"rank {me}, over {ax}: counted {got_stats} != {host_stats}")
        checks += len(got) + 1
    return checks + check_rewrite(sm, xs, mesh, ax, len(ags))


def check_rewrite(sm, xs, mesh, ax, count):
    """The rewritten body: one mpi_allgather per all_gather and no transpose but the
    body's own (the strided cases' and psum's)."""
    (eqn,) = [e for e in ft.make_jaxpr(sm)(*xs).jaxpr.eqns if e.primitive.name == "shard_map"]
    closed = eqn.params["jaxpr"]
    own = [e.primitive.name for e in closed.jaxpr.eqns].count("transpose")
    body, _ = native_body(closed, mesh)
    names = [e.primitive.name for e in body.jaxpr.eqns]
    if names.count("mpi_allgather") != count or "all_gather" in names or \
            "psum_scatter" in names or names.count("transpose") != own:
        raise AssertionError(f"rank {me}: rewritten body {names}")
    return 1


def check_impl_and_batching():
    """The primitive's impl (mpi4py with the same datatypes) and its batching rule."""
    from mpi4py import MPI
    comm, checks = Mesh((n,), ("i",)).comm("i"), 0
    for shape, axis in (((2, 3), 1), ((3,), 0), ((2, 3, 2), 2), ((), 0), ((2, 3), 2)):
        counts, types = allgather_plan(MPI, shape, np.float64, axis, n)
        h = _handles(MPI, comm, *types, 0)
        f = lambda v, h=h, c=counts, a=axis: mpi_allgather_p.bind(  # noqa: E731
            v, h, n=n, axis=a, counts=c, count=())
        x = np.asarray(rng.normal(size=shape))
        if bits(np.asarray(f(x))) != bits(np.stack(comm.allgather(x), axis=axis)):
            raise AssertionError(f"rank {me}: impl of mpi_allgather {shape} axis {axis}")
        xs = rng.normal(size=(3,) + shape)
        for d in range(len(shape) + 1):
            got = np.asarray(ft.vmap(f, in_axes=d, out_axes=0)(np.moveaxis(xs, 0, d)))
            if bits(got) != bits(np.stack([np.asarray(f(x)) for x in xs])):
                raise AssertionError(f"rank {me}: vmap of mpi_allgather in_axes={d}")
            checks += 1
    return checks


def check_loop():
    """The same emitters inside a native loop: a fori_loop whose body psum_scatters a
    transposed carry (packed once), all_gathers the result on axis 1 (no copy) and psums a
    slice of the carry (one copy): emitted once, native equals host."""
    from backends.llvm.llvm_mpi import stats as emitted
    mesh, m = Mesh((n,), ("i",)), 2 * n

    def step(k, c):
        s = lax.psum_scatter(c.T, "i", scatter_dimension=1, tiled=True)
        return lax.all_gather(s, "i", axis=1, tiled=True) * 0.5 + lax.psum(c[:, 1:], "i").sum()
    sm = ft.shard_map(lambda b: lax.fori_loop(0, 3, step, b), mesh, in_specs=P(),
                      out_specs=P(), check_rep=False)
    x = rng.normal(size=(m, m))
    before, inlined = dict(emitted), rewrites["shard_maps inlined"]
    got, got_stats = run(ft.jit(sm), [x], True)
    d = {k: emitted[k] - before[k] for k in emitted if emitted[k] != before[k]}
    want = {"reduce_scatter calls": 1, "reduce_scatter copies": 1, "allgather calls": 1,
            "allgather copies": 1, "allreduce calls": 1, "allreduce copies": 1}
    if d != want or rewrites["shard_maps inlined"] == inlined:
        raise AssertionError(f"rank {me}: the loop emitted {d}, want {want}")
    host, host_stats = run(ft.jit(sm), [x], False)
    if bits(got[0]) != bits(host[0]) or got_stats != host_stats:
        raise AssertionError(f"rank {me}: the loop: native {got} != host {host}")
    return 2


checks = 0
if n > 1:
    meshes = [(Mesh((n,), ("i",)), "i")]
    if n == 4:
        two = Mesh((2, 2), ("a", "b"))
        meshes += [(two, "a"), (two, "b")]
    for mesh, ax in meshes:
        checks += check_mesh(mesh, ax, ax != "b")       # "b": the same shapes as "a"
    checks += check_impl_and_batching()
    checks += check_loop()
if me == 0:
    print("OK", checks)
