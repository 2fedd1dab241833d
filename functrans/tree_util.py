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

from . import tree_walk
from .tree_keys import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, keystr

__all__ = ["register_pytree_node", "tree_flatten", "tree_unflatten", "tree_map",
           "tree_leaves", "tree_structure", "PyTreeDef", "all_leaves", "treedef_is_leaf",
           "tree_flatten_with_path", "tree_map_with_path", "tree_leaves_with_path", "keystr",
           "tree_transpose", "tree_all", "tree_reduce", "SequenceKey", "DictKey",
           "GetAttrKey", "FlattenedIndexKey", "register_pytree_node_class", "Partial",
           "register_dataclass", "register_static", "register_pytree_with_keys"]

# type -> (flatten(x) -> (children, aux), unflatten(aux, children) -> x)
_registry: dict = {}
_NO_INITIAL = object()     # tree_reduce's default: no initializer given
_data_fields: dict = {}    # register_dataclass's classes -> their child fields (key paths)
_keyed: dict = {}          # register_pytree_with_keys's classes -> their flatten_with_keys


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple],
                         unflatten_func: Callable[[Any, Any], Any]) -> None:
    """Make instances of ``nodetype`` pytree nodes.

    ``flatten_func(x) -> (children, aux_data)``; ``unflatten_func(aux_data, children) -> x``.
    aux_data is part of jit's cache key: compared by equality (and hashed when hashable).

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> tree_leaves(Pair(1, (2, 3)))
    [1, 2, 3]
    >>> tree_map(lambda x: 10 * x, Pair(1, 2)).b
    20
    """
    _registry[nodetype] = (flatten_func, unflatten_func)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda l: (l, None), lambda _, c: list(c))
register_pytree_node(type(None), lambda _: ((), None), lambda _, c: None)


def _dict_flatten(d):
    try:
        keys = sorted(d)
    except TypeError as e:      # JAX's ValueError, naming the keys
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys "
                         f"{list(d)!r:.120}: a dict's keys must be mutually orderable "
                         f"({e})") from None
    return [d[k] for k in keys], tuple(keys)


register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))
# as JAX's: an OrderedDict keeps its key order (and differs from a dict), a defaultdict
# sorts its keys and keeps its default_factory
register_pytree_node(collections.OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, c: collections.OrderedDict(zip(keys, c)))
register_pytree_node(collections.defaultdict,
                     lambda d: (lambda c, k: (c, (d.default_factory, k)))(*_dict_flatten(d)),
                     lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)))


