"""Transform composition: every pair (and a sample of triples) of grad, jvp, vjp,
linearize, value_and_grad, jacfwd, jacrev, hessian, vmap, jit(interpret) and
checkpoint over functions with closures, pytrees, control flow, custom rules,
integer inputs and collectives; and random programs under hypothesis. The IR
transforms on every case of the shared table are in test_ir_transforms.py;
bad-input messages and tracer leaks under transforms in test_transform_errors.py.

Each operator ``op`` turns a function of one float array into another one, and
comes with a reference that computes the same thing from the inner function's
eager values by central finite differences (or a Python loop), so a chain
``op1(op2(op3(f)))`` is checked against ``ref1`` applied to ``op2(op3(f))``.
"""
from __future__ import annotations

import itertools
import random
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.tree_util import tree_map


# --------------------------------------------------------------------------- operators

def _w(shape):
    """A fixed, non-symmetric weight (cotangent / tangent direction) of ``shape``."""
    n = int(np.prod(shape, dtype=int))
    return (np.cos(np.arange(n) * 1.3 + 0.4) + 0.1).reshape(shape)


def _wsum(y):
    return fnp.sum(y * _w(fnp.shape(y)))


EPS = 1e-6


def fd_jac(g, x):
    """Central-difference Jacobian of ``g`` at ``x``: shape out + in."""
    x = np.asarray(x, float)
    y0 = np.asarray(g(x))
    jac = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = EPS
        jac[(Ellipsis,) + idx] = (np.asarray(g(x + e)) - np.asarray(g(x - e))) / (2 * EPS)
    return jac


def _np_wsum(g):
    return lambda x: float(np.sum(np.asarray(g(x)) * _w(np.shape(g(x)))))


def op_grad(g):
    return ft.grad(lambda x: _wsum(g(x)))


def ref_grad(g, x):
    return fd_jac(_np_wsum(g), x)


def op_hessian(g):
    return ft.hessian(lambda x: _wsum(g(x)))


def ref_hessian(g, x):
    return fd_jac(ft.grad(lambda x: _wsum(g(x))), x)


def op_jvp(g):
    return lambda x: ft.jvp(g, (x,), (_w(fnp.shape(x)),))[1]


def ref_jvp(g, x):
    v = _w(np.shape(x))
    return (np.asarray(g(x + EPS * v)) - np.asarray(g(x - EPS * v))) / (2 * EPS)


def op_vjp(g):
    def f(x):
        y, fn = ft.vjp(g, x)
        return fn(_w(fnp.shape(y)))[0]
    return f


def ref_vjp(g, x):
    jac = fd_jac(g, x)
    y = np.asarray(g(x))
    return np.tensordot(_w(y.shape), jac, axes=y.ndim) if y.ndim else _w(()) * jac


def op_linearize(g):
    return lambda x: ft.linearize(g, x)[1](_w(fnp.shape(x)))


def op_value_and_grad(g):
    def f(x):
        v, gr = ft.value_and_grad(lambda x: _wsum(g(x)))(x)
        return gr * v
    return f


def ref_value_and_grad(g, x):
    return ref_grad(g, x) * _np_wsum(g)(x)


def ref_identity(g, x):
    return np.asarray(g(x))


SCALES = np.array([1.0, -0.5, 2.0])


def op_vmap(g):
    """vmap over a batch that depends on x (the batched input is a tracer under AD)."""
    return lambda x: ft.vmap(g)(fnp.stack([x * c + 0.1 * c for c in SCALES]))


def ref_vmap(g, x):
    return np.stack([np.asarray(g(x * c + 0.1 * c)) for c in SCALES])


def op_vmap_closure(g):
    """vmap over constants, closing over the outer x (an outer tracer under AD)."""
    return lambda x: ft.vmap(lambda c: g(x * c))(SCALES)


def ref_vmap_closure(g, x):
    return np.stack([np.asarray(g(x * c)) for c in SCALES])


def op_vmap_last(g):
    return lambda x: ft.vmap(g, in_axes=-1, out_axes=-1)(fnp.stack([x * c for c in SCALES], axis=-1))


def ref_vmap_last(g, x):
    return np.stack([np.asarray(g(x * c)) for c in SCALES], axis=-1)


