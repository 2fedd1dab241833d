"""Communication accounting under mpiexec: ``python accounting.py``; prints OK on rank 0.

For each case, three counts of one call must agree per collective kind (calls, bytes sent,
bytes received by this process):

- predicted: ``jit(f).lower(...).compile().cost_analysis()["collectives"]`` (from shapes);
- counted: ``ft.distributed.comm_stats()`` around the call (the library's MPI layer), and
  ``ft.profile``'s compiled and eager columns;
- recorded: an independent count here, at the mpi4py level: every communicator the mesh
  hands out is wrapped, and each MPI call's send and receive buffers are recorded; the
  volumes are computed below from those buffers (not from the library's formulas).

Some cases are also checked against figures written out by hand.
"""
import sys

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.primitives.collectives_native import native_collectives
from functrans.sharding import Mesh, P

ft.distributed.initialize()
# the Recorder below watches the calls made through mpi4py; all-reduces called natively from
# compiled shard_map bodies bypass it (native_allreduce.py checks they count the same)
native_collectives(False)
n = ft.process_count()
me = ft.process_index()


class Recorder:
    """Wraps an MPI communicator; records (kind, bytes sent, bytes received) per call by
    the ring / pairwise algorithms' volumes on the buffers handed to MPI."""
    log = []

    def __init__(self, comm, caller):
        self._c, self._caller = comm, caller

    def __getattr__(self, name):
        return getattr(self._c, name)

    def _add(self, kind, sent, received):
        Recorder.log.append((kind, sent, received))

    def Allreduce(self, send, recv, op):
        from mpi4py import MPI
        kind = "psum" if op == MPI.SUM else "pmax" if op == MPI.MAX else "pmin"
        k = self._c.Get_size()
        # reduce-scatter then all-gather: each passes on all blocks but one, twice
        s = 2 * (send.nbytes - send.nbytes / k)
        self._add(kind, s, s)
        return self._c.Allreduce(send, recv, op=op)

    def Allgather(self, send, recv):
        kind = "shard_map_output" if self._caller == "gather_blocks" else "all_gather"
        # each block goes to every other member; every other member's block comes in
        self._add(kind, send.nbytes * (self._c.Get_size() - 1), recv.nbytes - send.nbytes)
        return self._c.Allgather(send, recv)

    def Reduce_scatter_block(self, send, recv, op):
        self._add("psum_scatter", send.nbytes - recv.nbytes, send.nbytes - recv.nbytes)
        return self._c.Reduce_scatter_block(send, recv, op=op)

    def Alltoall(self, send, recv):
        k = self._c.Get_size()
        self._add("all_to_all", send.nbytes - send.nbytes / k, recv.nbytes - recv.nbytes / k)
        return self._c.Alltoall(send, recv)

    def Sendrecv(self, send, dest, sendtag, recvbuf, source, recvtag):
        self._add("ppermute", send.nbytes, recvbuf.nbytes)
        return self._c.Sendrecv(send, dest=dest, sendtag=sendtag, recvbuf=recvbuf,
                                source=source, recvtag=recvtag)

    def Send(self, buf, dest, tag):
        self._add("ppermute", buf.nbytes, 0)
        return self._c.Send(buf, dest=dest, tag=tag)

    def Recv(self, buf, source, tag, status=None):
        self._add("ppermute", 0, buf.nbytes)
        return self._c.Recv(buf, source=source, tag=tag, status=status)


_comm = Mesh.comm


def recording_comm(self, names):
    c = _comm(self, names)
    return None if c is None else Recorder(c, sys._getframe(1).f_code.co_name)


Mesh.comm = recording_comm


