"""Eager ``scan`` and ``while`` loops that are long enough run as one compiled call.

Eagerly (no trace active) the loop primitives' implementations interpret their body
jaxpr step by step, a few microseconds per equation and step: 1e5 steps of a small RNN
cell took seconds where JAX (whose eager dispatch jits every primitive) takes tens of
milliseconds. So an eager loop whose work, its trip count times the equations one step
runs (``body_size``), reaches both ``EAGER_COMPILE_MIN`` and ``COMPILE_COST`` times the
equations to compile (``body_size(..., static=True)``: compiling costs ~1 ms per
equation, interpreting ~5 us per equation and step) runs instead as a one-equation program
compiled by the jit path (``compiler.compile_closed``, the CPU/LLVM backend): its values
are those of the same loop under ``jit``. The executable is cached under the loop's
structure (``jaxpr_ir.structure.structural_key`` of its body, the other params and the
operands' shapes and dtypes), so the body retraced at each eager call compiles once.

A ``while``'s trip count is unknown in advance: it is interpreted until its work reaches
that bound; a loop still running then is compiled and restarted
from its initial carry (every step compiled, as under ``jit``; the loop is pure), and
later calls with the same structure run compiled at once.

The loops an eager ``grad``/``vjp``/``value_and_grad``/``jvp`` runs take the same path:
the forward loop with residuals (bound by the loop's JVP rule on concrete primals), the
transposed reverse loop (bound by the backward pass), ``jvp``'s primal loop (computed as
its trace with values records it), each cached as above; their values are those of the
same loops under ``jit``.

Loops stay interpreted: folded while ``jit``, ``make_jaxpr`` or ``vmap`` traces (a loop of
constants only), inside an eager ``vmap``,
under ``disable_jit``, ``debug_nans`` or ``debug_infs`` (they name the body's operation
that failed), on a default backend other than ``cpu`` (the interpreter, cuda),
when the body has effects (``debug.print``, ``io_callback``: they run once per step,
in order, as the interpreter runs them) or a param with no structural key (a Python
callable), and when the backend cannot compile the loop.

>>> import functrans as ft, numpy as np
>>> from functrans import lax
>>> c, _ = lax.scan(lambda c, x: (c + x, None), 0.0, np.ones(EAGER_COMPILE_MIN))
>>> float(c)
32768.0
"""
from __future__ import annotations

import numpy as np

from backends import default_backend
from backends.interpret_control_flow import run_scan, run_while
from backends.interpret_eval import eval_jaxpr
from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Var
from jaxpr_ir.structure import structural_key
from ..compiler import LRUCache, compile_closed
from ..tracing import EAGER_CHECK, Trace, axis_frames, trace_at_level, trace_depth
from .base import aval

__all__ = ["COMPILE_COST", "EAGER_COMPILE_MIN", "body_size", "compiled_loop", "eager_vetoes", "run_scan_eager",
           "run_while_eager"]

# Loop steps x body equations from which an eager loop compiles. Interpreted, an equation
# costs ~2-7 us per step; a small loop compiles in ~0.05-0.1 s, so 2**15 is about where
# one compile pays for itself, and a cached one pays at once.
EAGER_COMPILE_MIN = 1 << 15
# ... and at least this many times the equations to compile: a large body compiles in
# ~1.3 ms per equation (200 equations: 0.8 s; 64 steps of it interpreted: 0.27 s).
COMPILE_COST = 256

# Predicates that keep loops interpreted when one is true (``jit`` adds ``jit_disabled``).
eager_vetoes: list = []

_COMPILED = LRUCache(64)     # loop key -> executable, or _INTERPRET
_INTERPRET = object()        # a loop that cannot compile: interpret it


def body_size(closed, static: bool = False) -> int:
    """Equations one step of a loop body runs, nested scans' bodies times their length
    (``static``: the equations written, each nested body once).

    >>> from jaxpr_ir import parse
    >>> body_size(parse("{ lambda ; x:f32[]. let y:f32[] = neg x\\n z:f32[] = neg y in (z,) }"))
    2
    """
    j = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    n = 0
    for e in j.eqns:
        n += 1
        times = 1 if static else int(e.params.get("length", 1))
        for name in (*e.primitive.subjaxpr_params, e.primitive.call_param):
            sub = e.params.get(name) if name else None
            for s in (sub if isinstance(sub, (tuple, list)) else (sub,)):
                if isinstance(s, (ClosedJaxpr, Jaxpr)):
                    n += body_size(s, static) * times
    return n


def _threshold(*bodies) -> int:
    """The work (steps x equations) from which a loop of these bodies compiles."""
    return max(EAGER_COMPILE_MIN, COMPILE_COST * sum(body_size(b, True) for b in bodies))


