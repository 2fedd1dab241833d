"""One function for each distinct kernel or step of a module: the same code emitted twice
(the same layer's kernels and transposes in each of a network's layers, a forward kernel
and its replay in the backward pass) is compiled once and called from both places.

Two functions are the same when their IR text is, but for their own names and the
numbers of the metadata they use (loop IDs, which are distinct per loop, are compared by
content). Only internal functions that are not always inlined are folded: the caller of
an always-inlined routine gets its own copy anyway, and segments are called by name.
The caller keeps the functions it names in ``keep``: the kernels of loop bodies
(``split.looped_callees``), which LLVM inlines into their loop because each has one
call site (folded, the Lorenz RK4 gradient's reverse scan called them: 5x slower).
Calls and function pointers (``ft_parallel_for``'s worker) to a folded copy are
redirected to the one kept; a kernel whose worker was folded may become equal to
another in turn, so folding repeats until nothing changes.

>>> import llvmlite.ir as ir
>>> m = ir.Module()
>>> def k(name):
...     f = ir.Function(m, ir.FunctionType(ir.VoidType(), []), name)
...     f.linkage = "internal"
...     ir.IRBuilder(f.append_basic_block("entry")).ret_void()
...     return f
>>> _ = k("k1"), k("k2")
>>> fold_identical(m)
1
>>> [f.name for f in m.functions]
['k1']
"""
from __future__ import annotations

import collections
import re

import llvmlite.ir as ir

__all__ = ["fold_identical"]

_MD = re.compile(r"!(\d+)\b")


def _foldable(fn, keep) -> bool:
    return bool(fn.blocks) and fn.linkage == "internal" and fn.name not in keep and \
        "alwaysinline" not in fn.attributes and not fn.name.startswith("ft_")


def _md_form(module):
    """!N -> the content of metadata node N with self references and node numbers
    replaced (memoised), so that equal loop IDs of two functions compare equal."""
    by_ref = {md.get_reference(): md for md in module.metadata}
    memo = {}

    def form(md, inside=()):
        if id(md) in memo:
            return memo[id(md)]
        parts = []
        for op in md.operands:
            if op is md or id(op) in inside:
                parts.append("^")
            elif isinstance(op, ir.MDValue):
                parts.append(form(op, inside + (id(md),)))
            else:
                parts.append(str(op))
        memo[id(md)] = "{" + ",".join(parts) + "}"
        return memo[id(md)]
    return lambda ref: form(by_ref[ref]) if ref in by_ref else ref


def _shape(fn) -> tuple:
    """What two identical functions share, cheap to compute: type, blocks, instructions."""
    return str(fn.function_type), len(fn.blocks), sum(len(b.instructions) for b in fn.blocks)


def _key(fn, md_form):
    text = str(fn)
    fn._clear_string_cache()        # its linkage and attributes may change later
    head, body = text.split("\n", 1)
    head = head.replace(f'@"{fn.name}"', "@SELF", 1)
    return head + "\n" + _MD.sub(lambda m: md_form(m.group(0)), body)


def _redirect(module, folded) -> set:
    """Point every operand naming a folded function at the one kept; returns the names
    of the functions changed."""
    changed = set()
    for fn in module.functions:
        touched = False
        for blk in fn.blocks:
            for ins in blk.instructions:
                hits = [op for op in ins.operands if isinstance(op, ir.Function)
                        and op.name in folded]
                for op in hits:
                    ins.replace_usage(op, folded[op.name])
                if hits:
                    blk._clear_string_cache()
                    touched = True
        if touched:
            fn._clear_string_cache()
            changed.add(fn.name)
    return changed


def fold_identical(module: ir.Module, keep=frozenset()) -> int:
    """Fold the module's identical internal functions into one each (see the module
    docstring), but for those named in ``keep``; returns how many copies were removed."""
    md_form = _md_form(module)
    removed = 0
    keys: dict = {}
    while True:
        kept, folded = {}, {}
        candidates = [fn for fn in module.functions if _foldable(fn, keep)]
        # only functions of one type and size can be copies: key (print) only those
        shapes = collections.Counter(map(_shape, candidates))
        for fn in candidates:
            if shapes[_shape(fn)] < 2:
                continue
            if fn.name not in keys:
                keys[fn.name] = _key(fn, md_form)
            first = kept.setdefault(keys[fn.name], fn)
            if first is not fn:
                folded[fn.name] = first
        if not folded:
            return removed
        for name in folded:
            del module.globals[name]
            keys.pop(name)
        for name in _redirect(module, folded):     # texts that changed: key them again
            keys.pop(name, None)
        removed += len(folded)
