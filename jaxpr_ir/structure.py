"""A jaxpr's structure as a hashable value, for caches keyed by "the same program".

``structural_key(jaxpr)`` is a nested tuple that two jaxprs share exactly when the
printer would print them alike: the same equations with the same primitives, params,
types and literals, wired the same way (variables numbered by definition, as the
printer names them). It is built without formatting any text, so a cache lookup costs
one walk over the equations instead of printing the program. It is strictly finer than
the printed text where the text leaves something out: the constants of a nested
``ClosedJaxpr`` param are part of the key (by dtype, shape and a digest of their bytes),
and a literal keeps its dtype and weak type. It is coarser in one place: a deferred
custom_jvp rule (``DeferredJaxpr``) counts by its label, whether built or not.

>>> import numpy as np
>>> from jaxpr_ir import parse
>>> a = parse("{ lambda ; x:f32[3]. let y:f32[3] = neg x in (y,) }")
>>> b = parse("{ lambda ; z:f32[3]. let w:f32[3] = neg z in (w,) }")
>>> c = parse("{ lambda ; x:f64[3]. let y:f64[3] = neg x in (y,) }")
>>> structural_key(a) == structural_key(b), structural_key(a) == structural_key(c)
(True, False)
"""
from __future__ import annotations

import hashlib

import numpy as np

from .core import ClosedJaxpr, DeferredJaxpr, Jaxpr, Literal

__all__ = ["structural_key"]


def structural_key(jaxpr) -> tuple:
    """The hashable structure of a ``Jaxpr`` or ``ClosedJaxpr`` (see the module doc);
    the values of a top-level ``ClosedJaxpr``'s consts are not part of it (they are
    inputs to the compiled program, as the printer leaves them out too)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    return _jaxpr_key(jaxpr, {})


def _jaxpr_key(j: Jaxpr, ids: dict) -> tuple:
    # one numbering for the whole program, sub-jaxprs included, as the printer's names
    head = []
    for v in (*j.constvars, *j.invars):
        ids[v] = len(ids)
        head.append(_aval_key(v.aval))
    eqns = []
    for e in j.eqns:
        ins = tuple([_use(x, ids) for x in e.inputs])
        params = e.params
        pkey = tuple([(k, _param_key(params[k], ids)) for k in sorted(params)]) if params else ()
        outs = []
        for v in e.outvars:
            ids[v] = len(ids)
            outs.append(_aval_key(v.aval))
        eqns.append((e.primitive.name, pkey, ins, tuple(outs)))
    return len(j.constvars), tuple(head), tuple(eqns), tuple([_use(v, ids) for v in j.outvars])


def _use(x, ids: dict):
    n = ids.get(x)
    if n is not None:
        return n
    if isinstance(x, Literal):
        return ("lit", _scalar_key(x.val), _aval_key(x.aval))
    return ("undefined", id(x))      # the checker rejects these later


def _aval_key(a):
    return a.shape, a.dtype, a.weak_type       # values, not the (mutable) aval object


def _scalar_key(v):
    # type tag and exact value: 0.0 and -0.0 differ, nan equals nan (repr), 1 and 1.0 differ
    if isinstance(v, (bool, np.bool_)):
        return ("b", bool(v))
    if isinstance(v, (int, np.integer)):
        return ("i", int(v))
    if isinstance(v, (complex, np.complexfloating)):
        return ("c", repr(complex(v)))
    return ("f", repr(float(v)))


# params that are their own key: the type is part of it, so 1, 1.0 and True differ
_ATOMS = (int, str, bool, type(None))


def _param_key(v, ids: dict):
    t = type(v)
    if t in _ATOMS:
        return t, v
    if t is tuple or t is list:
        if all(type(x) is int for x in v):
            return t, tuple(v)
        return t, tuple([_param_key(x, ids) for x in v])
    if isinstance(v, ClosedJaxpr):
        consts = tuple((c.dtype.str, c.shape, hashlib.sha1(np.ascontiguousarray(c)).hexdigest())
                       for c in map(np.asarray, v.consts))
        return "closed", _jaxpr_key(v.jaxpr, ids), consts
    if isinstance(v, Jaxpr):
        return "jaxpr", _jaxpr_key(v, ids)
    if isinstance(v, DeferredJaxpr):
        # a custom_jvp rule traced only when differentiated: keyed by what it is, built
        # or not (keying it by its jaxpr would trace it; no compiled program reads it,
        # the call being inlined to its primal body first)
        return "deferred", v.label
    if isinstance(v, (bool, np.bool_, int, float, complex, np.integer, np.floating,
                      np.complexfloating)):
        return _scalar_key(v)
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return "dtype", np.dtype(v).str
    if isinstance(v, str):
        return "s", str(v)
    if isinstance(v, (tuple, list)):
        return "seq", tuple([_param_key(x, ids) for x in v])
    # the printer refuses these too: a param no jaxpr text could show
    raise TypeError(f"structural_key: param value of type {type(v).__name__}: {v!r:.60}")