def _effectful(closed) -> bool:
    j = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    for e in j.eqns:
        if e.primitive.has_effects:
            return True
        for name in (*e.primitive.subjaxpr_params, e.primitive.call_param):
            sub = e.params.get(name) if name else None
            for s in (sub if isinstance(sub, (tuple, list)) else (sub,)):
                if isinstance(s, (ClosedJaxpr, Jaxpr)) and _effectful(s):
                    return True
    return False


def _eager_now() -> bool:
    # traces: a loop's impl runs on concrete values, but under jit / make_jaxpr / vmap
    # (an outermost plain Trace that does not differentiate) only to fold a loop of
    # constants while tracing, which stays as it was; under an eager grad/vjp (linearize's
    # JVP rules bind the primal loop on concrete primals, the backward pass the transposed
    # loop) and jvp's trace with values (it computes each value as it records it) the
    # loops compile, with jit's values all the same.
    # axis frames: inside an eager vmap (its batching rules bind on concrete values);
    # EAGER_CHECK: debug_nans / debug_infs, which name the body's operation that failed
    first = trace_at_level(0) if trace_depth() else None
    return (not (type(first) is Trace and not first.detaches)
            and not axis_frames() and not EAGER_CHECK and default_backend() == "cpu"
            and not any(veto() for veto in eager_vetoes))


def _key(prim, args, params):
    ps = tuple((k, structural_key(v) if isinstance(v, ClosedJaxpr) else v)
               for k, v in sorted(params.items()))
    avals = tuple((np.shape(x), np.result_type(x).str, aval(x).weak_type) for x in args)
    key = (prim.name, ps, avals)
    hash(key)          # an unhashable param: TypeError, as structural_key's
    return key


def _compile(prim, args, params):
    if any(_effectful(v) for v in params.values() if isinstance(v, ClosedJaxpr)):
        return _INTERPRET
    try:
        avals = [aval(x) for x in args]
        ins = [Var(a) for a in avals]
        outs = [Var(a) for a in prim.abstract_eval(*avals, **params)]
        program = ClosedJaxpr(Jaxpr([], ins, [Eqn(prim, ins, outs, params)], outs), [])
        return compile_closed(program, "cpu", name=f"eager_{prim.name}")
    except Exception:   # noqa: BLE001 - the interpreter runs what the backend cannot
        return _INTERPRET


def compiled_loop(prim, args, params, compile_now: bool):
    """The cached executable running ``prim[params]`` on operands like ``args`` (compiled
    now if ``compile_now``), or None when the loop is to be interpreted: not compiled,
    traced or not compilable (see the module doc).

    >>> import functrans as ft
    >>> with ft.disable_jit():     # a veto: interpret
    ...     compiled_loop(None, (), {}, compile_now=True) is None
    True
    """
    if not compile_now and not _COMPILED or not _eager_now():
        return None
    try:
        key = _key(prim, args, params)
    except TypeError:       # a param with no structural key (a Python callable)
        return None
    exe = _COMPILED.get(key)
    if exe is None and compile_now:
        exe = _compile(prim, args, params)
        _COMPILED.put(key, exe)
    return None if exe is None or exe is _INTERPRET else exe


def _run(exe, args):
    return list(exe(*[np.asarray(x) for x in args]))


def run_scan_eager(prim, args, params):
    """``prim`` (``scan``) eagerly: compiled when long enough (``compiled_loop``), else
    interpreted by ``run_scan``."""
    body = params["jaxpr"]
    exe = None
    if params["length"] * body_size(body) >= _threshold(body):
        exe = compiled_loop(prim, args, params, True)
    return run_scan(*args, **params) if exe is None else _run(exe, args)


def run_while_eager(prim, args, params):
    """``prim`` (``while``) eagerly: compiled when cached for its structure or still
    running after ``_threshold`` work interpreted (then restarted compiled from
    ``args``), else interpreted by ``run_while``."""
    if not _eager_now():
        return run_while(*args, **params)
    exe = compiled_loop(prim, args, params, False)
    if exe is not None:
        return _run(exe, args)
    cj, bj = params["cond_jaxpr"].jaxpr, params["body_jaxpr"].jaxpr
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cc, bc, carry = list(args[:nc]), list(args[nc:nc + nb]), list(args[nc + nb:])
    size = max(1, body_size(cj) + body_size(bj))
    for _ in range(-(-_threshold(cj, bj) // size)):
        if not eval_jaxpr(cj, (), cc + carry)[0]:
            return [np.asarray(v, dtype=a.dtype) for v, a in zip(carry, bj.in_avals[nb:])]
        carry = eval_jaxpr(bj, (), bc + carry)
    exe = compiled_loop(prim, args, params, True)
    if exe is None:         # not compilable: go on interpreting from where it is
        return run_while(*cc, *bc, *carry, **params)
    return _run(exe, args)
