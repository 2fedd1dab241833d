"""Tracing: one tracer type that records primitives into a jaxpr.

A ``Trace`` is one jaxpr under construction; traces form a stack and a trace's
level is its depth. ``bind`` applies a primitive: with no tracer among its
arguments it runs the numpy implementation at once (eager mode); otherwise the
equation is recorded in the innermost trace that owns one of the arguments.
Tracers of outer traces met by an inner trace become inputs (constvars) of the
inner jaxpr: closure conversion, which keeps nested transforms apart.

A tracer may also carry the concrete value of what it stands for (``val``):
when every input of an equation is known, the output is computed as well.
That is what lets grad, jvp and vmap run Python control flow outside jit.

>>> import numpy as np
>>> from jaxpr_ir import ShapedArray
>>> jaxpr, consts, _ = trace_to_jaxpr(lambda x: [x], [ShapedArray((2,), "float64")])
>>> print(jaxpr)
{ lambda ; a:f64[2]. let  in (a,) }
"""
from __future__ import annotations

import threading

import numpy as np

from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, TypeCheckError, Var, aval_of, dtype_kind
from jaxpr_ir import check as _check_jaxpr
from jaxpr_ir.evaluate import evaluate
from jaxpr_ir.passes import sub_effects
from . import config
from .errors import (ConcretizationError, TracerBoolConversionError,
                     TracerIntegerConversionError, conversion_error, detached_conversion_error,
                     leaked_tracer_error, user_frame, user_location)
from .numpy_warnings import QUIET, QUIET_VAR, quiet_call
from .eager_values import (ARRAY_CLASS, EAGER_TYPES, INTERNAL, WEAK_BIND,  # noqa: F401
                           FAST_DTYPES as _FAST_DTYPES, array_aval, unshared, weak_operands as _weak_operands, wrap)
from .trace_events import ACTIVE as TRACE_ON, add as trace_add, now as trace_now


class _TraceContext(threading.local):
    """What tracing keeps per thread: the stack of traces being recorded (innermost last)
    and the vmap axis frames (see transforms.vmap). Per thread, so several threads can
    trace and compile at once, each on its own stack."""

    def __init__(self):
        self.stack = []
        self.axis_frames = []
        self.floor = 0     # bind_outermost records in stack[floor] (see own_constants)
        self.stagers = []  # traces (cond branches) staging what closed-over values compute


_CONTEXT = _TraceContext()

# Hot-path flags kept in step with functrans.config: CAPTURE_SOURCE records the user's
# file:line in each traced equation (Eqn.source, a frame walk) only while a tool that shows
# it (debug_nans, dumps) is on; CHECK_JAXPRS type-checks every jaxpr built (enable_checks).
CAPTURE_SOURCE = False
CHECK_JAXPRS = False


def _sync_flags(name=None, old=None, new=None):
    global CAPTURE_SOURCE, CHECK_JAXPRS
    CAPTURE_SOURCE = bool(config.read("debug_nans") or config.read("debug_infs")
                          or config.read("dump_dir"))
    CHECK_JAXPRS = bool(config.read("enable_checks"))


_sync_flags()
config.on_update(_sync_flags)


def checked(jaxpr, pass_name: str):
    """``jaxpr`` (a Jaxpr or ClosedJaxpr) as it is, type-checked first while the
    ``enable_checks`` option is on; the error names ``pass_name``, the pass that built it.

    >>> from jaxpr_ir import Jaxpr, Var, ShapedArray
    >>> a, b = Var(ShapedArray((), "float64")), Var(ShapedArray((), "float64"))
    >>> was = config.read("enable_checks"); config.update("enable_checks", True)
    >>> checked(Jaxpr([], [a], [], [b]), "my pass")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    jaxpr_ir.checker.TypeCheckError: enable_checks: the jaxpr built by my pass is ill-typed: ...
    >>> config.update("enable_checks", was)
    """
    if CHECK_JAXPRS:
        try:
            _check_jaxpr(jaxpr)
        except TypeCheckError as e:
            raise TypeCheckError(f"enable_checks: the jaxpr built by {pass_name} is "
                                 f"ill-typed: {e}", e.eqn) from None
    return jaxpr


