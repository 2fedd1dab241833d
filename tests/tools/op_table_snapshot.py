"""Snapshot the op table's compiled form, to check that a refactor changed nothing.

For every row of the shared table (``tests/cases``) that jits, ``dump`` records the
printed jaxpr of the row's function on its sample inputs, the printed jaxpr of its JVP
(rows with ``diff``: tangents equal to the differentiated float arguments) and the LLVM
IR the CPU backend emits for ``jit(fun, backend="cpu")`` (the module before
optimisation: the optimised one follows from it and the LLVM version). ``diff`` compares
two snapshots row by row: identical, equal up to names (jaxpr binders, LLVM value,
label and kernel names that are counters, renumbered in order of appearance), or
different (printed as a unified diff).

The library and the table are imported from the checkout on ``PYTHONPATH``, so one
copy of this script snapshots any commit (``git worktree add /tmp/old <commit>``)::

    PYTHONPATH=/tmp/old .venv/bin/python tests/tools/op_table_snapshot.py dump old.json
    PYTHONPATH=. .venv/bin/python tests/tools/op_table_snapshot.py dump new.json
    .venv/bin/python tests/tools/op_table_snapshot.py diff old.json new.json

``dump -k sin`` keeps the rows whose name contains ``sin``. The disk compile cache is
turned off (``FUNCTRANS_CACHE_DIR=off``) so every module is built by this process.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import traceback

FIELDS = ("jaxpr", "jvp_jaxpr", "llvm_ir")
_AFTER_OPT = "\n; ---- LLVM IR after optimisation"


def _diff_argnums(case, args):
    import numpy as np
    if case.diff_argnums is not None:
        return list(case.diff_argnums)
    return [i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f"]


def _jvp_of(case, args, ft):
    nums = _diff_argnums(case, args)

    def jvp_fun(*xs):
        def f(*d):
            full = list(xs)
            for i, v in zip(nums, d):
                full[i] = v
            return case.fun(*full)
        dx = tuple(xs[i] for i in nums)
        return ft.jvp(f, dx, dx)
    return jvp_fun


def _guard(what):
    try:
        return str(what())
    except Exception as e:      # a row that fails at one commit is recorded, not fatal
        return f"ERROR {type(e).__name__}: {e}".splitlines()[0]


def snapshot_row(case, ft):
    """The printed jaxprs and the CPU backend's LLVM IR (before optimisation) of one row."""
    args = case.make_args()
    row = {"jaxpr": _guard(lambda: ft.make_jaxpr(case.fun)(*args))}
    if case.diff and _diff_argnums(case, args):
        row["jvp_jaxpr"] = _guard(lambda: ft.make_jaxpr(_jvp_of(case, args, ft))(*args))
    text = _guard(lambda: ft.jit(case.fun, backend="cpu").lower(*args).compile().as_text())
    row["llvm_ir"] = text.split(_AFTER_OPT)[0]
    return row


def dump(out_path, select):
    import functrans as ft
    from tests.cases import all_cases
    rows = {}
    cases = [c for c in all_cases() if c.jit and select in c.name]
    for n, case in enumerate(cases):
        rows[case.name] = snapshot_row(case, ft)
        if n % 100 == 0:
            print(f"{n}/{len(cases)} {case.name}", file=sys.stderr, flush=True)
    meta = {"functrans": os.path.dirname(ft.__file__), "rows": len(rows)}
    with open(out_path, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=0, sort_keys=True)
    print(f"{len(rows)} rows from {meta['functrans']} -> {out_path}")


def _rename_binders(text):
    """jaxpr variables (``a:f64[3]``) renamed ``v0, v1, ...`` in order of appearance."""
    names = {}
    for m in re.finditer(r"(?<![\w.])([a-z_]+):(?=[a-z]+\d*\[)", text):
        names.setdefault(m.group(1), f"v{len(names)}")
    if not names:
        return text
    alt = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.sub(rf"(?<![\w.])({alt})(?![\w.])", lambda m: names[m.group(1)], text)


def _renumber_llvm(text):
    """LLVM names that are a counter (``%".5"``, ``@"k2"``, ``%"loop0"``) renumbered in
    order of appearance; named functions and intrinsics (``@ft_lib_sin_f64``,
    ``@llvm.fabs.f64``) are kept, so a changed call is still a difference."""
    names = {}

    def sub(m):
        sigil, name = m.group(1), m.group(2)
        if not re.fullmatch(r"\.?[A-Za-z]{0,8}\d+", name):
            return sigil + name
        return names.setdefault((sigil, name), f"{sigil}n{len(names)}")
    text = re.sub(r'([%@])"([^"]*)"', r"\1\2", text)
    return re.sub(r"([%@])([\w.$-]+)", sub, text)


def normalise(field, text):
    """``text`` with its names renumbered in order of appearance: jaxpr binders, LLVM
    counter names (see ``_renumber_llvm``)."""
    return _renumber_llvm(text) if field == "llvm_ir" else _rename_binders(text)


def compare(a_path, b_path, show):
    a, b = (json.load(open(p))["rows"] for p in (a_path, b_path))
    both = sorted(set(a) & set(b))
    counts = {"identical": 0, "renamed": 0, "different": 0}
    for name in both:
        kind = "identical"
        for field in FIELDS:
            x, y = a[name].get(field), b[name].get(field)
            if x == y:
                continue
            if x is not None and y is not None and normalise(field, x) == normalise(field, y):
                kind = "renamed" if kind == "identical" else kind
                continue
            kind = "different"
            print(f"== {name} [{field}] differs")
            if show:
                lines = difflib.unified_diff((x or "").splitlines(), (y or "").splitlines(),
                                             a_path, b_path, lineterm="", n=1)
                print("\n".join(list(lines)[:show]))
        counts[kind] += 1
    print(f"rows compared: {len(both)}; only in {a_path}: {len(set(a) - set(b))}; "
          f"only in {b_path}: {len(set(b) - set(a))}")
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    return counts


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("-k", default="", help="keep the rows whose name contains this")
    c = sub.add_parser("diff")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--lines", type=int, default=40, help="diff lines shown per field")
    args = p.parse_args(argv)
    if args.cmd == "dump":
        os.environ["FUNCTRANS_CACHE_DIR"] = "off"     # before functrans is imported
        dump(args.out, args.k)
    else:
        compare(args.a, args.b, args.lines)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        traceback.print_exc(limit=0)
