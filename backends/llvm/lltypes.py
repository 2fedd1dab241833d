"""The LLVM types of the supported dtypes, their constants, and element loads and
stores, shared by the kernel emitters (``kernels``, ``row_kernels``), the op table
(``ops``), the per-equation emitters (``equations``) and the program lowering
(``program``). It imports only llvmlite.ir, numpy and ml_dtypes: a leaf of the backend.

A bfloat16 is its raw bits, an ``i16``, in registers and in memory (this LLVM may have
no ``bfloat`` type): ``bf16_to_f32`` and ``f32_to_bf16`` convert with integer IR, and
``half`` widens every other bfloat16 operation to float32 between them.

A bool is an ``i1`` in registers but a byte in memory (numpy's layout): loads
compare the byte with zero (any nonzero byte is true, as numpy reads it); stored
values are widened to a 0/1 byte. A complex64/complex128 value is the literal struct
``{float, float}`` / ``{double, double}`` (real part, imaginary part), in registers and
in memory alike: numpy's interleaved layout, 8 or 16 bytes per element.

>>> str(lltype("float32")), str(storage("bool")), str(const("int32", -1))
('float', 'i8', 'i32 -1')
>>> str(lltype("complex64")), str(const("complex128", 1 - 2j))
('{float, float}', '{double, double} {double 0x3ff0000000000000, double 0xc000000000000000}')
"""
from __future__ import annotations

import llvmlite.ir as ir
import ml_dtypes
import numpy as np

__all__ = ["emit_loop", "emit_nest", "access_group", "loop_id", "I1", "I8", "I16", "I32", "I64",
           "F16", "F32", "F64", "C64", "C128", "LLTYPES", "COMPLEX_DTYPES", "BF16", "lltype",
           "storage", "const", "load_elem", "stored", "bf16_to_f32", "f32_to_bf16", "Routine"]

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
LLTYPES = {np.dtype("float64"): F64, np.dtype("float32"): F32, np.dtype("float16"): F16,
           np.dtype("int64"): I64,
           np.dtype("uint64"): I64, np.dtype("int32"): I32, np.dtype("uint32"): I32,
           np.dtype("int16"): I16, np.dtype("uint16"): I16, np.dtype("int8"): I8,
           np.dtype("uint8"): I8, np.dtype("bool"): I1, BF16: I16}
C64, C128 = ir.LiteralStructType([F32, F32]), ir.LiteralStructType([F64, F64])
COMPLEX_DTYPES = frozenset((np.dtype("complex64"), np.dtype("complex128")))
LLTYPES.update({np.dtype("complex64"): C64, np.dtype("complex128"): C128})


def lltype(dtype):
    """The register type of ``dtype``."""
    return LLTYPES[np.dtype(dtype)]


def storage(dtype):
    """The in-memory element type of ``dtype`` (bools are bytes)."""
    dtype = np.dtype(dtype)
    return I8 if dtype == np.bool_ else lltype(dtype)


