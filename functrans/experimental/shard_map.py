"""The older import path of ``shard_map`` (JAX's ``jax.experimental.shard_map``): the same
function as ``functrans.shard_map``.

>>> import functrans as ft
>>> shard_map is ft.shard_map
True
"""
from ..shard_map import shard_map

__all__ = ["shard_map"]
