"""Compile caching: object code in memory per IR text, and optionally on disk.

The key is the SHA-256 of the module's IR text and ``engine.host_key()`` (triple, host
CPU name and features, llvmlite version), so code is never shared across machines or
LLVM versions. The disk cache (on by default under ``$XDG_CACHE_HOME/functrans`` or
``~/.cache/functrans``; ``FUNCTRANS_CACHE_DIR`` names another folder, and an empty value
or ``off`` turns it off) stores each object file with a magic tag, its length and its own SHA-256; a file that
is truncated, garbage or fails to load is ignored and rebuilt, never trusted.

>>> _key("x") == _key("x")
True
"""
from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import threading

from . import engine

_MAGIC = b"FTLLVMO1"
_HEADER = struct.Struct("<8s32sQ")
_MEM: dict = {}          # key -> (engine.Loaded, optimised IR text or None)
_LOCK = threading.Lock()
stats = {"memory hits": 0, "disk hits": 0, "compiles": 0, "rejected files": 0}


def _key(ir_text: str) -> str:
    h = hashlib.sha256()
    h.update(ir_text.encode())
    h.update(b"\0")
    h.update(engine.host_key().encode())
    return h.hexdigest()


def cache_dir():
    """The on-disk cache directory, or None when the disk cache is off."""
    d = os.environ.get("FUNCTRANS_CACHE_DIR")
    if d is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(base, "functrans")
    if d.strip().lower() in ("", "0", "off", "none"):
        return None
    return d


def _path(d, key):
    return os.path.join(d, f"{key}.ftobj")


def _read(path):
    """The object code stored at ``path``, or None if absent or not intact."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < _HEADER.size:
        return None
    magic, digest, n = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    if magic != _MAGIC or n != len(payload) or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def _write(path, obj):
    d = os.path.dirname(path)
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(_HEADER.pack(_MAGIC, hashlib.sha256(obj).digest(), len(obj)))
            f.write(obj)
        os.replace(tmp, path)    # atomic: readers see the old file or the whole new one
    except OSError:
        pass                     # a read-only or full disk only costs a recompile


def load(ir_text: str, timings=None, stage=None):
    """(engine.Loaded, optimised IR text or None) for ``ir_text``, compiling if needed;
    the seconds of each stage are added to ``timings`` (a dict) when given; ``stage``:
    see ``engine.compile_object``."""
    key = _key(ir_text)
    with _LOCK:
        hit = _MEM.get(key)
    if hit is not None:
        stats["memory hits"] += 1
        return hit
    d = cache_dir()
    loaded = opt_text = None
    if d:
        with engine.timed(timings, "disk cache read"):
            obj = _read(_path(d, key))
        if obj is not None:
            try:
                with engine.timed(timings, "llvm load"):
                    loaded = engine.Loaded(obj)
                stats["disk hits"] += 1
            except Exception:      # a foreign or damaged object that passed the checksum
                loaded = None
        if loaded is None and os.path.exists(_path(d, key)):
            stats["rejected files"] += 1
    if loaded is None:
        obj, opt_text = engine.compile_object(ir_text, timings, stage)
        stats["compiles"] += 1
        with engine.timed(timings, "llvm load"):
            loaded = engine.Loaded(obj)
        if d:
            with engine.timed(timings, "disk cache write"):
                _write(_path(d, key), obj)
    with _LOCK:
        _MEM[key] = (loaded, opt_text)
    return loaded, opt_text


ON_CLEAR = []     # callbacks forgetting what holds compiled code (the plan cache)


def clear_memory():
    """Forget the in-memory caches (tests use it to exercise the disk cache)."""
    with _LOCK:
        _MEM.clear()
    for f in ON_CLEAR:
        f()