def const(dtype, value):
    """``value`` as a constant of ``dtype``'s register type (integers wrap to the
    dtype's width as numpy casts them)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return ir.Constant(lltype(dtype), float(value))
    if dtype == BF16:        # its bits, rounded as ml_dtypes rounds
        return ir.Constant(I16, int(np.asarray(value, BF16).view(np.uint16)))
    if dtype.kind == "c":
        z = complex(value)
        part = lltype(dtype).elements[0]
        return ir.Constant(lltype(dtype), [ir.Constant(part, z.real), ir.Constant(part, z.imag)])
    if dtype == np.bool_:
        return ir.Constant(I1, int(bool(value)))
    return ir.Constant(lltype(dtype), int(np.asarray(value, dtype).astype(np.int64)))


def load_elem(b, ptr, dtype):
    """Emit with builder ``b`` a load of the ``dtype`` element at ``ptr``."""
    dtype = np.dtype(dtype)
    v = b.load(ptr, typ=storage(dtype))
    return b.icmp_unsigned("!=", v, ir.Constant(I8, 0)) if dtype == np.bool_ else v


def stored(b, v, dtype):
    """The ``dtype`` value ``v`` in its in-memory form (emitted with builder ``b``)."""
    return b.zext(v, I8) if np.dtype(dtype) == np.bool_ else v


def bf16_to_f32(b, x):
    """The float32 of bfloat16 bits ``x`` (an i16): its 16 bits on top, exact (NaN
    payloads and subnormals included), as ml_dtypes and XLA convert."""
    return b.bitcast(b.shl(b.zext(x, I32), ir.Constant(I32, 16)), F32)


def f32_to_bf16(b, x):
    """The bfloat16 bits (i16) of float32 ``x`` rounded to nearest even: adding
    0x7FFF plus the kept low bit carries exactly when the dropped half is above one
    half or a tie with an odd kept half (overflow rounds to inf, subnormals as any
    other value); a NaN is the quiet NaN 0x7FC0 with its sign, as ml_dtypes gives."""
    u = b.bitcast(x, I32)
    c16 = ir.Constant(I32, 16)
    odd = b.and_(b.lshr(u, c16), ir.Constant(I32, 1))
    rounded = b.trunc(b.lshr(b.add(u, b.add(odd, ir.Constant(I32, 0x7FFF))), c16), I16)
    sign = b.and_(b.trunc(b.lshr(u, c16), I16), ir.Constant(I16, 0x8000))
    nan = b.or_(sign, ir.Constant(I16, 0x7FC0))
    return b.select(b.fcmp_unordered("uno", x, x), nan, rounded)



class _AccessGroup(ir.values.MDValue):
    """An access group: an empty ``distinct`` metadata node (llvmlite makes only
    uniqued ones, and equal empty nodes would be one group)."""

    def descr(self, buf):
        buf += ("distinct !{}", "\n")

    __eq__ = object.__eq__        # each group is its own (metadata nodes naming it too)
    __hash__ = object.__hash__


def access_group(module):
    """A new access group of ``module`` (``loop_id``'s ``parallel``).

    >>> import llvmlite.ir as ir
    >>> m = ir.Module()
    >>> g = access_group(m)
    >>> str(loop_id(m, parallel=g)).split(" = ")[1], g == access_group(m)
    ('!{ !2, !1 }', False)
    """
    return _AccessGroup(module, [], name=str(len(module.metadata)))


def loop_id(module, *ops, parallel=None):
    """A loop ID (self-referential, as LLVM requires; unique) with the metadata ``ops``;
    with an access group ``parallel`` (on every load and store of the loop's body), the
    loop is marked parallel (``llvm.loop.parallel_accesses``): no iteration reads what
    another writes, so LLVM's loop access analysis skips its dependence checks (which
    compare the body's memory accesses pair by pair)."""
    if parallel is not None:
        ops += (module.add_metadata([ir.MetaDataString(module, "llvm.loop.parallel_accesses"),
                                     parallel]),)
    uses = module.__dict__.setdefault("_ft_loop_ids", [])
    md = module.add_metadata([ir.MetaDataString(module, f"ft.loop.{len(uses)}")])
    uses.append(md)
    md.operands = (md, *ops)     # after caching: the key stays unique
    return md


def emit_loop(h, n, body, start=None) -> None:
    """``for i in range(start, start + n): body(i)``, top-tested, in ``h`` (anything with
    ``fn``, the llvmlite function, and ``b``, its builder); ``n`` an int or an i64 value,
    ``start`` None (0) or an i64 value. One trip known at compile time is no loop."""
    b = h.b
    if isinstance(n, int):
        if n <= 0:
            return
        if n == 1:
            body(ir.Constant(I64, 0) if start is None else start)
            return
        n = ir.Constant(I64, n)
    pre = b.block
    head = h.fn.append_basic_block("head")
    blk = h.fn.append_basic_block("loop")
    done = h.fn.append_basic_block("done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", i, n), blk, done)
    b.position_at_end(blk)
    body(i if start is None else b.add(i, start))
    i.add_incoming(b.add(i, ir.Constant(I64, 1), flags=("nsw",)), b.block)
    b.branch(head)
    b.position_at_end(done)


def emit_nest(h, dims, body) -> None:
    """A loop nest over ``dims`` (ints or i64 values) in ``h``; ``body(list of indices)``."""
    idxs = []

    def level(d):
        if d == len(dims):
            body(list(idxs))
            return

        def inner(i):
            idxs.append(i)
            level(d + 1)
            idxs.pop()
        emit_loop(h, dims[d], inner)
    level(0)


class Routine:
    """The small tools of a hand-written IR routine (the radix sorter, the top-k heap):
    ``self.fn`` the function, ``self.b`` the builder at the current block, ``self.eb`` a
    builder in the entry block (allocas there, so LLVM promotes them to registers)."""

    def var(self, typ, init):
        """A stack slot of ``typ`` holding ``init``."""
        p = self.eb.alloca(typ)
        self.b.store(init, p)
        return p

    def get(self, base, typ, i):
        return self.b.load(self.b.gep(base, [i], source_etype=typ), typ=typ)

    def put(self, base, typ, i, v):
        self.b.store(v, self.b.gep(base, [i], source_etype=typ))

    def block(self, name):
        return self.fn.append_basic_block(name)
