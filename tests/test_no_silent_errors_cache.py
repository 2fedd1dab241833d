"""The CPU backend's disk cache trusts a file only under the key and toolchain it was
written for (issue 13.3): swapped, forged, stale or directory entries are rebuilt."""
import hashlib
import json
import os
import struct

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from backends.llvm import cache

X = np.linspace(-2.0, 2.0, 17)
FUNS = {"exp": (lambda v: fnp.exp(v) * 3.0 + 0.25, lambda v: np.exp(v) * 3.0 + 0.25),
        "sin": (lambda v: fnp.sin(v) - v * 0.5, lambda v: np.sin(v) - v * 0.5)}
HEADER = struct.Struct("<8s32sQQ")


def _run(name):
    # every in-memory cache (jit's own, shared by fresh wrappers of one function since
    # 4e7f60c, and the backend's plans): the object comes from disk
    ft.clear_caches()
    cache.clear_memory()
    f, want = FUNS[name]
    np.testing.assert_allclose(ft.jit(f, backend="cpu")(X), want(X), rtol=1e-15)


def _entries(d, before=()):
    return sorted(p for p in os.listdir(d) if p.endswith(".ftobj") and p not in before)


@pytest.fixture
def two_entries(tmp_path, monkeypatch):
    """The cache folder holding exactly one entry for each function of FUNS."""
    # the vector-math routines of small kernels are compiled once per process into entries
    # of their own (backends/llvm/vmath.py): load them first, into another folder, so that
    # the test does not depend on what ran before it in the process
    monkeypatch.setenv("FUNCTRANS_CACHE_DIR", str(tmp_path / "warm"))
    _run("exp")
    _run("sin")
    folder = tmp_path / "cache"
    monkeypatch.setenv("FUNCTRANS_CACHE_DIR", str(folder))
    _run("exp")
    (a,) = _entries(folder)
    _run("sin")
    (b,) = _entries(folder, [a])
    return folder / a, folder / b


def _forge(path, meta_change=None, obj=None):
    """Rewrite ``path`` with a valid checksum over changed metadata or object code."""
    data = path.read_bytes()
    magic, _, n_meta, n_obj = HEADER.unpack_from(data)
    meta = data[HEADER.size:HEADER.size + n_meta]
    body_obj = data[HEADER.size + n_meta:] if obj is None else obj
    if meta_change:
        m = json.loads(meta)
        m.update(meta_change)
        meta = json.dumps(m, sort_keys=True).encode()
    path.write_bytes(HEADER.pack(magic, hashlib.sha256(meta + body_obj).digest(), len(meta),
                                 len(body_obj)) + meta + body_obj)


def _expect_rebuilt(name, path, good):
    compiles, rejected = cache.stats["compiles"], cache.stats["rejected files"]
    _run(name)                                     # right result, no crash
    assert cache.stats["compiles"] == compiles + 1
    assert cache.stats["rejected files"] == rejected + 1
    assert path.read_bytes() == good               # repaired
    hits = cache.stats["disk hits"]
    _run(name)
    assert cache.stats["disk hits"] == hits + 1     # and used from then on


def test_each_file_records_its_key_and_toolchain(two_entries):
    a, _ = two_entries
    data = a.read_bytes()
    _, _, n_meta, _ = HEADER.unpack_from(data)
    meta = json.loads(data[HEADER.size:HEADER.size + n_meta])
    assert meta["key"] + ".ftobj" == a.name
    assert {"library", "llvm", "host"} <= set(meta)
    assert "llvmlite" in meta["host"]


def test_swapped_entries_are_rejected_and_rebuilt(two_entries):
    a, b = two_entries
    good_a, good_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(good_b)
    b.write_bytes(good_a)
    _expect_rebuilt("exp", a, good_a)
    _expect_rebuilt("sin", b, good_b)


def test_an_entry_forged_with_a_valid_checksum_is_rejected(two_entries):
    a, b = two_entries
    good_a, good_b = a.read_bytes(), b.read_bytes()
    # another entry's object under this entry's header, checksum recomputed
    n_meta = HEADER.unpack_from(good_b)[2]
    _forge(a, obj=good_b[HEADER.size + n_meta:])
    _expect_rebuilt("exp", a, good_a)     # its object lacks this key's stamp


@pytest.mark.parametrize("change", [{"key": "0" * 64}, {"llvm": "1.0.0"},
                                    {"library": "0.0.0-other"}, {"host": "another-cpu"}])
def test_a_file_for_another_key_or_toolchain_is_rejected(two_entries, change):
    a, _ = two_entries
    good = a.read_bytes()
    _forge(a, meta_change=change)
    _expect_rebuilt("exp", a, good)


def test_a_bad_checksum_is_rejected(two_entries):
    a, _ = two_entries
    good = a.read_bytes()
    a.write_bytes(good[:HEADER.size + 5] + bytes([good[HEADER.size + 5] ^ 1]) +
                  good[HEADER.size + 6:])
    _expect_rebuilt("exp", a, good)


def test_a_directory_in_place_of_an_entry_is_replaced(two_entries):
    a, _ = two_entries
    good = a.read_bytes()
    a.unlink()
    a.mkdir()
    (a / "junk").write_text("x")
    _expect_rebuilt("exp", a, good)
    assert a.is_file()


def test_an_unreadable_entry_is_replaced(two_entries):
    a, _ = two_entries
    good = a.read_bytes()
    a.unlink()
    a.symlink_to(a.parent / "nowhere")     # open() fails, as for a file we may not read
    _expect_rebuilt("exp", a, good)
    assert a.is_file() and not a.is_symlink()