def recorded():
    out = {}
    for kind, s, r in Recorder.log:
        row = out.setdefault(kind, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += s
        row[2] += r
    return {k: {"calls": c, "bytes_sent": int(round(s)), "bytes_received": int(round(r))}
            for k, (c, s, r) in sorted(out.items())}


def check(name, f, *args, expect=None):
    """All counts of one call of f agree; ``expect``: {kind: (calls, sent, received)}."""
    jf = ft.jit(f)
    predicted = jf.lower(*args).compile().cost_analysis()["collectives"]
    jf(*args)                                           # compile, outside the counts
    Recorder.log.clear()
    counted = ft.distributed.measure_comm(lambda: jf(*args))[1]
    rec = recorded()
    prof = ft.profile(f, *args, repeats=1, show=False)
    got = {"predicted": predicted, "counted": counted, "recorded": rec,
           "profile compiled": prof["compiled"]["collectives"],
           "profile predicted": prof["compiled"]["collectives_predicted"],
           "profile eager": prof["eager"]["collectives"]}
    if expect is not None:
        got["by hand"] = {k: {"calls": c, "bytes_sent": s, "bytes_received": r}
                          for k, (c, s, r) in expect.items()}
    if any(v != rec for v in got.values()):
        raise AssertionError(f"rank {me}, {name}: counts differ: {got}")
    if n > 1 and not rec and name != "ppermute one pair":
        raise AssertionError(f"{name}: nothing was communicated")
    return rec


m = Mesh((n,), ("i",))
S = lambda f, i, o, **kw: ft.shard_map(f, m, in_specs=i, out_specs=o, **kw)  # noqa: E731
v = np.arange(1000, dtype=np.float32)
ar = 2 * (n - 1) * 4000 // n if n > 1 else 0            # one all-reduce of 4000 bytes
one = {"psum": (1, ar, ar)} if n > 1 else {}
check("psum f32[1000]", S(lambda x: lax.psum(x, "i"), P(), P()), v, expect=one)
check("pmax, pmin", S(lambda x: lax.pmax(x, "i") - lax.pmin(x * 2.0, "i"), P(), P()),
      np.ones(37))
blk = np.arange(8.0 * n).reshape(2 * n, 4)               # 8 float64 (64 bytes) per process
check("all_gather tiled", S(lambda x: lax.all_gather(x, "i", tiled=True), P("i"), P()), blk,
      expect={"all_gather": (1, (n - 1) * 64, (n - 1) * 64)} if n > 1 else {})
check("psum_scatter tiled", S(lambda x: lax.psum_scatter(x, "i", tiled=True), P(), P("i")),
      blk)
check("all_to_all", S(lambda x: lax.all_to_all(x, "i", 0, 1, tiled=True), P("i"), P("i")),
      np.ones((n * n, 3)))
ring = [(j, (j + 1) % n) for j in range(n)]
check("ppermute ring", S(lambda x: lax.ppermute(x, "i", ring), P("i"), P("i")), blk)
check("ppermute one pair", S(lambda x: lax.ppermute(x, "i", [(0, n - 1)]), P("i"), P("i"),
                             check_rep=False), blk)
check("scan of psums", S(lambda x: lax.scan(lambda c, r: (c + lax.psum(r, "i"), None),
                                            fnp.zeros(4), x)[0], P("i"), P()), blk)
check("shard_map(jit)", S(ft.jit(lambda x: lax.psum(x * 2.0, "i")), P("i"), P("i")), blk)


def loss(w, x):
    return fnp.mean(fnp.tanh(x @ w) ** 2)


w, x = np.ones((4, 3)) / 4, np.arange(8.0 * n).reshape(2 * n, 4) / n
dp = {"psum": (1, 2 * (n - 1) * 96 // n, 2 * (n - 1) * 96 // n)} if n > 1 else {}
check("data-parallel step", S(lambda w, x: w - 0.1 * lax.pmean(ft.grad(loss)(w, x), "i"),
                              (P(), P("i")), P(), check_rep=False), w, x, expect=dp)
check("grad of shard_map", ft.value_and_grad(S(lambda w, x: lax.pmean(loss(w, x), "i"),
                                               (P(), P("i")), P())), w, x)
# tensor parallel: reverse mode saves the body's residuals, so the forward psum runs once
# (not again in the backward pass): one psum forward, its transpose (a psum) backward, of
# the f64[5, 3] activations; the gradient of the row-split w is assembled (all-gathered)
act = 2 * (n - 1) * 120 // n
check("grad of a tensor-parallel shard_map: 2 all-reduces",
      ft.value_and_grad(S(lambda w, x: fnp.mean(lax.psum(x @ w, "i") ** 2),
                          (P("i", None), P(None, "i")),
                P())), np.arange(12.0 * n).reshape(4 * n, 3) / n, np.ones((5, 4 * n)),
      expect={"psum": (2, 2 * act, 2 * act),
              "shard_map_output": (1, (n - 1) * 96, (n - 1) * 96)} if n > 1 else {})
if n == 4:
    m2 = Mesh((2, 2), ("data", "model"))
    check("2x2 mesh: psum over both axes, all_gather over one",
          ft.shard_map(lambda x: lax.all_gather(lax.psum(x, ("data", "model")), "model"),
                       m2, in_specs=P(("data", "model")), out_specs=P()), blk)
    check("2x2 mesh: tensor x data parallel grad",
          ft.value_and_grad(ft.shard_map(
              lambda w, x: lax.pmean(fnp.mean(lax.psum(x @ w, "model") ** 2), "data"),
              m2, in_specs=(P("model", None), P("data", "model")), out_specs=P())), w, x)
if me == 0:
    print("OK", n)
