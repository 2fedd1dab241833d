"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered classes.

>>> leaves, tree = tree_flatten({"b": (1, 2), "a": [3]})
>>> leaves
[3, 1, 2]
>>> tree_unflatten(tree, [x * 10 for x in leaves])
{'a': [30], 'b': (10, 20)}
"""
from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, Iterable, Sequence

from .tree_def import (PyTreeDef, flatten_one_level, is_tree_node, node_handlers,
                       register_pytree_node, tree_flatten, tree_leaves, tree_structure,
                       tree_unflatten, treedef_children, treedef_is_leaf,
                       treedef_is_strict_leaf, treedef_tuple)
from .tree_keys import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, keystr

__all__ = ["register_pytree_node", "tree_flatten", "tree_unflatten", "tree_map",
           "tree_leaves", "tree_structure", "PyTreeDef", "all_leaves", "treedef_is_leaf",
           "tree_flatten_with_path", "tree_map_with_path", "tree_leaves_with_path", "keystr",
           "tree_transpose", "tree_all", "tree_reduce", "SequenceKey", "DictKey",
           "GetAttrKey", "FlattenedIndexKey", "register_pytree_node_class", "Partial",
           "register_dataclass", "register_static", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "treedef_children", "treedef_tuple",
           "is_tree_node", "flatten_one_level", "flatten_one_level_with_keys",
           "tree_broadcast", "tree_reduce_associative", "KeyEntry", "KeyPath"]

KeyEntry = Any             # a key of one child: SequenceKey, DictKey, GetAttrKey, ...
KeyPath = tuple            # a leaf's key path: a tuple of KeyEntry
_NO_INITIAL = object()     # tree_reduce's default: no initializer given
_data_fields: dict = {}    # register_dataclass's classes -> their child fields (key paths)
_keyed: dict = {}          # register_pytree_with_keys's classes -> their flatten_with_keys


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every item is a leaf (no tuple, list, dict, None or registered node), or
    one that ``is_leaf`` accepts.

    >>> all_leaves([1.0, "a"]), all_leaves([1.0, (2.0,)]), all_leaves([None])
    (True, False, False)
    """
    items = list(iterable)
    if is_leaf is None:
        return all(treedef_is_strict_leaf(tree_structure(x)) for x in items)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest``: each of ``rest`` has
    ``tree``'s structure or one it is a prefix of (``f`` then gets the subtree), as JAX's.

    >>> tree_map(lambda a, b: a + b, (1, [2]), (10, [20]))
    (11, [22])
    """
    leaves, td = tree_flatten(tree, is_leaf)
    others = [_up_to(td, r, is_leaf) for r in rest]
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])


def _up_to(td, tree, is_leaf):
    """The leaves of ``tree`` when its structure is ``td`` (the fast, common case), else
    its subtrees at ``td``'s leaves."""
    leaves, rtd = tree_flatten(tree, is_leaf)
    return leaves if rtd == td else td.flatten_up_to(tree)


# ---- key paths (JAX's tree_flatten_with_path and friends) ----

def _child_keys(x, t, children, aux):
    if t is dict or t is collections.OrderedDict:
        return [DictKey(k) for k in aux]
    if t is collections.defaultdict:
        return [DictKey(k) for k in aux[1]]
    if t in (tuple, list):
        return [SequenceKey(i) for i in range(len(children))]
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return [GetAttrKey(f) for f in x._fields]
    if t in _data_fields:
        return [GetAttrKey(f) for f in _data_fields[t]]
    if t in _keyed:
        return [k for k, _ in _keyed[t](x)[0]]
    return [FlattenedIndexKey(i) for i in range(len(children))]


def tree_flatten_with_path(tree: Any, is_leaf: Callable | None = None,
                           is_leaf_takes_path: bool = False) -> tuple[list, PyTreeDef]:
    """``([(key_path, leaf), ...], treedef)``; a key path is a tuple of keys. With
    ``is_leaf_takes_path``, ``is_leaf`` is called as ``is_leaf(key_path, x)``.

    >>> pairs, _ = tree_flatten_with_path({"a": (1, 2)})
    >>> [(keystr(p), v) for p, v in pairs]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    >>> pairs, _ = tree_flatten_with_path([[1, [2]], 3], lambda p, x: len(p) == 2, True)
    >>> [(keystr(p), v) for p, v in pairs]
    [('[0][0]', 1), ('[0][1]', [2]), ('[1]', 3)]
    """
    pairs, decisions = [], []
    stack = [(tree, ())]
    # explicit stack (children pushed in reverse) so deep trees do not hit the recursion limit
    while stack:
        x, path = stack.pop()
        if is_leaf is not None:
            decisions.append(bool(is_leaf(path, x) if is_leaf_takes_path else is_leaf(x)))
            if decisions[-1]:
                pairs.append((path, x))
                continue
        t, h = node_handlers(x)
        if h is None:
            pairs.append((path, x))
            continue
        children, aux = h[0](x)
        keys = _child_keys(x, t, children, aux)
        for k, c in reversed(list(zip(keys, children))):
            stack.append((c, path + (k,)))
    return pairs, tree_structure(tree, None if is_leaf is None else _replay(decisions, tree))


