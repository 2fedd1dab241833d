"""Debugging inside transforms: ``ft.debug.print`` and the ``debug_nans`` check.

``print(fmt, *args, **kwargs)`` is a primitive (``debug_print``) with no outputs and
``has_effects=True``, so dead-code elimination and CSE keep it; it is never run while
tracing, only when the program runs: at once eagerly, on every call of a jitted
function, once per lane under ``vmap`` (its batching rule adds a lane axis) and once,
on primal values, under ``grad``/``jvp`` (its JVP rule re-binds it on the primals).

>>> import functrans as ft, functrans.numpy as fnp
>>> ft.debug.print("x = {x}", x=fnp.arange(3))
x = [0 1 2]
>>> _ = ft.jit(lambda x: (ft.debug.print("in jit: {}", x), x + 1)[1])(1.0)
in jit: 1.0
>>> _ = ft.vmap(lambda x: (ft.debug.print("lane {}", x), x)[1])(fnp.arange(2))
lane 0
lane 1
"""
from __future__ import annotations

import builtins
import gc
import string
import weakref

import numpy as np

from jaxpr_ir import Literal, dtype_kind

from backends import interpret
from jaxpr_ir.printer import VarNames, format_jaxpr, format_param
from . import config
from .api_util import as_array
from .callbacks import debug_callback as callback
from .debugger import (breakpoint, inspect_array_sharding, log,  # noqa: F401,A004
                       visualize_array_sharding, visualize_sharding)
from .compiler import CompileHook, add_hook, clear_compiled
from .errors import UnexpectedTracerError
from .primitives.base import EffectPrimitive, move_batch_axis, not_mapped_size
from .tracing import EAGER_CHECK, Tracer
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["print", "callback", "debug_print_p", "find_nan_source", "breakpoint", "log",
           "visualize_array_sharding", "visualize_sharding", "inspect_array_sharding"]

debug_print_p = EffectPrimitive("debug_print", multiple_results=True)
debug_print_p.defer_concrete = True   # tracing with known values must not print early

# The (args, kwargs) structures met so far; a param refers to one by index, so params
# stay plain ints (hashable, printable and parsed back).
_TREES: list = []
_TREE_INDEX: dict = {}


def _tree_id(treedef) -> int:
    i = _TREE_INDEX.get(treedef)
    if i is None:
        i = _TREE_INDEX[treedef] = len(_TREES)
        _TREES.append(treedef)
    return i


def _abstract_eval(*avals, fmt, tree, lanes):
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}")
    for a in avals:
        if len(a.shape) < lanes:
            raise ValueError(f"debug_print: operand {a.str_short()} has fewer than {lanes} "
                             "lane axes")
    return []


def _show(x):
    return np.asarray(x)[()] if np.ndim(x) == 0 else np.asarray(x)


def _impl(*leaves, fmt, tree, lanes):
    treedef = _TREES[tree]
    if lanes == 0:
        args, kwargs = tree_unflatten(treedef, [_show(x) for x in leaves])
        builtins.print(fmt.format(*args, **kwargs), flush=True)
        return []
    lane_shape = np.shape(leaves[0])[:lanes] if leaves else ()
    for idx in np.ndindex(*lane_shape):   # printing is per lane by nature
        args, kwargs = tree_unflatten(treedef, [_show(np.asarray(x)[idx]) for x in leaves])
        builtins.print(fmt.format(*args, **kwargs), flush=True)
    return []


def _jvp(primals, tangents, **params):
    # prints the primal values (once); there are no outputs, so no tangents
    debug_print_p.bind(*primals, **params)
    return [], []


def _batch(args, dims, *, fmt, tree, lanes):
    # the new vmap axis becomes the outermost lane axis of every operand
    size = not_mapped_size(args, dims)
    moved = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
    return debug_print_p.bind(*moved, fmt=fmt, tree=tree, lanes=lanes + 1), []


def _transpose(cts, *args, **params):
    # no outputs, so no cotangent reaches it; only residual values are ever printed
    return [None] * len(args)


debug_print_p.def_rules(abstract_eval=_abstract_eval, impl=_impl, jvp=_jvp, batch=_batch,
                        transpose=_transpose)