# name -> (operator, reference, uses reverse mode)
OPS = {
    "grad": (op_grad, ref_grad, True),
    "value_and_grad": (op_value_and_grad, ref_value_and_grad, True),
    "jvp": (op_jvp, ref_jvp, False),
    "vjp": (op_vjp, ref_vjp, True),
    "linearize": (op_linearize, ref_jvp, False),
    "jacfwd": (ft.jacfwd, lambda g, x: fd_jac(g, x), False),
    "jacrev": (ft.jacrev, lambda g, x: fd_jac(g, x), True),
    "hessian": (op_hessian, ref_hessian, True),
    "jit": (lambda g: ft.jit(g, backend="interpret"), ref_identity, False),
    "checkpoint": (ft.checkpoint, ref_identity, False),
    "checkpoint_dots": (lambda g: ft.checkpoint(g, policy=ft.checkpoint_policies.dots_saveable),
                        ref_identity, False),
    "vmap": (op_vmap, ref_vmap, False),
    "vmap_closure": (op_vmap_closure, ref_vmap_closure, False),
    "vmap_last": (op_vmap_last, ref_vmap_last, False),
}


# --------------------------------------------------------------------------- functions

def f_poly(x):
    return fnp.sin(x) * x ** 2 + fnp.exp(-x * x)


def f_reduce(x):
    return fnp.sum(fnp.tanh(x)) * x + fnp.max(x) * 0.3


def f_closure(x):
    a = fnp.cos(x)
    return ft.grad(lambda y: fnp.sum(fnp.sin(a * y)))(x) + a   # inner grad over an outer value


def f_pytree(x):
    def inner(p):
        return {"u": p["a"] * fnp.sin(p["b"]), "v": (p["a"] + 1.0, fnp.sum(p["b"]))}
    o = inner({"a": x, "b": x * 2.0})
    return o["u"] + o["v"][0] * o["v"][1]


def f_cond(x):
    return lax.cond(fnp.sum(x) > 0.0, lambda y: fnp.sin(y) * y, lambda y: fnp.cos(y) - y, x)


def f_cond_closure(x):
    k = fnp.tanh(x)
    return lax.cond(fnp.sum(x) < 0.0, lambda y: y * k, lambda y: y + k * k, x * 1.5)


def f_switch(x):
    i = fnp.clip(fnp.floor(fnp.sum(x)), -1, 3).astype(fnp.int32)
    return lax.switch(i, [lambda y: y * 2.0, lambda y: fnp.sin(y), lambda y: y * y], x)


def f_scan(x):
    def body(c, xi):
        c = c * fnp.sin(xi) + xi * 0.5
        return c, c * xi
    xs = x if fnp.ndim(x) else fnp.stack([x, x * 2.0])
    c, ys = lax.scan(body, fnp.ones_like(xs[0]), xs)
    return ys * 2.0 + c


def f_scan_closure(x):
    w = fnp.cos(x)

    def body(c, _):
        return fnp.sin(c) * w + 0.1, c * w
    c, ys = lax.scan(body, x, None, length=3)
    return c + fnp.sum(ys, axis=0)


def f_fori(x):
    return lax.fori_loop(0, 3, lambda i, c: c * fnp.cos(c) + i * 0.1 * x, x)


def f_while(x):
    def body(c):
        v, i = c
        return v * 0.9 + fnp.sin(v) * 0.1, i + 1
    return lax.while_loop(lambda c: c[1] < 3, body, (x, 0))[0]


@ft.custom_jvp
def _cj(x):
    return fnp.sin(x) * 2.0


@_cj.defjvp
def _cj_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _cj(x), 2.0 * fnp.cos(x) * t


def f_custom_jvp(x):
    return _cj(x * x) + x


@ft.custom_vjp
def _cv(x, y):
    return fnp.sin(x) * y


def _cv_fwd(x, y):
    return _cv(x, y), (x, y)


def _cv_bwd(res, ct):
    x, y = res
    return fnp.cos(x) * y * ct, fnp.sin(x) * ct


_cv.defvjp(_cv_fwd, _cv_bwd)


def f_custom_vjp(x):
    return _cv(x, fnp.exp(x * 0.5))


