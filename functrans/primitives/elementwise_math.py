"""Elementwise math: the unary and the nonlinear binary ops, one table row each.

Each op is one ``OpRow`` of ``UNARY_TABLE`` or ``BINARY_TABLE``: name, numpy
function, accepted dtype kinds, its derivative written with lax functions (unary:
d(out)/dx as a function of ``(x, out)``; binary: one tangent map per argument;
``None``: piecewise constant), the ulp tolerance of native backends against numpy,
and the name of its ``functrans.numpy`` twin. The rows share one shape rule, one
impl wrapper, one JVP and one batch rule; ``tests/test_op_table.py`` sweeps every
float row through special values on every backend.

The binary ops follow numpy: ``rem`` takes the sign of the divisor and ``x rem 0``
is 0 for integers; ``pow`` on integers raises nothing (a negative exponent gives
``1 / x**-y`` truncated toward zero: 1, +-1 for x = -1, else 0, ``0**-n`` too);
``logaddexp(-inf, -inf)`` is -inf.

Adding an op: one ``OpRow`` here (the primitive ``<name>_p`` and the lax function
``<name>`` are made from it); then one row in ``backends/llvm/ops.py`` and one in
``backends/cuda/ops.py`` (the CUDA simulator computes a libdevice name that is also a
primitive's with that primitive's numpy impl), or one decomposition into leaves in
``backends/decompose.py`` shared by both. Its ``functrans.numpy`` twin, its test rows (tests/cases/elementwise.py)
and its special-value sweep (tests/test_elementwise_specials.py) follow from the row.

>>> import numpy as np
>>> float(sqrt(np.float64(4.0)))
2.0
>>> rem(np.int32(-7), np.int32(3)).item()
2
"""
from __future__ import annotations

import math

import numpy as np

from jaxpr_ir import ShapedArray, bfloat16, dtype_kind
from .base import Primitive, batch_elementwise, defjvp
from .arithmetic import (DtypeAccepts, OpRow, add, broadcast_operands, define_row, div,
                         eager_checked, eq, full_like, ge, lax_binary, mul, neg, select_n,
                         sub, Zero, aval, deflinear, is_undefined)
from .basic import elementwise_aval, np_impl
from .complex_edges import expm1_impl, minmax_impl, tanh_impl
from ..array import numpy_maximum, numpy_minimum, numpy_remainder, numpy_sign
from ..tracing import Tracer, get_aval
from ..typing import Array, ArrayLike


# --------------------------------------------------------------------------- impl helpers

def _logistic_impl(x):
    x = np.asarray(x)
    if x.dtype in (np.float16, bfloat16):   # in float32, rounded once (XLA; three roundings here)
        return _logistic_impl(x.astype(np.float32)).astype(x.dtype)
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


