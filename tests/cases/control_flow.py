"""Table rows for structured control flow (``cond``, ``while``, ``scan`` primitives via
lax.cond/switch/while_loop/fori_loop/scan/map), each against the equivalent Python
if/loop over numpy. Bool predicates and int indices vary with the seed, so vmap
meets batched predicates with lanes taking different branches."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen, randn, uniform


def _pred(rng):
    return np.bool_(rng.random() < 0.5)


def _index(rng):
    return np.int32(rng.integers(-2, 5))      # out of range on purpose: switch clamps


def _count(rng):
    return np.int64(rng.integers(0, 6))


# ----------------------------------------------------------------------- cond / switch

def _cond(p, x, y):
    return lax.cond(p, lambda a, b: fnp.sin(a) * b, lambda a, b: a - b * b, x, y)


def _cond_ref(p, x, y):
    return np.sin(x) * y if p else x - y * y


def _cond_tree(p, x, y):
    # pytree operands and outputs; one output does not depend on the operands' tangents
    return lax.cond(p, lambda t: {"s": t[0] * t[1], "k": fnp.cos(t[0])},
                    lambda t: {"s": t[1] - 1.0, "k": t[0] * 0.0 + 2.0}, (x, y))


def _cond_tree_ref(p, x, y):
    return {"s": x * y, "k": np.cos(x)} if p else {"s": y - 1.0, "k": x * 0.0 + 2.0}


_FS = [lambda x: fnp.sin(x), lambda x: x * x, lambda x: fnp.exp(x) - x]
_FS_NP = [np.sin, lambda x: x * x, lambda x: np.exp(x) - x]


def _switch(i, x):
    return lax.switch(i, _FS, x)


def _switch_ref(i, x):
    return _FS_NP[min(max(int(i), 0), 2)](x)


# ----------------------------------------------------------------------- while / fori

def _while(x):
    def body(c):
        k, v = c
        return k + 1, v * fnp.cos(v) + 0.5
    return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]


def _while_ref(x):
    for _ in range(4):
        x = x * np.cos(x) + 0.5
    return x


def _while_lanes(n, x):
    # the trip count depends on an operand: under vmap lanes finish at different steps
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, fnp.sin(c[1]) + c[1]),
                          (np.int64(0), x))[1]


def _while_lanes_ref(n, x):
    for _ in range(int(n)):
        x = np.sin(x) + x
    return x


def _fori(w, x):
    return lax.fori_loop(0, 6, lambda i, c: fnp.sin(c) * w + i * 0.1, x)


def _fori_ref(w, x):
    for i in range(6):
        x = np.sin(x) * w + i * 0.1
    return x


def _fori_traced(n, x):
    return lax.fori_loop(0, n, lambda i, c: c * 0.9 + fnp.sin(c), x)


def _fori_traced_ref(n, x):
    for _ in range(int(n)):
        x = x * 0.9 + np.sin(x)
    return x


# ----------------------------------------------------------------------- scan / map

def _scan(w, c0, xs):
    def f(c, x):
        return c * w + fnp.sin(x), c * x
    return lax.scan(f, c0, xs)


def _scan_ref(w, c0, xs):
    c, ys = c0, []
    for x in xs:
        ys.append(c * x)
        c = c * w + np.sin(x)
    return c, np.stack(ys) if ys else np.zeros((0,) + np.shape(c0))


def _scan_rev(w, c0, xs):
    return lax.scan(lambda c, x: (fnp.sin(c) * x + w, c * w), c0, xs, reverse=True)


def _scan_rev_ref(w, c0, xs):
    c, ys = c0, [None] * len(xs)
    for i in reversed(range(len(xs))):
        ys[i] = c * w
        c = np.sin(c) * xs[i] + w
    return c, np.stack(ys)


def _scan_tree(a, b, xs):
    # pytree carry (one part constant: its tangent starts as a symbolic zero), two xs
    def f(c, x):
        u, v = c
        return (u * x["p"] + v, v + 1.0), {"o": u * v, "q": x["q"] * u}
    return lax.scan(f, (a, np.float64(0.5)), {"p": xs, "q": b})


def _scan_tree_ref(a, b, xs):
    u, v, os, qs = a, 0.5, [], []
    for p, q in zip(xs, b):
        os.append(u * v)
        qs.append(q * u)
        u, v = u * p + v, v + 1.0
    return (u, np.float64(v)), {"o": np.stack(os), "q": np.stack(qs)}


def _scan_f32(c0, xs):
    return lax.scan(lambda c, x: (c * x + np.float32(1.0), c), c0, xs)


def _scan_f32_ref(c0, xs):
    c, ys = c0, []
    for x in xs:
        ys.append(c)
        c = (c * x + np.float32(1.0)).astype(np.float32)
    return c, np.stack(ys)


def _map(xs):
    return lax.map(lambda x: fnp.sin(x) * fnp.sum(x), xs)


def _map_ref(xs):
    return np.stack([np.sin(x) * np.sum(x) for x in xs])


CASES = [
    OpCase("cond_bool", _cond, gen(_pred, randn(3), randn(3)), _cond_ref),
    OpCase("cond_true", _cond, gen(np.bool_(True), randn(2, 2), randn(2, 2)), _cond_ref),
    OpCase("cond_false", _cond, gen(np.bool_(False), randn(), randn()), _cond_ref),
    OpCase("cond_pytree", _cond_tree, gen(_pred, randn(3), randn(3)), _cond_tree_ref),
    OpCase("switch_clamped", _switch, gen(_index, uniform(4)), _switch_ref),
    # while_loop is forward-mode only (reverse mode raises by design): its JVP is
    # checked against finite differences in tests/test_control_flow.py
    OpCase("while_fixed_trips", _while, gen(randn(3)), _while_ref, diff=False),
    OpCase("while_lanes", _while_lanes, gen(_count, uniform(3)), _while_lanes_ref, diff=False),
    OpCase("fori_static", _fori, gen(uniform(3), randn(3)), _fori_ref),
    OpCase("fori_traced_bounds", _fori_traced, gen(_count, uniform(2)), _fori_traced_ref,
           diff=False),
    OpCase("scan_carry_ys", _scan, gen(uniform(2), randn(2), randn(5, 2)), _scan_ref),
    OpCase("scan_reverse", _scan_rev, gen(uniform(), randn(), randn(4)), _scan_rev_ref),
    OpCase("scan_pytree", _scan_tree, gen(randn(2), randn(3, 2), uniform(3, 2)), _scan_tree_ref),
    OpCase("scan_float32", _scan_f32, gen(randn(2, dtype=np.float32),
                                          uniform(3, 2, dtype=np.float32)),
           _scan_f32_ref, rtol=1e-5, atol=1e-6),
    OpCase("scan_empty_xs", _scan, gen(uniform(2), randn(2), randn(0, 2)), _scan_ref),
    OpCase("map", _map, gen(randn(4, 3)), _map_ref),
]
