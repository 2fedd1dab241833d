"""``functrans.scipy.spatial``: the ``transform`` submodule (``Rotation``, ``Slerp``), as
``jax.scipy.spatial``.

>>> from functrans.scipy import spatial
>>> spatial.transform.__all__
['Rotation', 'Slerp']
"""
from . import transform

__all__ = ["transform"]
