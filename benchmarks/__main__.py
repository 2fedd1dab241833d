"""Run every workload module and write BENCHMARKS.md.

    python -m benchmarks                 # all workloads
    python -m benchmarks eager autodiff  # only these modules
    python -m benchmarks --quick         # fewer repetitions (smoke run)
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import os
import pkgutil
import sys

from .harness import fmt_time, machine_info, run_workload

HERE = os.path.dirname(os.path.abspath(__file__))


def _modules(selected):
    names = sorted(m.name for m in pkgutil.iter_modules([HERE])
                   if m.name not in ("harness", "__main__"))
    return [n for n in names if not selected or n in selected]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks")
    ap.add_argument("modules", nargs="*", help="workload modules to run (default: all)")
    ap.add_argument("--quick", action="store_true", help="3 repetitions, short batches")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "BENCHMARKS.md"))
    args = ap.parse_args(argv)
    repeats, min_time = (3, 0.005) if args.quick else (15, 0.02)
    rows = []
    for name in _modules(args.modules):
        mod = importlib.import_module(f"benchmarks.{name}")
        for w in getattr(mod, "WORKLOADS", []):
            print(f"[{name}] {w.name} ...", flush=True)
            try:
                r = run_workload(w, repeats, min_time)
            except Exception as e:  # a broken workload is reported, not hidden
                print(f"  FAILED: {type(e).__name__}: {e}", flush=True)
                rows.append((name, w, None, f"{type(e).__name__}: {e}"))
                continue
            for k in r["medians"]:
                print(f"  {k:<28} {fmt_time(r['medians'][k]):>12}  ×{r['ratios'][k]:.3f}", flush=True)
            rows.append((name, w, r, None))
    write_report(rows, args.out, args.quick)
    print(f"wrote {args.out}")


def write_report(rows, path, quick):
    info = machine_info()
    lines = ["# Benchmarks", "",
             f"Written by `python -m benchmarks{' --quick' if quick else ''}` on "
             f"{datetime.date.today().isoformat()}. Times are medians over interleaved "
             "repetitions; ratios are to the workload's baseline, measured in the same run. "
             "`met` (on the baseline row) says whether the workload's target held in this run; "
             "the machine is shared and noisy, so a ratio near its target can flip between runs.",
             "",
             "Machine: " + ", ".join(f"{k}: {v}" for k, v in info.items()), "",
             "| module | workload | candidate | median | ratio to baseline | target | met |",
             "|---|---|---|---|---|---|---|"]
    for name, w, r, err in rows:
        if err:
            lines.append(f"| {name} | {w.name} | — | failed: {err} | | {w.target} | no |")
            continue
        for k, med in r["medians"].items():
            base = " (baseline)" if k == w.baseline else ""
            met = "" if r["ok"] is None else ("yes" if r["ok"] else "no")
            lines.append(f"| {name} | {w.name} | {k}{base} | {fmt_time(med)} | "
                         f"{r['ratios'][k]:.3f} | {w.target} | {met if k == w.baseline else ''} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
