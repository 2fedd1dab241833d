"""all_gather, psum_scatter, all_to_all and ppermute inside a compiled shard_map body
called from native code (``functrans.primitives.collectives_native``: MPI_Allgather,
MPI_Reduce_scatter_block, MPI_Alltoall with derived datatypes (every layout, and the copy
count: native_alltoall.py), MPI_Sendrecv) against the same bodies with every
collective a host step (mpi4py): bit-equal values for each dtype (bool and float16 too for
the data moves, complex for the sums too), every axis argument, strided operands, over a 1-d mesh and each axis and
both axes of a 2 x 2 mesh; the same ``comm_stats``; the rewrite really taken. Prints
``OK <count>`` on rank 0."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.primitives.collectives_native import native_collectives, stats
from functrans.sharding import Mesh, P

ft.distributed.initialize()
n, me = ft.process_count(), ft.process_index()
rng = np.random.default_rng(0)
crng = np.random.default_rng(1)
HOST = {"all_gather", "psum_scatter", "all_to_all", "ppermute", "psum", "pmax", "pmin"}


def run(f, mesh, spec, x, native, wrap=ft.jit):
    """wrap(shard_map(f)) on x with the native rewrite on or off: (value, comm_stats); the
    value is this process's own result, whole (out_specs P(), unchecked). Under jit the
    body runs inside the outer program (``inline_shard_map``), called directly in its own
    compiled program (``native_body``)."""
    before = native_collectives(native)
    try:
        g = wrap(ft.shard_map(f, mesh, in_specs=spec, out_specs=P(), check_rep=False))
        g(x)
        value, counted = ft.distributed.measure_comm(lambda: g(x))
    finally:
        native_collectives(before)
    return np.asarray(value), counted


def same(name, f, mesh, spec, x, inlined=True):
    """f's native runs (jit: inlined or not, as ``inlined`` says; called directly) equal
    its host-step run bit for bit, and count the same."""
    want, want_stats = run(f, mesh, spec, x, False)
    for wrap in (ft.jit, lambda g: g):
        before = dict(stats)
        got, got_stats = run(f, mesh, spec, x, True, wrap)
        if n > 1 and stats["collectives rewritten"] == before["collectives rewritten"]:
            raise AssertionError(f"rank {me}, {name}: nothing was rewritten to a native call")
        inl = stats["shard_maps inlined"] > before["shard_maps inlined"]
        if n > 1 and wrap is ft.jit and inl != inlined:
            raise AssertionError(f"rank {me}, {name}: inlined {inl}, expected {inlined}")
        if got.dtype != want.dtype or got.shape != want.shape or \
                got.tobytes() != want.tobytes():
            raise AssertionError(f"rank {me}, {name}: native {got.tolist()} != host "
                                 f"{want.tolist()}")
        if got_stats != want_stats:
            raise AssertionError(f"rank {me}, {name}: counted {got_stats} != {want_stats}")


def data(shape, dtype):
    if dtype.startswith("complex"):      # its own generator: the others' data unchanged
        re, im = crng.normal(size=(2,) + shape) * 100
        return (re + 1j * im).astype(dtype)
    x = rng.normal(size=shape) * 100
    if dtype == "bool":
        return x > 0
    return x.astype(dtype)


DTYPES = ("float64", "float32", "int64", "int32", "bool", "float16", "complex64")
checks = 0
meshes = [(Mesh((n,), ("i",)), P("i"), ("i",))]
if n == 4:
    meshes.append((Mesh((2, 2), ("a", "b")), P(("a", "b")), ("a", "b", ("a", "b"))))
for mesh, spec, axes in meshes:
    for ax in axes:
        k = mesh.axis_size(ax)
        ring = [(j, (j + 1) % k) for j in range(k)]
        # (4 processes on a 2-core machine: fewer dtypes, the same code paths)
        for dtype in DTYPES if n < 4 else ("float64", "int32", "bool", "complex128"):
            x = data((4 * n, 2 * k, 3), dtype)
            for axis in (0, 1, 2, 3):
                same(f"all_gather {dtype} axis {axis} over {ax}",
                     lambda b, a=ax, d=axis: lax.all_gather(b, a, axis=d), mesh, spec, x)
                checks += 1
            for s, c in ((0, 1), (1, 0), (1, 1), (1, 2), (2, 0)):
                if (4, 2 * k, 3)[s] % k or isinstance(ax, tuple):   # one axis name only
                    continue
                same(f"all_to_all {dtype} {s}->{c} over {ax}",
                     lambda b, a=ax, s=s, c=c: lax.all_to_all(b, a, s, c, tiled=True),
                     mesh, spec, x)
                checks += 1
            for dim in (0, 1):
                if dtype in ("bool", "float16"):           # sums: the four MPI dtypes
                    continue
                same(f"psum_scatter {dtype} dim {dim} over {ax}",
                     lambda b, a=ax, d=dim: lax.psum_scatter(b, a, scatter_dimension=d,
                                                             tiled=True), mesh, spec, x)
                checks += 1
            if dtype not in ("bool", "float16"):     # the last dim, of a strided operand
                same(f"psum_scatter {dtype} last dim over {ax}",
                     lambda b, a=ax: lax.psum_scatter(b.transpose(0, 2, 1), a,
                                                      scatter_dimension=2, tiled=True),
                     mesh, spec, x)
                checks += 1
            if isinstance(ax, tuple):                   # ppermute: one axis name only
                continue
            same(f"ppermute {dtype} ring over {ax}",
                 lambda b, a=ax, p=ring: lax.ppermute(b, a, p), mesh, spec, x)
            same(f"ppermute {dtype} one pair over {ax}",
                 lambda b, a=ax: lax.ppermute(b, a, [(0, k - 1)]), mesh, spec, x)
            same(f"ppermute {dtype} transposed over {ax}",
                 lambda b, a=ax, p=ring: lax.ppermute(b.transpose(1, 0, 2), a, p)
                 .transpose(1, 0, 2), mesh, spec, x)
            checks += 3
# a body mixing them, and the gradient of ZeRO-3's pattern (all_gather <-> psum_scatter)
mesh, spec = meshes[0][0], meshes[0][1]
w = rng.normal(size=(4 * n, 3))


def zero3(s):
    loss = lambda s: fnp.sum(fnp.tanh(lax.all_gather(s, "i", tiled=True)) ** 2)  # noqa: E731
    value, g = ft.value_and_grad(loss)(s)
    return lax.ppermute(g, "i", [(j, (j + 1) % n) for j in range(n)]) + value


same("zero3 gradient with a ppermute", zero3, mesh, spec, w)
# a psum inside a scan is native too (a static trip count); the shard_map is inlined
# (tests/mpi_programs/native_loops.py: while, cond, fori_loop, ppermute pipelines)
same("scan of psums beside an all_gather",
     lambda b: lax.scan(lambda c, r: (c + lax.psum(r, "i"), None), fnp.zeros(3), b)[0]
     + lax.all_gather(b, "i", tiled=True)[-1] * lax.axis_index("i"), mesh, spec, w)
checks += 2
# whole programs around inlined shard_maps: native and inlined equal the host steps
S = lambda f, i, o: ft.shard_map(f, mesh, in_specs=i, out_specs=o)  # noqa: E731
tp = S(lambda a: lax.psum(a * a, "i"), P("i"), P())
programs = {
    "identity and replicated outputs": lambda a: S(lambda a, b: (a, b * 2), (P("i"), P()),
                                                   (P("i"), P()))(a, a[0]),
    "one shard_map twice": lambda a: tp(a) + tp(a + 1.0),
    "grad": ft.grad(lambda a: fnp.sum(S(lambda a: lax.pmean(fnp.tanh(a), "i"), P("i"),
                                        P())(a) ** 2)),
    "vmap": ft.vmap(S(lambda a: lax.psum(a, "i") * lax.axis_index("i"), P("i"), P("i"))),
    "a literal argument": lambda a: S(lambda a, s: lax.psum(a * s, "i"), (P("i"), P()),
                                      P())(a, 3.0),
}
for name, prog in programs.items():
    x = w if name != "vmap" else np.stack([w, w + 1])
    values = []
    for native in (True, False):
        before = native_collectives(native), stats["shard_maps inlined"]
        values.append(ft.tree_util.tree_leaves(ft.jit(prog)(x)))
        native_collectives(before[0])
        if n > 1 and native and stats["shard_maps inlined"] == before[1]:
            raise AssertionError(f"rank {me}, {name}: not inlined")
    if any(np.asarray(a).tobytes() != np.asarray(b).tobytes() for a, b in zip(*values)):
        raise AssertionError(f"rank {me}, {name}: inlined {values[0]} != host {values[1]}")
    checks += 1
# initialize() keeps large blocks in the heap (MPICH is much faster into memory it has
# used): a fresh 8 MiB array is in the [heap] mapping, not a mapping of its own
if n > 1:
    big = np.empty(2 ** 20)
    with open("/proc/self/maps") as maps:
        heap = [[int(v, 16) for v in line.split()[0].split("-")] for line in maps
                if line.rstrip().endswith("[heap]")]
    if not any(lo <= big.ctypes.data < hi for lo, hi in heap):
        raise AssertionError(f"rank {me}: an 8 MiB array is not in the heap: {heap}")
    checks += 1
# the batching rule of the native primitive: vmap equals a loop over the examples
if n > 1:
    from mpi4py import MPI
    from functrans.primitives.collectives_native import _handles, mpi_collective_p
    comm = mesh.comm("i")
    peers = ((me + 1) % n, (me - 1) % n)
    # (mpi_alltoall's impl and batching: tests/mpi_programs/native_alltoall.py)
    # (mpi_allgather's: tests/mpi_programs/native_allgather.py)
    for kind, h, shape, axis in (("reduce_scatter", (MPI.DOUBLE, MPI.SUM), (2 * n, 3), 0),
                                 ("reduce_scatter", (MPI.DOUBLE, MPI.SUM), (2, 3 * n), 1),
                                 ("sendrecv", (MPI.BYTE,) + peers, (2, 3), 0)):
        hs = _handles(MPI, comm, *h, 0)
        f = lambda v, k=kind, hs=hs, a=axis: mpi_collective_p.bind(  # noqa: E731
            v, hs, kind=k, n=n, axis=a, sends=True, receives=True, count=())
        xs = rng.normal(size=(5,) + shape)
        for d in range(3):
            got = np.asarray(ft.vmap(f, in_axes=d, out_axes=0)(np.moveaxis(xs, 0, d)))
            want = np.stack([np.asarray(f(x)) for x in xs])
            if not np.array_equal(got, want):
                raise AssertionError(f"rank {me}: vmap of mpi_collective {kind} in_axes={d}")
            checks += 1
if me == 0:
    print("OK", checks)
