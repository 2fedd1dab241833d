"""Complex rows of the op table: a complex64/complex128 value is the struct
``{re, im}`` of two floats (``lltypes.C64``/``C128``, numpy's interleaved layout in
memory), so a fused kernel loads, computes and stores it like any scalar.

Registered here: ``real``, ``imag``, ``conj``, ``complex`` (the parts and their
inverse), and the complex cases of ``add``, ``sub``, ``mul``, ``neg``, ``eq``, ``ne``,
``select_n`` and ``convert_element_type`` (real or complex to complex), each the
row's real rule unchanged for real operands. Every rule is numpy's arithmetic on the
parts: ``(a+bi)(c+di) = (ac - bd) + (ad + bc)i``, ``conj`` negates the imaginary part
(``-0.0`` for ``+0.0``), ``==`` compares both parts. What is not here (division,
``abs``, ``exp``..., complex reductions, products) stays a host step: ``program.classify``
accepts a complex operand or result only for a row marked ``complex``.

>>> sorted(n for n, r in TABLE.items() if r.complex)[:6]
['add', 'complex', 'conj', 'convert_element_type', 'eq', 'imag']
"""
from __future__ import annotations

import dataclasses

import llvmlite.ir as ir
import numpy as np

from .equations import NATIVE
from .lltypes import COMPLEX_DTYPES, F64, lltype
from .ops import TABLE, Row

__all__ = ["parts", "make", "supports_complex"]


def parts(b, z):
    """(re, im) of the complex register value ``z``."""
    return b.extract_value(z, 0), b.extract_value(z, 1)


def make(b, t, re, im):
    """The complex value of struct type ``t`` with parts ``re`` and ``im``."""
    z = b.insert_value(ir.Constant(t, ir.Undefined), re, 0)
    return b.insert_value(z, im, 1)


def _is_complex(eqn):
    return any(x.aval.dtype.kind == "c" for x in list(eqn.inputs) + list(eqn.outvars))


def _out_type(eqn):
    return lltype(eqn.outvars[0].aval.dtype)


def _extend(name, rule, kinds="c"):
    """Give row ``name`` a complex case ``rule(em, eqn, *values)`` (real operands keep the
    row's own rule)."""
    row = TABLE[name]
    real = row.emit

    def emit(em, eqn, *xs):
        return rule(em, eqn, *xs) if _is_complex(eqn) else real(em, eqn, *xs)
    TABLE[name] = dataclasses.replace(row, emit=emit, kinds=row.kinds + kinds, complex=True)


# --------------------------------------------------------------------------- parts

TABLE["real"] = Row(lambda em, eqn, z: em.b.extract_value(z, 0), "c", complex=True)
TABLE["imag"] = Row(lambda em, eqn, z: em.b.extract_value(z, 1), "c", complex=True)


def _conj(em, eqn, z):
    re, im = parts(em.b, z)
    return make(em.b, z.type, re, em.b.fneg(im))


def _complex(em, eqn, x, y):
    return make(em.b, _out_type(eqn), x, y)


TABLE["conj"] = Row(_conj, "c", complex=True)
TABLE["complex"] = Row(_complex, "f", complex=True)


# --------------------------------------------------------------------------- arithmetic

def _componentwise(op):
    def emit(em, eqn, x, y):
        b = em.b
        (xr, xi), (yr, yi) = parts(b, x), parts(b, y)
        return make(b, x.type, getattr(b, op)(xr, yr), getattr(b, op)(xi, yi))
    return emit


def _mul(em, eqn, x, y):
    b = em.b
    (a, c), (d, e) = parts(b, x), parts(b, y)       # (a + ci)(d + ei)
    return make(b, x.type, b.fsub(b.fmul(a, d), b.fmul(c, e)),
                b.fadd(b.fmul(a, e), b.fmul(c, d)))


def _neg(em, eqn, z):
    re, im = parts(em.b, z)
    return make(em.b, z.type, em.b.fneg(re), em.b.fneg(im))


def _equal(negate):
    def emit(em, eqn, x, y):
        b = em.b
        (xr, xi), (yr, yi) = parts(b, x), parts(b, y)
        if negate:      # numpy: != is true when either part differs (nan included)
            return b.or_(b.fcmp_unordered("!=", xr, yr), b.fcmp_unordered("!=", xi, yi))
        return b.and_(b.fcmp_ordered("==", xr, yr), b.fcmp_ordered("==", xi, yi))
    return emit


def _to_real(b, x, src, t):
    """The real register value ``x`` of dtype ``src`` converted to float type ``t``."""
    if src.kind == "f":
        if x.type == t:
            return x
        return b.fpext(x, t) if t == F64 else b.fptrunc(x, t)
    return b.uitofp(x, t) if src.kind in "ub" else b.sitofp(x, t)


def _convert(em, eqn, x):
    b = em.b
    src, dst = eqn.inputs[0].aval.dtype, eqn.outvars[0].aval.dtype
    t = _out_type(eqn)
    part = t.elements[0]
    if src.kind == "c":
        re, im = parts(b, x)
        fsrc = np.dtype(np.float64 if src == np.complex128 else np.float32)
        return make(b, t, _to_real(b, re, fsrc, part), _to_real(b, im, fsrc, part))
    return make(b, t, _to_real(b, x, src, part), ir.Constant(part, 0.0))


_extend("add", _componentwise("fadd"))
_extend("sub", _componentwise("fsub"))
_extend("mul", _mul)
_extend("neg", _neg)
_extend("eq", _equal(False))
_extend("ne", _equal(True))
_extend("select_n", TABLE["select_n"].emit, kinds="")   # LLVM selects structs as scalars
_extend("convert_element_type", _convert)


def supports_complex(eqn, odd=None) -> bool:
    """Whether ``eqn``, whose operands and results have the dtypes ``odd`` beside the
    real ones, has native code here: every such dtype complex, and a row marked
    ``complex`` (convert: to complex only) or an emitter (``equations.NativeOp``) that
    handles complex values.

    >>> from jaxpr_ir import Eqn, Var, ShapedArray, primitives
    >>> import functrans  # registers the primitives
    >>> z = Var(ShapedArray((2,), "complex64"))
    >>> supports_complex(Eqn(primitives["convert_element_type"], [z],
    ...     [Var(ShapedArray((2,), "float32"))], {"new_dtype": np.dtype("float32")}))
    False
    """
    name = eqn.primitive.name
    if odd is not None and not set(odd) <= COMPLEX_DTYPES:
        return False
    if name in NATIVE:
        return NATIVE[name].complex
    row = TABLE.get(name)
    if row is None or not row.complex or eqn.primitive.multiple_results:
        return False
    return name != "convert_element_type" or eqn.outvars[0].aval.dtype.kind == "c"
