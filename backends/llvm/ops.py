"""The lowering table: primitive name -> scalar LLVM IR (numpy's semantics, no UB).

A ``Row`` holds everything this backend knows about one elementwise primitive: how to
emit it (``emit``), the dtype kinds it covers (``kinds``), the vectorised math routine
it calls (``routine``, a name registered in ``vmath``; None for plain IR), and whether
it is compute-heavy (``heavy``: a kernel holding one is worth splitting over threads,
and a row kernel prefetches around its phase). Each ``Row.emit(em, eqn, *values)`` gets the kernel emitter ``em`` (``em.b`` is the
IRBuilder, ``em.const(dtype, v)`` a constant, ``em.module`` the module) and the
operands' LLVM values, and returns the result's value. Values are held as double,
float, half (float16, in conversions only: ``half`` widens the rest to float32), i64
(int64 and uint64), i32 (int32 and uint32; the dtype says how to compare/divide/convert),
i16 (int16 and uint16, likewise), i8 (int8 and uint8, likewise),
i1 (bool), or a ``{re, im}`` struct (complex64/complex128: the rows ``ops_complex``
registers or extends, marked ``complex``). Rules here never produce poison: integer
division and remainder by 0 (and INT_MIN / -1) are defined, shifts are masked, float ->
int conversions of nan or out-of-range values give what numpy gives on x86.

>>> sorted(REDUCTIONS)
['reduce_and', 'reduce_max', 'reduce_min', 'reduce_or', 'reduce_prod', 'reduce_sum']
>>> TABLE["sin"].routine, TABLE["sin"].heavy, TABLE["add"].heavy
('sin', True, False)
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable

import llvmlite.ir as ir
import numpy as np

from jaxpr_ir import dtype_kind
from . import vmath, vmath_exp, vmath_hyp, vmath_trig  # noqa: F401  (routines register)
from .lltypes import BF16, F64, I32, I64, bf16_to_f32, f32_to_bf16, lltype


@dataclasses.dataclass
class Row:
    emit: Callable
    kinds: str = "fiub"      # dtype kinds of the first operand this row handles
    heavy: bool = False      # transcendental: kernels holding it are compute-bound
    routine: str | None = None   # the vmath routine ``emit`` calls, if any
    complex: bool = False    # handles complex operands/results too (``ops_complex``)

    def supports(self, eqn):
        x = eqn.inputs[0] if eqn.inputs else eqn.outvars[0]
        return dtype_kind(x.aval.dtype) in self.kinds     # (bfloat16: "f")


@dataclasses.dataclass
class Reduction:
    identity: Callable       # dtype -> python value
    combine: Callable        # (em, dtype, acc, x) -> value
    kinds: str = "fiub"


TABLE: dict = {}
REDUCTIONS: dict = {}


def heavy(eqn) -> bool:
    """Whether ``eqn`` is a compute-heavy elementwise op (its row's ``heavy`` column).

    >>> from jaxpr_ir import Eqn, Var, ShapedArray, primitives
    >>> import functrans  # registers the primitives
    >>> a = Var(ShapedArray((3,), "float64"))
    >>> [heavy(Eqn(primitives[n], [a], [Var(a.aval)], {})) for n in ("exp", "neg")]
    [True, False]
    """
    row = TABLE.get(eqn.primitive.name)
    return row is not None and row.heavy


def _dt(eqn, i=0):
    return eqn.inputs[i].aval.dtype


def _call(em, name, ret, args, vals):
    fn = em.module.globals.get(name)
    if fn is None:
        fn = ir.Function(em.module, ir.FunctionType(ret, args), name)
    return em.b.call(fn, vals)


def _fsuffix(t):
    return "f64" if t == F64 else "f32"


def _intrinsic1(em, name, x):
    return _call(em, f"llvm.{name}.{_fsuffix(x.type)}", x.type, [x.type], [x])


def _intrinsic(em, name, *xs):
    """The float LLVM intrinsic ``llvm.<name>.f64/f32`` applied to ``xs`` (one type)."""
    t = xs[0].type
    return _call(em, f"llvm.{name}.{_fsuffix(t)}", t, [t] * len(xs), list(xs))


def _libm(name):
    def emit(em, eqn, x, *rest):
        cname = name if x.type == F64 else name + "f"
        return _call(em, cname, x.type, [x.type] * (1 + len(rest)), [x, *rest])
    return emit


def _isnan(em, x):
    return em.b.fcmp_unordered("uno", x, x)


# --------------------------------------------------------------------------- arithmetic

def _arith(fop, iop, bop=None):
    def emit(em, eqn, x, y):
        k = _dt(eqn).kind
        if k == "f":
            return getattr(em.b, fop)(x, y)
        if k == "b":
            return getattr(em.b, bop)(x, y)
        return getattr(em.b, iop)(x, y)
    return emit


TABLE["add"] = Row(_arith("fadd", "add", "or_"))
TABLE["sub"] = Row(_arith("fsub", "sub"), "fiu")
TABLE["mul"] = Row(_arith("fmul", "mul", "and_"))
TABLE["neg"] = Row(lambda em, eqn, x: em.b.fneg(x) if _dt(eqn).kind == "f" else em.b.neg(x), "fiu")


def _int_divmod(em, dtype, x, y):
    """numpy's floor division and remainder; x // 0 == x % 0 == 0, INT_MIN // -1 wraps."""
    b = em.b
    zero, one = em.const(dtype, 0), em.const(dtype, 1)
    y0 = b.icmp_unsigned("==", y, zero)
    if dtype.kind == "u":
        ys = b.select(y0, one, y)
        return (b.select(y0, zero, b.udiv(x, ys)), b.select(y0, zero, b.urem(x, ys)))
    ym1 = b.icmp_signed("==", y, em.const(dtype, -1))
    ys = b.select(b.or_(y0, ym1), one, y)
    q, r = b.sdiv(x, ys), b.srem(x, ys)
    # floor: when the remainder is nonzero and its sign differs from the divisor's
    adj = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", b.xor(r, ys), zero))
    q = b.select(adj, b.sub(q, one), q)
    r = b.select(adj, b.add(r, ys), r)
    q = b.select(ym1, b.sub(zero, x), b.select(y0, zero, q))
    r = b.select(b.or_(y0, ym1), zero, r)
    return q, r


def _div(em, eqn, x, y):
    dtype = _dt(eqn)
    if dtype.kind == "f":
        return em.b.fdiv(x, y)
    return _int_divmod(em, dtype, x, y)[0]


def _rem(em, eqn, x, y):
    dtype = _dt(eqn)
    if dtype.kind != "f":
        return _int_divmod(em, dtype, x, y)[1]
    b = em.b
    zero = ir.Constant(x.type, 0.0)
    m = b.frem(x, y)
    fix = b.and_(b.fcmp_ordered("!=", m, zero),
                 b.xor(b.fcmp_ordered("<", m, zero), b.fcmp_ordered("<", y, zero)))
    # a zero keeps frem's sign, the dividend's (JAX's remainder; numpy gives the divisor's)
    return b.select(fix, b.fadd(m, y), m)


TABLE["div"] = Row(_div, "fiu")
TABLE["rem"] = Row(_rem, "fiu")


def choose(em, dtype, x, y, biggest):
    """JAX's max/min: x if (x > y or isnan(x)) else y (nan wins), and of two equal values
    (-0.0 and +0.0 are, but -0.0 is below) the AND (max) or OR (min) of their bits."""
    b, k = em.b, np.dtype(dtype).kind
    pred = ">" if biggest else "<"
    if k == "f":
        it = ir.IntType(64 if x.type == F64 else 32)
        bx, by = b.bitcast(x, it), b.bitcast(y, it)
        tie = b.bitcast(b.and_(bx, by) if biggest else b.or_(bx, by), x.type)
        pick = b.select(b.or_(b.fcmp_ordered(pred, x, y), _isnan(em, x)), x, y)
        return b.select(b.fcmp_ordered("==", x, y), tie, pick)
    if k == "b":
        return b.or_(x, y) if biggest else b.and_(x, y)
    cmp = b.icmp_signed(pred, x, y) if k == "i" else b.icmp_unsigned(pred, x, y)
    return b.select(cmp, x, y)


TABLE["max"] = Row(lambda em, eqn, x, y: choose(em, _dt(eqn), x, y, True))
TABLE["min"] = Row(lambda em, eqn, x, y: choose(em, _dt(eqn), x, y, False))


def _compare(op):
    def emit(em, eqn, x, y):
        k = _dt(eqn).kind
        if k == "f":
            # numpy: != is true on nan, the others false
            return (em.b.fcmp_unordered if op == "!=" else em.b.fcmp_ordered)(op, x, y)
        if k == "i":
            return em.b.icmp_signed(op, x, y)
        return em.b.icmp_unsigned(op, x, y)
    return emit


for _n, _op in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
    TABLE[_n] = Row(_compare(_op))


def _select_n(em, eqn, which, *cases):
    if len(cases) == 1:
        return cases[0]
    if _dt(eqn).kind == "b":
        return em.b.select(which, cases[1], cases[0])
    out = cases[0]    # int32 index, clamped as the interpreter does
    for i in range(1, len(cases)):
        out = em.b.select(em.b.icmp_signed(">=", which, em.const(_dt(eqn), i)), cases[i], out)
    return out


TABLE["select_n"] = Row(_select_n, "bi")


# --------------------------------------------------------------------------- conversions

def _float_to_int(em, x, dst):
    """JAX's (XLA's) float -> integer conversion: truncation toward zero, saturating at
    ``dst``'s range, NaN -> 0 (as ``functrans.array.float_to_int``). fptosi / fptoui only
    ever see in-range values, so no lane is poison. The bounds are powers of two, exact in
    every float format (half is widened first: 2**31 is beyond it)."""
    b = em.b
    if x.type == ir.HalfType():
        x = b.fpext(x, ir.FloatType())
    info = np.iinfo(dst)
    it = ir.IntType(8 * info.dtype.itemsize)
    signed = info.min < 0
    lo = -(2.0 ** (it.width - 1)) if signed else 0.0
    hi = 2.0 ** (it.width - 1) if signed else 2.0 ** it.width
    above = b.fcmp_ordered(">=", x, ir.Constant(x.type, hi))
    below = b.fcmp_ordered("<=" if signed else "<", x, ir.Constant(x.type, lo))
    nan = b.fcmp_unordered("uno", x, x)
    inside = b.not_(b.or_(b.or_(above, below), nan))
    safe = b.select(inside, x, ir.Constant(x.type, 0.0))
    v = b.fptosi(safe, it) if signed else b.fptoui(safe, it)
    top = info.max if info.max < 2 ** (it.width - 1) else info.max - 2 ** it.width
    v = b.select(above, ir.Constant(it, top), v)
    return b.select(below, ir.Constant(it, info.min), v) if signed else v


def _convert(em, eqn, x):
    b = em.b
    src, dst = _dt(eqn), eqn.outvars[0].aval.dtype
    st, dt = lltype(src), lltype(dst)
    if src == dst:
        return x
    if BF16 in (src, dst):     # bits <-> float32, the only native bfloat16 conversions
        return bf16_to_f32(b, x) if src == BF16 else f32_to_bf16(b, x)
    if dst.kind == "b":
        if src.kind == "f":
            return b.fcmp_unordered("!=", x, ir.Constant(st, 0.0))
        return b.icmp_unsigned("!=", x, ir.Constant(st, 0))
    if src.kind == "f":
        if dst.kind == "f":
            return b.fpext(x, dt) if dst.itemsize > src.itemsize else b.fptrunc(x, dt)
        return _float_to_int(em, x, dst)
    if dst.kind == "f":
        return b.uitofp(x, dt) if src.kind in "ub" else b.sitofp(x, dt)
    if st.width == dt.width:
        return x
    if st.width > dt.width:
        return b.trunc(x, dt)
    return b.zext(x, dt) if src.kind in "ub" else b.sext(x, dt)


TABLE["convert_element_type"] = Row(_convert)


def _bitcast(em, eqn, x):
    """The same bits as the output dtype (the shape rule allows equal widths only)."""
    t = lltype(eqn.outvars[0].aval.dtype)
    return x if x.type == t else em.b.bitcast(x, t)


TABLE["bitcast_convert_type"] = Row(_bitcast, "fiu")
# the identity at run time (it only matters to autodiff); native, so it fuses
TABLE["stop_gradient"] = Row(lambda em, eqn, x: x)


# --------------------------------------------------------------------------- bits

def _bits(op):
    return lambda em, eqn, x, y: getattr(em.b, op)(x, y)


TABLE["and"] = Row(_bits("and_"), "iub")
TABLE["or"] = Row(_bits("or_"), "iub")
TABLE["xor"] = Row(_bits("xor"), "iub")
TABLE["not"] = Row(lambda em, eqn, x: em.b.not_(x), "iub")


def _shift(kind):
    # amounts outside [0, bits) (as unsigned) give 0, or the sign fill for arithmetic
    def emit(em, eqn, x, y):
        b = em.b
        bits = x.type.width
        out_of_range = b.icmp_unsigned(">=", y, ir.Constant(x.type, bits))
        ys = b.select(out_of_range, ir.Constant(x.type, 0), y)
        if kind == "left":
            return b.select(out_of_range, ir.Constant(x.type, 0), b.shl(x, ys))
        if kind == "logical":
            return b.select(out_of_range, ir.Constant(x.type, 0), b.lshr(x, ys))
        ys = b.select(out_of_range, ir.Constant(x.type, bits - 1), y)
        return b.ashr(x, ys)
    return emit


TABLE["shift_left"] = Row(_shift("left"), "iu")
TABLE["shift_right_logical"] = Row(_shift("logical"), "iu")
TABLE["shift_right_arithmetic"] = Row(_shift("arith"), "iu")


# --------------------------------------------------------------------------- math

def _vec(name, heavy=True):
    """The row of a vectorisable vmath routine (float64 and native float32 code; no
    libm call); a kernel over few elements calls it from ``vmath``'s library."""
    def emit(em, eqn, *args):
        kernel = getattr(em, "kernel", None)
        small = kernel is not None and math.prod(kernel.shape) <= vmath.LIBRARY_MAX_ELEMENTS
        return vmath.call(em.module, em.b, name, *args, library=small)
    return Row(emit, "f", heavy, routine=name)


for _n in ("exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan",
           "atan", "asin", "acos", "tanh", "logistic", "sinh", "cosh", "asinh", "acosh",
           "atanh", "pow", "atan2", "erf", "erfc"):
    TABLE[_n] = _vec(_n)
# not marked heavy so far (their kernels are not split over threads): kept as they were
for _n in ("log2", "log10"):
    TABLE[_n] = _vec(_n, heavy=False)
TABLE["sqrt"] = Row(lambda em, eqn, x: _intrinsic1(em, "sqrt", x), "f")
TABLE["floor"] = Row(lambda em, eqn, x: _intrinsic1(em, "floor", x), "f")
TABLE["ceil"] = Row(lambda em, eqn, x: _intrinsic1(em, "ceil", x), "f")
TABLE["round"] = Row(lambda em, eqn, x: _intrinsic1(em, "rint", x), "f")
TABLE["cbrt"] = Row(_libm("cbrt"), "f", heavy=True)
TABLE["hypot"] = Row(_libm("hypot"), "f", heavy=True)
TABLE["copysign"] = Row(lambda em, eqn, x, y: _intrinsic(em, "copysign", x, y), "f")


def _abs(em, eqn, x):
    k = _dt(eqn).kind
    if k == "f":
        return _intrinsic1(em, "fabs", x)
    if k == "u":
        return x
    return em.b.select(em.b.icmp_signed("<", x, ir.Constant(x.type, 0)), em.b.neg(x), x)


TABLE["abs"] = Row(_abs, "fiu")


def _one(x):
    return ir.Constant(x.type, 1.0)


# reciprocal, rsqrt, square, is_finite and sign are composites: ``backends.decompose``
# writes them as the leaves above before planning (they fuse the same)


def _integer_pow(em, eqn, x):
    # square-and-multiply, unrolled at compile time
    n = eqn.params["y"]
    k = _dt(eqn).kind
    mul = em.b.fmul if k == "f" else em.b.mul
    acc, base, m = None, x, abs(n)
    while m:
        if m & 1:
            acc = base if acc is None else mul(acc, base)
        m >>= 1
        if m:
            base = mul(base, base)
    if acc is None:
        acc = ir.Constant(x.type, 1.0 if k == "f" else 1)
    if n < 0:
        acc = em.b.fdiv(_one(x), acc)
    return acc


class _IntPowRow(Row):
    def supports(self, eqn):
        # numpy's float power uses libm pow for exponents other than small ones; stay
        # within a few roundings of it
        return super().supports(eqn) and abs(eqn.params["y"]) <= 4


TABLE["integer_pow"] = _IntPowRow(_integer_pow, "fiu")


# --------------------------------------------------------------------------- reductions

def _sum_combine(em, dtype, acc, x):
    if dtype.kind == "f":
        return em.b.fadd(acc, x, flags=("reassoc",))   # reassoc on the reduction only
    return em.b.or_(acc, x) if dtype.kind == "b" else em.b.add(acc, x)


def _prod_combine(em, dtype, acc, x):
    if dtype.kind == "f":
        return em.b.fmul(acc, x, flags=("reassoc",))
    return em.b.and_(acc, x) if dtype.kind == "b" else em.b.mul(acc, x)


def _extreme(dtype, biggest):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return -math.inf if biggest else math.inf
    if dtype.kind == "b":
        return not biggest
    info = np.iinfo(dtype)
    return int(info.min if biggest else info.max)


REDUCTIONS["reduce_sum"] = Reduction(lambda d: 0, _sum_combine)
REDUCTIONS["reduce_prod"] = Reduction(lambda d: 1, _prod_combine)
def _extreme_combine(biggest):
    def combine(em, dtype, acc, x):
        if dtype.kind == "f":
            # llvm.maximum/minimum propagate nan like numpy and are exactly associative,
            # so the loop vectoriser turns the reduction into SIMD (a select chain is not)
            t = acc.type
            return _call(em, f"llvm.{'maximum' if biggest else 'minimum'}.{_fsuffix(t)}",
                         t, [t, t], [acc, x])
        return choose(em, dtype, acc, x, biggest)
    return combine


REDUCTIONS["reduce_max"] = Reduction(lambda d: _extreme(d, True), _extreme_combine(True))
REDUCTIONS["reduce_min"] = Reduction(lambda d: _extreme(d, False), _extreme_combine(False))
REDUCTIONS["reduce_and"] = Reduction(lambda d: True, lambda em, d, acc, x: em.b.and_(acc, x), "b")
REDUCTIONS["reduce_or"] = Reduction(lambda d: False, lambda em, d, acc, x: em.b.or_(acc, x), "b")
