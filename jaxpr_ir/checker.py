"""The type checker: nothing reaches a backend (or leaves a pass) unchecked.

``check(jaxpr)`` re-derives every equation's output types with its primitive's
``abstract_eval`` rule and compares them with the declared ones, and checks
scoping: every var is defined once, before it is used, and sub-jaxprs see only
their own vars. A failure raises ``TypeCheckError`` naming the equation in its
printed form, with the names the full printout would give it.

>>> from jaxpr_ir import Jaxpr, Var, ShapedArray, check
>>> a = Var(ShapedArray((3,), "float64"))
>>> check(Jaxpr([], [a], [], [a])) is None
True
"""
from __future__ import annotations

import inspect
import itertools

import numpy as np

from .core import ClosedJaxpr, Jaxpr, Literal, Primitive, Var, primitives
from .dtypes import ShapedArray
from .printer import VarNames, pp_eqn

__all__ = ["check", "TypeCheckError"]

_MAX_EQN_TEXT = 200


class TypeCheckError(Exception):
    """An ill-typed or ill-scoped jaxpr; ``eqn`` is the equation at fault (or None)."""

    def __init__(self, msg: str, eqn=None):
        super().__init__(msg)
        self.eqn = eqn


def _short(text: str) -> str:
    text = " ".join(text.split())   # nested sub-jaxprs print on several lines
    return text if len(text) <= _MAX_EQN_TEXT else text[:_MAX_EQN_TEXT - 3] + "..."


def _jaxprs_in(value):
    """The Jaxprs/ClosedJaxprs in a param value, in printing order."""
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _jaxprs_in(v)


def _same_type(a, b) -> bool:
    # weak types are a promotion hint, not part of the value's type
    return tuple(a.shape) == tuple(b.shape) and np.dtype(a.dtype) == np.dtype(b.dtype)


def _aval_str(a) -> str:
    return a.str_short() if isinstance(a, ShapedArray) else repr(a)


_signatures: dict = {}


def _signature(fn):
    try:
        return _signatures[fn]
    except KeyError:
        pass
    except TypeError:            # unhashable callable
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):   # builtins without a signature
        sig = None
    _signatures[fn] = sig
    return sig


