"""Read the printer's text form back into a ``Jaxpr``.

``parse(pp_jaxpr(j))`` rebuilds a jaxpr that prints identically: the parser is
the printer's inverse, so golden IR texts can be edited by hand, parsed and run.
Any malformed input raises ``ParseError`` (never another exception) with a
1-based line and column and what was expected there.

>>> from jaxpr_ir import parse
>>> j = parse("{ lambda ; a:f64[3]. let  in (a,) }")
>>> j.invars[0].aval
ShapedArray(f64[3])

Grammar (whitespace-insensitive except that an equation's inputs end at the
end of its line, which is how the printer lays them out)::

    jaxpr  := '{' 'lambda' binder* ';' binder* '.' 'let' eqn* 'in' '(' atoms ')' '}'
    binder := NAME ':' type          type := DTYPE '[' dims ']' '{weak}'?
    eqn    := (binder+ | '_') '=' PRIM ('[' (KEY '=' value)* ']')? atom*
    atom   := NAME | scalar ':' type
    value  := number | True | False | None | DTYPE_NAME | WORD | 'quoted' | jaxpr
            | '(' value (',' | newline) ... ')'
"""
from __future__ import annotations

import re

import numpy as np

from .core import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, primitives
from .dtypes import FROM_SHORT, SUPPORTED, ShapedArray, dtype_kind

__all__ = ["parse", "ParseError"]


class ParseError(Exception):
    """Malformed jaxpr text; ``line`` and ``column`` are 1-based."""

    def __init__(self, msg: str, line: int = 0, column: int = 0):
        super().__init__(f"line {line}, column {column}: {msg}")
        self.line = line
        self.column = column
        self.reason = msg


_NUM = r"(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|inf|nan)"
_TOKEN = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<weak>\{weak\})"
    # complex literal as repr() writes it, e.g. (1+2j) or (nan-infj); tried before '('
    rf"|(?P<cplx>\([+-]?{_NUM}[+-]{_NUM}j\))"
    rf"|(?P<num>[+-]{_NUM}j?|(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?j?)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_.]*)"
    r"|(?P<str>'(?:[^'\\]|\\.)*')"
    r"|(?P<punct>[{}()\[\];.:=,])")
_DTYPE_NAMES = {str(d): d for d in SUPPORTED}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LITERAL_WORDS = frozenset({"True", "False", "inf", "nan", "infj", "nanj"})
_MAX_DEPTH = 100   # nested tuples / sub-jaxprs; keeps us far from Python's recursion limit


class _Tok:
    __slots__ = ("kind", "text", "pos", "nl")

    def __init__(self, kind, text, pos, nl):
        self.kind, self.text, self.pos, self.nl = kind, text, pos, nl


