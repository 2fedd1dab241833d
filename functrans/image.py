"""``jax.image``: ``resize`` and ``scale_and_translate`` (JAX's algorithm: each spatial
axis is resampled by a weight matrix of the kernel evaluated at half-centred pixel
positions, normalised per output pixel; antialiasing widens the kernel when
downsampling), and ``ResizeMethod``. Everything is written with ``functrans.numpy``, so
it differentiates, jits and vmaps; ``scale``/``translation`` may be traced.

Methods: ``nearest``, ``linear`` (``bilinear``, ``trilinear``, ``triangle``),
``cubic`` (Keys, a = -0.5), ``cubic-pytorch`` (OpenCV's a = -0.75 with edge padding
when not antialiased), ``lanczos3``, ``lanczos5``, ``area``.

>>> import functrans.numpy as fnp
>>> resize(fnp.array([0.0, 1.0]), (4,), "linear").tolist()
[0.0, 0.25, 0.75, 1.0]
>>> resize(fnp.arange(3), (6,), "nearest").tolist()
[0, 0, 1, 1, 2, 2]
"""
from __future__ import annotations

import enum
import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from jaxpr_ir import dtype_kind

from . import numpy as fnp
from .typing import Array, ArrayLike, Shape

__all__ = ["resize", "scale_and_translate", "ResizeMethod"]


