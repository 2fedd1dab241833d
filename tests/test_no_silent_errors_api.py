"""The API boundary as JAX's (issue 13.4): static arguments by position or keyword and
validated, pytree aux data compared by equality, deep pytrees, non-array arguments that
are not differentiated passed through, clear errors for what is not an array."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import tree_util


def _scale(x, n):
    return x * n if n > 1 else x


@pytest.mark.parametrize("spec", [dict(static_argnums=1), dict(static_argnames="n"),
                                  dict(static_argnums=-1), dict(static_argnames=("n",))])
def test_static_arguments_work_by_position_or_keyword(spec):
    f = ft.jit(_scale, **spec)
    assert float(f(2.0, 3)) == 6.0
    assert float(f(2.0, n=3)) == 6.0
    assert float(f(x=2.0, n=3)) == 6.0
    assert float(f(2.0, n=1)) == 2.0


def test_issue_examples_static_argnames_by_position_and_argnums_by_keyword():
    assert float(ft.jit(lambda x: x * 2 if x > 1 else x, static_argnames="x")(2.0)) == 4.0
    assert float(ft.jit(lambda x: x * 2 if x > 1 else x, static_argnums=0)(x=2.0)) == 4.0


def test_static_argnums_and_argnames_are_validated():
    with pytest.raises(ValueError, match=r"static_argnums \(3,\)"):
        ft.jit(lambda x: x, static_argnums=3)
    with pytest.raises(ValueError, match=r"static_argnums \(-2,\)"):
        ft.jit(lambda x: x, static_argnums=-2)
    with pytest.raises(ValueError, match=r"static_argnames \('y',\)"):
        ft.jit(lambda x: x, static_argnames="y")
    # *args / **kwargs accept any position or name
    assert float(ft.jit(lambda *a: a[0] * a[1], static_argnums=1)(2.0, 3)) == 6.0
    assert float(ft.jit(lambda x, **k: x * k["n"], static_argnames="n")(2.0, n=3)) == 6.0


class _Point:
    def __init__(self, x, meta):
        self.x, self.meta = x, meta


tree_util.register_pytree_node(_Point, lambda p: ((p.x,), p.meta), lambda m, c: _Point(c[0], m))


def test_unhashable_pytree_aux_data_is_compared_by_equality():
    f = ft.jit(lambda p: p.x * p.meta["k"])
    assert f(_Point(fnp.ones(2), {"k": 2.0})).tolist() == [2.0, 2.0]
    assert f(_Point(fnp.ones(2), {"k": 2.0})).tolist() == [2.0, 2.0]
    assert f(_Point(fnp.ones(2), {"k": 3.0})).tolist() == [3.0, 3.0]     # not a stale hit
    assert f.cache_info() == {"hits": 1, "misses": 2, "entries": 2}
    g = ft.grad(lambda p: fnp.sum(p.x) * p.meta["k"])(_Point(fnp.ones(2), {"k": 2.0}))
    assert g.meta == {"k": 2.0} and g.x.tolist() == [2.0, 2.0]
    a, b = (tree_util.tree_structure(_Point(1.0, {"k": v})) for v in (1, 1))
    assert a == b and hash(a) == hash(b)
    assert tree_util.tree_structure(_Point(1.0, np.ones(2))) != \
        tree_util.tree_structure(_Point(1.0, np.ones(2)))       # arrays: not provably equal


def _nested(depth, leaf):
    t = leaf
    for i in range(depth):
        t = [t] if i % 3 else ({"a": t} if i % 2 else (t, None))
    return t


def test_pytrees_nested_1000_deep():
    t = _nested(1000, 1.5)
    leaves, td = tree_util.tree_flatten(t)
    assert leaves == [1.5]
    assert td == tree_util.tree_structure(_nested(1000, 2.0)) and hash(td)
    assert td.num_nodes > 1000
    back = tree_util.tree_unflatten(td, [3.0])
    assert tree_util.tree_leaves(back) == [3.0]
    assert tree_util.tree_leaves(ft.jit(lambda t: t)(t))[0] == 1.5
    g = ft.grad(lambda t: tree_util.tree_leaves(t)[0] ** 2)(t)
    assert float(tree_util.tree_leaves(g)[0]) == 3.0
    m = tree_util.tree_map(lambda v: v * 2, t)
    assert tree_util.tree_leaves(m) == [3.0]


_DEEP_KINDS = {"list": lambda t: [t], "tuple": lambda t: (t,), "dict": lambda t: {"a": t},
               "mixed": None}


def _deep(kind, leaf, depth=1000):
    if _DEEP_KINDS[kind] is None:
        return _nested(depth, leaf)
    for _ in range(depth):
        leaf = _DEEP_KINDS[kind](leaf)
    return leaf


def _only_leaf(t):
    (leaf,) = tree_util.tree_leaves(t)
    return leaf


@pytest.mark.parametrize("kind", _DEEP_KINDS)
def test_every_transform_takes_pytrees_1000_deep(kind):
    # as JAX: no RecursionError anywhere (vmap's in_axes expansion recursed)
    x = fnp.arange(3.0)
    t = _deep(kind, x)
    td = tree_util.tree_structure(t)

    def same_tree(out, want):
        assert tree_util.tree_structure(out) == td
        np.testing.assert_array_equal(_only_leaf(out), want)

    same_tree(ft.jit(lambda t: t)(t), x)
    same_tree(ft.grad(lambda t: fnp.sum(_only_leaf(t) ** 2))(t), 2 * x)
    same_tree(ft.vmap(lambda t: tree_util.tree_map(lambda v: v * 2, t))(t), 2 * x)
    axes = _deep(kind, 0)          # an in_axes prefix as deep as the argument
    same_tree(ft.vmap(lambda t: t, in_axes=(axes,))(t), x)
    same_tree(ft.vmap(lambda t: t, in_axes=(axes,), out_axes=axes)(t), x)
    out, tan = ft.jvp(lambda t: tree_util.tree_map(fnp.sin, t), (t,), (t,))
    same_tree(out, np.sin(x))
    same_tree(tan, np.cos(x) * x)
    y, pullback = ft.vjp(lambda t: tree_util.tree_map(lambda v: v * 3, t), t)
    same_tree(y, 3 * x)
    (ct,) = pullback(t)
    same_tree(ct, 3 * x)
    # tree_util itself
    leaves, td2 = tree_util.tree_flatten(t)
    assert td2 == td and hash(td2) == hash(td) and len(leaves) == 1
    same_tree(tree_util.tree_unflatten(td, [x]), x)
    same_tree(tree_util.tree_map(lambda v: v + 1, t), x + 1)
    (path, leaf), = tree_util.tree_flatten_with_path(t)[0]
    assert len(path) == 1000 and leaf is x
    same_tree(tree_util.tree_map_with_path(lambda p, v: v * len(p), t), 1000 * x)
    text = repr(td)
    assert text.startswith("PyTreeDef(") and text.count("*") == 1 and len(text) > 1000


def test_non_array_arguments_not_differentiated_pass_through():
    assert float(ft.grad(lambda g, x: g(x), 1)(fnp.sin, 1.0)) == pytest.approx(np.cos(1.0))
    assert float(ft.grad(lambda s, x: x * len(s), 1)("abc", 1.0)) == 3.0
    v, g = ft.value_and_grad(lambda g, x: g(x), 1)(fnp.exp, 0.0)
    assert float(v) == 1.0 and float(g) == 1.0
    np.testing.assert_allclose(ft.jacfwd(lambda g, x: g(x), 1)(fnp.sin, fnp.zeros(2)),
                               np.eye(2))
    np.testing.assert_allclose(ft.jacrev(lambda g, x: g(x), 1)(fnp.sin, fnp.zeros(2)),
                               np.eye(2))
    np.testing.assert_allclose(ft.vmap(lambda g, x: g(x), in_axes=(None, 0))(fnp.cos,
                                                                            fnp.zeros(3)),
                               np.ones(3))
    assert float(ft.grad(ft.grad(lambda g, x: g(x), 1), 1)(fnp.sin, 0.0)) == 0.0
    with pytest.raises(TypeError, match="function"):
        ft.grad(lambda g, x: g(x), 0)(fnp.sin, 1.0)        # differentiated: must be an array
    with pytest.raises(TypeError, match="function"):
        ft.vmap(lambda g, x: g(x))(fnp.sin, fnp.ones(2))     # mapped: must be an array


# --------------------------------------------------------------------------- errors

from functrans import errors  # noqa: E402


def test_exception_classes_are_jax_s_or_subclass_both():
    with pytest.raises(errors.TracerBoolConversionError):
        ft.jit(lambda x: 1.0 if x > 0 else 0.0)(1.0)
    with pytest.raises(errors.ConcretizationError):         # still caught as before
        ft.jit(lambda x: 1.0 if x > 0 else 0.0)(1.0)
    with pytest.raises(errors.TracerIntegerConversionError):
        ft.jit(lambda n: fnp.zeros(3)[: list(range(n))[-1]])(3)
    with pytest.raises(errors.NonConcreteBooleanIndexError):
        ft.jit(lambda x: x[x > 0])(fnp.ones(3))
    with pytest.raises(IndexError):
        ft.jit(lambda x: x[x > 0])(fnp.ones(3))
    for catch in (TypeError, ValueError):       # JAX raises TypeError, numpy ValueError
        with pytest.raises(catch, match=r"\(3,\) and \(4,\)"):
            fnp.dot(fnp.ones(3), fnp.ones(4))
        with pytest.raises(catch, match=r"\(3,\) and \(4,\)"):
            ft.jit(fnp.dot)(fnp.ones(3), fnp.ones(4))


def test_clear_type_errors_at_the_api_boundary():
    with pytest.raises(TypeError, match="list holding traced values"):
        ft.jit(fnp.sin)([1.0, 2.0])
    with pytest.raises(TypeError, match="type str .*'abcd'.* not an array"):
        ft.jit(lambda x: "abcd")(1.0)
    with pytest.raises(TypeError, match="not an array"):
        ft.vmap(lambda x: "a")(fnp.ones(2))
    obj = np.array([1, None], dtype=object)
    with pytest.raises(TypeError, match="sin: argument 0 has dtype object"):
        fnp.sin(obj)
    with pytest.raises(TypeError, match="add: argument 0 has dtype object"):
        fnp.add(obj, 1.0)
    for run in (lambda: ft.jit(fnp.sin)(obj), lambda: ft.grad(fnp.sin)(obj),
                lambda: ft.jit(fnp.sin)(np.array(["a"]))):
        with pytest.raises(TypeError, match="dtype (object|<U1) is not a valid array"):
            run()
    for bad in ("abc", np.sin, object()):     # names the value and the way out, as JAX
        with pytest.raises(TypeError, match=r"of type \w+ is not a valid array.*static_argnums"):
            ft.jit(lambda f, x: x)(bad, 1.0)


@pytest.mark.parametrize("backend", ["interpret", None])
def test_compiled_results_never_share_memory_with_arguments(backend):
    a = np.ones(4)
    for f in (lambda x: x, lambda x: x.reshape(2, 2), lambda x: x[1:], lambda x: (x, x * 2)):
        outs = ft.jit(f, backend=backend)(a)
        for o in outs if isinstance(outs, tuple) else (outs,):
            assert not np.shares_memory(o, a)
    r = ft.jit(lambda x: x, backend=backend)(a)
    a[0] = 5.0                       # the caller writes into its array afterwards
    assert float(r[0]) == 1.0


@pytest.mark.parametrize("backend", ["interpret", None])
def test_closed_over_arrays_are_seen_as_when_traced(backend):
    """A captured numpy array is a constant of the compiled function, copied when traced
    (as in JAX): a later write by the caller changes no result, earlier or later, and one
    result never mixes the folded old value (c + 0.0) with a live new one (c)."""
    c = np.arange(3.0)
    f = ft.jit(lambda x: (c, c + 0.0, c.reshape(3, 1), x * 0 + c), backend=backend)
    first = f(1.0)
    c[0] = 100.0
    for outs in (first, f(1.0)):
        for o in outs:
            np.testing.assert_array_equal(np.ravel(o), [0.0, 1.0, 2.0])
    view = fnp.asarray(c)            # an Array viewing the caller's memory, captured
    g = ft.jit(lambda x: x + view, backend=backend)
    np.testing.assert_array_equal(g(0.0), [100.0, 1.0, 2.0])
    c[1] = -1.0
    np.testing.assert_array_equal(g(0.0), [100.0, 1.0, 2.0])


@pytest.mark.parametrize("backend", ["interpret", None])
def test_writing_into_a_result_changes_no_other_call(backend):
    """A constant result is a fresh buffer per call, or read-only (the interpreter's
    broadcast of a scalar, as JAX's arrays are): writing into one (through numpy) leaves
    the next call's result, and the constant, as they were."""
    c = np.arange(3.0)
    f = ft.jit(lambda x: (fnp.ones(3), c, c[1:], x * 0 + c), backend=backend)
    for o in f(1.0):
        try:
            np.asarray(o)[...] = 99.0
        except ValueError as e:
            assert "read-only" in str(e)
    want = ([1.0, 1.0, 1.0], [0.0, 1.0, 2.0], [1.0, 2.0], [0.0, 1.0, 2.0])
    for o, w in zip(f(1.0), want):
        np.testing.assert_array_equal(o, w)
    np.testing.assert_array_equal(c, [0.0, 1.0, 2.0])


def _layouts():
    base = np.arange(32.0).reshape(4, 8)
    readonly = base[:, :4].copy()
    readonly.setflags(write=False)
    raw = b"\0" + np.arange(16.0).tobytes()      # float64 at an odd address: unaligned
    return {"strided": base[:, ::2], "fortran": np.asfortranarray(base[:, :4]),
            "reversed": base[::-1, :4], "transposed": base[:4, :4].T,
            "broadcast": np.broadcast_to(np.arange(4.0), (4, 4)), "readonly": readonly,
            "unaligned": np.frombuffer(raw, np.float64, offset=1).reshape(4, 4)}


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_arguments_in_any_numpy_layout(backend):
    """Every layout numpy makes is a valid argument, first call or later (the CPU
    backend raised 'a native segment rejected its arguments' on an unaligned array)."""
    f = ft.jit(lambda x, y: (x * 2.0 + y, fnp.sum(x, 0), x @ y), backend=backend)
    layouts = _layouts()
    for a in layouts.values():
        for b in (a, layouts["strided"], layouts["unaligned"]):
            want = (a * 2.0 + b, np.sum(a, 0), a @ b)
            for _ in range(2):                       # compile, then the fast path
                for got, w in zip(f(a, b), want):
                    np.testing.assert_allclose(got, w, rtol=1e-15)
    with pytest.raises(TypeError, match=r"dtype\('>f8'\)"):
        f(np.ones((4, 4), ">f8"), np.ones((4, 4)))


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_python_ints_beyond_int64_raise_overflow_error(backend):
    """A Python int argument is a weak int64 (as in JAX); beyond its range it raised
    nothing on the CPU backend and wrapped (jit(lambda n: n * 2)(2**63) gave 0), on the
    first call and on the fast path after an ordinary one."""
    f = ft.jit(lambda n, x: (n * 2, x + n), backend=backend)
    assert [int(v) for v in f(2 ** 63 - 1, np.ones(1))[0].ravel()] == [-2]   # int64 wraps
    for n in (2 ** 63, 2 ** 64 - 1, -2 ** 63 - 1, 2 ** 100):
        with pytest.raises(OverflowError, match=f"argument {n} does not fit in int64"):
            f(n, np.ones(1))
    assert int(f(-2 ** 63, np.ones(1))[0]) == 0
    for transform in (ft.vmap, ft.grad):
        with pytest.raises(OverflowError, match="does not fit in int64"):
            transform(lambda x, n: fnp.sum(x * n))(np.ones(2), 2 ** 63)
    np.testing.assert_array_equal(f(np.uint64(2 ** 63), np.ones(1))[0], [0])   # uint64 wraps


def test_static_arguments_equal_in_python_but_of_other_types_recompile():
    """1, 1.0, True and np.float32(1) are equal with one hash; the jit cache reused the
    first one's compiled function for the others (fnp.full(2, 1.0) came back int64)."""
    f = ft.jit(lambda x, n: x + fnp.full(2, n), static_argnums=1)
    g = ft.jit(lambda x, n: x + fnp.full(2, n), static_argnames="n")
    x = np.zeros(2, np.int32)
    for n in (1, 1.0, True, np.float32(1), 1):
        eager = x + fnp.full(2, n)
        for h in (lambda: f(x, n), lambda: g(x, n=n), lambda: g(x, n)):
            assert np.asarray(h()).dtype == eager.dtype, n
    assert f._misses == 4        # one compile per type, the second 1 reuses the first