def _new_eqn(prim, inputs, outvars, params, source):
    """An ``Eqn`` from lists and a params dict that nobody else holds (``bind``'s fresh
    keyword dict): the constructor's defensive copies cost more than the rest of it."""
    e = _object_new(Eqn)
    e.primitive = prim
    e.inputs = inputs
    e.outvars = outvars
    e.params = params
    e.source = source
    return e


_object_new = object.__new__


def _source_line():
    f = user_frame()
    return None if f is None else f"{f.f_code.co_filename}:{f.f_lineno} (in {f.f_code.co_name})"


def body_defers_concrete(prim, params) -> bool:
    """Whether a sub-jaxpr in ``params`` needs a vmap axis (replaced by transforms.vmap)."""
    return False


class Trace:
    """One jaxpr being recorded. ``alive`` is False once its transform has ended."""
    __slots__ = ("level", "alive", "eqns", "invars", "constvars", "consts",
                 "_lifted", "name", "staged", "detaches", "sources")

    def __init__(self, level: int, name: str = "trace", staged: bool = False):
        self.level = level
        # staged: tangents recorded here are later split from their primals (linearize's
        # linear trace; a control-flow body that partial evaluation will split), so the
        # JVP rules of loops emit a primal loop and a linear loop rather than one loop
        self.staged = staged
        self.alive = True
        # detaches: this trace differentiates, so float() of a known inexact value would
        # lose a dependence (see would_detach); None: as the enclosing trace (vmap...)
        self.detaches = None
        self.eqns = []
        self.invars = []
        self.constvars = []
        self.consts = []      # the outer objects (arrays or outer tracers) behind constvars
        self.sources = None   # the outer values behind invars (None: unknown; shard_map_specs)
        self._lifted = {}     # id(outer object) -> Tracer in this trace
        self.name = name

    def new_arg(self, aval: ShapedArray, val=None) -> "Tracer":
        v = Var(aval)
        self.invars.append(v)
        return Tracer(self, aval, v, val)

    def _lift(self, x):
        """(Var, aval, value) of an outer value, made a constvar on first sight. The memo
        holds no tracer of this trace, so a finished trace is no reference cycle."""
        entry = self._lifted.get(id(x))
        if entry is not None:
            return entry
        if isinstance(x, Tracer):
            if not x._trace.alive:
                raise leaked_tracer_error(x)
            aval, val = x.aval, x.val
        else:
            x0 = x
            x = np.asarray(x) if not isinstance(x, np.ndarray) else x
            if dtype_kind(x.dtype) in "OUSVMm":     # a str returned, an object array closed over
                raise TypeError(
                    f"a value of type {type(x0).__name__} ({x0!r:.60}) is not an array: the "
                    f"inputs, outputs and values of a transformed function must be arrays "
                    f"or numbers (at {user_location()})")
            aval, val = array_aval(x), x
        v = Var(aval)
        self.constvars.append(v)
        self.consts.append(x)   # also keeps x alive, so its id (the memo's key) stays unique
        entry = self._lifted[id(x)] = (v, aval, val)
        return entry

    def atom(self, x):
        """The (atom, aval, concrete value) of a bind argument, as seen from this trace."""
        if isinstance(x, np.ndarray) and x.ndim:     # an array constant, e.g. a residual
            entry = self._lifted.get(id(x))
            if entry is not None:
                return entry
            dt = x.dtype
            if dt in _FAST_DTYPES:                  # array_aval, inlined
                aval = _object_new(ShapedArray)
                aval.shape, aval.dtype, aval.weak_type = x.shape, dt, x.__class__ is WEAK_ARRAY
            else:
                aval = ShapedArray(x.shape, dt, x.__class__ is WEAK_ARRAY)
            v = _object_new(Var)
            v.aval, v.hint = aval, None
            self.constvars.append(v)
            self.consts.append(x)
            entry = self._lifted[id(x)] = (v, aval, x)
            return entry
        if isinstance(x, Tracer):
            if x._trace is not self:
                return self._lift(x)
            return x.ir_var, x.aval, x.val
        if isinstance(x, (bool, int, float, complex)):
            lit = Literal(x)
            return lit, lit.aval, x
        if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
            lit = Literal(x, ShapedArray((), x.dtype, x.__class__ is WEAK_ARRAY))
            return lit, lit.aval, x
        return self._lift(x)

    def process(self, prim, args, params):
        atoms, avals, vals = [], [], []
        known = True
        for x in args:
            if isinstance(x, Tracer) and x._trace is self:   # the common case, inlined
                atoms.append(x.ir_var)
                avals.append(x.aval)
                v = x.val
            else:
                a, av, v = self.atom(x)
                atoms.append(a)
                avals.append(av)
            vals.append(v)
            if v is None:
                known = False
        out_avals, out_vals = prim.abstract_eval(*avals, **params), None
        # collectives, effects (and calls/loops whose body holds one) are not run while tracing
        if known and not getattr(prim, "defer_concrete", False) and not (prim.subjaxpr_params and (
                body_defers_concrete(prim, params) or sub_effects(prim, params))):
            out_vals = quiet_call(prim.impl, *vals, **params)   # IEEE values, no warning
        # ---- tools: the user's line, only while debug_nans / stage dumps are on (config)
        src = _source_line() if CAPTURE_SOURCE else None
        if not prim.multiple_results:
            v = Var(out_avals)
            self.eqns.append(_new_eqn(prim, atoms, [v], params, src))
            return Tracer(self, out_avals, v, None if out_vals is None else np.asarray(out_vals))
        outs = []
        outvars = []
        for i, aval in enumerate(out_avals):
            v = Var(aval)
            outvars.append(v)
            outs.append(Tracer(self, aval, v,
                               None if out_vals is None else np.asarray(out_vals[i])))
        self.eqns.append(_new_eqn(prim, atoms, outvars, params, src))
        return outs

    def to_jaxpr(self, outs):
        out_atoms = [self.atom(o)[0] for o in outs]
        return checked(Jaxpr(self.constvars, self.invars, self.eqns, out_atoms), self.name)


