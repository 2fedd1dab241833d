"""The CUDA lowering table: primitive name -> a Python *source expression* for Numba.

Kernels are generated as Python source and compiled by ``numba.cuda.jit``; each row
here turns an equation and its operands' source expressions into the expression of
its result (``kernels`` then casts it to the declared dtype, so Numba's own integer
promotion never leaks into the result). Float math goes through the name ``lm``: the
``numba.cuda.libdevice`` module on a GPU, a numpy shim on the simulator (``simmath``),
so ``log(-1)`` is nan in both instead of a Python ``ValueError``.

``TABLE`` and ``REDUCTIONS`` are the only places in this backend that know elementwise
primitive names; ``classify(eqn)`` tells the shared fusion planner what they cover.

>>> from jaxpr_ir import Eqn, Var, ShapedArray, primitives
>>> import functrans  # registers the primitives
>>> a = Var(ShapedArray((3,), "float32"))
>>> classify(Eqn(primitives["exp"], [a], [Var(a.aval)], {}))
'elementwise'
>>> TABLE["exp"](Eqn(primitives["exp"], [a], [Var(a.aval)], {}), "v0")
'lm.expf(v0)'
"""
from __future__ import annotations

import math

import numpy as np

from ..fusion import ELEMENTWISE, REDUCE

__all__ = ["classify", "TABLE", "REDUCTIONS", "tname", "const", "f2i", "NATIVE_DTYPES"]

# uint32 arithmetic is done in uint64 and masked back (Numba's integer promotion differs
# between the GPU and the simulator; masking makes both wrap like numpy). uint64 itself is
# not native: an equation touching it is a host step (numpy's exact wraparound, division
# and conversions), since Numba turns a uint64 mixed with any signed operand, its own
# index arithmetic included, into float64 (tests/test_cuda_backend.py checks it)
NATIVE_DTYPES = frozenset(np.dtype(d) for d in ("float64", "float32", "int64", "int32", "uint32",
                                                "bool"))
_MASK32 = "u64(4294967295)"
_TNAMES = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32", "uint32": "u32",
           "bool": "b1"}


def tname(dtype) -> str:
    """The kernel-namespace name of the Numba type for ``dtype`` (``f32``, ``i64``...)."""
    return _TNAMES[np.dtype(dtype).name]


def const(dtype, value) -> str:
    """A typed constant as source (nan/inf through the NAN/INF globals)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "True" if bool(value) else "False"
    if dtype.kind in "iu":
        return f"{tname(dtype)}({int(value)})"
    v = float(value)
    if math.isnan(v):
        s = "NAN"
    elif math.isinf(v):
        s = "INF" if v > 0 else "-INF"
    else:
        s = repr(v)
    return f"{tname(dtype)}({s})"


def _dt(eqn, i=0):
    return eqn.inputs[i].aval.dtype


def _f(name):
    """A libdevice function by dtype: ``exp`` for float64, ``expf`` for float32."""
    def row(eqn, *xs):
        suffix = "f" if _dt(eqn) == np.float32 else ""
        return f"lm.{name}{suffix}({', '.join(xs)})"
    row.kinds = "f"
    return row


def _row(fn, kinds="fib"):
    fn.kinds = kinds
    return fn


TABLE: dict = {}
for _n in ("exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin",
           "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt",
           "cbrt", "erf", "erfc", "floor", "ceil"):
    TABLE[_n] = _f(_n)
TABLE["round"] = _f("rint")              # half to even, as numpy.rint
TABLE["atan2"] = _f("atan2")
TABLE["pow"] = _f("pow")
TABLE["hypot"] = _f("hypot")
TABLE["copysign"] = _f("copysign")


def _bool_or(op_b, op):
    return lambda eqn, a, b: f"({a} {op_b if _dt(eqn) == np.bool_ else op} {b})"


def _wrap32(fn):
    """uint32 operands widened to uint64, the result masked to 32 bits (numpy's wrap)."""
    def row(eqn, *xs):
        if _dt(eqn) != np.uint32:
            return fn(eqn, *xs)
        return f"({fn(eqn, *[f'u64({x})' for x in xs])} & {_MASK32})"
    return row


TABLE["add"] = _row(_wrap32(_bool_or("|", "+")), "fiub")
TABLE["mul"] = _row(_wrap32(_bool_or("&", "*")), "fiub")
TABLE["sub"] = _row(_wrap32(lambda eqn, a, b: f"({a} - {b})"), "fiu")
TABLE["neg"] = _row(lambda eqn, a: (f"((u64(0) - u64({a})) & {_MASK32})" if _dt(eqn) == np.uint32
                                    else f"(-{a})"), "fiu")
# Operands are always names or constants, so repeating them in an expression is free.
# Integers: numpy's floor division/remainder with x // 0 == x % 0 == 0.
TABLE["div"] = _row(lambda eqn, a, b: f"({a} / {b})" if _dt(eqn).kind == "f"
                    else f"(({a} // {b}) if {b} != 0 else ({a} - {a}))", "fiu")


def _rem(eqn, a, b):
    if _dt(eqn).kind != "f":
        return f"(({a} % {b}) if {b} != 0 else ({a} - {a}))"
    f = "f" if _dt(eqn) == np.float32 else ""
    r = f"lm.fmod{f}({a}, {b})"   # the divisor's sign; a zero keeps fmod's, as JAX's
    return f"(({r} + {b}) if ({r} != 0 and (({r} < 0) != ({b} < 0))) else {r})"


TABLE["rem"] = _row(_rem, "fiu")

# JAX's max/min: nan wins, and -0.0 is below +0.0: a tie of zeros is their sum for max,
# minus the sum of their negations for min (0 for integers); other ties are one value
_PICK = "({a} if ({a} %s {b} or {a} != {a}) else {b})"
_MAX = "(({a} + {b}) if ({a} == 0 and {b} == 0) else %s)" % (_PICK % ">")
_MIN = "((-((-{a}) + (-{b}))) if ({a} == 0 and {b} == 0) else %s)" % (_PICK % "<")


def _choose(signed_zeros, pick):
    return lambda eqn, a, b: (signed_zeros if _dt(eqn).kind == "f" else pick).format(a=a, b=b)


TABLE["max"] = _row(_choose(_MAX, _PICK % ">"), "fiub")
TABLE["min"] = _row(_choose(_MIN, _PICK % "<"), "fiub")
for _n, _op in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
                ("ge", ">=")):
    TABLE[_n] = _row(lambda eqn, a, b, _op=_op: f"({a} {_op} {b})", "fiub")
