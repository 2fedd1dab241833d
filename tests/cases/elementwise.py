"""Table rows for the elementwise primitives and the elementwise ``functrans.numpy``
functions. Inputs of domain-restricted functions are drawn inside the domain and
away from kinks, so the finite-difference checks are valid; piecewise-constant
and integer/bool-valued functions are marked ``diff=False``."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen, ints, positive, randn, uniform

F32 = np.float32
BF16 = fnp.bfloat16.dtype


def _u32(*shape, high=2**32):
    return lambda rng: rng.integers(0, high, shape, dtype=np.uint64).astype(np.uint32)


def _bools(*shape):
    return lambda rng: rng.random(shape) < 0.5


def _away_from_int(*shape, dtype=np.float64):
    # values in (k + 0.1, k + 0.9): no step of floor/ceil/round/rem within an FD step
    return lambda rng: (rng.integers(-4, 4, shape) + rng.uniform(0.1, 0.9, shape)).astype(dtype)


def _special(dtype=np.float64):
    return lambda rng: np.array([0.0, -1.5, np.nan, np.inf, -np.inf, 2.0], dtype)


def _complex(*shape):
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


CASES = []


def row(name, fun, args, ref, **kw):
    CASES.append(OpCase(name, fun, args, ref, **kw))


def _same_name(*names):
    """``(name, fnp.<name>, numpy.<name>)`` for functions named as in numpy; a name may
    come as ``(name, extra...)``, the extras (e.g. input generators) appended."""
    out = []
    for item in names:
        n, *extra = (item,) if isinstance(item, str) else item
        out.append((n, getattr(fnp, n), getattr(np, n), *extra))
    return out


# --------------------------------------------------------------------------- unary (fnp)
# name, fnp function, numpy reference, generator of one argument (shape is added)
_UNARY = _same_name(
    ("sin", randn), ("cos", randn),
    ("tan", lambda *s, **k: uniform(*s, low=-1.2, high=1.2, **k)),
    ("exp", randn), ("exp2", randn), ("expm1", randn),
    ("log", positive), ("log2", positive), ("log10", positive),
    ("log1p", lambda *s, **k: uniform(*s, low=-0.5, high=2.0, **k)),
    ("sqrt", positive), ("cbrt", positive), ("arcsin", uniform), ("arccos", uniform),
    ("arctan", randn), ("sinh", randn), ("cosh", randn), ("tanh", randn), ("arcsinh", randn),
    ("arccosh", lambda *s, **k: positive(*s, low=1.5, high=3.0, **k)),
    ("arctanh", uniform), ("square", randn), ("reciprocal", positive), ("negative", randn),
    ("positive", randn), ("abs", randn), ("absolute", randn), ("deg2rad", randn),
    ("rad2deg", randn))
for _n, _f, _r, _g in _UNARY:
    row(f"{_n}", _f, gen(_g(3, 4)), _r)
    row(f"{_n}_scalar", _f, gen(_g()), _r)
    row(f"{_n}_f32", _f, gen(_g(5, dtype=F32)), _r, rtol=2e-6, atol=1e-6)
row("sin_empty", fnp.sin, gen(randn(0, 3)), np.sin)
row("sqrt_empty_scalar_shape", fnp.sqrt, gen(positive(1, 0)), np.sqrt)

# integer inputs of float-valued functions give float64, as numpy
for _n, _f, _r in _same_name("sin", "exp", "sqrt", "log1p", "arctan", "exp2"):
    row(f"{_n}_int", _f, gen(ints(4, low=0, high=5)), _r, diff=False)
row("sin_bool", fnp.sin, gen(_bools(4)), lambda x: np.sin(x.astype(np.float64)), diff=False)

# integer-preserving unary functions
for _n, _f, _r in _same_name("negative", "abs", "square", "sign", "floor", "ceil", "round",
                             "positive", "reciprocal"):
    def _ref(x, _r=_r):
        with np.errstate(all="ignore"):   # numpy's integer 1 / 0
            return _r(x)
    row(f"{_n}_int32", _f, gen(ints(2, 3, dtype=np.int32)), _ref, diff=False)
row("abs_bool", fnp.abs, gen(_bools(3)), np.abs, diff=False)
row("abs_u32", fnp.abs, gen(_u32(3)), np.abs, diff=False)
row("negative_u32", fnp.negative, gen(_u32(3)), np.negative, diff=False)
row("square_bool", fnp.square, gen(_bools(3)), lambda x: np.square(x.astype(np.int64)),
    diff=False)

# piecewise constant: no derivative
for _n, _f, _r in _same_name("sign", "floor", "ceil", "round", "rint"):
    row(f"{_n}_float", _f, gen(_away_from_int(3, 4)), _r, diff=False)
    row(f"{_n}_f32", _f, gen(_away_from_int(5, dtype=F32)), _r, diff=False)
row("round_half_even", fnp.round, [np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.2])], np.round,
    diff=False)
row("round_decimals_2", lambda x: fnp.round(x, 2), gen(randn(6)), lambda x: np.round(x, 2),
    diff=False)
row("round_decimals_f32", lambda x: fnp.round(x, 1), gen(randn(6, dtype=F32)),
    lambda x: np.round(x, 1), diff=False)
row("round_decimals_neg", lambda x: fnp.round(x, -1), gen(randn(6, scale=100.0)),
    lambda x: np.round(x, -1), diff=False)
row("round_int_decimals_neg", lambda x: fnp.round(x, -1),
    [np.array([15, 25, -15, -25, 14, 7], np.int64)], lambda x: np.round(x, -1), diff=False)

# predicates
for _n, _f, _r in _same_name("isnan", "isinf", "isfinite"):
    row(f"{_n}", _f, gen(_special()), _r, diff=False)
    row(f"{_n}_f32", _f, gen(_special(F32)), _r, diff=False)
    row(f"{_n}_int", _f, gen(ints(3)), _r, diff=False)

# --------------------------------------------------------------------------- binary (fnp)
_BINARY = _same_name(
    ("add", randn, randn), ("subtract", randn, randn), ("multiply", randn, randn),
    ("true_divide", randn, positive), ("divide", randn, positive), ("power", positive, randn),
    ("maximum", randn, randn), ("minimum", randn, randn), ("fmax", randn, randn),
    ("fmin", randn, randn), ("arctan2", randn, randn), ("hypot", randn, randn),
    ("remainder", _away_from_int, lambda *s, **k: positive(*s, low=1.0, high=1.0, **k)),
    ("floor_divide", _away_from_int, lambda *s, **k: positive(*s, low=1.0, high=1.0, **k)))
_BINARY.append(("mod_neg_divisor", fnp.mod, np.mod, _away_from_int,   # named for its divisor
                lambda *s, **k: positive(*s, low=-1.0, high=-1.0, **k)))
for _n, _f, _r, _gx, _gy in _BINARY:
    row(f"{_n}", _f, gen(_gx(3, 4), _gy(3, 4)), _r)
    row(f"{_n}_broadcast", _f, gen(_gx(3, 1), _gy(4)), _r)
    row(f"{_n}_scalar", _f, gen(_gx(), _gy()), _r)
    row(f"{_n}_f32", _f, gen(_gx(5, dtype=F32), _gy(5, dtype=F32)), _r, rtol=2e-6, atol=1e-6)
row("add_empty", fnp.add, gen(randn(0, 3), randn(0, 3)), np.add)
row("multiply_empty_broadcast", fnp.multiply, gen(randn(0, 1), randn(3)), np.multiply)
row("mul_f32_weak", lambda x: fnp.multiply(x, 2.0), gen(randn(4, dtype=F32)),
    lambda x: np.multiply(x, 2.0))
row("add_f32_f64", fnp.add, gen(randn(3, dtype=F32), randn(3)), np.add)
row("power_int_exponent", lambda x: fnp.power(x, 3), gen(randn(4)), lambda x: np.power(x, 3))
row("power_neg_int_exponent", lambda x: fnp.power(x, -2), gen(positive(4)),
    lambda x: np.power(x, -2))
row("power_zero_exponent", lambda x: fnp.power(x, 0), gen(randn(3)), lambda x: np.power(x, 0))
row("power_float_scalar_exponent", lambda x: fnp.power(x, 0.5), gen(positive(4)),
    lambda x: np.power(x, 0.5))
row("power_int_arrays", fnp.power, gen(ints(5, low=-3, high=4), ints(5, low=0, high=4)),
    np.power, diff=False)
row("power_int32_scalar", lambda x: fnp.power(x, 2), gen(ints(5, dtype=np.int32)),
    lambda x: np.power(x, 2), diff=False)
row("square_method_pow", lambda x: fnp.asarray(x) ** 2, gen(randn(3)), lambda x: x ** 2)

# integer arithmetic: numpy's floor semantics, x // 0 == x % 0 == 0
_INT_DIV = gen(ints(6, low=-9, high=10), ints(6, low=-3, high=4))
for _n, _f, _r in _same_name("floor_divide", "remainder", "maximum", "add", "multiply"):
    def _ref(x, y, _r=_r):
        with np.errstate(all="ignore"):
            return _r(x, y)
    row(f"{_n}_int", _f, _INT_DIV, _ref, diff=False)
# (eager true division by an integer 0 warns, as numpy does: nonzero divisors here)
row("true_divide_int", fnp.true_divide, gen(ints(6, low=-9, high=10), ints(6, low=1, high=4)),
    np.true_divide, diff=False)
row("floor_divide_int32_u32", fnp.floor_divide, gen(_u32(4, high=50), _u32(4, high=5)),
    lambda x, y: np.floor_divide(x, y, where=y != 0, out=np.zeros_like(x)), diff=False)
row("remainder_float_zero", fnp.remainder, [np.array([1.5, -2.0]), np.array([0.0, 0.0])],
    lambda x, y: np.full(2, np.nan), diff=False)
row("floor_divide_float_zero", fnp.floor_divide, [np.array([1.5, -2.0, 0.0]), np.zeros(3)],
    lambda x, y: np.array([np.inf, -np.inf, np.nan]), diff=False)

# clip and where
row("clip", lambda x: fnp.clip(x, -0.5, 0.5), gen(randn(3, 4)), lambda x: np.clip(x, -0.5, 0.5))
row("clip_arrays", fnp.clip, gen(randn(3, 4), randn(4, scale=0.1, shift=-1.0),
                                 randn(3, 1, scale=0.1, shift=1.0)), np.clip)
row("clip_none_low", lambda x: fnp.clip(x, None, 0.3), gen(randn(5)),
    lambda x: np.clip(x, None, 0.3))
row("clip_max_kw", lambda x: fnp.clip(x, max=0.3), gen(randn(5)),
    lambda x: np.clip(x, max=0.3))
row("clip_int", lambda x: fnp.clip(x, 0, 3), gen(ints(6)), lambda x: np.clip(x, 0, 3),
    diff=False)
row("clip_f32", lambda x: fnp.clip(x, -0.5, 0.5), gen(randn(4, dtype=F32)),
    lambda x: np.clip(x, -0.5, 0.5))
row("where", fnp.where, gen(_bools(3, 4), randn(3, 4), randn(3, 4)), np.where)
row("where_broadcast", fnp.where, gen(_bools(3, 1), randn(4), randn(3, 4)), np.where)
row("where_scalar_branch", lambda c, x: fnp.where(c, x, 0.0), gen(_bools(5), randn(5)),
    lambda c, x: np.where(c, x, 0.0))
row("where_float_cond", lambda c, x: fnp.where(c, x, -x), gen(ints(5, low=0, high=2), randn(5)),
    lambda c, x: np.where(c, x, -x))
row("where_f32_weak", lambda c, x: fnp.where(c, x, 1.0), gen(_bools(4), randn(4, dtype=F32)),
    lambda c, x: np.where(c, x, 1.0))
row("where_int_float", fnp.where, gen(_bools(4), ints(4), randn(4)), np.where)

# --------------------------------------------------------------------------- comparisons
for _n, _f, _r in _same_name("equal", "not_equal", "less", "less_equal", "greater",
                             "greater_equal"):
    # small integer values as floats, so that ties occur
    row(f"{_n}", _f, gen(ints(3, 4, low=0, high=3, dtype=np.float64),
                         ints(4, low=0, high=3, dtype=np.float64)), _r, diff=False)
    row(f"{_n}_int_float", _f, gen(ints(5), randn(5)), _r, diff=False)
    row(f"{_n}_scalar", lambda x, _f=_f: _f(x, 1), gen(ints(4, dtype=np.int32)),
        lambda x, _r=_r: _r(x, 1), diff=False)
row("equal_bool", fnp.equal, gen(_bools(4), _bools(4)), np.equal, diff=False)
row("less_u32", fnp.less, gen(_u32(4), _u32(4)), np.less, diff=False)

# --------------------------------------------------------------------------- logical / bitwise
for _n, _f, _r in _same_name("logical_and", "logical_or", "logical_xor"):
    row(f"{_n}", _f, gen(_bools(3, 4), _bools(4)), _r, diff=False)
    row(f"{_n}_float", _f, gen(ints(5, low=0, high=2, dtype=np.float64), ints(5, low=0, high=2)),
        _r, diff=False)
row("logical_not", fnp.logical_not, gen(_bools(3)), np.logical_not, diff=False)
row("logical_not_float", fnp.logical_not, [np.array([0.0, 1.5, np.nan])], np.logical_not,
    diff=False)
for _n, _f, _r in _same_name("bitwise_and", "bitwise_or", "bitwise_xor"):
    row(f"{_n}", _f, gen(ints(3, 4, low=-50, high=50), ints(4, low=-50, high=50)), _r, diff=False)
    row(f"{_n}_u32", _f, gen(_u32(5), _u32(5)), _r, diff=False)
    row(f"{_n}_bool", _f, gen(_bools(5), _bools(5)), _r, diff=False)
    row(f"{_n}_int32_scalar", lambda x, _f=_f: _f(x, 6), gen(ints(4, dtype=np.int32)),
        lambda x, _r=_r: _r(x, 6), diff=False)
for _n, _f, _r in _same_name("invert", "bitwise_not"):   # numpy's bitwise_not is invert
    row(f"{_n}", _f, gen(ints(4, dtype=np.int32)), _r, diff=False)
    row(f"{_n}_u32", _f, gen(_u32(4)), _r, diff=False)
    row(f"{_n}_bool", _f, gen(_bools(4)), _r, diff=False)
row("left_shift", fnp.left_shift, gen(ints(6, low=-100, high=100), ints(6, low=0, high=70)),
    np.left_shift, diff=False)
row("left_shift_u32", fnp.left_shift, gen(_u32(6), _u32(6, high=40)), np.left_shift, diff=False)
row("right_shift_int32", fnp.right_shift, gen(ints(6, low=-100, high=100, dtype=np.int32),
                                              ints(6, low=0, high=40, dtype=np.int32)),
    np.right_shift, diff=False)
row("right_shift_u32", fnp.right_shift, gen(_u32(6), _u32(6, high=40)), np.right_shift,
    diff=False)

# --------------------------------------------------------------------------- lax-only primitives
_X32 = np.array([1, -8, 5, 7, -1, 123456], np.int32)
_S32 = np.array([3, 40, 0, 31, 32, 1], np.int32)
row("lax_shift_left", lax.shift_left, [_X32, _S32],
    lambda x, y: np.where(y < 32, np.left_shift(x, np.minimum(y, 31)), 0).astype(np.int32),
    diff=False)
row("lax_shift_right_logical", lax.shift_right_logical, [_X32, _S32],
    lambda x, y: np.where(y < 32, np.right_shift(x.view(np.uint32), np.minimum(y, 31)
                                                 .astype(np.uint32)), 0).astype(np.uint32)
    .view(np.int32), diff=False)
row("lax_shift_right_arithmetic_u32", lax.shift_right_arithmetic,
    [np.array([0x80000000, 5, 0xFFFFFFF0], np.uint32), np.array([4, 1, 40], np.uint32)],
    lambda x, y: np.array([0xF8000000, 2, 0xFFFFFFFF], np.uint32), diff=False)
row("lax_bitcast_f32_u32", lambda x: lax.bitcast_convert_type(x, np.uint32),
    gen(randn(3, 2, dtype=F32)), lambda x: x.view(np.uint32), diff=False)
row("lax_bitcast_u32_f32", lambda x: lax.bitcast_convert_type(
    lax.bitwise_or(lax.shift_right_logical(x, np.uint32(9)), np.uint32(0x3F800000)), np.float32),
    gen(_u32(5)), lambda x: ((x >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32),
    diff=False)
row("lax_bitcast_i64_f64", lambda x: lax.bitcast_convert_type(x, np.float64),
    gen(ints(3, low=0, high=2**40)), lambda x: x.view(np.float64), diff=False)
row("lax_logistic", lax.logistic, gen(randn(3, 4)), lambda x: 1 / (1 + np.exp(-x)))
row("lax_logistic_f32", lax.logistic, gen(randn(4, dtype=F32)), lambda x: 1 / (1 + np.exp(-x)),
    rtol=1e-6)
row("lax_rsqrt", lax.rsqrt, gen(positive(3, 2)), lambda x: 1 / np.sqrt(x))


def _erf_ref(x):
    import math
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


row("lax_erf", lax.erf, gen(randn(3, 4, scale=2.0)), _erf_ref, rtol=1e-14)
row("lax_erf_f32", lax.erf, gen(randn(5, dtype=F32)), _erf_ref, rtol=1e-6)
row("lax_erf_tails", lax.erf, [np.array([-7.0, -3.1, -0.0, 1e-8, 2.6, 4.0, np.inf])], _erf_ref,
    diff=False)
row("lax_integer_pow", lambda x: lax.integer_pow(x, 3), gen(randn(4)), lambda x: x ** 3)
row("lax_integer_pow_1", lambda x: lax.integer_pow(x, 1), gen(randn(4)), lambda x: x)
row("lax_integer_pow_neg", lambda x: lax.integer_pow(x, -3), gen(positive(4)),
    lambda x: x ** -3.0)
row("lax_clamp", lambda x: lax.clamp(-0.5, x, 0.5), gen(randn(6)), lambda x: np.clip(x, -.5, .5))
row("lax_pow_int_negative", lax.pow, [np.array([2, -1, -1, 1, 0, 3]),
                                      np.array([-1, -3, -2, -5, -1, 2])],
    lambda x, y: np.array([0, -1, 1, 1, 0, 9]), diff=False)
row("lax_atan2", lax.atan2, gen(randn(4), randn(4)), np.arctan2)
row("lax_exp2", lax.exp2, gen(randn(4)), np.exp2)
# JAX's lax.round: halves away from zero by default, to even on request
row("lax_round", lax.round, [np.array([0.5, 1.5, -2.5, 0.2])],
    lambda x: np.array([1.0, 2.0, -3.0, 0.0]), diff=False)
row("lax_round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    [np.array([0.5, 1.5, -2.5, 0.2])], np.round, diff=False)
row("lax_is_finite", lax.is_finite, gen(_special()), np.isfinite, diff=False)
row("lax_sign_u32", lax.sign, gen(_u32(4, high=3)), np.sign, diff=False)

# complex parts (values, jit and vmap; the driver's derivative checks are real-valued)
row("lax_complex_real_imag", lambda x, y: lax.imag(lax.complex(x, y)) + lax.real(
    lax.complex(y, x)), gen(randn(3), randn(3)), lambda x, y: y + y)
row("complex_parts", lambda z: (fnp.real(z), fnp.imag(z), fnp.conjugate(z)),
    gen(_complex(4)), lambda z: (np.real(z), np.imag(z), np.conjugate(z)), diff=False)
row("complex_abs", fnp.abs, gen(_complex(4)), np.abs, diff=False)
row("complex_abs_grad", lambda x, y: lax.abs(lax.complex(x, y)), gen(randn(4), randn(4)),
    np.hypot)
row("real_imag_of_real", lambda x: (fnp.real(x), fnp.imag(x), fnp.conj(x)), gen(randn(3)),
    lambda x: (np.real(x), np.imag(x), np.conj(x)))
row("complex_mul_exp", lambda z: fnp.exp(z * z), gen(_complex(3)), lambda z: np.exp(z * z),
    diff=False)


# --------------------------------------------------------------------------- uint64
# an i64 with unsigned semantics natively: the edges 2**63 (sign bit) and 2**64 - 1 always in
_U64_EDGES = np.array([0, 1, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1], np.uint64)


def _u64(*shape, high=2**64):
    def draw(rng):
        x = rng.integers(0, high, shape, dtype=np.uint64)
        n = min(x.size, _U64_EDGES.size) if high == 2**64 else 0
        x.reshape(-1)[:n] = _U64_EDGES[:n]
        return x
    return draw


_a = fnp.asarray


def _quiet(f):
    def ref(*xs):
        with np.errstate(all="ignore"):   # uint64 wraps; x // 0 is 0 as numpy's
            return f(*xs)
    return ref


for _n, _f, _r in _same_name("add", "subtract", "multiply", "maximum", "minimum", "less",
                             "greater_equal", "equal", "bitwise_and", "bitwise_or",
                             "bitwise_xor"):
    row(f"{_n}_u64", _f, gen(_u64(6), _u64(6)), _quiet(_r), diff=False)
for _n, _f, _r in _same_name("floor_divide", "remainder"):
    row(f"{_n}_u64", _f, [_U64_EDGES, np.array([0, 3, 2**63, 7, 2**64 - 1, 2], np.uint64)],
        _quiet(_r), diff=False)
    row(f"{_n}_u64_random", _f, gen(_u64(8), _u64(8, high=2**40)), _quiet(_r), diff=False)
for _n, _f, _r in _same_name("abs", "negative", "sign", "square", "invert", "positive"):
    row(f"{_n}_u64", _f, gen(_u64(6)), _quiet(_r), diff=False)
row("true_divide_u64", fnp.true_divide, gen(_u64(6), _u64(6, high=2**10)),
    _quiet(np.true_divide), diff=False)
row("left_shift_u64", fnp.left_shift, gen(_u64(6), _u64(6, high=70)), np.left_shift, diff=False)
row("right_shift_u64", fnp.right_shift, gen(_u64(6), _u64(6, high=70)), np.right_shift,
    diff=False)
row("lax_shift_right_arithmetic_u64", lax.shift_right_arithmetic,
    [np.array([2**63, 5, 2**64 - 16], np.uint64), np.array([4, 1, 80], np.uint64)],
    lambda x, y: np.array([0xF8 << 56, 2, 2**64 - 1], np.uint64), diff=False)
row("lax_integer_pow_u64", lambda x: lax.integer_pow(x, 3), gen(_u64(6)),
    _quiet(lambda x: x ** np.uint64(3)), diff=False)
row("lax_bitcast_f64_u64", lambda x: lax.bitcast_convert_type(x, np.uint64),
    gen(randn(3, 2)), lambda x: x.view(np.uint64), diff=False)
row("u64_to_float", lambda x: (_a(x).astype(np.float64), _a(x).astype(F32)), gen(_u64(6)),
    lambda x: (x.astype(np.float64), x.astype(F32)), diff=False)
row("u64_to_int", lambda x: tuple(_a(x).astype(d) for d in (np.int64, np.int32, np.uint8, bool)),
    gen(_u64(6)),
    lambda x: (x.astype(np.int64), x.astype(np.int32), x.astype(np.uint8), x.astype(bool)),
    diff=False)
row("float_to_u64", lambda x: _a(x).astype(np.uint64),
    [np.array([0.0, 1.5, 2.0**52 + 1, 2.0**63, 2.0**63 + 2048, 1.8e19, 2.0**64 - 2048])],
    lambda x: x.astype(np.uint64), diff=False)
row("int_to_u64", lambda x: (_a(x).astype(np.uint64), _a(x).astype(np.int32).astype(np.uint64)),
    gen(ints(6, low=-2**62, high=2**62)),
    lambda x: (x.astype(np.uint64), x.astype(np.int32).astype(np.uint64)), diff=False)


# --------------------------------------------------------------------------- generated from the op table
# One float64 and one float32 row per op-table row (functrans.primitives.elementwise
# UNARY_TABLE / BINARY_TABLE), arguments drawn in the row's ``domain``, compared with
# the row's numpy function at its ``ulp`` tolerance; an int32 row where the op takes
# integers. Special values are swept separately (tests/test_op_table.py).
def _table_rows():
    from functrans.primitives import elementwise as E
    for r in E.LINEAR_TABLE + E.UNARY_TABLE + E.BINARY_TABLE:
        if "f" not in r.kinds:
            continue
        lo, hi, arity = *r.domain, E.ARITY[r.name]
        fun = getattr(lax, r.name)
        diff = r.deriv is not None or r.transpose is not None

        def ref(*xs, _np=r.numpy):
            with np.errstate(all="ignore"):
                return _np(*xs)
        for suffix, dtype, shape in (("", np.float64, (3, 4)), ("_f32", F32, (5,))):
            eps = np.finfo(dtype).eps
            row(f"table_{r.name}{suffix}", fun,
                gen(*[uniform(*shape, low=lo, high=hi, dtype=dtype)] * arity), ref,
                diff=diff and dtype == np.float64, rtol=max(r.ulp, 1) * eps, atol=0.0)
        # float16 and bfloat16: computed in float32 and rounded once (JAX's and XLA's CPU
        # rule), so within one ulp (2**-10, 2**-7 relative) of the float32 result rounded
        for suffix, small, ulp, tiny in (("_f16", np.float16, 2.0 ** -10, 2.0 ** -24),
                                         ("_bf16", BF16, 2.0 ** -7, 2.0 ** -133)):
            row(f"table_{r.name}{suffix}", fun,
                gen(*[uniform(6, low=lo, high=hi, dtype=small)] * arity),
                lambda *xs, _ref=ref, _dt=r.out_dtype or small: np.asarray(
                    _ref(*[x.astype(F32) for x in xs])).astype(_dt),
                diff=False, rtol=ulp, atol=tiny)
        if "i" in r.kinds:      # integer semantics are the impl's (floor division...)
            row(f"table_{r.name}_int32", fun, gen(*[ints(6, low=1, high=4, dtype=np.int32)]
                                                 * arity), r.impl or ref, diff=False)


_table_rows()
