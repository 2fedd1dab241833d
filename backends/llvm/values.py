"""The value types every part of the CPU lowering shares: where a buffer lives
(``Ref``), how a value is read (``Val``), how a kernel addresses a buffer from its loop
indices (``Access``), raw element copies (``raw_type``, ``raw_const``) and the
workspace's byte ranges (``Arena``).

A leaf of the backend (it imports only llvmlite.ir, numpy, ``lltypes`` and
``backends.fusion``), so the program lowering (``program``) and its plug-ins
(``equations``, ``blas``, ``control``, ``kernels``) can all import it without importing
each other.

>>> v = Val("float64", (2, 3), ref=Ref("ws", 0, None), strides=(3, 1))
>>> v.contiguous, Val("float64", (2, 3), ref=Ref("ws", 0, None), strides=(1, 2)).contiguous
(True, False)
"""
from __future__ import annotations

import bisect

import llvmlite.ir as ir
import numpy as np

from ..fusion import View
from .lltypes import I8, LLTYPES, const, storage

__all__ = ["Ref", "Val", "Access", "Arena", "Lender", "nbytes", "raw_type", "raw_const", "PTR"]

PTR = ir.PointerType()
_ALIGN = 64
_TRIES, _HELD = 16, 256     # bounds of one Lender.place search


class Arena:
    """Workspace byte ranges; a released range is reused for a buffer of the same size.

    >>> Arena().alloc(10), Arena().alloc(100)
    (0, 0)
    """

    def __init__(self):
        self.top = 0
        self.free = {}

    def alloc(self, n):
        n = max(_ALIGN, -(-n // _ALIGN) * _ALIGN)
        lst = self.free.get(n)
        if lst:
            return lst.pop()
        off = self.top
        self.top += n
        return off

    def release(self, off, n):
        n = max(_ALIGN, -(-n // _ALIGN) * _ALIGN)
        self.free.setdefault(n, []).append(off)


class Lender:
    """Byte ranges of the caller's output buffers lent to temporaries (buffer
    assignment as XLA's): an output is free memory until the step that first writes it,
    so a temporary whose steps of life ``[first, last]`` all come before that step may
    live inside it. Each output lends first-fit at 64-byte offsets; a temporary goes to
    the output written soonest after its last use (the later ones stay free longer).

    >>> lender = Lender()
    >>> lender.add(3, 4096, 4, written_at=5)          # output slot 3, float32, 4 KiB
    >>> lender.place(1024, 4, 0, 2), lender.place(4096, 4, 1, 2), lender.place(1024, 4, 1, 5)
    ((3, 0), None, None)
    >>> lender.place(3072, 4, 1, 4), lender.place(64, 8, 0, 1)    # float64 in float32's
    ((3, 1024), None)
    """

    def __init__(self):
        self.outs = []       # [written_at, slot, size, alignment, [(off, n, first, last)]]
        self._at = None      # the outputs' first writes, sorted (None: not yet)

    def add(self, slot, size, alignment, written_at):
        """Output ``slot`` (``size`` bytes, its dtype's ``alignment``) is first written
        at step ``written_at`` and read by no step before."""
        self.outs.append([written_at, slot, size, alignment, []])
        self._at = None

    def place(self, n, alignment, first, last):
        """(slot, byte offset) of ``n`` bytes free during steps ``[first, last]``, or None.
        At most ``_TRIES`` outputs are searched, each holding at most ``_HELD`` ranges
        (planning stays linear in the program's size)."""
        if self._at is None:
            self.outs.sort(key=lambda o: o[0])
            self._at = [o[0] for o in self.outs]
        tries = 0
        for written_at, slot, size, align, held in self.outs[bisect.bisect_right(self._at, last):]:
            if alignment > align or n > size or len(held) >= _HELD:
                continue
            busy = sorted((o, o + k) for o, k, f, t in held if f <= last and first <= t)
            off = 0
            for lo, hi in busy:
                if off + n <= lo:
                    break
                off = max(off, -(-hi // _ALIGN) * _ALIGN)
            if off + n <= size:
                held.append((off, n, first, last))
                return slot, off
            tries += 1
            if tries == _TRIES:
                break
        return None


def nbytes(aval) -> int:
    """The bytes of a dense buffer of ``aval``."""
    return int(aval.size) * aval.dtype.itemsize


def raw_type(dtype):
    """The type a copy moves one element as (dtypes without arithmetic here: raw bits)."""
    dtype = np.dtype(dtype)
    return storage(dtype) if dtype in LLTYPES else ir.IntType(8 * dtype.itemsize)


def raw_const(dtype, value):
    """``value`` as a constant of ``raw_type(dtype)`` (a bool as its stored byte)."""
    dtype = np.dtype(dtype)
    if dtype in LLTYPES:
        v = const(dtype, value)
        return ir.Constant(I8, int(bool(value))) if dtype == np.bool_ else v
    bits = int.from_bytes(np.asarray(value, dtype).tobytes(), "little")
    return ir.Constant(raw_type(dtype), bits)


class Ref:
    """A contiguous buffer: ``slot`` k, ``ws`` byte offset, ``stack`` alloca, or ``ptr``
    (an LLVM pointer value of the current function, e.g. one row of a scan's xs)."""
    __slots__ = ("kind", "where", "aval")

    def __init__(self, kind, where, aval):
        self.kind, self.where, self.aval = kind, where, aval


class Val:
    """How to read a value: a scalar literal (``lit``), or a strided view of a Ref."""
    __slots__ = ("lit", "ref", "shape", "strides", "offset", "dtype")

    def __init__(self, dtype, shape, lit=None, ref=None, strides=None, offset=0):
        self.dtype, self.shape, self.lit, self.ref = np.dtype(dtype), tuple(shape), lit, ref
        self.strides, self.offset = strides, offset

    @property
    def contiguous(self):
        return self.ref is not None and View(None, self.shape, self.strides, self.offset).contiguous

    def reshaped(self, shape, strides=None, offset=None):
        """The same buffer read with another shape (and strides/offset when given)."""
        return Val(self.dtype, shape, lit=self.lit, ref=self.ref,
                   strides=self.strides if strides is None else strides,
                   offset=self.offset if offset is None else offset)


class Access:
    """How a kernel addresses one buffer from its loop indices: the buffer's argument
    position, element strides over the loop shape, an element offset, the dtype."""

    def __init__(self, arg_index, strides, offset, dtype):
        self.arg, self.strides, self.offset, self.dtype = arg_index, list(strides), offset, dtype
