"""Elementwise arithmetic primitives. Operands of one equation share one shape and
dtype (``functrans.numpy`` inserts broadcasts and conversions first), which keeps every
rule here free of broadcasting logic.

This module holds the linear arithmetic (add, sub, mul, div, neg), conversions,
select, and the integer/bool ops (bitwise, shifts, comparisons, bitcast); ``add`` and
``convert_element_type`` are defined in ``basic`` and get their rules here. The unary
math table and the nonlinear binary ops are in ``elementwise_math``, which is written
with this module; ``elementwise`` gathers both.

>>> import numpy as np
>>> float(add(np.float64(1.0), 2.0))
3.0
>>> bitwise_xor(np.uint32(6), np.uint32(3)).item()
5
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from jaxpr_ir import ShapedArray, bfloat16, dtype_kind
from ..tracing import (ARRAY_CLASS, EAGER_TYPES as _EAGER_TYPES, INTERNAL as _INTERNAL, Tracer,
                       unchanged, wrap)
from .base import (Primitive, UndefinedPrimal, Zero, aval, batch_elementwise, defjvp,
                   deflinear, instantiate, is_undefined)
from .basic import (add_p, broadcast_in_dim, convert_element_type_p,  # noqa: F401
                    elementwise_aval, full, np_impl)
from ..key_array import KEY_DTYPE, KeyArray, KeyDtype
from ..weak_values import WeakArray
from ..trace_events import ACTIVE as _TRACE_ON
from ..typing import Array, ArrayLike, DTypeLike

__all__ = ["add", "sub", "mul", "div", "neg", "convert_element_type", "select_n",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
           "shift_left", "shift_right_logical", "shift_right_arithmetic",
           "bitcast_convert_type", "eq", "ne", "lt", "le", "gt", "ge"]

_PY_SCALARS = (bool, int, float, complex)
_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1
_WEAK_NUMBER = {"i": int, "f": float, "c": complex}
_ND = np.ndarray
# --------------------------------------------------------------------------- table rows

class OpRow(NamedTuple):
    """One elementwise op: everything the primitive, ``functrans.numpy`` and the tests
    need. ``deriv``: unary, d(out)/dx as a function of ``(x, out)``; binary, a pair of
    tangent maps ``(t, x, y, out) -> tangent`` (one per argument); None: piecewise
    constant. ``ulp``: how far a native backend may be from ``numpy`` on floats.
    ``impl`` replaces ``numpy`` as the primitive's impl where their semantics differ
    (integer ``pow``); ``fnp``: the name of its ``functrans.numpy``/numpy twin, None when
    it has none; ``out_dtype`` fixes the result dtype (``is_finite``); ``domain``: an
    interval where the op is smooth (the generated tests draw arguments there);
    ``transpose``: for an op linear in (some of) its arguments, its transpose rule (with
    no ``deriv``, the op is linear in all of them: ``deflinear``); ``transcendental``: the
    cost model counts it apart from flops (None: when ``ulp > 0``, i.e. a function the
    backends approximate rather than round correctly)."""
    name: str
    numpy: Callable
    kinds: str
    deriv: object
    ulp: int = 0
    fnp: str | None = None
    impl: Callable | None = None
    out_dtype: object = None
    domain: tuple = (-2.0, 2.0)
    transpose: Callable | None = None
    transcendental: bool | None = None


ARITY: dict = {}      # table row name -> number of operands


def define_row(row: OpRow, arity: int) -> Primitive:
    """The primitive of one table row: shape rule, impl, JVP (or linear rules), batch
    rule."""
    ARITY[row.name] = arity
    p = Primitive(row.name)
    out_dtype = None if row.out_dtype is None else np.dtype(row.out_dtype)
    impl = row.impl or np_impl(row.numpy, out_dtype, arity=arity)
    p.def_rules(abstract_eval=elementwise_aval(row.name, row.kinds, out_dtype), impl=impl)
    p.transcendental = row.ulp > 0 if row.transcendental is None else row.transcendental
    batch_elementwise(p)
    if row.deriv is None and row.transpose is not None:
        deflinear(p, row.transpose)
    elif row.deriv is None:
        # piecewise constant (or integer/bool valued): the tangent is zero
        p.not_differentiable = True
    elif arity == 1:
        deriv = row.deriv
        defjvp(p, lambda t, x, out: mul(t, deriv(x, out)))    # table rows take no params
    else:
        defjvp(p, *row.deriv)
    if row.deriv is not None and row.transpose is not None:
        p.transpose = row.transpose
    return p


# --------------------------------------------------------------------------- linear ops
# add is defined in ``basic`` (the tracing machinery adds tangents with it) and gets its
# rules here; sub, mul, div and neg are rows of the op table

def _div_impl(x, y):
    # floats: true division; integers: floor division with x // 0 == 0 (defined, as numpy)
    with np.errstate(all="ignore"):
        if np.result_type(x, y).kind in "iu":
            return np.asarray(np.floor_divide(x, y), dtype=np.result_type(x, y))
        return np.asarray(np.true_divide(x, y), dtype=np.result_type(x, y))


def _transpose_add(ct, x, y):
    return [ct if type(x) is UndefinedPrimal else None, ct if type(y) is UndefinedPrimal else None]


def _transpose_sub(ct, x, y):
    nct = Zero(ct.aval) if type(ct) is Zero else neg(ct)
    return [ct if is_undefined(x) else None, nct if is_undefined(y) else None]


def _transpose_mul(ct, x, y):
    # mul is linear in whichever operand is the tangent; the other is a residual
    ux, uy = type(x) is UndefinedPrimal, type(y) is UndefinedPrimal
    if type(ct) is Zero:
        return [Zero(x.aval) if ux else None, Zero(y.aval) if uy else None]
    if ux and uy:
        raise TypeError("mul: cannot transpose a product of two linear values")
    if ux:
        return [mul(ct, y), None]
    return [None, mul(x, ct)]


def _transpose_div(ct, x, y):
    if is_undefined(y):
        raise TypeError("div: cannot transpose with respect to the denominator")
    return [Zero(x.aval) if type(ct) is Zero else div(ct, y), None]


# name, numpy function, kinds, tangent maps (None: linear in every argument), ulp, fnp name
LINEAR_TABLE = [
    OpRow("sub", np.subtract, "fciu", None, 0, "subtract", transpose=_transpose_sub),
    OpRow("mul", np.multiply, "fciub", (lambda t, x, y, out: mul(t, y),
                                        lambda t, x, y, out: mul(x, t)),
          0, "multiply", transpose=_transpose_mul),
    OpRow("div", np.true_divide, "fciu", (lambda t, x, y, out: div(t, y),
                                          lambda t, x, y, out: neg(mul(t, div(out, y)))),
          0, "true_divide", impl=_div_impl, transpose=_transpose_div),
    OpRow("neg", np.negative, "fciu", None, 0, "negative", impl=np_impl(np.negative),
          transpose=lambda ct, x: [Zero(x.aval) if type(ct) is Zero else neg(ct)]),
]
deflinear(add_p, _transpose_add)
batch_elementwise(add_p)
LINEAR = {row.name: define_row(row, 2 if row.name != "neg" else 1) for row in LINEAR_TABLE}
sub_p, mul_p, div_p, neg_p = (LINEAR[n] for n in ("sub", "mul", "div", "neg"))


# --------------------------------------------------------------------------- conversion

def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type(x, new_dtype, weak_type)
    src = aval(x).dtype
    if type(t) is Zero or dtype_kind(new_dtype) not in "fc" or dtype_kind(src) not in "fc":
        return out, Zero(ShapedArray(aval(out).shape, new_dtype, weak_type))
    return out, convert_element_type(t, new_dtype, weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type=False):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [convert_element_type(ct, x.aval.dtype, x.aval.weak_type)]


def _convert_batch(args, dims, **params):
    return convert_element_type_p.bind(args[0], **params), dims[0]


convert_element_type_p.def_rules(jvp=_convert_jvp, transpose=_convert_transpose,
                                 batch=_convert_batch)


# --------------------------------------------------------------------------- select

select_n_p = Primitive("select_n")


def _select_n_aval(which, *cases):
    if not cases:
        raise TypeError("select_n: needs at least one case")
    c0 = cases[0]
    for i, c in enumerate(cases[1:], 1):
        if c.shape != c0.shape or c.dtype != c0.dtype:
            raise TypeError(f"select_n: cases must have the same shape and dtype, got "
                            f"{c0.str_short()} (case 0) and {c.str_short()} (case {i})")
    if which.shape != c0.shape:
        raise TypeError(f"select_n: predicate shape {which.shape} must equal case shape {c0.shape}")
    if dtype_kind(which.dtype) not in "bi" or (dtype_kind(which.dtype) == "b" and len(cases) > 2):
        raise TypeError(f"select_n: predicate must be bool (2 cases) or int32, got {which.dtype}")
    return ShapedArray(c0.shape, c0.dtype, all(c.weak_type for c in cases))


def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return np.asarray(cases[0])
    if np.asarray(which).dtype == np.bool_:
        return np.asarray(np.where(which, cases[1], cases[0]))
    return np.asarray(np.choose(np.clip(which, 0, len(cases) - 1), cases))


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    ts = tangents[1:]
    if all(type(t) is Zero for t in ts):
        return out, Zero(aval(out))
    ts = [instantiate(t) for t in ts]
    return out, select_n_p.bind(which, *ts)


def _select_n_transpose(ct, which, *cases):
    if is_undefined(which):
        raise TypeError("select_n: the predicate cannot be linear")
    res = [None]
    for i, c in enumerate(cases):
        if not is_undefined(c):
            res.append(None)
        elif type(ct) is Zero:
            res.append(Zero(c.aval))
        else:
            zeros = np.zeros(c.aval.shape, c.aval.dtype)
            branches = [zeros] * len(cases)
            branches[i] = ct
            res.append(select_n_p.bind(which, *branches))
    return res


select_n_p.def_rules(abstract_eval=_select_n_aval, impl=_select_n_impl, jvp=_select_n_jvp,
                     transpose=_select_n_transpose)
batch_elementwise(select_n_p)


# --------------------------------------------------------------------------- lax wrappers

def _as_operand(x, like):
    """Python scalars take the dtype and shape of the other operand (weak typing); a
    concrete numpy scalar of the other operand's dtype is broadcast to its shape."""
    if isinstance(x, _PY_SCALARS):
        a = aval(like)
        py = _WEAK_NUMBER.get(dtype_kind(a.dtype))
        if a.weak_type and not a.shape and py is not None and not isinstance(x, bool) \
                and (py is not int or (isinstance(x, int) and -2 ** 63 <= x < 2 ** 63)):
            v = py(x)
            if aval(v).dtype == a.dtype:
                return v            # a weak literal: a weak operand stays weak (JAX's rule)
        return full_like(like, x)
    if isinstance(x, (np.generic, np.ndarray)) and x.ndim == 0:
        a = aval(like)
        if a.shape and x.dtype == a.dtype:
            return full_like(like, x)
    return x


