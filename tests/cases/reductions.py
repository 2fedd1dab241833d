"""Table rows for the reductions: the reduce_*/arg*/cum* primitives (through lax) and
the fnp reductions, over axes None/int/negative/tuple, keepdims, float32 and int
inputs, empty arrays, ties (max/min/argmax) and zeros (prod/cumprod)."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen, ints, randn


def _ties(rng):
    # several exact ties per row, so max/min/argmax and their tangents meet them
    return [rng.integers(-2, 3, (4, 5)).astype(np.float64)]


def _with_zeros(rng):
    x = rng.uniform(0.5, 1.5, (3, 5)) * rng.choice([-1.0, 1.0], (3, 5))
    x[0, 1] = 0.0                  # one zero in row 0
    x[1, 0] = x[1, 3] = 0.0        # two zeros in row 1
    return [x]


# NaN, +-inf and signed zeros: cummax/cummin keep np.maximum's ties (the new element)
# and NaN; argmax/argmin give the first extreme, the first NaN, -0.0 == 0.0 ties
_SPECIALS = np.array([[-0.0, 0.0, -0.0, np.inf, np.nan, 1.0, -np.inf],
                      [0.0, -0.0, -np.inf, -np.inf, 2.0, np.inf, np.nan],
                      [-np.inf, -0.0, 0.0, -np.inf, np.inf, 0.0, np.inf]])


# the same for sums and products, without inf - inf or 0 * inf (numpy would warn)
_SUM_SPECIALS = np.array([[-0.0, -0.0, 0.0, np.nan, 1.0], [1.5, np.inf, 2.0, np.inf, -3.0],
                          [-0.0, 2.0, -np.inf, 0.5, np.nan]])


def _flip_acc(ufunc, axis):
    return lambda x: np.flip(ufunc.accumulate(np.flip(x, axis), axis), axis)


def _wrapping(dtype, op, values):
    """A row of lax.cumsum/cumprod on ``dtype`` values that overflow: they wrap."""
    ufunc = np.add if op is lax.cumsum else np.multiply
    return OpCase(f"lax_{op.__name__}_{np.dtype(dtype).name}_wraps", lambda x: op(x, 0),
                  [np.array(values, dtype)], lambda x: ufunc.accumulate(x, dtype=dtype),
                  diff=False)


def _bools(*shape):
    return lambda rng: rng.integers(0, 2, shape).astype(bool)


def _red(name, fn, np_fn, axis, keepdims=False, args=None, **kw):
    return OpCase(name, lambda x: fn(x, axis=axis, keepdims=keepdims),
                  args or gen(randn(3, 4, 5)),
                  lambda x: np_fn(x, axis=axis, keepdims=keepdims), **kw)


CASES = [
    # ------------------------------------------------------------- fnp.sum / prod
    OpCase("sum_all", fnp.sum, gen(randn(3, 4)), np.sum),
    OpCase("sum_axis1", lambda x: fnp.sum(x, axis=1), gen(randn(3, 4)),
           lambda x: np.sum(x, axis=1)),
    OpCase("sum_keepdims", lambda x: fnp.sum(x, axis=0, keepdims=True), gen(randn(3, 4)),
           lambda x: np.sum(x, axis=0, keepdims=True)),
    _red("sum_neg_axis", fnp.sum, np.sum, -1),
    _red("sum_tuple_keepdims", fnp.sum, np.sum, (0, 2), True),
    OpCase("sum_scalar", fnp.sum, [np.float64(2.5)], np.sum),
    OpCase("sum_empty", lambda x: fnp.sum(x, axis=1), [np.zeros((3, 0))],
           lambda x: np.sum(x, axis=1)),
    OpCase("sum_f32", lambda x: fnp.sum(x, axis=0), gen(randn(4, 3, dtype=np.float32)),
           lambda x: np.sum(x, axis=0), rtol=1e-6, diff=False),
    OpCase("sum_int32", lambda x: fnp.sum(x, axis=1), gen(ints(3, 4, dtype=np.int32)),
           lambda x: np.sum(x, axis=1), diff=False),
    OpCase("sum_bool", fnp.sum, gen(_bools(3, 4)), np.sum, diff=False),
    OpCase("sum_uint32_as_uint64", fnp.sum, gen(ints(5, low=0, dtype=np.uint32)),
           np.sum, diff=False),
    OpCase("sum_uint8_as_uint64", fnp.sum, [np.array([200, 255, 100], np.uint8)], np.sum,
           diff=False),
    OpCase("sum_uint64_wraps", fnp.sum, [np.array([2 ** 64 - 1, 2 ** 63, 3], np.uint64)],
           np.sum, diff=False),
    OpCase("cumprod_uint64_wraps", fnp.cumprod, [np.array([2 ** 40, 2 ** 30, 3], np.uint64)],
           np.cumprod, diff=False),
    OpCase("sum_dtype_f32", lambda x: fnp.sum(x, dtype=np.float32), gen(ints(4)),
           lambda x: np.sum(x, dtype=np.float32), diff=False),
    _red("prod_axis", fnp.prod, np.prod, 1, args=gen(randn(3, 4, 2))),
    _red("prod_all_keepdims", fnp.prod, np.prod, None, True, args=gen(randn(2, 3))),
    OpCase("prod_zeros", lambda x: fnp.prod(x, axis=1), _with_zeros, lambda x: np.prod(x, axis=1)),
    OpCase("prod_empty", lambda x: fnp.prod(x, axis=0), [np.zeros((0, 2))],
           lambda x: np.prod(x, axis=0)),
    OpCase("prod_int32", lambda x: fnp.prod(x, axis=0), gen(ints(3, 4, dtype=np.int32)),
           lambda x: np.prod(x, axis=0), diff=False),
    OpCase("nansum", lambda x: fnp.nansum(x, axis=0),
           [np.array([[1.0, np.nan], [2.0, 3.0]])], lambda x: np.nansum(x, axis=0)),
    # ------------------------------------------------------------- mean / var / std
    _red("mean_axis", fnp.mean, np.mean, -2),
    _red("mean_tuple", fnp.mean, np.mean, (0, 1), True),
    OpCase("mean_int", fnp.mean, gen(ints(3, 4, dtype=np.int32)), np.mean, diff=False),
    OpCase("mean_f32", lambda x: fnp.mean(x, axis=1), gen(randn(3, 4, dtype=np.float32)),
           lambda x: np.mean(x, axis=1), rtol=1e-6, diff=False),
    _red("var_axis", fnp.var, np.var, 1),
    OpCase("var_ddof", lambda x: fnp.var(x, axis=0, ddof=1), gen(randn(4, 3)),
           lambda x: np.var(x, axis=0, ddof=1)),
    _red("std_keepdims", fnp.std, np.std, (0, 2), True),
    OpCase("std_ddof_int", lambda x: fnp.std(x, ddof=1), gen(ints(6, dtype=np.int32)),
           lambda x: np.std(x, ddof=1), diff=False),
    OpCase("average_weights", lambda x, w: fnp.average(x, axis=1, weights=w),
           gen(randn(3, 4), lambda rng: rng.uniform(0.5, 2.0, 4)),
           lambda x, w: np.average(x, axis=1, weights=w)),
    # ------------------------------------------------------------- max / min / ptp
    _red("max_all", fnp.max, np.max, None),
    _red("max_neg_keepdims", fnp.max, np.max, -1, True),
    OpCase("max_ties", lambda x: fnp.max(x, axis=1), _ties, lambda x: np.max(x, axis=1),
           diff=False),  # FD is undefined at ties; tested in tests/test_reductions.py
    OpCase("max_int32", lambda x: fnp.max(x, axis=0), gen(ints(3, 4, dtype=np.int32)),
           lambda x: np.max(x, axis=0), diff=False),
    _red("min_tuple", fnp.min, np.min, (0, 2)),
    _red("amin_axis", fnp.amin, np.amin, 1),
    _red("amax_axis", fnp.amax, np.amax, 0),
    _red("ptp_axis", fnp.ptp, np.ptp, 1),
    OpCase("max_empty_other_axis", lambda x: fnp.max(x, axis=1), [np.zeros((0, 3))],
           lambda x: np.max(x, axis=1)),
    # ------------------------------------------------------------- argmax / argmin
    OpCase("argmax_all", fnp.argmax, gen(randn(3, 4)), np.argmax, diff=False),
    OpCase("argmax_axis_ties", lambda x: fnp.argmax(x, axis=1), _ties,
           lambda x: np.argmax(x, axis=1), diff=False),
    OpCase("argmin_neg_keepdims", lambda x: fnp.argmin(x, axis=-1, keepdims=True),
           gen(randn(2, 3, 4)), lambda x: np.argmin(x, axis=-1, keepdims=True), diff=False),
    OpCase("argmin_int_ties", lambda x: fnp.argmin(x, axis=0), gen(ints(5, 3, low=0, high=3)),
           lambda x: np.argmin(x, axis=0), diff=False),
    OpCase("argmax_nan", lambda x: fnp.argmax(x, axis=1),
           [np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 2.0, 4.0, 0.0]])],
           lambda x: np.argmax(x, axis=1), diff=False),
    OpCase("lax_argmax_int32", lambda x: lax.argmax(x, 0, np.int32), gen(randn(4, 3)),
           lambda x: np.argmax(x, axis=0).astype(np.int32), diff=False),
    # ------------------------------------------------------------- all / any
    OpCase("all_axis", lambda x: fnp.all(x, axis=1), gen(_bools(3, 4)),
           lambda x: np.all(x, axis=1), diff=False),
    OpCase("any_keepdims", lambda x: fnp.any(x, axis=0, keepdims=True), gen(_bools(3, 4)),
           lambda x: np.any(x, axis=0, keepdims=True), diff=False),
    OpCase("any_float", fnp.any, gen(ints(3, 2, low=0, high=2, dtype=np.float64)), np.any,
           diff=False),
    OpCase("all_empty", fnp.all, [np.zeros((0,), bool)], np.all, diff=False),
    # ------------------------------------------------------------- cumulative
    OpCase("cumsum_flat", fnp.cumsum, gen(randn(3, 4)), np.cumsum),
    OpCase("cumsum_axis", lambda x: fnp.cumsum(x, axis=-1), gen(randn(2, 3, 4)),
           lambda x: np.cumsum(x, axis=-1)),
    OpCase("cumsum_int32", lambda x: fnp.cumsum(x, axis=0), gen(ints(4, 3, dtype=np.int32)),
           lambda x: np.cumsum(x, axis=0), diff=False),
    OpCase("cumsum_bool", fnp.cumsum, gen(_bools(5)), np.cumsum, diff=False),
    OpCase("cumprod_axis", lambda x: fnp.cumprod(x, axis=1), gen(randn(3, 4)),
           lambda x: np.cumprod(x, axis=1)),
    OpCase("cumprod_zeros", lambda x: fnp.cumprod(x, axis=1), _with_zeros,
           lambda x: np.cumprod(x, axis=1)),
    OpCase("lax_cumsum_reverse", lambda x: lax.cumsum(x, 1, reverse=True), gen(randn(3, 4)),
           lambda x: np.flip(np.cumsum(np.flip(x, 1), 1), 1)),
    OpCase("lax_cumprod_reverse", lambda x: lax.cumprod(x, 0, reverse=True), _with_zeros,
           lambda x: np.flip(np.cumprod(np.flip(x, 0), 0), 0)),
    OpCase("lax_cummax", lambda x: lax.cummax(x, 1), gen(randn(3, 5)),
           lambda x: np.maximum.accumulate(x, 1)),
    OpCase("lax_cummax_reverse", lambda x: lax.cummax(x, 0, reverse=True), gen(randn(4, 3)),
           lambda x: np.flip(np.maximum.accumulate(np.flip(x, 0), 0), 0)),
    OpCase("lax_cummin", lambda x: lax.cummin(x, 0), gen(randn(4, 3)),
           lambda x: np.minimum.accumulate(x, 0)),
    OpCase("lax_cummin_int", lambda x: lax.cummin(x, 1), gen(ints(3, 4)),
           lambda x: np.minimum.accumulate(x, 1), diff=False),
    OpCase("lax_cummax_specials", lambda x: (lax.cummax(x, 1), lax.cummax(x, 0, True)),
           [_SPECIALS], lambda x: (np.maximum.accumulate(x, 1), _flip_acc(np.maximum, 0)(x)),
           diff=False),
    OpCase("lax_cummin_specials", lambda x: (lax.cummin(x, 0), lax.cummin(x, 1, True)),
           [_SPECIALS], lambda x: (np.minimum.accumulate(x, 0), _flip_acc(np.minimum, 1)(x)),
           diff=False),
    OpCase("lax_cumsum_cumprod_specials", lambda x: (lax.cumsum(x, 1), lax.cumprod(x, 1, True)),
           [_SUM_SPECIALS], lambda x: (np.cumsum(x, 1), _flip_acc(np.multiply, 1)(x)),
           diff=False),
    OpCase("argmax_argmin_specials",
           lambda x: (fnp.argmax(x, axis=1), fnp.argmin(x, axis=1), fnp.argmax(x[:, :4], axis=0),
                      fnp.argmin(x[:, :4], axis=0)), [_SPECIALS],
           lambda x: (np.argmax(x, axis=1), np.argmin(x, axis=1), np.argmax(x[:, :4], axis=0),
                      np.argmin(x[:, :4], axis=0)), diff=False),
    _wrapping(np.int32, lax.cumsum, [2 ** 31 - 1, 1, 2 ** 31 - 1, -5]),
    _wrapping(np.int32, lax.cumprod, [65536, 65536, 3, -7]),
    _wrapping(np.uint32, lax.cumprod, [2 ** 31, 3, 2 ** 32 - 1]),
    _wrapping(np.uint8, lax.cumsum, [200, 100, 255]),
    _wrapping(np.uint8, lax.cumprod, [16, 16, 3]),
    # ------------------------------------------------------------- lax reductions
    OpCase("lax_reduce_max", lambda x: lax.reduce_max(x, (0, 2)), gen(randn(3, 2, 4)),
           lambda x: np.max(x, axis=(0, 2))),
    OpCase("lax_reduce_min", lambda x: lax.reduce_min(x, (1,)), gen(randn(3, 4)),
           lambda x: np.min(x, axis=1)),
    OpCase("lax_reduce_prod", lambda x: lax.reduce_prod(x, (0,)), gen(randn(4, 3)),
           lambda x: np.prod(x, axis=0)),
    OpCase("lax_reduce_and_or", lambda x: (lax.reduce_and(x, (1,)), lax.reduce_or(x, (0,))),
           gen(_bools(3, 4)), lambda x: (np.all(x, axis=1), np.any(x, axis=0)), diff=False),
] + [
    # float16 and bfloat16: accumulated in float32, rounded once (JAX's rule), within one
    # ulp (2**-10, 2**-7 relative)
    OpCase(f"{name}{sfx}", fn, gen(randn(4, 6, dtype=dt, scale=3.0)),
           lambda x, _r=ref, _dt=dt: tuple(np.asarray(v).astype(_dt) if np.asarray(v).dtype.kind
                                           == "f" else v for v in _r(x.astype(np.float32), _dt)),
           diff=False, rtol=ulp, atol=2.0 ** -14)
    for sfx, dt, ulp in (("_f16", np.dtype(np.float16), 2.0 ** -10),
                         ("_bf16", fnp.bfloat16.dtype, 2.0 ** -7))
    for name, fn, ref in [
        ("sum_mean", lambda x: (fnp.sum(x), fnp.mean(x, axis=0), fnp.nansum(x, axis=1)),
         lambda x, dt: (np.sum(x), np.mean(x, axis=0), np.sum(x, axis=1))),
        ("var_std", lambda x: (fnp.var(x, axis=1), fnp.std(x, axis=0, ddof=1)),
         lambda x, dt: (np.var(x, axis=1),
                        np.sqrt(np.var(x, axis=0, ddof=1).astype(dt).astype(np.float32)))),
        ("prod_cumsum", lambda x: (fnp.prod(x / 2, axis=0), fnp.cumsum(x, axis=1),
                                   lax.cumprod(x / 2, 0)),
         lambda x, dt: (np.prod(x / 2, axis=0), np.cumsum(x, 1),
                        np.cumprod((x / 2).astype(dt).astype(np.float32), 0))),
        ("max_min_arg", lambda x: (fnp.max(x, axis=1), lax.reduce_min(x, (0,)), fnp.argmax(x, 0),
                                   lax.cummax(x, 1)),
         lambda x, dt: (np.max(x, 1), np.min(x, 0), np.argmax(x, 0), np.maximum.accumulate(x, 1))),
    ]
]
