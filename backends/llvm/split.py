"""Splitting one lowered module into parts that LLVM optimises and emits concurrently.

A lowered module (``program.Lowering``) holds the segment functions and the kernels
they call. LLVM's time on it is nearly all per function (the pass pipeline and the
code generator work one function at a time; the inliner only puts small kernels and
math routines into their callers), so the kernels can go to other modules, compiled
on other threads (``engine.compile_objects``) and linked in one JIT engine
(``engine.Loaded``): a kernel moved out is called, not inlined, which costs one call
per kernel run. Each part gets copies of the internal routines its functions use
(``ft_exp_f32``...), declarations of everything else it names, and every metadata
node; external helper definitions (vector variants) go to every part that needs them as
``weak_odr``, so the linker keeps one. Every text (whole or part) lists the vector
variants it only declares (the math library's) in ``@llvm.compiler.used``
(``keep_variants``), so that they survive until the loop vectoriser calls them. A
segment that only checks its arguments and calls kernels of their own is compiled
``optnone`` (``_dispatch_only``): it runs once per call.

``split_module(module, n)`` returns the whole module's text and the parts' texts (one part:
no split). Kernels are assigned largest first to the lightest part (weights: IR
instructions and ``BLOCK_COST`` per basic block, inlined routines counted at each call),
part 0 starting with the segments and what stays with them.

>>> import llvmlite.ir as ir
>>> m = ir.Module()
>>> whole, parts = split_module(m, 2)
>>> len(parts)
1
"""
from __future__ import annotations

import re

import llvmlite.ir as ir

from .segments import STEP_PREFIX

__all__ = ["split_module", "keep_variants", "looped_callees", "MIN_SPLIT_WEIGHT",
           "PIN_BUDGET", "BLOCK_COST"]

# below this many IR instructions in movable kernels a module stays whole: a second
# module's parse, verification and thread hand-off cost more than they save
MIN_SPLIT_WEIGHT = 600
# ... unless all that stays is unoptimised dispatch, and the kernels that move weigh this
# much (``_beside_dispatch``)
MIN_BESIDE_DISPATCH = 64
# kernels called inside a segment's loops stay inlinable while the segment with them weighs
# at most this many IR instructions; in a heavier one they are called: inlined, they made
# the segment one function too large for LLVM's per-function passes, whose time grows
# faster than its size (an adaptive RK45 while loop with its forward Jacobian: a segment
# of 6,141 instructions calling 69 such kernels in its loop, 10,400 after O3). The
# looping segments of the benchmarked programs weigh 350-3,000 with their kernels.
PIN_BUDGET = 4096
# a basic block's weight, in instructions, when the parts are balanced: LLVM spends more on
# a loop (vectoriser, unroller, strength reduction) than on as many straight-line
# instructions (~3 ms a loop, ~0.065 ms an instruction, fitted on the ResNet and
# transformer steps' functions). Counting instructions only, the ResNet step's parts took
# 0.30 and 0.55 s of LLVM CPU (the part with the convolutions' loop nests the larger),
# GPT's 0.25 and 1.10 s; with 25 per block 0.41 / 0.48 s and 0.57 / 0.75 s
BLOCK_COST = 25
_REF = re.compile(r'@"([^"]+)"')
_VARIANT = re.compile(r"_ZGV\w+\(([^)]+)\)")
_DECLARED = re.compile(r'^declare [^@\n]*@"([^"]+)"', re.M)


def keep_variants(text: str) -> str:
    """``text`` with the vector variants it declares but does not call listed in
    ``@llvm.compiler.used``: LLVM deletes an unused declaration before the loop
    vectoriser looks a variant up by name (``vector-function-abi-variant``), and the
    list costs no code, where a caller per variant cost a function each to compile.

    >>> t = 'declare <4 x double> @"f_v4"(<4 x double>)\\n; _ZGV_LLVM_N4v_f(f_v4)\\n'
    >>> keep_variants(t).splitlines()[-1]
    '@llvm.compiler.used = appending global [1 x ptr] [ptr @"f_v4"], section "llvm.metadata"'
    """
    declared = set(_DECLARED.findall(text))
    names = sorted({v for m in _VARIANT.findall(text) for v in m.split(",")} & declared)
    if not names:
        return text
    refs = ", ".join(f'ptr @"{n}"' for n in names)
    return (f"{text}\n@llvm.compiler.used = appending global [{len(names)} x ptr] "
            f'[{refs}], section "llvm.metadata"\n')


