"""float16 on this backend: every float16 operation computed in float32 and rounded once
to float16, as XLA's CPU backend computes it (so the values are JAX's: ``sin(x) * x + 1``
rounds after each of the three operations) and as the primitives' numpy ``impl`` does.

``widen(jaxpr)`` rewrites each equation that computes on float16 values and has code
here (an op-table row, a reduction, a composite ``decompose`` splits) into the same
equation on float32 values between conversions: float16 operands extended (exact),
float16 results rounded once (a sum or a max of float16 values accumulates in float32
and rounds at the end, as the primitives' ``impl``). The conversions float16 <-> float32
are then the only native arithmetic on float16 values (``native_convert``), fused into
the kernels around them; a float16 -> float64 conversion goes through float32 (exact
both ways). Equations that only move float16 values (concatenate, pad, dynamic slices,
gathers, and loops and branches, whose bodies are widened) are native too
(``native_move``). Products of two float16 (or two bfloat16) operands are float32
products between the same conversions (the ``impl`` accumulates in float32 and rounds
once too). Everything else on float16 (float64 -> float16, integer conversions, scatters,
sorts) stays a host step through the primitive's numpy ``impl``.

A CPU that does not convert float16 in hardware (x86 without F16C) gets no float16
rewrite: LLVM would call compiler-rt helpers that the JIT may not resolve.

bfloat16 is treated the same way on every CPU: its conversions to and from float32 are
integer IR (``lltypes.bf16_to_f32``, ``f32_to_bf16``: a 16-bit shift, and rounding to
nearest even with ml_dtypes' NaN), so a bfloat16 kernel is float32 code between them;
float64 <-> bfloat16 (rounded directly, as ml_dtypes does) stay host steps.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> j = ft.make_jaxpr(lambda x: fnp.sin(x) * x)(np.ones(3, np.float16)).jaxpr
>>> [f"{e.primitive.name} {e.outvars[0].aval}" for e in widen(j).eqns][:3]  # F16C here
['convert_element_type f32[3]', 'sin f32[3]', 'convert_element_type f16[3]']
"""
from __future__ import annotations

import functools
import platform

import llvmlite.binding as llvm
import numpy as np

from jaxpr_ir import Eqn, Jaxpr, ShapedArray, Var, primitives
from ..decompose import DECOMPOSITIONS
from . import engine
from .lltypes import BF16
from .ops import REDUCTIONS, TABLE

__all__ = ["native", "narrow", "native_convert", "native_move", "widen"]

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_BF16 = BF16
# conversions keep their own semantics; a bit cast has no float32 counterpart
_NOT_WIDENED = frozenset(("convert_element_type", "bitcast_convert_type", "reduce_precision"))


@functools.lru_cache(maxsize=None)
def native() -> bool:
    """Whether this CPU converts float16 <-> float32 in hardware (F16C on x86-64, every
    aarch64), so that ``widen`` applies.

    >>> native() in (True, False)
    True
    """
    if platform.machine().lower() in ("aarch64", "arm64"):
        return True
    engine.target_machine()       # initialises LLVM's native target
    return bool(llvm.get_host_cpu_features().get("f16c", False))


def narrow() -> frozenset:
    """The 16-bit float dtypes widened here: bfloat16, and float16 where ``native()``.

    >>> _BF16 in narrow()
    True
    """
    return _BOTH if native() else _BF16_ONLY


_BOTH, _BF16_ONLY = frozenset((_F16, _BF16)), frozenset((_BF16,))


def native_convert(eqn) -> bool:
    """Whether ``eqn`` is a float16 (bfloat16) <-> float32 conversion, the native code
    those have.

    >>> x = Var(ShapedArray((2,), "float16"))
    >>> native_convert(Eqn(primitives["convert_element_type"], [x],
    ...     [Var(ShapedArray((2,), "float32"))], {"new_dtype": _F32, "weak_type": False}))
    True
    """
    if eqn.primitive.name != "convert_element_type":
        return False
    pair = {eqn.inputs[0].aval.dtype, eqn.outvars[0].aval.dtype}
    return len(pair) == 2 and _F32 in pair and not pair - {_F32} - narrow()


