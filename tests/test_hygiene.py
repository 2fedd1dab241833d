"""The code's shape, checked from the source tree with ``ast`` (nothing is imported):
file and function sizes, private names kept private, and imports that go one way.

The limits are the project's (STYLE.md, issue 12 item 8): files of at most 600 lines,
functions of at most 80; no ``from m import _name`` of another module's private name;
no import circle between modules of ``functrans``, ``jaxpr_ir`` and ``backends``
(module-level and in-function imports both count: an import inside a function still
makes the modules depend on each other); at most 40 in-function imports between
project modules, each with a comment giving its reason on the same or the previous
line. Imports under ``if TYPE_CHECKING:`` never run and are left out.
"""
from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("functrans", "jaxpr_ir", "backends")
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_IN_FUNCTION_IMPORTS = 40


@dataclass(frozen=True)
class Module:
    name: str            # dotted: functrans.primitives.base
    path: Path
    is_package: bool     # an __init__.py
    source: str
    tree: ast.Module

    @property
    def where(self) -> str:
        return str(self.path.relative_to(ROOT))


@dataclass(frozen=True)
class Import:
    """One project module named by one import statement of another."""
    importer: str
    target: str          # the module imported from (or the module imported)
    names: tuple         # the names taken from it (empty for ``import a.b``)
    lineno: int
    end_lineno: int
    in_function: bool


