import os
import sys

import numpy as np
import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The CPU backend's on-disk cache is on by default (under ~/.cache/functrans); the suite
# exercises it in a fresh folder of its own so that runs neither share nor leave entries.
if "FUNCTRANS_CACHE_DIR" not in os.environ:
    import tempfile
    os.environ["FUNCTRANS_CACHE_DIR"] = tempfile.mkdtemp(prefix="functrans-test-cache-")

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# Every jaxpr a trace or transform builds is type-checked during the suite (a transform
# that builds an ill-typed program fails loudly, naming itself, rather than later).
import functrans as _ft  # noqa: E402

_ft.config.update("enable_checks", True)
