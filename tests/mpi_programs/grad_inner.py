"""Reverse mode taken inside a jit, vmap, cond branch, checkpoint, scan body or custom_vjp
rule inside a shard_map body traced with check_rep=True (JAX's check_vma=True) gives JAX 0.10.2's values
(tests/data/jax_shard_map_inner_grad.npz, written by JAX with N simulated devices; was an
error): the typing by mesh axes is followed through the inner traces (``Trace.sources``).
A loop carry is typed as its initial value (a gradient w.r.t. it was refused); one made
varying by the body raises TypeError as JAX. Prints ``OK <count>`` on rank 0."""
import os

import numpy as np

import functrans as ft
import functrans.numpy as jnp
from functrans import lax
from functrans.sharding import PartitionSpec as P

ft.distributed.initialize()
ft.config.update("jax_enable_x64", True)
N = ft.process_count()
mesh = ft.make_mesh((N,), ("i",))
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                    "jax_shard_map_inner_grad.npz")
WANT = np.load(DATA)
rng = np.random.default_rng(0)
X = rng.normal(size=(2 * N, 3))
W = rng.normal(size=(3,))
M = rng.normal(size=(3, 3))


def sm(f, i, o, check=True):
    return ft.shard_map(f, mesh=mesh, in_specs=i, out_specs=o, check_vma=check)


def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w))


def ploss(w, x):
    return lax.psum(jnp.sum(jnp.tanh(x @ w)), "i")


def reuse(w, x):   # one jit traced for a replicated w, then for a varying one
    g = ft.jit(ft.grad(loss))
    return (g(w, x) + 10 * g(w * x[0, 0], x) + 100 * g(w, x))[None]


@ft.custom_vjp
def cf(u):
    return lax.psum(jnp.sin(u), "i")


cf.defvjp(lambda u: (cf(u), u), lambda u, g: (g * jnp.cos(u) * 3.0,))


def _cg(u):
    return lax.all_gather(jnp.sin(u), "i", tiled=True)


def _cp(u):
    return lax.psum(jnp.sin(u), "i")


cg, cp = ft.custom_vjp(_cg), ft.custom_vjp(_cp)   # bwd rules that call vjp themselves
cg.defvjp(lambda u: (cg(u), u), lambda u, g: (3.0 * ft.vjp(_cg, u)[1](g)[0],))
cp.defvjp(lambda u: (cp(u), u), lambda u, g: (3.0 * ft.vjp(_cp, u)[1](g)[0],))


@ft.custom_vjp
def kw(w, u):
    return jnp.sin(u) @ w


def _kw_bwd(r, g, reduce=True):   # w is replicated: JAX wants its cotangent reduced over "i"
    gw = jnp.sin(r[1]).T @ g * 3.0
    return (lax.psum(gw, "i") if reduce else gw), jnp.outer(g, r[0]) * jnp.cos(r[1])