def _two_prod(a, b):
    """a * b = p + e exactly (Veltkamp/Dekker splitting, float64)."""
    p = a * b
    f = 134217729.0                                  # 2**27 + 1
    ah = a * f - (a * f - a)
    bh = b * f - (b * f - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _log1p_impl(x):
    """numpy's log1p, but accurate for complex: numpy computes log(1 + z), which loses
    every digit of a small z (log1p(1e-10 + 0j) is off by 8e-8, complex64's by 100%).
    The real part is log|1 + z| = log1p(2x + x^2 + y^2) / 2 with the squares summed
    exactly (|z| < 2; beyond, log|1 + z| directly), the imaginary part atan2(y, 1 + x)."""
    x = np.asarray(x)
    if dtype_kind(x.dtype) != "c":
        return np.log1p(x)
    z = x.astype(np.complex128)
    re, im = z.real, z.imag
    with np.errstate(all="ignore"):
        small = np.maximum(np.abs(re), np.abs(im)) < 2.0
        xx, xe = _two_prod(re, re)
        yy, ye = _two_prod(im, im)
        s = 2.0 * re
        t = s + xx
        c = (s - (t - (t - s))) + (xx - (t - s))     # TwoSum error of s + xx
        u = t + yy
        c += (t - (u - (u - t))) + (yy - (u - t))
        near = 0.5 * np.log1p(u + (c + xe + ye))
        far = np.log(np.abs(1.0 + z))
        out = np.where(small, near, far) + 1j * np.arctan2(im, 1.0 + re)
        out = np.where(np.isfinite(z), out, np.log1p(z))   # inf/nan: numpy's rules
    return out.astype(x.dtype)


def _rsqrt_impl(x):
    x = np.asarray(x)
    if x.dtype in (np.float16, bfloat16):   # in float32, rounded once (XLA; two roundings here)
        return _rsqrt_impl(x.astype(np.float32)).astype(x.dtype)
    return x.dtype.type(1) / np.sqrt(x)


_ERF_SPLIT = 2.5


def _erf_impl(x):
    """erf in float64 to ~1 ulp, vectorised (no scipy).

    For |x| < 3 the all-positive series erf(a) = 2/sqrt(pi) e^(-a^2) sum_n a (2a^2)^n /
    (2n+1)!! (no cancellation); beyond, erf = 1 - erfc with erfc's continued fraction
    e^(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))).
    """
    x = np.asarray(x)
    a = np.abs(x.astype(np.float64))
    s = np.minimum(a, _ERF_SPLIT)
    z = 2.0 * s * s
    term = s.copy()
    total = s.copy()
    for n in range(1, 64):
        term = term * z / (2 * n + 1)
        total += term
    series = (2.0 / math.sqrt(math.pi)) * np.exp(-s * s) * total
    b = np.maximum(a, _ERF_SPLIT)
    frac = b.copy()
    for k in range(48, 0, -1):
        frac = b + (0.5 * k) / frac
    erfc = np.exp(-b * b) / (math.sqrt(math.pi) * frac)
    out = np.where(a < _ERF_SPLIT, series, 1.0 - erfc)
    return np.copysign(out, x).astype(x.dtype)


# --------------------------------------------------------------------------- derivative helpers

def _c(x, v):
    return full_like(x, v)


def _recip(x):
    return div(_c(x, 1), x)


def _sq(x):
    return mul(x, x)


# --------------------------------------------------------------------------- the table rows

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

# name, numpy function, dtype kinds, d(out)/dx as a function of (x, out), ulp [, fnp name]
UNARY_TABLE = [
    OpRow("sign", numpy_sign, "fiu", None, 0, "sign"),
    OpRow("floor", np.floor, "f", None, 0, "floor"),
    OpRow("ceil", np.ceil, "f", None, 0, "ceil"),
    OpRow("round", np.rint, "f", None, 0, "rint"),          # half to even, as numpy.rint
    OpRow("is_finite", np.isfinite, "f", None, 0, "isfinite", out_dtype=np.bool_),
    OpRow("exp", np.exp, "fc", lambda x, out: out, 4, "exp"),
    OpRow("exp2", np.exp2, "fc", lambda x, out: mul(out, _c(x, _LN2)), 4, "exp2"),
    OpRow("expm1", np.expm1, "fc", lambda x, out: add(out, _c(x, 1)), 4, "expm1",
          impl=expm1_impl),
    OpRow("log", np.log, "fc", lambda x, out: _recip(x), 4, "log", domain=(0.5, 3.0)),
    OpRow("log1p", np.log1p, "fc", lambda x, out: _recip(add(x, _c(x, 1))), 4, "log1p",
          impl=_log1p_impl, domain=(-0.5, 2.0)),
    OpRow("log2", np.log2, "fc", lambda x, out: _recip(mul(x, _c(x, _LN2))), 4, "log2",
          domain=(0.5, 3.0)),
    OpRow("log10", np.log10, "fc", lambda x, out: _recip(mul(x, _c(x, _LN10))), 4, "log10",
          domain=(0.5, 3.0)),
    OpRow("tanh", np.tanh, "fc", lambda x, out: sub(_c(x, 1), _sq(out)), 4, "tanh",
          impl=tanh_impl),
    OpRow("logistic", _logistic_impl, "fc", lambda x, out: mul(out, sub(_c(x, 1), out)), 4),
    OpRow("sin", np.sin, "fc", lambda x, out: cos(x), 4, "sin"),
    OpRow("cos", np.cos, "fc", lambda x, out: neg(sin(x)), 4, "cos"),
    OpRow("tan", np.tan, "fc", lambda x, out: add(_c(x, 1), _sq(out)), 4, "tan",
          domain=(-1.2, 1.2)),
    OpRow("asin", np.arcsin, "fc", lambda x, out: rsqrt(sub(_c(x, 1), _sq(x))), 4, "arcsin",
          domain=(-0.9, 0.9)),
    OpRow("acos", np.arccos, "fc", lambda x, out: neg(rsqrt(sub(_c(x, 1), _sq(x)))), 4,
          "arccos", domain=(-0.9, 0.9)),
    OpRow("atan", np.arctan, "fc", lambda x, out: _recip(add(_c(x, 1), _sq(x))), 4, "arctan"),
    OpRow("sinh", np.sinh, "fc", lambda x, out: cosh(x), 4, "sinh"),
    OpRow("cosh", np.cosh, "fc", lambda x, out: sinh(x), 4, "cosh"),
    OpRow("asinh", np.arcsinh, "fc", lambda x, out: rsqrt(add(_sq(x), _c(x, 1))), 4, "arcsinh"),
    # 1/(sqrt(x-1) sqrt(x+1)): no cancellation near 1 (x^2-1 has), no overflow at 1e300,
    # the principal branch for complex x, and at x = 1 the second derivative is -inf, as
    # JAX's (the reverse of rsqrt((x-1)(x+1)) met (x-1)·inf = 0·inf = NaN there)
    OpRow("acosh", np.arccosh, "fc",
          lambda x, out: mul(rsqrt(sub(x, _c(x, 1))), rsqrt(add(x, _c(x, 1)))), 4, "arccosh",
          domain=(1.5, 3.0)),
    OpRow("atanh", np.arctanh, "fc", lambda x, out: _recip(sub(_c(x, 1), _sq(x))), 4, "arctanh",
          domain=(-0.9, 0.9)),
    OpRow("sqrt", np.sqrt, "fc", lambda x, out: div(_c(x, 0.5), out), 0, "sqrt",
          domain=(0.5, 3.0), transcendental=True),       # correctly rounded, yet costly
    OpRow("rsqrt", _rsqrt_impl, "fc", lambda x, out: mul(_c(x, -0.5), div(out, x)), 0,
          domain=(0.5, 3.0), transcendental=True),
    # out**-2 / 3 as JAX's: its second derivative is -inf at 0 (+inf at -0), 0 at inf, where
    # the reciprocal of 3 out^2 gave inf * 0 = NaN
    OpRow("cbrt", np.cbrt, "f", lambda x, out: mul(_c(x, 1.0 / 3.0), integer_pow(out, -2)), 1,
          "cbrt", domain=(0.5, 3.0)),
    # d|x| = 1 at 0, as JAX (complex abs has its own rules below)
    OpRow("abs", np.abs, "fiu", lambda x, out: select_n(ge(x, _c(x, 0)), _c(x, -1), _c(x, 1)),
          0, "abs"),
    OpRow("square", np.square, "fciu", lambda x, out: mul(_c(x, 2), x), 0, "square"),
    OpRow("reciprocal", np.reciprocal, "fc", lambda x, out: neg(_sq(out)), 0, "reciprocal",
          domain=(0.5, 3.0)),
    # the reference is the interpreter's own series (numpy has no erf); llvm's erf is up
    # to ~10 ulp from it near |x| = 2.5
    OpRow("erf", _erf_impl, "f",
          lambda x, out: mul(_c(x, 2.0 / math.sqrt(math.pi)), exp(neg(_sq(x)))), 16),
    OpRow("erfc", lambda x: np.vectorize(math.erfc, otypes="d")(x).astype(np.result_type(x)),
          "f", lambda x, out: mul(_c(x, -2.0 / math.sqrt(math.pi)), exp(neg(_sq(x)))), 4),
]

UNARY = {row.name: define_row(row, 1) for row in UNARY_TABLE}


def _unary_wrapper(row):
    p = UNARY[row.name]

    accepts = DtypeAccepts(p, 1)

    def f(x):
        # eagerly bind runs the numpy impl unchecked: sin of an int array came back as
        # int zeros (numpy's float result cast back to the operand's dtype)
        if not isinstance(x, Tracer) and \
                not accepts[x.dtype if isinstance(x, np.ndarray) else np.result_type(x)]:
            eager_checked(p, x)
        return p.bind(x)
    f.__name__ = f.__qualname__ = p.name
    f.__annotations__ = {"x": "ArrayLike", "return": "Array"}
    lo, hi = row.domain            # the docstring's example lies where the op is smooth
    x = [0.25, 0.5] if lo < 0.25 and hi > 0.5 else [lo + (hi - lo) / 4, lo + (hi - lo) / 2]
    ref = row.numpy
    f.__doc__ = f"Elementwise ``{p.name}`` (a primitive; the result has ``x``'s shape).\n\n"
    if isinstance(ref, np.ufunc):      # eagerly it is its numpy twin, bit for bit
        # the row's own function (lax.round wraps the round row with JAX's tie rule)
        f.__doc__ += (f"Eagerly the same as ``numpy.{ref.__name__}``.\n\n>>> import numpy as np\n"
                      ">>> from functrans.primitives import elementwise\n"
                      f">>> x = np.array({x})\n>>> bool(np.array_equal("
                      f"elementwise.{p.name}(x), np.{ref.__name__}(x)))\nTrue\n")
    else:
        f.__doc__ += (">>> import numpy as np\n>>> from functrans import lax\n"
                      f">>> lax.{p.name}(np.array({x}, np.float32)).shape\n(2,)\n")
    return f


# the primitives ``<name>_p`` and lax functions ``<name>``, one of each per row (the
# derivative rules above name them; they are looked up when a rule runs)
for _row in UNARY_TABLE:
    globals()[_row.name + "_p"] = UNARY[_row.name]
    globals()[_row.name] = _unary_wrapper(_row)
sin.__doc__ = """Elementwise sine.

>>> import numpy as np
>>> float(sin(np.float64(0.0)))
0.0
"""
erf.__doc__ = """The error function, 2/sqrt(pi) * integral_0^x exp(-t^2) dt.

>>> import numpy as np
>>> print(f"{float(erf(np.float64(1.0))):.12f}")
0.842700792950
"""


# --------------------------------------------------------------------------- integer_pow

integer_pow_p = Primitive("integer_pow")


def _integer_pow_aval(x, *, y):
    if not isinstance(y, int) or isinstance(y, bool):
        raise TypeError(f"integer_pow: exponent y must be a Python int, got {y!r}")
    out = elementwise_aval("integer_pow", "fciu")(x)
    if dtype_kind(x.dtype) in "iu" and y < 0:
        raise ValueError(f"integer_pow: integers to negative powers are not allowed "
                         f"({x.str_short()} ** {y})")
    return out


def _integer_pow_impl(x, *, y):
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        return np.asarray(np.power(x, x.dtype.type(y)), dtype=x.dtype)


def _integer_pow_deriv(t, x, *, out, y):
    if y == 0:
        return mul(t, _c(x, 0))
    if y == 1:
        return t
    # x ** 1 is x itself: no equation for it (keeps d/dx x**2 = 2·x readable)
    d = mul(_c(x, y), x if y == 2 else integer_pow(x, y - 1))
    return mul(t, d)


integer_pow_p.def_rules(abstract_eval=_integer_pow_aval, impl=_integer_pow_impl)
defjvp(integer_pow_p, _integer_pow_deriv)
batch_elementwise(integer_pow_p)


def integer_pow(x: ArrayLike, y: int) -> Array:
    """``x ** y`` for a static Python int ``y``.

    >>> import numpy as np
    >>> integer_pow(np.float64(3.0), 2).item()
    9.0
    """
    if not isinstance(y, (int, np.integer)):
        # int(y) truncated: integer_pow(x, 2.5) was x ** 2
        raise TypeError(f"integer_pow: the exponent y must be a Python int, got "
                        f"{type(y).__name__} {y!r:.40}")
    return integer_pow_p.bind(x, y=int(y))


# --------------------------------------------------------------------------- binary impls

def _rem_impl(x, y):
    x = np.asarray(x)
    with np.errstate(all="ignore"):   # integer x rem 0 is 0, float gives nan, as numpy
        return np.asarray(numpy_remainder(x, np.asarray(y, dtype=x.dtype)), dtype=x.dtype)


def _pow_impl(x, y):
    x = np.asarray(x)
    y = np.asarray(y, dtype=x.dtype)
    with np.errstate(all="ignore"):
        if dtype_kind(x.dtype) not in "iu":
            return np.asarray(np.power(x, y), dtype=x.dtype)
        # integers: numpy refuses negative exponents; define x**-n as 1 / x**n truncated
        # toward zero (so 1, +-1 for x = -1, and 0 otherwise, with 0**-n = 0)
        neg_exp = y < 0
        out = np.asarray(np.power(x, np.where(neg_exp, 0, y)), dtype=x.dtype)
        if neg_exp.any():
            inv = np.where(x == 1, 1, np.where(x == -1, np.where(y % 2 == 0, 1, -1), 0))
            out = np.where(neg_exp, inv, out).astype(x.dtype)
        return np.asarray(out)


# --------------------------------------------------------------------------- binary derivatives
# tangent maps (t, x, y, out) -> tangent, one per argument

def _times(d):
    """The tangent map ``t * d(x, y, out)``."""
    return lambda t, x, y, out: mul(t, d(x, y, out))


def _pow_jvp_x(t, x, y, out):
    # y * x**(y-1), taken as 0 at x = y = 0 (x**0 is constant, even at x = 0; JAX: nan).
    # Only the base is guarded there: selecting 0 wherever y == 0 would also zero this
    # factor's y-derivative, d2(x**y)/dxdy = 1/x at y = 0 (JAX's testPowSecondDerivative).
    x_is_0 = eq(x, _c(x, 0))
    safe_x = select_n(eq(y, _c(y, 0)), x, select_n(x_is_0, x, _c(x, 1)))
    return mul(t, mul(y, pow(safe_x, sub(y, _c(y, 1)))))


def _pow_jvp_y(t, x, y, out):
    # log(x) * x**y, taken as 0 where x == 0 (0**y is 0 for y > 0)
    safe_x = select_n(eq(x, _c(x, 0)), x, _c(x, 1))
    return mul(t, mul(log(safe_x), out))


def _tie_weight(x, y, out):
    """1 where x alone is the result, 1/2 on ties, 0 elsewhere (ties split evenly)."""
    x_won = eq(x, out)
    w = select_n(eq(y, out), _c(x, 1.0), _c(x, 0.5))
    return select_n(x_won, _c(x, 0.0), w)


def _hypot_d(a):
    """d hypot / d a = a / hypot; JAX's values where that is 0/0 or inf/inf: 1/2 at the
    origin (its max(|x|, |y|) splits the tie and |.|' is 1 at 0) and 0 where hypot is
    infinite (a constant there)."""
    def d(x, y, out):
        zero = eq(out, _c(out, 0))
        r = div(a(x, y), select_n(zero, out, _c(out, 1)))
        r = select_n(zero, r, _c(out, 0.5))
        return select_n(eq(out, _c(out, np.inf)), r, _c(out, 0))
    return d


def _logaddexp_d(base_exp, a):
    """d/da logaddexp(x, y) = exp(a - out) (exp2 for base 2); 1/2 at the infinite ties
    (inf, inf) and (-inf, -inf), the limit along x = y, where a - out is NaN. Finite ties
    keep exp(a - out) (= 1/2): a constant there had a zero derivative, so second
    derivatives at x == y were 0 instead of JAX's (t1 - t2) / 4. 1 where a alone is
    +inf (a - out is NaN there too; JAX 0.10.2 gives 1 for it and e for the other)."""
    def d(x, y, out):
        e = base_exp(sub(a(x, y), out))
        alone = select_n(eq(a(x, y), out), e, select_n(eq(e, e), _c(x, 1.0), e))
        return select_n(eq(x, y), alone, select_n(eq(e, e), _c(x, 0.5), e))
    return d


def _first(x, y):
    return x


def _second(x, y):
    return y


# --------------------------------------------------------------------------- the binary table
# name, numpy function, dtype kinds, (tangent map in x, tangent map in y), ulp [, fnp name]
# rem = x - y * floor(x / y); the floor is locally constant
BINARY_TABLE = [
    OpRow("rem", numpy_remainder, "fiu",
          (lambda t, x, y, out: t, lambda t, x, y, out: neg(mul(t, floor(div(x, y))))),
          0, "remainder", impl=_rem_impl, domain=(0.5, 3.0)),
    OpRow("pow", np.power, "fciu", (_pow_jvp_x, _pow_jvp_y), 4, "power", impl=_pow_impl,
          domain=(0.5, 3.0)),
    OpRow("max", numpy_maximum, "fciub", (lambda t, x, y, out: mul(t, _tie_weight(x, y, out)),
                                       lambda t, x, y, out: mul(t, _tie_weight(y, x, out))),
          0, "maximum", impl=np_impl(minmax_impl(numpy_maximum, True))),
    OpRow("min", numpy_minimum, "fciub", (lambda t, x, y, out: mul(t, _tie_weight(x, y, out)),
                                       lambda t, x, y, out: mul(t, _tie_weight(y, x, out))),
          0, "minimum", impl=np_impl(minmax_impl(numpy_minimum, False))),
    # atan2(x, y) = angle of (y, x): d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2)
    OpRow("atan2", np.arctan2, "f",
          (lambda t, x, y, out: mul(t, div(y, add(_sq(x), _sq(y)))),
           lambda t, x, y, out: mul(t, neg(div(x, add(_sq(x), _sq(y)))))),
          4, "arctan2", impl=np_impl(np.arctan2)),
    OpRow("hypot", np.hypot, "f", (_times(_hypot_d(_first)), _times(_hypot_d(_second))),
          1, "hypot"),
    # |x1|'s slope (abs's rule: +1 at -0.0, as JAX 0.10.2) times y's sign
    OpRow("copysign", np.copysign, "f",
          (_times(lambda x, y, out: mul(select_n(ge(x, _c(x, 0)), _c(x, -1), _c(x, 1)),
                                        copysign(_c(x, 1), y))), None), 0, "copysign"),
    OpRow("logaddexp", np.logaddexp, "f",
          (_times(_logaddexp_d(exp, _first)), _times(_logaddexp_d(exp, _second))),
          4, "logaddexp"),
    OpRow("logaddexp2", np.logaddexp2, "f",
          (_times(_logaddexp_d(exp2, _first)), _times(_logaddexp_d(exp2, _second))),
          4, "logaddexp2"),
]

BINARY = {row.name: define_row(row, 2) for row in BINARY_TABLE}


# --------------------------------------------------------------------------- lax wrappers
# ``<name>_p`` and ``<name>`` per row, as for the unary table (a float doctest example
# for the rows that take no integers, and for pow)
for _row in BINARY_TABLE:
    globals()[_row.name + "_p"] = BINARY[_row.name]
    globals()[_row.name] = lax_binary(BINARY[_row.name],
                                      "i" not in _row.kinds or _row.name == "pow")
    globals()[_row.name].__module__ = __name__   # documented (and doctested) where made
__all__ = [row.name for row in UNARY_TABLE + BINARY_TABLE] + [
    "integer_pow", "real", "imag", "conj", "complex"]
rem.__doc__ = """Remainder with the sign of the divisor (numpy.remainder; a zero has the
dividend's sign, as jnp.remainder); integer x rem 0 is 0.

>>> import numpy as np
>>> rem(np.float64(-1.0), np.float64(3.0)).item()
2.0
"""
max.__doc__ = """Elementwise maximum (nan propagates, -0.0 is below +0.0 as in JAX; complex
numbers compare lexicographically, as JAX's); the derivative splits ties evenly.

>>> import numpy as np
>>> max(np.float64(1.0), np.float64(2.0)).item()
2.0
"""
logaddexp.__doc__ = """``log(exp(x) + exp(y))`` without overflow (numpy.logaddexp).

>>> import numpy as np
>>> print(f"{logaddexp(np.float64(1000.0), np.float64(1000.0)).item():.4f}")
1000.6931
"""


# --------------------------------------------------------------------------- complex parts
# Transposes follow JAX's convention for complex cotangents (no conjugation of ct).

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}