class PyTreeDef:
    """The structure of a pytree: node type, aux data and children (None for a leaf).

    >>> td = tree_structure({"w": (1, 2), "b": 3})
    >>> td, td.num_leaves
    (PyTreeDef({'b': *, 'w': (*, *)}), 3)
    """
    __slots__ = ("node_type", "aux", "children", "num_leaves", "_hash")

    def __init__(self, node_type: type | None, aux: Any, children: list | None) -> None:
        self.node_type = node_type
        self.aux = aux
        self.children = children
        if children is None:
            self.num_leaves, self._hash = 1, 0
        else:   # from the children's, so no walk (nor recursion) is ever needed for it
            self.num_leaves = sum([c.num_leaves for c in children])
            try:
                aux_hash = hash(aux)
            except TypeError:       # unhashable aux data: see _aux_hash
                aux_hash = _aux_hash(aux)
            self._hash = hash((node_type, aux_hash, tuple([c._hash for c in children])))

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef) or self._hash != other._hash:
            return False
        try:    # by recursion (the children lists compare their items), fastest
            return (self.node_type is other.node_type and _aux_equal(self.aux, other.aux)
                    and self.children == other.children)
        except RecursionError:   # deeper than the limit allows (JAX takes such trees)
            return self._equal_deep(other)

    def _equal_deep(self, other):
        """Equality with an explicit stack of node pairs instead of recursion."""
        pairs = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            if a is b:
                continue
            if a.node_type is not b.node_type or not _aux_equal(a.aux, b.aux):
                return False
            if a.children is None or b.children is None:
                if a.children is not b.children:
                    return False
                continue
            if len(a.children) != len(b.children):
                return False
            pairs.extend(zip(a.children, b.children))
        return True

    def __hash__(self):
        return self._hash

    def __repr__(self):
        # JAX prints ``PyTreeDef((*, [*]))``: the structure wrapped once at the top
        return f"PyTreeDef({self._structure_text()})"

    def _structure_text(self):
        out, stack = [], [self]     # an explicit stack: pytrees may nest thousands deep
        while stack:
            n = stack.pop()
            if type(n) is str or n.children is None:
                out.append(n if type(n) is str else "*")
                continue
            opening, closing = _brackets(n)
            keys = [f"{k!r}: " for k in n.aux] if n.node_type is dict else [""] * len(n.children)
            items = [x for i, kc in enumerate(zip(keys, n.children))
                     for x in (", " * (i > 0),) + kc]
            out.append(opening)
            stack += [closing] + items[::-1]
        return "".join(out)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """``tree_unflatten(self, leaves)``, as JAX's ``treedef.unflatten``."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree: Any) -> list:
        """The subtrees of ``tree`` at this structure's leaves (it must be a prefix of
        ``tree``'s), as JAX's: ``tree_structure((1, 2)).flatten_up_to((1, [2, 3]))`` is
        ``[1, [2, 3]]``; a mismatch is a ValueError naming its key path."""
        return tree_walk.flatten_up_to(_node, _aux_equal, self, tree)

    @property
    def num_nodes(self):
        n, stack = 0, [self]
        while stack:
            t = stack.pop()
            n += 1
            if t.children is not None:
                stack.extend(t.children)
        return n


_BRACKETS = {list: ("[", "]"), dict: ("{", "}"), type(None): ("None", "")}


def _brackets(td):
    """The text around the children of node ``td`` in its printed structure."""
    t = td.node_type
    if t is tuple:
        return "(", ",)" if len(td.children) == 1 else ")"
    if t in _BRACKETS:
        return _BRACKETS[t]
    name = f"{t.__name__}[{td.aux!r}]" if t in _registry else f"namedtuple[{t.__name__}]"
    return f"CustomNode({name}, [", "])"


def _aux_hash(aux):
    """A hash of aux data; unhashable aux data (a dict, say) all hash alike and are told
    apart by equality, as JAX does."""
    try:
        return hash(aux)
    except TypeError:
        return hash(type(aux).__name__)


def _aux_equal(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):     # e.g. arrays in aux data: not provably equal
        return False


_LEAF = PyTreeDef(None, None, None)


def node_handlers(x):
    t = type(x)
    h = _registry.get(t)
    if h is not None:
        return t, h
    if isinstance(x, tuple) and hasattr(x, "_fields"):   # namedtuple
        return t, (lambda n: (tuple(n), None), lambda _, c, t=t: t(*c))
    return t, None


def _flatten_shallow(x, leaves, is_leaf):
    """``_flatten`` by recursion: faster on the trees programs pass (a few levels)."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t, h = node_handlers(x)
    if h is None:
        leaves.append(x)
        return _LEAF
    children, aux = h[0](x)
    return PyTreeDef(t, aux, [_flatten_shallow(c, leaves, is_leaf) for c in children])


def _flatten(tree, leaves, is_leaf):
    """The treedef of ``tree``, appending its leaves in order: by recursion, and for a
    tree deeper than the recursion limit allows, with an explicit stack of [type, aux,
    children, next child, built child treedefs]."""
    n = len(leaves)
    try:
        return _flatten_shallow(tree, leaves, is_leaf)
    except RecursionError:
        del leaves[n:]
    return _flatten_deep(tree, leaves, is_leaf)


