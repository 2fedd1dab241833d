"""The pretty printer: the first debugging tool and a test oracle.

Output follows JAX's layout; ``jaxpr_ir.parse`` reads it back exactly.
Vars are named a, b, ..., z, ba, bb, ... in order of definition, one counter for
the whole text (sub-jaxprs included) so that no name is ever reused.

Param values print as: ints, floats (``repr``), True/False/None, dtypes by
numpy name (``float32``), strings bare when they are plain identifiers that
cannot be mistaken for a dtype or keyword (quoted otherwise), tuples as
``(1, 2)`` / ``(1,)``, and sub-jaxprs as nested ``{ lambda ... }`` blocks.
"""
from __future__ import annotations

import re

import numpy as np

from .core import ClosedJaxpr, DeferredJaxpr, Jaxpr, Literal, Var, set_printer
from .dtypes import SUPPORTED

_DTYPE_NAMES = frozenset(str(d) for d in SUPPORTED)
_KEYWORDS = frozenset({"True", "False", "None", "lambda", "let", "in", "inf", "nan", "infj", "nanj"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")


def _var_name(n: int) -> str:
    # bijective base-26 with JAX's flavour: a..z, ba..bz, ca..
    s = ""
    while True:
        s = chr(ord("a") + n % 26) + s
        n //= 26
        if n == 0:
            return s


class VarNames:
    """The printed names of a jaxpr's variables (a, b, ..., z, ba, ...), given in order of
    definition; share one between printing a jaxpr and its equations to name them alike."""

    def __init__(self):
        self.names = {}
        self.count = 0  # not len(names): a shared sub-jaxpr printed twice re-defines its vars

    def define(self, v: Var) -> str:
        name = _var_name(self.count)
        self.count += 1
        self.names[v] = name
        return name

    def use(self, x) -> str:
        if isinstance(x, Literal):
            return f"{format_scalar(x.val)}:{x.aval.str_short()}"
        try:
            return self.names[x]
        except KeyError:
            return f"<undefined {x!r}>"


def format_scalar(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (complex, np.complexfloating)):
        return repr(complex(v)).replace(" ", "")
    return repr(float(v))


def format_param(v, names: VarNames, indent: int) -> str:
    if isinstance(v, DeferredJaxpr):      # printed as what it stands for (built now)
        try:
            v = v.force()
        except Exception as e:            # user code (a rule) failing: shown, not raised
            return f"<{v.label}: not traceable: {type(e).__name__}: {e}>".replace("\n", " ")
    if isinstance(v, (ClosedJaxpr, Jaxpr)):
        return format_jaxpr(v, names, indent + 2)
    if v is None or isinstance(v, (bool, np.bool_)):
        return str(bool(v)) if v is not None else "None"
    if isinstance(v, (int, float, complex, np.integer, np.floating, np.complexfloating)):
        return format_scalar(v)
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return str(np.dtype(v))
    if isinstance(v, str):
        if _IDENT.match(v) and v not in _DTYPE_NAMES and v not in _KEYWORDS:
            return v
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, (tuple, list)):
        items = [format_param(x, names, indent) for x in v]
        if any("\n" in s for s in items):
            pad = " " * (indent + 2)
            return "(\n" + "".join(f"{pad}{s}\n" for s in items) + " " * indent + ")"
        if len(items) == 1:
            return f"({items[0]},)"
        return "(" + ", ".join(items) + ")"
    raise TypeError(f"cannot print param value of type {type(v).__name__}: {v!r:.60}")


def pp_eqn(eqn, names: VarNames | None = None, indent: int = 0) -> str:
    names = names or VarNames()
    ins = " ".join(names.use(x) for x in eqn.inputs)
    params = ""
    if eqn.params:
        parts = [f"{k}={format_param(eqn.params[k], names, indent)}" for k in sorted(eqn.params)]
        params = "[" + " ".join(parts) + "]"
    outs = " ".join(f"{names.define(v)}:{v.aval.str_short()}" for v in eqn.outvars)
    rhs = f"{eqn.primitive.name}{params}"
    return f"{outs} = {rhs} {ins}".rstrip() if outs else f"_ = {rhs} {ins}".rstrip()


def format_jaxpr(j, names: VarNames, indent: int = 0) -> str:
    """A Jaxpr or ClosedJaxpr as text, defining its variables in ``names`` (so that the
    caller can name them afterwards, e.g. in a compile plan)."""
    if isinstance(j, ClosedJaxpr):
        j = j.jaxpr
    consts = " ".join(f"{names.define(v)}:{v.aval.str_short()}" for v in j.constvars)
    ins = " ".join(f"{names.define(v)}:{v.aval.str_short()}" for v in j.invars)
    pad = " " * (indent + 4)
    body = "".join(f"\n{pad}{pp_eqn(e, names, indent + 4)}" for e in j.eqns)
    outs = ", ".join(names.use(v) for v in j.outvars)
    outs = f"({outs},)" if len(j.outvars) == 1 else f"({outs})"
    head = f"{{ lambda {consts}; {ins}. let" if consts else f"{{ lambda ; {ins}. let"
    if body:
        return f"{head}{body}\n{' ' * (indent + 2)}in {outs} }}"
    return f"{head}  in {outs} }}"


def pp_jaxpr(jaxpr) -> str:
    """Print a Jaxpr or ClosedJaxpr in JAX's text form."""
    return format_jaxpr(jaxpr, VarNames(), 0)


set_printer(eqn=pp_eqn, jaxpr=pp_jaxpr)
