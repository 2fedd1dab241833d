"""``ft.to_dot(jaxpr)``: the IR as a Graphviz graph (render with ``dot -Tsvg``).

Inputs and constants are ellipses, each equation one box (primitive, its short
params, the output types), outputs a double octagon; an edge is a value flowing from
its definition to a use, labelled with its type. Sub-jaxprs (loop bodies, branches)
are drawn as nested clusters under their equation.

>>> import functrans as ft, functrans.numpy as fnp
>>> text = ft.to_dot(ft.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(1.0))
>>> text.splitlines()[0]
'digraph jaxpr {'
>>> text.count("shape=box")
2
"""
from __future__ import annotations

from jaxpr_ir import ClosedJaxpr, Jaxpr, Literal

__all__ = ["to_dot"]


def _q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _short_param(v) -> str | None:
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return None
    if isinstance(v, (tuple, list)) and any(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v):
        return None
    s = repr(v) if not hasattr(v, "name") or isinstance(v, str) else str(v)
    return s if len(s) <= 30 else s[:27] + "..."


class _Graph:
    def __init__(self):
        self.lines = []
        self.n = 0

    def node_id(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def add(self, text, depth):
        self.lines.append("  " * depth + text)

    def jaxpr(self, j, depth, prefix=""):
        """Emit nodes and edges of ``j``; returns its output node ids."""
        if isinstance(j, ClosedJaxpr):
            j = j.jaxpr
        where = {}   # Var -> node id
        for k, v in enumerate(j.constvars):
            nid = self.node_id("c")
            where[v] = nid
            self.add(f"{nid} [label={_q(f'{prefix}const {k}: {v.aval.str_short()}')}, "
                     "shape=ellipse, style=dashed];", depth)
        for k, v in enumerate(j.invars):
            nid = self.node_id("in")
            where[v] = nid
            self.add(f"{nid} [label={_q(f'{prefix}in {k}: {v.aval.str_short()}')}, "
                     "shape=ellipse];", depth)
        for e in j.eqns:
            nid = self.node_id("e")
            params = [f"{k}={p}" for k in sorted(e.params)
                      if (p := _short_param(e.params[k])) is not None]
            outs = ", ".join(v.aval.str_short() for v in e.outvars) or "no outputs"
            label = "\n".join([e.primitive.name] + params[:4] + [f"-> {outs}"])
            extra = f", tooltip={_q(e.source)}" if e.source else ""
            style = ", style=bold" if e.primitive.has_effects else ""
            self.add(f"{nid} [label={_q(label)}, shape=box{style}{extra}];", depth)
            for x in e.inputs:
                if isinstance(x, Literal):
                    lid = self.node_id("lit")
                    self.add(f"{lid} [label={_q(repr(x.val.item()) if hasattr(x.val, 'item') else x.val)}"
                             f", shape=plaintext];", depth)
                    self.add(f"{lid} -> {nid};", depth)
                elif x in where:
                    self.add(f"{where[x]} -> {nid} [label={_q(x.aval.str_short())}];", depth)
            for v in e.outvars:
                where[v] = nid
            self._subgraphs(e, nid, depth)
        out = self.node_id("out")
        self.add(f"{out} [label={_q(prefix + 'outputs')}, shape=doubleoctagon];", depth)
        for k, v in enumerate(j.outvars):
            if isinstance(v, Literal):
                continue
            if v in where:
                self.add(f"{where[v]} -> {out} [label={_q(f'{k}: {v.aval.str_short()}')}];",
                         depth)
        return out

    def _subgraphs(self, e, nid, depth):
        keys = set(e.primitive.subjaxpr_params)
        if e.primitive.call_param:
            keys.add(e.primitive.call_param)
        for k in sorted(keys):
            sub = e.params.get(k)
            subs = sub if isinstance(sub, (tuple, list)) else (sub,)
            for i, s in enumerate(subs):
                if not isinstance(s, (Jaxpr, ClosedJaxpr)):
                    continue
                cid = self.node_id("cluster_")
                name = f"{e.primitive.name}.{k}" + (f"[{i}]" if len(subs) > 1 else "")
                self.add(f"subgraph {cid} {{", depth)
                self.add(f"label={_q(name)}; style=rounded; color=gray;", depth + 1)
                first = len(self.lines)
                self.jaxpr(s, depth + 1, prefix=f"{name} ")
                self.add("}", depth)
                # tie the cluster to its equation (dotted) so the layout keeps them close
                anchor = self.lines[first].strip().split(" ", 1)[0]
                self.add(f"{nid} -> {anchor} [style=dotted, arrowhead=none];", depth)


def to_dot(jaxpr: Jaxpr | ClosedJaxpr, name: str = "jaxpr") -> str:
    """Graphviz (DOT) text of a ``Jaxpr`` or ``ClosedJaxpr``.

    One box per equation; see the module docstring for the layout. ``name``: the graph's.

    >>> import functrans as ft
    >>> print(ft.to_dot(ft.make_jaxpr(lambda x: x)(1.0)))  # doctest: +ELLIPSIS
    digraph jaxpr {
    ...
    }
    <BLANKLINE>
    """
    if callable(jaxpr) and not isinstance(jaxpr, (Jaxpr, ClosedJaxpr)):
        raise TypeError("to_dot takes a jaxpr; for a function use "
                        "ft.to_dot(ft.make_jaxpr(f)(*args))")
    if not isinstance(jaxpr, (Jaxpr, ClosedJaxpr)):
        raise TypeError(f"to_dot takes a Jaxpr or ClosedJaxpr, got {type(jaxpr).__name__}")
    g = _Graph()
    g.add(f"digraph {name if name.isidentifier() else _q(name)} {{", 0)
    g.add('rankdir=TB; node [fontname="monospace", fontsize=10]; '
          'edge [fontname="monospace", fontsize=9];', 1)
    g.jaxpr(jaxpr, 1)
    g.add("}", 0)
    return "\n".join(g.lines) + "\n"
