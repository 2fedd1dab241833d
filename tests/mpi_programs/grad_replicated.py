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

# gradients taken inside the body, against JAX 0.10.2 (4 / 2 simulated CPU devices, f64).
# check_rep=True is JAX's default check_vma=True: the cotangent of a value replicated along
# the axis is summed over it and psum transposes to a copy (functrans gave check_vma=False's
# values before: the mean dp gradient where JAX gives N times it, N cos x for cos x).
# check_rep=False is JAX's check_vma=False: each process differentiates its body alone.
W0 = np.arange(6.0).reshape(3, 2) / 10 - 0.2
X0 = np.arange(12.0).reshape(4, 3) / 7 - 0.8
Y0 = np.cos(np.arange(8.0)).reshape(4, 2)
DP_GRAD = [[0.04498656777484342, -0.01863883168127669], [0.021418719904673, -0.03063322135448974],
           [-0.0021491279654974604, -0.042627611027702794]]   # the global loss's gradient
PMEAN_W = {2: [[0.2883400377716103, 0.08479062219397304], [0.2548999431374331, 0.10708961649665909],
               [0.2214598485032558, 0.12938861079934513]],
           4: [[0.7518776224315978, 0.5330005608889052], [0.6176137612830983, 0.43782188930160076],
               [0.48334990013459866, 0.34264321771429623]]}     # check_vma=False, device 0
LOCAL_X = {2: [[0.1272972378595063, -0.03331253505555657, -0.19392230797061946],
               [-0.09609040138353836, 0.04892183106743679, 0.19393406351841194],
               [-0.0626018334833451, -0.00823903379843949, 0.04612376588646611],
               [0.11417711658635275, -0.024162407755939024, -0.1625019320982308]]}
LOCAL_X[4] = (2 * np.array(LOCAL_X[2])).tolist()   # JAX's 4-device values: twice (exactly)
GATHERED = {2: [[-1.8512492562653253, -2.475951756818605, -2.652805845055077, -2.349822277884556],
                [1.7318138203772393, 2.3162129337980493, 2.4816570808579743, 2.1982208406016808]],
            4: [[-1.3735075127129832, -1.8369964647363841, -1.9682107882666697,
                 -1.7434165287530574],
                [-0.47774174355234206, -0.6389552920822207, -0.6845950567884069,
                 -0.6064057491314984],
                [0.41802402560829904, 0.5590858805719428, 0.5990206746898558, 0.5306050304900607],
                [1.3137897947689403, 1.7571270532261065, 1.8826364061681187, 1.66761581011162]]}
PENALIZED = {2: [[0.11750543109312354, -0.06791979909134213], [0.0685672724436016,
                  -0.09353192990873792], [0.01962911379407957, -0.11914406072613366]],
             4: [[0.4002046354468674, -0.3196924125554167], [0.29151354069273705,
                  -0.38065678301602623], [0.1828224459386064, -0.4416211534766358]]}
SUM_TANH = [[-0.6265234101636897, -0.6420066205566123], [-0.05695667365124476, -0.08359250182231118],
            [0.5126100628612003, 0.47482161691198965]]   # JAX, either device count


def loss0(w, x, y):
    return fnp.mean((fnp.tanh(x @ w) - y) ** 2)


def inbody(f, i, o, **kw):
    return ft.shard_map(f, mesh, in_specs=i, out_specs=o, **kw)


def gathered(v, x):     # an all_gather's result varies (JAX's typing): no sum over the axis
    full = lax.all_gather(v, "data", tiled=True)
    return ft.grad(lambda f: fnp.sum(fnp.sin(f) * fnp.sum(x)))(full)[None]


def scanned(w, x):      # a psum in a scan body: the carry is replicated (JAX's typing too)
    def total(w):
        body = lambda c, r: (c + lax.psum(fnp.sum(fnp.tanh(r @ w)), "data"), None)  # noqa
        return lax.scan(body, fnp.zeros(()), x[:, None, :])[0]
    return ft.grad(total)(w)


def through_pcast(w, x):   # JAX's pvary transposes to a sum over the axis
    return ft.grad(lambda w: fnp.sum(fnp.tanh(x @ lax.pcast(w, "data", to="varying"))))(w)


