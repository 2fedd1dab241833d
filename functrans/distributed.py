"""Processes: one program run by many processes under MPI (``mpiexec -n N python prog.py``).

The runtime is MPI through ``mpi4py`` (install the ``distributed`` extra: ``mpi4py`` and the
MPICH wheels). ``mpi4py`` is imported lazily, by ``initialize()`` and by the first collective
over a mesh axis of more than one process, so a single process without MPI installed works
as before: ``process_count()`` is then 1 and ``process_index()`` 0.

``initialize()`` reads the MPI world. With more than one process it installs an exception
hook: an uncaught exception on any rank prints that rank's traceback, prefixed with its
rank, and calls ``MPI_Abort``, so the whole job ends (non-zero exit) instead of the other
ranks waiting forever in their next collective; and it keeps freed blocks of up to 1 GiB
in the process's heap (``_keep_large_blocks``: MPICH is much faster into memory it has
used before than into newly mapped pages).

>>> import functrans as ft
>>> ft.distributed.initialize()
>>> ft.process_index(), ft.process_count()
(0, 1)
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from . import trace_events

__all__ = ["initialize", "is_initialized", "shutdown", "process_index", "process_count", "world", "comm_stats",
           "reset_comm_stats", "measure_comm", "traffic", "count_collective", "native_counter"]

_state = {"comm": None, "initialized": False}
_ABORT_GRACE_S = 1.0   # between a failing rank's message and MPI_Abort

# environment variables MPI launchers set for the processes they start
_LAUNCHER_VARS = ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS",
                  "HYDRA_CONTROL_FD", "PMIX_RANK")


def _launched_by_mpi() -> bool:
    return any(v in os.environ for v in _LAUNCHER_VARS)


def world():
    """The MPI world communicator, or None for a single process not started by mpiexec
    (mpi4py is imported only when a launcher started this process, or mpi4py is loaded)."""
    if _state["comm"] is None and (_launched_by_mpi() or "mpi4py.MPI" in sys.modules):
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise RuntimeError("this process was started by an MPI launcher but mpi4py is not "
                               "installed: pip install 'functrans[distributed]'") from e
        _state["comm"] = MPI.COMM_WORLD
    return _state["comm"]


def initialize() -> None:
    """Join the MPI world (a no-op for one process); install the abort-on-exception hook.

    Call it once at the start of a program run by ``mpiexec``. Idempotent.

    >>> initialize()
    >>> process_count()
    1
    """
    if _state["initialized"]:
        return
    _state["initialized"] = True
    comm = world()
    if comm is not None and comm.Get_size() > 1:
        sys.excepthook = _abort_on_exception
        _keep_large_blocks()


def is_initialized() -> bool:
    """Whether ``initialize`` was called (and ``shutdown`` not since), as JAX's.

    >>> initialize(); is_initialized()
    True
    """
    return bool(_state["initialized"])


def shutdown() -> None:
    """Leave the distributed run started by ``initialize`` (as JAX's): the processes meet
    at a barrier and the abort-on-exception hook is removed; MPI itself is finalised by
    mpi4py when the process exits. A no-op when not initialized.

    >>> initialize(); shutdown(); is_initialized()
    False
    """
    if not _state["initialized"]:
        return
    _state["initialized"] = False
    comm = _state["comm"]
    if comm is not None and comm.Get_size() > 1:
        comm.Barrier()
    if sys.excepthook is _abort_on_exception:
        sys.excepthook = sys.__excepthook__


# glibc's mallopt parameters, and the largest block kept in the heap
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _KEEP_BYTES = -1, -3, 1 << 30


def _keep_large_blocks() -> bool:
    """Keep freed blocks of up to 1 GiB in this process's heap (glibc's ``mallopt``; else
    nothing): MPICH moves a large message into memory it has used before about twice as
    fast as into newly mapped pages (8 MiB all-reduce over 2 processes, measured: 14 ms
    against 30-38 ms), and by default every array of more than a few MiB (a compiled
    call's result, say) is mapped afresh and unmapped when freed. The cost: memory freed
    by the program stays with the process for reuse instead of going back to the system.
    Returns whether the setting was taken."""
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):    # not glibc
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _KEEP_BYTES)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, _KEEP_BYTES))


def _abort_on_exception(exc_type, exc, tb):
    """Print the failing rank's traceback, then abort every rank of the job."""
    import traceback
    rank = process_index()
    lines = traceback.format_exception(exc_type, exc, tb)
    sys.stderr.write("".join(f"[rank {rank}] {line}" for line in "".join(lines).splitlines(True)))
    sys.stderr.flush()
    # MPI_Abort makes the launcher kill every rank at once, and output still in its pipes
    # is lost with them (seen under load: an empty stderr); give it a moment to forward.
    time.sleep(_ABORT_GRACE_S)
    world().Abort(1)


def process_index() -> int:
    """This process's rank in the MPI world (0 for a single process).

    >>> process_index()
    0
    """
    comm = world()
    return 0 if comm is None else comm.Get_rank()


def process_count() -> int:
    """The number of processes in the MPI world (1 for a single process).

    >>> process_count()
    1
    """
    comm = world()
    return 1 if comm is None else comm.Get_size()


# --------------------------------------------------------------------------- accounting

_stats: dict = {}    # collective kind -> [calls, bytes sent, bytes received] (this process)
_native: dict = {}   # collective kind -> float64[3] of the same, added to by native code


def traffic(kind: str, nbytes: float, n: int) -> float:
    """The bytes one process sends (and as many it receives) in one collective ``kind`` over
    ``n`` processes whose operand on this process has ``nbytes`` bytes, as the standard
    bandwidth-optimal algorithms move them: all-reduce (``psum``, ``pmax``, ``pmin``; ring,
    or reduce-scatter + all-gather) 2(n-1)/n S; all-gather of S-byte blocks (``all_gather``,
    ``shard_map_output``) (n-1) S; reduce-scatter of an S-byte input (``psum_scatter``) and
    all-to-all of an S-byte input (n-1)/n S. ``ppermute`` is S to one peer, and is counted
    by who sends and receives (see ``comm_stats``).

    >>> traffic("psum", 1000, 4), traffic("all_gather", 1000, 4), traffic("psum_scatter", 1000, 4)
    (1500.0, 3000.0, 750.0)
    """
    if kind in ("psum", "pmax", "pmin"):
        return 2.0 * (n - 1) / n * nbytes
    if kind in ("all_gather", "shard_map_output"):
        return float((n - 1) * nbytes)
    if kind in ("psum_scatter", "all_to_all"):
        return (n - 1) / n * nbytes
    raise ValueError(f"traffic: no volume formula for a collective {kind!r}")


def count_collective(kind: str, sent: float, received: float) -> None:
    """Record one collective over more than one process (called by the MPI layer).

    >>> count_collective("psum", 8.0, 8.0); comm_stats()["psum"]["calls"] >= 1
    True
    >>> reset_comm_stats()
    """
    row = _stats.get(kind)
    if row is None:
        row = _stats[kind] = [0, 0.0, 0.0]
    row[0] += 1
    row[1] += sent
    row[2] += received
    if trace_events.ACTIVE:
        trace_events.instant(kind, "collective", {"bytes sent": sent, "bytes received": received})


def native_counter(kind: str) -> np.ndarray:
    """The float64[3] (calls, bytes sent, bytes received) of ``kind`` that compiled code
    calling MPI itself adds to (``primitives.collectives_native``): one array per kind for
    the life of the process (the code holds its address), read by ``comm_stats``.

    >>> native_counter("psum") is native_counter("psum")
    True
    """
    a = _native.get(kind)
    if a is None:
        a = _native[kind] = np.zeros(3, np.float64)
    return a


def _rows() -> dict:
    """kind -> [calls, sent, received]: the counts from Python and from native code."""
    rows = {k: list(v) for k, v in _stats.items()}
    for k, a in _native.items():
        if a[0]:
            row = rows.setdefault(k, [0, 0.0, 0.0])
            row[0] += int(a[0])
            row[1] += float(a[1])
            row[2] += float(a[2])
    return rows


def comm_stats() -> dict:
    """Per collective kind, this process's ``calls``, ``bytes_sent`` and ``bytes_received``
    since the last reset, for the collectives that involved other processes.

    The bytes are ``traffic``'s volumes of the standard bandwidth-optimal algorithms on
    the exact payloads this process hands to MPI (S bytes, N processes in the call):
    all-reduce 2(N-1)/N S each way, all-gather (N-1) S, reduce-scatter and all-to-all
    (N-1)/N S; ppermute S sent when this process is a source, S received when it is a
    destination (a process that is neither makes no call). ``shard_map_output`` is the all-gather that assembles a split output of a
    shard_map (or a global array built by the ``make_array_from_*`` constructors);
    ``experimental.multihost_utils`` counts as ``all_gather`` (``process_allgather``) and
    ``psum``/``pmax`` (``broadcast_one_to_all``). These are the algorithms' figures,
    not a capture of the wire: MPICH picks its algorithm per message size (for small
    all-reduces recursive doubling, log2(N) S each way), and the payload sizes and call
    counts are exact whatever it picks. ``cost_analysis()`` of a compiled function predicts
    the same table for one call (``collectives_mesh.plan_traffic``).

    >>> reset_comm_stats(); comm_stats()
    {}
    """
    return {k: {"calls": c, "bytes_sent": int(round(s)), "bytes_received": int(round(r))}
            for k, (c, s, r) in sorted(_rows().items())}


def reset_comm_stats() -> None:
    """Forget the counts of ``comm_stats``.

    >>> reset_comm_stats(); comm_stats()
    {}
    """
    _stats.clear()
    for a in _native.values():
        a[:] = 0.0           # in place: compiled code holds each array's address


def measure_comm(fn) -> tuple:
    """``(fn(), what it communicated)``: the ``comm_stats`` rows counted while ``fn`` ran
    (the counts from before are kept).

    >>> measure_comm(lambda: 42)
    (42, {})
    """
    before = _rows()
    out = fn()
    diff = {}
    for k, (c, s, r) in sorted(_rows().items()):
        c0, s0, r0 = before.get(k, (0, 0.0, 0.0))
        if c > c0:
            diff[k] = {"calls": c - c0, "bytes_sent": int(round(s - s0)),
                       "bytes_received": int(round(r - r0))}
    return out, diff
