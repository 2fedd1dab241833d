"""Regressions found by running JAX 0.10.2's tests/tree_util_test.py against functrans
(driver in /work/jt33/jt13/misc; each test names the JAX test it comes from). Expected
values are JAX 0.10.2's."""
import functrans.numpy as fnp
import functrans.tree as ftree
from functrans import tree_util
from functrans.tree_util import DictKey, SequenceKey


def test_flatten_with_path_is_leaf_takes_path():
    """testFlattenWithPathWithIsLeafWithPathArgument: is_leaf_takes_path=True (JAX 0.10.2)
    calls is_leaf(key_path, x); functrans had no such argument (TypeError)."""
    x = ((1, 2), [3, {4: 4, 5: 5}])
    pairs, td = tree_util.tree_flatten_with_path(
        x, is_leaf=lambda kp, _: len(kp) >= 2, is_leaf_takes_path=True)
    assert pairs == [((SequenceKey(0), SequenceKey(0)), 1), ((SequenceKey(0), SequenceKey(1)), 2),
                     ((SequenceKey(1), SequenceKey(0)), 3),
                     ((SequenceKey(1), SequenceKey(1)), {4: 4, 5: 5})]
    assert td == tree_util.tree_structure(((1, 2), [3, 4]))
    assert tree_util.tree_unflatten(td, [v for _, v in pairs]) == x
    assert ftree.flatten_with_path(x, lambda kp, _: len(kp) >= 2, True)[0] == pairs
    got = ftree.leaves_with_path({"a": [1, 2], "b": 3}, lambda kp, n: kp == (DictKey("a"),),
                                 is_leaf_takes_path=True)
    assert got == [((DictKey("a"),), [1, 2]), ((DictKey("b"),), 3)]
    assert tree_util.tree_leaves_with_path(x, lambda x: isinstance(x, dict)) == pairs[:3] + \
        [((SequenceKey(1), SequenceKey(1)), {4: 4, 5: 5})]


def test_map_with_path_is_leaf_takes_path():
    """testTreeMapWithPathWithIsLeafWithPathArgument: the other trees are taken up to the
    first tree's (path-chosen) structure."""
    x = ((1, 2), [3, 4, 5])
    y = (([3], fnp.array(0)), ([0], 7, [5, 6]))
    for f in (tree_util.tree_map_with_path, ftree.map_with_path):
        out = f(lambda kp, *xs: (kp[0].idx, *xs), x, y,
                is_leaf=lambda kp, n: isinstance(n, list), is_leaf_takes_path=True)
        assert out[0][0] == (0, 1, [3]) and out[0][1][:2] == (0, 2) and out[0][1][2] == 0
        assert out[1] == (1, [3, 4, 5], ([0], 7, [5, 6]))


def test_is_leaf_takes_path_on_a_deep_tree():
    """The structure replays the path decisions, also on a tree deeper than the
    recursion limit (the structure walk restarts with an explicit stack there)."""
    deep = 0
    for i in range(3000):
        deep = [deep, (i,)]
    pairs, td = tree_util.tree_flatten_with_path(
        deep, lambda kp, x: isinstance(x, tuple) and x[0] % 2 == 1, is_leaf_takes_path=True)
    assert td.num_leaves == len(pairs) == 3001
    leaves = [v for _, v in pairs]
    assert leaves[:5] == [0, 0, (1,), 2, (3,)] and leaves[-1] == (2999,)
    assert tree_util.tree_leaves(tree_util.tree_unflatten(td, leaves))[:4] == [0, 0, 1, 2]


def test_partial_of_a_partial_keeps_func_equal_to_it():
    """testPartialFuncAttributeHasStableHash (JAX issue 9429): Partial(partial(print, 1), 2)
    .func was an internal wrapper equal to nothing but another wrapper, so
    p.func == fun was False (JAX: True both ways, same hash); its func/args are the
    wrapped partial's."""
    import functools
    fun = functools.partial(print, 1)
    p1, p2 = tree_util.Partial(fun, 2), tree_util.Partial(fun, 2)
    assert p1.func == fun and fun == p1.func and p1.func == p2.func
    assert hash(p1.func) == hash(p2.func) == hash(fun)
    assert (p1.func.func, p1.func.args, p1.func.keywords) == (print, (1,), {})
    q = tree_util.Partial(functools.partial(lambda a, b, c: 100 * a + 10 * b + c, 1), 2)
    assert q(3) == 123 and tree_util.tree_leaves(q) == [2]
