"""Collectives with ``axis_index_groups`` under pmap against JAX 0.10.2 (4 simulated devices,
tests/data/jax_collective_groups.npz). ``cases`` is shared with tests/test_collective_groups.py
(one process: pmap is a vmap over the 4 rows); run under ``mpiexec -n 4`` each process maps
its own row (a multi-process pmap: MPI collectives in a check_rep=False shard_map) and checks
it. Prints ``OK <count>`` on rank 0."""
import os

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                    "jax_collective_groups.npz")


def cases(jax, jnp, lax):
    G = [[0, 2], [1, 3]]
    H = [[3, 0], [2, 1]]
    return {
        "psum": lambda v: lax.psum(v, "i", axis_index_groups=G),
        "psum_int": lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1, 2], [3]]),
        "pmax": lambda v: lax.pmax(v, "i", axis_index_groups=G),
        "pmax_int": lambda v: lax.pmax(v, "i", axis_index_groups=H),
        "pmin": lambda v: lax.pmin(v, "i", axis_index_groups=H),
        "pmean": lambda v: lax.pmean(v, "i", axis_index_groups=H),
        "pmean_int": lambda v: lax.pmean(v, "i", axis_index_groups=G),
        "all_gather1": lambda v: lax.all_gather(v, "i", axis_index_groups=H, axis=1),
        "all_gather_tiled1": lambda v: lax.all_gather(v, "i", axis_index_groups=G, axis=1,
                                                      tiled=True),
        "psum_scatter_t": lambda v: lax.psum_scatter(v, "i", axis_index_groups=G, tiled=True),
        "psum_scatter1": lambda v: lax.psum_scatter(v[:, :2], "i", axis_index_groups=H,
                                                    scatter_dimension=1),
        "all_to_all_t": lambda v: lax.all_to_all(v, "i", 0, 1, axis_index_groups=G, tiled=True),
        "all_to_all01": lambda v: lax.all_to_all(v[:2], "i", 0, 1, axis_index_groups=H),
        "pswapaxes0": lambda v: lax.pswapaxes(v[:2], "i", 0, axis_index_groups=G),
        "pswapaxes1_int": lambda v: lax.pswapaxes(v, "i", 1, axis_index_groups=H),
        "grad_pmean": lambda v: jax.grad(lambda u: jnp.sum(
            jnp.sin(lax.pmean(u, "i", axis_index_groups=G)) * u))(v),
        "grad_all_gather": lambda v: jax.grad(lambda u: jnp.sum(jnp.cos(lax.all_gather(
            u, "i", axis_index_groups=H)) * jnp.arange(2.0)[:, None, None]))(v),
        "grad_pswapaxes": lambda v: jax.grad(lambda u: jnp.sum(jnp.sin(lax.pswapaxes(
            u[1:3] * u[1:3], "i", 0, axis_index_groups=H)) * jnp.arange(4.0).reshape(2, 2)))(v),
        "grad_psum_scatter": lambda v: jax.grad(lambda u: jnp.sum(lax.psum_scatter(
            u * u, "i", axis_index_groups=G, tiled=True) ** 3))(v),
        "jvp_all_to_all": lambda v: jax.jvp(lambda u: lax.all_to_all(
            jnp.sin(u), "i", 0, 1, axis_index_groups=G, tiled=True), (v,), (v * 0.5,)),
        "vmap_inside": lambda v: jax.vmap(lambda r: lax.psum(r, "i", axis_index_groups=H))(v),
        "jit_inside": lambda v: jax.jit(lambda r: lax.all_gather(
            r, "i", axis_index_groups=G, tiled=True))(v),
    }


def check(got, want, what):
    got = np.asarray(got)
    if got.shape != want.shape or got.dtype != want.dtype or not np.allclose(
            got, want, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"{what}: {got.dtype}{got.shape} {got.tolist()} != JAX "
                             f"{want.dtype}{want.shape} {want.tolist()}")


if __name__ == "__main__":
    import functrans as ft
    from functrans import lax

    ft.distributed.initialize()
    ft.config.update("jax_enable_x64", True)
    assert ft.process_count() == 4
    r = ft.process_index()
    want = np.load(DATA)
    count = 0
    for name, f in cases(ft, ft.numpy, lax).items():
        arg = want["xi" if name.endswith("_int") else "x"][r:r + 1]
        for k, leaf in enumerate(ft.tree_util.tree_leaves(ft.pmap(f, axis_name="i")(arg))):
            check(leaf, want[f"{name}#{k}"][r:r + 1], f"{name} leaf {k} on rank {r}")
        count += 1
    if r == 0:
        print("OK", count)
