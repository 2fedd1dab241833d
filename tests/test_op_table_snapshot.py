"""tests/tools/op_table_snapshot.py, the before/after check of the op table's jaxprs and
LLVM IR: a snapshot holds what it says, and its diff tells renamed from changed."""
from __future__ import annotations

import json
import os
import sys

import functrans as ft
from tests.cases import all_cases

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "tools"))
import op_table_snapshot as snap  # noqa: E402  (a script, not a package module)


def test_a_row_snapshot_holds_its_jaxprs_and_llvm_ir():
    case = next(c for c in all_cases() if c.name == "sin")
    row = snap.snapshot_row(case, ft)
    assert "= sin a" in row["jaxpr"] and "cos a" in row["jvp_jaxpr"]
    assert row["llvm_ir"].startswith("; ---- LLVM IR before optimisation")
    assert "define" in row["llvm_ir"] and "after optimisation" not in row["llvm_ir"]


def test_names_are_renumbered_and_anything_else_is_a_difference(tmp_path, capsys):
    base = {"jaxpr": "{ lambda ; a:f64[3]. let\n    b:f64[3] = sin a\n  in (b,) }",
            "llvm_ir": 'define void @"k2"(ptr %".1") {\n  %".5" = load double, ptr %".1"\n}'}
    renamed = {"jaxpr": "{ lambda ; x:f64[3]. let\n    y:f64[3] = sin x\n  in (y,) }",
               "llvm_ir": base["llvm_ir"].replace("k2", "k7").replace('".5"', '".9"')}
    changed = {"jaxpr": base["jaxpr"].replace("sin", "cos"), "llvm_ir": base["llvm_ir"]}
    call = {"jaxpr": base["jaxpr"], "llvm_ir": base["llvm_ir"].replace("load double, ptr",
                                                                     "call double @ft_sin(ptr")}
    paths = []
    for i, rows in enumerate(({"r1": base, "r2": base, "r3": base, "r4": base},
                              {"r1": base, "r2": renamed, "r3": changed, "r4": call})):
        paths.append(str(tmp_path / f"{i}.json"))
        with open(paths[-1], "w") as f:
            json.dump({"meta": {}, "rows": rows}, f)
    counts = snap.compare(*paths, show=10)
    assert counts == {"identical": 1, "renamed": 1, "different": 2}
    out = capsys.readouterr().out
    assert "== r3 [jaxpr] differs" in out and "+    b:f64[3] = cos a" in out
    assert "== r4 [llvm_ir] differs" in out
