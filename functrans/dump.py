"""Two observers of the compile path (``functrans.compiler``): the compile log and
stage dumps. While neither option is on, a compile runs none of this.

*Compile log* (``FUNCTRANS_LOG_COMPILES=1`` or ``ft.config.update("log_compiles", True)``):
one WARNING on the ``functrans`` logger per compile, with its reason: the first call,
which argument's shape / dtype / weak type changed from what to what, which static
argument's value changed, or a changed argument structure.

*Stage dumps* (``FUNCTRANS_DUMP=DIR`` or ``config.update("dump_dir", DIR)``): each compile
writes a subfolder ``DIR/NNN_<function>/`` whose files sort in pipeline order::

    000_reason.txt              why it was compiled, the argument types
    001_traced.jaxpr            the jaxpr after tracing (transforms inside the function
                                have already run: grad, vmap, ... are part of it)
    002_inline_calls.jaxpr ...  after each optimisation pass of jaxpr_ir.passes, one by one
    00N_fusion_plan.txt         kernels and host steps (native backends)
    00N_llvm_before_opt.ll      the backend's code before and after LLVM's optimisation
    00N_llvm_after_opt.ll
    00N_cost_analysis.txt

Bodies compiled for an inner ``jit`` under a transform (``grad(jit(f))`` compiles
``jvp_known(f)`` and ``transpose(jvp(f))``) are dumped too: that is where the
transforms' output jaxprs appear.

>>> explain_miss(None, ((), (), ()), lambda i: f"arg {i}")
['first call']
"""
from __future__ import annotations

import inspect
import logging
import os
import re
import threading

from jaxpr_ir import Var
from jaxpr_ir.printer import _Names, _pp
from . import config
from .compiler import CompileHook, add_hook
from .tree_util import tree_flatten

__all__ = ["explain_miss", "LogAndDump"]

log = logging.getLogger("functrans")

_lock = threading.Lock()
_seq = [None]


# ------------------------------------------------------------------ compile log

def _fmt_aval(shape, dtype, weak):
    return f"{dtype}{list(shape)}{' (weak)' if weak else ''}"


def explain_miss(prev_key, key, leaf_name, static_name=None) -> list:
    """Why ``key`` missed, compared with the previous compile's ``prev_key``.

    Keys are jit's ``(in_tree, ((shape, dtype, weak_type), ...), ((static i or name,
    value), ...))``; ``leaf_name(i)`` names flat argument i, ``static_name(k)`` a static
    argument's position or keyword.
    """
    if prev_key is None:
        return ["first call"]
    (tree0, leaves0, static0), (tree1, leaves1, static1) = prev_key, key
    out = []
    if tree0 != tree1:
        out.append(f"the argument structure changed from {tree0} to {tree1}")
    else:
        for i, (a, b) in enumerate(zip(leaves0, leaves1)):
            what = []
            if a[0] != b[0]:
                what.append(f"shape {a[0]} -> {b[0]}")
            if a[1] != b[1]:
                what.append(f"dtype {a[1]} -> {b[1]}")
            if a[2] != b[2]:
                what.append(f"weak type {a[2]} -> {b[2]}")
            if what:
                out.append(f"{leaf_name(i)}: {', '.join(what)} "
                           f"(was {_fmt_aval(*a)}, now {_fmt_aval(*b)})")
    s0, s1 = dict(static0), dict(static1)
    for k in sorted(set(s0) | set(s1), key=str):
        if s0.get(k, "<absent>") != s1.get(k, "<absent>"):
            label = static_name(k) if static_name else f"static argument {k!r}"
            out.append(f"{label} changed from {s0.get(k, '<absent>')!r:.60} to "
                       f"{s1.get(k, '<absent>')!r:.60}")
    if not out:
        out.append("an earlier compile for these types was dropped from the cache "
                   "(e.g. a debug_nans change cleared it)")
    return out