TABLE["and"] = _row(lambda eqn, a, b: f"({a} & {b})", "iub")
TABLE["or"] = _row(lambda eqn, a, b: f"({a} | {b})", "iub")
TABLE["xor"] = _row(lambda eqn, a, b: f"({a} ^ {b})", "iub")
TABLE["not"] = _row(lambda eqn, a: (f"(not {a})" if _dt(eqn) == np.bool_ else
                                    f"(~u64({a}) & {_MASK32})" if _dt(eqn) == np.uint32 else
                                    f"(~{a})"), "iub")
TABLE["stop_gradient"] = _row(lambda eqn, a: a, "fiub")


def _bits(eqn):
    return 8 * _dt(eqn).itemsize


def _out_of_range(eqn, y):
    """The shift amount, read as unsigned, is at least the bit width (a negative amount too)."""
    cond = f"{y} >= {const(_dt(eqn), _bits(eqn))}"
    return cond if _dt(eqn).kind == "u" else f"({y} < {const(_dt(eqn), 0)} or {cond})"


def _unsigned(eqn, x):
    """``x``'s bits as a uint64 holding an unsigned value of the operand's width."""
    return f"u64({x})" if _bits(eqn) == 64 else f"(u64({x}) & {_MASK32})"


# shifts as numpy on the unsigned (logical) or signed (arithmetic) view of the bits; an
# amount out of range shifts everything out (0, or the sign for arithmetic shifts)
TABLE["shift_left"] = _row(lambda eqn, x, y: (
    f"({const(_dt(eqn), 0)} if {_out_of_range(eqn, y)} else "
    f"{tname(_dt(eqn))}(u64({x}) << u64({y})))"), "iu")
TABLE["shift_right_logical"] = _row(lambda eqn, x, y: (
    f"({const(_dt(eqn), 0)} if {_out_of_range(eqn, y)} else "
    f"{tname(_dt(eqn))}({_unsigned(eqn, x)} >> u64({y})))"), "iu")


def _sra(eqn, x, y):
    signed = f"i64(i32({x}))" if _dt(eqn) == np.uint32 else f"i64({x})"
    amount = f"(i64({_bits(eqn) - 1}) if {_out_of_range(eqn, y)} else i64({y}))"
    return f"{tname(_dt(eqn))}({signed} >> {amount})"


TABLE["shift_right_arithmetic"] = _row(_sra, "iu")
TABLE["abs"] = _row(lambda eqn, a: (f"lm.fabs{'f' if _dt(eqn) == np.float32 else ''}({a})"
                                    if _dt(eqn).kind == "f" else f"abs({a})"), "fi")
