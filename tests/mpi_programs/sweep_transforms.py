"""Transforms inside and around shard_map bodies, each with a collective, against JAX
0.10.2 (N simulated devices; tests/data/jax_shard_map_sweep.npz, keys "N/name#leaf"):
jvp, vjp, grad (in the body, check_rep True and False, and of the shard_map), vmap (in
and out), jit (in and out), scan, fori_loop, while_loop, cond, checkpoint, custom_jvp and
custom_vjp, each with psum / pmean / all_gather(tiled) / psum_scatter(tiled) / ppermute /
all_to_all(tiled) / axis_index; integer, bool, uint8, float32 and complex operands;
replicated out_specs; nested jit; a 2-d mesh used along one axis. Run under mpiexec -n 2
or 4; prints ``OK <count>`` on rank 0."""
import os

import numpy as np

import functrans as jax
import functrans.numpy as jnp
from functrans import lax
from functrans.sharding import PartitionSpec as P

jax.distributed.initialize()
N = jax.process_count()
RANK = jax.process_index()
mesh = jax.make_mesh((N,), ("i",))
mesh2 = jax.make_mesh((2, N // 2), ("x", "y"))
WANT = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                            "jax_shard_map_sweep.npz"))
rng = np.random.default_rng(0)
X = rng.normal(size=(N * N, 2))
XI = rng.integers(-5, 6, size=(N * N, 2))
XB = XI > 0
RING = [(k, (k + 1) % N) for k in range(N)]


def sm(f, i=P("i"), o=P("i"), check=True, m=None):
    return jax.shard_map(f, mesh=m or mesh, in_specs=i, out_specs=o, check_vma=check)


COLL = {
    "psum": lambda u: lax.psum(u, "i"),
    "pmean": lambda u: lax.pmean(u, "i"),
    "ag": lambda u: lax.all_gather(u, "i", tiled=True),
    "ps": lambda u: lax.psum_scatter(u, "i", tiled=True),
    "pperm": lambda u: lax.ppermute(u, "i", RING),
    "a2a": lambda u: lax.all_to_all(u, "i", 0, 0, tiled=True),
    "aidx": lambda u: u * (lax.axis_index("i") + 1),
}
SAME_SHAPE = {"psum", "pmean", "pperm", "a2a", "aidx"}


def loss_of(f, check=True):
    return lambda x: jnp.sum(sm(f, check=check)(x) ** 2)


def cases_of(cn, coll):
    c = lambda u: coll(jnp.sin(u))   # noqa: E731
    out = {
        "plain": lambda: sm(c)(X),
        "jvp": lambda: sm(lambda x: jax.jvp(c, (x,), (jnp.cos(x),))[1])(X),
        "vjp": lambda: sm(lambda x: (lambda o, f: f(o * 0 + 1.5)[0])(*jax.vjp(c, x)))(X),
        "grad_in": lambda: sm(lambda x: jax.grad(lambda u: jnp.sum(c(u) ** 2))(x))(X),
        "grad_in_nochk": lambda: sm(lambda x: jax.grad(lambda u: jnp.sum(c(u) ** 2))(x),
                                    check=False)(X),
        "grad_out": lambda: jax.grad(lambda x: jnp.sum(sm(c)(x) ** 3))(X),
        "grad_out_nochk": lambda: jax.grad(lambda x: jnp.sum(sm(c, check=False)(x) ** 3))(X),
        "vmap_in": lambda: sm(lambda x: jax.vmap(c)(jnp.stack([x, 2 * x]))[1])(X),
        "vmap_out": lambda: jax.vmap(sm(c))(jnp.stack([X, X * X])),
        "jit_sm": lambda: jax.jit(sm(c))(X),
        "sm_jit": lambda: sm(jax.jit(c))(X),
        "scan_ys": lambda: sm(lambda x: _scan_ys(c, x))(X),
        "remat_grad": lambda: jax.grad(loss_of(jax.checkpoint(c)))(X),
        "cond": lambda: sm(lambda x: lax.cond(True, c, lambda u: c(u * 2), x))(X),
        "grad_cond": lambda: jax.grad(loss_of(lambda x: lax.cond(False, c, lambda u: c(u * 2),
                                                                  x)))(X),
    }
    if cn in SAME_SHAPE:
        step = lambda v: 0.5 * c(v) + v   # noqa: E731
        out["fori"] = lambda: sm(lambda x: lax.fori_loop(0, 3, lambda k, v: step(v), x))(X)
        out["grad_fori"] = lambda: jax.grad(loss_of(
            lambda x: lax.fori_loop(0, 3, lambda k, v: step(v), x)))(X)
        out["while"] = lambda: sm(lambda x: lax.while_loop(
            lambda kv: kv[0] < 2, lambda kv: (kv[0] + 1, c(kv[1]) + kv[1]), (0, x))[1])(X)
        out["scan_carry_grad"] = lambda: jax.grad(loss_of(lambda x: lax.scan(
            lambda v, _: (step(v), None), x, None, length=2)[0]))(X)
    cj = jax.custom_jvp(c)
    cj.defjvp(lambda p, t: (c(p[0]), 2.0 * jax.jvp(c, p, t)[1]))
    cv = jax.custom_vjp(c)
    cv.defvjp(lambda u: (c(u), u), lambda u, g: (3.0 * jax.vjp(c, u)[1](g)[0],))
    out["custom_jvp"] = lambda: jax.grad(loss_of(cj))(X)
    out["custom_jvp_in"] = lambda: sm(lambda x: jax.jvp(cj, (x,), (x,))[1])(X)
    out["custom_vjp"] = lambda: jax.grad(loss_of(cv))(X)
    out["custom_vjp_in"] = lambda: sm(lambda x: jax.grad(lambda u: jnp.sum(cv(u)))(x))(X)
    return {f"{cn}/{k}": f for k, f in out.items()}