def _part_aval(name):
    def rule(x):
        if dtype_kind(x.dtype) != "c":
            raise TypeError(f"{name}: needs a complex operand, got {x.str_short()}")
        return ShapedArray(x.shape, _REAL_OF[x.dtype], x.weak_type)
    return rule


def _zero_or(ct, x, fn):
    return Zero(x.aval) if type(ct) is Zero else fn(ct)


real_p = Primitive("real")
real_p.def_rules(abstract_eval=_part_aval("real"), impl=lambda x: np.asarray(np.real(x)))
deflinear(real_p, lambda ct, x: [_zero_or(ct, x, lambda c: complex(c, full_like(c, 0)))])
imag_p = Primitive("imag")
imag_p.def_rules(abstract_eval=_part_aval("imag"), impl=lambda x: np.asarray(np.imag(x)))
deflinear(imag_p, lambda ct, x: [_zero_or(ct, x, lambda c: complex(full_like(c, 0), neg(c)))])
conj_p = Primitive("conj")
conj_p.def_rules(abstract_eval=elementwise_aval("conj", "c"), impl=np_impl(np.conjugate))
deflinear(conj_p, lambda ct, x: [_zero_or(ct, x, conj)])
complex_p = Primitive("complex")


def _complex_aval(x, y):
    elementwise_aval("complex", "f")(x, y)
    return ShapedArray(x.shape, _COMPLEX_OF[x.dtype], x.weak_type and y.weak_type)


