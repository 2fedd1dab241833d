"""``python -m tests.fuzz --n 10000 [--seed S] [--timeout T] [--exclude a,b] [--known]``:
a long fuzzing campaign; prints the counts and one minimal repro per distinct failure."""
from __future__ import annotations

import argparse
import sys

from tests.fuzz import KNOWN_ISSUES
from tests.fuzz.campaign import run_campaign


def _progress(summary, result) -> None:
    if "signature" in result and summary.distinct[result["signature"]][0] == 1:
        print(f"new failure (seed {result['seed']}): {result['signature']}", file=sys.stderr,
              flush=True)
        print(f"\n--- seed {result['seed']}: {result['signature']}\n{result['repro']}", flush=True)
    if summary.programs % 100 == 0:
        print(f"  {summary.programs} programs, {summary.comparisons} comparisons, "
              f"{len(summary.distinct)} distinct failures", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="programs to check")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per program")
    parser.add_argument("--exclude", default="", help="comma-separated features to leave out")
    parser.add_argument("--known", action="store_true", help="also exclude KNOWN_ISSUES")
    args = parser.parse_args(argv)
    exclude = {e for e in args.exclude.split(",") if e}
    if args.known:
        exclude |= set(KNOWN_ISSUES)
    s = run_campaign(args.n, args.seed, exclude, args.timeout, _progress)
    print(f"programs {s.programs}  comparisons {s.comparisons}  mismatches {s.mismatches}  "
          f"crashes {s.crashes}  warnings {s.warnings}  hangs {s.hangs}  "
          f"distinct failures {len(s.distinct)}  ({s.seconds:.0f} s)")
    for sig, (count, repro) in sorted(s.distinct.items(), key=lambda kv: -kv[1][0]):
        print(f"\n=== {count} program(s): {sig}\n{repro}")
    return 1 if s.distinct else 0


if __name__ == "__main__":
    sys.exit(main())
