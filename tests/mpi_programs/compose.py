"""shard_map composed with scan, checkpoint, remat, jacfwd, hessian and vmap (outside and
inside the body), against the single-process function. Prints ``OK <count>`` on rank 0."""
import numpy as np
import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import Mesh, P
ft.distributed.initialize()
n = ft.process_count()
mesh = Mesh((n,), ("i",))
X = np.random.default_rng(0).normal(size=(n * 2, 3))
w = np.random.default_rng(1).normal(size=3)

def body_scan(w, x):
    def step(c, xi):
        c = c + lax.psum(fnp.sum(fnp.sin(xi * w)), "i")
        return c, c
    c, _ = lax.scan(step, 0.0, x)
    return c

def ref_scan(w, x):
    c = 0.0
    for k in range(2):
        c = c + fnp.sum(fnp.sin(fnp.stack([x[k + 2 * j] for j in range(n)]) * w))
    return c

f = ft.shard_map(body_scan, mesh, in_specs=(P(), P("i")), out_specs=P())
assert np.allclose(f(w, X), ref_scan(w, X)) and \
    np.allclose(ft.grad(f)(w, X), ft.grad(ref_scan)(w, X)), "scan value"
fc = ft.shard_map(ft.checkpoint(body_scan), mesh, in_specs=(P(), P("i")), out_specs=P())
assert np.allclose(ft.grad(fc)(w, X), ft.grad(ref_scan)(w, X)), "checkpoint grad"
assert np.allclose(ft.grad(ft.checkpoint(f))(w, X), ft.grad(ref_scan)(w, X)), "remat outside grad"
# shard_map inside scan
def outer(w):
    def step(c, _):
        return c + f(w * c, X), None
    c, _ = lax.scan(step, 1.0, None, length=2)
    return c
def outer_ref(w):
    c = 1.0
    for _ in range(2):
        c = c + ref_scan(w * c, X)
    return c
assert np.allclose(outer(w), outer_ref(w)) and \
    np.allclose(ft.grad(outer)(w), ft.grad(outer_ref)(w)), "scan(shard_map)"
# vmap of shard_map with collective inside, batch over w
ws = np.stack([w, 2 * w, 3 * w])
assert np.allclose(ft.vmap(f, in_axes=(0, None))(ws, X),
                   np.array([ref_scan(v, X) for v in ws])), "vmap"
# jacfwd / hessian
assert np.allclose(ft.jacfwd(f)(w, X), ft.jacfwd(ref_scan)(w, X)), "jacfwd"
assert np.allclose(ft.hessian(f)(w, X), ft.hessian(ref_scan)(w, X)), "hessian"
# vmap inside body over the local batch with psum on mesh axis
g = ft.shard_map(lambda x: ft.vmap(lambda r: lax.psum(r, "i"))(x), mesh, in_specs=P("i"),
                 out_specs=P())
assert np.allclose(g(X), X.reshape(n, 2, 3).sum(0)), "vmap inside"
# a None in_spec (JAX's static argument): f gets the leaf as it is, the whole array on
# every process (was a TypeError); grad through it as through a P() argument
h = ft.shard_map(lambda w, x: lax.psum(fnp.sum(fnp.sin(x @ w)), "i"), mesh,
                 in_specs=(None, P("i")), out_specs=P())
hp = ft.shard_map(lambda w, x: lax.psum(fnp.sum(fnp.sin(x @ w)), "i"), mesh,
                  in_specs=(P(), P("i")), out_specs=P())
assert np.allclose(h(w, X), np.sin(X @ w).sum()), "None spec value"
assert np.allclose(ft.grad(h)(w, X), np.cos(X @ w) @ X), "None spec grad"
assert np.allclose(ft.grad(h, 1)(w, X), ft.grad(hp, 1)(w, X)), "None spec grad x"
assert ft.shard_map(lambda a, t: a * t[1], mesh, in_specs=(P("i"), None), out_specs=P("i"))(
    X, ("label", 3.0)).tolist() == (3.0 * X).tolist(), "None spec object"
if ft.process_index() == 0:
    print("OK", 12)
