"""The few primitives that the transforms' helpers are written with: ``add`` (summing
tangents and cotangents), ``broadcast_in_dim`` (zeros, moving a batch axis in),
``transpose`` (moving a batch axis) and ``convert_element_type``, with their shape
rules, numpy implementations and bind helpers, and the shape and implementation
builders of the elementwise family.

Their JVP, transpose and batching rules need the transforms (symbolic zeros), which
sit above this module, so the family modules attach them: ``elementwise`` (add,
convert_element_type), ``structural`` (broadcast_in_dim, transpose), ``reductions``
(broadcast_in_dim's transpose, written with ``reduce_sum``).

>>> import numpy as np
>>> full((2,), 3.0, np.float64).tolist()
[3.0, 3.0]
>>> transpose(np.zeros((2, 3)), (1, 0)).shape
(3, 2)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxpr_ir import ShapedArray, dtype_kind
from ..array import float_to_int
from ..tracing import Tracer, bind_outermost, get_aval, trace_depth
from .primitive import Primitive
from ..typing import Array, ArrayLike, DTypeLike, Shape
from ..eager_values import WEAK_NUMBERS
from ..weak_values import WeakArray

# --------------------------------------------------------------------------- elementwise rules

_KIND_NAMES = {"f": "floating", "c": "complex", "i": "signed integer",
               "u": "unsigned integer", "b": "bool"}


def elementwise_aval(name, kinds, out_dtype=None):
    """Shape rule: operands share shape and dtype; dtype kind is one of ``kinds``."""
    def rule(*avals, **params):
        a0 = avals[0]
        if len(avals) == 2 and out_dtype is None:   # binary, same type: the common case
            a1 = avals[1]
            if (a1 is a0 or (a1.shape == a0.shape and a1.dtype == a0.dtype
                             and a1.weak_type == a0.weak_type)) and dtype_kind(a0.dtype) in kinds:
                return a0
        weak = a0.weak_type
        shape, dtype = a0.shape, a0.dtype
        for i in range(1, len(avals)):
            a = avals[i]
            if a.shape != shape or a.dtype != dtype:
                raise TypeError(
                    f"{name}: operands must have the same shape and dtype, got "
                    f"{a0.str_short()} (operand 0) and {a.str_short()} (operand {i})")
            weak = weak and a.weak_type
        if dtype_kind(dtype) not in kinds:
            ok = ", ".join(_KIND_NAMES[k] for k in kinds)
            raise TypeError(f"{name}: dtype {dtype} is not supported (needs {ok})")
        if out_dtype is not None:     # (a comparison of weak values is weak: JAX's bool)
            return ShapedArray(shape, out_dtype, weak)
        return a0 if a0.weak_type == weak else a0.update(weak_type=weak)  # avals are immutable
    return rule


_ND = np.ndarray


def _base_view(x):
    """An ndarray subclass instance as a base-class view; anything else unchanged."""
    return x.view(_ND) if isinstance(x, _ND) and type(x) is not _ND else x


def np_impl(fn, out_dtype=None, arity=None):
    """Run a numpy function, keeping the input dtype (or ``out_dtype``); numpy may
    return scalars for 0-d input or widen, so the result is re-typed. ``arity`` 1 or 2
    gives a specialised impl (these run once per eager operation)."""
    # No errstate here: it costs more than the op on small arrays. Warnings behave as in
    # numpy eagerly; the interpreter silences them once per jaxpr.
    # numpy's ufuncs take a slower path for ndarray subclasses (the eager Array): give
    # them base-class views (Python scalars stay as they are: they are weakly typed)
    if arity == 1 and out_dtype is None:
        def impl(x):
            out = fn(x if type(x) is _ND else x.view(_ND) if isinstance(x, _ND) else x)
            if type(out) is _ND and isinstance(x, _ND) and out.dtype == x.dtype:
                return out
            return np.asarray(out, dtype=np.result_type(x))
        return impl
    if arity == 2 and out_dtype is None:
        def impl(x, y):
            out = fn(x if type(x) is _ND else x.view(_ND) if isinstance(x, _ND) else x,
                     y if type(y) is _ND else y.view(_ND) if isinstance(y, _ND) else y)
            if type(out) is _ND and isinstance(x, _ND) and out.dtype == x.dtype:
                return out
            return np.asarray(out, dtype=np.result_type(x, y))
        return impl

    def impl(*xs, **params):
        x0 = xs[0]
        out = fn(*[_base_view(x) for x in xs])
        if out_dtype is None and type(out) is _ND and isinstance(x0, _ND) and \
                x0.dtype == out.dtype:
            return out
        return np.asarray(out, dtype=out_dtype or np.result_type(*xs))
    return impl


add_p = Primitive("add")
add_p.def_rules(abstract_eval=elementwise_aval("add", "fciub"), impl=np_impl(np.add, arity=2))

# --------------------------------------------------------------------------- conversion

convert_element_type_p = Primitive("convert_element_type")


def _convert_aval(x, *, new_dtype, weak_type=False):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x, *, new_dtype, weak_type=False):
    x = np.asarray(x)
    if dtype_kind(x.dtype) == "c" and dtype_kind(new_dtype) != "c":
        x = x.real      # JAX's rule (numpy's astype takes it too, with a ComplexWarning)
    if dtype_kind(x.dtype) == "f" and dtype_kind(new_dtype) in "iu":
        return float_to_int(x, new_dtype)     # JAX's saturating rule, as every backend
    with np.errstate(all="ignore"):
        return x.astype(new_dtype)


convert_element_type_p.def_rules(abstract_eval=_convert_aval, impl=_convert_impl)

# --------------------------------------------------------------------------- broadcast_in_dim

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _broadcast_in_dim_aval(x, *, shape, broadcast_dimensions):
    if any(s < 0 for s in shape):
        raise TypeError(f"broadcast_in_dim: shape {tuple(shape)} has a negative dimension "
                        f"(operand {x.str_short()})")
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim: operand {x.str_short()} needs {x.ndim} "
                        f"broadcast_dimensions, got {broadcast_dimensions}")
    prev = -1
    for i, d in enumerate(broadcast_dimensions):
        if not (0 <= d < len(shape)) or d <= prev:
            raise TypeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} must "
                            f"be strictly increasing and within rank {len(shape)}")
        if x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim: cannot broadcast operand shape {x.shape} to "
                            f"{tuple(shape)} (dimension {i} of size {x.shape[i]} vs {shape[d]})")
        prev = d
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    if not broadcast_dimensions and x.ndim == 0:
        # a scalar: a read-only stride-0 view of it, as np.broadcast_to makes, but built
        # directly (broadcast_to's checks cost several times more on small arrays)
        out = np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
        out.flags.writeable = False
        return out
    try:
        expanded = [1] * len(shape)
        for i, d in enumerate(broadcast_dimensions):
            expanded[d] = x.shape[i]
        return np.broadcast_to(x.reshape(expanded), shape)
    except (IndexError, ValueError):    # eagerly: the rule's error, naming the operand
        _broadcast_in_dim_aval(ShapedArray(x.shape, x.dtype, False), shape=shape,
                               broadcast_dimensions=broadcast_dimensions)
        raise


broadcast_in_dim_p.def_rules(abstract_eval=_broadcast_in_dim_aval, impl=_broadcast_in_dim_impl)


def broadcast_in_dim(operand: ArrayLike, shape: Shape,
                     broadcast_dimensions: Sequence[int]) -> Array:
    """Broadcast ``operand`` to ``shape``; operand axis i becomes output axis broadcast_dimensions[i].

    >>> import numpy as np
    >>> broadcast_in_dim(np.array([1.0, 2.0]), (2, 3), (0,)).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    shape, broadcast_dimensions = tuple(int(s) for s in shape), tuple(int(d) for d in broadcast_dimensions)
    if get_aval(operand).shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return operand
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)) and \
            len(set(broadcast_dimensions)) == len(broadcast_dimensions) == get_aval(operand).ndim:
        # JAX takes the dimensions in any order: permute the operand to increasing order
        perm = tuple(int(i) for i in np.argsort(broadcast_dimensions))
        operand, broadcast_dimensions = transpose(operand, perm), tuple(sorted(broadcast_dimensions))
    if not isinstance(operand, Tracer) and trace_depth():
        return broadcast_constant(operand, shape, broadcast_dimensions)
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=broadcast_dimensions)