def print(fmt: str, *args, ordered: bool = False, partitioned: bool = False,  # noqa: A001
          **kwargs) -> None:
    """Print ``fmt.format(*args, **kwargs)`` when the computation runs, under any transform.

    Arguments may be arrays, tracers or pytrees of them. Under ``jit`` it prints on
    every call (not while tracing); under ``vmap`` once per lane; under ``grad`` the
    primal values, once. ``ordered``/``partitioned`` are JAX's options (prints run in
    program order on this single host either way).

    >>> import functrans as ft
    >>> ft.debug.print("{} and {b}", 1.5, b=2)
    1.5 and 2
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the first argument is the format string, got "
                        f"{type(fmt).__name__}")
    _check_fields(fmt, args, kwargs)
    leaves, treedef = tree_flatten((args, kwargs))
    leaves = [as_array(x) for x in leaves]
    debug_print_p.bind(*leaves, fmt=fmt, tree=_tree_id(treedef), lanes=0)


def _check_fields(fmt, args, kwargs):
    # JAX's errors for arguments the format never uses (often an f-string passed by
    # mistake: its fields are already filled in, so every argument goes unused)
    pos, kw, auto = set(), set(), 0
    for _, field, _, _ in string.Formatter().parse(fmt):
        if field is not None:
            name = field.split(".")[0].split("[")[0]
            if name == "":
                pos.add(auto)
                auto += 1
            elif name.isdigit():
                pos.add(int(name))
            else:
                kw.add(name)
    missing = [k for k in kw if k not in kwargs]     # format's own errors come first
    if missing:
        raise KeyError(missing[0])
    if pos and max(pos) >= len(args):
        raise IndexError("tuple index out of range")
    unused = [k for k in kwargs if k not in kw]
    if unused:
        raise ValueError(f"Unused keyword arguments to `debug.print`: {unused}. You may be "
                         f"passing an f-string (i.e, `f\"{{x}}\"`) into `debug.print` and "
                         f"instead should pass in a regular string.")
    unused = [i for i in range(len(args)) if i not in pos]
    if unused:
        raise ValueError(f"Unused positional arguments to `debug.print`: at {unused}")


# --------------------------------------------------------------------------- debug_nans

def _has_nan(x, test=np.isnan) -> bool:
    a = np.asarray(x)
    return dtype_kind(a.dtype) in "fc" and bool(test(a).any())


# what debug_nans / debug_infs look for: the option, the test, the word in messages
_KINDS = {"nan": ("debug_nans", np.isnan, "NaN"), "inf": ("debug_infs", np.isinf, "inf")}


def find_nan_source(closed, args, kind="nan"):
    """Re-run ``closed`` in the interpreter equation by equation; the first equation that
    produced a NaN (``kind="inf"``: an infinity) from inputs free of them as
    ``(index, eqn)``, ``("input", i)`` when argument ``i`` already held one,
    ``("constant", text)`` when no equation made it but the function holds it as a
    constant (a literal or a captured array; ``text`` says which), or None.

    >>> import functrans as ft, numpy as np
    >>> j = ft.make_jaxpr(lambda x: ft.numpy.log(x) * 2.0)(-1.0)
    >>> i, eqn = find_nan_source(j, [np.float64(-1.0)])
    >>> i, eqn.primitive.name
    (0, 'log')
    """
    test = _KINDS[kind][1]
    for i, x in enumerate(args):
        if _has_nan(x, test):
            return ("input", i)

    def stop_at_new_nan(i, eqn, ins, outs):
        if any(_has_nan(o, test) for o in outs) and not any(_has_nan(x, test) for x in ins):
            raise _NanFound(i, eqn)

    with np.errstate(all="ignore"):
        try:
            interpret.eval_jaxpr(closed.jaxpr, closed.consts, args, hook=stop_at_new_nan)
        except _NanFound as found:
            return found.args
    return _constant_source(closed, test)


def _constant_source(closed, test):
    """``("constant", text)`` naming the literal or captured constant of ``closed`` that
    holds a NaN (an inf under ``test=np.isinf``), outputs first, or None."""
    jaxpr = closed.jaxpr
    for k, v in enumerate(jaxpr.outvars):
        if isinstance(v, Literal) and _has_nan(v.val, test):
            return ("constant", f"output {k} is the literal {v.val}")
    for i, eqn in enumerate(jaxpr.eqns):
        if any(isinstance(x, Literal) and _has_nan(x.val, test) for x in eqn.inputs):
            return ("constant", f"equation {i} ('{eqn.primitive.name}') reads a literal "
                                f"{eqn_text(closed, eqn)!r}")
    for k, c in enumerate(closed.consts):
        if _has_nan(c, test):
            a = np.asarray(c)
            return ("constant", f"captured constant {k} ({a.dtype}{list(a.shape)}) holds it")
    return None


class _NanFound(Exception):
    """Raised by the NaN finder's hook to stop the evaluation at the first NaN."""


