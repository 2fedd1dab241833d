"""all_to_all in compiled shard_map code: one MPI_Alltoall whose receive datatype places
the chunks, the operand read in place or packed once
(``functrans.primitives.collectives_native_alltoall``). Every split and concat axis of
1- to 5-d operands, tiled and untiled, dtypes of 1, 2, 4, 8 and 16 bytes, an empty
operand and a strided one, over a 1-d mesh and over each axis of a 2 x 2 mesh: the native
results (jit with the shard_map inlined, and the body called directly) equal the host
step's (mpi4py) and a numpy model of the semantics bit for bit, and count the same bytes.
The copy count is checked: the rewritten body has no transpose around the call, and the
emitter makes exactly one copy where the split axis' chunks are strided and none
elsewhere (``llvm_mpi.stats``). The primitive's impl and batching rule too. Prints
``OK <count>`` on rank 0."""
import numpy as np

import functrans as ft
from functrans import lax
from functrans.primitives.collectives_native import _handles, native_body, native_collectives
from functrans.primitives.collectives_native import stats as rewrites
from functrans.primitives.collectives_native_alltoall import (alltoall_plan, alltoall_shape,
                                                            mpi_alltoall_p)
from functrans.sharding import Mesh, P
from native_common import bits, run

ft.distributed.initialize()
n, me = ft.process_count(), ft.process_index()
rng = np.random.default_rng(1)
DTYPES = ("float32", "float64", "bool", "float16", "int8", "complex128", "int32", "uint8",
          "complex64")
# dtypes the LLVM backend keeps in native code (the others' equations are host steps:
# the primitive's impl, the same MPI call on numpy buffers)
NATIVE = {"float32", "float64", "bool", "complex128", "int32", "complex64", "int8",
          "uint8"}


def cases(k):
    """(block shape, dtype, split, concat, tiled) for an axis of k members."""
    out, t = [], 0
    for shape in ((2 * k,), (2 * k, 3 * k), (k, 3 * k, 2 * k), (2 * k, k, 3 * k, 2 * k)):
        r = len(shape)
        for s in range(r):
            for c in range(r):
                for tiled in (True, False):
                    sh = list(shape)
                    if not tiled:
                        sh[s] = k
                    out.append((tuple(sh), DTYPES[t % len(DTYPES)], s, c, tiled))
                    t += 1
    for s, c in ((4, 0), (0, 4), (2, 3), (1, 4)):
        out.append(((k, 2 * k, 3 * k, 2, 2 * k), DTYPES[t % len(DTYPES)], s, c, True))
        t += 1
    out.append(((2 * k, 0, k), "float32", 2, 0, True))          # empty
    return out


def data(shape, dtype):
    x = rng.normal(size=shape) * 100
    if dtype == "bool":
        return x > 0
    if dtype.startswith("complex"):
        return (x + 1j * rng.normal(size=shape)).astype(dtype)
    return x.astype(dtype)


def model(x, s, c, k, i, tiled):
    """numpy: member j's block is x's j-th of k along axis 0; this member (index i) gets
    chunk i of each member's block along s, concatenated (tiled) or stacked along c."""
    pieces = [np.split(b, k, axis=s)[i] for b in np.split(x, k, axis=0)]
    if tiled:
        return np.concatenate(pieces, axis=c)
    return np.stack([np.squeeze(p, s) for p in pieces], axis=c)


def body(cs, ax):
    def f(*blocks):
        outs = []
        for b, (_, _, s, c, tiled) in zip(blocks, cs):
            outs.append(lax.all_to_all(b, ax, s, c, tiled=tiled))
        # a strided operand (blocks[2] is 2-d): made contiguous at most once
        outs.append(lax.all_to_all(blocks[2].transpose(1, 0), ax, 1, 0, tiled=True))
        # untiled, strided: the unit axis inserted as a view (broadcast_in_dim), one copy
        k = blocks[2].shape[0] // 2
        outs.append(lax.all_to_all(blocks[2].transpose(1, 0)[:, :k], ax, 1, 0, tiled=False))
        return tuple(outs)
    return f


