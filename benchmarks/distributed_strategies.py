"""One training step of each strategy of ``examples/parallel/``, for ``benchmarks.distributed``.

The examples train a small float64 model for a few steps and check the losses; here each
strategy is the same code path (the same collectives in the same places, the same
transforms around ``shard_map``) as one jitted float32 step of a larger model, so that its
time and bytes are measurable: data parallel (``data_parallel.py``), ZeRO-1/2/3
(``zero.py``), tensor parallel of the MLP (``tensor_parallel.py``) and of a transformer
block (``transformer_tp.py``), DP x TP on a 2 x 2 mesh (``tensor_parallel.py --dp``) and
the GPipe pipeline (``pipeline_parallel.py``). The update is SGD (the examples use Adam,
which communicates nothing more). ``textbook(name, n)`` is the figure each is compared with.
"""
from __future__ import annotations

import numpy as np

D, H, O, B = 256, 512, 16, 512                 # MLP widths and global batch
TB, TT, TD, HEADS, DH, TF = 8, 32, 64, 4, 16, 256   # transformer block
PD, PB, M = 256, 512, 4                        # pipeline: layer width, batch, micro-batches
LR = np.float32(0.01)
F4 = 4                                         # bytes per float32


def strategies(n: int) -> list:
    """The strategies that run on n processes (DP x TP needs the 2 x 2 mesh)."""
    names = ["data parallel", "ZeRO-1", "ZeRO-2", "ZeRO-3", "tensor parallel (MLP)",
             "tensor parallel (transformer block)", "pipeline (GPipe)"]
    return names + (["DP x TP (2 x 2 mesh)"] if n == 4 else [])


def _mlp_params():
    r = np.random.default_rng(0)
    return {"w1": (r.normal(size=(D, H)) / np.sqrt(D)).astype(np.float32),
            "b1": np.zeros(H, np.float32),
            "w2": (r.normal(size=(H, O)) / np.sqrt(H)).astype(np.float32)}


def mlp_param_bytes() -> int:
    return (D * H + H + H * O) * F4


def _mlp_data():
    r = np.random.default_rng(1)
    x = r.normal(size=(B, D)).astype(np.float32)
    return x, np.sin(x[:, :O])


def _loss(p, x, y):
    import functrans as ft  # benchmarks import functrans only when they run
    import functrans.numpy as fnp
    h = ft.checkpoint_name(fnp.tanh(x @ p["w1"] + p["b1"]), "hidden")   # as common.mlp
    return fnp.mean((h @ p["w2"] - y) ** 2)


def _data_parallel(n):
    import functrans as ft  # benchmarks import functrans only when they run
    from functrans import lax
    from functrans.sharding import Mesh, P
    from functrans.tree_util import tree_map

    def step(p, x, y):
        loss, g = ft.value_and_grad(_loss)(p, x, y)
        g = tree_map(lambda t: lax.pmean(t, "data"), g)          # the gradient all-reduce
        return tree_map(lambda a, b: a - LR * b, p, g), lax.pmean(loss, "data")

    mesh = Mesh((n,), ("data",))
    f = ft.jit(ft.shard_map(step, mesh, in_specs=(P(), P("data"), P("data")),
                            out_specs=(P(), P()), check_rep=False))   # per-process grads
    return f, (_mlp_params(), *_mlp_data())


