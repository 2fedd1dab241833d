"""The steady-state workloads of two checkouts, side by side: did a change slow anything?

    python -m benchmarks.compare_trees run TREE OUT.json [MODULE ...]
    python -m benchmarks.compare_trees compare A1.json A2.json -- B1.json B2.json

``run`` imports ``functrans`` and the workload modules from ``TREE`` (a checkout, e.g.
``git worktree add /tmp/base REV``), times every candidate that is not a foreign
library (jax, autograd, numba are left out: they are the same in both trees) and writes
the medians. Run it alternately for the two trees (A B A B ...), each in its own process
with its own ``FUNCTRANS_CACHE_DIR``; ``compare`` prints, per functrans candidate, the
best median of B over the best of A (best-of-runs: the machine's noise only adds time).

>>> _ratio_rows({"w": {"functrans": 2.0, "numpy": 1.0}}, {"w": {"functrans": 3.0, "numpy": 1.0}})
[(1.5, 2.0, 3.0, 'w', 'functrans')]
"""
from __future__ import annotations

import importlib
import json
import sys

FOREIGN = ("jax", "autograd", "numba")
DEFAULT_MODULES = ("eager", "autodiff", "vmap", "jit_cpu", "control_flow")


def run(tree: str, out: str, modules: list[str], repeats: int = 9) -> dict:
    """Time the non-foreign candidates of ``modules`` from checkout ``tree``; write JSON."""
    sys.path.insert(0, tree)
    harness = importlib.import_module("benchmarks.harness")
    result = {}
    for name in modules:
        mod = importlib.import_module(f"benchmarks.{name}")
        for w in getattr(mod, "WORKLOADS", []):
            setup = w.setup
            w.setup = lambda setup=setup: {k: f for k, f in setup().items()
                                           if not any(t in k for t in FOREIGN)}
            try:
                r = harness.run_workload(w, repeats, 0.02)
            except Exception as e:  # a workload the older tree lacks: reported, skipped
                print(f"FAILED {name}: {w.name}: {type(e).__name__}: {e}", flush=True)
                continue
            result[f"{name}: {w.name}"] = r["medians"]
            print(name, w.name, {k: f"{v * 1e6:.1f} us" for k, v in r["medians"].items()},
                  flush=True)
    with open(out, "w") as fh:
        json.dump(result, fh, indent=1)
    return result


def _ratio_rows(a: dict, b: dict) -> list[tuple]:
    """(B/A, A seconds, B seconds, workload, candidate) for candidates in both runs."""
    rows = []
    for w, cands in a.items():
        for label, ta in cands.items():
            if label.startswith(("numpy", "copy", "python loop")):
                continue       # baselines that do not run functrans
            tb = b.get(w, {}).get(label)
            if tb is not None:
                rows.append((tb / ta, ta, tb, w, label))
    return rows


def compare(a_files: list[str], b_files: list[str]) -> list[tuple]:
    """Best-of-runs medians of B over A, printed one row per candidate."""
    def best(files):
        runs = [json.load(open(f)) for f in files]
        out = {}
        for r in runs:
            for w, cands in r.items():
                for k, v in cands.items():
                    out.setdefault(w, {})[k] = min(v, out.get(w, {}).get(k, v))
        return out
    rows = _ratio_rows(best(a_files), best(b_files))
    for ratio, ta, tb, w, label in rows:
        print(f"{ratio:6.3f}  {ta * 1e6:12.1f} us -> {tb * 1e6:12.1f} us  {w} [{label}]")
    return rows


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4:] or list(DEFAULT_MODULES))
    elif sys.argv[1] == "compare":
        i = sys.argv.index("--")
        compare(sys.argv[2:i], sys.argv[i + 1:])
    else:
        sys.exit(__doc__)