def check_mesh(mesh, ax, fresh=True):
    """All cases over axis ``ax`` of ``mesh`` in one shard_map. Returns checks made.
    ``fresh``: no program of the same structure was compiled before (else the backend
    reuses that plan, handles being arguments, and emits no call)."""
    from backends.llvm.llvm_mpi import stats as emitted
    k, i = mesh.axis_size(ax), mesh.axis_index(ax)
    cs = cases(k)
    xs = [data((k * sh[0],) + sh[1:], dt) for sh, dt, *_ in cs]
    sm = ft.shard_map(body(cs, ax), mesh, in_specs=(P(ax),) * len(cs),
                      out_specs=(P(),) * (len(cs) + 2), check_rep=False)
    want = [model(x, s, c, k, i, tiled) for x, (_, _, s, c, tiled) in zip(xs, cs)]
    strided = np.concatenate([b.T for b in np.split(xs[2], k)])
    want.append(model(strided, 1, 0, k, i, True))
    want.append(model(np.concatenate([b.T[:, :k] for b in np.split(xs[2], k)]), 1, 0, k, i,
                      False))
    extra = [("strided",), ("strided untiled",)]
    host, host_stats = run(ft.jit(sm), xs, False)
    for h, w, case in zip(host, want, cs + extra):
        if bits(h) != bits(w):
            raise AssertionError(f"rank {me}, host step {case} over {ax}: {h} != {w}")
    checks = len(cs) + 2
    for wrap in (ft.jit, lambda g: g):                # inlined; the body compiled alone
        before, inlined = dict(emitted), rewrites["shard_maps inlined"]
        got, got_stats = run(wrap(sm), xs, True)
        calls = emitted["alltoall calls"] - before["alltoall calls"]
        copies = emitted["alltoall copies"] - before["alltoall copies"]
        if wrap is ft.jit and rewrites["shard_maps inlined"] == inlined:
            raise AssertionError(f"rank {me}: the shard_map over {ax} was not inlined")
        # + 2: the strided cases (packed: their chunks are strided); a case packs (one
        # copy) when a non-unit axis precedes the split axis, else copies nothing
        native = [(sh, s) for sh, dt, s, *_ in cs if dt in NATIVE and np.prod(sh) > 0]
        want = (len(native) + 2, sum(np.prod(sh[:s]) > 1 for sh, s in native) + 2)
        if (calls, copies) not in ((want,) if fresh else ((0, 0), want)):
            raise AssertionError(f"rank {me}, over {ax}: {calls} MPI_Alltoall calls "
                                 f"emitted making {copies} copies, want {want}")
        for g_, h, case in zip(got, host, cs + extra):
            if bits(g_) != bits(h):
                raise AssertionError(f"rank {me}, native {case} over {ax}: {g_} != {h}")
        if got_stats != host_stats:
            raise AssertionError(f"rank {me}, over {ax}: counted {got_stats} != "
                                 f"{host_stats}")
        checks += len(cs) + 3
    return checks + check_rewrite(sm, xs, mesh, ax, len(cs) + 2)


def check_rewrite(sm, xs, mesh, ax, count):
    """The rewritten body: one mpi_alltoall per all_to_all, reading the operand and
    writing the result with no layout equation between (the one transpose is the body's
    own, for the strided cases; an untiled all_to_all inserts its unit axis with a
    broadcast_in_dim and removes it with a reshape of the result, views of the same
    buffer, for a strided operand too)."""
    (eqn,) = ft.make_jaxpr(sm)(*xs).jaxpr.eqns
    closed = eqn.params["jaxpr"]
    body, _ = native_body(closed, mesh)
    names = [e.primitive.name for e in body.jaxpr.eqns]
    untiled = sum(not tiled for *_, tiled in cases(mesh.axis_size(ax))) + 1
    if names.count("mpi_alltoall") != count or "all_to_all" in names or \
            names.count("transpose") != 2 or names.count("reshape") != untiled or \
            names.count("broadcast_in_dim") != untiled:
        raise AssertionError(f"rank {me}: rewritten body {names}")
    return 1


