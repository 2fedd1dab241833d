"""``functrans.scipy.cluster.vq``: ``vq``, the nearest code of each observation.

>>> import numpy as np
>>> from functrans.scipy.cluster.vq import vq
>>> codes, dist = vq(np.array([[0.0], [2.9]]), np.array([[0.0], [3.0]]))
>>> codes.tolist()
[0, 1]
"""
from __future__ import annotations

from ... import numpy as fnp
from ...array import Array
from ...typing import ArrayLike

__all__ = ["vq"]


def vq(obs: ArrayLike, code_book: ArrayLike, check_finite: bool = True) -> tuple[Array, Array]:
    """For each row of ``obs`` (M, N) (or each entry of a 1-d ``obs``), the index of the
    nearest row of ``code_book`` (K, N) in Euclidean distance (first one on ties) and
    that distance. Differentiable in the distances; ``check_finite`` is accepted.

    >>> import numpy as np
    >>> from functrans.scipy.cluster.vq import vq
    >>> float(vq(np.array([1.0, 4.0]), np.array([0.0, 3.0]))[1][1])
    1.0
    """
    obs, code_book = fnp.asarray(obs), fnp.asarray(code_book)
    if obs.ndim != code_book.ndim or obs.ndim not in (1, 2):
        raise ValueError("vq: obs and code_book must both be 1-d or both 2-d, got shapes "
                         f"{obs.shape} and {code_book.shape}")
    if obs.ndim == 2 and obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: obs has {obs.shape[1]} features, code_book {code_book.shape[1]}")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    diff = obs[:, None, :] - code_book[None, :, :]
    d2 = fnp.sum(diff * diff, axis=-1)
    codes = fnp.argmin(d2, axis=1)
    best = fnp.take_along_axis(d2, codes[:, None], axis=1)[:, 0]
    # sqrt's derivative at an exact hit is infinite: the distance is |.|, 0 there
    safe = fnp.where(best == 0, 1, best)
    return codes, fnp.where(best == 0, 0, fnp.sqrt(safe))