class SymbolicTrace(Trace):
    """A trace none of whose tracers ever carries a value (linearize's tangents):
    single-result equations are recorded with no value bookkeeping."""
    __slots__ = ()

    def process(self, prim, args, params):
        """Record only (nothing is known); ``Trace.process`` for multiple results or with
        source capture. Built field by field: reverse mode records every tangent
        operation through here."""
        if prim.multiple_results or CAPTURE_SOURCE:
            return Trace.process(self, prim, args, params)
        if len(args) == 2:          # binary, unrolled: most tangent operations
            x, y = args
            if isinstance(x, Tracer) and x._trace is self:
                ax, vx = x.ir_var, x.aval
            else:
                ax, vx, _ = self.atom(x)
            if isinstance(y, Tracer) and y._trace is self:
                ay, vy = y.ir_var, y.aval
            else:
                ay, vy, _ = self.atom(y)
            atoms = [ax, ay]
            out_aval = prim.abstract_eval(vx, vy, **params)
        else:
            atoms, avals = [], []
            for x in args:
                if isinstance(x, Tracer) and x._trace is self:
                    atoms.append(x.ir_var)
                    avals.append(x.aval)
                else:
                    a, av, _ = self.atom(x)
                    atoms.append(a)
                    avals.append(av)
            out_aval = prim.abstract_eval(*avals, **params)
        v = _object_new(Var)
        v.aval, v.hint = out_aval, None
        e = _object_new(Eqn)
        e.primitive, e.inputs, e.outvars, e.params, e.source = prim, atoms, [v], params, None
        self.eqns.append(e)
        t = _object_new(Tracer)
        t._trace = self
        t.aval = out_aval
        t.ir_var = v
        t.val = None
        return t