def nan_error(closed, args, name, kind="nan") -> FloatingPointError:
    """The FloatingPointError debug_nans (``kind="inf"``: debug_infs) raises for a call of
    ``closed`` on ``args``."""
    option, _, what = _KINDS[kind]
    hit = find_nan_source(closed, args, kind)
    if hit is None:
        return FloatingPointError(
            f"{option}: the compiled function {name} returned a {what}, but re-running it "
            "equation by equation in the interpreter produced none (the backend differs "
            "from the interpreter here; please report it)")
    if hit[0] == "input":
        return FloatingPointError(f"{option}: argument {hit[1]} of {name} already holds "
                                  f"a{'n' if kind == 'inf' else ''} {what}")
    if hit[0] == "constant":
        return FloatingPointError(
            f"{option}: {name} returned a{'n' if kind == 'inf' else ''} {what} that no "
            f"equation computed: it is a constant of the function ({hit[1]})")
    i, eqn = hit
    where = eqn.source or f"<unknown source line: set {option} before tracing>"
    return FloatingPointError(
        f"{option}: {what} produced in {name} by equation {i} (primitive "
        f"'{eqn.primitive.name}': invalid value ({kind}) encountered in "
        f"{eqn.primitive.name}):\n    {eqn_text(closed, eqn)}\n  created at {where}")


def eqn_text(jaxpr, eqn) -> str:
    """One equation printed with the var names ``str(jaxpr)`` gives them.

    >>> import functrans as ft
    >>> j = ft.make_jaxpr(lambda x: x * 2.0 + 1.0)(1.0)
    >>> eqn_text(j, j.eqns[1])
    'c:f64[]{weak} = add b 1.0:f64[]{weak}'
    """
    names = VarNames()
    format_jaxpr(jaxpr, names, 0)
    params = [f"{k}={format_param(v, names, 0)}" for k, v in sorted(eqn.params.items())
              if not hasattr(v, "jaxpr") and not hasattr(v, "eqns")]
    outs = " ".join(f"{names.use(v)}:{v.aval.str_short()}" for v in eqn.outvars) or "_"
    ps = f"[{' '.join(params)}]" if params else ""
    ins = " ".join(names.use(x) for x in eqn.inputs)
    return f"{outs} = {eqn.primitive.name}{ps} {ins}".rstrip()


def nan_checked(exe, closed, name, kinds=("nan",)):
    """``exe`` wrapped so that NaN (and, with ``"inf"`` in ``kinds``, inf) outputs raise
    ``nan_error`` (used by jit under debug_nans / debug_infs)."""
    def run(*args):
        outs = exe(*args)
        for kind in kinds:
            if any(_has_nan(o, _KINDS[kind][1]) for o in outs):
                raise nan_error(closed, [np.asarray(a) for a in args], name, kind)
        return outs
    for attr in ("as_text", "cost_analysis", "plan", "jaxpr"):
        if hasattr(exe, attr):
            setattr(run, attr, getattr(exe, attr))
    run.unchecked = exe
    return run