def _leaf_namer(cause):
    """Two namers for a jit call (a ``compiler.JitCause``): flat leaf index -> "argument
    'x'" / "argument 'p' leaf 2", and static key -> "static argument 'n' (position 1)"."""
    dyn_args, dyn_kwargs = cause.dyn_args, cause.dyn_kwargs
    try:
        params = [p.name for p in inspect.signature(cause.fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    nargs = len(cause.args)
    static = {a % nargs for a in cause.static_argnums if -nargs <= a < nargs}
    positions = [i for i in range(nargs) if i not in static]
    names = []
    for j, a in enumerate(dyn_args):
        pos = positions[j] if j < len(positions) else j
        label = f"argument '{params[pos]}'" if pos < len(params) else f"argument {pos}"
        n = len(tree_flatten(a)[0])
        names.extend([label] if n == 1 else [f"{label} leaf {k}" for k in range(n)])
    for k in sorted(dyn_kwargs):   # tree_flatten orders dict keys by sorted key
        n = len(tree_flatten(dyn_kwargs[k])[0])
        label = f"keyword argument '{k}'"
        names.extend([label] if n == 1 else [f"{label} leaf {i}" for i in range(n)])

    def static_name(k):
        if isinstance(k, str):
            return f"static argument '{k}'"
        return (f"static argument '{params[k]}' (position {k})" if k < len(params)
                else f"static argument {k}")
    return (lambda i: names[i] if i < len(names) else f"argument leaf {i}"), static_name


# ------------------------------------------------------------------ dumps

def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.()-]+", "_", name)[:80] or "fun"


def _new_folder(root: str, name: str) -> str:
    with _lock:
        os.makedirs(root, exist_ok=True)
        if _seq[0] is None or _seq[0][0] != root:
            nums = [int(m.group(1)) for f in os.listdir(root)
                    if (m := re.match(r"(\d+)_", f))]
            _seq[0] = [root, max(nums, default=0)]
        _seq[0][1] += 1
        path = os.path.join(root, f"{_seq[0][1]:03d}_{_safe(name)}")
    os.makedirs(path, exist_ok=True)
    return path


class _Dumper:
    """Writes numbered stage files into one folder (or does nothing without one)."""

    def __init__(self, root, name):
        self.dir = _new_folder(root, name) if root else None
        self.n = 0

    def write(self, stem, text, ext="jaxpr", number=True):
        if self.dir is None:
            return
        fname = f"{self.n:03d}_{stem}.{ext}" if number else f"{stem}.{ext}"
        self.n += number
        with open(os.path.join(self.dir, fname), "w") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")


def _is_kernel(step) -> bool:
    # a fused kernel of backends.fusion (read by its class name: a tool does not import
    # a backend's internals)
    return type(step).__name__ == "Kernel"


def _describe_plan(closed, plan) -> str:
    names = _Names()
    _pp(closed.jaxpr, names, 0)

    def nm(x):
        # the backend may plan a rewritten copy of the jaxpr (decompositions, casts): a
        # var the jaxpr files never show gets a fresh name here, with its type
        if isinstance(x, Var) and x not in names.names:
            return f"{names.define(x)}:{x.aval.str_short()}"
        return names.use(x)

    lines = [f"{len(plan.steps)} steps: "
             f"{sum(_is_kernel(s) for s in plan.steps)} fused kernels, "
             f"{sum(type(s).__name__ == 'HostStep' for s in plan.steps)} host steps, "
             f"{sum(type(s).__name__ not in ('HostStep', 'Kernel') for s in plan.steps)} "
             "other native steps; "
             f"{len(plan.views)} view equations folded into strided reads "
             "(names as in the jaxpr files; name:type for values only the backend's "
             "rewritten jaxpr has)", ""]
    for i, s in enumerate(plan.steps):
        if _is_kernel(s):
            row = s.phases is not None
            lines.append(f"step {i}: {'row kernel' if row else 'kernel'} over loop shape "
                         f"{list(s.shape)}" + (f" (rows {list(s.shape[:s.outer])})" if row else "")
                         + f", {len(s.eqns)} equations; reads "
                         f"{' '.join(map(nm, s.inputs)) or '-'}; writes "
                         f"{' '.join(map(nm, s.outputs)) or '-'}")
            # a row kernel's phases run in order for each row (inner: over the row's
            # reduced dimensions; row: once per row)
            groups = [(f"  phase {k} ({p.kind}):", p.eqns) for k, p in enumerate(s.phases)] \
                if row else [(None, s.eqns)]
            for title, eqns in groups:
                if title:
                    lines.append(title)
                for e in eqns:
                    outs = " ".join(nm(v) for v in e.outvars)
                    lines.append(f"    {outs} = {e.primitive.name} "
                                 f"{' '.join(nm(x) for x in e.inputs)}")
        else:
            e = s.eqn
            kind = ("host step (numpy)" if type(s).__name__ == "HostStep"
                    else f"native {type(s).__name__}")
            lines.append(f"step {i}: {kind}: "
                         f"{' '.join(nm(v) for v in e.outvars) or '_'} = {e.primitive.name} "
                         f"{' '.join(nm(x) for x in e.inputs)}")
    return "\n".join(lines)


def _dump_backend(d: _Dumper, closed, exe, backend):
    plan = getattr(exe, "plan", None)
    if plan is not None:
        d.write("fusion_plan", _describe_plan(closed, plan), "txt")
    as_text = getattr(exe, "as_text", None)
    if as_text is not None:
        text = as_text()
        marker = "; ---- LLVM IR after optimisation"
        if marker in text:
            before, after = text.split(marker, 1)
            d.write("llvm_before_opt", before.replace(
                "; ---- LLVM IR before optimisation\n", ""), "ll")
            d.write("llvm_after_opt", after.split("\n", 1)[1] if "\n" in after else after, "ll")
        else:
            d.write("backend_code", text, "ll" if backend == "cpu" else "txt")
    else:
        d.write("backend", f"backend {backend!r}: the interpreter runs the last jaxpr above "
                "equation by equation; there is no generated code", "txt")
    cost = getattr(exe, "cost_analysis", None)
    if cost is not None:
        try:
            d.write("cost_analysis", "\n".join(f"{k}: {v}" for k, v in cost().items()), "txt")
        except Exception as e:  # a diagnostic must not break the compile
            d.write("cost_analysis", f"cost_analysis failed: {e!r}", "txt")


class LogAndDump(CompileHook):
    """The compile log and the stage dumps, as one observer of the compile path (the log
    line names the dump folder)."""

    def active(self) -> bool:
        return bool(config.read("log_compiles") or config.read("dump_dir"))

    def start(self, c) -> None:
        reason = None
        if c.cause is not None:
            reason = explain_miss(c.cause.prev_key, c.cause.key, *_leaf_namer(c.cause))
        d = _Dumper(config.read("dump_dir"), c.name)
        c.notes[self] = (d, reason)
        if d.dir is not None:
            head = [f"function: {c.name}", f"backend: {c.backend}"]
            if reason:
                head.append("compiled because: " + "; ".join(reason))
            head.append("argument types: " + ", ".join(a.str_short() for a in c.traced.in_avals))
            d.write("reason", "\n".join(head), "txt")
            d.write("traced", str(c.traced))

    def stage(self, c, pass_name, jaxpr) -> None:
        c.notes[self][0].write(pass_name, str(jaxpr))

    def compiled(self, c, exe):
        d, reason = c.notes[self]
        if d.dir is not None:
            _dump_backend(d, c.optimized, exe, c.backend)
        if config.read("log_compiles"):
            why = "; ".join(reason) if reason else "a transform of an inner jit needs this body"
            log.warning("functrans: compiled %s for backend %r in %.1f ms because: %s%s",
                        c.name, c.backend, c.seconds * 1e3, why,
                        f" (stages in {d.dir})" if d.dir else "")
        return exe


add_hook(LogAndDump())