def _movable(fn) -> bool:
    """A kernel that may live in another module: internal, not always inlined, not a
    shared routine (``ft_`` names)."""
    return (fn.linkage == "internal" and "alwaysinline" not in fn.attributes
            and not fn.name.startswith("ft_"))


def _step(fn) -> bool:
    """A top-level step's own function (``segments.outline``) that loops: it may move
    to another part, and pins the kernels its loops call as a segment does."""
    return fn.name.startswith(STEP_PREFIX) and "noinline" in fn.attributes


def _helper(fn) -> bool:
    """A routine copied into each part that uses it (math routines, tiny kernels)."""
    return fn.name.startswith("ft_") or (fn.linkage == "internal"
                                         and "alwaysinline" in fn.attributes)


def _owner(fn, defs):
    """The unit a function moves with: ``k5.par`` with ``k5`` (its only caller)."""
    base = fn.name[:-4] if fn.name.endswith(".par") else None
    return base if base in defs else fn.name


def _weights(defs):
    """(IR instructions, basic blocks) per defined function, each call to an
    always-inlined function counted as that function's (read from the instructions: no
    printing)."""
    memo = {}

    def weight(name):
        if name not in memo:
            memo[name] = (0, 0)     # recursion guard
            w, nb = 0, 0
            for blk in defs[name].blocks:
                nb += 1
                for ins in blk.instructions:
                    w += 1
                    g = getattr(ins, "callee", None)
                    if isinstance(g, ir.Function) and g.name in defs and g.name != name \
                            and "alwaysinline" in g.attributes:
                        gw, gb = weight(g.name)
                        w, nb = w + gw, nb + gb
            memo[name] = (w, nb)
        return memo[name]
    return {n: weight(n) for n in defs}


def _targets(term):
    out = [op for op in getattr(term, "operands", ()) if isinstance(op, ir.Block)]
    if getattr(term, "default", None) is not None:                # a switch
        out += [term.default] + [blk for _, blk in getattr(term, "cases", ())]
    return out


def _called_in_loops(fn) -> set:
    """Names of the functions ``fn`` calls inside a loop (a back edge's natural loop;
    blocks are in emission order, so a branch to an earlier block closes a loop)."""
    order = {b.name: i for i, b in enumerate(fn.blocks)}
    preds = {b.name: [] for b in fn.blocks}
    for b in fn.blocks:
        for t in _targets(b.terminator):
            preds.setdefault(t.name, []).append(b.name)
    inside = set()
    for b in fn.blocks:
        for t in _targets(b.terminator):
            if order.get(t.name, len(order)) <= order[b.name]:  # back edge b -> t
                body, todo = {t.name}, [b.name]
                while todo:
                    n = todo.pop()
                    if n not in body:
                        body.add(n)
                        todo.extend(preds.get(n, ()))
                inside |= body
    return {ins.callee.name for b in fn.blocks if b.name in inside for ins in b.instructions
            if isinstance(getattr(ins, "callee", None), ir.Function)}


def looped_callees(module: ir.Module) -> set:
    """Names of the functions some function of ``module`` calls inside one of its loops
    (kernels of a loop body: they stay inlinable while their caller is small, and must
    keep one call site each to be inlined; ``fold`` leaves them alone)."""
    return {n for g in module.functions if g.blocks for n in _called_in_loops(g)}


def _has_loop(fn) -> bool:
    order = {b.name: i for i, b in enumerate(fn.blocks)}
    return any(order.get(t.name, len(order)) <= order[b.name]
               for b in fn.blocks for t in _targets(b.terminator))


