"""``ft.tree``: the pytree functions under JAX's short names (``jax.tree``).

>>> import functrans as ft
>>> ft.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (4, 6)}
>>> ft.tree.structure([1, (2, None)])
PyTreeDef([*, (*, None)])
"""
from __future__ import annotations

import dataclasses as _dataclasses

from . import tree_util as _tu
from .key_array import KeyArray as _KeyArray

__all__ = ["map", "leaves", "flatten", "unflatten", "structure", "transpose", "all",
           "reduce", "flatten_with_path", "map_with_path", "leaves_with_path", "broadcast",
           "reduce_associative", "static"]


def _keys(is_leaf, takes_path=False):
    """``is_leaf`` that also stops at typed PRNG keys: as ``jax.tree``, these functions
    see a key array as one leaf (the transforms open it to its uint32 words);
    ``takes_path``: ``is_leaf(key_path, x)``."""
    if is_leaf is None:
        return (lambda p, x: isinstance(x, _KeyArray)) if takes_path else \
            (lambda x: isinstance(x, _KeyArray))
    if takes_path:
        return lambda p, x: isinstance(x, _KeyArray) or is_leaf(p, x)
    return lambda x: isinstance(x, _KeyArray) or is_leaf(x)


def map(f, tree, *rest, is_leaf=None):  # noqa: A001 (JAX's name)
    """``f`` applied to corresponding leaves of ``tree`` and ``rest``.

    >>> map(lambda a, b: a - b, [5, 7], [1, 2])
    [4, 5]
    """
    return _tu.tree_map(f, tree, *rest, is_leaf=_keys(is_leaf))


def leaves(tree, is_leaf=None):
    """The leaves, in flattening order (dict keys sorted).

    >>> leaves({"b": 1, "a": [2, 3]})
    [2, 3, 1]
    """
    return _tu.tree_leaves(tree, _keys(is_leaf))


def flatten(tree, is_leaf=None):
    """``(leaves, treedef)``.

    >>> flatten((1, [2]))[0]
    [1, 2]
    """
    return _tu.tree_flatten(tree, _keys(is_leaf))


def unflatten(treedef, leaves):  # noqa: F811 (JAX's argument name)
    """The tree of structure ``treedef`` holding ``leaves``.

    >>> unflatten(structure((0, [0])), [1, 2])
    (1, [2])
    """
    return _tu.tree_unflatten(treedef, leaves)


def structure(tree, is_leaf=None):
    """The treedef of ``tree``.

    >>> structure({"a": 1})
    PyTreeDef({'a': *})
    """
    return _tu.tree_structure(tree, _keys(is_leaf))


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """An outer tree of inner trees turned into an inner tree of outer trees.

    >>> transpose(structure([0, 0]), structure({"x": 0}), [{"x": 1}, {"x": 2}])
    {'x': [1, 2]}
    """
    return _tu.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def all(tree, *, is_leaf=None) -> bool:  # noqa: A001 (JAX's name)
    """Whether every leaf is truthy.

    >>> all([1, (True,)])
    True
    """
    return _tu.tree_all(tree, is_leaf=_keys(is_leaf))


_NO_INITIALIZER = object()


def reduce(function, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    """``functools.reduce`` of ``function`` over the leaves.

    >>> reduce(max, [3, (7, 1)])
    7
    """
    if initializer is _NO_INITIALIZER:
        return _tu.tree_reduce(function, tree, is_leaf=_keys(is_leaf))
    return _tu.tree_reduce(function, tree, initializer, _keys(is_leaf))


def flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``([(key_path, leaf), ...], treedef)``.

    >>> [str(p[0]) for p, _ in flatten_with_path({"w": 1})[0]]
    ["['w']"]
    """
    return _tu.tree_flatten_with_path(tree, _keys(is_leaf, is_leaf_takes_path),
                                      is_leaf_takes_path)


def leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``[(key_path, leaf), ...]``.

    >>> len(leaves_with_path([1, 2]))
    2
    """
    return _tu.tree_leaves_with_path(tree, _keys(is_leaf, is_leaf_takes_path),
                                     is_leaf_takes_path)


def map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """``f(key_path, leaf, *others)`` over the leaves.

    >>> map_with_path(lambda p, x: x + len(p), [10, [20]])
    [11, [22]]
    """
    return _tu.tree_map_with_path(f, tree, *rest, is_leaf=_keys(is_leaf, is_leaf_takes_path),
                                  is_leaf_takes_path=is_leaf_takes_path)


def broadcast(prefix_tree, full_tree, is_leaf=None):
    """``full_tree``'s structure, each leaf the leaf of ``prefix_tree`` above it.

    >>> broadcast([1, 2], [(0, 0), {"a": 0}])
    [(1, 1), {'a': 2}]
    """
    return _tu.tree_broadcast(prefix_tree, full_tree, _keys(is_leaf))


def reduce_associative(operation, tree, *, identity=_NO_INITIALIZER, is_leaf=None):
    """Reduce the leaves with an associative ``operation`` as a balanced tree of calls.

    >>> reduce_associative(max, [3, (7, 1)])
    7
    """
    if identity is _NO_INITIALIZER:
        return _tu.tree_reduce_associative(operation, tree, is_leaf=_keys(is_leaf))
    return _tu.tree_reduce_associative(operation, tree, identity=identity, is_leaf=_keys(is_leaf))


def static(**kwargs):
    """A dataclass field marked static for ``tree_util.register_dataclass``: aux data,
    not a child.

    >>> @_tu.register_dataclass
    ... @_dataclasses.dataclass
    ... class Op:
    ...     x: float
    ...     name: str = static(default="add")
    >>> leaves(Op(1.0))
    [1.0]
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return _dataclasses.field(metadata=metadata, **kwargs)
