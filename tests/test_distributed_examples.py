"""The parallel-training strategies of examples/parallel/ run under mpiexec and train to the
same losses as one process (each example checks this itself and exits non-zero if not)."""
import os

import pytest

from tests.test_distributed import PROGRAMS, ROOT, TIMEOUT, needs_mpi, run_mpi_path, run_several

CASES = [("data_parallel.py", 2, ()), ("zero.py", 2, ("1",)), ("zero.py", 2, ("2",)),
         ("zero.py", 2, ("3",)), ("zero.py", 4, ("3",)), ("tensor_parallel.py", 2, ()),
         ("tensor_parallel.py", 4, ("--dp",)), ("pipeline_parallel.py", 2, ()),
         ("transformer_tp.py", 2, ()), ("transformer_tp.py", 4, ("--dp",)),
         ("pipeline_parallel.py", 4, ())]


def _item(script, args):
    """The example as a run_several.py item: its path from there and its arguments."""
    path = os.path.relpath(os.path.join(ROOT, "examples", "parallel", script), PROGRAMS)
    return " ".join([path, *args])


@pytest.fixture(scope="module")
def shared_on_4():
    """The 4-process cases in one mpiexec launch (a 4-rank launch spends ~3.5 s of CI's
    2 cores starting processes and importing functrans): item -> its result."""
    items = tuple(_item(s, a) for s, n, a in CASES if n == 4)
    return run_several(4, items, TIMEOUT * 2)


@needs_mpi
@pytest.mark.parametrize("script,n,args", CASES, ids=lambda c: str(c))
def test_strategy_matches_single_process(script, n, args, request):
    if n == 4:
        r = request.getfixturevalue("shared_on_4")[_item(script, args)]
    else:
        r = run_mpi_path(n, os.path.join(ROOT, "examples", "parallel", script), *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "max difference" in r.stdout