def full_like(like, value):
    """``value`` in the shape and dtype of ``like``, as a broadcast scalar (a stride-0
    view eagerly, one broadcast equation under a trace: never a large constant)."""
    a = aval(like)
    return full(a.shape, value, a.dtype)


_BITWISE_NAMES = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}


def broadcast_operands(x, y):
    """JAX's lax binary ops also take a 0-d operand with any other, and operands of one
    rank whose shapes differ only where one has size 1: both broadcast to the common
    shape (the primitives want equal shapes). Anything else is returned as it is (the
    bind then raises its own error)."""
    xs, ys = aval(x).shape, aval(y).shape
    if xs == ys or (len(xs) != len(ys) and xs and ys):
        return x, y
    if len(xs) == len(ys) and any(a != b and 1 not in (a, b) for a, b in zip(xs, ys)):
        return x, y
    out = ys if not xs else xs if not ys else tuple(max(a, b) for a, b in zip(xs, ys))
    return tuple(broadcast_in_dim(v, out, tuple(range(len(s)))) if s != out else v
                 for v, s in ((x, xs), (y, ys)))


def eager_checked(p, *args):
    """``p.bind(*args)``, running ``p``'s shape and dtype rule first when no argument is
    traced: eager binds go straight to the numpy impl, which would promote or broadcast
    (lax.add of f32 and i32 gave f64, lax.sin of int truncated its result to int), where
    the traced op raises naming the operands."""
    for a in args:            # (a loop, not any(): this sits on every traced lax op)
        if isinstance(a, Tracer):
            return p.bind(*args)
    p.abstract_eval(*(aval(a) for a in args))
    return p.bind(*args)


