"""Every docstring example in the three packages runs and prints what it shows: the
examples are documentation, and documentation that lies is worse than none."""
import doctest
import importlib
import pkgutil

import pytest

import backends
import functrans
import jaxpr_ir

MODULES = sorted(m.name for pkg in (jaxpr_ir, functrans, backends)
                 for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    registry = dict(jaxpr_ir.primitives)      # examples may register toy primitives
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False)
    finally:
        jaxpr_ir.primitives.clear()
        jaxpr_ir.primitives.update(registry)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