def f_int_aux(x):
    n = fnp.arange(fnp.size(x)).reshape(fnp.shape(x))
    return fnp.where(x > 0.0, x * n, fnp.sin(x)) + n.astype(x.dtype)


def f_collective(x):
    xs = fnp.stack([x, x * 2.0, fnp.sin(x)])

    def per(r):
        return r * lax.psum(r, "i") + lax.pmean(fnp.sin(r), "i") + lax.axis_index("i") * r
    return fnp.sum(ft.vmap(per, axis_name="i")(xs), axis=0)


def f_dot(x):
    a = np.arange(9.0).reshape(3, 3) / 9.0
    v = fnp.ravel(x)
    v = fnp.concatenate([v, v, v])[:3]
    return fnp.tanh(a @ v) @ a * fnp.sum(x)


FUNS = {k[2:]: v for k, v in dict(globals()).items() if k.startswith("f_")}
FWD_ONLY = {"while"}
SHAPES = [(), (3,), (2, 2)]


def _x(shape):
    # away from the branch points of the cond/switch functions (sum(x) near 0 or an integer)
    return np.linspace(-0.8, 1.1, int(np.prod(shape, dtype=int))).reshape(shape) + 0.05


def _run_chain(chain, fname, shape):
    inner = FUNS[fname]
    for name in reversed(chain[1:]):
        inner = OPS[name][0](inner)
    op, ref, _ = OPS[chain[0]]
    x = _x(shape)
    got = np.asarray(op(inner)(x), float)
    want = np.asarray(ref(inner, x), float)
    assert got.shape == want.shape, f"{chain} {fname}{shape}: shape {got.shape} vs {want.shape}"
    tol = 2e-5 * 10 ** (len(chain) - 1)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{chain} {fname} {shape}")


def _runs(chain, k, seed):
    """``k`` (function, shape) pairs for one chain, chosen deterministically."""
    rev = any(OPS[c][2] for c in chain)
    names = [f for f in FUNS if not (rev and f in FWD_ONLY)]
    r = random.Random(seed)
    return [(f, r.choice(SHAPES)) for f in r.sample(names, min(k, len(names)))]


SINGLE = list(OPS)
PAIRS = list(itertools.product(OPS, repeat=2))
TRIPLES = random.Random(7).sample(list(itertools.product(OPS, repeat=3)), 40)


@pytest.mark.parametrize("name", SINGLE)
def test_single_transform_every_function_every_shape(name):
    for fname in FUNS:
        if OPS[name][2] and fname in FWD_ONLY:
            continue
        for shape in SHAPES:
            _run_chain((name,), fname, shape)


@pytest.mark.parametrize("chain", PAIRS, ids=["∘".join(c) for c in PAIRS])
def test_pairs_of_transforms(chain):
    for fname, shape in _runs(chain, 2, zlib.crc32('/'.join(chain).encode())):
        _run_chain(chain, fname, shape)


@pytest.mark.slow
@pytest.mark.parametrize("chain", TRIPLES, ids=["∘".join(c) for c in TRIPLES])
def test_triples_of_transforms(chain):
    for fname, shape in _runs(chain, 1, zlib.crc32('/'.join(chain).encode())):
        _run_chain(chain, fname, shape)


def test_stop_gradient_under_compositions():
    # f(x) = x * sg(x) + sin(sg(2x)) * x: df/dx = x + sin(2x); the gradient is itself built from stopped values, so its derivative is 0
    def f(x):
        return x * ft.stop_gradient(x) + fnp.sin(ft.stop_gradient(x * 2.0)) * x
    x = np.array([0.3, -0.7, 1.2])
    want = x + np.sin(2 * x)
    loss = lambda x: fnp.sum(f(x))   # noqa: E731
    for g in (ft.grad(loss), ft.jit(ft.grad(loss), backend="interpret"),
              ft.grad(ft.checkpoint(loss)), lambda x: ft.jvp(f, (x,), (np.ones(3),))[1],
              lambda x: ft.vjp(f, x)[1](np.ones(3))[0], lambda x: np.diag(ft.jacfwd(f)(x))):
        np.testing.assert_allclose(g(x), want, rtol=1e-12)
    np.testing.assert_allclose(ft.vmap(ft.grad(loss))(np.stack([x, 2 * x])),
                               np.stack([want, 2 * x + np.sin(4 * x)]), rtol=1e-12)
    np.testing.assert_allclose(ft.hessian(loss)(x), np.zeros((3, 3)), atol=1e-12)
    np.testing.assert_allclose(ft.jacrev(ft.grad(loss))(x), np.zeros((3, 3)), atol=1e-12)