class DtypeAccepts(dict):
    """dtype -> whether the elementwise primitive's rule takes ``arity`` operands of that
    dtype, asked of the rule once per dtype (eager fast paths must not bypass the check)."""

    def __init__(self, p, arity):
        super().__init__()
        self.p, self.arity = p, arity

    def __missing__(self, dt):
        a = ShapedArray((), dt, False)
        try:
            self.p.abstract_eval(*[a] * self.arity)
            ok = True
        except (TypeError, ValueError):
            ok = False
        self[dt] = ok
        return ok


def lax_binary(p, float_only=False):
    """The lax function binding the binary primitive ``p`` (its doctest example uses
    floats when ``float_only``)."""
    impl = p.impl

    def f(x, y):
        # two arrays of rank >= 1 and no trace involved: bind's eager path, inlined (the
        # transpose rules of reverse mode call these on arrays, one per tangent operation)
        # (a profiler trace on: through bind, which records the call)
        if type(x) in _EAGER_TYPES and type(y) in _EAGER_TYPES and x.ndim and y.ndim \
                and not _TRACE_ON and x.shape == y.shape and x.dtype == y.dtype \
                and accepts[x.dtype]:
            out = impl(x, y)
            if type(out) is _ND:
                return out if _INTERNAL.on else out.view(ARRAY_CLASS[0])
            return wrap(out)
        # two Python numbers of one type (in int64 for ints): already operands of one
        # weak type, so bind's eager path takes them as they are (its abstract
        # evaluation checks the dtype), without adapting one to the other
        tx = type(x)
        if tx is type(y) and (tx is float or tx is complex or tx is int and
                              _INT64_MIN <= x <= _INT64_MAX and _INT64_MIN <= y <= _INT64_MAX):
            return p.bind(x, y)
        # tracers and arrays of rank >= 1 are operands as they are (the common case)
        if not ((isinstance(x, Tracer) or isinstance(x, np.ndarray) and x.ndim) and
                (isinstance(y, Tracer) or isinstance(y, np.ndarray) and y.ndim)):
            x, y = _as_operand(x, y), _as_operand(y, x)
            if isinstance(x, _ND) and isinstance(y, _ND) and x.shape == y.shape and \
                    x.dtype == y.dtype and accepts[x.dtype]:    # a scalar that adapted
                return p.bind(x, y)
        try:
            return eager_checked(p, x, y)
        except TypeError:
            x, y = broadcast_operands(x, y)
            return eager_checked(p, x, y)
    accepts = DtypeAccepts(p, 2)   # dtype -> whether p takes it (its rule, run once per dtype)
    # the lax name: the bitwise primitives are called and/or/xor, as in JAX
    f.__name__ = f.__qualname__ = name = _BITWISE_NAMES.get(p.name, p.name)
    f.__annotations__ = {"x": "ArrayLike", "y": "ArrayLike", "return": "Array"}
    x = "np.array([0.5, 2.0])" if float_only else "np.array([3, 5], np.int32)"
    f.__doc__ = (f"Elementwise ``{name}`` of two operands of one shape and dtype (a Python "
                 "scalar takes the other operand's).\n\n>>> import numpy as np\n"
                 f">>> from functrans import lax\n>>> lax.{name}({x}, {x}).shape\n(2,)\n")
    return f