class Tracer:
    """A value being traced: its type (``aval``), its Var, and its value if known."""
    __slots__ = ("_trace", "aval", "ir_var", "val", "__weakref__")
    # numpy's protocols: functrans.numpy_dispatch installs __array_ufunc__ and
    # __array_function__ (numpy functions run their functrans.numpy twin); until then
    # numpy defers to the reflected operators
    __array_ufunc__ = None
    __array_priority__ = 1000

    def __init__(self, trace, aval, var, val=None):
        self._trace = trace
        self.aval = aval
        self.ir_var = var
        self.val = val

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a scalar tracer)")
        return self.aval.shape[0]

    def concrete(self, what: str, error=ConcretizationError):
        if not self._trace.alive:
            raise leaked_tracer_error(self)
        if self.val is None:
            raise error(
                f"{what} needs a concrete value, but this is a traced value "
                f"{self.aval.str_short()} (at {user_location()}).\n"
                "Its value is not known while tracing under jit (or a batched value under vmap). "
                "Use lax.cond / lax.switch / lax.while_loop or fnp.where instead of Python "
                "control flow, or mark the argument static with static_argnums.")
        return self.val

    def __bool__(self):
        return bool(self.concrete("bool() (an `if`, `while`, `and`/`or` on a traced value)",
                                  TracerBoolConversionError))

    def __int__(self):
        # int() of a float is piecewise constant: derivative zero is the right one
        return int(self.concrete("int()"))

    def number(self, what: str):
        """The known value for a conversion that leaves the library (float(), .item()):
        refused where it would detach a value that a trace differentiates."""
        val = self.concrete(what)
        if dtype_kind(self.aval.dtype) in "fc" and would_detach(self):
            raise detached_conversion_error(what, self)
        return val

    def __float__(self):
        return float(self.number("float()"))

    def __complex__(self):
        return complex(self.number("complex()"))

    def __index__(self):
        return int(self.concrete("using a traced value as an index",
                                 TracerIntegerConversionError))

    def __round__(self, ndigits=None):
        # as JAX: an array (fnp.round), not a Python int
        return self.round(0 if ndigits is None else ndigits)

    def __array__(self, dtype=None, copy=None):
        # never the concrete value, even when known: numpy's result would be detached
        # from the trace (a gradient silently zero)
        if not self._trace.alive:
            raise leaked_tracer_error(self)
        raise conversion_error("numpy.asarray / numpy.array (the __array__ protocol)", self)

    def item(self, *args):
        return np.asarray(self.number(".item()")).item(*args)

    def tolist(self):
        return np.asarray(self.number(".tolist()")).tolist()

    def tobytes(self, order="C"):
        return np.asarray(self.number(".tobytes()")).tobytes(order)

    def __hash__(self):
        raise TypeError(f"unhashable: a traced value {self.aval.str_short()} "
                        "(static arguments must be hashable Python values)")

    def __repr__(self):
        known = "" if self.val is None else f" val={np.array2string(np.asarray(self.val), threshold=6)}"
        return f"Traced<{self.aval.str_short()}>{known} (level {self._trace.level})"


def would_detach(t: Tracer) -> bool:
    """Whether a Python number of ``t``'s value would lose a dependence that a trace
    differentiates: its trace (or the nearest enclosing one that decides) differentiates
    and, in a recorded trace, ``t`` depends on an inexact input or an outer tracer through
    equations that carry derivatives (not only on constants, nor through stop_gradient)."""
    trace, stack = t._trace, _CONTEXT.stack
    level, detaches = trace.level, trace.detaches
    while detaches is None and 0 < level <= len(stack):
        level -= 1
        detaches = stack[level].detaches
    if not detaches or t.ir_var is None:   # linearize's tracers exist where a tangent flows
        return bool(detaches)
    dep = {v for v in trace.invars if dtype_kind(v.aval.dtype) in "fc"}
    dep.update(v for v, c in zip(trace.constvars, trace.consts)
               if isinstance(c, Tracer) and dtype_kind(v.aval.dtype) in "fc")
    for e in trace.eqns:
        if not (e.primitive.not_differentiable or e.primitive.name == "stop_gradient") \
                and any(type(a) is Var and a in dep for a in e.inputs):
            dep.update(v for v in e.outvars if dtype_kind(v.aval.dtype) in "fc")
    return t.ir_var in dep