def _lex(text: str, err) -> list:
    toks, pos, nl = [], 0, False
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos] == "'":
                err(pos, "a closing quote for this string")
            err(pos, "a token", got=repr(text[pos]))
        kind = m.lastgroup
        if kind == "ws":
            nl = nl or "\n" in m.group()
        else:
            toks.append(_Tok(kind, m.group(), pos, nl))
            nl = False
        pos = m.end()
    toks.append(_Tok("eof", "", len(text), True))
    return toks


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _lex(text, self.error)
        self.i = 0
        self.depth = 0

    # ---------------------------------------------------------------- helpers
    def error(self, pos, expected, got=None):
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        if got is None:
            got = "end of input" if pos >= len(self.text) else repr(self.text[pos:pos + 20])
        raise ParseError(f"expected {expected}, got {got}", line, col)

    def fail_at(self, tok, msg):
        line = self.text.count("\n", 0, tok.pos) + 1
        col = tok.pos - (self.text.rfind("\n", 0, tok.pos) + 1) + 1
        raise ParseError(msg, line, col)

    @property
    def tok(self):
        return self.toks[self.i]

    def peek(self, k=1):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, text, k=0):
        t = self.peek(k)
        return t.kind in ("punct", "word") and t.text == text

    def expect(self, text, what=None):
        t = self.tok
        if not self.at(text):
            self.error(t.pos, what or repr(text), got=_show(t))
        self.i += 1
        return t

    def nested(self):
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            self.fail_at(self.tok, f"nesting deeper than {_MAX_DEPTH} levels")

    # ------------------------------------------------------------------ jaxpr
    def parse_jaxpr(self) -> Jaxpr:
        self.nested()
        self.expect("{", "'{' starting a jaxpr")
        self.expect("lambda", "'lambda'")
        env: dict = {}  # this jaxpr's scope: sub-jaxprs never see enclosing names
        constvars = self.binders(env, ";")
        self.expect(";", "';' ending the constvars")
        invars = self.binders(env, ".")
        self.expect(".", "'.' ending the invars")
        self.expect("let", "'let'")
        eqns = []
        while not (self.at("in") and self.at("(", 1)):
            if self.tok.kind == "eof" or self.at("}"):
                self.error(self.tok.pos, "an equation or 'in (...)'", got=_show(self.tok))
            eqns.append(self.parse_eqn(env))
        self.i += 1
        outvars = self.atom_list(env)
        self.expect("}", "'}' ending the jaxpr")
        self.depth -= 1
        return Jaxpr(constvars, invars, eqns, outvars)

    def binders(self, env, stop) -> list:
        out = []
        while not self.at(stop):
            if not self.at(":", 1):
                self.error(self.tok.pos, f"{stop!r} or another 'name:type'", got=_show(self.tok))
            t, v = self.binder()
            self.bind(env, t, v)
            out.append(v)
        return out

    def binder(self):
        t = self.tok
        if t.kind != "word" or not _NAME.match(t.text) or t.text == "_":
            self.error(t.pos, "a variable name", got=_show(t))
        self.i += 1
        self.expect(":", f"':' and a type after {t.text!r}")
        return t, Var(self.parse_type(), hint=t.text)

    def bind(self, env, t, v):
        if t.text in env:
            self.fail_at(t, f"variable {t.text!r} is defined twice")
        env[t.text] = v

    def parse_type(self) -> ShapedArray:
        t = self.tok
        if t.kind != "word" or t.text not in FROM_SHORT:
            self.error(t.pos, "a dtype such as f32, i64 or bool", got=_show(t))
        self.i += 1
        self.expect("[", "'[' starting a shape")
        dims = []
        while not self.at("]"):
            d = self.tok
            if d.kind != "num" or not d.text.isdigit() or len(d.text) > 18:
                self.error(d.pos, "a dimension (a non-negative integer) or ']'", got=_show(d))
            dims.append(int(d.text))
            self.i += 1
            if not self.at("]"):
                self.expect(",", "',' or ']' in a shape")
        self.i += 1
        weak = self.tok.kind == "weak"
        self.i += weak
        return ShapedArray(tuple(dims), FROM_SHORT[t.text], weak)

    # -------------------------------------------------------------- equations
    def parse_eqn(self, env) -> Eqn:
        outs = []
        if self.at("_") and self.at("=", 1):
            self.i += 1
        else:
            if self.at("="):
                self.error(self.tok.pos, "an equation's outputs ('name:type ...' or '_')",
                           got="'='")
            while not self.at("="):
                if outs and not self.at(":", 1):
                    self.error(self.tok.pos, "'=' or another 'name:type'", got=_show(self.tok))
                outs.append(self.binder())
        self.expect("=", "'=' after an equation's outputs")
        pt = self.tok
        if pt.kind != "word":
            self.error(pt.pos, "a primitive name", got=_show(pt))
        prim = primitives.get(pt.text)
        if prim is None:
            self.fail_at(pt, f"unknown primitive {pt.text!r}")
        self.i += 1
        params = {}
        if self.at("[") and not self.tok.nl:
            params = self.param_list()
        inputs = []
        while not self.end_of_inputs():
            inputs.append(self.atom(env))
        # outputs enter the scope after the inputs: an equation cannot use its own result
        for t, v in outs:
            self.bind(env, t, v)
        return Eqn(prim, inputs, [v for _, v in outs], params)

    def end_of_inputs(self) -> bool:
        t = self.tok
        if t.nl or t.kind == "eof" or self.at("}"):
            return True
        # also lets hand-written one-line jaxprs parse: 'x:...' or '_ =' starts a new equation
        if self.at("in") and self.at("(", 1):
            return True
        if self.at("_") and self.at("=", 1):
            return True
        return t.kind == "word" and t.text not in _LITERAL_WORDS and self.at(":", 1)

    def param_list(self) -> dict:
        self.expect("[")
        params = {}
        while not self.at("]"):
            k = self.tok
            if k.kind != "word":
                self.error(k.pos, "a parameter name or ']'", got=_show(k))
            self.i += 1
            self.expect("=", f"'=' after parameter name {k.text!r}")
            if k.text in params:
                self.fail_at(k, f"parameter {k.text!r} given twice")
            params[k.text] = self.value()
        self.i += 1
        return params

    # ------------------------------------------------------------------ atoms
    def atom_list(self, env) -> list:
        self.expect("(", "'(' starting the output list")
        out = []
        while not self.at(")"):
            out.append(self.atom(env))
            if not self.at(")"):
                self.expect(",", "',' or ')' in the output list")
        self.i += 1
        return out

    def atom(self, env):
        t = self.tok
        if self.at(":", 1):
            self.i += 2
            aval = self.parse_type()
            return self.literal(t, aval)
        if t.kind != "word" or not _NAME.match(t.text):
            self.error(t.pos, "a variable name or a literal such as 1.0:f32[]", got=_show(t))
        self.i += 1
        if t.text not in env:
            self.fail_at(t, f"variable {t.text!r} is used but not defined in this jaxpr")
        return env[t.text]

    def literal(self, t, aval) -> Literal:
        if aval.shape != ():
            self.fail_at(t, f"a literal must be a scalar, got type {aval.str_short()}")
        kind = dtype_kind(aval.dtype)
        v = self.scalar(t)
        ok = {"b": lambda: isinstance(v, bool),
              "i": lambda: type(v) is int, "u": lambda: type(v) is int,
              "f": lambda: type(v) in (int, float),
              "c": lambda: type(v) in (int, float, complex)}[kind]()
        if not ok:
            self.fail_at(t, f"literal {t.text!r} does not fit type {aval.str_short()}")
        if kind in "iu":
            info = np.iinfo(aval.dtype)
            if not info.min <= v <= info.max:
                self.fail_at(t, f"literal {t.text!r} is out of range for {aval.str_short()}")
        try:
            with np.errstate(all="ignore"):
                val = np.asarray(v, dtype=aval.dtype)[()]
                overflow = kind in "fc" and np.isfinite(complex(v)) and not np.isfinite(val)
        except (OverflowError, ValueError):
            overflow = True
        if overflow:
            self.fail_at(t, f"literal {t.text!r} is out of range for {aval.str_short()}")
        return Literal(val, aval)

    def scalar(self, t):
        """A number, True or False from one token."""
        if t.kind == "word" and t.text in ("True", "False"):
            return t.text == "True"
        if t.kind in ("num", "cplx") or (t.kind == "word" and t.text in _LITERAL_WORDS):
            v = _number(t.text)   # None for e.g. an int too long for int()
            if v is not None:
                return v
        self.error(t.pos, "a number, True or False", got=_show(t))

    # ----------------------------------------------------------------- params
    def value(self):
        t = self.tok
        if self.at("{"):
            j = self.parse_jaxpr()
            # a sub-jaxpr with constvars cannot be closed without its consts: keep it bare
            return j if j.constvars else ClosedJaxpr(j, [])
        if self.at("("):
            return self.tuple_value()
        self.i += 1
        if t.kind in ("num", "cplx"):
            return self.scalar(t)
        if t.kind == "str":
            return _unquote(t.text, lambda: self.fail_at(t, "invalid escape in string"))
        if t.kind == "word":
            fixed = {"True": True, "False": False, "None": None}
            if t.text in fixed:
                return fixed[t.text]
            if t.text in _LITERAL_WORDS:       # inf, nan, infj, nanj
                return self.scalar(t)
            if t.text in _DTYPE_NAMES:
                return _DTYPE_NAMES[t.text]
            return t.text
        self.error(t.pos, "a parameter value", got=_show(t))

    def tuple_value(self) -> tuple:
        self.nested()
        self.expect("(")
        items, sep = [], True
        while not self.at(")"):
            if not sep:
                self.error(self.tok.pos, "',' or ')' in a tuple", got=_show(self.tok))
            items.append(self.value())
            # the printer separates items with newlines (no commas) once one spans lines
            sep = self.at(",") or self.tok.nl
            if self.at(","):
                self.i += 1
        close = self.tok
        if len(items) == 1 and not self.at(",", -1) and not close.nl:
            self.error(close.pos, "',' after the only item of a tuple", got=_show(close))
        self.i += 1
        self.depth -= 1
        return tuple(items)