add, sub, mul, div = (lax_binary(p) for p in (add_p, sub_p, mul_p, div_p))


def neg(x: ArrayLike) -> Array:
    """Elementwise ``-x``.

    >>> import numpy as np
    >>> neg(np.array([1.0, -2.0])).tolist()
    [-1.0, 2.0]
    """
    return neg_p.bind(x)


def convert_element_type(operand: ArrayLike, new_dtype: DTypeLike,
                         weak_type: bool = False) -> Array:
    """Cast to ``new_dtype``; a no-op (no equation) when the type already matches.

    >>> import numpy as np
    >>> convert_element_type(np.array([1.7, -1.7]), np.int32).tolist()
    [1, -1]
    """
    if isinstance(operand, KeyArray) or isinstance(new_dtype, KeyDtype):   # as JAX's
        src = KEY_DTYPE if isinstance(operand, KeyArray) else aval(operand).dtype
        dst = new_dtype if isinstance(new_dtype, KeyDtype) else np.dtype(new_dtype)
        raise ValueError(f"Cannot convert_element_type from {src} to {dst}: keys are not "
                         "numbers (random.key_data and random.wrap_key_data convert)")
    new_dtype = np.dtype(new_dtype)
    a = aval(operand)
    if a.dtype == new_dtype and a.weak_type == weak_type:
        return unchanged(operand)
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)


