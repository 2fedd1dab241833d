"""ft.tree and the key-path / transpose / reduce additions to ft.tree_util."""
import collections
import dataclasses

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


def test_treedef_methods_and_structure_functions_match_jax():
    # values printed by JAX 0.10.2's jax.tree_util for the same calls
    td = tu.tree_structure({"a": (1, 2), "b": None})
    assert td.children() == [tu.tree_structure((0, 0)), tu.tree_structure(None)]
    assert td.node_data() == (dict, ("a", "b")) and td.num_nodes == 5
    assert tu.tree_structure(1).node_data() is None and tu.tree_structure(1).children() == []
    assert tu.treedef_children(td) == td.children()
    composed = tu.tree_structure((1, 2)).compose(tu.tree_structure([1, {"x": 2}]))
    assert composed == tu.tree_structure(([0, {"x": 0}], [0, {"x": 0}]))
    assert tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, 2])]) == \
        tu.tree_structure((0, [0, 0]))
    # JAX: a node with no children is a leaf treedef, yet not a leaf for all_leaves
    assert tu.treedef_is_leaf(tu.tree_structure(None)) and tu.treedef_is_leaf(tu.tree_structure(()))
    assert not tu.all_leaves([None]) and not tu.all_leaves([1, ()])
    assert tu.all_leaves([1, 2], is_leaf=lambda x: x == 1)
    assert ft.jit(lambda: None)() is None and ft.jit(lambda: ())() == ()


def test_one_level_flattening_broadcast_and_associative_reduce():
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level({"a": [1, 2], "b": 3}) == (([1, 2], 3), ("a", "b"))
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level(3)
    pairs, aux = tu.flatten_one_level_with_keys(Point(1, [2]))
    assert [tu.keystr((k,)) for k, _ in pairs] == [".x", ".y"] and aux is None
    assert tu.is_tree_node(type(None)) and tu.is_tree_node(Point) and not tu.is_tree_node(int)
    got = tu.tree_broadcast((1, {"a": 2}), (["x", "y"], {"a": {"b": 3, "c": 4}}))
    assert got == ([1, 1], {"a": {"b": 2, "c": 2}})
    assert ft.tree.broadcast([1, 2], [(0, 0), {"a": 0}]) == [(1, 1), {"a": 2}]
    with pytest.raises(ValueError):
        tu.tree_broadcast([1, 2], [0, 0, 0])
    calls = []
    total = tu.tree_reduce_associative(lambda a, b: calls.append((a, b)) or a + b,
                                       [1, (2, 3), {"x": 4}])
    assert total == 10 and calls[0] == (1, 2) and calls[-1] == (3, 7)   # halves, as JAX's
    assert ft.tree.reduce_associative(max, [], identity=-1) == -1
    with pytest.raises(TypeError, match="identity"):
        ft.tree.reduce_associative(max, [])


def test_register_pytree_with_keys_class_and_tree_static():
    @tu.register_pytree_with_keys_class
    class Keyed:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), "aux"

        @classmethod
        def tree_unflatten(cls, aux, children):
            assert aux == "aux"
            return cls(*children)

    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Keyed(1.0, [2.0]))]
    assert paths == [".a", ".b[0]"]
    out = ft.jit(lambda k: Keyed(k.a * 2, k.b))(Keyed(np.float64(3.0), [np.float64(4.0)]))
    assert float(out.a) == 6.0 and float(out.b[0]) == 4.0

    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: float
        name: str = ft.tree.static(default="add")

    assert ft.tree.leaves(Op(1.0, "mul")) == [1.0]
    assert ft.tree.map(lambda v: v + 1, Op(1.0, "mul")) == Op(2.0, "mul")
