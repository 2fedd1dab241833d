"""Every public name of jax.numpy (tests/data/jax_numpy_names.txt, taken once from JAX's
documentation) is either implemented in functrans.numpy or listed in LEFT_OUT with the
reason; the same table is in the README."""
import pathlib
import re

import functrans.numpy as fnp

ROOT = pathlib.Path(__file__).resolve().parent.parent

LEFT_OUT: dict[str, str] = {}     # every name of the list is implemented


def _names():
    lines = (ROOT / "tests" / "data" / "jax_numpy_names.txt").read_text().splitlines()
    return [n.strip() for n in lines if n.strip() and not n.startswith("#")]


def _has(name):
    obj = fnp
    for part in name.split("."):
        if part == "ndarray" and obj is fnp:
            obj = fnp.ndarray
            continue
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def test_every_jax_numpy_name_is_implemented_or_left_out_with_a_reason():
    missing = [n for n in _names() if not _has(n) and n not in LEFT_OUT]
    assert not missing, f"neither implemented nor in LEFT_OUT: {missing}"


def test_left_out_names_are_really_missing_and_listed_in_readme():
    assert not [n for n in LEFT_OUT if _has(n)], "implemented names must leave LEFT_OUT"
    readme = (ROOT / "README.md").read_text()
    for name, reason in LEFT_OUT.items():
        assert re.search(rf"`{re.escape(name)}`", readme), f"{name} missing from README"


def test_coverage_ratio():
    names = _names()
    covered = sum(_has(n) for n in names)
    assert covered / len(names) >= 0.97, (covered, len(names))


def test_public_names_are_exported_and_no_helpers_leak():
    assert all(hasattr(fnp, n) for n in fnp.__all__)
    leaked = {"np", "operator", "Tracer", "annotations", "builtins", "functools", "vmap"}
    assert not leaked & set(fnp.__all__)