@functools.lru_cache(maxsize=None)
def modules() -> dict[str, Module]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            source = path.read_text()
            out[".".join(parts)] = Module(".".join(parts), path, is_package, source,
                                          ast.parse(source, str(path)))
    return out


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    """The absolute name of the module a ``from ... import`` statement reads from."""
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _project_module(name: str) -> str | None:
    """The innermost project module that ``name`` is or lies in (None: not ours)."""
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
        or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports_of(module: Module) -> list[Import]:
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if _is_type_checking_block(child):
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    target = _project_module(alias.name)
                    if target and target != module.name:
                        found.append(Import(module.name, target, (), child.lineno,
                                            child.end_lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(module, child)
                by_target: dict = {}
                for alias in child.names:
                    # ``from pkg import sub`` imports the submodule pkg.sub
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in modules() else _project_module(base)
                    if target and target != module.name:
                        by_target.setdefault(target, []).append(alias.name)
                for target, names in by_target.items():
                    found.append(Import(module.name, target, tuple(names), child.lineno,
                                        child.end_lineno, in_function))
            visit(child, in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(module.tree, False)
    return found


@functools.lru_cache(maxsize=None)
def all_imports() -> tuple[Import, ...]:
    return tuple(i for m in modules().values() for i in _imports_of(m))


def import_cycles() -> list[tuple[list[str], list[Import]]]:
    """Per strongly connected component of the import graph (Tarjan's algorithm): its
    modules, and the shortest cycle of imports through its first module."""
    edges: dict = {}
    for imp in all_imports():
        edges.setdefault(imp.importer, {}).setdefault(imp.target, imp)
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def strongconnect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(sorted(comp))

    for v in sorted(modules()):
        if v not in index:
            strongconnect(v)
    return [(comp, _shortest_cycle(comp[0], set(comp), edges)) for comp in components]


def _shortest_cycle(start, members, edges) -> list[Import]:
    """Breadth-first from ``start`` back to itself, inside one component."""
    paths = {start: []}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w, imp in sorted(edges.get(v, {}).items()):
                if w == start:
                    return paths[v] + [imp]
                if w in members and w not in paths:
                    paths[w] = paths[v] + [imp]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{start} is in a component but on no cycle")


def _where(imp: Import) -> str:
    return f"{modules()[imp.importer].where}:{imp.lineno}"


_PRAGMA = re.compile(r"noqa(:\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*)?|type:\s*ignore\S*")


def _is_reason(comment: str) -> bool:
    """A comment that says something: not only a linter pragma (``# noqa: F401``)."""
    return bool(_PRAGMA.sub("", comment).strip(" #()[],.:;"))


def _has_reason_comment(imp: Import) -> bool:
    lines = modules()[imp.importer].source.splitlines()
    # an import statement holds no '#' in a string, so '#' starts its comment
    same = [line.partition("#")[2] for line in lines[imp.lineno - 1:imp.end_lineno]]
    previous = lines[imp.lineno - 2].strip() if imp.lineno >= 2 else ""
    return (any(_is_reason(c) for c in same)
            or previous.startswith("#") and _is_reason(previous))


# --------------------------------------------------------------------------- the checks

def test_files_are_at_most_600_lines():
    long = [f"{m.where}: {len(m.source.splitlines())} lines" for m in modules().values()
            if len(m.source.splitlines()) > MAX_FILE_LINES]
    assert not long, f"files over {MAX_FILE_LINES} lines:\n  " + "\n  ".join(long)


def test_functions_are_at_most_80_lines():
    long = []
    for m in modules().values():
        for node in ast.walk(m.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{m.where}:{node.lineno} {node.name}: {n} lines")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n  " + "\n  ".join(long)


def test_no_module_imports_another_modules_private_names():
    bad = []
    for imp in all_imports():
        # ``from . import _sub`` (a package's own private submodule) is fine
        private = [n for n in imp.names if n.startswith("_") and not n.startswith("__")
                   and imp.target != f"{imp.importer.rpartition('.')[0]}.{n}"
                   and imp.target.rpartition(".")[2] != n]
        if private:
            bad.append(f"{_where(imp)} imports {', '.join(private)} from {imp.target}")
    assert not bad, (f"{len(bad)} imports of another module's private names:\n  "
                     + "\n  ".join(bad))


def test_no_import_circles():
    cycles = import_cycles()
    report = []
    for members, cycle in cycles:
        chain = " -> ".join([cycle[0].importer] + [imp.target for imp in cycle])
        steps = "; ".join(f"{_where(imp)}{' (in a function)' if imp.in_function else ''}"
                          for imp in cycle)
        knot = (f"\n      one knot of {len(members)} modules: {', '.join(members)}"
                if len(members) > len(cycle) else "")
        report.append(f"{chain}\n      via {steps}{knot}")
    assert not cycles, f"{len(cycles)} import circles:\n  " + "\n  ".join(report)


def test_in_function_imports_are_few_and_give_their_reason():
    inner = sorted({(imp.importer, imp.lineno): imp for imp in all_imports()
                    if imp.in_function}.values(),
                   key=lambda imp: (modules()[imp.importer].where, imp.lineno))
    silent = [f"{_where(imp)} -> {imp.target}" for imp in inner if not _has_reason_comment(imp)]
    problems = []
    if len(inner) > MAX_IN_FUNCTION_IMPORTS:
        problems.append(f"{len(inner)} in-function imports between project modules "
                        f"(at most {MAX_IN_FUNCTION_IMPORTS})")
    if silent:
        problems.append(f"{len(silent)} without a comment giving the reason on the same or "
                        "the previous line:\n  " + "\n  ".join(silent))
    assert not problems, "\n".join(problems)


def test_the_import_graph_sees_every_kind_of_import():
    """The checks above are only as good as the graph: it must resolve relative and
    absolute imports, name a submodule imported by name, and see imports in functions
    (and not those under ``if TYPE_CHECKING:``)."""
    source = ("from typing import TYPE_CHECKING\n"
              "from .tracing import Tracer, _leaked\n"
              "import jaxpr_ir.core\n"
              "if TYPE_CHECKING:\n"
              "    from .jit import Jitted\n"
              "def f():\n"
              "    from . import numpy   # why: the reason\n")
    fake = Module("functrans.fake", ROOT / "functrans" / "fake.py", False, source,
                  ast.parse(source))
    got = [(i.target, i.names, i.in_function) for i in _imports_of(fake)]
    assert got == [("functrans.tracing", ("Tracer", "_leaked"), False),
                   ("jaxpr_ir.core", (), False),
                   ("functrans.numpy", ("numpy",), True)]
    assert ("functrans.jit", "functrans.tracing") in {(i.importer, i.target)
                                                      for i in all_imports()}


def test_a_reason_is_more_than_a_pragma():
    assert _is_reason(" noqa: F401  (registers every primitive)")
    assert _is_reason(" the backend imports this module: import on first use")
    assert not _is_reason(" noqa: F401")
    assert not _is_reason(" noqa: F401,E402")
    assert not _is_reason(" type: ignore[import]")
