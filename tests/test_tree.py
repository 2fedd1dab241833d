"""ft.tree and the key-path / transpose / reduce additions to ft.tree_util."""
import collections

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import tree_util
from functrans import tree_util as tu

Point = collections.namedtuple("Point", "x y")


class Box:
    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Box, lambda b: ((b.a, b.b), "box"), lambda aux, c: Box(*c))


def test_short_names_match_tree_util():
    t = {"b": (1, [2, None]), "a": Point(3, 4)}
    assert ft.tree.leaves(t) == tu.tree_leaves(t) == [3, 4, 1, 2]
    leaves, td = ft.tree.flatten(t)
    assert ft.tree.unflatten(td, leaves) == t
    assert ft.tree.structure(t) == td
    assert ft.tree.map(lambda x: x * 10, t) == {"b": (10, [20, None]), "a": Point(30, 40)}
    assert ft.tree.all(t) and not ft.tree.all([1, 0])
    assert ft.tree.reduce(lambda a, b: a + b, t) == 10
    assert ft.tree.reduce(lambda a, b: a + b, t, 100) == 110


def test_treedef_prints_like_jax():
    assert repr(ft.tree.structure((1, [2], {"a": 3}, None))) == \
        "PyTreeDef((*, [*], {'a': *}, None))"
    assert repr(ft.tree.structure((1,))) == "PyTreeDef((*,))"
    assert repr(ft.tree.structure(Point(1, 2))) == \
        "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"
    assert repr(ft.tree.structure(Box(1, 2))) == "PyTreeDef(CustomNode(Box['box'], [*, *]))"
    assert repr(ft.tree.structure(5)) == "PyTreeDef(*)"


def test_paths():
    t = {"w": [1, Point(2, 3)], "z": Box(4, 5)}
    pairs, td = ft.tree.flatten_with_path(t)
    assert [v for _, v in pairs] == ft.tree.leaves(t)
    assert td == ft.tree.structure(t)
    assert [tu.keystr(p) for p, _ in pairs] == [
        "['w'][0]", "['w'][1].x", "['w'][1].y", "['z'][<flat index 0>]",
        "['z'][<flat index 1>]"]
    assert pairs[0][0] == (tu.DictKey("w"), tu.SequenceKey(0))
    assert pairs[1][0][-1] == tu.GetAttrKey("x")
    assert tu.keystr(pairs[1][0], simple=True, separator="/") == "w/1/x"
    assert ft.tree.leaves_with_path(t) == pairs
    out = ft.tree.map_with_path(lambda p, x, y: (len(p), x + y), [1, (2,)], [10, (20,)])
    assert out == [(1, 11), ((2, 22),)]


def test_nested_tree_paths():
    t = 0
    for _ in range(200):
        t = [t]
    pairs = tu.tree_leaves_with_path(t, is_leaf=lambda x: isinstance(x, int))
    assert len(pairs) == 1 and len(pairs[0][0]) == 200


def test_transpose():
    outer, inner = ft.tree.structure([0, 0, 0]), ft.tree.structure({"a": 0, "b": (0,)})
    t = [{"a": i, "b": (i * 10,)} for i in range(3)]
    assert ft.tree.transpose(outer, inner, t) == {"a": [0, 1, 2], "b": ([0, 10, 20],)}
    with pytest.raises(TypeError):
        ft.tree.transpose(outer, inner, t[:2])


def test_tree_works_with_transforms():
    params = {"w": ft.numpy.ones(3), "b": ft.numpy.zeros(())}
    g = ft.grad(lambda p: ft.numpy.sum(p["w"] * 2.0) + p["b"])(params)
    assert ft.tree.structure(g) == ft.tree.structure(params)
    assert ft.tree.map(lambda x: x.tolist(), g) == {"w": [2.0, 2.0, 2.0], "b": 1.0}


def test_register_dataclass_and_register_static_as_jax():
    import dataclasses
    import functools

    @functools.partial(tree_util.register_dataclass, data_fields=["a", "b"], meta_fields=["n"])
    @dataclasses.dataclass
    class Cfg:
        a: object
        b: object
        n: int

    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Inferred:
        x: object
        k: int = dataclasses.field(default=2, metadata=dict(static=True))

    c = Cfg(np.array(2.0), np.array([1.0, 2.0]), 3)
    g = ft.grad(lambda c: c.a * fnp.sum(c.b) * c.n)(c)
    assert isinstance(g, Cfg) and g.n == 3
    np.testing.assert_allclose(g.a, 9.0)
    np.testing.assert_allclose(g.b, [6.0, 6.0])
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(c)[0]]
    assert paths == [".a", ".b"]
    leaves, td = tree_util.tree_flatten(Inferred(np.ones(2), 5))
    assert len(leaves) == 1 and tree_util.tree_unflatten(td, [np.zeros(2)]).k == 5
    assert ft.jit(lambda v: v.x * v.k)(Inferred(np.ones(2), 5)).tolist() == [5.0, 5.0]
    with pytest.raises(TypeError, match="both"):
        tree_util.register_dataclass(Cfg, data_fields=["a"])

    @tree_util.register_static
    class Tag:
        pass

    t = Tag()
    assert tree_util.tree_leaves([t, 1]) == [1]
    assert tree_util.tree_map(lambda v: v + 1, [t, 1])[0] is t


def test_dict_with_unorderable_keys_raises_jax_value_error():
    # JAX's pytrees guide: tree.map over {1: 7, "y": 42} is a ValueError naming the sort
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        ft.tree.map(lambda x: x + 1, {1: 7, "y": 42})
    assert ft.tree.map(lambda x: x + 1, {2: 7, 1: 42}) == {1: 43, 2: 8}
