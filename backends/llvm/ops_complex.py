"""Complex rows of the op table: a complex64/complex128 value is the struct
``{re, im}`` of two floats (``lltypes.C64``/``C128``, numpy's interleaved layout in
memory), so a fused kernel loads, computes and stores it like any scalar.

Registered here: ``real``, ``imag``, ``conj``, ``complex`` (the parts and their
inverse), and the complex cases of ``add``, ``sub``, ``mul``, ``div``, ``neg``, ``abs``,
``integer_pow`` (|n| <= 4, numpy's ``nc_pow``), ``eq``, ``ne``, ``select_n``,
``stop_gradient``, ``convert_element_type`` (real or complex to complex, complex to
real float: the real part, as numpy's ``astype``),
``reduce_sum`` and ``reduce_prod``, each the row's real rule unchanged for real
operands. Every rule is numpy's arithmetic on the parts:
``(a+bi)(c+di) = (ac - bd) + (ad + bc)i`` (numpy's scalar loop; its AVX-512 loop fuses
a multiply-add: an ulp apart at most), division by Smith's method as numpy's loop,
``abs`` as numpy's vector loop (a fused multiply-add under the square root), ``conj``
negates the imaginary part (``-0.0`` for ``+0.0``), ``==`` compares both parts, a sum
adds each part (reassociated like a real sum), a product multiplies in order (numpy's
bits along the last axis); ``exp``, ``log``, ``sqrt``, ``sin``, ``cos``, ``tan``,
``sinh``, ``cosh``, ``tanh`` call libm's ``cexp``... as numpy's loops do. What is not
here (``pow``, ``log1p``, inverse trigonometric functions, max/min) stays a host step:
``program.classify`` accepts a complex operand or result only where
``supports_complex`` says so.

>>> all(TABLE[n].complex for n in ("real", "imag", "conj", "complex", "mul", "abs"))
True
"""
from __future__ import annotations

import dataclasses
import platform
import sys

import llvmlite.ir as ir
import numpy as np

from .equations import NATIVE
from .lltypes import C64, C128, COMPLEX_DTYPES, F32, F64, I32, lltype
from .ops import REDUCTIONS, TABLE, Row
from .vmath import libm_symbol

__all__ = ["parts", "make", "mul", "add", "div", "libm_call", "supports_complex", "LIBM",
           "LIBM_ABI"]

# complex functions numpy computes with libm's C99 ``c<name>``: called here too (x86-64
# System V calling convention only; elsewhere they stay host steps)
LIBM = ("exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh")
LIBM_ABI = platform.machine() in ("x86_64", "AMD64") and sys.platform != "win32"


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


def mul(b, x, y):
    """The complex product ``x·y`` emitted with builder ``b`` (numpy's scalar loop)."""
    (a, c), (d, e) = parts(b, x), parts(b, y)       # (a + ci)(d + ei)
    return make(b, x.type, b.fsub(b.fmul(a, d), b.fmul(c, e)),
                b.fadd(b.fmul(a, e), b.fmul(c, d)))


def add(b, x, y):
    """The complex sum ``x + y`` emitted with builder ``b``."""
    (a, c), (d, e) = parts(b, x), parts(b, y)
    return make(b, x.type, b.fadd(a, d), b.fadd(c, e))


def _neg(em, eqn, z):
    re, im = parts(em.b, z)
    return make(em.b, z.type, em.b.fneg(re), em.b.fneg(im))


def _div(em, eqn, x, y):
    return div(em.b, x, y)


def div(b, x, y):
    """numpy's complex division ``x / y`` emitted with builder ``b`` (its scalar loop,
    Smith's method): scale by the larger part of the divisor; a zero divisor divides
    each part by +0 (inf or nan)."""
    (a, c), (d, e) = parts(b, x), parts(b, y)       # (a + ci) / (d + ei)
    t = d.type
    one, zero = ir.Constant(t, 1.0), ir.Constant(t, 0.0)
    fabs = lambda v: b.call(_intrinsic(b, "fabs", t), [v])     # noqa: E731
    ad, ae = fabs(d), fabs(e)
    real_big = b.fcmp_ordered(">=", ad, ae)
    both_zero = b.and_(b.fcmp_ordered("==", ad, zero), b.fcmp_ordered("==", ae, zero))
    rat1 = b.fdiv(e, d)                              # |d| >= |e|
    scl1 = b.fdiv(one, b.fadd(d, b.fmul(e, rat1)))
    re1 = b.fmul(b.fadd(a, b.fmul(c, rat1)), scl1)
    im1 = b.fmul(b.fsub(c, b.fmul(a, rat1)), scl1)
    re0, im0 = b.fdiv(a, ad), b.fdiv(c, ad)          # 0 divisor: a/+0, c/+0
    rat2 = b.fdiv(d, e)                              # |d| < |e| (or unordered: nan)
    scl2 = b.fdiv(one, b.fadd(e, b.fmul(d, rat2)))
    re2 = b.fmul(b.fadd(b.fmul(a, rat2), c), scl2)
    im2 = b.fmul(b.fsub(b.fmul(c, rat2), a), scl2)
    re = b.select(real_big, b.select(both_zero, re0, re1), re2)
    im = b.select(real_big, b.select(both_zero, im0, im1), im2)
    return make(b, x.type, re, im)


