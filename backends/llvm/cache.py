"""Compile caching: object code in memory per IR text, and optionally on disk.

The key is the SHA-256 of the module's IR text and ``engine.host_key()`` (triple, host
CPU name and features, llvmlite version), so code is never shared across machines or
LLVM versions. The disk cache (on by default under ``$XDG_CACHE_HOME/functrans`` or
``~/.cache/functrans``; ``FUNCTRANS_CACHE_DIR`` names another folder, and an empty value
or ``off`` turns it off) stores each object file with a magic tag, a header recording the
full key it was stored under with the library, LLVM and llvmlite versions and the host CPU
and its features, and one SHA-256 over header and object. A file whose key, versions or
checksum differ from what this process expects (an entry copied or swapped under another
name, a forged or damaged file), that is truncated, garbage or fails to load, is ignored
and rebuilt, never trusted; a directory or unreadable entry in its place is replaced.
Each object also defines an empty function named after its key, checked after loading:
an object built for another key is rejected even under a well-formed header.

>>> _key("x") == _key("x")
True
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import shutil
import struct
import tempfile
import threading

import llvmlite.binding as llvm

from . import engine

_MAGIC = b"FTLLVMO2"
# magic, SHA-256 of (metadata + object), metadata length, object length
_HEADER = struct.Struct("<8s32sQQ")
_MEM: dict = {}          # key -> (engine.Loaded, None: the optimised IR is not kept)
MEM_CACHE_SIZE = 512     # loaded modules kept (LRU); ``set_size`` changes it
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


@functools.lru_cache(maxsize=1)
def _toolchain() -> dict:
    """The library and LLVM versions and the host (CPU, features, llvmlite version)."""
    try:
        library = importlib.metadata.version("functrans")
    except importlib.metadata.PackageNotFoundError:   # run from a checkout, not installed
        library = "unknown"
    return {"library": library, "llvm": ".".join(map(str, llvm.llvm_version_info)),
            "host": engine.host_key()}


def _metadata(key: str) -> bytes:
    """What a file records besides the object: everything the object code depends on,
    so that a file is used only under the exact key and toolchain it was built for."""
    return json.dumps({"format": 2, "key": key, **_toolchain()}, sort_keys=True).encode()


def _read(path, key):
    """The object code stored at ``path`` for ``key``, or None if absent, not intact, or
    stored for another key or toolchain."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:          # absent, unreadable, or a directory in its place
        return None
    if len(data) < _HEADER.size:
        return None
    magic, digest, n_meta, n_obj = _HEADER.unpack_from(data)
    body = data[_HEADER.size:]
    if magic != _MAGIC or n_meta + n_obj != len(body) or \
            hashlib.sha256(body).digest() != digest:
        return None
    if body[:n_meta] != _metadata(key):
        return None
    return body[n_meta:]


def _write(path, key, obj):
    d = os.path.dirname(path)
    try:
        os.makedirs(d, exist_ok=True)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)     # a directory under our entry's name
        meta = _metadata(key)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(_HEADER.pack(_MAGIC, hashlib.sha256(meta + obj).digest(), len(meta),
                                 len(obj)))
            f.write(meta)
            f.write(obj)
        os.replace(tmp, path)    # atomic: readers see the old file or the whole new one
    except OSError:
        pass                     # a read-only or full disk only costs a recompile


def _stamp_name(key: str) -> str:
    return f"ft_cache_key_{key}"     # ft_: a helper, not a kernel, to IR readers


def _stamp(key: str) -> str:
    """A one-byte constant named after the key, compiled into the object: a header can be
    rewritten to another key with a valid checksum, the object's symbols cannot without
    recompiling, so a loaded object must define its own key's stamp. Data, not an empty
    function: a function costs its own pass through LLVM's code generator (~0.5 ms)."""
    return f"\n@{_stamp_name(key)} = constant i8 0\n"


def load(ir_text, timings=None, stage=None):
    """(engine.Loaded, None) for ``ir_text``, compiling if needed (None: the optimised
    IR, which ``engine.compile_object`` no longer prints; ``Executable.as_text`` does);
    the seconds of each stage are added to ``timings`` (a dict) when given; ``stage``:
    see ``engine.compile_object``. ``ir_text`` may be a list of module texts (the parts
    of one module, ``split``): compiled concurrently, cached on disk one by one, linked
    into one engine."""
    parts = [ir_text] if isinstance(ir_text, str) else list(ir_text)
    keys = [_key(p) for p in parts]
    key = keys[0] if len(keys) == 1 else _key("\0".join(keys))
    with _LOCK:
        hit = _MEM.pop(key, None)
        if hit is not None:
            _MEM[key] = hit          # now the most recently used (dicts keep order)
    if hit is not None:
        stats["memory hits"] += 1
        return hit
    d = cache_dir()
    loaded = _from_disk(d, keys, timings) if d else None
    opt_text = None
    if loaded is None:
        texts = [p + _stamp(k) for p, k in zip(parts, keys)]
        objs = engine.compile_objects(texts, timings, stage)
        stats["compiles"] += 1
        with engine.timed(timings, "llvm load"):
            loaded = engine.Loaded(objs)
        if d:
            with engine.timed(timings, "disk cache write"):
                for k, obj in zip(keys, objs):
                    _write(_path(d, k), k, obj)
    with _LOCK:
        _MEM[key] = (loaded, opt_text)
        _trim()
    return loaded, opt_text


def _from_disk(d, keys, timings):
    """The parts' object code from the disk cache, loaded and checked, or None."""
    with engine.timed(timings, "disk cache read"):
        objs = [_read(_path(d, k), k) for k in keys]
    loaded = None
    if all(o is not None for o in objs):
        try:
            with engine.timed(timings, "llvm load"):
                loaded = engine.Loaded(objs)
            for k in keys:
                loaded.address(_stamp_name(k))   # each object was built from its IR
            stats["disk hits"] += 1
        except Exception:      # a foreign or damaged object that passed the checksum
            loaded = None
    if loaded is None and any(os.path.lexists(_path(d, k)) for k in keys):
        stats["rejected files"] += 1
    return loaded


def _trim():
    # executables using a dropped module keep their own reference; call with _LOCK held
    while len(_MEM) > MEM_CACHE_SIZE:
        del _MEM[next(iter(_MEM))]


def set_size(n: int) -> None:
    """Keep at most ``n`` loaded modules in memory (``MEM_CACHE_SIZE``), dropping the
    least recently used beyond it now; functrans sets it from its option
    ``backend_cache_size``."""
    global MEM_CACHE_SIZE
    if int(n) < 1:
        raise ValueError(f"the object cache keeps at least one module, got {n!r}")
    with _LOCK:
        MEM_CACHE_SIZE = int(n)
        _trim()


def entries() -> int:
    """How many loaded modules the in-memory cache holds."""
    return len(_MEM)


ON_CLEAR = []     # callbacks forgetting what holds compiled code (the plan cache)


def clear_memory():
    """Forget the in-memory caches (tests use it to exercise the disk cache)."""
    with _LOCK:
        _MEM.clear()
    for f in ON_CLEAR:
        f()
