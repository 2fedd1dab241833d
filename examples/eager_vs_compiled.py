"""What compilation buys: the profiler's report on a small model, eager vs compiled.

Eagerly, every ``functrans.numpy`` call is one numpy operation that reads its inputs
from memory and writes a fresh temporary. ``jit`` traces the function once into a
jaxpr, simplifies it, and the CPU backend fuses chains of elementwise operations
(and the reductions that consume them) into single loops: fewer kernels, fewer
temporaries, fewer bytes through memory.

Run:  python examples/eager_vs_compiled.py
      python -m functrans.profile examples/eager_vs_compiled.py:model   (the same, as a CLI)
Look at: operations (eager) vs kernels (compiled), bytes moved, the per-call time,
and what one compile costs.
"""
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


def main():
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