def weakly(out: ArrayLike, weak: bool) -> Array:
    """``out``, an array or tracer built from weakly typed values, weakly typed when
    ``weak`` (JAX's rule for results that keep a weak input's type: ``full((2,), 1.0)``,
    ``zeros_like(weak)``, a gradient of a Python float): ``convert_element_type`` to its
    own dtype, weak, where it is traced; an eager array becomes a ``WeakArray`` view.

    >>> weakly(np.ones(2), True).weak_type
    True
    """
    if not weak:
        return out
    if isinstance(out, Tracer):
        return out if out.aval.weak_type else convert_element_type(out, out.dtype, True)
    return out if type(out) is WeakArray else np.asarray(out).view(WeakArray)


def select_n(which: ArrayLike, *cases: ArrayLike) -> Array:
    """``cases[which]`` elementwise; with a bool predicate, ``(false_case, true_case)``.

    >>> import numpy as np
    >>> select_n(np.array([True, False]), np.zeros(2), np.ones(2)).tolist()
    [1.0, 0.0]
    """
    try:    # eagerly too the rule runs: cases of two dtypes were promoted by numpy
        return eager_checked(select_n_p, which, *cases)
    except TypeError:
        if not cases or aval(which).ndim or not aval(cases[0]).ndim:
            raise
        # a scalar predicate picks whole cases, as JAX's: broadcast it
        return eager_checked(select_n_p, broadcast_in_dim(which, aval(cases[0]).shape, ()),
                             *cases)


# --------------------------------------------------------------------------- bitwise / logical
# On bool these are the logical operations. Integer- or bool-valued: no derivative.

def _bits_rule(name, kinds, np_fn):
    p = Primitive(name)
    p.def_rules(abstract_eval=elementwise_aval(name, kinds), impl=np_impl(np_fn),
                not_differentiable=True)
    batch_elementwise(p)
    return p


and_p = _bits_rule("and", "iub", np.bitwise_and)
or_p = _bits_rule("or", "iub", np.bitwise_or)
xor_p = _bits_rule("xor", "iub", np.bitwise_xor)
not_p = _bits_rule("not", "iub", np.invert)


# --------------------------------------------------------------------------- shifts
# Shift amounts outside [0, bits) are defined: logical shifts give 0, the arithmetic
# right shift fills with the sign bit (numpy's ufuncs already do this for the
# signed/unsigned flavour matching the dtype; the other flavour goes through a view).

_UNSIGNED = {np.dtype(f"{k}int{b}"): np.dtype(f"uint{b}") for k in ("", "u") for b in (8, 16, 32, 64)}
_SIGNED = {np.dtype(f"{k}int{b}"): np.dtype(f"int{b}") for k in ("", "u") for b in (8, 16, 32, 64)}


def _shift_operands(x, y):
    x = np.asarray(x)
    if x.dtype not in _SIGNED:
        raise TypeError(f"shift: dtype {x.dtype} is not supported (needs an integer dtype)")
    return x, np.asarray(y, dtype=x.dtype)


def _shift_left_impl(x, y):
    x, y = _shift_operands(x, y)
    # as unsigned: a negative amount becomes huge, hence out of range, hence 0
    u = _UNSIGNED[x.dtype]
    return np.asarray(np.left_shift(x.view(u), y.view(u))).view(x.dtype)


def _shift_right_logical_impl(x, y):
    x, y = _shift_operands(x, y)
    u = _UNSIGNED[x.dtype]
    return np.asarray(np.right_shift(x.view(u), y.view(u))).view(x.dtype)


def _shift_right_arithmetic_impl(x, y):
    x, y = _shift_operands(x, y)
    s = _SIGNED[x.dtype]
    bits = x.dtype.itemsize * 8
    # out-of-range amounts (negative ones too) shift everything out: sign fill
    amount = np.where((y.view(_UNSIGNED[x.dtype]) >= bits), bits - 1, y).astype(s)
    return np.asarray(np.right_shift(x.view(s), amount)).view(x.dtype)