def bind(prim, *args, **params):
    """Apply ``prim``: eagerly when no argument is a tracer, else record it."""
    trace = None
    for x in args:
        if isinstance(x, Tracer):
            t = x._trace
            if not t.alive:
                raise leaked_tracer_error(x)
            if trace is None or t.level > trace.level:
                trace = t
    if prim.has_effects or (_CONTEXT.stack and (prim.subjaxpr_params or prim.call_param)
                            and sub_effects(prim, params)):            # EffectPrimitive
        inner = next((t for t in reversed(_CONTEXT.stack) if type(t) is Trace), None)
        trace = trace if inner is None or (trace and trace.level > inner.level) else inner
    elif _CONTEXT.stagers and (trace is None or _CONTEXT.stagers[-1].level > trace.level):
        trace = _CONTEXT.stagers[-1]    # in the cond branch: see trace_to_jaxpr
    if trace is None:
        if WEAK_BIND and (_weak_operands(args) or params.get("weak_type")) and not (
                INTERNAL.on or prim.has_effects):   # a weak result's type: see weak_values
            out = WEAK_BIND[0](prim, args, params)
            if out is not None:
                return out
        token = QUIET_VAR.set(QUIET)   # numpy's IEEE results, without its warnings
        try:
            if TRACE_ON:       # ft.profiler.trace: the call as one timed event
                t0 = trace_now()
                out = prim.impl(*args, **params)
                trace_add(prim.name, "eager", t0, trace_now())
            else:
                out = prim.impl(*args, **params)
        finally:
            QUIET_VAR.reset(token)
        if EAGER_CHECK:        # debug_nans / debug_infs while on (functrans.debug)
            EAGER_CHECK[0](prim.name, out)
        if prim.multiple_results:
            if INTERNAL.on:     # a list: wrap() would stack the outputs into one array
                return [wrap(o) for o in out]
            return [wrap(unshared(o, args)) for o in out]
        if INTERNAL.on:
            return out if type(out) is np.ndarray else wrap(out)
        if type(out) is np.ndarray:           # wrap(out), inlined for the common case
            return unshared(out, args).view(ARRAY_CLASS[0])
        return wrap(out)
    return trace.process(prim, args, params)


def unchanged(x):
    """``x`` returned by an operation that leaves it as it is (a cast to its own dtype, a
    pad of nothing): tracers and Arrays themselves, anything else as a new Array (see
    ``unshared``)."""
    if isinstance(x, (Tracer, ARRAY_CLASS[0])):
        return x
    return wrap(unshared(np.asarray(x), (x,)))


EAGER_CHECK: list = []   # [check(name, result)] of every eager result while a debug_nans is on
WEAK_ARRAY = None         # functrans.weak_values.WeakArray: eager weakly typed arrays


def new_trace(name="trace", symbolic=False) -> Trace:
    # a symbolic trace (no tracer of it ever carries a value: linearize's tangents) records
    # without the value bookkeeping, and its tangents are always staged
    stack = _CONTEXT.stack
    t = (SymbolicTrace if symbolic else Trace)(len(stack), name, staged=symbolic)
    stack.append(t)
    return t


def push_trace(t: Trace) -> Trace:
    """Make ``t`` (a ``Trace`` subclass built with level ``trace_depth()``) this thread's
    innermost trace; ``end_trace(t)`` ends it."""
    stack = _CONTEXT.stack
    assert t.level == len(stack), "a pushed trace's level must be the stack depth"
    stack.append(t)
    return t


def end_trace(t: Trace):
    stack = _CONTEXT.stack
    assert stack and stack[-1] is t, "trace stack out of order"
    stack.pop()
    t.alive = False


def trace_depth() -> int:
    """How many traces this thread is recording (0: eager, as at top level)."""
    return len(_CONTEXT.stack)


def differentiating() -> bool:
    """Whether a trace this thread is recording differentiates (jvp's, linearize's): its
    jaxpr is differentiated while the values it closes over are alive.

    >>> differentiating()
    False
    """
    return any(t.detaches for t in _CONTEXT.stack)


