"""The IR's data types: Var, Literal, Eqn, Jaxpr, ClosedJaxpr and the Primitive base.

A jaxpr is closed, typed and first order: every value is a ``Var`` (with a
``ShapedArray`` type) or a scalar ``Literal``; every equation applies one
primitive to inputs and defines fresh output vars.

>>> from jaxpr_ir.dtypes import ShapedArray, float64
>>> a = Var(ShapedArray((3,), float64))
>>> j = Jaxpr([], [a], [], [a])
>>> print(j)
{ lambda ; a:f64[3]. let  in (a,) }
"""
from __future__ import annotations

import numpy as np

from .dtypes import ShapedArray, aval_of

# The text forms of equations and jaxprs. The printer (a module above this one, imported
# by the package before anything can print) installs them with ``set_printer``, so these
# types print without this module importing it.
_PRINTERS: dict = {}


def set_printer(*, eqn, jaxpr) -> None:
    """Install the functions that give ``Eqn`` and ``Jaxpr`` their text (``str``).

    >>> import jaxpr_ir.printer as p
    >>> set_printer(eqn=p.pp_eqn, jaxpr=p.pp_jaxpr)
    """
    _PRINTERS["eqn"] = eqn
    _PRINTERS["jaxpr"] = jaxpr


class Var:
    """A value defined once in a jaxpr: as an input, a constant or an equation output."""
    __slots__ = ("aval", "hint")

    def __init__(self, aval: ShapedArray, hint: str | None = None):
        self.aval = aval
        self.hint = hint  # the name the parser read, kept only for error messages

    def __repr__(self):
        return f"Var({self.hint or hex(id(self))[-4:]}:{self.aval})"


class Literal:
    """A scalar constant written inline in an equation, e.g. ``2.0:f32[]``."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray | None = None):
        if aval is None:
            aval = aval_of(val)
        if aval.shape != ():
            raise TypeError(f"a Literal must be a scalar, got shape {aval.shape}")
        self.aval = aval
        self.val = np.asarray(val, dtype=aval.dtype)[()]

    def __repr__(self):
        return f"Literal({self.val!r}:{self.aval})"


class Eqn:
    """``outvars = primitive[params] inputs``; ``source`` is the user's file:line, if known."""
    __slots__ = ("primitive", "inputs", "outvars", "params", "source")

    def __init__(self, primitive, inputs, outvars, params, source=None):
        self.primitive = primitive
        self.inputs = list(inputs)
        self.outvars = list(outvars)
        self.params = dict(params)
        self.source = source

    def __repr__(self):
        return _PRINTERS["eqn"](self)


class Jaxpr:
    """constvars; invars. let eqns in outvars -- a straight-line typed program."""
    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        return _PRINTERS["jaxpr"](self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""
    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts=()):
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(f"ClosedJaxpr: {len(jaxpr.constvars)} constvars but {len(consts)} consts")
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self):
        return self.jaxpr.in_avals

    @property
    def out_avals(self):
        return self.jaxpr.out_avals

    @property
    def eqns(self):
        return self.jaxpr.eqns

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__



class DeferredJaxpr:
    """A ClosedJaxpr built on first use: ``force()`` calls ``make()``, which returns
    ``(jaxpr, keep)``, and keeps the jaxpr when ``keep`` (else builds it again next
    time: one that holds values of a trace that will end). A param may hold one where
    building the jaxpr runs user code that only some transform needs (a custom_jvp rule,
    traced when its equation is differentiated, as JAX): passes and the type checker
    leave it alone, the printer prints it built.

    >>> d = DeferredJaxpr(lambda: ("built", True), "demo")
    >>> d.forced, d.force(), d.forced
    (False, 'built', True)
    """
    __slots__ = ("_make", "_value", "label")

    def __init__(self, make, label: str = "jaxpr"):
        self._make, self._value, self.label = make, None, label

    @property
    def forced(self) -> bool:
        return self._value is not None

    def force(self):
        if self._value is not None:
            return self._value
        value, keep = self._make()
        if keep:
            self._value, self._make = value, None
        return value

    def __repr__(self):
        return f"<deferred {self.label}{'' if self._value is None else ' (built)'}>"


# name -> Primitive; the parser and checker find primitives here.
primitives: dict = {}


class Primitive:
    """An operation of the IR and, in one place, every rule about it.

    The IR itself uses only ``name``, ``multiple_results``, ``abstract_eval`` (the
    shape/dtype rule, used by the type checker) and the params that hold bodies
    (``subjaxpr_params``, ``call_param``); ``impl`` (numpy) is what the reference
    interpreter runs. The IR knows nothing of differentiation or batching: the
    transforms' per-primitive rules live on ``functrans``'s subclass.

    >>> p = Primitive("my_neg")
    >>> p.name
    'my_neg'
    """

    def __init__(self, name: str, multiple_results: bool = False):
        if name in primitives:
            raise ValueError(f"primitive {name!r} is already registered")
        self.name = name
        self.multiple_results = multiple_results
        self.abstract_eval = None
        self.impl = None
        self.subjaxpr_params = ()        # names of params that hold ClosedJaxprs (or tuples of them)
        self.has_effects = False         # e.g. debug printing: never removed by DCE or CSE
        self.call_param = None           # for call-like primitives (jit): the param holding the body
        self.transcendental = False      # cost model: counted in 'transcendentals', not flops
        primitives[name] = self

    def __repr__(self):
        return self.name