def _integer_pow(em, eqn, z):
    """numpy's complex power by a small integer (its ``nc_pow``): 1 for n = 0, ``z``,
    ``z·z``, ``z·(z·z)`` for n = 1, 2, 3, else square-and-multiply from 1 (then 1/r for
    n < 0); a zero base gives 0 (n > 0) or nan + nan·i (n < 0)."""
    n, dt = eqn.params["y"], eqn.inputs[0].aval.dtype
    b, one = em.b, em.const(dt, 1)
    if n == 0:
        return one
    if n in (1, 2, 3):
        r = z if n == 1 else mul(b, z, z) if n == 2 else mul(b, z, mul(b, z, z))
    else:
        m, mask, r, p = abs(n), 1, one, z
        while True:
            if m & mask:
                r = mul(b, r, p)
            mask <<= 1
            if m < mask:
                break
            p = mul(b, p, p)
        if n < 0:
            r = _div(em, eqn, one, r)
    re, im = parts(b, z)
    t = re.type
    zero_base = b.and_(b.fcmp_ordered("==", re, ir.Constant(t, 0.0)),
                       b.fcmp_ordered("==", im, ir.Constant(t, 0.0)))
    nan = complex(float("nan"), float("nan"))
    return b.select(zero_base, em.const(dt, 0 if n > 0 else nan), r)


def _intrinsic(em, name, t, nargs=1):
    fname = f"llvm.{name}.{'f64' if t == F64 else 'f32'}"
    fn = em.module.globals.get(fname)
    return fn if fn is not None else ir.Function(em.module, ir.FunctionType(t, [t] * nargs),
                                                 fname)


def _abs(em, eqn, z):
    """numpy's complex absolute value (its vector loop, every array layout): inf if a part
    is inf, else nan if one is nan, else ``larger · sqrt(fma(r, r, 1))`` with ``r =
    smaller / larger`` (0 when larger is 0 or inf)."""
    b = em.b
    re, im = parts(b, z)
    t = re.type
    fabs, sqrt = _intrinsic(em, "fabs", t), _intrinsic(em, "sqrt", t)
    inf, nan = ir.Constant(t, float("inf")), ir.Constant(t, float("nan"))
    zero, one = ir.Constant(t, 0.0), ir.Constant(t, 1.0)
    re, im = b.call(fabs, [re]), b.call(fabs, [im])
    re_inf, im_inf = b.fcmp_ordered("==", re, inf), b.fcmp_ordered("==", im, inf)
    im = b.select(re_inf, inf, im)
    re = b.select(im_inf, inf, re)
    re_nan, im_nan = b.fcmp_unordered("uno", re, re), b.fcmp_unordered("uno", im, im)
    im = b.select(re_nan, nan, im)
    re = b.select(im_nan, nan, re)
    re_big = b.fcmp_ordered(">", re, im)       # both nan or neither, here
    larger, smaller = b.select(re_big, re, im), b.select(re_big, im, re)
    divide = b.not_(b.or_(b.fcmp_ordered("==", larger, zero), b.fcmp_ordered("==", larger, inf)))
    ratio = b.select(divide, b.fdiv(smaller, b.select(divide, larger, one)), zero)
    fma = _intrinsic(em, "fma", t, 3)
    return b.fmul(b.call(sqrt, [b.call(fma, [ratio, ratio, one])]), larger)


def _libm(name):
    """The complex rule calling C99's ``c<name>`` (libm's, the one numpy's loop calls,
    under our own symbol as ``vmath.libm_symbol`` registers it; the x86-64 ABI: a
    complex double as two doubles, a complex float as one <2 x float>)."""
    return lambda em, eqn, z: libm_call(em.b, name, z)


def _tanh(em, eqn, z):
    """C99's ``ctanh``, but ``tanh(±inf + yj) = ±1 + 0j`` with the zero signed as ``y``
    for a finite ``y`` (C99 signs it as ``sin(2y)``): the Array API's and JAX's value,
    as the op's impl (``functrans.primitives.complex_edges``) gives it."""
    b = em.b
    out = libm_call(b, "tanh", z)
    re, im = parts(b, z)
    t = re.type
    fabs, copysign = _intrinsic(em, "fabs", t), _intrinsic(em, "copysign", t, 2)
    inf = ir.Constant(t, float("inf"))
    edge = b.and_(b.fcmp_ordered("==", b.call(fabs, [re]), inf),
                  b.fcmp_ordered("<", b.call(fabs, [im]), inf))
    ore, oim = parts(b, out)
    ore = b.select(edge, b.call(copysign, [ir.Constant(t, 1.0), re]), ore)
    oim = b.select(edge, b.call(copysign, [ir.Constant(t, 0.0), im]), oim)
    return make(b, out.type, ore, oim)


