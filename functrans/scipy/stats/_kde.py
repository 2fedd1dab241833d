"""``gaussian_kde``: a Gaussian kernel density estimate, as scipy's (Scott's or
Silverman's bandwidth factor or a given one, weighted data), a pytree, so it passes
through jit and vmap and differentiates in its data and weights."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ... import numpy as fnp
from ... import random
from ...tree_util import register_pytree_node
from ...typing import Array, ArrayLike, Shape
from ..special import logsumexp, ndtr

__all__ = ["gaussian_kde"]


def _log_normal_sum(points, centers, cov, log_w):
    """log sum_j exp(log_w[j]) N(points[:, i]; centers[:, j], cov), for each i."""
    d = points.shape[0]
    chol = fnp.linalg.cholesky(cov)
    # whitened differences: L^-1 (x_i - c_j), via the triangular solve of a stack
    diff = points[:, :, None] - centers[:, None, :]                   # (d, m, n)
    white = fnp.linalg.solve(chol, diff.reshape(d, -1)).reshape(diff.shape)
    quad = fnp.sum(white * white, axis=0)                              # (m, n)
    log_det = fnp.sum(fnp.log(fnp.diagonal(chol)))
    log_norm = -0.5 * d * np.log(2 * np.pi) - log_det
    return logsumexp(log_w[None, :] - 0.5 * quad, axis=1) + log_norm


class gaussian_kde:
    """A Gaussian kernel density estimate from ``dataset`` ((d, n), or (n,) for d = 1)
    with optional ``weights``; ``bw_method`` 'scott' (default: neff^(-1/(d+4))),
    'silverman', a number, or a function of the estimator giving the factor. The
    kernel covariance is the data's weighted covariance times factor^2.

    >>> import numpy as np
    >>> from functrans.scipy.stats import gaussian_kde
    >>> kde = gaussian_kde(np.array([0.0, 1.0, 2.0]))
    >>> round(float(kde.integrate_box_1d(-np.inf, np.inf)), 12)
    1.0
    """

    def __init__(self, dataset: ArrayLike, bw_method: str | float | Callable | None = None,
                 weights: ArrayLike | None = None) -> None:
        data = fnp.atleast_2d(fnp.asarray(dataset))
        if fnp.iscomplexobj(data):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not fnp.issubdtype(data.dtype, fnp.floating):
            data = data.astype(fnp.float64)
        if data.size <= 1:
            raise ValueError("gaussian_kde: the dataset needs more than one element")
        d, n = data.shape
        if weights is None:
            w = fnp.full((n,), 1.0 / n, data.dtype)
        else:
            w = fnp.atleast_1d(fnp.asarray(weights, data.dtype))
            if w.ndim != 1 or w.shape[0] != n:
                raise ValueError(f"gaussian_kde: weights must be one-dimensional of length {n}")
            w = w / fnp.sum(w)
        self.dataset, self.weights = data, w
        self.neff = 1.0 / fnp.sum(w * w)
        if bw_method is None or bw_method == "scott":
            factor = self.neff ** (-1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw_method):
            factor = bw_method(self)
        elif np.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = fnp.asarray(bw_method, data.dtype)
        else:
            raise ValueError("gaussian_kde: bw_method must be 'scott', 'silverman', a "
                             "number or a callable")
        self.factor = factor
        data_cov = fnp.atleast_2d(fnp.cov(data, rowvar=True, bias=False, aweights=w))
        self.covariance = data_cov * factor ** 2
        self.inv_cov = fnp.linalg.inv(data_cov) / factor ** 2

    @property
    def d(self) -> int:
        """The dimension of the data."""
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        """The number of data points."""
        return self.dataset.shape[1]

    def _points(self, points):
        pts = fnp.atleast_2d(fnp.asarray(points, self.dataset.dtype))
        if pts.shape[0] != self.d:
            if pts.shape[1] == self.d and pts.ndim == 2:
                pts = pts.T
            elif self.d == 1:
                pts = pts.reshape(1, -1)
            else:
                raise ValueError(f"gaussian_kde: points have dimension {pts.shape[0]}, "
                                 f"the data {self.d}")
        return pts

    def logpdf(self, x: ArrayLike) -> Array:
        """The log of the estimated density at the points ``x`` ((d, m)).

        >>> import numpy as np
        >>> from functrans.scipy.stats import gaussian_kde
        >>> gaussian_kde(np.array([0.0, 1.0])).logpdf(np.array([0.5])).shape
        (1,)
        """
        return _log_normal_sum(self._points(x), self.dataset, self.covariance,
                               fnp.log(self.weights))

    def evaluate(self, points: ArrayLike) -> Array:
        """The estimated density at ``points`` ((d, m)).

        >>> import numpy as np
        >>> from functrans.scipy.stats import gaussian_kde
        >>> float(gaussian_kde(np.array([-1.0, 1.0])).evaluate(np.array([5.0]))[0]) > 0
        True
        """
        return fnp.exp(self.logpdf(points))

    __call__ = evaluate
    pdf = evaluate

    def integrate_gaussian(self, mean: ArrayLike, cov: ArrayLike) -> Array:
        """The integral of the density times the Gaussian N(mean, cov).

        >>> import numpy as np
        >>> from functrans.scipy.stats import gaussian_kde
        >>> kde = gaussian_kde(np.array([0.0, 1.0]))
        >>> float(kde.integrate_gaussian(np.array([0.5]), np.array([[1.0]]))) > 0
        True
        """
        mean = fnp.atleast_1d(fnp.asarray(mean, self.dataset.dtype)).reshape(self.d, 1)
        cov = fnp.atleast_2d(fnp.asarray(cov, self.dataset.dtype))
        return fnp.exp(_log_normal_sum(mean, self.dataset, self.covariance + cov,
                                       fnp.log(self.weights))[0])

    def integrate_box_1d(self, low: ArrayLike, high: ArrayLike) -> Array:
        """The mass of a one-dimensional density between ``low`` and ``high``.

        >>> import numpy as np
        >>> from functrans.scipy.stats import gaussian_kde
        >>> round(float(gaussian_kde(np.array([-1.0, 1.0])).integrate_box_1d(0.0, np.inf)), 12)
        0.5
        """
        if self.d != 1:
            raise ValueError("integrate_box_1d: the data must be one-dimensional")
        sigma = fnp.sqrt(self.covariance[0, 0])
        x = self.dataset[0]
        lo = ndtr((fnp.asarray(low, x.dtype) - x) / sigma)
        hi = ndtr((fnp.asarray(high, x.dtype) - x) / sigma)
        return fnp.sum(self.weights * (hi - lo))

    def integrate_kde(self, other: "gaussian_kde") -> Array:
        """The integral of the product of this density and ``other``'s.

        >>> import numpy as np
        >>> from functrans.scipy.stats import gaussian_kde
        >>> kde = gaussian_kde(np.array([0.0, 1.0]))
        >>> float(kde.integrate_kde(kde)) > 0
        True
        """
        if other.d != self.d:
            raise ValueError("integrate_kde: the two estimates have different dimensions")
        log_terms = _log_normal_sum(other.dataset, self.dataset,
                                    self.covariance + other.covariance, fnp.log(self.weights))
        return fnp.sum(other.weights * fnp.exp(log_terms))

    def resample(self, key: Array, shape: Shape = ()) -> Array:
        """Draws from the estimate, shape ``(d,) + shape``: a data point picked by weight
        plus a kernel-covariance normal.

        >>> import numpy as np
        >>> from functrans import random
        >>> from functrans.scipy.stats import gaussian_kde
        >>> gaussian_kde(np.array([0.0, 1.0])).resample(random.PRNGKey(0), (3,)).shape
        (1, 3)
        """
        shape = tuple(shape) if not isinstance(shape, int) else (shape,)
        pick_key, noise_key = random.split(key)
        idx = random.choice(pick_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(noise_key, fnp.zeros(self.d, self.dataset.dtype),
                                           self.covariance, shape=shape)
        draws = self.dataset[:, idx] + fnp.moveaxis(noise, -1, 0)
        return draws

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """Not supported (the estimate is immutable, as JAX's): build a new one."""
        raise NotImplementedError("gaussian_kde.set_bandwidth: build a new gaussian_kde "
                                  "with bw_method instead (as in JAX)")

    def integrate_box(self, low_bounds: ArrayLike, high_bounds: ArrayLike,
                      maxpts: int | None = None) -> Array:
        """Not supported (as in JAX): scipy's needs a multivariate normal CDF."""
        raise NotImplementedError("gaussian_kde.integrate_box is not supported (as in JAX)")


def _flatten(k):
    return (k.dataset, k.weights, k.neff, k.factor, k.covariance, k.inv_cov), None


def _unflatten(_, children):
    k = object.__new__(gaussian_kde)
    k.dataset, k.weights, k.neff, k.factor, k.covariance, k.inv_cov = children
    return k


register_pytree_node(gaussian_kde, _flatten, _unflatten)
