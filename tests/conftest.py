import os
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The CPU backend's on-disk cache is on by default (under ~/.cache/functrans); the suite
# exercises it in a fresh folder of its own so that runs neither share nor leave entries.
# Under pytest-xdist each worker gets a folder of its own below that one: a test that
# expects a cold compile must not find the other worker's entry.
if "FUNCTRANS_CACHE_DIR" not in os.environ:
    import tempfile
    os.environ["FUNCTRANS_CACHE_DIR"] = tempfile.mkdtemp(prefix="functrans-test-cache-")
    os.environ["FUNCTRANS_TEST_CACHE_ROOT"] = os.environ["FUNCTRANS_CACHE_DIR"]
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("FUNCTRANS_TEST_CACHE_ROOT"):
    os.environ["FUNCTRANS_CACHE_DIR"] = os.path.join(os.environ["FUNCTRANS_TEST_CACHE_ROOT"],
                                                     os.environ["PYTEST_XDIST_WORKER"])
    os.makedirs(os.environ["FUNCTRANS_CACHE_DIR"], exist_ok=True)

# Bytecode: with PYTHONDONTWRITEBYTECODE set (and no PYTHONPYCACHEPREFIX), every process
# compiles the ~280 project modules from source again (~0.55 s of CPU per process), and the
# suite starts ~150 of them (MPI ranks, the CUDA workers, subprocess tests). So this process
# writes the bytecode once, to a private folder outside the tree that its subprocesses read
# (they still write nothing), removed at exit. Without the variable Python caches as usual.
if sys.flags.dont_write_bytecode and not sys.pycache_prefix:
    import atexit
    import shutil
    import tempfile
    sys.pycache_prefix = tempfile.mkdtemp(prefix="functrans-test-pyc-")
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
    sys.dont_write_bytecode = False
    atexit.register(shutil.rmtree, sys.pycache_prefix, True)

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def loop_batchings(monkeypatch):
    """A Counter of how often the loop rules batch each (body, in_dims, out_dims); the
    bodies are kept alive so that their ids stay unique."""
    calls, keep, orig = Counter(), [], control_flow_loops.vmap_closed

    def counted(closed, in_dims, size, out_dims_to=None):
        keep.append(closed)
        calls[(id(closed), tuple(in_dims), out_dims_to and tuple(out_dims_to))] += 1
        return orig(closed, in_dims, size, out_dims_to)
    monkeypatch.setattr(control_flow_loops, "vmap_closed", counted)
    return calls


# Every jaxpr a trace or transform builds is type-checked during the suite (a transform
# that builds an ill-typed program fails loudly, naming itself, rather than later).
import functrans as _ft  # noqa: E402
from functrans.primitives import control_flow_loops  # noqa: E402

_ft.config.update("enable_checks", True)