# reciprocal, rsqrt, square, is_finite, sign and logistic are composites:
# ``backends.decompose`` writes them as the leaves above before planning


def _integer_pow(eqn, a):
    y = eqn.params["y"]
    if y == 0:
        return const(_dt(eqn), 1)
    if abs(y) > 8:
        if _dt(eqn).kind != "f":
            return None
        return TABLE["pow"](eqn, a, const(_dt(eqn), y))
    if y < 0 and _dt(eqn).kind != "f":
        return None
    if _dt(eqn) == np.uint32:
        return f"({' * '.join([f'u64({a})'] * y)} & {_MASK32})"
    prod = " * ".join([a] * abs(y))
    return f"({prod})" if y > 0 else f"({const(_dt(eqn), 1)} / ({prod}))"


TABLE["integer_pow"] = _row(_integer_pow, "fiu")


def _convert(eqn, a):
    src, dst = _dt(eqn), np.dtype(eqn.params["new_dtype"])
    if dst == np.bool_:
        return f"({a} != {const(src, 0)})"
    if src.kind == "f" and dst.kind in "iu":
        return f2i(dst, a)
    return f"{tname(dst)}({a})"


TABLE["convert_element_type"] = _row(_convert, "fiub")


def f2i(dst, a):
    """JAX's (XLA's) float -> int: truncation toward zero, saturating at ``dst``'s range,
    NaN -> 0 (guarded, so the conversion itself only sees in-range values)."""
    info = np.iinfo(dst)
    bits = 8 * info.dtype.itemsize
    signed = info.min < 0
    lo = -(2.0 ** (bits - 1)) if signed else 0.0
    hi = 2.0 ** (bits - 1) if signed else 2.0 ** bits
    low = f"{a} <= {lo!r}" if signed else f"{a} < {lo!r}"
    return (f"({const(dst, info.max)} if {a} >= {hi!r} else ({const(dst, info.min)} "
            f"if {low} else ({tname(dst)}({a}) if {a} == {a} else {const(dst, 0)})))")


def _select_n(eqn, which, *cases):
    if len(cases) == 1:
        return cases[0]
    if _dt(eqn) == np.bool_:
        return f"({cases[1]} if {which} else {cases[0]})"
    out = cases[-1]
    for j in range(len(cases) - 2, -1, -1):     # clip(which, 0, n-1), as np.choose after clip
        out = f"({cases[j]} if {which} <= {j} else {out})"
    return out


TABLE["select_n"] = _row(_select_n, "bi")
TABLE["iota"] = _row(lambda eqn: None, "fiu")    # handled by kernels (needs the loop index)

# reductions: (identity(dtype) -> source, combine(a, b) -> source, dtype kinds)


def _extreme(dtype, largest):
    if dtype.kind == "f":
        return const(dtype, -math.inf if largest else math.inf)
    info = np.iinfo(dtype)
    return const(dtype, info.min if largest else info.max)


REDUCTIONS = {
    "reduce_sum": (lambda d: const(d, 0), "({a} + {b})", "fiu"),
    "reduce_prod": (lambda d: const(d, 1), "({a} * {b})", "fiu"),
    "reduce_max": (lambda d: _extreme(d, True), _MAX, "fiu"),
    "reduce_min": (lambda d: _extreme(d, False), _MIN, "fiu"),
    "reduce_and": (lambda d: "True", "({a} & {b})", "b"),
    "reduce_or": (lambda d: "False", "({a} | {b})", "b"),
}


def classify(eqn):
    """ELEMENTWISE / REDUCE when kernels are generated for ``eqn``, else None (the planner
    then makes it a host step, which the runtime may still run as a special device
    kernel: dot_general, gather, scatter)."""
    name = eqn.primitive.name
    if eqn.primitive.multiple_results or not eqn.outvars:
        return None
    avals = [x.aval for x in eqn.inputs] + [v.aval for v in eqn.outvars]
    if any(a.dtype not in NATIVE_DTYPES for a in avals):
        return None
    if name in REDUCTIONS:
        return REDUCE if eqn.inputs[0].aval.dtype.kind in REDUCTIONS[name][2] else None
    row = TABLE.get(name)
    if row is None:
        return None
    first = eqn.inputs[0] if eqn.inputs else eqn.outvars[0]
    if first.aval.dtype.kind not in row.kinds:
        return None
    if name != "iota" and row(eqn, *["x"] * len(eqn.inputs)) is None:
        return None     # a case this row does not cover
    return ELEMENTWISE
