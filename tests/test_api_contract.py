"""The public API contract (shared/API.md) checked name by name: every name API.md
lists exists and works eagerly, under ``jit``, under ``vmap`` and, where
differentiable, under ``grad`` (against central finite differences).

The array methods, bad input and numpy 2 semantics on edge inputs are in
test_api_semantics.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import nn, random
from functrans.tree_util import tree_flatten, tree_map

R = np.random.default_rng(0)


def _n(*shape):
    return R.standard_normal(shape)


def _p(*shape):
    return R.uniform(0.5, 2.0, shape)


def _u(*shape):
    return R.uniform(-0.9, 0.9, shape)


def _spd(n):
    a = R.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


# --------------------------------------------------------------------------- 1. the name list

class S:
    """A spec: ``fun(*args)`` compared with ``ref(*args)`` (numpy); ``diff``: grad-checkable."""

    def __init__(self, name, fun, args, ref=None, diff=True, batch=True, argnums=None):
        self.name, self.fun, self.args, self.ref = name, fun, args, ref
        self.diff, self.batch, self.argnums = diff, batch, argnums

    def __repr__(self):
        return self.name


SPECS = []


def spec(*a, **k):
    SPECS.append(S(*a, **k))


_UNARY = {  # name: argument domain
    "negative": _n, "abs": _n, "sign": _n, "exp": _n, "exp2": _n, "expm1": _n, "log": _p,
    "log2": _p, "log10": _p, "log1p": _p, "sqrt": _p, "cbrt": _p, "square": _n,
    "reciprocal": _p, "sin": _n, "cos": _n, "tan": _u, "arcsin": _u, "arccos": _u,
    "arctan": _n, "sinh": _n, "cosh": _n, "tanh": _n, "arcsinh": _n,
    "arccosh": lambda *s: 1.5 + _p(*s), "arctanh": _u, "floor": _n, "ceil": _n, "round": _n,
    "isnan": _n, "isfinite": _n, "logical_not": _n,
}
_NONDIFF = {"sign", "floor", "ceil", "round", "isnan", "isfinite", "logical_not"}
for _name, _dom in _UNARY.items():
    spec(_name, getattr(fnp, _name), [_dom(2, 3)], getattr(np, _name),
         diff=_name not in _NONDIFF)

_BINARY = {
    "add": _n, "subtract": _n, "multiply": _n, "divide": _p, "true_divide": _p,
    "floor_divide": _p, "power": _p, "arctan2": _n, "maximum": _n, "minimum": _n,
    "logical_and": _n, "logical_or": _n, "equal": _n, "not_equal": _n, "less": _n,
    "less_equal": _n, "greater": _n, "greater_equal": _n,
}
_NONDIFF2 = {"floor_divide", "logical_and", "logical_or", "equal", "not_equal", "less",
             "less_equal", "greater", "greater_equal"}
for _name, _dom in _BINARY.items():
    # broadcasting (2, 3) with (3,)
    spec(_name, getattr(fnp, _name), [_dom(2, 3), _dom(3)], getattr(np, _name),
         diff=_name not in _NONDIFF2)

spec("clip", lambda x: fnp.clip(x, -0.5, 0.5), [_n(2, 3)], lambda x: np.clip(x, -0.5, 0.5))
spec("where", lambda c, x, y: fnp.where(c > 0, x, y), [_n(2, 3), _n(2, 3), _n(3)],
     lambda c, x, y: np.where(c > 0, x, y), argnums=(1, 2))

# creation: results depend only on static values; a traced operand drives the *_like ones
spec("array", lambda x: fnp.array(x) * 1.0, [_n(3)], lambda x: np.array(x))
spec("asarray", lambda x: fnp.asarray(x, dtype=np.float32), [_n(3)],
     lambda x: np.asarray(x, np.float32), diff=False)
spec("zeros", lambda x: x + fnp.zeros((2, 3)), [_n(3)], lambda x: x + np.zeros((2, 3)))
spec("ones", lambda x: x * fnp.ones(3, "float32"), [_n(3)],
     lambda x: x * np.ones(3, np.float32))
spec("full", lambda x: x + fnp.full((2, 3), 2.5), [_n(3)], lambda x: x + np.full((2, 3), 2.5))
spec("empty", lambda x: fnp.add(x, fnp.empty((2, 3), "float32").size), [_n(3)], lambda x: x + 6)
spec("zeros_like", lambda x: x + fnp.zeros_like(x), [_n(3)], lambda x: x + np.zeros_like(x))
spec("ones_like", lambda x: fnp.ones_like(x), [_n(3)], np.ones_like, diff=False)
spec("full_like", lambda x: fnp.full_like(x, 7), [_n(2)], lambda x: np.full_like(x, 7),
     diff=False)
spec("arange", lambda x: x * fnp.arange(3), [_n(3)], lambda x: x * np.arange(3))
spec("linspace", lambda x: x * fnp.linspace(0, 1, 3), [_n(3)],
     lambda x: x * np.linspace(0, 1, 3))
spec("eye", lambda x: x @ fnp.eye(3, k=1), [_n(2, 3)], lambda x: x @ np.eye(3, k=1))
spec("identity", lambda x: x @ fnp.identity(3), [_n(2, 3)], lambda x: x @ np.identity(3))

# reductions, with axis and keepdims
for _name in ["sum", "prod", "mean", "var", "std", "max", "min"]:
    spec(_name, getattr(fnp, _name), [_p(2, 3)], getattr(np, _name))
    spec(_name + "_axis_keepdims", lambda x, _f=getattr(fnp, _name): _f(x, axis=-1, keepdims=True),
         [_p(2, 3)], lambda x, _f=getattr(np, _name): _f(x, axis=-1, keepdims=True))
    spec(_name + "_axes", lambda x, _f=getattr(fnp, _name): _f(x, axis=(0, 2)),
         [_p(2, 3, 2)], lambda x, _f=getattr(np, _name): _f(x, axis=(0, 2)))
for _name in ["argmax", "argmin"]:
    spec(_name, getattr(fnp, _name), [_n(2, 3)], getattr(np, _name), diff=False)
    spec(_name + "_axis_keepdims", lambda x, _f=getattr(fnp, _name): _f(x, axis=0, keepdims=True),
         [_n(2, 3)], lambda x, _f=getattr(np, _name): _f(x, axis=0, keepdims=True), diff=False)
for _name in ["all", "any"]:
    spec(_name, lambda x, _f=getattr(fnp, _name): _f(x > 0), [_n(2, 3)],
         lambda x, _f=getattr(np, _name): _f(x > 0), diff=False)
    spec(_name + "_axis_keepdims", lambda x, _f=getattr(fnp, _name): _f(x > 0, axis=1, keepdims=True),
         [_n(2, 3)], lambda x, _f=getattr(np, _name): _f(x > 0, axis=1, keepdims=True), diff=False)
for _name in ["cumsum", "cumprod"]:
    spec(_name, getattr(fnp, _name), [_p(2, 3)], getattr(np, _name))
    spec(_name + "_axis", lambda x, _f=getattr(fnp, _name): _f(x, axis=-1), [_p(2, 3)],
         lambda x, _f=getattr(np, _name): _f(x, axis=-1))

# structural
spec("reshape", lambda x: fnp.reshape(x, (3, -1)), [_n(2, 3)], lambda x: np.reshape(x, (3, -1)))
spec("ravel", fnp.ravel, [_n(2, 3)], np.ravel)
spec("transpose", lambda x: fnp.transpose(x, (2, 0, 1)), [_n(2, 3, 4)],
     lambda x: np.transpose(x, (2, 0, 1)))
spec("swapaxes", lambda x: fnp.swapaxes(x, 0, -1), [_n(2, 3, 4)], lambda x: np.swapaxes(x, 0, -1))
spec("moveaxis", lambda x: fnp.moveaxis(x, 0, -1), [_n(2, 3, 4)], lambda x: np.moveaxis(x, 0, -1))
spec("expand_dims", lambda x: fnp.expand_dims(x, (0, -1)), [_n(2, 3)],
     lambda x: np.expand_dims(x, (0, -1)))
spec("squeeze", lambda x: fnp.squeeze(x, -1), [_n(2, 1, 3, 1)], lambda x: np.squeeze(x, -1))
spec("broadcast_to", lambda x: fnp.broadcast_to(x, (2, 3)), [_n(3)],
     lambda x: np.broadcast_to(x, (2, 3)))
spec("concatenate", lambda x, y: fnp.concatenate([x, y], axis=-1), [_n(2, 3), _n(2, 1)],
     lambda x, y: np.concatenate([x, y], axis=-1))
spec("stack", lambda x, y: fnp.stack([x, y], axis=1), [_n(2, 3), _n(2, 3)],
     lambda x, y: np.stack([x, y], axis=1))
spec("vstack", lambda x, y: fnp.vstack([x, y]), [_n(3), _n(2, 3)], lambda x, y: np.vstack([x, y]))
spec("hstack", lambda x, y: fnp.hstack([x, y]), [_n(3), _n(2)], lambda x, y: np.hstack([x, y]))
spec("split", lambda x: fnp.split(x, [1, 3], axis=1), [_n(2, 4)],
     lambda x: np.split(x, [1, 3], axis=1))
spec("take", lambda x: fnp.take(x, np.array([2, 0, 2]), axis=1), [_n(2, 3)],
     lambda x: np.take(x, np.array([2, 0, 2]), axis=1))
spec("take_along_axis", lambda x: fnp.take_along_axis(x, np.array([[2, 0], [1, 1]]), axis=1),
     [_n(2, 3)], lambda x: np.take_along_axis(x, np.array([[2, 0], [1, 1]]), axis=1))
spec("flip", lambda x: fnp.flip(x, -1), [_n(2, 3)], lambda x: np.flip(x, -1))
spec("tile", lambda x: fnp.tile(x, (2, 1, 2)), [_n(2, 3)], lambda x: np.tile(x, (2, 1, 2)))
spec("repeat", lambda x: fnp.repeat(x, 2, axis=0), [_n(2, 3)], lambda x: np.repeat(x, 2, axis=0))
spec("pad", lambda x: fnp.pad(x, ((1, 0), (0, 2))), [_n(2, 3)],
     lambda x: np.pad(x, ((1, 0), (0, 2))))

# products
spec("dot", fnp.dot, [_n(2, 3), _n(3, 4)], np.dot)
spec("matmul", fnp.matmul, [_n(5, 2, 3), _n(3, 4)], np.matmul)
spec("vdot", fnp.vdot, [_n(2, 3), _n(2, 3)], np.vdot)
spec("inner", fnp.inner, [_n(2, 3), _n(4, 3)], np.inner)
spec("outer", fnp.outer, [_n(3), _n(2, 2)], np.outer)
spec("tensordot", lambda a, b: fnp.tensordot(a, b, axes=([1, 2], [0, 1])),
     [_n(2, 3, 4), _n(3, 4, 2)], lambda a, b: np.tensordot(a, b, axes=([1, 2], [0, 1])))
spec("einsum", lambda a, b: fnp.einsum("ij,jk->ki", a, b), [_n(2, 3), _n(3, 4)],
     lambda a, b: np.einsum("ij,jk->ki", a, b))
spec("trace", lambda a: fnp.trace(a, offset=1), [_n(3, 4)], lambda a: np.trace(a, offset=1))
spec("diag", lambda a: fnp.diag(a, -1), [_n(3, 4)], lambda a: np.diag(a, -1))
spec("diag_1d", lambda a: fnp.diag(a, 1), [_n(3)], lambda a: np.diag(a, 1))
spec("diagonal", lambda a: fnp.diagonal(a, 1, 0, 2), [_n(3, 2, 4)],
     lambda a: np.diagonal(a, 1, 0, 2))

# linalg
spec("linalg.solve", fnp.linalg.solve, [_spd(3), _n(3, 2)], np.linalg.solve)
spec("linalg.inv", fnp.linalg.inv, [_spd(3)], np.linalg.inv)
spec("linalg.det", fnp.linalg.det, [_spd(3)], np.linalg.det)
spec("linalg.slogdet", lambda a: tuple(fnp.linalg.slogdet(a)), [_spd(3)],
     lambda a: tuple(np.linalg.slogdet(a)))
spec("linalg.cholesky", fnp.linalg.cholesky, [_spd(3)], np.linalg.cholesky)
spec("linalg.norm", fnp.linalg.norm, [_n(2, 3)], np.linalg.norm)
spec("linalg.norm_axis", lambda x: fnp.linalg.norm(x, axis=-1, keepdims=True), [_n(2, 3)],
     lambda x: np.linalg.norm(x, axis=-1, keepdims=True))
spec("linalg.norm_fro", lambda x: fnp.linalg.norm(x, "fro"), [_n(2, 3)],
     lambda x: np.linalg.norm(x, "fro"))


# nn
def _np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _np_lse(x, axis=None, keepdims=False):
    m = x.max(axis=axis, keepdims=True)
    out = np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


spec("nn.relu", nn.relu, [_n(2, 3)], lambda x: np.maximum(x, 0))
spec("nn.sigmoid", nn.sigmoid, [_n(2, 3)], lambda x: 1 / (1 + np.exp(-x)))
spec("nn.softplus", nn.softplus, [_n(2, 3)], lambda x: np.log1p(np.exp(x)))
spec("nn.gelu", nn.gelu, [_n(2, 3)],
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))))
spec("nn.silu", nn.silu, [_n(2, 3)], lambda x: x / (1 + np.exp(-x)))
spec("nn.softmax", nn.softmax, [_n(2, 3)], _np_softmax)
spec("nn.softmax_axis0", lambda x: nn.softmax(x, axis=0), [_n(2, 3)],
     lambda x: _np_softmax(x, 0))
spec("nn.log_softmax", nn.log_softmax, [_n(2, 3)], lambda x: np.log(_np_softmax(x)))
spec("nn.logsumexp", nn.logsumexp, [_n(2, 3)], _np_lse)
spec("nn.logsumexp_axis", lambda x: nn.logsumexp(x, axis=-1, keepdims=True), [_n(2, 3)],
     lambda x: _np_lse(x, -1, True))
spec("nn.one_hot", lambda i: nn.one_hot(i, 4), [np.array([0, 3, 1])],
     lambda i: np.eye(4)[i], diff=False)


# random: only reproducibility across modes (values have no numpy reference)
def _key_arg():
    return np.asarray(random.PRNGKey(3))


for _name, _fn in [
        ("random.key", lambda s: random.key_data(random.key(s))),  # typed: test_typed_keys
        ("random.PRNGKey", lambda s: random.PRNGKey(s))]:
    spec(_name, _fn, [np.array(5, np.int32)], None, diff=False)
for _name, _fn in [
        ("random.split", lambda k: random.split(k, 3)),
        ("random.fold_in", lambda k: random.fold_in(k, 11)),
        ("random.normal", lambda k: random.normal(k, (2, 3))),
        ("random.uniform", lambda k: random.uniform(k, (4,), minval=-1.0, maxval=2.0)),
        ("random.bernoulli", lambda k: random.bernoulli(k, 0.3, (5,))),
        ("random.randint", lambda k: random.randint(k, (5,), 0, 10)),
        ("random.permutation", lambda k: random.permutation(k, 6)),
        ("random.permutation_array", lambda k: random.permutation(k, np.arange(5.0)))]:
    spec(_name, _fn, [_key_arg()], None, diff=False)

# tree_util: traversals inside a transform
spec("tree_util.tree_map", lambda x, y: ft.tree_util.tree_map(
    fnp.multiply, {"u": x, "v": (x, y)}, {"u": y, "v": (y, x)}),
    [_n(3), _n(3)], lambda x, y: {"u": x * y, "v": (x * y, y * x)})
spec("tree_util.flatten_unflatten", lambda x, y: ft.tree_util.tree_unflatten(
    ft.tree_util.tree_structure([x, (y,)]), [fnp.sin(v) for v in ft.tree_util.tree_leaves([x, (y,)])]),
    [_n(3), _n(2)], lambda x, y: [np.sin(x), (np.sin(y),)])


def _leaves(x):
    return [np.asarray(v) for v in tree_flatten(x)[0]]


def _close(got, want, what, rtol=1e-10, atol=1e-12, dtype=True):
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w), f"{what}: {len(g)} outputs vs {len(w)}"
    for a, b in zip(g, w):
        assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
        if dtype:
            assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs {b.dtype}"
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.parametrize("s", SPECS, ids=repr)
def test_eager_value_and_type(s):
    out = s.fun(*s.args)
    for leaf in tree_flatten(out)[0]:
        assert isinstance(leaf, ft.Array), f"{s.name}: eager leaf is {type(leaf).__name__}"
    if s.ref is not None:
        _close(out, s.ref(*s.args), s.name, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("s", SPECS, ids=repr)
def test_jit_matches_eager(s):
    eager = s.fun(*s.args)
    _close(ft.jit(s.fun)(*s.args), eager, s.name)
    _close(ft.jit(s.fun, backend="interpret")(*s.args), eager, s.name)


@pytest.mark.parametrize("s", [s for s in SPECS if s.batch], ids=repr)
def test_vmap_matches_loop(s):
    batches = [[np.asarray(a) + (0 if np.asarray(a).dtype.kind in "iub" else 0.01 * k)
                for a in s.args] for k in range(3)]
    if s.name.startswith("random.") and s.name not in ("random.key", "random.PRNGKey"):
        batches = [[np.asarray(random.PRNGKey(k))] for k in range(3)]
    if s.name in ("random.key", "random.PRNGKey"):
        batches = [[np.array(k, np.int32)] for k in range(3)]
    want = tree_map(lambda *xs: np.stack(xs), *[s.fun(*b) for b in batches])
    stacked = [np.stack(col) for col in zip(*batches)]
    _close(ft.vmap(s.fun)(*stacked), want, s.name)
    _close(ft.jit(ft.vmap(s.fun))(*stacked), want, s.name + " (jit)")


@pytest.mark.parametrize("s", [s for s in SPECS if s.diff], ids=repr)
def test_grad_against_finite_differences(s):
    nums = s.argnums or tuple(i for i, a in enumerate(s.args) if np.asarray(a).dtype.kind == "f")
    rng = np.random.default_rng(5)
    w = [rng.standard_normal(np.shape(leaf)) for leaf in _leaves(s.fun(*s.args))]

    def scalar(*xs):
        leaves = tree_flatten(s.fun(*xs))[0]
        return sum(fnp.sum(leaf * wi) for leaf, wi in zip(leaves, w))

    grads = ft.grad(scalar, argnums=nums)(*s.args)
    jgrads = ft.jit(ft.grad(scalar, argnums=nums))(*s.args)
    eps = 1e-6
    for i, g, jg in zip(nums, grads, jgrads):
        assert isinstance(g, ft.Array) and g.shape == np.shape(s.args[i])
        t = rng.standard_normal(np.shape(s.args[i]))
        plus = list(s.args)
        minus = list(s.args)
        plus[i] = s.args[i] + eps * t
        minus[i] = s.args[i] - eps * t
        fd = (float(scalar(*plus)) - float(scalar(*minus))) / (2 * eps)
        np.testing.assert_allclose(float(np.vdot(g, t)), fd, rtol=1e-5, atol=1e-6,
                                   err_msg=s.name)
        np.testing.assert_allclose(jg, g, rtol=1e-10, atol=1e-12, err_msg=s.name + " (jit)")


def test_dtype_names_are_numpy_dtypes():
    for name in ["float64", "float32", "int64", "int32", "uint64", "uint32", "bool_",
                 "complex64", "complex128"]:
        assert np.dtype(getattr(fnp, name)) == np.dtype(getattr(np, name))
        assert fnp.zeros(2, getattr(fnp, name)).dtype == np.dtype(getattr(np, name))
        assert fnp.zeros(2, name.rstrip("_")).dtype == np.dtype(getattr(np, name))


def test_tree_util_names():
    from collections import namedtuple
    tu = ft.tree_util
    P = namedtuple("P", "a b")
    tree = {"x": [1.0, (2.0, None)], "p": P(3.0, 4.0)}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [3.0, 4.0, 1.0, 2.0]
    assert tu.tree_leaves(tree) == leaves
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert tu.tree_structure(tree) == treedef
    assert tu.tree_map(lambda v: v * 2, tree)["p"] == P(6.0, 8.0)

    class Box:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag

    tu.register_pytree_node(Box, lambda b: ((b.v,), b.tag), lambda tag, ch: Box(ch[0], tag))
    g = ft.grad(lambda b: fnp.sum(b.v ** 2))(Box(np.array([1.0, 2.0]), "t"))
    assert isinstance(g, Box) and g.tag == "t"
    np.testing.assert_allclose(g.v, [2.0, 4.0])
    out = ft.jit(lambda b: Box(b.v + 1, b.tag))(Box(np.array([1.0]), "t"))
    assert isinstance(out, Box) and out.tag == "t" and out.v.tolist() == [2.0]
