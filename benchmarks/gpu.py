"""GPU benchmark of the CUDA backend (a standalone script, not a harness workload).

    python -m benchmarks.gpu            # needs a CUDA GPU; about 1-3 minutes
    python -m benchmarks.gpu --markdown gpu.md   # also a section to paste into BENCHMARKS.md

Runs fused elementwise (2^26 float32), logsumexp over rows (2^26 float32), matmul
4096^2 float32 and an MLP training step with ``jit(backend="cuda")``, inputs placed
with ``ft.device_put`` so no host copies are timed, and reports GB/s and TFLOP/s next
to the device's peak (queried from the driver: memory clock x bus width, SMs x FP32
lanes x clock), then the same functions through jax when jax with a GPU is installed.
Without a GPU (or on the simulator) it exits with status 2 and says why.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import functrans as ft
import functrans.numpy as fnp

WORKLOADS = []   # not a harness module: `python -m benchmarks` skips it

_FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
               (9, 0): 128, (10, 0): 128, (12, 0): 128}


def _gpu_or_exit():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        sys.exit("benchmarks/gpu.py: NUMBA_ENABLE_CUDASIM=1 selects the CUDA simulator, which "
                 "cannot be timed; unset it and run on a machine with a CUDA GPU")
    try:
        from numba import cuda
    except ImportError as e:
        sys.exit(f"benchmarks/gpu.py: numba-cuda is not installed ({e}); "
                 "pip install -e '.[cuda]'")
    if not cuda.is_available():
        print("benchmarks/gpu.py: no CUDA GPU is available here (numba.cuda.is_available() "
              "is False); run it on a machine with an NVIDIA GPU and driver", file=sys.stderr)
        sys.exit(2)
    return cuda


def device_peaks(cuda):
    """(name, peak memory GB/s or None, peak FP32 TFLOP/s or None) from the driver."""
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)

    def attr(a):
        try:
            return getattr(dev, a)
        except Exception:   # some attributes are gone from newer drivers
            return None
    mem_khz, bus = attr("MEMORY_CLOCK_RATE"), attr("GLOBAL_MEMORY_BUS_WIDTH")
    clk_khz, sms = attr("CLOCK_RATE"), attr("MULTIPROCESSOR_COUNT")
    gbs = 2 * mem_khz * 1e3 * bus / 8 / 1e9 if mem_khz and bus else None   # DDR: 2 per clock
    lanes = _FP32_LANES.get(tuple(dev.compute_capability), 64)
    tflops = sms * lanes * 2 * clk_khz * 1e3 / 1e12 if clk_khz and sms else None
    return name, gbs, tflops


def _time(fn, sync, reps):
    fn()
    sync()                           # compile and warm up
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def fused(x, y):
    return fnp.tanh(x) * y + fnp.exp(-x * x) * 0.5


def logsumexp(x):
    m = fnp.max(x, axis=1, keepdims=True)
    return fnp.log(fnp.sum(fnp.exp(x - m), axis=1)) + m[:, 0]


def matmul(a, b):
    return a @ b


def mlp_step(w1, w2, w3, x, y):
    def loss(ws):
        a, b, c = ws
        h = fnp.tanh(x @ a)
        h = fnp.tanh(h @ b)
        return fnp.mean((h @ c - y) ** 2)
    g = ft.grad(loss)((w1, w2, w3))
    return tuple(w - 0.01 * gw for w, gw in zip((w1, w2, w3), g))


def _workloads():
    """label -> (function, [(shape, dtype)] of its arguments, bytes moved, flops)."""
    n, rows, f32 = 1 << 26, 1 << 13, np.float32
    B, D, H, O = 2048, 1024, 4096, 16
    mlp_flops = 3 * 2 * B * (D * H + H * H + H * O)          # forward + two backward GEMMs
    return {
        "fused elementwise 2^26 f32": (fused, [((n,), f32), ((n,), f32)], 3 * n * 4, 0),
        "logsumexp (8192, 8192) f32": (logsumexp, [((rows, n // rows), f32)], n * 4, 0),
        "matmul 4096^2 f32": (matmul, [((4096, 4096), f32)] * 2, 3 * 4096 ** 2 * 4,
                              2 * 4096 ** 3),
        f"MLP step ({B}x{D} -> {H} -> {H} -> {O}) f32": (
            mlp_step, [((D, H), f32), ((H, H), f32), ((H, O), f32), ((B, D), f32),
                       ((B, O), f32)], 0, mlp_flops),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--no-jax", action="store_true")
    p.add_argument("--markdown", metavar="FILE",
                   help="also write the results as a Markdown section for BENCHMARKS.md")
    args = p.parse_args(argv)
    cuda = _gpu_or_exit()
    name, peak_gbs, peak_tf = device_peaks(cuda)
    print(f"device: {name}; peak memory bandwidth "
          f"{peak_gbs:.0f} GB/s; peak FP32 {peak_tf:.1f} TFLOP/s" if peak_gbs and peak_tf
          else f"device: {name}; peaks not reported by the driver")
    jax = None
    if not args.no_jax:
        try:
            import jax
            import jax.numpy as jnp
            if not any(d.platform == "gpu" for d in jax.devices()):
                jax = None
        except Exception:
            jax = None
    rng = np.random.default_rng(0)
    rows = []
    for label, (fn, specs, nbytes, flops) in _workloads().items():
        host = [(rng.standard_normal(s) * 0.1).astype(d) for s, d in specs]
        dev = [ft.device_put(h, "cuda") for h in host]
        jf = ft.jit(fn, backend="cuda")
        t = _time(lambda: jf(*dev), cuda.synchronize, args.reps)
        row = {"workload": label, "functrans": t}
        if jax is not None:
            jfn = jax.jit(_jaxify(fn, jnp, jax))
            jargs = [jax.device_put(h) for h in host]
            row["jax"] = _time(lambda: jax.block_until_ready(jfn(*jargs)), lambda: None,
                               args.reps)
        row["GB/s"] = nbytes / t / 1e9 if nbytes else None
        row["TFLOP/s"] = flops / t / 1e12 if flops else None
        rows.append(row)
        _print_row(row, peak_gbs, peak_tf)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown_report(name, peak_gbs, peak_tf, rows))
    return rows


# the targets on a real GPU: workload label prefix -> (text, check(row, peaks))
TARGETS = {
    "fused elementwise": ("≥ 70% of peak memory bandwidth",
                          lambda r, gbs, tf: None if not gbs else r["GB/s"] >= 0.7 * gbs),
    "matmul": ("≥ 30% of peak FP32 (tiled kernel, no cuBLAS)",
               lambda r, gbs, tf: None if not tf else r["TFLOP/s"] >= 0.3 * tf),
    "MLP step": ("≤ 2× jax on the same GPU",
                 lambda r, gbs, tf: None if "jax" not in r else r["functrans"] <= 2 * r["jax"]),
}


def markdown_report(name, peak_gbs, peak_tf, rows):
    """A Markdown section with the device, its peaks and one row per workload (target and
    whether it held), ready to paste into BENCHMARKS.md.

    >>> row = {"workload": "matmul 4096^2 f32", "functrans": 0.01, "GB/s": None,
    ...        "TFLOP/s": 13.7, "jax": 0.005}
    >>> print(markdown_report("GPU X", 4000.0, 60.0, [row]).splitlines()[-1])
    | matmul 4096^2 f32 | 10.000 ms | - | 13.70 (23%) | 5.000 ms | 2.00 | ≥ 30% of peak FP32 (tiled kernel, no cuBLAS) | no |
    """
    peaks = (f"peak memory bandwidth {peak_gbs:.0f} GB/s, peak FP32 {peak_tf:.1f} TFLOP/s"
             if peak_gbs and peak_tf else "peaks not reported by the driver")
    lines = [f"## GPU: {name}", "",
             f"`python -m benchmarks.gpu` ({peaks}); medians, inputs already on the device.",
             "",
             "| workload | functrans | GB/s (% of peak) | TFLOP/s (% of peak) | jax | "
             "functrans / jax | target | met |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gbs = (f"{r['GB/s']:.1f}" + (f" ({100 * r['GB/s'] / peak_gbs:.0f}%)" if peak_gbs else "")
               if r.get("GB/s") else "-")
        tf = (f"{r['TFLOP/s']:.2f}" + (f" ({100 * r['TFLOP/s'] / peak_tf:.0f}%)" if peak_tf else "")
              if r.get("TFLOP/s") else "-")
        jx = f"{r['jax'] * 1e3:.3f} ms" if "jax" in r else "-"
        ratio = f"{r['functrans'] / r['jax']:.2f}" if "jax" in r else "-"
        target, met = "", ""
        for prefix, (text, check) in TARGETS.items():
            if r["workload"].startswith(prefix):
                ok = check(r, peak_gbs, peak_tf)
                target, met = text, "" if ok is None else ("yes" if ok else "no")
        lines.append(f"| {r['workload']} | {r['functrans'] * 1e3:.3f} ms | {gbs} | {tf} | "
                     f"{jx} | {ratio} | {target} | {met} |")
    return "\n".join(lines) + "\n"


def _jaxify(fn, jnp, jax):
    """The same workload written against jax (the functrans code uses fnp/ft names)."""
    import types
    ns = types.SimpleNamespace(grad=jax.grad)
    g = dict(fn.__globals__)
    g.update(fnp=jnp, ft=ns)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def _print_row(row, peak_gbs, peak_tf):
    parts = [f"{row['workload']:<48} {row['functrans'] * 1e3:9.3f} ms"]
    if row["GB/s"]:
        pct = f" ({100 * row['GB/s'] / peak_gbs:.0f}% of peak)" if peak_gbs else ""
        parts.append(f"{row['GB/s']:8.1f} GB/s{pct}")
    if row["TFLOP/s"]:
        pct = f" ({100 * row['TFLOP/s'] / peak_tf:.0f}% of peak)" if peak_tf else ""
        parts.append(f"{row['TFLOP/s']:6.2f} TFLOP/s{pct}")
    if "jax" in row:
        parts.append(f"jax {row['jax'] * 1e3:.3f} ms (functrans/jax = "
                     f"{row['functrans'] / row['jax']:.2f}x)")
    print("  ".join(parts), flush=True)


if __name__ == "__main__":
    main()
