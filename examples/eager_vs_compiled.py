"""What compilation buys: the profiler's report on a small model, eager vs compiled.

Eagerly, every ``functrans.numpy`` call is one numpy operation that reads its inputs
from memory and writes a fresh temporary. ``jit`` traces the function once into a
jaxpr, simplifies it, and the CPU backend fuses chains of elementwise operations
(and the reductions that consume them) into single loops: fewer kernels, fewer
temporaries, fewer bytes through memory.

Run:  python examples/eager_vs_compiled.py
      python -m functrans.profile examples/eager_vs_compiled.py:model   (the same, as a CLI)
Look at: operations (eager) vs kernels (compiled), bytes moved, flops, peak memory, the
per-call time, what one compile costs, and the fusion plan of a transformer block (read
from the stage dump ``NNN_fusion_plan.txt``).
"""
import glob
import os
import tempfile

import numpy as np

import functrans as ft
import functrans.numpy as fnp

rng = np.random.default_rng(0)
W1 = rng.standard_normal((64, 256)) / 8.0
W2 = rng.standard_normal((256, 1)) / 16.0


def gelu(x):
    """tanh approximation of GELU: seven elementwise operations."""
    return 0.5 * x * (1.0 + fnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def model(x, y):
    """A two-layer network and its mean squared error."""
    h = gelu(x @ W1)
    pred = (h @ W2)[:, 0]
    return fnp.mean((pred - y) ** 2)


x = rng.standard_normal((512, 64))
y = rng.standard_normal(512)
model_args = (x, y)        # what ``python -m functrans.profile ...:model`` calls it with


def transformer_block(x, Wq, Wk, Wv, Wo, W1, W2):
    """Single-head attention over a batch of sequences, then a GELU MLP; residual adds."""
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    s = fnp.einsum("bqd,bkd->bqk", q, k) / np.float32(np.sqrt(q.shape[-1]))
    a = ft.nn.softmax(s, axis=-1)
    x = x + fnp.einsum("bqk,bkd->bqd", a, v) @ Wo
    return x + gelu(x @ W1) @ W2


def show_transformer_block():
    b, t, d = 4, 128, 64
    args = (rng.standard_normal((b, t, d)).astype(np.float32),) + tuple(
        (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32)
        for s in [(d, d)] * 4 + [(d, 4 * d), (4 * d, d)])
    print(f"== a transformer block: batch {b}, sequence {t}, width {d}, f32 ==")
    r = ft.profile(transformer_block, *args, repeats=10)
    with tempfile.TemporaryDirectory() as tmp:
        ft.config.update("dump_dir", tmp)
        try:
            ft.jit(transformer_block)(*args)
        finally:
            ft.config.update("dump_dir", None)
        plans = sorted(glob.glob(os.path.join(tmp, "*", "*_fusion_plan.txt")))
        if plans:
            print(f"\nthe fusion plan ({os.path.basename(plans[-1])}):")
            print(open(plans[-1]).read())
    return r


def main():
    show_transformer_block()
    print("== the loss of a 2-layer MLP on a batch of 512 ==")
    ft.profile(model, x, y, repeats=20)

    print("\n== a pure elementwise chain on 1M values (fusion's best case) ==")
    big = rng.standard_normal(1_000_000)
    r2 = ft.profile(gelu, big, repeats=10)

    c = r2["compiled"]
    if c is not None:
        e = r2["eager"]
        print(f"\ngelu: {e['operations']} eager operations became {c['kernels']} kernel(s); "
              f"memory traffic {e['bytes_moved'] / 2**20:.1f} MiB -> "
              f"{c['bytes_moved'] / 2**20:.1f} MiB")

    print("\n== what the compiled backend generated (first lines) ==")
    lowered = ft.jit(gelu, backend=c["backend"] if c else None).lower(big[:8])
    print(lowered.as_text())
    try:
        compiled = lowered.compile()
        print("\n".join(compiled.as_text().splitlines()[:12]))
        print("cost analysis:", compiled.cost_analysis())
    except Exception as e:   # the backend may be unavailable here: the report said so above
        print(f"(backend code unavailable: {type(e).__name__}: {e})")


if __name__ == "__main__":
    main()
