"""The parallel-training strategies of examples/parallel/ run under mpiexec and train to the
same losses as one process (each example checks this itself and exits non-zero if not)."""
import os

import pytest

from tests.test_distributed import ROOT, needs_mpi, run_mpi_path

CASES = [("data_parallel.py", 2, ()), ("zero.py", 2, ("1",)), ("zero.py", 2, ("2",)),
         ("zero.py", 2, ("3",)), ("zero.py", 4, ("3",)), ("tensor_parallel.py", 2, ()),
         ("tensor_parallel.py", 4, ("--dp",)), ("pipeline_parallel.py", 2, ()),
         ("transformer_tp.py", 2, ()), ("transformer_tp.py", 4, ("--dp",)),
         ("pipeline_parallel.py", 4, ())]


@needs_mpi
@pytest.mark.parametrize("script,n,args", CASES, ids=lambda c: str(c))
def test_strategy_matches_single_process(script, n, args):
    r = run_mpi_path(n, os.path.join(ROOT, "examples", "parallel", script), *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "max difference" in r.stdout