def trace_at_level(level: int) -> Trace:
    """This thread's trace of depth ``level`` (0 is the outermost)."""
    return _CONTEXT.stack[level]


def bind_outermost(prim, args, params):
    """Apply ``prim`` in the outermost trace of this thread (eagerly if none; inside
    ``own_constants``, the outermost since): for values that depend on no input (constants,
    iotas), so that they stay constants of the outermost jaxpr, not inputs of inner ones.

    >>> from functrans.primitives.structural import iota_p
    >>> bind_outermost(iota_p, (), dict(dtype="int32", shape=(3,), dimension=0))
    Array([0, 1, 2], dtype=int32)
    """
    t = outermost_trace()
    return bind(prim, *args, **params) if t is None else t.process(prim, args, params)


def outermost_trace():
    """The trace ``bind_outermost`` records in (None: eager)."""
    return (_CONTEXT.stack[_CONTEXT.floor:] or [None])[0]


class own_constants:
    """Context: what is traced in it (a body to cache) records its own constants."""
    def __enter__(self):
        self.prev, _CONTEXT.floor = _CONTEXT.floor, len(_CONTEXT.stack)

    def __exit__(self, *exc):
        _CONTEXT.floor = self.prev


def axis_frames() -> list:
    """This thread's vmap axis frames, innermost last (the list itself: transforms.vmap
    pushes and pops them)."""
    return _CONTEXT.axis_frames


def trace_to_jaxpr(fun, in_avals, in_vals=None, name="trace", staged=False, detaches=None,
                   stages_closures=False, in_sources=None):
    """Trace ``fun`` over flat inputs. Returns (jaxpr, consts, out_vals).

    ``consts`` are the outer objects behind the jaxpr's constvars (arrays or
    tracers of outer traces); ``out_vals`` the concrete outputs where known.
    ``staged``, ``detaches``, ``in_sources`` (``sources``): see ``Trace``. ``stages_closures``:
    a cond branch records what closed-over values compute (as JAX; untaken, it runs nothing).
    """
    trace = new_trace(name)
    trace.staged, trace.detaches, trace.sources = staged, detaches, in_sources
    _CONTEXT.stagers += [trace] * stages_closures
    try:
        vals = [None] * len(in_avals) if in_vals is None else in_vals
        outs = list(fun(*[trace.new_arg(a, v) for a, v in zip(in_avals, vals)]))
        out_vals = [concrete_value(o) for o in outs]
        jaxpr = trace.to_jaxpr(outs)
    finally:
        del _CONTEXT.stagers[len(_CONTEXT.stagers) - stages_closures:]
        end_trace(trace)
    return jaxpr, trace.consts, out_vals


def concrete_value(x):
    """The concrete numpy value of x (array, scalar or tracer), or None if unknown."""
    return x.val if isinstance(x, Tracer) else x


def get_aval(x) -> ShapedArray:
    """The abstract value of any argument: tracer, array, or Python scalar."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, np.ndarray):
        return array_aval(x)
    if getattr(x, "__device_array__", False):   # backends.cuda.DeviceArray: no host copy
        return ShapedArray(x.shape, x.dtype)
    try:
        return aval_of(x)
    except TypeError:
        raise TypeError(f"argument of type {type(x).__name__} is not a valid array "
                        f"(got {x!r:.60}); pass numbers or arrays") from None


def eval_jaxpr(jaxpr: Jaxpr | ClosedJaxpr, consts: list, args: list) -> list:
    """Evaluate a jaxpr by binding each equation, so the evaluation can itself be traced.
    ``consts``: values of its constvars (after a ``ClosedJaxpr``'s own); ``args``: its inputs.

    >>> from jaxpr_ir import ShapedArray
    >>> j, c, _ = trace_to_jaxpr(lambda x: [x], [ShapedArray((), "float64")])
    >>> eval_jaxpr(j, c, [3.0])
    [3.0]
    """
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, list(jaxpr.consts) + list(consts)
    return evaluate(jaxpr, consts, args, _bind_eqn)


def _bind_eqn(eqn, ins):
    return bind(eqn.primitive, *ins, **eqn.params)