def of_pcast(w, x):        # the cast value varies: each process's own gradient
    v = lax.pcast(w, "data", to="varying")
    return ft.grad(lambda v: fnp.sum(fnp.tanh(x @ v)))(v)[None]


def penalized(w, x, y):   # a grad inside the grad: typed as its primal
    return ft.grad(lambda w: loss0(w, x, y) + 0.1 * fnp.sum(ft.grad(loss0)(w, x, y) ** 2))(w)


rep3 = (P(), P("data"), P("data"))
dp_step = lambda w, x, y: lax.pmean(ft.grad(loss0)(w, x, y), "data")   # noqa: E731
if n in PMEAN_W:
    vals = {   # name -> (body, in_specs, out_specs, arguments, JAX check_vma=True's value)
        "dp": (dp_step, rep3, P(), (W0, X0, Y0), n * np.array(DP_GRAD)),
        "vjp": (lambda w, x, y: ft.vjp(lambda w: loss0(w, x, y), w)[1](1.0)[0], rep3, P(),
                (W0, X0, Y0), n * np.array(DP_GRAD)),
        "psum x": (lambda x: ft.grad(lambda x: lax.psum(fnp.sum(fnp.sin(x)), "data"))(x),
                   P("data"), P("data"), (X0,), np.cos(X0)),
        "pmean w": (lambda w, x, y: ft.grad(lambda w: lax.pmean(loss0(w, x, y), "data"))(w),
                    rep3, P(), (W0, X0, Y0), np.array(DP_GRAD)),
        "psum w": (lambda w, x, y: ft.grad(lambda w: lax.psum(loss0(w, x, y), "data"))(w),
                   rep3, P(), (W0, X0, Y0), n * np.array(DP_GRAD)),
        "block": (lambda w, x, y: ft.grad(loss0, argnums=1)(w, x, y), rep3, P("data"),
                  (W0, X0, Y0), np.array(LOCAL_X[n])),
        "all_gather": (gathered, (P("data"), P("data")), P("data"), (X0[:, 0], X0),
                       np.array(GATHERED[n])),
        "scan": (scanned, (P(), P("data")), P(), (W0, X0), np.array(SUM_TANH)),
        "penalized": (penalized, rep3, P(), (W0, X0, Y0), np.array(PENALIZED[n])),
        "through pcast": (through_pcast, (P(), P("data")), P(), (W0, X0), np.array(SUM_TANH)),
        "of pcast": (of_pcast, (P(), P("data")), P("data"), (W0, X0), np.stack([
            ft.grad(lambda w: fnp.sum(fnp.tanh(xb @ w)))(W0) for xb in np.split(X0, n)])),
    }
    for what, (f, i, o, args, want) in vals.items():
        close(inbody(f, i, o)(*args), want, f"in-body {what} (check_vma=True)")
        close(ft.jit(inbody(f, i, o))(*args), want, f"jit in-body {what} (check_vma=True)")
    for kw in ({"check_rep": False}, {"check_vma": False}):
        close(inbody(dp_step, rep3, P(), **kw)(W0, X0, Y0), np.array(DP_GRAD), f"dp {kw}")
    close(inbody(vals["psum x"][0], P("data"), P("data"), check_rep=False)(X0), n * np.cos(X0),
          "in-body psum grad (check_vma=False)")
    # a value that varies returned under P() unchecked: each process's own (JAX's single
    # process returns device 0's), so rank 0 holds JAX's
    g = inbody(vals["pmean w"][0], rep3, P(), check_rep=False)(W0, X0, Y0)
    if ft.process_index() == 0:
        close(g, np.array(PMEAN_W[n]), "in-body pmean grad (check_vma=False)")
    # a jit inside the body is typed through (it was an error): x varies, so its own 2 x
    close(inbody(lambda x: ft.jit(ft.grad(lambda x: fnp.sum(x ** 2)))(x), P("data"),
                 P("data"))(X0), 2 * X0, "in-body grad inside jit (check_vma=True)")
    # a loop carry is typed as its initial value (it was refused): x varies, so c + 2 c twice
    close(inbody(lambda x: lax.fori_loop(0, 2, lambda k, c: c + ft.grad(
        lambda c: fnp.sum(c ** 2))(c), x), P("data"), P("data"))(X0), 9 * X0,
        "in-body grad of a loop carry (check_vma=True)")
    count += 1

if ft.process_index() == 0:
    print("OK", count)
