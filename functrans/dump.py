"""What a jit compile does when a tool is on: the compile log, stage dumps, NaN checks.

``jit`` calls ``compile_instrumented`` on a cache miss while ``config.tools_active()``;
otherwise it compiles as usual and none of this runs.

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
import time
import weakref

from . import config

__all__ = ["compile_instrumented", "compile_body", "explain_miss", "PASSES"]

log = logging.getLogger("functrans")

# the order of jaxpr_ir.passes.simplify: dce(cse(fold_constants(inline_calls(j))))
PASSES = ("inline_calls", "fold_constants", "cse", "dce")

_jitted = weakref.WeakSet()   # every Jitted that compiled: debug_nans clears their caches
_lock = threading.Lock()
_seq = [None]


def _clear_caches(name, old, new):
    if name == "debug_nans":
        for j in list(_jitted):
            j._cache.clear()
        try:
            from .primitives import call
            call._compiled.clear()
        except (ImportError, AttributeError):
            pass


config._listeners.append(_clear_caches)


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


def _leaf_namer(jitted, args, kwargs):
    """Two namers: flat leaf index -> "argument 'x'" / "argument 'p' leaf 2", and static
    key -> "static argument 'n' (position 1)"."""
    from .jit import _split_static
    from .tree_util import tree_flatten
    dyn_args, dyn_kwargs, _, _ = _split_static(jitted.fun, args, kwargs,
                                               jitted.static_argnums, jitted.static_argnames)
    try:
        params = [p.name for p in inspect.signature(jitted.fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    nargs = len(args)
    static = {a % nargs for a in jitted.static_argnums if -nargs <= a < nargs}
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


def _describe_plan(closed, plan) -> str:
    from jaxpr_ir.printer import _Names, _pp
    from backends.fusion import Kernel
    names = _Names()
    _pp(closed.jaxpr, names, 0)

    def nm(x):
        return names.use(x)

    lines = [f"{len(plan.steps)} steps: "
             f"{sum(isinstance(s, Kernel) for s in plan.steps)} fused kernels, "
             f"{sum(type(s).__name__ == 'HostStep' for s in plan.steps)} host steps, "
             f"{sum(type(s).__name__ not in ('HostStep', 'Kernel') for s in plan.steps)} "
             "other native steps; "
             f"{len(plan.views)} view equations folded into strided reads "
             "(names as in the jaxpr files)", ""]
    for i, s in enumerate(plan.steps):
        if isinstance(s, Kernel):
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


def _optimise_dumping(closed, d: _Dumper):
    """jit's optimisation, pass by pass, each result dumped; returns what jit compiles."""
    from jaxpr_ir import ClosedJaxpr
    from jaxpr_ir import passes
    from .jit import _optimize
    j = closed
    for name in PASSES:
        fn = getattr(passes, name, None)
        if fn is None:
            continue
        j = fn(j)
        d.write(name, str(j))
    final = _optimize(closed)
    if str(final) != str(j):   # the pass list changed under us: show what is compiled
        d.write("optimized", str(final))
    return final if isinstance(final, ClosedJaxpr) else ClosedJaxpr(final, closed.consts)


def _backend_name(backend):
    from backends import default_backend
    return backend or default_backend()


def compile_body(closed, backend, name, reason=None):
    """Optimise and compile ``closed`` as jit does, with the tools that are on; returns
    the executable (NaN-checked under debug_nans)."""
    from backends import get_backend
    bname = _backend_name(backend)
    d = _Dumper(config.read("dump_dir"), name)
    if d.dir is not None:
        head = [f"function: {name}", f"backend: {bname}"]
        if reason:
            head.append("compiled because: " + "; ".join(reason))
        head.append("argument types: " + ", ".join(a.str_short() for a in closed.in_avals))
        d.write("reason", "\n".join(head), "txt")
        d.write("traced", str(closed))
        opt = _optimise_dumping(closed, d)
    else:
        from .jit import _optimize
        opt = _optimize(closed)
    t0 = time.perf_counter()
    exe = get_backend(backend).compile(opt)
    dt = time.perf_counter() - t0
    if d.dir is not None:
        _dump_backend(d, opt, exe, bname)
    if config.read("log_compiles"):
        why = "; ".join(reason) if reason else "a transform of an inner jit needs this body"
        log.warning("functrans: compiled %s for backend %r in %.1f ms because: %s%s",
                    name, bname, dt * 1e3, why,
                    f" (stages in {d.dir})" if d.dir else "")
    if config.read("debug_nans"):
        from .debug import nan_checked
        exe = nan_checked(exe, opt, name)
    return exe


def compile_instrumented(jitted, closed, key, args, kwargs):
    """jit's cache-miss compile with the tools on (see the module docstring)."""
    _jitted.add(jitted)
    reason = None
    if config.read("log_compiles") or config.read("dump_dir"):
        reason = explain_miss(getattr(jitted, "_last_key", None), key,
                              *_leaf_namer(jitted, args, kwargs))
    name = f"jit({getattr(jitted.fun, '__name__', 'fun')})"
    return compile_body(closed, jitted.backend, name, reason)


def note_compile(jitted, key):
    """Called by jit after every compile: remember the key (for the next compile log)
    and the function (so a debug_nans change can clear its cache)."""
    jitted._last_key = key
    _jitted.add(jitted)
