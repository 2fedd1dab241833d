"""The pytree core: the node registry, ``PyTreeDef``, and flattening and rebuilding.

``tree_util`` builds the public pytree functions on these and re-exports them.

>>> leaves, td = tree_flatten({"b": (1, 2), "a": [3]})
>>> leaves, td.num_leaves
([3, 1, 2], 3)
>>> tree_unflatten(td, [x * 10 for x in leaves])
{'a': [30], 'b': (10, 20)}
"""
from __future__ import annotations

import collections
from typing import Any, Callable, Iterable

from . import tree_walk

__all__ = ["register_pytree_node", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "PyTreeDef", "treedef_is_leaf", "treedef_children",
           "treedef_tuple", "is_tree_node", "flatten_one_level", "node_handlers",
           "treedef_is_strict_leaf"]

# type -> (flatten(x) -> (children, aux), unflatten(aux, children) -> x)
_registry: dict = {}


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
    >>> leaves, td = tree_flatten(Pair(1, 2))
    >>> tree_unflatten(td, [10 * x for x in leaves]).b
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
    __slots__ = ("node_type", "aux", "child_defs", "num_leaves", "_hash")

    def __init__(self, node_type: type | None, aux: Any, children: list | None) -> None:
        self.node_type = node_type
        self.aux = aux
        self.child_defs = children
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
                    and self.child_defs == other.child_defs)
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
            if a.child_defs is None or b.child_defs is None:
                if a.child_defs is not b.child_defs:
                    return False
                continue
            if len(a.child_defs) != len(b.child_defs):
                return False
            pairs.extend(zip(a.child_defs, b.child_defs))
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
            if type(n) is str or n.child_defs is None:
                out.append(n if type(n) is str else "*")
                continue
            opening, closing = _brackets(n)
            keys = [f"{k!r}: " for k in n.aux] if n.node_type is dict else [""] * len(n.child_defs)
            items = [x for i, kc in enumerate(zip(keys, n.child_defs))
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

    def children(self) -> list[PyTreeDef]:
        """The structures of the node's children, as JAX's (``[]`` for a leaf).

        >>> tree_structure({"a": (1, 2), "b": None}).children()
        [PyTreeDef((*, *)), PyTreeDef(None)]
        """
        return [] if self.child_defs is None else list(self.child_defs)

    def node_data(self) -> tuple[type, Any] | None:
        """``(node type, aux data)`` of the top node, None for a leaf, as JAX's.

        >>> tree_structure({"a": 1, "b": 2}).node_data()
        (<class 'dict'>, ('a', 'b'))
        """
        return None if self.child_defs is None else (self.node_type, self.aux)

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with ``inner`` in place of each of its leaves.

        >>> tree_structure((1, 2)).compose(tree_structure([1, 2]))
        PyTreeDef(([*, *], [*, *]))
        """
        if self.child_defs is None:
            return inner
        return PyTreeDef(self.node_type, self.aux, [c.compose(inner) for c in self.child_defs])

    @property
    def num_nodes(self):
        n, stack = 0, [self]
        while stack:
            t = stack.pop()
            n += 1
            if t.child_defs is not None:
                stack.extend(t.child_defs)
        return n


_BRACKETS = {list: ("[", "]"), dict: ("{", "}"), type(None): ("None", "")}


def _brackets(td):
    """The text around the children of node ``td`` in its printed structure."""
    t = td.node_type
    if t is tuple:
        return "(", ",)" if len(td.child_defs) == 1 else ")"
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
    if td.child_defs is None:
        return next(it)
    return _build(td, [_unflatten_shallow(c, it) for c in td.child_defs])


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
    """Whether the structure has a single node: a leaf, or (as in JAX) a node with no
    children such as ``None`` or ``()``.

    >>> treedef_is_leaf(tree_structure(3.0)), treedef_is_leaf(tree_structure((3.0,)))
    (True, False)
    >>> treedef_is_leaf(tree_structure(None))
    True
    """
    return td.child_defs is None or not td.child_defs


def treedef_is_strict_leaf(td: PyTreeDef) -> bool:
    """Whether the structure is one leaf (``None`` and ``()`` are not).

    >>> treedef_is_strict_leaf(tree_structure(3.0)), treedef_is_strict_leaf(tree_structure(None))
    (True, False)
    """
    return td.child_defs is None


def treedef_children(td: PyTreeDef) -> list[PyTreeDef]:
    """``td.children()``: the structures of the top node's children.

    >>> treedef_children(tree_structure((1, [2, 3])))
    [PyTreeDef(*), PyTreeDef([*, *])]
    """
    return td.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose items have the structures ``treedefs``.

    >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])])
    PyTreeDef((*, [*, *]))
    """
    return PyTreeDef(tuple, None, list(treedefs))


def is_tree_node(typ: type) -> bool:
    """Whether ``typ`` is a pytree node type: built in, registered, or a namedtuple.

    >>> is_tree_node(tuple), is_tree_node(type(None)), is_tree_node(int)
    (True, True, False)
    """
    return typ in _registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def flatten_one_level(tree: Any) -> tuple[tuple, Any]:
    """``(children, aux data)`` of a pytree node, one level down; a leaf is a ValueError.

    >>> flatten_one_level({"a": [1, 2], "b": 3})
    (([1, 2], 3), ('a', 'b'))
    """
    t, h = node_handlers(tree)
    if h is None:
        raise ValueError(f"can't tree-flatten type: {t}")
    children, aux = h[0](tree)
    return tuple(children), aux

