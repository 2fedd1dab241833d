"""Gradients through shard_map with respect to replicated (unvarying) arguments equal the
gradients of the single-process function (f64, to 1e-10): a data-parallel MLP loss in
several spellings, closures, jit on either side, and (4 processes) data x tensor parallel
on a 2 x 2 mesh. Prints ``OK <count>`` on rank 0."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.sharding import Mesh, P

ft.distributed.initialize()
n = ft.process_count()
rng = np.random.default_rng(1)
B, D, H, O = 4 * n, 5, 6, 3
params = {"w1": rng.normal(size=(D, H)), "b1": rng.normal(size=H),
          "w2": rng.normal(size=(H, O))}
X, Y = rng.normal(size=(B, D)), rng.normal(size=(B, O))


def close(a, b, what):
    for k in (a if isinstance(a, dict) else {"": a}):
        x = np.asarray(a[k] if k else a)
        y = np.asarray(b[k] if k else b)
        if x.shape != y.shape or not np.allclose(x, y, rtol=1e-10, atol=1e-10):
            raise AssertionError(f"{what} {k}: {x.tolist()} != {y.tolist()}")


def mlp(p, x):
    return fnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"]


def loss_single(p, x, y):
    return fnp.mean((mlp(p, x) - y) ** 2)


want = ft.grad(loss_single)(params, X, Y)
mesh = Mesh((n,), ("data",))
count = 0

# 1. the mean of local losses (pmean), replicated output
dp = ft.shard_map(lambda p, x, y: lax.pmean(loss_single(p, x, y), "data"), mesh,
                  in_specs=(P(), P("data"), P("data")), out_specs=P())
close(dp(params, X, Y), loss_single(params, X, Y), "pmean loss value")
close(ft.grad(dp)(params, X, Y), want, "pmean loss grad")
count += 1

# 2. psum of local sums / global batch, and a replicated value used after the psum
def psum_loss(p, x, y):
    s = lax.psum(fnp.sum((mlp(p, x) - y) ** 2), "data")
    return s / (B * O) * (p["b1"][0] ** 2 + 1.0)


def psum_loss_single(p, x, y):
    return fnp.sum((mlp(p, x) - y) ** 2) / (B * O) * (p["b1"][0] ** 2 + 1.0)


dp2 = ft.shard_map(psum_loss, mesh, in_specs=(P(), P("data"), P("data")), out_specs=P())
close(ft.grad(dp2)(params, X, Y), ft.grad(psum_loss_single)(params, X, Y), "psum loss grad")
count += 1

# 3. per-shard losses out (split output), mean outside; gradient w.r.t. the data too
dp3 = ft.shard_map(lambda p, x, y: loss_single(p, x, y)[None], mesh,
                   in_specs=(P(), P("data"), P("data")), out_specs=P("data"))
g3 = ft.grad(lambda p, x: fnp.mean(dp3(p, x, Y)), argnums=(0, 1))(params, X)
w3 = ft.grad(loss_single, argnums=(0, 1))(params, X, Y)
close(g3[0], w3[0], "split-output grad params")
close(g3[1], w3[1], "split-output grad data")
count += 1

# 4. parameters closed over (not arguments), and jit on either side
def closed_loss(p):
    f = ft.shard_map(lambda x, y: lax.pmean(loss_single(p, x, y), "data"), mesh,
                     in_specs=P("data"), out_specs=P())
    return f(X, Y)


close(ft.grad(closed_loss)(params), want, "closure grad")
close(ft.jit(ft.grad(dp))(params, X, Y), want, "jit(grad(shard_map))")
close(ft.grad(ft.jit(dp))(params, X, Y), want, "grad(jit(shard_map))")
dpj = ft.shard_map(ft.jit(lambda p, x, y: lax.pmean(loss_single(p, x, y), "data")), mesh,
                   in_specs=(P(), P("data"), P("data")), out_specs=P())
close(ft.grad(dpj)(params, X, Y), want, "grad(shard_map(jit))")
count += 4

# 5. vmap of the sharded loss over a batch of parameter scalings
scales = np.array([0.5, 1.0, 2.0])
got = ft.vmap(lambda s: dp({"w1": params["w1"] * s, "b1": params["b1"],
                            "w2": params["w2"]}, X, Y))(scales)
ref = [loss_single({"w1": params["w1"] * s, "b1": params["b1"], "w2": params["w2"]}, X, Y)
       for s in scales]
close(got, np.array(ref), "vmap(shard_map)")
count += 1

if n == 4:   # data x model: Megatron split of the MLP, data split of the batch
    mesh2 = Mesh((2, 2), ("data", "model"))

    def tp_loss(p, x, y):
        h = fnp.tanh(x @ p["w1"] + p["b1"])          # column split: local hidden units
        out = lax.psum(h @ p["w2"], "model")          # row split: partial sums
        return lax.pmean(fnp.mean((out - y) ** 2), "data")

    specs = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None)}
    tp = ft.shard_map(tp_loss, mesh2, in_specs=(specs, P("data"), P("data")), out_specs=P())
    close(tp(params, X, Y), loss_single(params, X, Y), "dp x tp loss")
    close(ft.grad(tp)(params, X, Y), want, "dp x tp grad")
    count += 1

# global arrays from process-local blocks
mine = X[ft.process_index() * 4:(ft.process_index() + 1) * 4]
close(ft.make_array_from_process_local_data(ft.NamedSharding(mesh, P("data")), mine), X,
      "from local blocks")
count += 1

if ft.process_index() == 0:
    print("OK", count)