# --------------------------------------------------------------------------- pytrees, aux, argnums

def test_pytrees_has_aux_argnums_and_int_inputs_compose():
    import collections
    P = collections.namedtuple("P", "w b")
    x = np.array([0.3, -0.7, 1.2])
    p = P(np.array([0.5, -1.0, 2.0]), 0.2)

    def loss(p, x, n):
        y = fnp.tanh(p.w * x + p.b) * n
        return fnp.sum(y ** 2), {"y": y, "n": n}

    def flat_loss(v, x, n):   # the same loss on a flat vector (w, b)
        return loss(P(v[:3], v[3]), x, n)[0]
    v = np.concatenate([p.w, [p.b]])
    want_p = fd_jac(lambda v: float(flat_loss(v, x, 3)), v)
    want_x = fd_jac(lambda x: float(flat_loss(v, x, 3)), x)
    variants = {
        "grad": lambda: ft.grad(loss, argnums=(0, 1), has_aux=True)(p, x, 3),
        "jit(grad)": lambda: ft.jit(ft.grad(loss, argnums=(0, 1), has_aux=True),
                                    backend="interpret", static_argnums=2)(p, x, 3),
        "grad(checkpoint)": lambda: ft.grad(ft.checkpoint(loss), argnums=(0, 1), has_aux=True)(p, x, 3),
        "vmap(grad)[0]": lambda: tree_map(lambda a: a[1], ft.vmap(
            ft.grad(loss, argnums=(0, 1), has_aux=True), in_axes=(None, 0, None))(
            p, np.stack([2 * x, x]), 3)),
        "jacrev": lambda: (ft.jacrev(loss, argnums=(0, 1), has_aux=True)(p, x, 3)),
        "jacfwd": lambda: (ft.jacfwd(loss, argnums=(0, 1), has_aux=True)(p, x, 3)),
    }
    for name, run in variants.items():
        (gp, gx), aux = run()
        np.testing.assert_allclose(np.append(gp.w, gp.b), want_p, rtol=1e-6, atol=1e-8, err_msg=name)
        np.testing.assert_allclose(gx, want_x, rtol=1e-6, atol=1e-8, err_msg=name)
        assert int(aux["n"]) == 3 and np.asarray(aux["n"]).dtype.kind == "i", name
        np.testing.assert_allclose(aux["y"], np.tanh(p.w * x + p.b) * 3, rtol=1e-12, err_msg=name)
    # hessian over a namedtuple and a tuple of argnums
    h = ft.hessian(lambda a, b: fnp.sum(a ** 2 * b), argnums=(0, 1))(np.ones(2), 0.5)
    np.testing.assert_allclose(h[0][0], np.eye(2))
    np.testing.assert_allclose(h[0][1], [2.0, 2.0])
    # dict in and out through linearize / vjp / jvp
    d = {"a": x, "b": x * 2}
    f = lambda d: {"o": d["a"] * d["b"], "s": fnp.sum(d["b"])}   # noqa: E731
    _, f_jvp = ft.linearize(f, d)
    _, t = ft.jvp(f, (d,), (d,))
    np.testing.assert_allclose(f_jvp(d)["o"], t["o"])
    np.testing.assert_allclose(t["o"], 4 * x * x)
    (ct,) = ft.vjp(f, d)[1]({"o": np.ones(3), "s": 1.0})
    np.testing.assert_allclose(ct["a"], d["b"])
    np.testing.assert_allclose(ct["b"], d["a"] + 1)