def _dispatch_only(fn, defs) -> bool:
    """A function that only checks its arguments and calls kernels of their own (a
    segment around one long kernel, say): no loop, and nothing it calls is defined
    here unless never inlined. Such a function runs once per call, so it is compiled
    unoptimised (``optnone``): its callees' code does not change, and LLVM skips its
    O3 pipeline and most of its code generator (~1.5 ms of ~13 on the 10-step sin
    chain's grad, a few nanoseconds per call)."""
    if not fn.blocks or _helper(fn) or _movable(fn) or _has_loop(fn):
        return False
    for b in fn.blocks:
        for ins in b.instructions:
            g = getattr(ins, "callee", None)
            if g is None:
                continue
            if not isinstance(g, ir.Function):
                return False                  # an indirect call or inline assembly
            if g.name in defs and "noinline" not in g.attributes:
                return False
    return True


def _beside_dispatch(defs, movable, moving) -> bool:
    """Whether a small module is still worth two parts: every function that stays is
    unoptimised dispatch (``_dispatch_only``) and the kernels that move weigh at least
    ``MIN_BESIDE_DISPATCH``. The dispatch's code generation (~0.5 ms: a function's
    fixed cost in LLVM's code generator) then runs beside the kernels' optimisation
    instead of after it (the 10-step sin chain's grad: 52.2M instructions in LLVM on
    one thread; its kernel's part alone 48.4M, the dispatch's 9.4M)."""
    rest = [f for n, f in defs.items() if n not in movable and not _helper(f)]
    return moving >= MIN_BESIDE_DISPATCH and bool(rest) and \
        all("optnone" in f.attributes for f in rest)


def _step_groups(defs, pinning) -> dict:
    """{function: step} for each looping step function (``_step``) that keeps kernels
    inlinable (``pinning``) and for the kernels its loops call, when no other function
    calls them: such a step moves to another part with them (a scan's body, its
    kernels inlined into its loop), so that an LSTM's forward and backward scans
    compile on two threads (they stayed with their segment: one thread, 0.66 s of
    LLVM CPU; in two parts 0.43 + 0.21 s)."""
    out, shared = {}, set()
    for s in pinning:
        if not _step(defs[s]):
            continue
        out[s] = s
        for k in _called_in_loops(defs[s]) & defs.keys():
            if not _helper(defs[k]):
                shared |= {k} if k in out else set()
                out[k] = s
    callers = {}
    for f in defs.values():
        for b in f.blocks:
            for ins in b.instructions:
                g = getattr(ins, "callee", None)
                if isinstance(g, ir.Function) and g.name in out:
                    callers.setdefault(g.name, set()).add(f.name)
    bad = {out[k] for k in shared} | {out[k] for k in out if out[k] != k and
                                       callers.get(k, set()) - {out[k]}}
    out = {k: s for k, s in out.items() if s not in bad}
    return {**out, **{n: out[n[:-4]] for n in defs if n.endswith(".par") and n[:-4] in out}}


def _assign(units, fixed, nparts):
    """Largest first to the lightest part; part 0 starts at ``fixed``. Returns
    {unit: part} for units away from part 0 only, and the parts used."""
    loads = [fixed] + [0] * (nparts - 1)
    where = {}
    for u, w in sorted(units.items(), key=lambda kv: -kv[1]):
        p = min(range(nparts), key=lambda i: loads[i])
        loads[p] += w
        where[u] = p
    return {u: p for u, p in where.items() if p}, sorted(set(where.values()) | {0})


def _declaration(text):
    head = text.split("\n", 1)[0]
    return "declare " + head.removeprefix("define ").removeprefix("weak_odr ") + "\n"


