"""``functrans.scipy.cluster``: the ``vq`` submodule, as ``jax.scipy.cluster``.

>>> from functrans.scipy import cluster
>>> cluster.vq.__all__
['vq']
"""
from . import vq

__all__ = ["vq"]
