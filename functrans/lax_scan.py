"""``lax.associative_scan``, ``lax.cumlogsumexp``, ``lax.top_k``, ``lax.map`` and
``lax.clamp``, composed
from the slicing, sorting, elementwise and scan primitives (so every transform applies
through them).

``associative_scan`` is the work-efficient odd/even recursion: combine neighbouring
pairs, scan that half-length sequence recursively, then fix up the remaining elements
with one more combine and interleave the two halves: O(n) combines in O(log n) levels.

>>> import numpy as np
>>> from functrans import lax
>>> associative_scan(lax.add, np.arange(1.0, 6.0)).tolist()
[1.0, 3.0, 6.0, 10.0, 15.0]
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from jaxpr_ir import dtype_kind

from . import numpy as fnp
from .custom_derivatives import custom_jvp
from .batching import vmap
from .primitives import elementwise as E
from .primitives.control_flow import scan
from .primitives.custom import stop_gradient
from .primitives.slicing import concatenate, rev, slice_in_dim
from .primitives.sorting import sort, top_k_p
from .primitives.structural import broadcasted_iota, expand_dims, reshape
from .tracing import Tracer, get_aval, wrap
from .tree_util import tree_flatten, tree_unflatten
from .typing import Array, ArrayLike

__all__ = ["associative_scan", "cumlogsumexp", "top_k", "map", "clamp"]


def _interleave(evens, odds, axis):
    """[e0, o0, e1, o1, ...] along ``axis``; ``evens`` is as long as ``odds`` or one longer."""
    n_e, n_o = get_aval(evens).shape[axis], get_aval(odds).shape[axis]
    if n_e > n_o:            # pad odds with a dummy copy of the last even, cut it off after
        odds = concatenate([odds, slice_in_dim(evens, n_e - 1, n_e, axis=axis)], axis)
    both = concatenate([expand_dims(evens, (axis + 1,)), expand_dims(odds, (axis + 1,))],
                       axis + 1)
    shape = get_aval(evens).shape
    merged = reshape(both, shape[:axis] + (2 * n_e,) + shape[axis + 1:])
    return slice_in_dim(merged, 0, n_e + n_o, axis=axis)


def _scan(fn, elems, axis):
    n = get_aval(elems[0]).shape[axis]
    if n < 2:
        return elems
    lefts = [slice_in_dim(e, 0, n - 1, 2, axis) for e in elems]
    rights = [slice_in_dim(e, 1, n, 2, axis) for e in elems]
    odds = _scan(fn, fn(lefts, rights), axis)              # prefixes ending at 1, 3, 5...
    m = get_aval(odds[0]).shape[axis]
    later = [slice_in_dim(e, 2, n, 2, axis) for e in elems]  # elements 2, 4, ...
    k = get_aval(later[0]).shape[axis]
    evens_rest = fn([slice_in_dim(o, 0, k, axis=axis) for o in odds], later) if k else later
    evens = [concatenate([slice_in_dim(e, 0, 1, axis=axis), r], axis) if k else
             slice_in_dim(e, 0, 1, axis=axis) for e, r in zip(elems, evens_rest)]
    assert m == n // 2
    return [_interleave(e, o, axis) for e, o in zip(evens, odds)]


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """Inclusive prefix combination with an associative ``fn`` over any pytree of arrays
    sharing the length of ``axis`` (JAX's signature; ``fn`` takes and returns pytrees
    like ``elems``, elementwise over leading slices).

    >>> import numpy as np
    >>> from functrans import lax
    >>> associative_scan(lax.max, np.array([1.0, 3.0, 2.0, 5.0]), reverse=True).tolist()
    [5.0, 5.0, 5.0, 5.0]
    """
    if not callable(fn):
        raise TypeError(f"lax.associative_scan: fn must be callable, got {type(fn).__name__}")
    leaves, treedef = tree_flatten(elems)
    if not leaves:
        raise ValueError("associative_scan: elems has no arrays")
    nd = get_aval(leaves[0]).ndim
    if not -nd <= axis < nd:
        raise ValueError(f"associative_scan: axis {axis} out of range for rank {nd}")
    axis %= nd
    lengths = {get_aval(x).shape[axis] for x in leaves}
    if len(lengths) != 1:
        raise ValueError(f"associative_scan: the arrays' lengths along axis {axis} differ: "
                         f"{sorted(lengths)}")
    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(treedef, a), tree_unflatten(treedef, b))
        flat, tdef = tree_flatten(out)
        if tdef != treedef:
            raise TypeError(f"associative_scan: fn returned structure {tdef}, expected "
                            f"{treedef}")
        return flat
    out = _scan(combine, leaves, axis)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    # a length-1 scan is the identity: its eager results are still Arrays
    if get_aval(leaves[0]).shape[axis] < 2:
        out = [x if isinstance(x, Tracer) else wrap(np.array(x)) for x in out]
    return tree_unflatten(treedef, out)


@custom_jvp
def _logaddexp(a, b):
    # max(a, b) + log1p(exp(-|a - b|)) bit for bit, written as a choice of two exact
    # formulas so that jet (which expands this body, not the custom rule) is right at
    # ties too
    delta = E.sub(a, b)
    smooth = E.select_n(E.ge(a, b), E.add(b, E.log1p(E.exp(delta))),
                        E.add(a, E.log1p(E.exp(E.sub(b, a)))))
    # delta is nan when both are the same infinity (their sum is the answer) or a nan
    return E.select_n(E.ne(delta, delta), smooth, E.add(a, b))


def _logaddexp_weight(x, y, out):
    """d/dx logaddexp(x, y) = exp(x - out); 1/2 at the infinite ties, where x - out is
    NaN (the limit along x = y), as the ``logaddexp`` primitive's rule; 1 where x alone
    is +inf (x - out is NaN there too; the other operand's weight is exp(-inf) = 0)."""
    e = E.exp(E.sub(x, out))
    nan = E.ne(e, e)
    tie = E.select_n(nan, e, fnp.full_like(e, 0.5))
    alone = E.select_n(E.bitwise_and(E.eq(x, out), nan), e, fnp.full_like(e, 1.0))
    return E.select_n(E.eq(x, y), alone, tie)


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    # the formula's own derivative is wrong at ties a == b (max splits the tangent,
    # abs'(0) = 1 then moves all of it to b: cumlogsumexp of equal entries, e.g. a Cox
    # likelihood at beta = 0, had wrong gradients and Hessians); JAX's logaddexp has a
    # custom JVP too
    a, b = primals
    ta, tb = tangents
    out = _logaddexp(a, b)
    return out, E.add(E.mul(ta, _logaddexp_weight(a, b, out)),
                      E.mul(tb, _logaddexp_weight(b, a, out)))


def cumlogsumexp(operand: ArrayLike, axis: int = 0, reverse: bool = False) -> Array:
    """Running ``log(sum(exp(x)))`` along ``axis`` (stable for large and -inf entries).

    >>> import numpy as np
    >>> np.round(cumlogsumexp(np.log(np.array([1.0, 2.0, 3.0]))), 6).tolist()
    [0.0, 1.098612, 1.791759]
    """
    return associative_scan(_logaddexp, operand, reverse=reverse, axis=axis)


_TOP_K_DTYPES = frozenset(np.dtype(d) for d in ("float64", "float32", "int64", "int32",
                                                  "uint64", "uint32"))


def top_k(operand: ArrayLike, k: int, *, axis: int = -1) -> tuple[Array, Array]:
    """The ``k`` largest entries along ``axis`` (the last by default), descending, and
    their int32 indices. Floats in IEEE total order, as JAX's: a NaN first (last when
    its sign bit is set), 0.0 before -0.0; ties by the lower index.

    >>> import numpy as np
    >>> v, i = top_k(np.array([1.0, 4.0, 2.0, 4.0]), 2)
    >>> v.tolist(), i.tolist()
    ([4.0, 4.0], [1, 3])
    """
    a = get_aval(operand)
    k = int(k)
    if a.ndim < 1 or not -a.ndim <= axis < a.ndim:
        raise ValueError(f"top_k: axis={axis} is out of range for an operand of shape "
                         f"{a.shape}")
    ax = axis % a.ndim
    if not 0 <= k <= a.shape[ax]:
        raise ValueError(f"top_k: k={k} must be between 0 and axis {axis}'s length "
                         f"({a.shape[ax]})")
    if np.dtype(a.dtype) in _TOP_K_DTYPES:
        # the primitive selects along the last axis (natively a heap of k per row on
        # the CPU backend, not a sort of the whole row)
        last = a.ndim - 1
        x = operand if ax == last else fnp.moveaxis(operand, ax, last)
        values, indices = top_k_p.bind(x, k=k)
        if ax != last:
            values, indices = fnp.moveaxis(values, last, ax), fnp.moveaxis(indices, last, ax)
        return values, indices
    if dtype_kind(a.dtype) == "f" and np.dtype(a.dtype).itemsize == 2:
        # float16 / bfloat16: the order of their exact float32 copies (the widening keeps
        # -0.0 and a NaN's sign bit, so the IEEE total order is the same)
        _, indices = top_k(E.convert_element_type(operand, np.float32), k, axis=ax)
        return fnp.take_along_axis(operand, indices, axis=ax), indices
    idx = broadcasted_iota(np.int32, a.shape, ax)     # other dtypes: a stable sort
    if dtype_kind(a.dtype) == "f":
        not_nan = E.convert_element_type(E.eq(operand, operand), np.int32)
        keys = (not_nan, E.neg(operand))
    elif a.dtype.kind in "iu":
        keys = (E.bitwise_not(operand),)     # order-reversing without overflow
    else:
        raise TypeError(f"top_k: dtype {a.dtype} is not supported (floats and integers)")
    outs = sort(keys + (operand, idx), dimension=ax, is_stable=True, num_keys=len(keys))
    values, indices = outs[-2], outs[-1]
    return slice_in_dim(values, 0, k, axis=ax), slice_in_dim(indices, 0, k, axis=ax)


def map(f: Callable[..., Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """``f`` applied to each slice of ``xs`` along the leading axis, results stacked; with
    ``batch_size``, as JAX's: a scan over groups of that many slices, ``vmap(f)`` inside,
    and the remainder mapped by one more ``vmap(f)``.

    >>> from functrans import lax
    >>> import numpy as np
    >>> lax.map(lambda x: x * 2.0, np.arange(5.0), batch_size=2).tolist()
    [0.0, 2.0, 4.0, 6.0, 8.0]
    """
    if not callable(f):
        raise TypeError(f"lax.map: f must be callable, got {type(f).__name__}")
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), None, xs)[1]
    if int(batch_size) < 1:
        raise ValueError(f"lax.map: batch_size must be a positive integer, got {batch_size}")
    leaves, tree = tree_flatten(xs)
    leaves = [x if isinstance(x, Tracer) else wrap(np.asarray(x)) for x in leaves]
    n = get_aval(leaves[0]).shape[0] if leaves else 0
    bs = int(batch_size)
    nb, rem = divmod(n, bs)
    ys = None
    if nb:
        grouped = [reshape(slice_in_dim(x, 0, nb * bs, 1, 0), (nb, bs) + get_aval(x).shape[1:])
                   for x in leaves]
        ys = scan(lambda c, x: (c, vmap(f)(x)), None, tree_unflatten(tree, grouped))[1]
        ys_l, ys_tree = tree_flatten(ys)
        ys = [reshape(y, (nb * bs,) + get_aval(y).shape[2:]) for y in ys_l]
    if rem:
        tail = [slice_in_dim(x, nb * bs, n, 1, 0) for x in leaves]
        tl, ys_tree = tree_flatten(vmap(f)(tree_unflatten(tree, tail)))
        ys = tl if ys is None else [concatenate([a, b], 0) for a, b in zip(ys, tl)]
    return tree_unflatten(ys_tree, ys) if ys is not None else scan(
        lambda c, x: (c, f(x)), None, xs)[1]


def clamp(min: ArrayLike, x: ArrayLike, max: ArrayLike) -> Array:  # noqa: A002 (JAX's names)
    """``min(max(x, lo), hi)`` (arguments and their names as ``jax.lax.clamp``) with JAX's
    derivatives: to ``x`` where ``lo < x < hi``, to ``lo`` where ``x < lo < hi``, to ``hi``
    where ``hi < x``, none at a tie (``x == lo`` or ``x == hi``: min/max would split it).

    >>> import numpy as np
    >>> clamp(0.0, np.float64(3.0), 1.0).item()
    1.0
    """
    lo, hi = min, max
    xshape = fnp.shape(x)
    # JAX's clamp takes 0-d bounds with any operand: broadcast them (the elementwise
    # primitives want equal shapes once traced)
    lo, hi = (fnp.broadcast_to(a, xshape) if xshape and fnp.ndim(a) == 0
              and not isinstance(a, (bool, int, float, complex)) else a for a in (lo, hi))
    v = E.min(E.max(x, lo), hi)
    av = get_aval(v)
    if av.dtype.kind not in "fc":
        return v
    lo, x, hi = (fnp.broadcast_to(fnp.asarray(a, av.dtype), av.shape) for a in (lo, x, hi))
    out = E.select_n(E.lt(hi, x), stop_gradient(v), hi)
    out = E.select_n(E.bitwise_and(E.gt(lo, x), E.lt(lo, hi)), out, lo)
    return E.select_n(E.bitwise_and(E.gt(x, lo), E.lt(x, hi)), out, x)