def zero_padded(n: int) -> int:
    total = D * H + H + H * O
    return -(-total // n) * n


def _zero(n, stage):
    import functrans as ft  # benchmarks import functrans only when they run
    import functrans.numpy as fnp
    from functrans import lax
    from functrans.sharding import Mesh, P
    p0 = _mlp_params()
    names = sorted(p0)
    shapes = [p0[k].shape for k in names]
    sizes = [int(np.prod(s)) for s in shapes]
    total, padded = sum(sizes), zero_padded(n)
    flat0 = np.zeros(padded, np.float32)
    flat0[:total] = np.concatenate([p0[k].ravel() for k in names])

    def unflatten(flat):
        out, at = {}, 0
        for k, s, m in zip(names, shapes, sizes):
            out[k] = fnp.reshape(flat[at:at + m], s)
            at += m
        return out

    def own_shard(flat):
        rows = fnp.reshape(flat, (n, padded // n))
        onehot = fnp.arange(n) == lax.axis_index("data")
        return fnp.sum(fnp.where(onehot[:, None], rows, np.float32(0)), axis=0)

    keep = ft.checkpoint_policies.save_only_these_names("hidden")

    def step(p_in, x, y):
        if stage == 3:      # the backward pass gathers the parameters again (checkpoint)
            loss, g = ft.value_and_grad(ft.checkpoint(
                lambda s: _loss(unflatten(lax.all_gather(s, "data", tiled=True)), x, y),
                policy=keep))(p_in)
            return p_in - LR * (g / n), lax.pmean(loss, "data")
        loss, g_full = ft.value_and_grad(lambda f: _loss(unflatten(f), x, y))(p_in)
        g = lax.psum_scatter(g_full, "data", tiled=True) / n            # reduce-scatter
        shard = own_shard(p_in) - LR * g
        return lax.all_gather(shard, "data", tiled=True), lax.pmean(loss, "data")

    mesh = Mesh((n,), ("data",))
    ps = P("data") if stage == 3 else P()
    f = ft.jit(ft.shard_map(step, mesh, in_specs=(ps, P("data"), P("data")),
                            out_specs=(ps, P()), check_rep=False))   # per-process grads
    return f, (flat0, *_mlp_data())


def _tensor_parallel(n, dp):
    import functrans as ft  # benchmarks import functrans only when they run
    import functrans.numpy as fnp
    from functrans import lax
    from functrans.sharding import Mesh, P
    from functrans.tree_util import tree_map
    mesh = Mesh((2, n // 2), ("data", "model")) if dp else Mesh((n,), ("model",))
    batch = P("data") if dp else P()

    def tp_loss(p, x, y):
        h = fnp.tanh(x @ p["w1"] + p["b1"])
        loss = fnp.mean((lax.psum(h @ p["w2"], "model") - y) ** 2)   # one all-reduce
        return lax.pmean(loss, "data") if dp else loss

    specs = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None)}
    vg = ft.value_and_grad(ft.shard_map(tp_loss, mesh, in_specs=(specs, batch, batch),
                                        out_specs=P()))

    def step(p, x, y):
        loss, g = vg(p, x, y)
        return tree_map(lambda a, b: a - LR * b, p, g), loss

    return ft.jit(step), (_mlp_params(), *_mlp_data())


def _transformer(n):
    import functrans as ft  # benchmarks import functrans only when they run
    import functrans.numpy as fnp
    from functrans import lax
    from functrans.sharding import Mesh, P
    from functrans.tree_util import tree_map
    r = np.random.default_rng(0)
    p0 = {k: (r.normal(size=s) / np.sqrt(s[0])).astype(np.float32) for k, s in (
        ("wq", (TD, HEADS * DH)), ("wk", (TD, HEADS * DH)), ("wv", (TD, HEADS * DH)),
        ("wo", (HEADS * DH, TD)), ("w1", (TD, TF)), ("w2", (TF, TD)))}
    x = r.normal(size=(TB, TT, TD)).astype(np.float32)
    y = r.normal(size=(TB, TT, TD)).astype(np.float32)

    def attention(p, x):
        heads = p["wq"].shape[1] // DH

        def split(w):
            return fnp.transpose(fnp.reshape(x @ w, (x.shape[0], TT, heads, DH)), (0, 2, 1, 3))

        q, k, v = split(p["wq"]), split(p["wk"]), split(p["wv"])
        s = fnp.einsum("bhqd,bhkd->bhqk", q, k) / np.float32(np.sqrt(DH))
        e = fnp.exp(s - fnp.max(s, axis=-1, keepdims=True))
        a = fnp.einsum("bhqk,bhkd->bhqd", e / fnp.sum(e, axis=-1, keepdims=True), v)
        a = fnp.reshape(fnp.transpose(a, (0, 2, 1, 3)), (x.shape[0], TT, heads * DH))
        return lax.psum(a @ p["wo"], "model")             # the attention block's all-reduce

    def loss_tp(p, x, y):
        h = x + attention(p, x)
        out = h + lax.psum(fnp.tanh(h @ p["w1"]) @ p["w2"], "model")   # the MLP block's
        return fnp.mean((out - y) ** 2)

    cols, rows = P(None, "model"), P("model", None)
    specs = {"wq": cols, "wk": cols, "wv": cols, "wo": rows, "w1": cols, "w2": rows}
    vg = ft.value_and_grad(ft.shard_map(loss_tp, Mesh((n,), ("model",)),
                                        in_specs=(specs, P(), P()), out_specs=P()))

    def step(p, x, y):
        loss, g = vg(p, x, y)
        return tree_map(lambda a, b: a - LR * b, p, g), loss

    return ft.jit(step), (p0, x, y)


def _pipeline(n):
    import functrans as ft  # benchmarks import functrans only when they run
    import functrans.numpy as fnp
    from functrans import lax
    from functrans.sharding import Mesh, P
    from functrans.tree_util import tree_map
    S = n
    r = np.random.default_rng(0)
    p0 = {"w": (r.normal(size=(S, PD, PD)) / np.sqrt(PD)).astype(np.float32),
          "b": (0.1 * r.normal(size=(S, PD))).astype(np.float32)}
    x = r.normal(size=(PB, PD)).astype(np.float32)
    y = np.cos(x)

    def pipeline_loss(p, x, y):
        w, b = p["w"][0], p["b"][0]
        me = lax.axis_index("stage")
        mbs, tgt = fnp.reshape(x, (M, PB // M, PD)), fnp.reshape(y, (M, PB // M, PD))
        carry, total = fnp.zeros((PB // M, PD), np.float32), np.float32(0)
        for t in range(M + S - 1):
            out = fnp.tanh(fnp.where(me == 0, mbs[min(t, M - 1)], carry) @ w + b)
            k = t - (S - 1)
            if k >= 0:
                total = total + fnp.where(me == S - 1, fnp.mean((out - tgt[k]) ** 2), 0.0)
            send = [(s, s + 1) for s in range(S - 1) if s <= t < s + M]   # real ones only
            if send:
                carry = lax.ppermute(out, "stage", send)
        return lax.psum(total, "stage") / M

    vg = ft.value_and_grad(ft.shard_map(pipeline_loss, Mesh((S,), ("stage",)),
                                        in_specs=(P("stage"), P(), P()), out_specs=P()))

    def step(p, x, y):
        loss, g = vg(p, x, y)
        return tree_map(lambda a, b: a - LR * b, p, g), loss

    return ft.jit(step), (p0, x, y)


def build(name: str, n: int):
    """(jitted step, its arguments) of strategy ``name`` on n processes."""
    if name == "data parallel":
        return _data_parallel(n)
    if name.startswith("ZeRO-"):
        return _zero(n, int(name[-1]))
    if name == "tensor parallel (MLP)":
        return _tensor_parallel(n, dp=False)
    if name == "DP x TP (2 x 2 mesh)":
        return _tensor_parallel(n, dp=True)
    if name == "tensor parallel (transformer block)":
        return _transformer(n)
    if name == "pipeline (GPipe)":
        return _pipeline(n)
    raise KeyError(name)


def _ring(nbytes, n):
    return 2 * (n - 1) / n * nbytes


def textbook(name: str, n: int) -> tuple:
    """(bytes process 0 sends per step by the textbook algorithm, how it is reckoned)."""
    s = mlp_param_bytes()
    z = zero_padded(n) * F4
    if name == "data parallel":
        return _ring(s, n), "ring all-reduce of the gradients, 2(N-1)/N S"
    if name in ("ZeRO-1", "ZeRO-2"):
        return _ring(z, n), ("reduce-scatter + all-gather, 2(N-1)/N S "
                             "(ZeRO paper: as DP)")
    if name == "ZeRO-3":
        return 1.5 * _ring(z, n), "3(N-1)/N S: 1.5x DP (all-gather twice, reduce-scatter)"
    if name == "tensor parallel (MLP)":
        return 2 * _ring(B * O * F4, n), "2 all-reduces of the B x O activations (fwd + bwd)"
    if name == "tensor parallel (transformer block)":
        return 4 * _ring(TB * TT * TD * F4, n), ("2 all-reduces (fwd + bwd) per block, "
                                                "2 blocks (attention, MLP)")
    if name == "DP x TP (2 x 2 mesh)":
        return (2 * _ring(B // 2 * O * F4, 2) + _ring(s // 2, 2),
                "TP: 2 all-reduces of the local activations; DP: all-reduce of S/2")
    if name == "pipeline (GPipe)":
        return (PB * PD * F4 if n > 1 else 0.0,
                "stage 0 sends each micro-batch's boundary activations once")
    raise KeyError(name)


# why a measured figure differs from the textbook one, where it is known to (none now)
WHY: dict = {}