def check_impl_and_batching():
    """The primitive's impl (mpi4py with the same datatypes) and its batching rule."""
    from mpi4py import MPI
    mesh = Mesh((n,), ("i",))
    comm, checks = mesh.comm("i"), 0
    for shape, s, c in (((n, 2 * n, 3), 1, 2), ((2 * n, 3), 0, 1), ((3, 2 * n), 1, 0),
                        ((2, 2 * n, 3), 1, 1)):
        pack, counts, types = alltoall_plan(MPI, shape, np.float64, s, c, n)
        h = _handles(MPI, comm, *types, 0)
        params = dict(n=n, shape=alltoall_shape(shape, s, c, n), pack_axis=pack,
                      counts=counts, count=())
        f = lambda v, h=h, p=params: mpi_alltoall_p.bind(v, h, **p)  # noqa: E731
        x = rng.normal(size=shape)
        full = comm.allgather(x)
        want = model(np.concatenate(full), s, c, n, me, True)
        if bits(np.asarray(f(x))) != bits(want):
            raise AssertionError(f"rank {me}: impl of mpi_alltoall {shape} {s}->{c}")
        xs = rng.normal(size=(3,) + shape)
        for d in range(len(shape) + 1):
            got = np.asarray(ft.vmap(f, in_axes=d, out_axes=0)(np.moveaxis(xs, 0, d)))
            if bits(got) != bits(np.stack([np.asarray(f(x)) for x in xs])):
                raise AssertionError(f"rank {me}: vmap of mpi_alltoall in_axes={d}")
            checks += 1
    return checks


def check_transforms():
    """grad and vmap around an inlined shard_map's all_to_all (split 1, concat 0: packed;
    its transpose, split 0 concat 1: a derived receive type): native equals host."""
    import functrans.numpy as fnp
    mesh = Mesh((n,), ("i",))
    S = lambda f: ft.shard_map(f, mesh, in_specs=P("i"), out_specs=P("i"))  # noqa: E731
    a2a = S(lambda b: lax.all_to_all(fnp.tanh(b), "i", 1, 0, tiled=True))
    progs = {"grad": ft.grad(lambda x: fnp.sum(a2a(x) ** 3)),
             "vmap": ft.vmap(S(lambda b: lax.all_to_all(b, "i", 1, 0, tiled=True)))}
    x = rng.normal(size=(2 * n, 4 * n))
    for name, prog in progs.items():
        arg = np.stack([x, x + 1, x * 2]) if name == "vmap" else x
        got = []
        for native in (True, False):
            before, inlined = native_collectives(native), rewrites["shard_maps inlined"]
            got.append(np.asarray(ft.jit(prog)(arg)))
            native_collectives(before)
            if native and rewrites["shard_maps inlined"] == inlined:
                raise AssertionError(f"rank {me}, {name}: the shard_map was not inlined")
        if bits(got[0]) != bits(got[1]):
            raise AssertionError(f"rank {me}, {name}: native {got[0]} != host {got[1]}")
    return len(progs)


checks = 0
if n > 1:
    meshes = [(Mesh((n,), ("i",)), "i")]
    if n == 4:
        two = Mesh((2, 2), ("a", "b"))
        meshes += [(two, "a"), (two, "b")]
    for mesh, ax in meshes:
        checks += check_mesh(mesh, ax, ax != "b")       # "b": the same shapes as "a"
    checks += check_impl_and_batching()
    checks += check_transforms()
if me == 0:
    print("OK", checks)