# --------------------------------------------------------------------------- transpose

transpose_p = Primitive("transpose")


def _transpose_aval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ValueError(f"transpose: permutation {permutation} is not a permutation of "
                         f"the axes of {x.str_short()}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _transpose_impl(x, *, permutation):
    if len(permutation) != np.ndim(x):     # eagerly: the rule's error (numpy's names no op)
        _transpose_aval(ShapedArray(np.shape(x), np.result_type(x), False),
                        permutation=permutation)
    try:
        return np.transpose(x, permutation)
    except ValueError:
        _transpose_aval(ShapedArray(np.shape(x), np.result_type(x), False),
                        permutation=permutation)
        raise


transpose_p.def_rules(abstract_eval=_transpose_aval, impl=_transpose_impl)


def transpose(operand: ArrayLike, permutation: Sequence[int]) -> Array:
    """Permute axes: output axis i is input axis permutation[i].

    >>> import numpy as np
    >>> transpose(np.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    permutation = tuple(int(p) for p in permutation)
    # the identity returns x itself, but only one of x's own rank: (0,) of a matrix raises
    if permutation == tuple(range(len(permutation))) and len(permutation) == np.ndim(operand):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


# --------------------------------------------------------------------------- constants

def full(shape: Shape, fill_value: ArrayLike, dtype: DTypeLike | None = None) -> Array:
    """``shape`` filled with the scalar ``fill_value``: a broadcast scalar, no per-element memory
    (``dtype`` defaults to ``fill_value``'s, as ``jax.lax.full``).

    Under a trace a constant is recorded (a literal broadcast in the outermost trace, see
    ``_bind_nullary``) rather than baked into the jaxpr as an array constant; a traced
    ``fill_value`` is broadcast in its own trace (it carries derivatives and batch axes).

    >>> full((2, 2), 7, "int32").tolist()
    [[7, 7], [7, 7]]
    """
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):     # eagerly full((-1,), v) was an array of shape (1,)
        raise ValueError(f"full: shape {shape} has a negative dimension")
    if isinstance(fill_value, Tracer):
        a = get_aval(fill_value)
        if a.ndim:
            raise TypeError(f"full: value must be a scalar, got shape {a.shape}")
        dt = a.dtype if dtype is None else np.dtype(dtype)
        if dt != a.dtype:
            fill_value = convert_element_type_p.bind(fill_value, new_dtype=dt)
        return broadcast_in_dim_p.bind(fill_value, shape=shape, broadcast_dimensions=()) \
            if shape else fill_value
    scalar = np.asarray(fill_value, dtype=dtype)
    if dtype is None and (type(fill_value) in WEAK_NUMBERS or type(fill_value) is WeakArray):
        scalar = scalar.view(WeakArray)     # a weak fill's type (JAX's lax.full((2,), 1.0))
    if not shape:
        return scalar
    return bind_outermost(broadcast_in_dim_p, (scalar,),
                          dict(shape=shape, broadcast_dimensions=()))


def broadcast_constant(x, shape, broadcast_dimensions):
    """``broadcast_in_dim`` of a constant (not a tracer) recorded like ``full``: under a
    trace the IR keeps the small constant and one broadcast equation, so a backend fuses
    it instead of reading a materialised array."""
    shape = tuple(int(s) for s in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    if type(x) is not WeakArray:       # (a weak array stays weak: its aval says so)
        x = np.asarray(x)
    if x.shape == shape:
        return x
    return bind_outermost(broadcast_in_dim_p, (x,),
                                   dict(shape=shape, broadcast_dimensions=dims))
