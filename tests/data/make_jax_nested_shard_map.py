"""Writes jax_nested_shard_map.npz: reverse mode of a shard_map nested in another's body
(the outer manual over 'i' only, the inner over 'j'), JAX 0.10.2 with 4 simulated CPU
devices on 2 x 2, 2 x 1 and 1 x 2 meshes (the same values on each, checked here; the file
holds one set). Read by tests/mpi_programs/nested_shard_map.py.

    /work/jaxvenv/bin/python tests/data/make_jax_nested_shard_map.py
"""
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax                                          # noqa: E402
import jax.numpy as jnp                             # noqa: E402
import numpy as np                                  # noqa: E402
from jax._src.shard_map import shard_map            # noqa: E402  (the one JAX's tests use)
from jax.sharding import AxisType, PartitionSpec as P  # noqa: E402

jax.config.update("jax_enable_x64", True)
V = np.arange(32.0).reshape(4, 8) / 10 - 1.2
W = np.cos(np.arange(32.0)).reshape(4, 8)


def nest(g, spec):
    """g over 'j' blocks (spec) inside a body manual over 'i' only."""
    inner = lambda x: shard_map(g, in_specs=spec, out_specs=spec)(x)   # noqa: E731
    return shard_map(inner, in_specs=P("i", None), out_specs=P("i", None), check_vma=False,
                     axis_names=frozenset({"i"}))


def cases():
    cube = nest(lambda x: x * x * x, P(None, "j"))
    sinx = nest(lambda x: jnp.sin(x) * x, P(None, "j"))
    rep = nest(lambda x: jnp.exp(x) * x, P())
    rows = nest(lambda x: jnp.tanh(x) ** 2, P("j", None))
    return {
        # JAX's shard_map_test test_grad_nested_partial_auto_with_residuals
        "cube_grad": jax.grad(jax.jit(lambda x: cube(x).sum()))(V),
        "sinx_vjp": jax.jit(lambda x, w: jax.vjp(sinx, x)[1](w)[0])(V, W),
        "sinx_grad_sq": jax.jit(jax.grad(lambda x: (sinx(x) ** 2 * W).sum()))(V),
        "rep_grad": jax.jit(jax.grad(lambda x: (rep(x) * W).sum()))(V),
        "rows_vjp": jax.jit(lambda x, w: jax.vjp(rows, x)[1](w)[0])(V, W),
    }


def main():
    sets = []
    for shape in [(2, 2), (2, 1), (1, 2)]:
        mesh = jax.make_mesh(shape, ("i", "j"), devices=jax.devices()[:shape[0] * shape[1]],
                             axis_types=(AxisType.Auto,) * 2)
        with jax.set_mesh(mesh):
            sets.append({k: np.asarray(v) for k, v in cases().items()})
    for other in sets[1:]:
        for k, v in sets[0].items():
            np.testing.assert_allclose(other[k], v, rtol=1e-14, atol=1e-14)
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "jax_nested_shard_map.npz"), V=V, W=W, **sets[0])


if __name__ == "__main__":
    main()