def _replay(decisions, root):
    """An ``is_leaf`` answering with ``decisions`` in the order they were made: the
    structure walk visits the nodes in the same (pre-)order as the walk above, and
    starts over at ``root`` (a retry on a deep tree)."""
    at = [0]

    def is_leaf(x):
        if x is root:
            at[0] = 0
        at[0] += 1
        return decisions[at[0] - 1]
    return is_leaf


def tree_leaves_with_path(tree: Any, is_leaf: Callable | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple]:
    """``[(key_path, leaf), ...]`` (``is_leaf_takes_path``: as ``tree_flatten_with_path``).

    >>> [keystr(p) for p, _ in tree_leaves_with_path([1, {"b": 2}])]
    ['[0]', "[1]['b']"]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like ``tree_map`` with ``f(key_path, leaf, *others)`` (``is_leaf_takes_path``: as
    ``tree_flatten_with_path``).

    >>> tree_map_with_path(lambda p, x: keystr(p) + str(x), {"a": 1})
    {'a': "['a']1"}
    """
    pairs, td = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [_up_to(td, r, None if is_leaf_takes_path else is_leaf) for r in rest]
    return tree_unflatten(td, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer tree of inner trees into an inner tree of outer trees.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    if inner_treedef is None:     # as JAX: the structure of the first outer leaf's subtree
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
        inner_treedef = tree_structure(subtrees[0] if subtrees else None)
    flat = tree_leaves(pytree_to_transpose)
    n_in, n_out = inner_treedef.num_leaves, outer_treedef.num_leaves
    if len(flat) != n_in * n_out:
        raise TypeError(f"tree_transpose: expected {n_in * n_out} leaves for outer "
                        f"{outer_treedef} and inner {inner_treedef}, got {len(flat)}")
    outer_items = tree_leaves(pytree_to_transpose,
                              is_leaf=lambda x: tree_structure(x) == inner_treedef)
    if len(outer_items) != n_out:
        raise TypeError(f"tree_transpose: tree does not have outer structure {outer_treedef}")
    columns = [tree_leaves(item) for item in outer_items]
    inner_leaves = [tree_unflatten(outer_treedef, [col[i] for col in columns])
                    for i in range(n_in)]
    return tree_unflatten(inner_treedef, inner_leaves)


def tree_all(tree: Any, *, is_leaf: Callable | None = None) -> bool:
    """Whether every leaf is truthy.

    >>> tree_all([True, {"a": 1}]), tree_all((True, 0))
    (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


def tree_reduce(function: Callable, tree: Any, initializer: Any = _NO_INITIAL,
                is_leaf: Callable | None = None) -> Any:
    """``functools.reduce`` over the leaves.

    >>> tree_reduce(lambda a, b: a + b, {"x": 1, "y": (2, 3)})
    6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: Callable, tree: Any, *, identity: Any = _NO_INITIAL,
                            is_leaf: Callable | None = None) -> Any:
    """Reduce the leaves with an associative ``operation``, pairing halves (a balanced
    tree of calls, as JAX's); an empty tree needs ``identity``.

    >>> tree_reduce_associative(lambda a, b: a + b, [1, (2, 3), {"x": 4}])
    10
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_INITIAL:
            raise TypeError("tree_reduce_associative: an empty tree needs identity=")
        return identity

    def halves(items):
        if len(items) == 1:
            return items[0]
        mid = len(items) // 2
        return operation(halves(items[:mid]), halves(items[mid:]))
    return halves(leaves)


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable | None = None) -> Any:
    """``full_tree``'s structure, each leaf the leaf of ``prefix_tree`` above it.

    >>> tree_broadcast((1, {"a": 2}), (["x", "y"], {"a": {"b": 3, "c": 4}}))
    ([1, 1], {'a': {'b': 2, 'c': 2}})
    """
    p_leaves, p_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = p_def.flatten_up_to(full_tree)
    leaves = [x for x, sub in zip(p_leaves, subtrees)
              for _ in range(tree_structure(sub).num_leaves)]
    return tree_unflatten(tree_structure(full_tree), leaves)


def flatten_one_level_with_keys(tree: Any) -> tuple[tuple, Any]:
    """``(((key, child), ...), aux data)`` of a pytree node, one level down.

    >>> flatten_one_level_with_keys({"a": 1, "b": [2]})
    (((DictKey(key='a'), 1), (DictKey(key='b'), [2])), ('a', 'b'))
    """
    children, aux = flatten_one_level(tree)
    keys = _child_keys(tree, type(tree), children, aux)
    return tuple(zip(keys, children)), aux


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` by its ``tree_flatten()`` method and its
    ``tree_unflatten(aux_data, children)`` classmethod, as JAX's.

    >>> @register_pytree_node_class
    ... class Box:
    ...     def __init__(self, v): self.v = v
    ...     def tree_flatten(self):
    ...         return (self.v,), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> tree_map(lambda x: x + 1, Box(1)).v
    2
    """
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable, unflatten_func:
                              Callable, flatten_func: Callable | None = None) -> None:
    """Register ``nodetype`` by ``flatten_with_keys(x) -> (((key, child), ...), aux)``,
    whose keys name the children in key paths, as JAX's.

    >>> class P:
    ...     def __init__(self, a): self.a = a
    >>> register_pytree_with_keys(P, lambda p: (((GetAttrKey("a"), p.a),), 0), lambda _, c: P(*c))
    >>> keystr(tree_leaves_with_path([P(1.0)])[0][0])
    '[0].a'
    """
    register_pytree_node(nodetype, flatten_func or (lambda x: (lambda pairs, aux: (
        [c for _, c in pairs], aux))(*flatten_with_keys(x))), unflatten_func)
    _keyed[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: register ``cls`` by its ``tree_flatten_with_keys()`` method (and
    ``tree_flatten()`` if it has one) and its ``tree_unflatten`` classmethod, as JAX's.

    >>> @register_pytree_with_keys_class
    ... class Box:
    ...     def __init__(self, v): self.v = v
    ...     def tree_flatten_with_keys(self):
    ...         return ((GetAttrKey("v"), self.v),), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> keystr(tree_leaves_with_path(Box(1.0))[0][0])
    '.v'
    """
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten)
    return cls


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """Register a dataclass (JAX's): ``data_fields`` are children, ``meta_fields`` static
    aux data (part of jit's cache key); rebuilt by ``nodetype(**fields)``. Without the
    lists, a dataclass's fields are children unless ``field(metadata=dict(static=True))``.

    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class P:
    ...     x: float
    ...     n: int = dataclasses.field(default=1, metadata=dict(static=True))
    >>> tree_leaves(P(2.0, 3)), tree_map(lambda v: v * 10, P(2.0, 3)).n
    ([2.0], 3)
    """
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"for {nodetype.__name__}, which is not a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither")
    data, meta = tuple(data_fields), tuple(meta_fields)

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    register_pytree_node(nodetype, lambda x: ([getattr(x, f) for f in data],
                                              tuple(getattr(x, f) for f in meta)), unflatten)
    _data_fields[nodetype] = data
    return nodetype


def register_static(cls: type) -> type:
    """Register ``cls`` as a pytree with no children: its instances are static aux data
    (hashable, compared by equality), as JAX's.

    >>> @register_static
    ... class Tag:
    ...     pass
    >>> len(tree_leaves([Tag(), 1]))
    1
    """
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


class _Whole:
    """A ``functools.partial`` given to ``Partial``, kept whole: its arguments stay static
    (functools.partial would merge them into the new one's, making them children)."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __eq__(self, other):          # equal to the partial it wraps too (JAX: p.func == fn)
        return self.fn == (other.fn if isinstance(other, _Whole) else other)

    func = property(lambda self: self.fn.func)         # the wrapped partial's parts
    args = property(lambda self: self.fn.args)
    keywords = property(lambda self: self.fn.keywords)

    def __hash__(self):
        return hash(self.fn)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its arguments are the children and the
    function is static, so it can be passed to and returned from transformed functions.

    >>> import operator
    >>> p = tree_map(lambda x: 10 * x, Partial(operator.add, 1))
    >>> p(2), tree_leaves(p)
    (12, [10])
    """

    def __new__(cls, func: Callable[..., Any], *args: Any, **kw: Any) -> Partial:
        return super().__new__(cls, _Whole(func) if isinstance(func, functools.partial)
                               else func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, c: Partial(func, *c[0], **c[1]))