def test_vjp_with_integer_primals_gives_zero_cotangents():
    # bug: vjp raised TypeError for an integer primal; JAX returns a zero cotangent for it
    x = np.array([0.3, -0.7, 1.2])
    out, f_vjp = ft.vjp(lambda x, n: x * n, x, np.arange(3))
    gx, gn = f_vjp(np.ones(3))
    np.testing.assert_allclose(gx, [0.0, 1.0, 2.0])
    assert gn.shape == (3,) and not np.any(gn)
    np.testing.assert_allclose(ft.vmap(lambda x: ft.vjp(lambda x, n: x * n, x, 3)[1](x)[0])(x), 3 * x)
    # grad keeps its clear error for an integer argument it is asked to differentiate
    with pytest.raises(TypeError, match="int64"):
        ft.grad(lambda x, n: fnp.sum(x * n), argnums=1)(x, np.arange(3))


# --------------------------------------------------------------------------- random programs

UNARY = [fnp.sin, fnp.tanh, lambda a: a * a * 0.3, lambda a: fnp.exp(-a * a)]
BINARY = [fnp.add, fnp.multiply, lambda a, b: a / (1.0 + b * b)]
OTHER = [
    lambda a, b: fnp.sum(a, keepdims=True) * b,                     # reduction, broadcast back
    lambda a, b: fnp.max(a) + b,
    lambda a, b: a[::-1] * b,                                         # rev
    lambda a, b: a[(np.arange(a.shape[0]) * 2 + 1) % a.shape[0]] + b,  # gather
    lambda a, b: fnp.asarray(a).at[0].add(b[-1] * 2.0),                         # scatter-add
    lambda a, b: lax.cond(fnp.sum(a) > 0.0, lambda u, v: u * v, lambda u, v: u - fnp.sin(v), a, b),
    lambda a, b: lax.scan(lambda c, t: (c * 0.5 + fnp.sin(t[0]) * t[1], c * t[0]),
                          0.0 * a[0], (a, b))[1],
]


@st.composite
def programs(draw):
    n = draw(st.integers(1, 4))
    steps = []
    for k in range(draw(st.integers(1, 6))):
        nvals = 2 + k
        kind = draw(st.sampled_from("ubo"))
        table = {"u": UNARY, "b": BINARY, "o": OTHER}[kind]
        steps.append((kind, draw(st.integers(0, len(table) - 1)),
                      draw(st.integers(0, nvals - 1)), draw(st.integers(0, nvals - 1))))
    return n, steps, draw(st.integers(0, 2 ** 16))


def build(steps):
    def f(x, y):
        vals = [x, y]
        for kind, op, i, j in steps:
            if kind == "u":
                vals.append(UNARY[op](vals[i]))
            else:
                vals.append({"b": BINARY, "o": OTHER}[kind][op](vals[i], vals[j]))
        return fnp.sum(vals[-1] * np.linspace(0.5, 1.5, x.shape[0])) + fnp.sum(vals[-2])
    return f


@settings(max_examples=25, deadline=None)
@given(programs())
def test_random_programs_agree_across_transform_orders(prog):
    n, steps, seed = prog
    rng = np.random.default_rng(seed)
    f = build(steps)
    xs, y = rng.standard_normal((3, n)), rng.standard_normal(n)
    # vmap(grad) == grad(sum . vmap): the examples are independent
    per = ft.vmap(ft.grad(f), in_axes=(0, None))(xs, y)
    tot = ft.grad(lambda xs: fnp.sum(ft.vmap(f, in_axes=(0, None))(xs, y)))(xs)
    np.testing.assert_allclose(per, tot, rtol=1e-9, atol=1e-10)
    # each row against the loop and against central differences
    for k in range(3):
        g = ft.grad(f)(xs[k], y)
        np.testing.assert_allclose(per[k], g, rtol=1e-9, atol=1e-10)
        fd = fd_jac(lambda v: float(f(v, y)), xs[k])
        np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-5)
    # jit against eager, values and gradients
    np.testing.assert_allclose(ft.jit(f, backend="interpret")(xs[0], y), f(xs[0], y), rtol=1e-12)
    np.testing.assert_allclose(ft.jit(ft.grad(f), backend="interpret")(xs[0], y), per[0],
                               rtol=1e-10, atol=1e-12)
    # forward- and reverse-mode Hessians (jacfwd(grad) vs jacrev(grad))
    hf = ft.jacfwd(ft.grad(f))(xs[0], y)
    hr = ft.jacrev(ft.grad(f))(xs[0], y)
    np.testing.assert_allclose(hf, hr, rtol=1e-8, atol=1e-9)
