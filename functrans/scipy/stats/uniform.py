"""The uniform distribution on [loc, loc + scale] (``jax.scipy.stats.uniform``)."""
from ... import numpy as _fnp
from ._util import as_float as _as_float, standardize as _standardize

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x, loc=0.0, scale=1.0):
    """-log(scale) inside, -inf outside.

    >>> from functrans.scipy.stats import uniform
    >>> round(float(uniform.logpdf(0.5)), 10)
    -0.0
    """
    z, log_scale = _standardize(x, loc, scale)
    return _fnp.where((z >= 0) & (z <= 1), -log_scale, z.dtype.type(-float("inf")))


def pdf(x, loc=0.0, scale=1.0):
    """The density.

    >>> from functrans.scipy.stats import uniform
    >>> float(uniform.pdf(2.0))
    0.0
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """z clipped to [0, 1].

    >>> from functrans.scipy.stats import uniform
    >>> float(uniform.cdf(0.25))
    0.25
    """
    return _fnp.clip(_standardize(x, loc, scale)[0], 0.0, 1.0)


def ppf(q, loc=0.0, scale=1.0):
    """loc + q scale on [0, 1], NaN outside.

    >>> from functrans.scipy.stats import uniform
    >>> float(uniform.ppf(0.25))
    0.25
    """
    q, loc, scale = _as_float(q, loc, scale)
    bad = (q < 0) | (q > 1)
    return _fnp.where(bad, q.dtype.type(float("nan")), loc + q * scale)