def _complex_impl(x, y):
    x = np.asarray(x)
    out = np.empty(x.shape, _COMPLEX_OF[x.dtype])
    out.real, out.imag = x, y
    return out


def _complex_transpose(ct, x, y):
    if type(ct) is Zero:
        return [Zero(v.aval) if is_undefined(v) else None for v in (x, y)]
    return [real(ct) if is_undefined(x) else None, neg(imag(ct)) if is_undefined(y) else None]


complex_p.def_rules(abstract_eval=_complex_aval, impl=_complex_impl)
deflinear(complex_p, _complex_transpose)
for _p in (real_p, imag_p, conj_p, complex_p):
    batch_elementwise(_p)


def real(x: ArrayLike) -> Array:
    """The real part of a complex array.

    >>> import numpy as np
    >>> real(np.array([1 + 2j])).tolist()
    [1.0]
    """
    return eager_checked(real_p, x)


def imag(x: ArrayLike) -> Array:
    """The imaginary part of a complex array.

    >>> import numpy as np
    >>> imag(np.array([1 + 2j])).tolist()
    [2.0]
    """
    return eager_checked(imag_p, x)


def conj(x: ArrayLike) -> Array:
    """The complex conjugate of a complex array; a float32/float64 one gives itself as
    complex64/complex128 (JAX's; its derivatives are ``complex``'s).

    >>> import numpy as np
    >>> conj(np.array([1 + 2j])).tolist(), conj(np.array([3.0])).tolist()
    ([(1-2j)], [(3+0j)])
    """
    if get_aval(x).dtype in _COMPLEX_OF:
        return complex(x, full_like(x, 0))
    return eager_checked(conj_p, x)


