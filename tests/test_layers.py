"""The layer order inside ``functrans``, enforced from the import graph.

``LAYERS`` lists the layers bottom to top; a module imports only from its own layer or
the layers below (inside a layer the modules form an order too: the circle check of
``test_hygiene`` forbids cycles). Every module of ``functrans`` belongs to exactly one
layer, so a new module must be placed (a new module that matches no entry fails here),
and README's "Working on the code" lists the same layers with the same entries, so the
documented order is the checked one. Between packages: ``jaxpr_ir`` imports neither
``functrans`` nor ``backends``, and ``backends`` never imports ``functrans``.
"""
from __future__ import annotations

import re

from tests.test_hygiene import ROOT, all_imports, modules, _where

# bottom to top; entries are module names under ``functrans.`` (``x.*``: x's submodules,
# ``x*``: names starting with x); the most specific entry that matches a module wins
LAYERS = [
    ("foundation", ["errors", "config", "config_api", "tree_keys", "tree_def", "tree_util",
                    "tree_walk", "key_array", "tree",
                    "traceback_util", "numpy_warnings", "trace_events", "distributed",
                    "sharding", "compiler",
                    "cost"]),
    ("tracing", ["eager_values", "tracing", "api_util", "device", "dlpack", "array", "weak_values",
                 "numpy_dispatch",
                 "numpy._dtype_info", "shard_map_specs", "typing"]),
    ("the primitive class", ["primitives.primitive", "primitives.basic"]),
    ("transforms", ["transforms", "transforms.*"]),
    ("rule helpers", ["primitives.base"]),
    ("primitive families", ["primitives", "primitives.*", "precision"]),
    ("public transforms", ["autodiff", "batching", "jacobians", "custom_rules", "closures",
                           "custom_derivatives",
                           "remat", "ad_checkpoint", "stages", "jit_shared", "jit", "eager_jit",
                           "shard_map", "pmap",
                           "global_array", "test_util", "callbacks"]),
    ("numpy", ["numpy", "numpy.*"]),
    ("libraries", ["lax", "lax.*", "lax_*", "scipy", "scipy.*", "random", "random_*",
                   "nn", "nn.*", "example_libraries", "example_libraries.*", "experimental",
                   "experimental.*", "ops", "dtypes", "flatten_util", "image",
                   "custom_batching"]),
    ("tools", ["profiler", "profiler_*", "profile", "dump", "debug", "debugger", "to_dot"]),
    ("the package", ["functrans"]),
]


def _matches(entry: str, name: str) -> int:
    """How specifically ``entry`` names module ``name`` (0: not at all)."""
    if entry == name:
        return 3 * len(entry) + 2
    if entry.endswith(".*") and name.startswith(entry[:-1]):
        return 3 * len(entry) + 1
    if entry.endswith("*") and not entry.endswith(".*") and name.startswith(entry[:-1]):
        return 3 * len(entry)
    return 0


def layer_of(module: str) -> int | None:
    """The layer index of a ``functrans`` module (None: no entry names it)."""
    name = "functrans" if module == "functrans" else module.removeprefix("functrans.")
    best = max(((_matches(e, name), i) for i, (_, entries) in enumerate(LAYERS)
                for e in entries), default=(0, None))
    return best[1] if best[0] else None


def _ours(name: str) -> bool:
    return name == "functrans" or name.startswith("functrans.")


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in modules() if _ours(m) and layer_of(m) is None)
    assert not unplaced, ("modules in no layer (add them to LAYERS here and to README's "
                          "layer list):\n  " + "\n  ".join(unplaced))


def test_imports_go_down_the_layers():
    up = []
    for imp in all_imports():
        if _ours(imp.importer) and _ours(imp.target):
            lo, hi = layer_of(imp.importer), layer_of(imp.target)
            if lo is not None and hi is not None and hi > lo:
                up.append(f"{_where(imp)}: {imp.importer} ({LAYERS[lo][0]}) imports "
                          f"{imp.target} ({LAYERS[hi][0]})"
                          f"{' in a function' if imp.in_function else ''}")
    assert not up, f"{len(up)} imports up the layers:\n  " + "\n  ".join(up)


def test_packages_import_one_way():
    allowed = {"jaxpr_ir": {"jaxpr_ir"}, "backends": {"jaxpr_ir", "backends"},
               "functrans": {"jaxpr_ir", "backends", "functrans"}}
    bad = [f"{_where(imp)}: {imp.importer} imports {imp.target}" for imp in all_imports()
           if imp.target.partition(".")[0] not in allowed[imp.importer.partition(".")[0]]]
    assert not bad, "\n  ".join(["imports against the package order:"] + bad)


def _readme_layers() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("**Layers.**"):]
    section = section[:section.index("A module imports only from")]
    return re.findall(r"^\d+\. (.*(?:\n   .*)*)", section, re.M)


def test_the_readme_lists_the_checked_layers():
    items = _readme_layers()
    assert len(items) == len(LAYERS), (len(items), [name for name, _ in LAYERS])
    missing = []
    for (name, entries), item in zip(LAYERS, items):
        named = set(re.findall(r"`([^`]+)`", item))
        missing += [f"layer {name!r}: `{e}`" for e in entries if e not in named]
    assert not missing, "README's layer list lacks:\n  " + "\n  ".join(missing)


def _primitive_order() -> list[str]:
    """The module order ``primitives/base.py``'s docstring gives (items 1 and 2)."""
    doc = modules()["functrans.primitives.base"].tree.body[0].value.value
    text = doc[doc.index("1. ``primitive``"):doc.index("A rule written with")]
    names = [n for n in re.findall(r"``([a-z_]+)``", text)
             if n not in ("transforms", "ad_util")]
    names.insert(names.index("basic") + 1, "base")      # "then this module"
    return [f"functrans.primitives.{n}" for n in names]


def test_the_primitive_modules_import_in_the_documented_order():
    order = _primitive_order()
    family = sorted(m for m in modules()
                    if m.startswith("functrans.primitives.") and m not in order)
    assert not family, ("primitive modules missing from primitives/base.py's order:\n  "
                        + "\n  ".join(family))
    rank = {m: i for i, m in enumerate(order)}
    late = [f"{_where(imp)}: {imp.importer} imports {imp.target}, which comes after it"
            for imp in all_imports()
            if imp.importer in rank and imp.target in rank
            and rank[imp.target] > rank[imp.importer]]
    assert not late, "\n  ".join(["imports against primitives/base.py's order:"] + late)