kw.defvjp(lambda w, u: (kw(w, u), (w, u)), _kw_bwd)
kv = ft.custom_vjp(lambda w, u: jnp.sin(u) @ w)
kv.defvjp(lambda w, u: (kv(w, u), (w, u)), lambda r, g: _kw_bwd(r, g, False))
REP = (P(), P("i"))
CASES = {
    "hess": lambda: sm(lambda w, x: ft.hessian(lambda w: loss(w, x))(w), REP, P(), False)(W, X),
    "hess_chk": lambda: sm(lambda w, x: ft.hessian(lambda w: loss(w, x))(w), REP, P("i"))(W, X),
    "hess_psum": lambda: sm(lambda w, x: ft.hessian(lambda w: ploss(w, x))(w), REP, P())(W, X),
    "hess_mat": lambda: sm(lambda m, x: ft.hessian(lambda m: jnp.sum(jnp.tanh(x @ m)))(m),
                           REP, P("i"))(M, X),
    "hess_jit": lambda: sm(lambda w, x: ft.jit(ft.hessian(loss))(w, x)[None], REP, P("i"))(W, X),
    "jacrev": lambda: sm(lambda w, x: ft.jacrev(lambda w: jnp.tanh(x @ w))(w), REP, P("i"))(W, X),
    "jacrev_psum": lambda: sm(lambda w, x: ft.jacrev(lambda w: lax.psum(jnp.tanh(x @ w), "i"))(w),
                              REP, P("i"))(W, X),
    "jit_grad": lambda: sm(lambda w, x: ft.jit(ft.grad(loss))(w, x)[None], REP, P("i"))(W, X),
    "jit_grad_psum": lambda: sm(lambda w, x: ft.jit(ft.grad(ploss))(w, x), REP, P())(W, X),
    "jit_grad_x": lambda: sm(lambda w, x: ft.jit(ft.grad(loss, 1))(w, x), REP, P("i"))(W, X),
    "jit_grad_pmean_w": lambda: sm(lambda w, x: lax.pmean(ft.jit(ft.grad(loss))(w, x), "i"),
                                   REP, P())(W, X),
    "jit_closure": lambda: sm(lambda w, x: ft.jit(lambda x: ft.grad(loss)(w, x))(x)[None],
                              REP, P("i"))(W, X),
    "jit_inner_w": lambda: sm(lambda w, x: ft.jit(lambda w, x: ft.grad(
        lambda v: jnp.sum(jnp.sin(v * w)))(w) + x.sum())(w, x)[None], REP, P("i"))(W, X),
    "jit_in_jit": lambda: sm(lambda w, x: ft.jit(lambda w, x: ft.jit(ft.grad(loss))(w, x))(
        w, x)[None], REP, P("i"))(W, X),
    "jit_vary_in_jit": lambda: sm(lambda w, x: ft.jit(lambda w, x: ft.grad(loss)(
        w * x[0, 0], x))(w, x)[None], REP, P("i"))(W, X),
    "jit_reuse": lambda: sm(reuse, REP, P("i"))(W, X),
    "vmap_grad": lambda: sm(lambda w, x: ft.vmap(ft.grad(loss), (None, 0))(w, x[:, None, :]),
                            REP, P("i"))(W, X),
    "vmap_grad_w": lambda: sm(lambda w, x: ft.vmap(ft.grad(loss), (0, None))(
        jnp.stack([w, 2 * w]), x)[None], REP, P("i"))(W, X),
    "vmap_grad_psum": lambda: sm(lambda w, x: ft.vmap(ft.grad(ploss), (0, None))(
        jnp.stack([w, 2 * w]), x), REP, P())(W, X),
    "vmap_jit_grad": lambda: sm(lambda w, x: ft.vmap(ft.jit(ft.grad(loss)), (0, None))(
        jnp.stack([w, -w]), x)[None], REP, P("i"))(W, X),
    "scan_grad": lambda: sm(lambda w, x: lax.scan(lambda c, xi: (c + ft.grad(
        lambda w: jnp.sum(jnp.tanh(xi @ w)))(w), None), jnp.zeros(3), x)[0][None],
        REP, P("i"))(W, X),
    "cond_grad": lambda: sm(lambda w, x: lax.cond(True, lambda w: ft.grad(loss)(w, x),
                                                  lambda w: w, w)[None], REP, P("i"))(W, X),
    "remat_grad": lambda: sm(lambda w, x: ft.checkpoint(lambda w, x: ft.grad(loss)(w, x))(
        w, x)[None], REP, P("i"))(W, X),
    "grad_of_jit_psum_body": lambda: sm(lambda w, x: ft.grad(lambda w: ft.jit(ploss)(w, x))(w),
                                        REP, P())(W, X),
    # a custom_vjp's bwd is given JAX's cotangent of a replicated output (it was given each
    # process's part: 1/N of it, a wrong gradient)
    "cvjp_psum_out": lambda: ft.grad(lambda x: jnp.sum(sm(cf, P("i"), P("i"))(x) ** 2))(X),
    "cvjp_psum_out_rep": lambda: ft.grad(lambda x: jnp.sum(sm(cf, P("i"), P())(x) ** 2))(X),
    "cvjp_psum_in": lambda: sm(lambda x: ft.grad(lambda u: jnp.sum(cf(u)))(x), P("i"),
                               P("i"))(X),
    "cvjp_vjp_psum_out": lambda: ft.grad(lambda x: jnp.sum(sm(cp, P("i"), P("i"))(x) ** 2))(X),
    "cvjp_vjp_ag_in": lambda: sm(lambda x: ft.grad(lambda u: jnp.sum(cg(u) ** 2))(x), P("i"),
                                 P("i"))(X),
    # a gradient w.r.t. a loop carry (JAX types a carry as its initial value)
    "scan_carry_grad": lambda: sm(lambda w, x: lax.scan(lambda c, xi: (c + ft.grad(
        lambda c: jnp.sum(jnp.tanh(xi @ c)))(c), None), w, x)[0][None], REP, P("i"))(W, X),
    "fori_carry_grad": lambda: sm(lambda w, x: lax.fori_loop(0, 2, lambda k, c: c + ft.grad(
        loss)(c, x), w)[None], REP, P("i"))(W, X),
    "while_carry_grad": lambda: sm(lambda w, x: lax.while_loop(
        lambda c: c[1] < 3, lambda c: (c[0] - 0.1 * ft.grad(loss)(c[0], x), c[1] + 1),
        (w, 0))[0][None], REP, P("i"))(W, X),
    "scan_carry_vjp_pair": lambda: sm(lambda w, x: lax.scan(lambda c, xi: ((c[0] + ft.grad(
        lambda a, b: jnp.sum(jnp.tanh(xi @ a) * b), argnums=(0, 1))(c[0], c[1])[0],
        c[1] * 0.9), jnp.sum(c[1])), (w, x[0]), x)[1][None], REP, P("i"))(W, X),
    "vary_carry_grad": lambda: sm(lambda w, x: lax.fori_loop(0, 2, lambda k, c: c + ft.grad(
        loss)(c, x), lax.pcast(w, "i", to="varying"))[None], REP, P("i"))(W, X),
    "grad_of_scan_carry": lambda: ft.grad(lambda w: jnp.sum(sm(lambda w, x: lax.scan(
        lambda c, xi: (c + ft.grad(lambda c: jnp.sum(jnp.tanh(xi @ c)))(c), None), w,
        x)[0][None], REP, P("i"))(w, X) ** 2))(W),
    "cvjp_rep_w": lambda: ft.grad(lambda w: jnp.sum(sm(lambda w, u: lax.psum(kw(w, u), "i"),
                                                       REP, P())(w, X) ** 2))(W),
    "cvjp_rep_w_in": lambda: sm(lambda w, u: ft.grad(lambda w: jnp.sum(lax.psum(
        kw(w, u), "i")))(w), REP, P())(W, X),
}
# "hess" (check_rep=False) returns a varying value under P(): each process's own, and JAX's
# single process device 0's, so rank 0 holds JAX's
OWN = {"hess"}
count = 0
for name, f in CASES.items():
    for k, leaf in enumerate(ft.tree_util.tree_leaves(f())):
        if name in OWN and ft.process_index() != 0:
            continue
        want = WANT[f"{N}/{name}#{k}"]
        got = np.asarray(leaf)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            raise AssertionError(f"{name} leaf {k}: {got.tolist()} != JAX {want.tolist()}")
    count += 1
