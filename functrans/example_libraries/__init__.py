"""``functrans.example_libraries``: ``stax`` (a tiny neural-network layer library) and
``optimizers`` (first-order optimizers over pytrees), with the API of
``jax.example_libraries``, built only on the public functrans API.

>>> from functrans.example_libraries import optimizers, stax
>>> callable(optimizers.adam(1e-3).init_fn) and callable(stax.Dense(2)[0])
True
"""
from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