def split_module(module: ir.Module, nparts: int) -> tuple:
    """(the whole module's IR text, [IR text of each part]); see the module docstring."""
    defs = {g.name: g for g in module.globals.values()
            if isinstance(g, ir.Function) and g.blocks}
    units, fixed = {}, 0
    for f in defs.values():
        if _dispatch_only(f, defs):
            f.attributes.add("noinline")     # optnone requires it
            f.attributes.add("optnone")
    wb = _weights(defs)
    w = {n: v[0] for n, v in wb.items()}
    # LLVM's time per function, for balancing the parts: its instructions and, loops
    # and branches costing more than straight code, BLOCK_COST per basic block
    cost = {n: v[0] + BLOCK_COST * v[1] for n, v in wb.items()}
    # a kernel run inside a loop of its caller (a fori_loop's body) stays inlinable:
    # called, a 300-element body kernel ran 1.15x slower; unless the segment with
    # those kernels would weigh more than PIN_BUDGET (see there)
    pinned, pinning = set(), set()
    for f in defs.values():
        if _step(f) or not (_movable(f) or f.name.endswith(".par") or _helper(f)):
            inner = _called_in_loops(f)
            if w[f.name] + sum(w[n] for n in inner if n in defs and not _helper(defs[n])) \
                    <= PIN_BUDGET:
                pinned |= inner
                pinning |= {f.name} if inner & defs.keys() else set()
    # a step function that keeps kernels inlinable moves with them (``_step_groups``)
    grouped = _step_groups(defs, pinning)
    movable = {n for n, f in defs.items() if (_movable(f) or n.endswith(".par"))
               and _owner(f, defs) not in pinned and n not in pinning} | set(grouped)
    owner = lambda f: grouped.get(f.name) or _owner(f, defs)   # noqa: E731
    moving = 0
    for n, f in defs.items():
        if n in movable:
            u = owner(f)
            units[u] = units.get(u, 0) + cost[n]
            moving += w[n]
        elif not _helper(f):
            fixed += cost[n]
    if moving < MIN_SPLIT_WEIGHT and not _beside_dispatch(defs, movable, moving):
        whole = keep_variants(str(module))
        return whole, [whole]
    moved, used = _assign(units, fixed, max(nparts, 1))
    part_of = {}
    for n, f in defs.items():
        if n in movable:
            part_of[n] = moved.get(owner(f), 0)
            if grouped.get(n, n) != n:
                continue                   # a step's own kernel: inlined into it
            # the same code whatever the number of parts: a kernel is never inlined
            f.linkage = ""
            f.attributes.add("noinline")
        else:
            part_of[n] = None if _helper(f) else 0            # None: a helper
            if part_of[n] is None and f.linkage != "internal":
                f.linkage = "weak_odr"     # a copy in several modules: the linker keeps one
    _export_called_across(defs, part_of)
    texts = {n: str(g) for n, g in module.globals.items()}
    head = (f'; ModuleID = "{module.name}"\ntarget triple = "{module.triple}"\n'
            f'target datalayout = "{module.data_layout}"\n')
    meta = "\n".join(str(md) for md in module.metadata)
    whole = keep_variants(head + "\n" + "\n".join(texts.values()) + "\n" + meta)
    if len(used) == 1:
        return whole, [whole]
    return whole, [keep_variants(_part(p, defs, part_of, texts, head, meta)) for p in used]


def _export_called_across(defs, part_of):
    """An internal function called from another part (or from a helper, copied into any)
    becomes external: a part can only declare it so. A parallel kernel's body shared by a
    second, identical kernel (``k45`` calling ``k29.par``) stays in ``k29``'s part while
    ``k45`` moves: declared internal, the part did not parse."""
    for f in defs.values():
        for blk in f.blocks:
            for ins in blk.instructions:
                g = getattr(ins, "callee", None)
                if isinstance(g, ir.Function) and g.name in defs and g.linkage == "internal" \
                        and part_of[g.name] is not None \
                        and part_of[f.name] != part_of[g.name]:
                    g.linkage = ""


def _part(p, defs, part_of, texts, head, meta):
    """The IR text of part ``p``: its functions, the helpers they use, declarations."""
    keep = [n for n, q in part_of.items() if q == p]
    if p == 0:
        keep += [n for n in texts if n not in defs]           # every declaration
    seen = set(keep)
    todo = list(keep)
    out = []
    while todo:
        n = todo.pop()
        if n in defs and part_of[n] not in (None, p):
            out.append(_declaration(texts[n]))
            continue
        out.append(texts[n])
        refs = _REF.findall(texts[n]) + [v for m in _VARIANT.findall(texts[n])
                                         for v in m.split(",")]
        for r in refs:
            if r not in seen and r in texts:
                seen.add(r)
                todo.append(r)
    return head + "\n" + "\n".join(out) + "\n" + meta