def _shift_rule(name, impl):
    p = Primitive(name)
    p.def_rules(abstract_eval=elementwise_aval(name, "iu"), impl=impl, not_differentiable=True)
    batch_elementwise(p)
    return p


shift_left_p = _shift_rule("shift_left", _shift_left_impl)
shift_right_logical_p = _shift_rule("shift_right_logical", _shift_right_logical_impl)
shift_right_arithmetic_p = _shift_rule("shift_right_arithmetic", _shift_right_arithmetic_impl)


# --------------------------------------------------------------------------- comparisons

def _compare_rule(name, np_fn, kinds="fiub"):
    p = Primitive(name)
    p.def_rules(abstract_eval=elementwise_aval(name, kinds, out_dtype=np.dtype(bool)),
                impl=lambda x, y: np.asarray(np_fn(x, y), dtype=bool), not_differentiable=True)
    batch_elementwise(p)
    return p


eq_p = _compare_rule("eq", np.equal, "fciub")
ne_p = _compare_rule("ne", np.not_equal, "fciub")
lt_p = _compare_rule("lt", np.less)
le_p = _compare_rule("le", np.less_equal)
gt_p = _compare_rule("gt", np.greater)
ge_p = _compare_rule("ge", np.greater_equal)


# --------------------------------------------------------------------------- bitcast

bitcast_convert_type_p = Primitive("bitcast_convert_type")
_BITCASTABLE = frozenset(np.dtype(d) for d in ("float64", "float32", "float16", bfloat16,
                                                "int64", "int32", "int16", "uint64", "uint32",
                                                "uint16"))


def _bitcast_aval(x, *, new_dtype):
    for d in (x.dtype, new_dtype):
        if d not in _BITCASTABLE:
            raise TypeError(f"bitcast_convert_type: dtype {d} is not supported (needs one of "
                            "float64, float32, float16, bfloat16, int64, int32, int16, uint64, "
                            "uint32, uint16)")
    if x.dtype.itemsize != new_dtype.itemsize:
        raise TypeError(f"bitcast_convert_type: {x.str_short()} to {new_dtype}: the item sizes "
                        f"differ ({x.dtype.itemsize} vs {new_dtype.itemsize} bytes)")
    return ShapedArray(x.shape, new_dtype)


def _bitcast_impl(x, *, new_dtype):
    x = np.asarray(x)
    _bitcast_aval(ShapedArray(x.shape, x.dtype) if x.dtype in _BITCASTABLE else x,
                  new_dtype=np.dtype(new_dtype))
    return x.view(new_dtype)


def _bitcast_batch(args, dims, *, new_dtype):
    return bitcast_convert_type_p.bind(args[0], new_dtype=new_dtype), dims[0]


bitcast_convert_type_p.def_rules(abstract_eval=_bitcast_aval, impl=_bitcast_impl,
                                 batch=_bitcast_batch, not_differentiable=True)


# --------------------------------------------------------------------------- lax wrappers (bits)

bitwise_and, bitwise_or, bitwise_xor = (lax_binary(p) for p in (and_p, or_p, xor_p))
shift_left, shift_right_logical, shift_right_arithmetic = (
    lax_binary(p) for p in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p))
eq, ne, lt, le, gt, ge = (lax_binary(p) for p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))
bitwise_and.__doc__ = """Elementwise ``x & y`` (logical and on bool).

>>> import numpy as np
>>> bitwise_and(np.uint32(12), np.uint32(10)).item()
8
"""
shift_right_logical.__doc__ = """Shift right filling with zeros; amounts >= the bit width give 0.

>>> import numpy as np
>>> shift_right_logical(np.int32(-1), np.int32(28)).item()
15
"""


def bitwise_not(x: ArrayLike) -> Array:
    """Elementwise ``~x`` (logical not on bool).

    >>> import numpy as np
    >>> bitwise_not(np.uint32(0)).item()
    4294967295
    """
    return not_p.bind(x)


def bitcast_convert_type(operand: ArrayLike, new_dtype: DTypeLike) -> Array:
    """Reinterpret the bits of ``operand`` as ``new_dtype`` (same item size).

    >>> import numpy as np
    >>> hex(bitcast_convert_type(np.float32(1.0), np.uint32).item())
    '0x3f800000'
    """
    return bitcast_convert_type_p.bind(operand, new_dtype=np.dtype(new_dtype))