assert count == len({k.split("#")[0] for k in WANT.files if k.startswith(f"{N}/")}), count
# a body making a replicated carry vary: JAX's TypeError (check_rep=False computes)
for grows in (lambda w, x: lax.fori_loop(0, 2, lambda k, c: c + x[0], w)[None],
              lambda w, x: lax.scan(lambda c, xi: (c * xi, None), w, x)[0][None]):
    try:
        sm(grows, REP, P("i"))(W, X)
    except TypeError as e:
        assert "varies along it on output" in str(e) and "pcast" in str(e), e
    else:
        raise AssertionError("a carry made varying in a check_rep=True body: no error")
    want = grows(W, X[2 * ft.process_index():][:2])
    if not np.allclose(sm(grows, REP, P("i"), False)(W, X)[ft.process_index()], want[0]):
        raise AssertionError("check_rep=False loop carry")
# a bwd giving a replicated argument a varying cotangent: JAX raises ValueError (functrans
# returned the processes' mean of it, silently)
for vary_w in (lambda: ft.grad(lambda w: jnp.sum(sm(lambda w, u: lax.psum(kv(w, u), "i"),
                                                    REP, P())(w, X) ** 2))(W),
               lambda: sm(lambda w, u: ft.grad(lambda w: jnp.sum(lax.psum(kv(w, u), "i")))(w),
                          REP, P())(W, X)):
    try:
        vary_w()
    except ValueError as e:
        assert "varies along mesh axis 'i'" in str(e) and "replicated" in str(e), e
    else:
        raise AssertionError("custom_vjp bwd: a varying cotangent of a replicated w, no error")
if ft.process_index() == 0:
    print("OK", count)
