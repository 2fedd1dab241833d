"""Multi-threading of large kernels: a persistent pool of native threads (numba's
``workqueue`` threading layer, loaded directly so it does not depend on which layer
numba itself picks) and the symbols generated code calls.

A parallel kernel is a body ``void body(char **args, i64 *dims, i64 *steps, i8 *data)``
running outer-loop iterations ``[ptrtoint(args[0]), + dims[0])`` with its buffers in
``data``; ``ft_parallel_for`` (the pool's ``parallel_for``) splits ``dims[0]`` across
``ft_num_threads`` threads. The generated wrapper runs the body itself, serially, when
threading is off or the process is a fork of the one that started the pool (its
threads do not exist there). ``FUNCTRANS_NUM_THREADS`` sets the thread count
(default: the CPU count; 1 turns threading off).

The user's limit holds for the BLAS too: ``FUNCTRANS_NUM_THREADS``, else
``OPENBLAS_NUM_THREADS``, else ``OMP_NUM_THREADS`` (the variables OpenBLAS itself
reads) caps the count ``balance()`` gives it, so ``FUNCTRANS_NUM_THREADS=1`` makes the
whole library single-threaded.

On a shared machine the count in use follows the cores actually free: ``balance()``
(called before each call of a program with parallel kernels or BLAS products, doing
work at most every ``BALANCE_SECONDS``) counts the other runnable threads on the
machine (``/proc/loadavg``'s instantaneous count, less this process's own, read from
``/proc/self/task``) and sets both our
pool's count and the BLAS's (``BLAS_SETTERS``, filled by ``blas``) to what is free,
so a competing busy process costs its share instead of two threads fighting for one
core.

>>> isinstance(num_threads(), int)
True
"""
from __future__ import annotations

import ctypes
import functools
import os
import time

import llvmlite.binding as llvm

MIN_ELEMENTS = 1 << 18     # below this, waking the threads costs more than it saves

_NTHREADS = ctypes.c_int(1)
_PID = ctypes.c_int(-1)
_LAUNCHED = [1]
BALANCE_SECONDS = 0.25
CONFIRM_READINGS = 3      # readings that must all see another process (free_cores)
DROP_CONFIRM_SECONDS = 0.02   # fewer free cores must still be seen this much later
BLAS_SETTERS: list = []      # set_threads(n) of the BLAS libraries in use
_STATE = {"checked": -1e9, "in use": None, "drop seen": None}


@functools.lru_cache(maxsize=None)
def _start() -> int:
    try:
        n = int(os.environ.get("FUNCTRANS_NUM_THREADS", "") or (os.cpu_count() or 1))
    except ValueError:
        n = 1
    if n > 1:
        try:
            from numba.np.ufunc import workqueue as wq
            ctypes.CFUNCTYPE(None, ctypes.c_int)(wq.launch_threads)(n)
            llvm.add_symbol("ft_parallel_for", wq.parallel_for)
        except Exception:        # no numba, or its layer unusable: stay serial
            n = 1
    if n <= 1:
        llvm.add_symbol("ft_parallel_for", 0)
    _NTHREADS.value = n
    _LAUNCHED[0] = n
    _PID.value = os.getpid()
    llvm.add_symbol("ft_num_threads", ctypes.addressof(_NTHREADS))
    llvm.add_symbol("ft_pool_pid", ctypes.addressof(_PID))
    return n


def add_blas_setter(setter) -> None:
    """Register a BLAS library's ``set_num_threads(n)`` with ``balance``, applying the
    count already in use (a library found after the first balance must not keep its
    default of one thread per core).

    >>> add_blas_setter(lambda n: None) is None
    True
    """
    BLAS_SETTERS.append(setter)
    if _STATE["in use"] is not None:
        setter(_STATE["in use"])


def num_threads() -> int:
    """Threads large kernels are split over (1: threading off)."""
    return _start()


def pool_started() -> bool:
    """Whether the pool was started (by a compiled program, or ``num_threads``)."""
    return _start.cache_info().currsize > 0