class _Checker:
    """One pass over a program. With ``naming`` off (``check``'s first pass) it checks the
    same things but names no variable and skips the sub-jaxprs it would only name: the
    printer's names took half its time (grad of grad of hyp2f1: 110 -> 58 ms) and matter
    only in a message, so ``check`` runs a naming pass only to report a failure."""

    def __init__(self, naming: bool = True):
        self.naming = naming
        # names as pp_jaxpr of the whole program would give them, for error messages
        self.names = VarNames()
        self.defined: set = set()      # every Var defined anywhere so far
        self.checked: dict = {}        # id -> Jaxpr already checked (shared sub-jaxprs)

    # ------------------------------------------------------------ messages
    def names_state(self):
        """A cheap snapshot of the printer's naming state (dict size and any counters)."""
        extra = {k: v for k, v in vars(self.names).items() if k != "names"}
        return len(self.names.names), extra

    def eqn_text(self, eqn, state) -> str:
        if state is None:          # a pass without names: check() reruns one with them
            return str(getattr(eqn.primitive, "name", eqn.primitive))
        n_names, extra = state
        names = VarNames()
        vars(names).update(extra)
        names.names = dict(itertools.islice(self.names.names.items(), n_names))
        try:
            return _short(pp_eqn(eqn, names))
        except Exception:   # an eqn too broken to print: still say which primitive
            return _short(f"{getattr(eqn.primitive, 'name', eqn.primitive)} ...")

    def var_name(self, v) -> str:
        name = self.names.names.get(v) or v.hint
        return f"'{name}' ({v.aval})" if name else repr(v)

    # ------------------------------------------------------------- scoping
    def define(self, v, env: set, fail):
        if not isinstance(v, Var):
            fail(f"{v!r} is defined but is not a Var")
        if not isinstance(v.aval, ShapedArray):
            fail(f"{v!r} has type {v.aval!r}, not a ShapedArray")
        if v in self.defined:
            fail(f"variable {self.var_name(v)} is defined twice")
        self.defined.add(v)
        env.add(v)

    def check_atom(self, x, env: set, fail):
        if isinstance(x, Literal):
            aval = x.aval
            if not isinstance(aval, ShapedArray) or aval.shape != ():
                fail(f"literal {x!r} must have a scalar type, not {_aval_str(aval)}")
            val = np.asarray(x.val)
            if val.shape != () or val.dtype != aval.dtype:
                fail(f"literal {x!r} holds a {val.dtype}{list(val.shape)} value "
                     f"but is typed {aval.str_short()}")
        elif isinstance(x, Var):
            if x not in env:
                where = ("is used before it is defined" if x not in self.defined else
                         "is not defined in this jaxpr (a sub-jaxpr sees only its own vars)")
                fail(f"variable {self.var_name(x)} {where}")
        else:
            fail(f"{x!r} is neither a Var nor a Literal")

    # -------------------------------------------------------------- jaxprs
    def check_closed(self, cj, fail):
        if isinstance(cj, ClosedJaxpr):
            j = cj.jaxpr
            if len(cj.consts) != len(j.constvars):
                fail(f"{len(j.constvars)} constvars but {len(cj.consts)} consts")
            for k, (v, c) in enumerate(zip(j.constvars, cj.consts)):
                shape, dtype = np.shape(c), getattr(c, "dtype", None)
                if tuple(shape) != v.aval.shape or (dtype is not None and dtype != v.aval.dtype):
                    fail(f"const {k} has shape {tuple(shape)} and dtype {dtype} "
                         f"but its constvar is typed {v.aval.str_short()}")
        elif isinstance(cj, Jaxpr):
            j = cj
        else:
            fail(f"expected a Jaxpr or ClosedJaxpr, got {type(cj).__name__}")
        if id(j) in self.checked:
            # the same sub-jaxpr object may be shared by several equations (a cached
            # jit body); it is one scope, checked once, but printed once per use
            if self.naming:
                self.name_only(j)
            return
        self.checked[id(j)] = j
        self.check_jaxpr(j)

    def check_jaxpr(self, j: Jaxpr):
        env: set = set()
        for v in itertools.chain(j.constvars, j.invars):
            self.define(v, env, self.fail_top)
            if self.naming:
                self.names.define(v)
        for eqn in j.eqns:
            self.check_eqn(eqn, env)
        for k, x in enumerate(j.outvars):
            self.check_atom(x, env, lambda r: self.fail_top(f"output {k}: {r}"))

    @staticmethod
    def fail_top(reason):
        raise TypeCheckError(f"in jaxpr signature: {reason}")

    def name_only(self, j):
        """Advance the names exactly as the printer would over ``j``, checking nothing."""
        j = j.jaxpr if isinstance(j, ClosedJaxpr) else j
        for v in itertools.chain(j.constvars, j.invars):
            self.names.define(v)
        for eqn in j.eqns:
            for key in sorted(eqn.params):
                for sub in _jaxprs_in(eqn.params[key]):
                    self.name_only(sub)
            for v in eqn.outvars:
                self.names.define(v)

    # ----------------------------------------------------------- equations
    def check_eqn(self, eqn, env: set):
        naming = self.naming
        state = self.names_state() if naming else None   # the message is only built on failure

        def fail(reason, cause=None):
            raise TypeCheckError(f"in equation '{self.eqn_text(eqn, state)}': {reason}",
                                 eqn) from cause

        prim = eqn.primitive
        if not isinstance(prim, Primitive) or primitives.get(prim.name) is not prim:
            fail(f"primitive {getattr(prim, 'name', prim)!r} is not registered")
        for k, x in enumerate(eqn.inputs):
            self.check_atom(x, env, lambda r: fail(f"input {k}: {r}"))

        # sub-jaxprs, visited in the printer's order so that names stay aligned
        sub_keys = set(prim.subjaxpr_params) | ({prim.call_param} if prim.call_param else set())
        for key in sorted(eqn.params if naming else sub_keys.intersection(eqn.params)):
            for sub in _jaxprs_in(eqn.params[key]):
                if key not in sub_keys:
                    self.name_only(sub)
                    continue
                try:
                    self.check_closed(sub, lambda r: fail(f"sub-jaxpr {key!r}: {r}"))
                except TypeCheckError as e:
                    if e.eqn is eqn:
                        raise
                    raise TypeCheckError(f"{e} (inside param {key!r} of equation "
                                         f"'{self.eqn_text(eqn, state)}')",
                                         e.eqn or eqn) from e
        for v in eqn.outvars:
            self.define(v, env, fail)
            if naming:
                self.names.define(v)

        if prim.call_param:
            self.check_call_signature(eqn, fail)
        self.check_rule(eqn, fail)

    def check_call_signature(self, eqn, fail):
        key = eqn.primitive.call_param
        body = eqn.params.get(key)
        if not isinstance(body, (Jaxpr, ClosedJaxpr)):
            fail(f"param {key!r} must be the called jaxpr, got {type(body).__name__}")
        for what, ours, theirs in (("inputs", eqn.inputs, body.in_avals),
                                   ("outputs", eqn.outvars, body.out_avals)):
            if len(ours) != len(theirs):
                fail(f"called jaxpr {key!r} has {len(theirs)} {what} "
                     f"but the equation has {len(ours)}")
            for k, (x, a) in enumerate(zip(ours, theirs)):
                if not _same_type(x.aval, a):
                    fail(f"{what[:-1]} {k} is {x.aval.str_short()} but the called "
                         f"jaxpr {key!r} expects {_aval_str(a)}")

    def check_rule(self, eqn, fail):
        prim, params = eqn.primitive, eqn.params
        rule = prim.abstract_eval
        if rule is None:
            if prim.call_param:
                return   # the body's signature, checked above, is the rule
            fail(f"primitive {prim.name!r} has no abstract_eval rule to check against")
        in_avals = [x.aval for x in eqn.inputs]
        try:
            out = rule(*in_avals, **params)
        except Exception as e:   # any rule failure is a type error of this equation
            # binding the signature says which arity or param is wrong; only on failure
            # (a third of the checker's time when done for every equation)
            sig = _signature(rule)
            if sig is not None:
                try:
                    sig.bind(*in_avals, **params)
                except TypeError as bad:
                    fail(f"wrong number of inputs ({len(in_avals)}) or params for "
                         f"{prim.name!r}: {bad}")
            fail(f"{prim.name!r} rejects its inputs "
                 f"({', '.join(_aval_str(a) for a in in_avals)}): {type(e).__name__}: {e}", e)
        if prim.multiple_results:
            if not isinstance(out, (list, tuple)):
                fail(f"abstract_eval of multiple-results primitive {prim.name!r} "
                     f"returned {type(out).__name__}, not a list")
            outs = list(out)
        else:
            outs = [out]
        if len(outs) != len(eqn.outvars):
            fail(f"{prim.name!r} produces {len(outs)} outputs but the equation "
                 f"declares {len(eqn.outvars)}")
        for k, (a, v) in enumerate(zip(outs, eqn.outvars)):
            if not (hasattr(a, "shape") and hasattr(a, "dtype")):
                fail(f"abstract_eval of {prim.name!r} returned {a!r}, not a ShapedArray")
            if not _same_type(a, v.aval):
                fail(f"output {k} is declared {v.aval.str_short()} but {prim.name!r} "
                     f"gives {_aval_str(a)}")


def check(jaxpr_or_closed) -> None:
    """Type-check a Jaxpr or ClosedJaxpr; raise ``TypeCheckError`` or return None.

    >>> from jaxpr_ir import Jaxpr, Var, ShapedArray
    >>> a, b = Var(ShapedArray((), "float64")), Var(ShapedArray((), "float64"))
    >>> check(Jaxpr([], [a], [], [b]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    jaxpr_ir.checker.TypeCheckError: in jaxpr signature: output 0: variable ... is used before ...
    """
    fast = _Checker(naming=False)
    try:
        fast.check_closed(jaxpr_or_closed, fast.fail_top)
        return
    except TypeCheckError as e:
        error = e
    # the same checks in the same order, now naming the vars as the printout does: it
    # raises where the first pass failed, with the message the user reads
    named = _Checker()
    named.check_closed(jaxpr_or_closed, named.fail_top)
    raise error