def complex(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 (lax's name)
    """``x + i y`` from two float arrays of one shape and dtype.

    >>> import numpy as np
    >>> complex(np.float64(1.0), np.float64(2.0)).item()
    (1+2j)
    """
    try:    # eagerly too the rule runs: complex(f32, i32) was numpy's promotion
        return eager_checked(complex_p, x, y)
    except (TypeError, ValueError):    # a 0-d operand or size-1 axes: broadcast, as JAX's
        x, y = broadcast_operands(x, y)
        return eager_checked(complex_p, x, y)


# |z| on complex z: a float result; d|z| = re(conj(z) t) / |z| (0 at z = 0)
def _abs_aval(x):
    if dtype_kind(x.dtype) == "c":
        return ShapedArray(x.shape, _REAL_OF[x.dtype], x.weak_type)
    return elementwise_aval("abs", "fiu")(x)


def _abs_impl(x):
    x = np.asarray(x)
    return np.asarray(np.abs(x), dtype=_REAL_OF.get(x.dtype, x.dtype))


_real_abs_jvp = abs_p.jvp


def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    if dtype_kind(aval(x).dtype) != "c":
        return _real_abs_jvp(primals, tangents)
    out = abs_p.bind(x)
    safe = select_n(eq(out, _c(out, 0)), out, _c(out, 1))
    w = div(conj(x), complex(safe, full_like(safe, 0)))
    return out, real(mul(t, w))


abs_p.def_rules(abstract_eval=_abs_aval, impl=_abs_impl, jvp=_abs_jvp)
