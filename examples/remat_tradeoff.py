"""The memory / recompute trade-off of ``ft.checkpoint``, policy by policy, eagerly and
under ``jit``, on a deep MLP and a small transformer stack.

Each layer (or block) is wrapped in ``ft.checkpoint(..., policy=P)``. For every policy
the script prints:
  residuals   what reverse mode saves between the passes (``ft.saved_residuals``)
  eager peak  the peak of memory allocated by one eager gradient step (tracemalloc)
  jit temps   the compiled step's peak of live temporaries (``cost_analysis()["temp_bytes"]``)
  jit peak    tracemalloc's peak over one compiled call plus that workspace (the native
              workspace is reused between calls, so tracemalloc alone would not see it)
  eager / jit time of one step (median of a few)
and checks that every policy's gradient equals the plain one.

Run:  python examples/remat_tradeoff.py
Look at: ``nothing_saveable`` cuts residuals and temporaries for more time;
``everything_saveable`` equals no checkpoint; the dots and name policies sit between.
"""
import statistics
import time
import tracemalloc

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

CP = ft.checkpoint_policies
POLICIES = {
    "no checkpoint": None,
    "nothing_saveable": CP.nothing_saveable,
    "everything_saveable": CP.everything_saveable,
    "dots_saveable": CP.dots_saveable,
    "dots_with_no_batch_dims": CP.dots_with_no_batch_dims_saveable,
    "save_only 'attn'": CP.save_only_these_names("attn"),
    "save_any_but 'attn'": CP.save_any_names_but_these("attn"),
    "both('attn', dots_nb)": CP.save_from_both_policies(CP.save_only_these_names("attn"),
                                                        CP.dots_with_no_batch_dims_saveable),
}


def mlp_layer(h, p):
    W, b = p
    return lax.tanh(ft.checkpoint_name(fnp.matmul(h, W), "attn") + b)


def transformer_block(x, p):
    """Single-head attention over a batch of sequences, then an MLP; residual adds."""
    Wq, Wk, Wv, Wo, W1, W2 = p
    q, k, v = fnp.matmul(x, Wq), fnp.matmul(x, Wk), fnp.matmul(x, Wv)
    s = fnp.einsum("bqd,bkd->bqk", q, k) / np.sqrt(q.shape[-1])
    a = fnp.exp(s - fnp.max(s, axis=-1, keepdims=True))
    a = a / fnp.sum(a, axis=-1, keepdims=True)
    o = ft.checkpoint_name(fnp.einsum("bqk,bkd->bqd", a, v), "attn")
    x = x + fnp.matmul(o, Wo)
    return x + fnp.matmul(lax.tanh(fnp.matmul(x, W1)), W2)


def make_loss(layer, policy):
    f = layer if policy is None else ft.checkpoint(layer, policy=policy)

    def loss(params, x):
        h = x
        for p in params:
            h = f(h, p)
        return fnp.sum(h * h)
    return loss


def peak(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def seconds(fn, n=3):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def table(title, layer, params, x, policies):
    MiB = 2 ** 20
    print(f"\n{title}")
    print(f"{'policy':<24}{'residuals':>11}{'eager peak':>12}{'jit temps':>11}{'jit peak':>10}"
          f"{'eager ms':>10}{'jit ms':>8}")
    ref = None
    for name in policies:
        pol = POLICIES[name]
        loss = make_loss(layer, pol)
        res = ft.saved_residuals(loss, params, x)
        g = ft.grad(loss)
        jg = ft.jit(g)
        compiled = jg.lower(params, x).compile()
        temps = compiled.cost_analysis()["temp_bytes"]
        out = jg(params, x)
        ref = out if ref is None else ref
        for a, b in zip(ft.tree_util.tree_leaves(out), ft.tree_util.tree_leaves(ref)):
            np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)
        e_peak = peak(lambda: g(params, x))
        j_peak = peak(lambda: jg(params, x)) + temps
        print(f"{name:<24}{res.bytes / MiB:>9.2f}Mi{e_peak / MiB:>10.2f}Mi{temps / MiB:>9.2f}Mi"
              f"{j_peak / MiB:>8.2f}Mi{seconds(lambda: g(params, x)) * 1e3:>10.1f}"
              f"{seconds(lambda: jg(params, x)) * 1e3:>8.1f}")


def main():
    rng = np.random.default_rng(0)
    depth, width, batch = 8, 128, 64
    mlp = [(rng.standard_normal((width, width)).astype(np.float32) / np.sqrt(width),
            np.zeros(width, np.float32)) for _ in range(depth)]
    table(f"MLP: {depth} layers, width {width}, batch {batch}, f32 (name 'attn' = the "
          "product)", mlp_layer, mlp, rng.standard_normal((batch, width)).astype(np.float32),
          ["no checkpoint", "nothing_saveable", "everything_saveable", "dots_saveable"])
    blocks, b, t, d = 2, 4, 64, 32
    tf = [tuple(rng.standard_normal(s).astype(np.float32) / np.sqrt(s[0])
                for s in [(d, d)] * 4 + [(d, 4 * d), (4 * d, d)]) for _ in range(blocks)]
    table(f"Transformer: {blocks} blocks, batch {b}, sequence {t}, width {d}, f32",
          transformer_block, tf, rng.standard_normal((b, t, d)).astype(np.float32), POLICIES)


if __name__ == "__main__":
    main()
