"""``functrans.nn.initializers``: jax.nn.initializers' functions. Each factory returns
``init(key, shape, dtype=None) -> array`` (an ``Initializer``; dtype None: float64,
this library's default float, where JAX without x64 gives float32). ``out_sharding``
of ``zeros``/``ones`` changes nothing on one device.

``variance_scaling`` draws with variance ``scale / fan`` (fan from ``mode``), as JAX:
'truncated_normal' divides the standard deviation by that of a standard normal truncated
to [-2, 2]; 'uniform' draws from ``[-sqrt(3 var), sqrt(3 var)]``. Complex dtypes draw
as JAX's: 'uniform' on a disk, 'truncated_normal' a complex normal of modulus <= 2
(scaled by JAX's constant 0.9531). ``orthogonal`` makes
the Q factor of a QR of normal draws in the requested dtype, each column's sign made
that of R's diagonal entry (JAX's construction). Every initializer draws JAX's values
for the same key (tests/test_nn_jax_names.py, stored JAX draws).

>>> from functrans import random
>>> from functrans.nn import initializers
>>> initializers.glorot_normal()(random.key(0), (3, 4)).shape
(3, 4)
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from .. import numpy as fnp
from .. import random
from ..typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]


# the type of an initializer: ``init(key, shape, dtype=None) -> Array`` (JAX's is a
# Protocol of that call)
Initializer = Callable[..., Array]


def _float_or(dtype):
    """``dtype``, or the default float (float64) for None. Scale factors are made arrays
    of this dtype, as JAX's: a float32 ``scale`` must not promote bfloat16 draws."""
    return np.dtype(np.float64) if dtype is None else dtype


def zeros(key: Array, shape: Shape, dtype: DTypeLike | None = None,
          out_sharding: object | None = None) -> Array:
    """All zeros.

    >>> zeros(None, (2,)).tolist()
    [0.0, 0.0]
    """
    return fnp.zeros(shape, dtype)


def ones(key: Array, shape: Shape, dtype: DTypeLike | None = None,
         out_sharding: object | None = None) -> Array:
    """All ones.

    >>> ones(None, (2,)).tolist()
    [1.0, 1.0]
    """
    return fnp.ones(shape, dtype)


def constant(value: ArrayLike, dtype: DTypeLike | None = None) -> Callable[..., Array]:
    """An initializer filling with ``value``.

    >>> constant(0.5)(None, (2,)).tolist()
    [0.5, 0.5]
    """
    def init(key, shape, dtype=dtype):
        return fnp.full(shape, value, np.float64 if dtype is None else dtype)
    return init


def uniform(scale: float = 1e-2, dtype: DTypeLike | None = None) -> Callable[..., Array]:
    """Uniform on ``[0, scale)``.

    >>> from functrans import random
    >>> bool((uniform(2.0)(random.key(0), (5,)) < 2.0).all())
    True
    """
    def init(key, shape, dtype=dtype):
        dtype = _float_or(dtype)
        return random.uniform(key, shape, dtype) * fnp.array(scale, dtype)
    return init


def normal(stddev: float = 1e-2, dtype: DTypeLike | None = None) -> Callable[..., Array]:
    """Normal with mean 0 and standard deviation ``stddev``.

    >>> from functrans import random
    >>> normal(1.0)(random.key(0), (2, 2)).shape
    (2, 2)
    """
    def init(key, shape, dtype=dtype):
        dtype = _float_or(dtype)
        return random.normal(key, shape, dtype) * fnp.array(stddev, dtype)
    return init


def truncated_normal(stddev: float = 1e-2, dtype: DTypeLike | None = None,
                     lower: float = -2.0, upper: float = 2.0) -> Callable[..., Array]:
    """``stddev`` times a standard normal truncated to ``[lower, upper]``.

    >>> from functrans import random
    >>> bool((abs(truncated_normal(1.0)(random.key(0), (100,))) <= 2.0).all())
    True
    """
    def init(key, shape, dtype=dtype):
        dtype = _float_or(dtype)
        return (random.truncated_normal(key, lower, upper, shape, dtype)
                * fnp.array(stddev, dtype))
    return init


