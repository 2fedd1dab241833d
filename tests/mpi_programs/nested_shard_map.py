"""Reverse mode of a shard_map nested in another's body (the outer manual over 'i' only,
the inner over 'j') equals JAX 0.10.2 (tests/data/jax_nested_shard_map.npz, written by
make_jax_nested_shard_map.py): on 4 processes a 2 x 2 mesh, on 2 a 2 x 1 and a 1 x 2 one,
eager and under jit. The inner shard_map's transpose took the outer's manual axis 'i' as
replicated: it divided a cotangent among 'copies' along it and summed the cotangent over
it, mixing the outer blocks (grad of sum(x * x) had rows 2 v[0] + 2 v[2] / 2). Prints
``OK <count>`` on rank 0."""
import os

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans.sharding import PartitionSpec as P

ft.distributed.initialize()
ft.config.update("jax_enable_x64", True)
N = ft.process_count()
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                    "jax_nested_shard_map.npz")
WANT = np.load(DATA)
V, W = WANT["V"], WANT["W"]
count = 0


def close(got, key, what):
    got, want = np.asarray(got), WANT[key]
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"{what} {key}: {got.tolist()} != {want.tolist()}")


def nest(mesh, g, spec):
    inner = lambda x: ft.shard_map(g, mesh=mesh, in_specs=spec, out_specs=spec)(x)  # noqa
    return ft.shard_map(inner, mesh=mesh, in_specs=P("i", None), out_specs=P("i", None),
                        check_vma=False, axis_names=frozenset({"i"}))


def cases(mesh):
    cube = nest(mesh, lambda x: x * x * x, P(None, "j"))
    sinx = nest(mesh, lambda x: fnp.sin(x) * x, P(None, "j"))
    rep = nest(mesh, lambda x: fnp.exp(x) * x, P())
    rows = nest(mesh, lambda x: fnp.tanh(x) ** 2, P("j", None))
    return {
        "cube_grad": lambda: ft.grad(lambda x: cube(x).sum())(V),
        "sinx_vjp": lambda: ft.vjp(sinx, V)[1](W)[0],
        "sinx_grad_sq": lambda: ft.grad(lambda x: (sinx(x) ** 2 * W).sum())(V),
        "rep_grad": lambda: ft.grad(lambda x: (rep(x) * W).sum())(V),
        "rows_vjp": lambda: ft.vjp(rows, V)[1](W)[0],
        "rows_jit_vjp": lambda: ft.jit(lambda x, w: ft.vjp(rows, x)[1](w)[0])(V, W),
        "cube_jit_grad": lambda: ft.jit(ft.grad(lambda x: cube(x).sum()))(V),
    }


for shape in ([(2, 2)] if N == 4 else [(2, 1), (1, 2)]):
    mesh = ft.make_mesh(shape, ("i", "j"))
    for name, run in cases(mesh).items():
        close(run(), name.replace("_jit", ""), f"{shape}")
        count += 1
if ft.process_index() == 0:
    print("OK", count)
