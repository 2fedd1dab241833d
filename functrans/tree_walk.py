"""Pytree walks with an explicit stack, for trees deeper than Python's recursion limit.

``tree_util`` flattens and rebuilds by recursion, which is fastest on the trees programs
pass (a few levels), and falls back to these when a tree is too deep for it (JAX takes
trees 1,000 levels deep). They know nothing of pytree types: ``node(x)`` says whether
``x`` is a node (``(type, aux, children)``) or a leaf (None), ``make(type, aux,
child_treedefs)`` builds a treedef, and a treedef is read through its ``child_defs``.

>>> node = lambda x: (list, None, x) if isinstance(x, list) else None
>>> make = lambda t, aux, kids: ("node", kids)
>>> leaves = []
>>> flatten(node, make, "leaf", [1, [2, 3]], leaves), leaves
(('node', ['leaf', ('node', ['leaf', 'leaf'])]), [1, 2, 3])
"""
from __future__ import annotations

from typing import Any, Callable, Iterator


def flatten(node: Callable[[Any], tuple | None], make: Callable[..., Any], leaf: Any,
            tree: Any, leaves: list) -> Any:
    """The treedef of ``tree`` (``leaf`` for each leaf), appending its leaves in order."""
    def frame(x):
        n = node(x)
        return None if n is None else [n[0], n[1], list(n[2]), 0, []]

    top = frame(tree)
    if top is None:
        leaves.append(tree)
        return leaf
    stack = [top]       # [type, aux, children, next child, built child treedefs]
    while True:
        f = stack[-1]
        children, i = f[2], f[3]
        if i < len(children):
            f[3] = i + 1
            sub = frame(children[i])
            if sub is None:
                leaves.append(children[i])
                f[4].append(leaf)
            else:
                stack.append(sub)
            continue
        stack.pop()
        td = make(f[0], f[1], f[4])
        if not stack:
            return td
        stack[-1][4].append(td)


def unflatten(build: Callable[[Any, list], Any], td: Any, it: Iterator) -> Any:
    """The pytree of treedef ``td`` over the leaves from ``it``; ``build(td, children)``
    makes one node.

    >>> class TD:
    ...     def __init__(self, children): self.child_defs = children
    >>> unflatten(lambda td, kids: kids, TD([TD(None), TD([TD(None)])]), iter([1, 2]))
    [1, [2]]
    """
    if td.child_defs is None:
        return next(it)
    stack = [[td, 0, []]]   # [treedef, next child, built children]
    while True:
        f = stack[-1]
        node, i = f[0], f[1]
        if i < len(node.child_defs):
            f[1] = i + 1
            c = node.child_defs[i]
            if c.child_defs is None:
                f[2].append(next(it))
            else:
                stack.append([c, 0, []])
            continue
        stack.pop()
        value = build(node, f[2])
        if not stack:
            return value
        stack[-1][2].append(value)


def flatten_up_to(node: Callable[[Any], tuple | None], equal: Callable[[Any, Any], bool],
                  td: Any, tree: Any) -> list:
    """The subtrees of ``tree`` at the leaves of treedef ``td`` (read through its
    ``node_type``, ``aux`` and ``children``), which must be a prefix of ``tree``'s
    structure; a mismatch raises JAX's ValueError ``pytree structure error`` with its path.

    >>> class TD:
    ...     def __init__(self, kids):
    ...         self.node_type, self.aux, self.child_defs = list, None, kids
    >>> node = lambda x: (list, None, x) if isinstance(x, list) else None
    >>> flatten_up_to(node, lambda a, b: a == b, TD([TD(None), TD(None)]), [1, [2, 3]])
    [1, [2, 3]]
    """
    out, stack = [], [(td, tree, "")]
    while stack:
        t, x, path = stack.pop()
        if t.child_defs is None:
            out.append(x)
            continue
        n = node(x)
        where = f"at key path {path or '()'}"
        if n is None or n[0] is not t.node_type:
            raise ValueError(f"pytree structure error: different types {where}: expected "
                             f"{t.node_type.__name__}, got {type(x).__name__}")
        if len(n[2]) != len(t.child_defs):
            raise ValueError(f"pytree structure error: different numbers of children {where}: "
                             f"expected {len(t.child_defs)}, got {len(n[2])}")
        if not equal(n[1], t.aux):
            raise ValueError(f"pytree structure error: different pytree metadata {where}: "
                             f"expected {t.aux!r:.80}, got {n[1]!r:.80}")
        stack.extend((c, v, f"{path}[{i}]") for i, (c, v) in
                     reversed(list(enumerate(zip(t.child_defs, n[2])))))
    return out
