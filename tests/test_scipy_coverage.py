"""Every public name of jax.scipy (tests/data/jax_scipy_names.txt, listed once from JAX
0.10.2; dotted below jax.scipy, e.g. ``stats.norm.logpdf``) is either implemented in
functrans.scipy or listed in LEFT_OUT with the reason; the same table is in the README."""
import importlib
import pathlib
import re

import functrans.scipy as fsp

ROOT = pathlib.Path(__file__).resolve().parent.parent

LEFT_OUT: dict[str, str] = {}


def _names():
    lines = (ROOT / "tests" / "data" / "jax_scipy_names.txt").read_text().splitlines()
    return [n.strip() for n in lines if n.strip() and not n.startswith("#")]


def _has(name):
    parts = name.split(".")
    obj = fsp
    for i, part in enumerate(parts):
        if not hasattr(obj, part):
            try:        # a submodule not imported by its parent (as scipy's cluster.vq)
                obj = importlib.import_module("functrans.scipy." + ".".join(parts[:i + 1]))
            except ImportError:
                return False
            continue
        obj = getattr(obj, part)
    return callable(obj)


def test_the_name_list_is_whole():
    names = _names()
    assert len(names) == len(set(names)) == 234
    assert {"special.gammaln", "stats.norm.logpdf", "linalg.expm", "signal.stft",
            "sparse.linalg.cg", "spatial.transform.Rotation"} <= set(names)


def test_every_jax_scipy_name_is_implemented_or_left_out_with_a_reason():
    missing = [n for n in _names() if not _has(n) and n not in LEFT_OUT]
    assert not missing, f"neither implemented nor in LEFT_OUT: {missing}"


def test_left_out_names_are_really_missing_and_listed_in_readme():
    assert not [n for n in LEFT_OUT if _has(n)], "implemented names must leave LEFT_OUT"
    assert set(LEFT_OUT) <= set(_names())
    readme = (ROOT / "README.md").read_text()
    for name in LEFT_OUT:
        assert re.search(rf"`(scipy\.)?{re.escape(name)}`", readme), f"{name} missing from README"


def test_coverage_ratio():
    names = _names()
    covered = sum(_has(n) for n in names)
    assert covered == len(names) == 234, (covered, len(names))