def _fans(shape, in_axis, out_axis, batch_axis):
    nd = len(shape)
    if nd < 2 and isinstance(in_axis, int) and in_axis == -2:
        # explicit axes (even empty ones: fan 1) work at any rank, as JAX's
        raise ValueError(f"variance_scaling: a shape of rank {nd} needs an explicit "
                         f"in_axis (the default -2 needs rank >= 2), got {shape}")
    def axes(name, ax):
        ax = (ax,) if isinstance(ax, int) else tuple(ax)
        if any(not -nd <= a < nd for a in ax):   # a % nd took the fan of another axis
            raise ValueError(f"variance_scaling: {name} {ax} out of range for shape {shape}")
        return [a % nd for a in ax]
    in_axes, out_axes = axes("in_axis", in_axis), axes("out_axis", out_axis)
    b_axes = axes("batch_axis", batch_axis)
    receptive = math.prod(s for i, s in enumerate(shape)
                          if i not in in_axes + out_axes + b_axes)
    fan_in = math.prod(shape[i] for i in in_axes) * receptive
    fan_out = math.prod(shape[i] for i in out_axes) * receptive
    return fan_in, fan_out


def _truncated_std(lo=-2.0, hi=2.0):
    """Standard deviation of a standard normal truncated to [lo, hi]."""
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    z = cdf(hi) - cdf(lo)
    mean = (pdf(lo) - pdf(hi)) / z
    var = 1 + (lo * pdf(lo) - hi * pdf(hi)) / z - mean * mean
    return math.sqrt(var)


# JAX's correction for the complex truncated normal, its literal: sqrt(1 - 5 e^-4) to
# 1e-13, the square root of E[|z|^2; |z| <= 2] for a complex standard normal without
# dividing by P(|z| <= 2) (the truncated distribution's own deviation is 0.9620). Kept to
# draw JAX's numbers: complex 'truncated_normal' weights have deviation 1.009 sqrt(scale/n).
_CSTD2 = 0.95311164380491208


def _polar(key, shape, dtype, radius):
    """Complex draws ``radius(u) * exp(i 2 pi v)`` for independent uniforms u, v (JAX's
    construction of its complex initializers: the first split key draws the modulus)."""
    real = np.finfo(np.dtype(dtype)).dtype
    cdt = np.result_type(real, np.complex64)
    k_r, k_theta = random.split(key)
    r = radius(random.uniform(k_r, shape, real).astype(cdt))
    theta = 2 * np.pi * random.uniform(k_theta, shape, real).astype(cdt)
    return r * fnp.exp(1j * theta)