def _node(x, is_leaf=None):
    """``(type, aux, children)`` of a node, None for a leaf (tree_walk's view)."""
    if is_leaf is not None and is_leaf(x):
        return None
    t, h = node_handlers(x)
    if h is None:
        return None
    children, aux = h[0](x)
    return t, aux, children


def _flatten_deep(tree, leaves, is_leaf):
    return tree_walk.flatten(lambda x: _node(x, is_leaf), PyTreeDef, _LEAF, tree, leaves)


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """(leaves, treedef); dict children come in sorted key order. ``is_leaf(x)`` True
    makes ``x`` a leaf even if it is a node.

    >>> tree_flatten([1, (2, None)])
    ([1, 2], PyTreeDef([*, (*, None)]))
    >>> tree_flatten([1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple))[0]
    [1, (2, 3)]
    """
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _build(td, children):
    h = _registry.get(td.node_type)
    if h is None:  # namedtuple
        return td.node_type(*children)
    return h[1](td.aux, children)


def _unflatten_shallow(td, it):
    if td.children is None:
        return next(it)
    return _build(td, [_unflatten_shallow(c, it) for c in td.children])


def _unflatten(td, leaves):
    """The pytree of ``td`` over ``leaves`` (a list): by recursion, or with an explicit
    stack for a tree deeper than the recursion limit allows."""
    try:
        return _unflatten_shallow(td, iter(leaves))
    except RecursionError:
        return tree_walk.unflatten(_build, td, iter(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree of structure ``treedef`` from ``leaves``.

    >>> leaves, td = tree_flatten({"a": 1, "b": [2, 3]})
    >>> tree_unflatten(td, [x + 1 for x in leaves])
    {'a': 2, 'b': [3, 4]}
    """
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: structure {treedef} has {treedef.num_leaves} leaves, "
                         f"got {len(leaves)}")
    return _unflatten(treedef, leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree``, in ``tree_flatten``'s order (dict keys sorted).

    >>> tree_leaves({"b": [2, 3], "a": 1})
    [1, 2, 3]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``tree`` without its leaves.

    >>> tree_structure((1.0, {"x": 2.0}))
    PyTreeDef((*, {'x': *}))
    """
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(td: PyTreeDef) -> bool:
    """Whether the structure is a single leaf.

    >>> treedef_is_leaf(tree_structure(3.0)), treedef_is_leaf(tree_structure((3.0,)))
    (True, False)
    """
    return td.children is None


def all_leaves(iterable: Iterable[Any]) -> bool:
    """Whether every item is a leaf (no tuple, list, dict, None or registered node).

    >>> all_leaves([1.0, "a"]), all_leaves([1.0, (2.0,)])
    (True, False)
    """
    return all(treedef_is_leaf(tree_structure(x)) for x in iterable)


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


def tree_flatten_with_path(tree: Any, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """``([(key_path, leaf), ...], treedef)``; a key path is a tuple of keys.

    >>> pairs, _ = tree_flatten_with_path({"a": (1, 2)})
    >>> [(keystr(p), v) for p, v in pairs]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    pairs = []
    stack = [(tree, ())]
    # explicit stack (children pushed in reverse) so deep trees do not hit the recursion limit
    while stack:
        x, path = stack.pop()
        if is_leaf is not None and is_leaf(x):
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
    return pairs, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree: Any, is_leaf: Callable | None = None) -> list[tuple]:
    """``[(key_path, leaf), ...]``.

    >>> [keystr(p) for p, _ in tree_leaves_with_path([1, {"b": 2}])]
    ['[0]', "[1]['b']"]
    """
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:
    """Like ``tree_map`` with ``f(key_path, leaf, *others)``.

    >>> tree_map_with_path(lambda p, x: keystr(p) + str(x), {"a": 1})
    {'a': "['a']1"}
    """
    pairs, td = tree_flatten_with_path(tree, is_leaf)
    others = [_up_to(td, r, is_leaf) for r in rest]
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

    def __eq__(self, other):
        return isinstance(other, _Whole) and self.fn == other.fn

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