def _number(s: str):
    """int, float or complex from a token's text; None if it is not one."""
    try:
        if s.endswith(("j", ")")):
            return complex(s)
        if re.fullmatch(r"[+-]?\d+", s):
            if len(s) > 4000:      # int() refuses very long digit strings
                return None
            return int(s)
        return float(s)
    except (ValueError, OverflowError):
        return None


def _unquote(s: str, bad):
    out, i, body = [], 0, s[1:-1]
    while i < len(body):
        c = body[i]
        if c == "\\":
            if body[i + 1] not in "\\'":
                bad()
            c, i = body[i + 1], i + 1
        out.append(c)
        i += 1
    return "".join(out)


def _show(t) -> str:
    return "end of input" if t.kind == "eof" else repr(t.text[:20])


def parse(text: str) -> Jaxpr:
    """Parse the printer's text form of a jaxpr.

    Primitives are looked up by name in ``jaxpr_ir.core.primitives``; every Var
    gets ``hint`` = the name it was written with. Sub-jaxprs in params become
    ``ClosedJaxpr(jaxpr, [])``.

    >>> print(parse("{ lambda ; a:f64[]. let  in (a, 2.0:f32[]) }"))
    { lambda ; a:f64[]. let  in (a, 2.0:f32[]) }
    """
    if not isinstance(text, str):
        raise ParseError(f"expected a str, got {type(text).__name__}", 1, 1)
    p = _Parser(text)
    j = p.parse_jaxpr()
    if p.tok.kind != "eof":
        p.error(p.tok.pos, "end of input after the jaxpr", got=_show(p.tok))
    return j
