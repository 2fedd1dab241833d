"""Reverse mode over reverse mode through a shard_map (grad of a vjp, grad of a grad) over
several processes equals closed-form derivatives (f64, to 1e-12). The residuals reverse
mode passes between the split bodies are each process's own: their cotangents were
averaged over the processes (a wrong second derivative, silently; JAX's shard_map_test
test_remat_scalar_residuals found it). Prints ``OK <count>`` on rank 0."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import PartitionSpec as P

ft.distributed.initialize()
ft.config.update("jax_enable_x64", True)
N = ft.process_count()
mesh = ft.make_mesh((N,), ("i",))
x = np.arange(2.0 * N) / 3 - 0.4
ct = np.linspace(0.5, 1.5, 2 * N)
v = np.cos(np.arange(2.0 * N))
w = np.array([0.7, -1.3])
count = 0


def close(got, want, what):
    got = np.asarray(got)
    if got.shape != np.shape(want) or not np.allclose(got, want, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"{what}: {got.tolist()} != {np.asarray(want).tolist()}")


def sm(f, i=P("i"), o=P("i"), check=True):
    return ft.shard_map(f, mesh=mesh, in_specs=i, out_specs=o, check_rep=check)


def grad_of_vjp(f, x):   # d/dx sum(vjp(f, x)(ct) * v)
    return ft.grad(lambda x: fnp.sum(ft.vjp(f, x)[1](ct)[0] * v))(x)


for check in (True, False):
    close(grad_of_vjp(sm(fnp.sin, check=check), x), -ct * np.sin(x) * v, f"sin {check}")
    close(grad_of_vjp(sm(lambda u: u ** 3, check=check), x), 6 * ct * x * v, f"cube {check}")
    close(ft.jit(lambda x: grad_of_vjp(sm(lambda u: u ** 3, check=check), x))(x),
          6 * ct * x * v, f"jit cube {check}")
    count += 3
# a body summing its block: h(s) = sin(sin(sin(s))) of each block's sum (the JAX test)
s = x.reshape(N, 2).sum(1)
eps = 1e-5   # h'' by a central difference of the closed-form h' (error ~1e-10)
h1p = lambda s: np.cos(np.sin(np.sin(s))) * np.cos(np.sin(s)) * np.cos(s)   # noqa: E731
h2 = (h1p(s + eps) - h1p(s - eps)) / (2 * eps)
blk = sm(lambda u: fnp.sin(fnp.sin(fnp.sin(u.sum())))[None])
ct_b, v_b = ct[:N], v.reshape(N, 2).sum(1)
got = ft.grad(lambda x: fnp.sum(ft.vjp(blk, x)[1](ct_b)[0] * v))(x)
if not np.allclose(got, np.repeat(ct_b * h2 * v_b, 2), rtol=1e-8, atol=1e-8):
    raise AssertionError(f"block sum: {got.tolist()}")
remat = ft.remat(blk, policy=ft.checkpoint_policies.everything_saveable)
got = ft.grad(lambda x: fnp.sum(ft.vjp(remat, x)[1](ct_b)[0] * v))(x)
if not np.allclose(got, np.repeat(ct_b * h2 * v_b, 2), rtol=1e-8, atol=1e-8):
    raise AssertionError(f"remat block sum: {got.tolist()}")
count += 2
# a replicated argument and a psum: f(w, x) = psum(sum(w * x**3)); d2f/dw dx
f = sm(lambda w, u: lax.psum(fnp.sum(w * u ** 3), "i"), (P(), P("i")), P())
gx = lambda w: ft.grad(f, 1)(w, x)                    # noqa: E731 3 w x^2 per block
close(gx(w), 3 * np.tile(w, N) * x ** 2, "psum grad")
close(ft.grad(lambda w: fnp.sum(gx(w) * v))(w), (3 * x ** 2 * v).reshape(N, 2).sum(0),
      "psum grad of grad w.r.t. the replicated w")
close(ft.grad(lambda x: fnp.sum(ft.grad(f, 1)(w, x) * v))(x), 6 * np.tile(w, N) * x * v,
      "psum grad of grad w.r.t. x")
count += 3
if N == 4:   # a shard_map nested in another's body (JAX's test_grad_nested_partial_auto)
    m2 = ft.make_mesh((2, 2), ("i", "j"))
    inner = lambda u: ft.shard_map(lambda b: b * b, mesh=m2, in_specs=P(None, "j"),  # noqa
                                   out_specs=P(None, "j"))(u)
    nested = ft.shard_map(inner, mesh=m2, in_specs=P("i", None), out_specs=P("i", None),
                          check_rep=False, axis_names=frozenset({"i"}))
    V = np.arange(32.0).reshape(4, 8) / 10
    close(nested(V), V * V, "nested forward")
    close(ft.jvp(nested, (V,), (np.ones_like(V),))[1], 2 * V, "nested jvp")
    # its gradient had rows of other blocks (2 v[0] + 2 v[2] / 2 in row 0; then refused)
    close(ft.grad(lambda u: fnp.sum(nested(u)))(V), 2 * V, "nested grad")
    count += 1
if ft.process_index() == 0:
    print("OK", count)
