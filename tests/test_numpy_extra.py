"""One table drives the checks of the jax.numpy functions composed in
functrans/numpy/_extra_*.py, _statistics.py, _polynomial.py, _setops.py, _gather_ops.py and
_misc.py: value against numpy, jit against eager, vmap against a Python loop, and (for
differentiable rows) the gradient against central finite differences."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

rng = np.random.default_rng(0)


def R(*shape):
    return rng.normal(size=shape)


def P(*shape):
    return rng.uniform(0.5, 2.0, size=shape)


def I(*shape, hi=5):
    return rng.integers(0, hi, size=shape)


# name, functrans function, numpy reference, args, differentiable
ROWS = [
    ("logaddexp", fnp.logaddexp, np.logaddexp, [R(5), R(5)], True),
    ("logaddexp2", fnp.logaddexp2, np.logaddexp2, [R(5), R(5)], True),
    ("fabs", fnp.fabs, np.fabs, [R(5)], True),
    ("sinc", fnp.sinc, np.sinc, [np.array([0.0, 0.3, -1.7, 2.5])], True),
    ("angle", fnp.angle, np.angle, [R(5)], False),
    ("nan_to_num", fnp.nan_to_num, np.nan_to_num, [np.array([np.nan, np.inf, -np.inf, 1.5])],
     False),
    ("isclose", fnp.isclose, np.isclose, [np.array([1.0, 1.1, np.inf]),
                                         np.array([1.0 + 1e-9, 1.0, np.inf])], False),
    ("allclose", fnp.allclose, np.allclose, [R(4), R(4)], False),
    ("array_equal", fnp.array_equal, np.array_equal, [I(4), I(4, hi=2)], False),
    ("copysign", fnp.copysign, np.copysign, [R(5), np.array([-1.0, 0.0, -0.0, 2.0, -3.0])],
     False),
    ("signbit", fnp.signbit, np.signbit, [np.array([-0.0, 0.0, -1.0, 2.0])], False),
    ("trunc", fnp.trunc, np.trunc, [R(6) * 3], False),
    ("fmod", fnp.fmod, np.fmod, [np.array([-7, 7, -7, 7]), np.array([2, -2, -2, 2])], False),
    ("fmod_f", fnp.fmod, np.fmod, [R(5) * 4, P(5)], True),
    ("heaviside", fnp.heaviside, np.heaviside, [np.array([-1.0, 0.0, 2.0]), P(3)], False),
    ("float_power", fnp.float_power, np.float_power, [P(4), R(4)], True),
    ("modf", fnp.modf, np.modf, [R(5) * 3], False),
    ("ldexp", fnp.ldexp, np.ldexp, [R(4), I(4)], False),
    ("frexp", fnp.frexp, np.frexp, [np.array([8.0, -3.0, 0.0, 1e-310, 0.1, np.inf])], False),
    ("gcd", fnp.gcd, np.gcd, [I(6, hi=50), I(6, hi=50)], False),
    ("lcm", fnp.lcm, np.lcm, [I(6, hi=20), I(6, hi=20)], False),
    ("append", fnp.append, np.append, [R(3), R(2, 2)], True),
    ("append_axis", lambda a, b: fnp.append(a, b, axis=0),
     lambda a, b: np.append(a, b, axis=0), [R(2, 3), R(1, 3)], True),
    ("diff", lambda a: fnp.diff(a, n=2), lambda a: np.diff(a, n=2), [R(3, 5)], True),
    ("diff_pre", lambda a: fnp.diff(a, axis=0, prepend=1.0),
     lambda a: np.diff(a, axis=0, prepend=1.0), [R(3, 2)], True),
    ("ediff1d", lambda a: fnp.ediff1d(a, to_begin=0.0, to_end=[1.0, 2.0]),
     lambda a: np.ediff1d(a, to_begin=0.0, to_end=[1.0, 2.0]), [R(4)], True),
    ("kron", fnp.kron, np.kron, [R(2, 3), R(3, 2)], True),
    ("cross", fnp.cross, np.cross, [R(4, 3), R(4, 3)], True),
    ("cross2", fnp.cross, np.cross, [R(4, 2), R(4, 3)], True),
    ("rot90", lambda a: fnp.rot90(a, 1), lambda a: np.rot90(a, 1), [R(2, 3, 2)], True),
    ("rot90_3", lambda a: fnp.rot90(a, 3, (1, 2)), lambda a: np.rot90(a, 3, (1, 2)),
     [R(2, 3, 2)], True),
    ("insert", lambda a, v: fnp.insert(a, [1, 3, 1], v), lambda a, v: np.insert(a, [1, 3, 1], v),
     [R(4), R(3)], True),
    ("insert_axis", lambda a, v: fnp.insert(a, 1, v, axis=1),
     lambda a, v: np.insert(a, 1, v, axis=1), [R(2, 3), R(2)], True),
    ("delete", lambda a: fnp.delete(a, [0, 2], axis=1), lambda a: np.delete(a, [0, 2], axis=1),
     [R(2, 4)], True),
    ("delete_slice", lambda a: fnp.delete(a, slice(0, None, 2)),
     lambda a: np.delete(a, slice(0, None, 2)), [R(5)], True),
    ("block", lambda a, b: fnp.block([[a, b], [b, a]]), lambda a, b: np.block([[a, b], [b, a]]),
     [R(2, 2), R(2, 2)], True),
    ("meshgrid", lambda a, b: fnp.meshgrid(a, b), lambda a, b: np.meshgrid(a, b),
     [R(3), R(2)], True),
    ("meshgrid_ij", lambda a, b: fnp.meshgrid(a, b, indexing="ij"),
     lambda a, b: np.meshgrid(a, b, indexing="ij"), [R(3), R(2)], True),
    ("vander", lambda a: fnp.vander(a, 4), lambda a: np.vander(a, 4), [R(3)], True),
    ("select", lambda x: fnp.select([x < 0, x > 1], [x, x ** 2], 0.5),
     lambda x: np.select([x < 0, x > 1], [x, x ** 2], 0.5), [R(6)], True),
    ("piecewise", lambda x: fnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]),
     lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2]), [R(6)], True),
    ("diagflat", fnp.diagflat, np.diagflat, [R(3)], True),
    ("rollaxis", lambda a: fnp.rollaxis(a, 2, 1), lambda a: np.rollaxis(a, 2, 1),
     [R(2, 3, 4)], True),
    ("matrix_transpose", fnp.matrix_transpose, lambda a: np.swapaxes(a, -1, -2), [R(2, 3, 4)],
     True),
    ("unstack", fnp.unstack, lambda a: tuple(a), [R(3, 2)], True),
    ("vecdot", fnp.vecdot, np.vecdot, [R(2, 3), R(3)], True),
    ("matvec", fnp.matvec, np.matvec, [R(2, 3), R(3)], True),
    ("vecmat", fnp.vecmat, np.vecmat, [R(3), R(3, 2)], True),
    ("cumulative_sum", lambda a: fnp.cumulative_sum(a, axis=1, include_initial=True),
     lambda a: np.cumulative_sum(a, axis=1, include_initial=True), [R(2, 3)], True),
    ("cumulative_prod", lambda a: fnp.cumulative_prod(a, axis=0),
     lambda a: np.cumulative_prod(a, axis=0), [R(2, 3)], True),
    ("count_nonzero", lambda a: fnp.count_nonzero(a, axis=0),
     lambda a: np.count_nonzero(a, axis=0), [I(3, 4, hi=2)], False),
    ("apply_along_axis", lambda a: fnp.apply_along_axis(lambda v: v * fnp.sum(v), 1, a),
     lambda a: np.apply_along_axis(lambda v: v * np.sum(v), 1, a), [R(2, 3, 2)], True),
    ("apply_over_axes", lambda a: fnp.apply_over_axes(fnp.sum, a, [0, 2]),
     lambda a: np.apply_over_axes(np.sum, a, [0, 2]), [R(2, 3, 2)], True),
    ("quantile", lambda a, q: fnp.quantile(a, q, axis=1), lambda a, q: np.quantile(a, q, axis=1),
     [R(3, 7), np.array([0.1, 0.55, 0.93])], True),
    ("quantile_methods", lambda a: [fnp.quantile(a, 0.3, method=m) for m in
                                    ("lower", "higher", "nearest", "midpoint")],
     lambda a: [np.quantile(a, 0.3, method=m) for m in ("lower", "higher", "nearest",
                                                        "midpoint")], [R(8)], False),
    ("percentile", lambda a: fnp.percentile(a, 30, axis=0, keepdims=True),
     lambda a: np.percentile(a, 30, axis=0, keepdims=True), [R(5, 2)], True),
    ("median", lambda a: fnp.median(a, axis=(0, 2)), lambda a: np.median(a, axis=(0, 2)),
     [R(2, 3, 3)], True),
    ("median_nan", fnp.median, np.median, [np.array([1.0, np.nan, 2.0])], False),
    ("nanmedian", lambda a: fnp.nanmedian(a, axis=1), lambda a: np.nanmedian(a, axis=1),
     [np.array([[1.0, np.nan, 2.0, 5.0], [3.0, 1.0, np.nan, np.nan]])], True),
    ("nanquantile", lambda a: fnp.nanquantile(a, 0.7), lambda a: np.nanquantile(a, 0.7),
     [np.array([1.0, np.nan, 2.0, 5.0])], True),
    ("nanpercentile", lambda a: fnp.nanpercentile(a, 20), lambda a: np.nanpercentile(a, 20),
     [np.array([1.0, np.nan, 2.0, 5.0])], True),
    ("nanmean", lambda a: fnp.nanmean(a, axis=0), lambda a: np.nanmean(a, axis=0),
     [np.array([[1.0, np.nan], [3.0, 4.0]])], True),
    ("nanvar", lambda a: fnp.nanvar(a, ddof=1), lambda a: np.nanvar(a, ddof=1),
     [np.array([1.0, np.nan, 3.0, 7.0])], True),
    ("nanstd", fnp.nanstd, np.nanstd, [np.array([1.0, np.nan, 3.0, 7.0])], True),
    ("nanmax", lambda a: fnp.nanmax(a, axis=1), lambda a: np.nanmax(a, axis=1),
     [np.array([[1.0, np.nan], [3.0, 4.0]])], True),
    ("nanmin", fnp.nanmin, np.nanmin, [np.array([1.0, np.nan, -3.0])], True),
    ("nanprod", fnp.nanprod, np.nanprod, [np.array([1.5, np.nan, -3.0])], True),
    ("nanargmax", fnp.nanargmax, np.nanargmax, [np.array([1.5, np.nan, 3.0])], False),
    ("nanargmin", lambda a: fnp.nanargmin(a, axis=0), lambda a: np.nanargmin(a, axis=0),
     [np.array([[1.5, np.nan], [0.0, 2.0]])], False),
    ("nancumsum", fnp.nancumsum, np.nancumsum, [np.array([1.5, np.nan, 3.0])], True),
    ("nancumprod", fnp.nancumprod, np.nancumprod, [np.array([1.5, np.nan, 3.0])], True),
    ("cov", fnp.cov, np.cov, [R(3, 6)], True),
    # numpy >= 2.2 / JAX: a one-row 2-d m with rowvar=False is 3 variables, not 1
    ("cov_one_row_cols", lambda m: fnp.cov(m, rowvar=False, bias=True),
     lambda m: np.cov(m, rowvar=False, bias=True), [R(1, 3)], True),
    # no samples / too few degrees of freedom: divide by 0 (nan, inf), not by n - ddof < 0
    ("cov_no_samples", fnp.cov, np.cov, [np.zeros((3, 0))], False),
    ("cov_ddof_too_big", lambda m: fnp.cov(m, ddof=5), lambda m: np.cov(m, ddof=5), [R(2, 4)],
     False),
    ("cov_weights_ddof_too_big", lambda m, w: fnp.cov(m, ddof=9, fweights=[1, 2, 1, 3]),
     lambda m, w: np.cov(m, ddof=9, fweights=[1, 2, 1, 3]), [R(2, 4), P(4)], False),
    ("cov_weights", lambda m, w: fnp.cov(m, rowvar=False, aweights=w, fweights=[1, 2, 1, 3]),
     lambda m, w: np.cov(m, rowvar=False, aweights=w, fweights=[1, 2, 1, 3]), [R(4, 2), P(4)],
     True),
    ("corrcoef", fnp.corrcoef, np.corrcoef, [R(3, 6)], True),
    ("searchsorted", lambda a, v: fnp.searchsorted(a, v, side="right"),
     lambda a, v: np.searchsorted(a, v, side="right"),
     [np.array([1.0, 2.0, 2.0, 3.0, np.nan]), np.array([2.0, 0.0, 9.0, np.nan])], False),
    ("searchsorted_l", fnp.searchsorted, np.searchsorted,
     [np.array([1.0, 2.0, 2.0, 3.0, np.nan]), np.array([2.0, 0.0, 9.0, np.nan])], False),
    ("digitize", fnp.digitize, np.digitize, [R(6), np.array([-1.0, 0.0, 1.0])], False),
    ("digitize_dec", lambda x, b: fnp.digitize(x, b, right=True),
     lambda x, b: np.digitize(x, b, right=True), [R(6), np.array([1.0, 0.0, -1.0])], False),
    ("bincount", lambda x, w: fnp.bincount(x, w, length=6),
     lambda x, w: np.bincount(x, w, minlength=6), [I(8), R(8)], True),
    # JAX (unlike NumPy) counts in a's float dtype
    ("histogram", lambda a: fnp.histogram(a, 4),
     lambda a: (np.histogram(a, 4)[0].astype(a.dtype), np.histogram(a, 4)[1]), [R(20)], False),
    ("histogram_d", lambda a: fnp.histogram(a, 4, range=(-1, 1), density=True),
     lambda a: np.histogram(a, 4, range=(-1, 1), density=True), [R(20)], False),
    ("histogram_bin_edges", lambda a: fnp.histogram_bin_edges(a, 3),
     lambda a: np.histogram_bin_edges(a, 3), [R(9)], True),
    # JAX (unlike NumPy) gives integer counts from histogram2d/dd without weights
    ("histogram2d", lambda x, y: fnp.histogram2d(x, y, 3),
     lambda x, y: (np.histogram2d(x, y, 3)[0].astype(np.int64),) + np.histogram2d(x, y, 3)[1:],
     [R(10), R(10)], False),
    ("interp", fnp.interp, np.interp, [np.linspace(-1, 4, 7), np.array([0.0, 1.0, 2.5, 3.0]),
                                       R(4)], True),
    ("interp_period", lambda x, xp, fp: fnp.interp(x, xp, fp, period=3.0),
     lambda x, xp, fp: np.interp(x, xp, fp, period=3.0),
     [np.linspace(-1, 4, 7) + 0.013, np.array([0.2, 1.0, 2.5]), R(3)], True),
    ("convolve", fnp.convolve, np.convolve, [R(5), R(3)], True),
    ("convolve_same", lambda a, v: fnp.convolve(a, v, "same"),
     lambda a, v: np.convolve(a, v, "same"), [R(3), R(6)], True),
    ("convolve_valid", lambda a, v: fnp.convolve(a, v, "valid"),
     lambda a, v: np.convolve(a, v, "valid"), [R(6), R(4)], True),
    ("correlate", fnp.correlate, np.correlate, [R(5), R(3)], True),
    ("correlate_full", lambda a, v: fnp.correlate(a, v, "full"),
     lambda a, v: np.correlate(a, v, "full"), [R(3), R(5)], True),
    ("correlate_same", lambda a, v: fnp.correlate(a, v, "same"),
     lambda a, v: np.correlate(a, v, "same"), [R(5), R(3)], True),
    ("correlate_same2", lambda a, v: fnp.correlate(a, v, "same"),
     lambda a, v: np.correlate(a, v, "same"), [R(3), R(6)], True),
    ("correlate_same3", lambda a, v: fnp.correlate(a, v, "same"),
     lambda a, v: np.correlate(a, v, "same"), [R(2), R(5)], True),
    ("gradient", fnp.gradient, np.gradient, [R(3, 4)], True),
    ("gradient_h", lambda a: fnp.gradient(a, 0.5, axis=1), lambda a: np.gradient(a, 0.5, axis=1),
     [R(3, 4)], True),
    ("trapezoid", fnp.trapezoid, np.trapezoid, [R(3, 5)], True),
    ("trapezoid_x", lambda y, x: fnp.trapezoid(y, x), lambda y, x: np.trapezoid(y, x),
     [R(5), np.cumsum(P(5))], True),
    ("unwrap", fnp.unwrap, np.unwrap, [np.cumsum(R(8) * 3)], True),
    ("polyval", fnp.polyval, np.polyval, [R(4), R(5)], True),
    # n-d p (one polynomial per trailing index), as JAX's odeint interpolates with
    ("polyval_nd", fnp.polyval, np.polyval, [R(4, 3), R(2, 3)], True),
    ("polyfit", lambda x, y: fnp.polyfit(x, y, 2), lambda x, y: np.polyfit(x, y, 2),
     [np.linspace(0, 2, 6), R(6)], True),
    ("polyadd", fnp.polyadd, np.polyadd, [R(3), R(5)], True),
    ("polysub", fnp.polysub, np.polysub, [R(3), R(5)], True),
    ("polymul", fnp.polymul, np.polymul, [R(3), R(4)], True),
    ("polyder", lambda p: fnp.polyder(p, 2), lambda p: np.polyder(p, 2), [R(5)], True),
    ("polyint", lambda p: fnp.polyint(p, 2, k=[1.0, 2.0]), lambda p: np.polyint(p, 2, k=[1.0, 2.0]),
     [R(3)], True),
    ("polydiv", fnp.polydiv, lambda u, v: (np.polydiv(u, v)[0], _pad_front(np.polydiv(u, v)[1], 5)),
     [R(5), R(3) + np.array([3.0, 0, 0])], True),
    ("poly", fnp.poly, np.poly, [R(3)], True),
    ("partition_kth", lambda a: fnp.partition(a, 2)[..., 2], lambda a: np.partition(a, 2)[..., 2],
     [R(3, 6)], True),
    ("argpartition_kth", lambda a: fnp.take_along_axis(a, fnp.argpartition(a, 3), -1)[..., 3],
     lambda a: np.take_along_axis(a, np.argpartition(a, 3), -1)[..., 3], [R(3, 6)], False),
    ("nonzero", lambda a: fnp.nonzero(a, size=5, fill_value=-1),
     lambda a: tuple(np.pad(v, (0, 5 - len(v)), constant_values=-1)[:5] for v in np.nonzero(a)),
     [I(2, 3, hi=2)], False),
    ("flatnonzero", lambda a: fnp.flatnonzero(a, size=3),
     lambda a: np.pad(np.flatnonzero(a), (0, 6))[:3], [I(6, hi=2)], False),
    ("argwhere", lambda a: fnp.argwhere(a, size=7, fill_value=0),
     lambda a: np.pad(np.argwhere(a), ((0, 7), (0, 0)))[:7], [I(2, 3, hi=2)], False),
    ("extract", lambda c, a: fnp.extract(c, a, size=6),
     lambda c, a: np.pad(np.extract(c, a), (0, 6))[:6], [I(6, hi=2), R(6)], True),
    ("compress", lambda c, a: fnp.compress(c, a, axis=1, size=4),
     lambda c, a: np.pad(np.compress(c, a, axis=1), ((0, 0), (0, 4)))[:, :4],
     [I(4, hi=2), R(2, 4)], True),
    ("unique", lambda a: fnp.unique(a, True, True, True, size=8, fill_value=-1),
     lambda a: _padded_unique(a, 8, -1), [I(7)], False),
    ("isin", fnp.isin, np.isin, [I(3, 4), I(3)], False),
    ("intersect1d", lambda a, b: fnp.intersect1d(a, b, size=5, fill_value=-1),
     lambda a, b: _pad(np.intersect1d(a, b), 5, -1), [I(6), I(4)], False),
    ("union1d", lambda a, b: fnp.union1d(a, b, size=9, fill_value=-1),
     lambda a, b: _pad(np.union1d(a, b), 9, -1), [I(6), I(4, hi=9)], False),
    ("setdiff1d", lambda a, b: fnp.setdiff1d(a, b, size=5, fill_value=-1),
     lambda a, b: _pad(np.setdiff1d(a, b), 5, -1), [I(6), I(3)], False),
    ("setxor1d", lambda a, b: fnp.setxor1d(a, b, size=9, fill_value=-1),
     lambda a, b: _pad(np.setxor1d(a, b), 9, -1), [I(6), I(4, hi=9)], False),
    ("choose", lambda a, b, c: fnp.choose(a, [b, c], mode="clip"),
     lambda a, b, c: np.choose(a, [b, c], mode="clip"), [I(5, hi=3), R(5), R(5)], True),
    ("lexsort", lambda a, b: fnp.lexsort((a, b)), lambda a, b: np.lexsort((a, b)),
     [I(8, hi=3), I(8, hi=3)], False),
    ("sort_complex", lambda a, b: fnp.sort_complex(a + 1j * b),
     lambda a, b: np.sort_complex(a + 1j * b), [I(6, hi=3) * 1.0, R(6)], False),
    ("top_k", lambda a: fnp.top_k(a, 3), lambda a: (-np.sort(-a)[..., :3], np.argsort(
        -a, kind="stable")[..., :3]), [R(2, 6)], True),
    ("resize", lambda a: fnp.resize(a, (3, 3)), lambda a: np.resize(a, (3, 3)), [R(4)], True),
    ("ravel_multi_index", lambda i, j: fnp.ravel_multi_index((i, j), (5, 5), mode="clip"),
     lambda i, j: np.ravel_multi_index((i, j), (5, 5), mode="clip"), [I(4), I(4)], False),
    ("unravel_index", lambda i: fnp.unravel_index(i, (3, 4)),
     lambda i: np.unravel_index(i, (3, 4)), [I(5, hi=12)], False),
    ("put", lambda a, v: fnp.put(a, np.array([0, 3]), v, mode="clip", inplace=False),
     lambda a, v: _put(a, np.array([0, 3]), v), [R(2, 3), R(2)], True),
    ("put_along_axis", lambda a, i, v: fnp.put_along_axis(a, i, v, 1, inplace=False),
     lambda a, i, v: _put_along(a, i, v, 1), [R(3, 4), I(3, 1, hi=4), R(3, 1)], True),
    ("fill_diagonal", lambda a, v: fnp.fill_diagonal(a, v, inplace=False),
     lambda a, v: _fill_diag(a, v), [R(3, 3), np.asarray(R(1)[0])], True),
    ("bitwise_count", fnp.bitwise_count, np.bitwise_count, [rng.integers(-99, 99, 6)], False),
    # overflowing products wrap as numpy's and JAX's |x1| / gcd * |x2| (abs taken first)
    ("lcm_int8_wraps", fnp.lcm, np.lcm, [np.array([34, -61, 100, 6], np.int8),
                                         np.array([102, 2, 55, 4], np.int8)], False),
    ("gcd_pyint_int32", lambda b: fnp.gcd(6, b), lambda b: np.gcd(6, b),
     [np.array([4, 9, -3], np.int32)], False),
    ("lcm_pyint_int32", lambda b: fnp.lcm(6, b), lambda b: np.lcm(6, b),
     [np.array([4, 9, -3], np.int32)], False),
    ("bitwise_count_u64", fnp.bitwise_count, np.bitwise_count,
     [np.array([2**64 - 1, 2**63, 2**63 + 5, 7, 0], np.uint64)], False),
    ("bitwise_count_i64", fnp.bitwise_count, np.bitwise_count,
     [np.array([-2**63, -1, 2**63 - 1, 5], np.int64)], False),
    ("geomspace", lambda a, b: fnp.geomspace(a, b, 5), lambda a, b: np.geomspace(a, b, 5),
     [np.asarray(1.5), np.asarray(40.0)], True),
    ("logspace", lambda a, b: fnp.logspace(a, b, 4, endpoint=False),
     lambda a, b: np.logspace(a, b, 4, endpoint=False), [np.asarray(0.5), np.asarray(2.0)], True),
    ("nextafter", fnp.nextafter, np.nextafter,
     [np.array([0.0, -0.0, 1.0, -1.0, 1e-310, np.inf, np.nan, 3.0]),
      np.array([1.0, -1.0, 0.0, 2.0, -1.0, 0.0, 1.0, 3.0])], False),
    ("nextafter_f32", fnp.nextafter, np.nextafter,
     [np.array([0.0, 1.0, -1.0, 3e38], np.float32), np.array([-1.0, 2.0, -2.0, np.inf],
                                                           np.float32)], False),
    ("spacing", fnp.spacing, np.spacing,
     [np.array([0.0, -0.0, 1.0, -1.0, 1e-310, np.inf, np.nan, 3.0, 1e300])], False),
    ("array_equiv", lambda a, b: fnp.array_equiv(a, b), np.array_equiv, [I(2, 3, hi=2), I(3, hi=2)],
     False),
    ("isposinf", fnp.isposinf, np.isposinf, [np.array([np.inf, -np.inf, 1.0, np.nan])], False),
    ("isneginf", fnp.isneginf, np.isneginf, [np.array([np.inf, -np.inf, 1.0, np.nan])], False),
    ("isreal", lambda a, b: fnp.isreal(a + 1j * b), lambda a, b: np.isreal(a + 1j * b),
     [R(4), np.array([0.0, 1.0, 0.0, -2.0])], False),
    ("iscomplex", lambda a, b: fnp.iscomplex(a + 1j * b), lambda a, b: np.iscomplex(a + 1j * b),
     [R(4), np.array([0.0, 1.0, 0.0, -2.0])], False),
    ("fix", fnp.fix, np.fix, [R(5) * 3], False),
    ("divmod", fnp.divmod, np.divmod, [I(5, hi=20) - 10, I(5, hi=4) + 1], False),
    ("r_", lambda a, b: fnp.r_[a, 0.5, b, 1:3], lambda a, b: np.r_[a, 0.5, b, 1:3], [R(2), R(3)],
     True),
    ("c_", lambda a, b: fnp.c_[a, b], lambda a, b: np.c_[a, b], [R(3), R(3)], True),
    ("ix_", lambda x: x[fnp.ix_(np.array([0, 2]), np.array([1, 0]))],
     lambda x: x[np.ix_(np.array([0, 2]), np.array([1, 0]))], [R(3, 2)], True),
    ("permute_dims", lambda a: fnp.permute_dims(a, (2, 0, 1)),
     lambda a: np.permute_dims(a, (2, 0, 1)), [R(2, 3, 4)], True),
    ("astype", lambda a: fnp.astype(a, np.float32), lambda a: a.astype(np.float32), [R(3)], False),
    ("copy", fnp.copy, np.copy, [R(3)], True),
    ("histogramdd", lambda s: fnp.histogramdd(s, bins=(2, 3)),
     lambda s: (np.histogramdd(s, bins=(2, 3))[0].astype(np.int64),
                np.histogramdd(s, bins=(2, 3))[1]),
     [R(12, 2)], False),
    ("i0", fnp.i0, np.i0, [np.array([0.0, -0.7, 2.5, 6.0])], True),
    ("i0_large", fnp.i0, np.i0, [np.array([12.0, -29.0, 31.0, 80.0])], False),
    ("vectorize", fnp.vectorize(lambda a, b: fnp.where(a > b, a, b * 2)),
     np.vectorize(lambda a, b: a if a > b else b * 2), [R(4), R(4)], True),
]


def _pad_front(v, n):
    return np.concatenate([np.zeros(n - len(v)), v])


def _pad(v, n, fill):
    return np.pad(v, (0, max(n - len(v), 0)), constant_values=fill)[:n]


def _padded_unique(a, n, fill):
    v, i, inv, c = np.unique(a, True, True, True)
    # padded first indices repeat the smallest value's, as JAX 0.10.2's
    return _pad(v, n, fill), _pad(i, n, i[0] if len(i) else 0), inv, _pad(c, n, 0)


def _put(a, ind, v):
    a = a.copy()
    np.put(a, ind, v)
    return a


def _put_along(a, i, v, axis):
    a = a.copy()
    np.put_along_axis(a, i, v, axis)
    return a


def _fill_diag(a, v):
    a = a.copy()
    np.fill_diagonal(a, v)
    return a


def _leaves(x):
    return [np.asarray(v) for v in ft.tree_util.tree_leaves(
        list(x) if isinstance(x, tuple) else x)]


def test_i0_accuracy():
    x = np.concatenate([np.linspace(-60, 60, 1201), [1e-8, 30.0, 30.000001, 300.0, 699.0]])
    np.testing.assert_allclose(np.asarray(fnp.i0(x)), np.i0(x), rtol=2e-14)
    assert fnp.i0(np.float32(2.0)).dtype == np.float32
    # the derivative (i1) on both branches, against central differences
    pts = np.array([0.5, 12.0, 29.5, 35.0, 90.0])
    fd = (np.i0(pts * (1 + 1e-7)) - np.i0(pts * (1 - 1e-7))) / (2e-7 * pts)
    np.testing.assert_allclose(np.asarray(ft.vmap(ft.grad(fnp.i0))(pts)), fd, rtol=1e-6)


def _close(got, want, tol=1e-9):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == np.shape(w), (g.shape, np.shape(w))
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)


IDS = [r[0] for r in ROWS]


def test_static_constructors_against_numpy():
    pairs = [(fnp.tril_indices(4, 1, 5), np.tril_indices(4, 1, 5)),
             (fnp.triu_indices(3, -1), np.triu_indices(3, -1)),
             (fnp.tril_indices_from(np.ones((3, 4)), -1), np.tril_indices_from(np.ones((3, 4)), -1)),
             (fnp.triu_indices_from(np.ones((3, 4)), 2), np.triu_indices_from(np.ones((3, 4)), 2)),
             (fnp.diag_indices(3, 3), np.diag_indices(3, 3)),
             (fnp.diag_indices_from(np.ones((2, 2))), np.diag_indices_from(np.ones((2, 2)))),
             (fnp.indices((2, 3)), np.indices((2, 3))),
             (fnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)),
             (fnp.mgrid[0:3, 0:1:4j], np.mgrid[0:3, 0:1:4j]),
             (fnp.ogrid[0:2, 1:4], np.ogrid[0:2, 1:4]),
             (fnp.mask_indices(3, fnp.triu, 1), np.mask_indices(3, np.triu, 1)),
             (fnp.fromfunction(lambda i, j: i * 2 + j, (2, 3)),
              np.fromfunction(lambda i, j: i * 2 + j, (2, 3))),
             (fnp.logspace(0, 3, 4, base=2.0), np.logspace(0, 3, 4, base=2.0)),
             (fnp.geomspace(-1, -100, 3), np.geomspace(-1, -100, 3))]
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        pairs.append((getattr(fnp, name)(7), getattr(np, name)(7)))
    pairs.append((fnp.kaiser(6, 2.5), np.kaiser(6, 2.5)))
    for got, want in pairs:
        _close(got, want, tol=1e-12)
    assert fnp.s_[1:3] == np.s_[1:3] and fnp.index_exp[2] == (2,)
    assert fnp.finfo(fnp.float32).eps == np.finfo(np.float32).eps
    assert fnp.iinfo(fnp.asarray(1)).max == np.iinfo(np.int64).max
    assert fnp.result_type(fnp.ones(2, np.float32), 1.0) == np.float32
    assert fnp.issubdtype(fnp.float32, fnp.floating) and fnp.isdtype(np.int32, "integral")
    assert fnp.iscomplexobj(1j) and fnp.isrealobj(1.0) and fnp.isscalar(fnp.asarray(1.0))
    assert fnp.trim_zeros(fnp.asarray([0, 1, 0, 2, 0]), "b").tolist() == [0, 1, 0, 2]
    with pytest.raises(ft.errors.ConcretizationTypeError, match="size"):   # JAX's class
        ft.jit(lambda a: fnp.nonzero(a))(np.ones(3))
    with pytest.raises(TypeError, match="length"):
        ft.jit(lambda a: fnp.bincount(a))(np.arange(3))
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.put(np.zeros(3), [0], 1.0)
    with pytest.raises(TypeError, match="static"):
        ft.jit(lambda a, i: fnp.insert(a, i, 0.0))(np.ones(3), np.asarray(1))


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_value_against_numpy(row):
    _, f, ref, args, _ = row
    got, want = f(*args), ref(*args)
    _close(got, want)
    for g, w in zip(_leaves(got), _leaves(want)):
        if w.dtype.kind in "fcb" or g.dtype.kind in "fcb":
            assert g.dtype.kind == w.dtype.kind, (g.dtype, w.dtype)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_jit_matches_eager(row):
    _, f, _, args, _ = row
    _close(ft.jit(f, backend="interpret")(*args), f(*args))


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_jit_cpu_backend_matches_eager(row):
    _, f, _, args, _ = row
    _close(ft.jit(f, backend="cpu")(*args), f(*args), tol=1e-12)


def _perturbed(a, k):
    if a.dtype.kind == "f":
        return np.where(np.isfinite(a), a + 0.25 * k * np.cos(np.arange(a.size).reshape(a.shape)),
                        a)
    return a


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_vmap_matches_loop(row):
    _, f, _, args, _ = row
    batches = [[_perturbed(a, k) for a in args] for k in range(3)]
    stacked = [np.stack([b[i] for b in batches]) for i in range(len(args))]
    got = ft.vmap(f)(*stacked)
    want = [f(*b) for b in batches]
    want = ft.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *want)
    _close(got, want)


@pytest.mark.parametrize("row", [r for r in ROWS if r[4]], ids=[r[0] for r in ROWS if r[4]])
def test_grad_against_finite_differences(row):
    _, f, _, args, _ = row
    diff_idx = [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]
    weights = [np.cos(np.arange(np.size(v)) + 1.0).reshape(np.shape(v)) for v in _leaves(f(*args))]

    def scalar(*xs):
        out = f(*xs)
        leaves = ft.tree_util.tree_leaves(list(out) if isinstance(out, tuple) else out)
        return sum(fnp.sum(fnp.where(fnp.isnan(o), 0.0, o) * w)
                   for o, w in zip(leaves, weights) if o.dtype.kind == "f")

    grads = ft.grad(scalar, argnums=tuple(diff_idx))(*args)
    eps = 1e-6
    for gi, i in zip(grads, diff_idx):
        a = np.asarray(args[i], float)
        fd = np.zeros(a.shape)
        for j in np.ndindex(a.shape):
            if not np.isfinite(a[j]):
                continue
            hi, lo = a.copy(), a.copy()
            hi[j] += eps
            lo[j] -= eps
            up = [hi if k == i else v for k, v in enumerate(args)]
            dn = [lo if k == i else v for k, v in enumerate(args)]
            fd[j] = (float(scalar(*up)) - float(scalar(*dn))) / (2 * eps)
        g = np.where(np.isfinite(a), np.asarray(gi), 0.0)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5)