class NanCheck(CompileHook):
    """debug_nans / debug_infs as an observer of the compile path: every executable
    compiled while one is on raises ``nan_error`` when an output holds a NaN / an inf. It
    re-runs the arguments, so they must not be donated."""
    keeps_inputs = True

    def active(self) -> bool:
        return bool(config.read("debug_nans") or config.read("debug_infs"))

    def compiled(self, c, exe):
        kinds = tuple(k for k, (option, _, _) in _KINDS.items() if config.read(option))
        return nan_checked(exe, c.optimized, c.name, kinds)


add_hook(NanCheck())


def check_eager(name, out):
    """debug_nans / debug_infs for an operation run eagerly (``tracing.bind``, fnp's eager
    ufuncs): a NaN / an inf in its result raises at once, naming the operation, as JAX
    checks each operation it dispatches.

    >>> check_eager("log", np.array([np.nan]))       # both options off: no check
    >>> config.update("debug_nans", True)
    >>> check_eager("log", np.array([np.nan]))
    Traceback (most recent call last):
    FloatingPointError: invalid value (nan) encountered in log (debug_nans: an eager operation)
    >>> config.update("debug_nans", False)
    """
    for kind, (option, test, _) in _KINDS.items():
        if config.read(option) and any(_has_nan(o, test) for o in
                                       (out if isinstance(out, (list, tuple)) else (out,))):
            raise FloatingPointError(f"invalid value ({kind}) encountered in {name} "
                                     f"({option}: an eager operation)")


def _recompile_on_debug_nans(name=None, old=None, new=None):
    # executables compiled before the switch are (un)checked the wrong way: drop them;
    # eager operations are checked while either option is on
    if name in ("debug_nans", "debug_infs"):
        clear_compiled()
    EAGER_CHECK[:] = [check_eager] if config.read("debug_nans") or config.read("debug_infs") \
        else []


config._listeners.append(_recompile_on_debug_nans)
_recompile_on_debug_nans()


# --------------------------------------------------------------------------- check_tracer_leaks

def leaked_tracers() -> list:
    """The tracers still reachable whose transform has ended, after a garbage collection:
    values that escaped a traced function (JAX's leak check).

    >>> leaked_tracers() == [] or all(not t._trace.alive for t in leaked_tracers())
    True
    """
    # The compile hook calls this at each compile, and a full collection costs more than
    # a walk over every object: collect only when a walk finds candidates, then walk again
    # without the garbage among them (the same result as collecting first). The first
    # test reads only the objects' types (a C loop), usually enough to find no tracer.
    objs = gc.get_objects()
    if not any(issubclass(t, Tracer) for t in set(map(type, objs))):
        return []
    # types, not isinstance: isinstance of a dead weakref.proxy raises ReferenceError
    if not any(issubclass(type(o), Tracer) and not o._trace.alive for o in objs):
        return []
    del objs
    gc.collect()
    return [o for o in gc.get_objects() if issubclass(type(o), Tracer) and not o._trace.alive]


class LeakCheck(CompileHook):
    """check_tracer_leaks as an observer of the compile path: each compile (after its
    trace ended) first scans for leaked tracers and raises ``UnexpectedTracerError`` for
    new ones; each leak is reported once, and those from before the option was turned on
    never."""

    def __init__(self):
        self.reported = weakref.WeakValueDictionary()     # id -> tracer (unhashable)

    def active(self) -> bool:
        return bool(config.read("check_tracer_leaks"))

    def start(self, c) -> None:
        new = [t for t in leaked_tracers() if self.reported.get(id(t)) is not t]
        if new:
            self.reported.update((id(t), t) for t in new)
            shown = ", ".join(f"{t.aval.str_short()} from a {t._trace.name}" for t in new[:5])
            raise UnexpectedTracerError(
                f"check_tracer_leaks: {len(new)} tracer(s) leaked out of {c.name}: {shown}. "
                "A value computed inside a transformed function escaped it (stored in a "
                "global, a closure or a list outside it); return it as an output instead.")


_LEAKS = add_hook(LeakCheck())


def _known_leaks_on_check_tracer_leaks(name, old, new):
    if name == "check_tracer_leaks" and new:
        _LEAKS.reported.update((id(t), t) for t in leaked_tracers())


config.on_update(_known_leaks_on_check_tracer_leaks)
