"""The ``sort`` primitive: sort several operands of one shape along one axis, ordered
by the first ``num_keys`` of them (lexicographically), stably.

Its derivative needs no gather: the tangents are permuted exactly as the values
are, which is ``sort`` again with the same keys and the tangents as passengers.
With the keys fixed, ``sort`` is linear in the passengers; the transpose applies
the inverse permutation, which is one more ``sort`` keyed by the permutation.

>>> import numpy as np
>>> [o.tolist() for o in sort_p.bind(np.array([3, 1, 2]), np.array([30., 10., 20.]),
...                                  dimension=0, is_stable=True, num_keys=1)]
[[1, 2, 3], [10.0, 20.0, 30.0]]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxpr_ir import ShapedArray, dtype_kind
from .base import Primitive, Zero, aval, instantiate, is_undefined, move_batch_axis, not_mapped_size
from .arithmetic import (bitcast_convert_type, bitwise_and, bitwise_not, bitwise_xor,
                         shift_right_arithmetic)
from .elementwise_math import imag, real
from .slicing import slice_in_dim
from .structural import broadcast_in_dim
from ..tracing import Tracer, get_aval
from ..typing import Array, ArrayLike

__all__ = ["sort", "sort_key_val"]

sort_p = Primitive("sort")
sort_p.multiple_results = True


def _sort_aval(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort: needs at least one operand")
    o0 = operands[0]
    for i, o in enumerate(operands[1:], 1):
        if o.shape != o0.shape:
            raise TypeError(f"sort: operands must share one shape, got {o0.str_short()} "
                            f"(operand 0) and {o.str_short()} (operand {i})")
    if not 0 <= dimension < max(o0.ndim, 1) or o0.ndim == 0:
        raise ValueError(f"sort: dimension {dimension} is out of range for operand "
                         f"{o0.str_short()}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(operands)})")
    for i, o in enumerate(operands[:num_keys]):
        if dtype_kind(o.dtype) == "c":
            raise TypeError(f"sort: key operand {i} has complex dtype ({o.str_short()})")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


def _sort_perm(keys, dimension):
    """The stable sorting permutation of ``keys`` (first key most significant)."""
    if len(keys) == 1:
        return np.argsort(keys[0], axis=dimension, kind="stable")
    # np.lexsort sorts by its last key first, so pass the keys reversed
    return np.lexsort(tuple(reversed(keys)), axis=dimension)


def _sort_impl(*operands, dimension, is_stable, num_keys):
    ops = [np.asarray(o) for o in operands]
    perm = _sort_perm(ops[:num_keys], dimension)
    return [np.take_along_axis(o, perm, axis=dimension) for o in ops]


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    outs = sort_p.bind(*primals, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    touts = [Zero(aval(o)) for o in outs]
    if live:
        keys = list(primals[:num_keys])
        moved = sort_p.bind(*keys, *[instantiate(tangents[i]) for i in live],
                            dimension=dimension, is_stable=is_stable, num_keys=num_keys)
        for i, t in zip(live, moved[num_keys:]):
            touts[i] = t
    return outs, touts


def _iota_like(shape, dimension):
    """Indices 0..n-1 along ``dimension``, broadcast to ``shape`` (a constant)."""
    idx = np.arange(shape[dimension], dtype=np.int64)
    return broadcast_in_dim(idx, tuple(shape), (dimension,))


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    if any(is_undefined(k) for k in operands[:num_keys]):
        raise TypeError("sort: cannot transpose with respect to the sort keys")
    keys = list(operands[:num_keys])
    shape = aval(keys[0]).shape
    # perm[i] = the input position that lands at output position i
    perm = sort_p.bind(*keys, _iota_like(shape, dimension), dimension=dimension,
                       is_stable=is_stable, num_keys=num_keys)[-1]
    lin = [i for i in range(num_keys, len(operands)) if is_undefined(operands[i])]
    res = [None] * len(operands)
    live = [i for i in lin if type(cts[i]) is not Zero]
    for i in lin:
        res[i] = Zero(operands[i].aval)
    if live:
        # scatter back: sorting by perm puts the output at position i back at perm[i]
        back = sort_p.bind(perm, *[cts[i] for i in live], dimension=dimension,
                           is_stable=True, num_keys=1)
        for i, b in zip(live, back[1:]):
            res[i] = b
    return res


def _sort_batch(args, dims, *, dimension, is_stable, num_keys):
    size = not_mapped_size(args, dims)
    moved = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)]
    outs = sort_p.bind(*moved, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


sort_p.def_rules(abstract_eval=_sort_aval, impl=_sort_impl, jvp=_sort_jvp,
                 transpose=_sort_transpose, batch=_sort_batch)


# --------------------------------------------------------------------------- top_k

top_k_p = Primitive("top_k")
top_k_p.multiple_results = True


def _top_k_aval(operand, *, k):
    if operand.ndim < 1 or not 0 <= k <= operand.shape[-1]:
        raise ValueError(f"top_k: k={k} must be between 0 and the last axis's length of "
                         f"{operand.str_short()}")
    if dtype_kind(operand.dtype) not in "fiu":
        raise TypeError(f"top_k: dtype {operand.dtype} is not supported (floats and integers)")
    shape = tuple(operand.shape[:-1]) + (k,)
    return [ShapedArray(shape, operand.dtype, operand.weak_type),
            ShapedArray(shape, np.dtype(np.int32))]


def _np_top_k_key(x):
    """The ascending sort key of top_k's order (numpy): descending in IEEE total order,
    as JAX's top_k (-NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN, so a NaN with the
    sign bit clear comes first and one with it set last); integers by value. A float's
    key is its bits as a signed integer with the magnitude bits flipped when negative."""
    if dtype_kind(x.dtype) == "f":
        it = np.dtype(f"i{x.dtype.itemsize}")
        i = np.ascontiguousarray(x).view(it)
        x = i ^ ((i >> (8 * it.itemsize - 1)) & np.iinfo(it).max)
    return np.invert(x)


def _top_k_key(x):
    """``_np_top_k_key`` traced."""
    a = aval(x)
    if dtype_kind(a.dtype) == "f":
        it = np.dtype(f"i{np.dtype(a.dtype).itemsize}")
        i = bitcast_convert_type(x, it)
        sign = shift_right_arithmetic(i, broadcast_in_dim(np.array(8 * it.itemsize - 1, it),
                                                          a.shape, ()))
        x = bitwise_xor(i, bitwise_and(sign, broadcast_in_dim(np.array(np.iinfo(it).max, it),
                                                              a.shape, ())))
    return bitwise_not(x)


def _top_k_impl(operand, *, k):
    x = np.asarray(operand)
    perm = _sort_perm([_np_top_k_key(x)], x.ndim - 1)[..., :k]
    return [np.take_along_axis(x, perm, -1), perm.astype(np.int32)]


def _top_k_jvp(primals, tangents, *, k):
    (x,), (t,) = primals, tangents
    outs = top_k_p.bind(x, k=k)
    if type(t) is Zero:
        return outs, [Zero(aval(o)) for o in outs]
    # the tangents move as the values do: sort's passengers under top_k's key, cut at k
    last = aval(x).ndim - 1
    moved = sort_p.bind(_top_k_key(x), instantiate(t), dimension=last, is_stable=True,
                        num_keys=1)[-1]
    return outs, [slice_in_dim(moved, 0, k, axis=last), Zero(aval(outs[1]))]


def _top_k_batch(args, dims, *, k):
    (x,), (d,) = args, dims
    return top_k_p.bind(move_batch_axis(x, d, 0, aval(x).shape[d]), k=k), [0, 0]


top_k_p.def_rules(abstract_eval=_top_k_aval, impl=_top_k_impl, jvp=_top_k_jvp,
                  batch=_top_k_batch)


def sort(operand: ArrayLike | Sequence[ArrayLike], dimension: int = -1,
         is_stable: bool = True, num_keys: int = 1) -> Array | tuple[Array, ...]:
    """Sort along ``dimension``. ``operand`` is an array or a sequence of arrays of one
    shape; a sequence is ordered by its first ``num_keys`` arrays and a tuple returned.
    Complex keys order by real part, then imaginary part.

    >>> import numpy as np
    >>> sort(np.array([2.0, 1.0])).tolist()
    [1.0, 2.0]
    """
    single = not isinstance(operand, (tuple, list))
    ops = [operand] if single else list(operand)
    if not ops:
        raise TypeError("sort: needs at least one operand")
    nd = aval(ops[0]).ndim
    if nd == 0:
        raise ValueError("sort: operands must have at least one dimension, got a scalar")
    if not -nd <= dimension < nd:
        raise ValueError(f"sort: dimension {dimension} is out of range for rank {nd}")
    if any(dtype_kind(aval(o).dtype) == "c" for o in ops[:int(num_keys)]):
        # complex keys order lexicographically by (real, imag), as JAX's
        keys = [p for o in ops[:int(num_keys)]
                for p in ((real(o), imag(o)) if dtype_kind(aval(o).dtype) == "c" else (o,))]
        outs = sort(keys + ops, dimension, is_stable, len(keys))[len(keys):]
        return outs[0] if single else tuple(outs)
    params = dict(dimension=int(dimension) % nd, is_stable=bool(is_stable),
                  num_keys=int(num_keys))
    if not any(isinstance(o, Tracer) for o in ops):
        _sort_aval(*[get_aval(o) for o in ops], **params)   # eager bind skips the shape rule
    outs = sort_p.bind(*ops, **params)
    return outs[0] if single else tuple(outs)


def sort_key_val(keys: ArrayLike, values: ArrayLike, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Array, Array]:
    """Sort ``keys`` along ``dimension`` and carry ``values`` along: ``(keys, values)``.

    >>> import numpy as np
    >>> [v.tolist() for v in sort_key_val(np.array([2, 1]), np.array([5.0, 6.0]))]
    [[1, 2], [6.0, 5.0]]
    """
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