class ResizeMethod(enum.Enum):
    """Image resize methods (JAX's enum; ``from_string`` reads the names ``resize`` takes).

    >>> ResizeMethod.from_string("bilinear")
    <ResizeMethod.LINEAR: 1>
    """
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method a string names (``ValueError`` for an unknown one).

        >>> ResizeMethod.from_string("lanczos3").name
        'LANCZOS3'
        """
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
                 "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
                 "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
                 "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
                 "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return ResizeMethod[names[s]]


def _lanczos(radius, x):
    y = radius * fnp.sin(np.pi * x) * fnp.sin(np.pi * x / radius)
    out = fnp.where(x > 1e-3, fnp.divide(y, fnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return fnp.where(x > radius, 0., out)


def _keys_cubic(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.
    out = fnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
    return fnp.where(x >= 2., 0., out)


def _opencv_cubic(x):
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = fnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return fnp.where(x >= 2.0, 0.0, out)


def _triangle(x):
    return fnp.maximum(0, 1 - fnp.abs(x))


_AREA = object()
_KERNELS = {ResizeMethod.LINEAR: (1, _triangle),
            ResizeMethod.LANCZOS3: (3, lambda x: _lanczos(3., x)),
            ResizeMethod.LANCZOS5: (5, lambda x: _lanczos(5., x)),
            ResizeMethod.CUBIC: (2, _keys_cubic),
            ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
            ResizeMethod.AREA: (1, _AREA)}


def _normalise(weights):
    total = fnp.sum(weights, axis=0, keepdims=True)
    return fnp.where(fnp.abs(total) > 1000. * float(np.finfo(np.float32).eps),
                     fnp.divide(weights, fnp.where(total != 0, total, 1)), 0)


def _weight_mat(m: int, n: int, scale, translation, kernel: Callable, antialias: bool,
                radius: int | None):
    """The (m, n) matrix taking an axis of m input pixels to n output pixels (JAX's
    ``compute_weight_mat``); ``radius`` set means edge padding (repeat the edge)."""
    dtype = fnp.result_type(scale, translation)
    inv_scale = 1. / scale
    kernel_scale = fnp.maximum(inv_scale, 1.) if antialias else 1.
    sample_f = (fnp.arange(n, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5
    k = 0
    if radius is not None:
        k = math.ceil(radius * max(1.0 / float(scale), 1.0)) if antialias else radius
    expanded = fnp.arange(-k, m + k, dtype=dtype)
    if kernel is _AREA:
        lo_i = fnp.arange(n, dtype=dtype) * inv_scale - translation * inv_scale
        lo_j = fnp.arange(m, dtype=dtype)
        weights = fnp.maximum(0.0, fnp.minimum((lo_i + inv_scale)[None, :],
                                               (lo_j + 1.0)[:, None])
                              - fnp.maximum(lo_i[None, :], lo_j[:, None]))
    else:
        weights = kernel(fnp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale)
    if radius is not None:   # move the mass of the outside pixels onto the edge ones
        rows = fnp.clip(expanded.astype(np.int32), 0, m - 1)
        cols = fnp.broadcast_to(fnp.arange(n), (expanded.shape[0], n))
        mat = fnp.zeros((m, n), dtype).at[rows[:, None], cols].add(weights)
        return _normalise(mat)
    weights = _normalise(weights)
    inside = fnp.logical_and(sample_f >= -0.5, sample_f <= m - 0.5)
    return fnp.where(inside[None, :], weights, 0)


def _apply(x, shape, spatial_dims, scale, translation, kernel, antialias, precision,
           radius=None):
    bad = [d for d in spatial_dims if not -x.ndim <= d < x.ndim]
    if bad:      # d % ndim resized another axis (or none: (8, 4) asked, (4, 4) returned)
        raise ValueError(f"scale_and_translate: spatial_dims {tuple(spatial_dims)} out of "
                         f"range for an image of shape {x.shape}")
    for i, d in enumerate(spatial_dims):
        d = d % x.ndim
        w = _weight_mat(x.shape[d], shape[d], scale[i], translation[i], kernel, antialias,
                        radius).astype(x.dtype)
        x = fnp.moveaxis(fnp.tensordot(x, w, axes=([d], [0]), precision=precision), -1, d)
    return x


def _inexact(x):
    x = fnp.asarray(x)
    return x if dtype_kind(x.dtype) in "fc" else x.astype(fnp.result_type(x.dtype, 1.0))


def _method(method):
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _check_shape(image, shape):
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must contain integers, got {shape!r:.60}") from None
    if len(shape) != image.ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")
    return shape


def resize(image: ArrayLike, shape: Shape, method: str | ResizeMethod,
           antialias: bool = True, precision: Any = "highest") -> Array:
    """Resize ``image`` to ``shape`` (every axis, batch and channel axes included: leave
    them unchanged) by ``method`` (JAX's ``jax.image.resize``).

    Args:
        image: the array to resample.
        shape: the output shape, one entry per axis of ``image``.
        method: a ``ResizeMethod`` or its name (see the module docstring).
        antialias: widen the kernel when downsampling (no effect when upsampling or for
            ``nearest``).
        precision: the precision of the contractions.

    Returns:
        The resized array: ``image``'s dtype for ``nearest``, else an inexact dtype.

    >>> import functrans.numpy as fnp
    >>> resize(fnp.array([1.0, 2.0, 3.0, 4.0]), (2,), "linear", antialias=False).tolist()
    [1.5, 3.5]
    """
    image = fnp.asarray(image)
    shape = _check_shape(image, shape)
    method = _method(method)
    dims = tuple(i for i in range(image.ndim) if image.shape[i] != shape[i])
    if method == ResizeMethod.NEAREST:
        for d in dims:
            m, n = image.shape[d], shape[d]
            # JAX computes the offsets in float32 (so the same rounding)
            offs = np.floor(((np.arange(n, dtype=np.float32) + np.float32(0.5))
                             * np.float32(m) / np.float32(n)).astype(np.float32))
            image = fnp.take(image, offs.astype(np.int32), axis=d)
        return image
    image = _inexact(image)
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _apply(image, shape, dims, scale, [0.] * len(dims), kernel, antialias, precision,
                  radius if edge else None)


def scale_and_translate(image: ArrayLike, shape: Shape, spatial_dims: Sequence[int],
                        scale: ArrayLike, translation: ArrayLike, method: str | ResizeMethod,
                        antialias: bool = True, precision: Any = "highest") -> Array:
    """Resample ``image`` to ``shape`` so that input location ``x`` of axis
    ``spatial_dims[i]`` lands at ``x * scale[i] + translation[i]`` (half-centred pixels;
    outside samples are zero), as JAX's ``jax.image.scale_and_translate``.

    Args:
        image: the array to resample.
        shape: the output shape, one entry per axis.
        spatial_dims: the axes ``scale`` and ``translation`` apply to.
        scale: one scale per spatial axis (may be traced).
        translation: one translation per spatial axis (may be traced).
        method: any ``ResizeMethod`` but ``NEAREST``.
        antialias: widen the kernel when downsampling.
        precision: the precision of the contractions.

    Returns:
        The resampled array, in an inexact dtype.

    >>> import functrans.numpy as fnp
    >>> scale_and_translate(fnp.array([0.0, 1.0]), (4,), (0,), fnp.array([2.0]),
    ...                     fnp.array([0.0]), "linear").tolist()
    [0.0, 0.25, 0.75, 1.0]
    """
    image = fnp.asarray(image)
    shape = _check_shape(image, shape)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    scale, translation = _inexact(scale), _inexact(translation)
    dt = fnp.result_type(scale, translation)
    scale, translation = scale.astype(dt), translation.astype(dt)
    return _apply(_inexact(image), shape, tuple(spatial_dims), scale, translation, kernel,
                  antialias, precision, radius if edge else None)