def _complex_uniform(key, shape, dtype):
    """Uniform on the disk of radius sqrt(2) (zero mean, E|z|^2 = 1)."""
    return _polar(key, shape, dtype, lambda u: fnp.sqrt(2 * u))


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex standard normal (E|z|^2 = 1 before truncation) conditioned on
    ``|z| <= upper``, by inverting the CDF ``1 - exp(-r^2)`` of the modulus."""
    real = np.finfo(np.dtype(dtype)).dtype
    cdt = np.result_type(real, np.complex64)
    mass = 1 - fnp.exp(fnp.array(-(upper ** 2), cdt))
    return _polar(key, shape, dtype, lambda u: fnp.sqrt(-fnp.log(1 - mass * u)))


def variance_scaling(scale: float, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (),
                     dtype: DTypeLike | None = None) -> Callable[..., Array]:
    """Samples with variance ``scale / n``, ``n`` the fan of ``mode`` ('fan_in',
    'fan_out', 'fan_avg', 'fan_geo_avg'); ``distribution`` is 'truncated_normal',
    'normal' or 'uniform'.

    >>> from functrans import random
    >>> w = variance_scaling(1.0, "fan_in", "normal")(random.key(0), (400, 300))
    >>> round(float(w.var() * 400), 1)
    1.0
    """
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"variance_scaling: invalid mode {mode!r}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"variance_scaling: invalid distribution {distribution!r}")

    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        denom = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                 "fan_geo_avg": math.sqrt(fan_in * fan_out)}[mode]
        dtype = _float_or(dtype)
        # JAX's rounding: the variance is an array of ``dtype``, its square root and
        # the truncation correction are taken in that dtype
        variance = fnp.array(scale / denom, dtype)
        cplx = fnp.issubdtype(dtype, fnp.complexfloating)
        if distribution == "truncated_normal":
            std = fnp.sqrt(variance) / fnp.array(_CSTD2 if cplx else _truncated_std(), dtype)
            if cplx:
                return _complex_truncated_normal(key, 2.0, shape, dtype) * std
            return random.truncated_normal(key, -2, 2, shape, dtype) * std
        if distribution == "normal":
            return random.normal(key, shape, dtype) * fnp.sqrt(variance)
        if cplx:
            return _complex_uniform(key, shape, dtype) * fnp.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * fnp.sqrt(3 * variance)
    return init


def _named(mode, dist, scale, name):
    def factory(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                batch_axis: int | Sequence[int] = (),
                dtype: DTypeLike | None = None) -> Callable[..., Array]:
        return variance_scaling(scale, mode, dist, in_axis, out_axis, batch_axis, dtype)
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"``variance_scaling({scale}, {mode!r}, {dist!r})``.\n\n"
                       f"    >>> from functrans import random\n"
                       f"    >>> {name}()(random.key(0), (3, 2)).shape\n    (3, 2)\n    ")
    return factory


glorot_uniform = _named("fan_avg", "uniform", 1.0, "glorot_uniform")
glorot_normal = _named("fan_avg", "truncated_normal", 1.0, "glorot_normal")
lecun_uniform = _named("fan_in", "uniform", 1.0, "lecun_uniform")
lecun_normal = _named("fan_in", "truncated_normal", 1.0, "lecun_normal")
he_uniform = _named("fan_in", "uniform", 2.0, "he_uniform")
he_normal = _named("fan_in", "truncated_normal", 2.0, "he_normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: float = 1.0, column_axis: int = -1,
               dtype: DTypeLike | None = None) -> Callable[..., Array]:
    """A (scaled) matrix with orthonormal rows or columns, reshaped to ``shape``.

    >>> from functrans import random
    >>> import numpy as np
    >>> w = orthogonal()(random.key(0), (4, 3))
    >>> bool(np.allclose(np.asarray(w).T @ np.asarray(w), np.eye(3)))
    True
    """
    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        if len(shape) < 2:
            raise ValueError(f"orthogonal: needs a shape of rank >= 2, got {shape}")
        if 0 in shape:
            return fnp.zeros(shape, np.float64 if dtype is None else dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        tall = (max(n_rows, n_cols), min(n_rows, n_cols))
        z = random.normal(key, tall, np.float64 if dtype is None else dtype)
        q, r = fnp.linalg.qr(z)
        q = q * fnp.sign(fnp.diagonal(r))[None, :]
        if n_rows < n_cols:
            q = q.T
        rest = tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape))
        q = fnp.reshape(q, rest + (n_cols,))
        q = fnp.moveaxis(q, -1, column_axis)
        return fnp.asarray(q * scale, dtype)
    return init


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1,
                     dtype: DTypeLike | None = None) -> Callable[..., Array]:
    """Convolution kernels (rank 3 to 5, in <= out channels) that are zero except an
    orthogonal matrix at the spatial centre.

    >>> from functrans import random
    >>> w = delta_orthogonal()(random.key(0), (3, 2, 2))
    >>> float(abs(w[0]).sum())
    0.0
    """
    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        if len(shape) not in (3, 4, 5):
            raise ValueError(f"delta_orthogonal: needs rank 3 to 5, got {shape}")
        if shape[-2] > shape[-1]:
            raise ValueError("delta_orthogonal: in channels must not exceed out channels")
        ortho = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        # JAX's centre (k - 1) // 2: for an even kernel size the earlier of the two
        centre = tuple((s - 1) // 2 for s in shape[:-2])
        return fnp.zeros(shape, dtype).at[centre].set(ortho)
    return init