def usable_cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _runnable_now():
    """Threads runnable on the machine right now (None where unknown)."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def _own_runnable():
    """This process's threads runnable right now (None where unknown): its pool, the
    BLAS's and any other library's threads in this process (XLA's, when JAX shares the
    process) are not other processes competing for the cores."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    n = 0
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                n += f.read().rpartition(")")[2].split()[0] == "R"
        except (OSError, IndexError):
            continue        # the thread ended meanwhile
    return n


def _others_runnable(ours: int):
    """Other processes' runnable threads in one reading (None where unknown)."""
    running = _runnable_now()
    if running is None:
        return None
    own = _own_runnable()
    return max(0, running - (ours if own is None else own))


def free_cores(ours: int) -> int:
    """Cores not taken by other processes: the runnable threads on the machine less this
    process's own (counted where /proc says, else taken as ``ours``: the reader and its
    pool's threads still spinning).

    A reading that sees 1 to ``n`` other runnable threads is confirmed by up to
    ``CONFIRM_READINGS - 1`` more and the fewest seen counts. One reading is one
    instant, and its two counts are taken apart (the per-thread scan takes 0.1-0.4 ms):
    an in-process pool spinning down between them (XLA's after a JAX call, OpenBLAS's
    after ours) or a short-lived process reads as a competitor, and giving up a core
    for 0.25 s costs a BLAS-bound step ~1.7x (MLP step: 1.2 ms on one thread, 0.72 ms
    on two). A busy process is runnable in every reading, so it still counts.

    >>> 1 <= free_cores(1) <= usable_cores()
    True
    """
    n = usable_cores()
    others = _others_runnable(ours)
    for _ in range(CONFIRM_READINGS - 1):
        if not others or others > n:     # none, or more than a blip could explain
            break
        again = _others_runnable(ours)
        others = others if again is None else min(others, again)
    if others is None:
        return n
    return max(1, min(n, n - others))


_LIMIT_VARS = ("FUNCTRANS_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def user_limit(environ=None) -> int | None:
    """The thread count the user asked for (the first of ``_LIMIT_VARS`` set to a
    positive integer; ``OMP_NUM_THREADS=4,2`` counts its first level), None if none.

    >>> user_limit({"OMP_NUM_THREADS": "3"}), user_limit({}), user_limit({"OMP_NUM_THREADS": "x"})
    (3, None, None)
    """
    environ = os.environ if environ is None else environ
    for var in _LIMIT_VARS:
        try:
            n = int(environ.get(var, "").split(",")[0])
        except ValueError:
            continue
        if n >= 1:
            return n
    return None


def balance(now=None) -> int:
    """Set the thread counts of our pool and the BLAS to the cores free (at most every
    ``BALANCE_SECONDS``); returns the count in use.

    More cores are taken at once; fewer only when a second check at least
    ``DROP_CONFIRM_SECONDS`` later still finds them taken. ``free_cores``'s readings are
    a fraction of a millisecond apart, so a process living a millisecond (or a kernel
    worker) can be in all of them, and giving up a core for ``BALANCE_SECONDS`` costs a
    BLAS-bound step ~1.7x; a busy process is still there 20 ms later and costs at most
    that long of two threads sharing its core."""
    now = time.monotonic() if now is None else now
    st = _STATE
    wait = BALANCE_SECONDS if st.get("drop seen") is None else DROP_CONFIRM_SECONDS
    if now - st["checked"] < wait and st["in use"] is not None:
        return st["in use"]
    st["checked"] = now
    launched = _start()
    cap = max(launched, usable_cores())
    free = free_cores(st["in use"] or cap)
    limit = user_limit()
    if limit is not None:
        free = min(free, limit)
    in_use = st["in use"]
    if in_use is not None and free < in_use and st.get("drop seen") is None and \
            (limit is None or limit >= in_use):
        st["drop seen"] = now          # confirm at a check DROP_CONFIRM_SECONDS on
        return in_use
    st["drop seen"] = None
    if free != in_use:
        st["in use"] = free
        _NTHREADS.value = max(1, min(free, launched)) if launched > 1 else 1
        for setter in BLAS_SETTERS:
            setter(free)
    return free
