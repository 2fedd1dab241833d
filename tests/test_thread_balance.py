"""``threads.free_cores``: a competitor must be seen in every reading before a core is
given up (one reading can catch an in-process pool spinning down, or a blip), while a
busy process, runnable in every reading, still takes its core; and the BLAS's thread
setter gets the count ``balance()`` already chose when the library is found late."""
from backends.llvm import blas, threads


def _readings(monkeypatch, pairs):
    """Make successive readings return (machine runnable, own runnable) from ``pairs``
    (the last one repeats); returns the list of readings taken."""
    taken = []

    def running():
        taken.append(min(len(taken), len(pairs) - 1))
        return pairs[taken[-1]][0]
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "_runnable_now", running)
    monkeypatch.setattr(threads, "_own_runnable", lambda: pairs[taken[-1]][1])
    return taken


def test_a_competitor_seen_once_is_not_a_competitor(monkeypatch):
    # first reading: 3 runnable, 1 ours (our pool went to sleep between the two counts);
    # the confirming reading sees only us
    taken = _readings(monkeypatch, [(3, 1), (1, 1)])
    assert threads.free_cores(1) == 2 and len(taken) == 2


def test_a_busy_process_is_seen_in_every_reading_and_takes_its_core(monkeypatch):
    taken = _readings(monkeypatch, [(2, 1)])
    assert threads.free_cores(1) == 1 and len(taken) == threads.CONFIRM_READINGS
    taken = _readings(monkeypatch, [(3, 1), (2, 1), (3, 1)])       # the fewest counts
    assert threads.free_cores(1) == 1 and len(taken) == 3


def test_a_crowded_machine_is_read_once(monkeypatch):
    # 8 others on 2 cores: no blip explains that, so no confirming readings (each costs a
    # /proc/self/task scan, 0.1-0.4 ms)
    taken = _readings(monkeypatch, [(9, 1), (1, 1)])
    assert threads.free_cores(1) == 1 and taken == [0]


def test_an_idle_machine_is_read_once(monkeypatch):
    taken = _readings(monkeypatch, [(1, 1)])
    assert threads.free_cores(1) == 2 and taken == [0]


def test_unknown_counts_leave_every_core(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "_runnable_now", lambda: None)
    assert threads.free_cores(1) == 2


def test_fewer_cores_must_still_be_free_a_moment_later(monkeypatch):
    # a process living a millisecond can be in all of free_cores' readings (they are
    # ~0.1 ms apart); a second check DROP_CONFIRM_SECONDS later must agree before a core
    # is given up, while more cores are taken at once
    for var in threads._LIMIT_VARS:
        monkeypatch.delenv(var, raising=False)
    seen, others = [], [0]
    monkeypatch.setattr(threads, "BLAS_SETTERS", [seen.append])
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads, "_STATE", {"checked": -1e9, "in use": None, "drop seen": None})
    monkeypatch.setattr(threads, "_own_runnable", lambda: 1)
    monkeypatch.setattr(threads, "_runnable_now", lambda: 1 + others[0])
    wait = threads.DROP_CONFIRM_SECONDS
    assert threads.balance(now=0.0) == 2 and seen == [2]
    others[0] = 1                                     # a blip...
    assert threads.balance(now=1.0) == 2 and seen == [2]
    others[0] = 0                                     # ...gone at the confirming check
    assert threads.balance(now=1.0 + wait) == 2 and seen == [2]
    others[0] = 1                                     # a busy process: seen twice
    assert threads.balance(now=2.0) == 2
    assert threads.balance(now=2.0 + wait / 2) == 2   # too soon to confirm
    assert threads.balance(now=2.0 + wait) == 1 and seen == [2, 1]
    others[0] = 0                                     # it ends: the core back at once
    assert threads.balance(now=3.0) == 2 and seen == [2, 1, 2]
    threads._NTHREADS.value = threads._LAUNCHED[0]


def test_a_late_blas_gets_the_count_in_use(monkeypatch):
    seen = []

    class Lib:        # an OpenBLAS stand-in: only the thread setter
        pass
    lib = Lib()
    lib.openblas_set_num_threads = type("F", (), {"__call__": lambda self, n: seen.append(n)})()
    monkeypatch.setattr(threads, "BLAS_SETTERS", [])
    monkeypatch.setattr(threads, "_STATE", {"checked": 0.0, "in use": 1})
    blas._register_thread_setter(lib, 32)
    assert seen == [1] and threads.BLAS_SETTERS == [lib.openblas_set_num_threads]


def test_the_real_readings_stay_in_range():
    assert 1 <= threads.free_cores(1) <= threads.usable_cores()
