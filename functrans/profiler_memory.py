"""``device_memory_profile``: the live functrans Arrays as a pprof profile (a gzipped
``profile.proto``, what ``pprof`` and JAX's ``jax.profiler.device_memory_profile`` give).

A functrans array is numpy memory, so "device memory" is the host buffers that live
``functrans.Array`` objects hold: each buffer once (views of one buffer share it), at its
size. Two sample values per buffer, as JAX's: ``allocations``/``count`` and
``space``/``bytes``; labels ``kind`` (``buffer``), ``dtype`` and ``shape``. The stack of
each sample is where the buffer's owning array was created, when ``tracemalloc`` was
tracing then (``tracemalloc.start(25)`` before the run gives whole stacks); else one frame
``(unknown site: tracemalloc off)``.

>>> import functrans as ft, functrans.numpy as fnp
>>> x = fnp.ones(1000)
>>> device_memory_profile()[:2] == b"\\x1f\\x8b"     # gzip
True
"""
from __future__ import annotations

import gc
import gzip
import os
import time
import tracemalloc

import numpy as np

from .array import Array

__all__ = ["device_memory_profile", "save_device_memory_profile", "live_buffers"]


def _root(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory (``a`` itself unless it is a view)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def live_buffers() -> list:
    """``(root array, one live Array using it)`` for each distinct buffer that live
    ``functrans.Array`` objects hold (after a garbage collection).

    >>> import functrans.numpy as fnp
    >>> x = fnp.arange(5.0); any(a is x for _, a in live_buffers())
    True
    """
    gc.collect()
    seen = {}
    for o in gc.get_objects():
        # by type (an Array, not a tracer): isinstance of a dead weakref.proxy raises
        if issubclass(type(o), Array) and not o.is_deleted():
            r = _root(o)
            seen.setdefault(id(r), (r, o))
    return list(seen.values())


# ------------------------------------------------------------------ protobuf by hand

def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1          # int64 fields: two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _int(field: int, n: int) -> bytes:
    return _varint(field << 3) + _varint(n) if n else b""


def _msg(field: int, body: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(body)) + body


def _packed(field: int, ns) -> bytes:
    return _msg(field, b"".join(_varint(n) for n in ns)) if ns else b""


class _Builder:
    def __init__(self):
        self.strings = {"": 0}
        self.functions = {}       # (name, file) -> id
        self.locations = {}       # (name, file, line) -> id
        self.body = bytearray()

    def s(self, text: str) -> int:
        return self.strings.setdefault(text, len(self.strings))

    def location(self, name: str, filename: str, line: int) -> int:
        key = (name, filename, line)
        if key not in self.locations:
            fkey = (name, filename)
            if fkey not in self.functions:
                fid = self.functions[fkey] = len(self.functions) + 1
                self.body += _msg(5, _int(1, fid) + _int(2, self.s(name)) +
                                  _int(3, self.s(name)) + _int(4, self.s(filename)))
            lid = self.locations[key] = len(self.locations) + 1
            self.body += _msg(4, _int(1, lid) +
                              _msg(4, _int(1, self.functions[fkey]) + _int(2, line)))
        return self.locations[key]


def _site(b: _Builder, root, arr) -> list:
    """Location ids of the stack that allocated the buffer (its owning array ``root``,
    else the Array ``arr``), innermost first."""
    tb = None
    if tracemalloc.is_tracing():
        tb = tracemalloc.get_object_traceback(root) or tracemalloc.get_object_traceback(arr)
    if tb is None:
        why = ("allocated before tracemalloc started" if tracemalloc.is_tracing()
               else "tracemalloc off")
        return [b.location(f"(unknown site: {why})", "", 0)]
    return [b.location(f"{os.path.basename(fr.filename)}:{fr.lineno}", fr.filename, fr.lineno)
            for fr in reversed(tb)]   # tracemalloc: oldest first; pprof: leaf first


def device_memory_profile(backend: str | None = None) -> bytes:
    """The live Arrays' buffers as gzipped pprof ``profile.proto`` bytes (see the module
    doc); ``backend`` is accepted for JAX's signature (functrans arrays live on the host).

    >>> import gzip
    >>> len(gzip.decompress(device_memory_profile())) > 0
    True
    """
    b = _Builder()
    samples = bytearray()
    for root, arr in live_buffers():
        locs = _site(b, root, arr)
        labels = (_msg(3, _int(1, b.s("kind")) + _int(2, b.s("buffer"))) +
                  _msg(3, _int(1, b.s("dtype")) + _int(2, b.s(str(arr.dtype)))) +
                  _msg(3, _int(1, b.s("shape")) + _int(2, b.s(str(tuple(root.shape))))))
        samples += _msg(2, _packed(1, locs) + _packed(2, [1, int(root.nbytes)]) + labels)
    head = (_msg(1, _int(1, b.s("allocations")) + _int(2, b.s("count"))) +
            _msg(1, _int(1, b.s("space")) + _int(2, b.s("bytes"))))
    tail = (_int(9, time.time_ns()) +
            _msg(11, _int(1, b.s("space")) + _int(2, b.s("bytes"))))
    strings = b"".join(_msg(6, s.encode()) for s in b.strings)   # dict: insertion order
    return gzip.compress(head + bytes(samples) + bytes(b.body) + strings + tail)


def save_device_memory_profile(filename, backend: str | None = None) -> None:
    """Write ``device_memory_profile(backend)`` to ``filename`` (``pprof`` reads it).

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "memory.prof")
    >>> save_device_memory_profile(p); os.path.getsize(p) > 0
    True
    """
    with open(filename, "wb") as f:
        f.write(device_memory_profile(backend))
