"""``ft.profile(f, *args)``: the same function eagerly and compiled, side by side.

Eager (op by op, as numpy runs it): every operation is counted while the function
runs once under temporary hooks (the public functions of ``functrans.numpy``, ``lax``
and ``random``, so an ``nn`` function counts the operations it runs; numpy's
``__array_ufunc__`` / ``__array_function__`` protocols on ``functrans.Array``, for
operators such as ``x * 2.0``; and the eager path of
``bind``), with the bytes each one reads and writes and the temporaries it allocates;
the hooks are removed afterwards.

Compiled (``jit(f, backend="cpu")``, falling back to the interpreter with a note):
kernels and host steps from the executable's ``cost_analysis()``, temporaries from its
buffer plan.

Bytes and flops in both columns come from one cost model (``functrans.cost``): eagerly
the traced equations run one by one, compiled the kernels of the backend's plan; each
reads its operands (a view at its base's size) and writes its outputs.

Both: communication (per collective kind, the calls and bytes this process sent and
received in one call, counted by ``ft.distributed.comm_stats``; the compiled column also
says whether ``cost_analysis()`` predicted the same), peak memory (``tracemalloc``), wall
time (median of ``repeats`` calls), and for the compiled side the compile time (first call
minus a cached call).

Command line: ``python -m functrans.profile module:function [--args EXPR]``
(see ``main``; ``functrans/profile.py`` is that entry point).

>>> import functrans as ft, functrans.numpy as fnp, numpy as np
>>> r = ft.profile(lambda x: fnp.sum(fnp.sin(x) * 2.0 + x), np.ones(1000), show=False)
>>> r["eager"]["operations"], r["compiled"]["kernels"]
(4, 1)
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import statistics
import sys
import time
import tracemalloc
import types
from typing import Any, Callable

import numpy as np

from backends import default_backend, interpret
from . import array as _array, lax, random, tracing
from .distributed import measure_comm
from . import numpy as fnp
from .array import Array
from jaxpr_ir.passes import inline_calls
from .cost import eager_traffic, flops
from .jit import jit, make_jaxpr
from .primitives import base as _base
from .profiler_memory import device_memory_profile, save_device_memory_profile  # noqa: F401
from .profiler_trace import (ProfileOptions, StepTraceAnnotation,  # noqa: F401
                             TraceAnnotation, annotate_function, start_server, start_trace,
                             stop_server, stop_trace, trace)
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["profile", "Profile", "main", "time_by_primitive", "trace", "start_trace",
           "stop_trace", "TraceAnnotation", "StepTraceAnnotation", "annotate_function",
           "device_memory_profile", "save_device_memory_profile", "ProfileOptions",
           "start_server", "stop_server"]


# ------------------------------------------------------------------ eager counting

class _Counter:
    def __init__(self):
        self.ops = 0
        self.bytes_moved = 0
        self.temporaries = 0
        self.temp_bytes = 0
        self.by_op = {}
        self.depth = 0

    def record(self, name, inputs, outputs):
        outs = [np.asarray(o) for o in outputs if isinstance(o, (np.ndarray, np.generic))]
        if not outs:
            return False            # np.shape, np.result_type, ...: not an operation
        self.ops += 1
        self.by_op[name] = self.by_op.get(name, 0) + 1
        ins = [x for x in inputs if isinstance(x, np.ndarray)]   # scalars: no traffic
        fresh = [o for o in outs if not any(np.may_share_memory(o, x) for x in ins)]
        if fresh:   # a view moves no data
            self.bytes_moved += sum(x.nbytes for x in ins) + sum(o.nbytes for o in fresh)
            self.temporaries += len(fresh)
            self.temp_bytes += sum(o.nbytes for o in fresh)
        return True


def _plain(x):
    return np.asarray(x) if isinstance(x, Array) else x


def _flat_arrays(xs):
    out = []
    for x in xs:
        if isinstance(x, (np.ndarray, np.generic)):
            out.append(x)
        elif isinstance(x, (tuple, list)):
            out.extend(_flat_arrays(x))
    return out


def _as_array_class(r):
    if type(r) is np.ndarray:
        return r.view(Array)
    if isinstance(r, tuple):
        return tuple(_as_array_class(x) for x in r)
    return r


def _api_modules():
    """The public modules whose functions count as one eager operation per call (eager
    ``functrans.numpy`` calls numpy on plain arrays, out of the protocols' sight)."""
    mods = [fnp, lax, random]   # not nn: its functions count by the operations they run
    linalg = getattr(fnp, "linalg", None)
    if isinstance(linalg, types.ModuleType):
        mods.append(linalg)
    return mods


def _counted(counter: _Counter, fn, name):
    """``fn`` counting each outermost eager call as one operation called ``name``."""
    def counted(*args, **kwargs):
        if counter.depth or tracing.trace_depth():
            return fn(*args, **kwargs)
        counter.depth += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            counter.depth -= 1
        counter.record(name, _flat_arrays(list(args) + list(kwargs.values())),
                       _flat_arrays([out]))
        return out
    return counted


def _array_operator_names() -> dict:
    """Array dunder -> the numpy function it computes (``__radd__`` -> ``add``)."""
    opnames = {}
    for d, fname in list(getattr(_array, "_BINOPS", {}).items()) + \
            list(getattr(_array, "_COMPARE", {}).items()):
        for dunder in (f"__{d}__", f"__r{d}__", f"__i{d}__"):
            opnames[dunder] = fname
    for dunder, fname in (("__neg__", "negative"), ("__pos__", "positive"),
                          ("__abs__", "absolute"), ("__invert__", "invert")):
        opnames[dunder] = fname
    return opnames


def _count_public_functions(counter: _Counter) -> list:
    """Replace the public API functions and Array's operators and methods by counting
    wrappers; returns ``(owner, name, original)`` for each, to put them back."""
    patched = []
    for mod in _api_modules():
        for name, fn in list(vars(mod).items()):
            if not name.startswith("_") and isinstance(fn, types.FunctionType):
                patched.append((mod, name, fn))
                setattr(mod, name, _counted(counter, fn, name))
    # Array's own operators and methods (x * 2.0, x.sum()) call numpy on plain views
    opnames = _array_operator_names()
    for name, fn in list(Array.__dict__.items()):
        if not isinstance(fn, types.FunctionType):
            continue
        if name in opnames or not name.startswith("_"):
            patched.append((Array, name, fn))
            setattr(Array, name, _counted(counter, fn, opnames.get(name, name)))
    return patched


@contextlib.contextmanager
def _counting(counter: _Counter):
    """Count eager operations while the block runs; every hook is removed after.

    An operation is a call of a public ``functrans.numpy`` / ``lax`` / ``random``
    function, of an operator or method of ``functrans.Array`` (``x * 2.0``, ``x.sum()``),
    an eager ``bind``, or a numpy ufunc or function applied to an Array; calls made
    inside one are not counted again.
    """
    def array_ufunc(self, ufunc, method, *inputs, **kwargs):
        plain_in = [_plain(x) for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(_plain(o) for o in kwargs["out"])
        if counter.depth:
            return _as_array_class(getattr(ufunc, method)(*plain_in, **kwargs))
        counter.depth += 1
        try:
            res = getattr(ufunc, method)(*plain_in, **kwargs)
        finally:
            counter.depth -= 1
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        counter.record(name, plain_in, _flat_arrays([res]))
        return _as_array_class(res)

    prior = Array.__dict__.get("__array_function__", np.ndarray.__array_function__)

    def array_function(self, func, types, args, kwargs):
        if counter.depth:
            return prior(self, func, types, args, kwargs)
        counter.depth += 1
        try:
            res = prior(self, func, types, args, kwargs)
        finally:
            counter.depth -= 1
        counter.record(getattr(func, "__name__", "?"),
                       _flat_arrays(list(args) + list(kwargs.values())), _flat_arrays([res]))
        return res

    orig_bind = tracing.bind

    def counting_bind(prim, *args, **params):
        if counter.depth or any(isinstance(x, tracing.Tracer) for x in args):
            return orig_bind(prim, *args, **params)
        counter.depth += 1
        try:
            out = orig_bind(prim, *args, **params)
        finally:
            counter.depth -= 1
        counter.record(prim.name, _flat_arrays(args), _flat_arrays([out]))
        return out

    patched = _count_public_functions(counter)   # (module or class, name, original)
    had = {k: k in Array.__dict__ for k in ("__array_ufunc__", "__array_function__")}
    saved = {k: Array.__dict__.get(k) for k in had}
    Array.__array_ufunc__ = array_ufunc
    Array.__array_function__ = array_function
    tracing.bind = counting_bind
    _base.bind = counting_bind
    _base.Primitive.bind = counting_bind      # prim.bind is tracing.bind itself
    try:
        yield counter
    finally:
        for mod, name, fn in patched:
            setattr(mod, name, fn)
        tracing.bind = orig_bind
        _base.bind = orig_bind
        _base.Primitive.bind = orig_bind
        for k, present in had.items():
            if present:
                setattr(Array, k, saved[k])
            else:
                delattr(Array, k)


# ------------------------------------------------------------------ measuring

def _median_time(fn, repeats):
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _peak_bytes(fn):
    was = tracemalloc.is_tracing()
    if not was:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return max(0, tracemalloc.get_traced_memory()[1] - base)
    finally:
        if not was:
            tracemalloc.stop()


def _block(out):
    # results are numpy arrays already (no async dispatch); touching them keeps the
    # measurement honest should a backend ever return lazily
    for x in tree_flatten(out)[0]:
        np.asarray(x)
    return out


def _eager_args(args):
    leaves, tree = tree_flatten(args)
    return tree_unflatten(tree, [tracing.wrap(x) if isinstance(x, np.ndarray) else x
                                 for x in leaves])


def _plan_temporaries(exe):
    """(count, bytes) of the buffers a compiled plan allocates, or None."""
    plan = getattr(exe, "plan", None)
    if plan is None:
        return None
    vs = []
    for s in plan.steps:
        # a fused kernel (backends.fusion.Kernel) lists its outputs; any other step is one
        # equation
        vs.extend(s.outputs if type(s).__name__ == "Kernel" else s.eqn.outvars)
    return len(vs), sum(v.aval.size * v.aval.dtype.itemsize for v in vs)


def _compiled_side(f, args, backend, repeats, notes):
    """The compiled column, or raise the reason it cannot be compiled."""
    jf = jit(f, backend=backend)
    t0 = time.perf_counter()
    _block(jf(*args))
    first = time.perf_counter() - t0
    t = _median_time(lambda: _block(jf(*args)), repeats)
    compiled = jf.lower(*args).compile()
    cost = compiled.cost_analysis()
    comm = measure_comm(lambda: _block(jf(*args)))[1]     # one call's collectives
    temps = _plan_temporaries(compiled.exe)
    if temps is None:
        eqns = compiled.jaxpr.jaxpr.eqns
        temps = (sum(len(e.outvars) for e in eqns),
                 sum(v.aval.size * v.aval.dtype.itemsize for e in eqns for v in e.outvars))
    return {
        "backend": backend or default_backend(),
        "kernels": int(cost.get("kernels", 0)),
        "native_kernels": int(cost.get("native kernels", 0)),
        "host_steps": int(cost.get("host steps", cost.get("kernels", 0)
                                    if "native kernels" not in cost else 0)),
        # one cost model for both columns (functrans.cost), as cost_analysis() reports
        # it: kernels of the backend's plan read their inputs (views at their base) and
        # write their outputs
        "flops": float(cost["flops"]),
        "transcendentals": float(cost["transcendentals"]),
        "bytes_moved": int(cost["bytes accessed"]),
        "temporaries": int(temps[0]),
        "temp_bytes": int(temps[1]),
        "peak_temp_bytes": int(cost["temp_bytes"]),   # with buffer reuse (compiler.temp_bytes)
        # a native executable keeps a reusable workspace that tracemalloc never sees
        "peak_bytes": _peak_bytes(lambda: _block(jf(*args))) + int(cost.get("workspace bytes", 0)),
        "time_s": t,
        "first_call_s": first,
        "compile_s": max(first - t, 0.0),
        "equations": len(compiled.jaxpr.jaxpr.eqns),
        # per collective kind: calls, bytes sent / received by this process, counted in
        # one call (distributed.comm_stats) and predicted by cost_analysis()
        "collectives": comm,
        "collectives_predicted": cost.get("collectives", {}),
    }


def time_by_primitive(closed, args) -> list:
    """Run ``closed`` once in the interpreter, timing every equation through the
    evaluator's hook; one row per primitive, slowest first: ``primitive``, ``count``,
    ``seconds`` and ``bytes_written`` (the sizes of its outputs).

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> j = ft.make_jaxpr(lambda x: fnp.sin(x) * x + fnp.sin(x))(np.ones(4))
    >>> sorted((r["primitive"], r["count"], r["bytes_written"])
    ...        for r in time_by_primitive(j, [np.ones(4)]))
    [('add', 1, 32), ('mul', 1, 32), ('sin', 2, 64)]
    """
    rows = {}
    last = [0.0]

    def time_eqn(i, eqn, ins, outs):
        # the time since the previous equation ended: this one's run (and the loop's step)
        now = time.perf_counter()
        row = rows.setdefault(eqn.primitive.name, [0, 0.0, 0])
        row[0] += 1
        row[1] += now - last[0]
        row[2] += sum(np.asarray(o).nbytes for o in outs)
        last[0] = time.perf_counter()

    flat = [np.asarray(x) for x in args]
    with np.errstate(all="ignore"):
        last[0] = time.perf_counter()
        interpret.eval_jaxpr(closed.jaxpr, closed.consts, flat, hook=time_eqn)
    return [{"primitive": n, "count": c, "seconds": t, "bytes_written": b}
            for n, (c, t, b) in sorted(rows.items(), key=lambda kv: -kv[1][1])]


def _first_line(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0].rstrip('.') if msg else ''}"


def _eager_model(f, args, eager, notes):
    """Eager bytes and flops from the cost model (``functrans.cost``) on ``f``'s
    equations run one by one; the hooks' byte count stays where ``f`` cannot be traced."""
    try:
        traced = inline_calls(make_jaxpr(f)(*args))
    except Exception as e:
        notes.append(f"eager bytes counted by the hooks, flops unknown: the function "
                     f"cannot be traced ({_first_line(e)})")
        return
    eager["bytes_moved"] = eager_traffic(traced)["bytes"]
    eager.update(flops(traced))


def profile(f: Callable[..., Any], *args: Any, repeats: int = 20, backend: str = "cpu",
            show: bool = True, by_primitive: bool = False) -> "Profile":
    """Profile ``f(*args)`` eagerly and compiled; prints the report (``show``) and returns it
    as a dict: ``eager``, ``compiled`` (None if it cannot be compiled), ``compile_error``,
    ``notes``; with ``by_primitive`` also ``by_primitive``: the optimised jaxpr run once in
    the interpreter, timed per primitive (``time_by_primitive``). ``repeats``: timed calls
    (the median is reported); ``backend``: where the compiled side runs (as ``jit``'s).

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> r = ft.profile(lambda x: fnp.tanh(x) + 1.0, np.ones(10), repeats=3, show=False)
    >>> sorted(r["eager"])[:4]
    ['bytes_moved', 'collectives', 'flops', 'operations']
    >>> r["compiled"]["collectives"]          # no collectives (see ft.distributed.comm_stats)
    {}
    """
    if not callable(f):
        raise TypeError(f"profile expects a callable, got {type(f).__name__}")
    repeats = max(1, int(repeats))
    notes = []
    eargs = _eager_args(args)

    with _counting(_Counter()) as c:
        _block(f(*eargs))
    eager = {"operations": c.ops, "ops_by_name": dict(sorted(c.by_op.items())),
             "temporaries": c.temporaries, "temp_bytes": c.temp_bytes,
             "bytes_moved": c.bytes_moved, "flops": None, "transcendentals": None,
             "peak_bytes": _peak_bytes(lambda: _block(f(*eargs))),
             "time_s": _median_time(lambda: _block(f(*eargs)), repeats),
             "collectives": measure_comm(lambda: _block(f(*eargs)))[1]}

    _eager_model(f, args, eager, notes)
    compiled, error = None, None
    try:
        compiled = _compiled_side(f, args, backend, repeats, notes)
    except Exception as e:
        if backend != "interpret":
            try:
                compiled = _compiled_side(f, args, "interpret", repeats, notes)
                notes.append(f"the {backend!r} backend failed ({_first_line(e)}); the compiled "
                             "column runs the optimised jaxpr in the interpreter")
            except Exception as e2:
                error = _first_line(e2)
        else:
            error = _first_line(e)
    if error:
        notes.append(f"cannot be compiled: {error}; only the eager run is profiled")
    elif compiled["compile_s"] < 1e-3:
        notes.append("compile time is near zero: the backend's caches already held this "
                     "program (compiled earlier in this process or on disk)")
    name = getattr(f, "__name__", type(f).__name__)
    r = Profile(function=name, eager=eager, compiled=compiled, compile_error=error,
                notes=notes, repeats=repeats)
    if by_primitive and compiled is not None:
        r["by_primitive"] = time_by_primitive(jit(f).lower(*args).jaxpr,
                                              tree_flatten(args)[0])
    if show:
        print(r.table())
    return r


# ------------------------------------------------------------------ report

def _bytes(n) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _secs(s) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def _comm_rows(row, e, c):
    """One row per collective kind: calls and bytes sent / received per call (measured;
    the compiled column says whether cost_analysis() predicted the same)."""
    def cell(stats, k):
        r = stats.get(k)
        return "-" if r is None else (f"{r['calls']} calls, {_bytes(r['bytes_sent'])} sent, "
                                      f"{_bytes(r['bytes_received'])} received")
    cc, pred = (c["collectives"], c["collectives_predicted"]) if c else ({}, {})
    for k in sorted(set(e["collectives"]) | set(cc) | set(pred)):
        same = "predicted" if cc.get(k) == pred.get(k) else f"predicted {cell(pred, k)}"
        row(f"{k} (per call)", cell(e["collectives"], k), f"{cell(cc, k)} ({same})")


class Profile(dict):
    """The profile as a dict; ``str()`` / ``table()`` give the side-by-side report."""

    def table(self) -> str:
        e, c = self["eager"], self["compiled"]
        rows = [("", "eager", "compiled" + (f" ({c['backend']})" if c else ""))]

        def row(label, ev, cv):
            rows.append((label, ev, cv if c else "-"))

        if c:
            kern = f"{c['kernels']} kernels"
            if c["native_kernels"] or c["host_steps"]:
                kern += f" ({c['native_kernels']} native, {c['host_steps']} host)"
        row("operations / kernels", f"{e['operations']} ops", kern if c else "")
        row("temporaries allocated", f"{e['temporaries']} ({_bytes(e['temp_bytes'])})",
            f"{c['temporaries']} ({_bytes(c['temp_bytes'])})" if c else "")
        row("peak temporaries (compiled call)", "-",
            _bytes(c["peak_temp_bytes"]) if c else "")
        row("bytes moved", _bytes(e["bytes_moved"]), _bytes(c["bytes_moved"]) if c else "")
        if e["flops"] is not None:
            row("flops (+ transcendentals)", f"{e['flops']:.3g} (+{e['transcendentals']:.3g})",
                f"{c['flops']:.3g} (+{c['transcendentals']:.3g})" if c else "")
        _comm_rows(row, e, c)
        row("peak memory", _bytes(e["peak_bytes"]), _bytes(c["peak_bytes"]) if c else "")
        row(f"wall time (median of {self['repeats']})", _secs(e["time_s"]),
            _secs(c["time_s"]) if c else "")
        row("compile time", "-", _secs(c["compile_s"]) if c else "")
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        lines = [f"profile of {self['function']}"]
        lines += [f"  {a:<{w0}}  {b:>{w1}}   {cc}" for a, b, cc in rows]
        if c and e["time_s"] > 0 and c["time_s"] > 0:
            lines.append(f"  speed-up of a compiled call: {e['time_s'] / c['time_s']:.1f}x")
        rows = self.get("by_primitive")
        if rows:
            lines.append("  slowest primitives (the optimised jaxpr, run once in the "
                         "interpreter):")
            lines += [f"    {r['primitive']:<{w0 - 2}} x{r['count']:<5} {_secs(r['seconds']):>10}"
                      f"   writes {_bytes(r['bytes_written'])}" for r in rows[:5]]
        for n in self["notes"]:
            lines.append(f"  note: {n}")
        return "\n".join(lines)

    __str__ = table


# ------------------------------------------------------------------ command line

def _load(target: str):
    if ":" not in target:
        raise SystemExit(f"expected module:function or path.py:function, got {target!r}")
    mod_name, fn_name = target.rsplit(":", 1)
    if mod_name.endswith(".py") or os.sep in mod_name:
        spec = importlib.util.spec_from_file_location("_profiled", mod_name)
        if spec is None:
            raise SystemExit(f"cannot load {mod_name!r}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_profiled"] = mod
        spec.loader.exec_module(mod)
    else:
        sys.path.insert(0, os.getcwd())
        mod = importlib.import_module(mod_name)
    try:
        return mod, getattr(mod, fn_name)
    except AttributeError:
        raise SystemExit(f"{mod_name} has no attribute {fn_name!r}") from None


def main(argv=None) -> int:
    """``python -m functrans.profile module:function [--args EXPR] [--repeats N] [--backend B]``

    Arguments come from ``--args`` (a Python expression with ``np`` and ``fnp`` in scope,
    giving a tuple or one value), else from ``<function>_args`` in the module (a tuple,
    or a function returning one), else the function is called with no arguments.
    """
    p = argparse.ArgumentParser(prog="python -m functrans.profile", description=main.__doc__)
    p.add_argument("target", help="module:function or path/to/file.py:function")
    p.add_argument("--args", default=None, help="Python expression for the arguments")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--backend", default="cpu")
    ns = p.parse_args(argv)
    mod, fn = _load(ns.target)
    if ns.args is not None:
        args = eval(ns.args, {"np": np, "fnp": fnp, **vars(mod)})  # noqa: S307 (a CLI)
        args = args if isinstance(args, tuple) else (args,)
    else:
        given = getattr(mod, f"{ns.target.rsplit(':', 1)[1]}_args", ())
        args = given() if callable(given) else tuple(given)
    profile(fn, *args, repeats=ns.repeats, backend=ns.backend, show=True)
    return 0