def libm_call(b, name: str, z):
    """C99's ``c<name>`` of the complex ``z`` (one of ``LIBM``), emitted with builder
    ``b``: a call to libm as numpy's loop makes it (x86-64 System V only)."""
    re, im = parts(b, z)
    if z.type == C128:
        return b.call(_declare(b, libm_symbol("c" + name), C128, [F64, F64]), [re, im])
    vt, at = ir.VectorType(F32, 2), [ir.Constant(I32, 0), ir.Constant(I32, 1)]
    v = b.insert_element(b.insert_element(ir.Constant(vt, ir.Undefined), re, at[0]), im, at[1])
    r = b.call(_declare(b, libm_symbol("c" + name + "f"), vt, [vt]), [v])
    return make(b, C64, b.extract_element(r, at[0]), b.extract_element(r, at[1]))


def _declare(em, name, ret, args):
    fn = em.module.globals.get(name)
    return fn if fn is not None else ir.Function(em.module, ir.FunctionType(ret, args), name)


def _sum_combine(em, dtype, acc, x):
    b = em.b
    (ar, ai), (xr, xi) = parts(b, acc), parts(b, x)
    return make(b, acc.type, b.fadd(ar, xr, flags=("reassoc",)),
                b.fadd(ai, xi, flags=("reassoc",)))


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
    src = eqn.inputs[0].aval.dtype
    t = _out_type(eqn)
    if src.kind == "c":
        re, im = parts(b, x)
        fsrc = np.dtype(np.float64 if src == np.complex128 else np.float32)
        if not isinstance(t, ir.LiteralStructType):     # to a real float: numpy's real part
            return _to_real(b, re, fsrc, t)
        part = t.elements[0]
        return make(b, t, _to_real(b, re, fsrc, part), _to_real(b, im, fsrc, part))
    part = t.elements[0]
    return make(b, t, _to_real(b, x, src, part), ir.Constant(part, 0.0))


_extend("add", lambda em, eqn, x, y: add(em.b, x, y))
_extend("sub", _componentwise("fsub"))
_extend("mul", lambda em, eqn, x, y: mul(em.b, x, y))
_extend("neg", _neg)
_extend("eq", _equal(False))
_extend("ne", _equal(True))
_extend("div", _div)
_extend("abs", _abs)
_extend("integer_pow", _integer_pow)
if LIBM_ABI:
    for _name in LIBM:
        _extend(_name, _tanh if _name == "tanh" else _libm(_name))
_extend("stop_gradient", lambda em, eqn, x: x)
_extend("select_n", TABLE["select_n"].emit, kinds="")   # LLVM selects structs as scalars
_extend("convert_element_type", _convert)


def _extend_reduction(name, rule):
    red = REDUCTIONS[name]
    REDUCTIONS[name] = dataclasses.replace(
        red, kinds=red.kinds + "c",
        combine=lambda em, d, acc, x: (rule if d.kind == "c" else red.combine)(em, d, acc, x))


_extend_reduction("reduce_sum", _sum_combine)
_extend_reduction("reduce_prod", lambda em, d, acc, x: mul(em.b, acc, x))   # in order


def supports_complex(eqn, odd=None) -> bool:
    """Whether ``eqn``, whose operands and results have the dtypes ``odd`` beside the
    real ones, has native code here: every such dtype complex, and a row marked
    ``complex`` (convert: to complex only) or an emitter (``equations.NativeOp``) that
    handles complex values.

    >>> from jaxpr_ir import Eqn, Var, ShapedArray, primitives
    >>> import functrans  # registers the primitives
    >>> z = Var(ShapedArray((2,), "complex64"))
    >>> supports_complex(Eqn(primitives["convert_element_type"], [z],
    ...     [Var(ShapedArray((2,), "int32"))], {"new_dtype": np.dtype("int32")}))
    False
    """
    name = eqn.primitive.name
    if odd is not None and not set(odd) <= COMPLEX_DTYPES:
        return False
    if name in NATIVE:
        return NATIVE[name].complex
    if name in REDUCTIONS:
        return name in ("reduce_sum", "reduce_prod")
    row = TABLE.get(name)
    if row is None or not row.complex or eqn.primitive.multiple_results:
        return False
    return name != "convert_element_type" or eqn.outvars[0].aval.dtype.kind in "cf"