def _scan_ys(c, x):
    ys = lax.scan(lambda k, t: (k + 1.0, c(x * k + t)), 0.5, jnp.arange(2.0))[1]
    return ys.reshape((-1,) + x.shape[1:])


def rows(f):   # a pmap over the processes: each passes (and gets back) its own row
    return lambda a: f(a[RANK:RANK + 1])


OTHER = {
    "psum_i": lambda: sm(lambda u: lax.psum(u, "i"))(XI),
    "psum_b": lambda: sm(lambda u: lax.psum(u, "i"))(XB),
    "pmean_i": lambda: sm(lambda u: lax.pmean(u, "i"))(XI),
    "pmax_i": lambda: sm(lambda u: lax.pmax(u, "i"))(XI),
    "pmin_i": lambda: sm(lambda u: lax.pmin(u, "i"))(XI),
    "pmax_b": lambda: sm(lambda u: lax.pmax(u, "i"))(XB),
    "ag_i": lambda: sm(lambda u: lax.all_gather(u, "i"), o=P(None, "i"))(XI),
    "ag_b": lambda: sm(lambda u: lax.all_gather(u, "i", tiled=True))(XB),
    "ps_i": lambda: sm(lambda u: lax.psum_scatter(u, "i", tiled=True))(XI),
    "pperm_i": lambda: sm(lambda u: lax.ppermute(u, "i", RING))(XI),
    "pperm_b": lambda: sm(lambda u: lax.ppermute(u, "i", RING))(XB),
    "a2a_b": lambda: sm(lambda u: lax.all_to_all(u, "i", 0, 0, tiled=True))(XB),
    "a2a_i": lambda: sm(lambda u: lax.all_to_all(u, "i", 0, 0, tiled=True))(XI),
    "aidx_i": lambda: sm(lambda u: u + lax.axis_index("i"))(XI),
    "psum_i32": lambda: sm(lambda u: lax.psum(u.astype(jnp.int32), "i"))(XI),
    "psum_u8": lambda: sm(lambda u: lax.psum(u.astype(jnp.uint8), "i"))(XI % 7),
    "pmax_f32": lambda: sm(lambda u: lax.pmax(u.astype(jnp.float32), "i"))(X),
    "psum_c": lambda: sm(lambda u: lax.psum(u * (1 + 2j), "i"))(X),
    "psum_lit": lambda: sm(lambda u: u * lax.psum(1, "i"))(X),
    "psum_lit_f": lambda: sm(lambda u: u * lax.psum(2.5, "i"))(X),
    "pmean_lit": lambda: sm(lambda u: u * lax.pmean(3, "i"))(X),
    "pmap_psum_i": lambda: rows(jax.pmap(lambda u: lax.psum(u, "i"), axis_name="i"))(XI[:N]),
    "pmap_psum_b": lambda: rows(jax.pmap(lambda u: lax.psum(u, "i"), axis_name="i"))(XB[:N]),
    "pmap_pmean_i": lambda: rows(jax.pmap(lambda u: lax.pmean(u, "i"), axis_name="i"))(XI[:N]),
    "pmap_ag_b": lambda: rows(jax.pmap(lambda u: lax.all_gather(u, "i"), axis_name="i"))(
        XB[:N]),
    "rep_psum_chk": lambda: sm(lambda u: lax.psum(jnp.sin(u), "i"), o=P())(X),
    "rep_psum_nochk": lambda: sm(lambda u: lax.psum(jnp.sin(u), "i"), o=P(), check=False)(X),
    "rep_pmean_grad": lambda: jax.grad(lambda x: jnp.sum(sm(
        lambda u: lax.pmean(jnp.sin(u), "i"), o=P())(x) ** 2))(X),
    "rep_pmean_grad_nochk": lambda: jax.grad(lambda x: jnp.sum(sm(
        lambda u: lax.pmean(jnp.sin(u), "i"), o=P(), check=False)(x) ** 2))(X),
    "rep_in_P": lambda: sm(lambda w, u: jnp.sin(u) @ w, i=(P(), P("i")))(np.eye(2) * 2.0, X),
    "rep_in_grad": lambda: jax.grad(lambda w: jnp.sum(sm(
        lambda w, u: jnp.sin(u) @ w, i=(P(), P("i")))(w, X) ** 2))(np.eye(2) * 2.0),
    "rep_in_grad_nochk": lambda: jax.grad(lambda w: jnp.sum(sm(
        lambda w, u: jnp.sin(u) @ w, i=(P(), P("i")), check=False)(w, X) ** 2))(np.eye(2) * 2.0),
    "jit_jit_sm": lambda: jax.jit(lambda x: jax.jit(sm(lambda u: lax.psum(u, "i"), o=P()))(x)
                                  * 2)(X),
    "mesh2_x": lambda: sm(lambda u: lax.psum(u, "x"), i=P("x"), o=P(), m=mesh2)(X),
    "mesh2_x_grad": lambda: jax.grad(lambda x: jnp.sum(sm(
        lambda u: lax.psum(jnp.sin(u), "x") ** 2, i=P("x"), o=P(), m=mesh2)(x)))(X),
    "mesh2_y_only": lambda: sm(lambda u: u * (lax.axis_index("y") + 1), i=P("y"), o=P("y"),
                               m=mesh2)(X),
    "mesh2_xy": lambda: sm(lambda u: lax.psum(u, ("x", "y")), i=P(("x", "y")), o=P(),
                           m=mesh2)(X),
    "mesh2_xy_ag": lambda: sm(lambda u: lax.all_gather(u, "y", tiled=True), i=P(("x", "y")),
                              o=P("x"), m=mesh2, check=False)(X),
    "vmap_spmd": lambda: jax.vmap(sm(lambda u: lax.psum(u, "i")))(jnp.stack([X, 2 * X])),
}
CASES = {}
for name, coll in COLL.items():
    CASES.update(cases_of(name, coll))
CASES.update(OTHER)
count = 0
for name, f in CASES.items():
    for k, leaf in enumerate(jax.tree_util.tree_leaves(f())):
        want = WANT[f"{N}/{name}#{k}"]
        if name.startswith("pmap_"):
            want = want[RANK:RANK + 1]
        got = np.asarray(leaf)
        if got.shape != want.shape or got.dtype != want.dtype or not np.allclose(
                got, want, rtol=1e-12, atol=1e-12):
            raise AssertionError(f"{name} leaf {k} on rank {RANK}: {got.dtype}{got.shape} "
                                 f"{got.tolist()} != JAX {want.dtype}{want.shape} "
                                 f"{want.tolist()}")
    count += 1
assert count == len({k.split("#")[0] for k in WANT.files if k.startswith(f"{N}/")}), count
if RANK == 0:
    print("OK", count)