# native equations that only move float16 values (no arithmetic on them: a loop's or a
# branch's body is planned, and so widened, by itself)
_MOVES = frozenset(("reshape", "copy", "concatenate", "pad", "dynamic_slice",
                    "dynamic_update_slice", "gather", "cond", "while", "scan"))


def native_move(eqn, odd) -> bool:
    """Whether ``eqn``, whose operands and results have the dtypes ``odd`` beside the
    native ones, only moves float16 (bfloat16) values with native code (a copy, a
    slice, a loop).

    >>> x = Var(ShapedArray((2,), "float16"))
    >>> native_move(Eqn(primitives["reshape"], [x], [Var(ShapedArray((1, 2), "float16"))],
    ...     {"new_sizes": (1, 2), "dimensions": None}), {_F16}) == native()
    True
    """
    return eqn.primitive.name in _MOVES and not set(odd) - narrow()


def _widens(e) -> bool:
    name = e.primitive.name
    if name == "dot_general":
        return _widens_dot(e)
    if e.primitive.multiple_results or name in _NOT_WIDENED:
        return False
    if name not in TABLE and name not in REDUCTIONS and name not in DECOMPOSITIONS:
        return False
    small = narrow()
    if not any(v.aval.dtype in small for v in (*e.inputs, *e.outvars)):
        return False
    # a float16 dtype in the params (none of the widened rows has one) would be stale
    return not any(isinstance(p, np.dtype) and p in small for p in e.params.values())


def _widens_dot(e) -> bool:
    """A product of two float16 (bfloat16) operands of one dtype into that dtype or
    float32: the primitive's ``impl`` accumulates it in float32 and rounds once, so it is
    a float32 product (BLAS) of the exactly widened operands, then one rounding."""
    a, b, o = e.inputs[0].aval.dtype, e.inputs[1].aval.dtype, e.outvars[0].aval.dtype
    return a == b and a in narrow() and o in (a, _F32)


def _convert(v, dtype, eqns, source):
    """A new variable holding ``v`` converted to ``dtype`` (its equation appended)."""
    out = Var(ShapedArray(v.aval.shape, dtype, v.aval.weak_type))
    eqns.append(Eqn(primitives["convert_element_type"], [v], [out],
                    {"new_dtype": dtype, "weak_type": v.aval.weak_type}, source))
    return out


def _widened(e, eqns):
    """Append ``e`` computed in float32 between conversions."""
    small = narrow()
    ins = [_convert(v, _F32, eqns, e.source) if v.aval.dtype in small else v for v in e.inputs]
    outs, back = [], []
    for o in e.outvars:
        if o.aval.dtype in small:
            w = Var(ShapedArray(o.aval.shape, _F32, o.aval.weak_type))
            outs.append(w)
            back.append((w, o))
        else:
            outs.append(o)
    params = dict(e.params, preferred_element_type=None) if e.primitive.name == "dot_general" \
        else e.params
    eqns.append(Eqn(e.primitive, ins, outs, params, e.source))
    for w, o in back:
        eqns.append(Eqn(primitives["convert_element_type"], [w], [o],
                        {"new_dtype": o.aval.dtype, "weak_type": o.aval.weak_type}, e.source))


def _f16_to_f64(e) -> bool:
    return (e.primitive.name == "convert_element_type" and e.inputs[0].aval.dtype in narrow()
            and e.outvars[0].aval.dtype == _F64)


def widen(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` with its float16 and bfloat16 computations in float32 between
    conversions (see the module's docstring); the same object when nothing changes
    (float16 only where ``native()``). Inputs, outputs and constants are the same variables.

    >>> from jaxpr_ir import Var, ShapedArray, Eqn, Jaxpr
    >>> x = Var(ShapedArray((2,), "float32")); y = Var(x.aval)
    >>> j = Jaxpr([], [x], [Eqn(primitives["sin"], [x], [y], {})], [y])
    >>> widen(j) is j        # no float16: unchanged
    True
    """
    if not any(_widens(e) or _f16_to_f64(e) for e in jaxpr.eqns):
        return jaxpr
    eqns = []
    for e in jaxpr.eqns:
        if _widens(e):
            _widened(e, eqns)
        elif _f16_to_f64(e):
            w = _convert(e.inputs[0], _F32, eqns, e.source)
            eqns.append(Eqn(e.primitive, [w], e.outvars, e.params, e.source))
        else:
            eqns.append(e)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, jaxpr.outvars)
