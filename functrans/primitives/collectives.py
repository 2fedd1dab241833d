"""Collectives over a named ``vmap`` axis: psum, pmean, pmax, pmin, all_gather, axis_index.

Inside ``vmap(f, axis_name="i")`` the per-example function may combine values
across the mapped axis. The primitives record the axis name; the batching rule
of the vmap that owns the name does the work (a reduction over the batch
dimension, or a broadcast when the operand does not vary along it). Outside a
vmap with that name they raise ``NameError`` ("unbound axis name").

Their values are never computed while tracing (``defer_concrete``): a tracer
stands for one example, and the collective needs all of them.

>>> import functrans as ft, numpy as np
>>> from functrans import lax
>>> ft.vmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(np.array([1.0, 3.0])).tolist()
[0.25, 0.75]
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray
from ..tracing import Tracer, trace_at_level, trace_depth
from ..transforms.vmap import axis_frames, find_axis
from .base import Primitive, Zero, aval, deflinear, move_batch_axis
from .elementwise import convert_element_type, div, eq, mul
from .reductions import reduce_sum
from . import reductions
from .structural import broadcast_in_dim, reshape

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index"]


def _unbound(name):
    return NameError(f"unbound axis name: {name!r} (collectives only work inside "
                     f"vmap(..., axis_name={name!r}))")


def _impl_unbound(*args, axis_name, **params):
    raise _unbound(axis_name)


def _varies(x, frame):
    """Whether ``x`` may differ between the examples of ``frame``'s axis.

    Concrete values and tracers of traces older than the vmap's own trace are
    the same for every example; a frame that is not tracing cannot tell.
    """
    if not isinstance(x, Tracer):
        return False
    return not frame.tracing or x._trace.level >= frame.level


def _collective(name):
    p = Primitive(name)
    p.batch_always = True     # an unbatched operand still needs the rule (e.g. psum -> x * n)
    p.defer_concrete = True   # tracing never runs impl: the value depends on other examples
    return p


def _check_name(axis_name, what):
    if axis_name is None:
        raise TypeError(f"{what}: axis_name must be given (the axis_name of an enclosing vmap)")
    if not isinstance(axis_name, (str, int)) or isinstance(axis_name, bool):
        raise TypeError(f"{what}: axis_name must be a str (or int), got {axis_name!r}")


def _names(axis_name, what):
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        _check_name(n, what)
    return names


def _same_aval(what, kinds):
    def rule(x, *, axis_name):
        if x.dtype.kind not in kinds:
            raise TypeError(f"{what}: operand dtype {x.dtype} is not supported "
                            f"(operand {x.str_short()})")
        return x
    return rule


def _reducing_batch(prim, reduce_fn, invariant_fn):
    """The batch rule shared by psum/pmax/pmin.

    The innermost vmap is the one whose batch dims arrive here. If it owns the
    name, reduce over its batch dim (the result no longer varies). Otherwise the
    collective belongs to an outer vmap: keep it for that one (rebind on the
    batched value) and let this batch dim pass through.
    """
    def rule(args, dims, *, axis_name):
        (x,), (d,) = args, dims
        top = axis_frames()[-1]
        if top.name == axis_name:
            if d is None:
                return invariant_fn(x, top.size), None
            return reduce_fn(x, (d,)), None
        frame = find_axis(axis_name)
        if _varies(x, frame):
            return prim.bind(x, axis_name=axis_name), d
        return invariant_fn(x, frame.size), d
    return rule


# --------------------------------------------------------------------------- psum

psum_p = _collective("psum")


def _psum_invariant(x, n):
    return mul(x, np.full(aval(x).shape, n, aval(x).dtype))


def _psum_reduce(x, axes):
    return reduce_sum(x, axes)


def _psum_transpose(ct, x, *, axis_name):
    # y_b = sum_b' x_b' for every b, so ct_x_b = sum_b' ct_b': psum again
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [psum_p.bind(ct, axis_name=axis_name)]


psum_p.def_rules(abstract_eval=_same_aval("psum", "fciu"), impl=_impl_unbound,
                 batch=_reducing_batch(psum_p, _psum_reduce, _psum_invariant))
deflinear(psum_p, _psum_transpose)

# --------------------------------------------------------------------------- pmax / pmin

pmax_p = _collective("pmax")
pmin_p = _collective("pmin")


def _chooser_jvp(prim):
    # the tangent of the example(s) attaining the extreme, averaged over ties
    def rule(primals, tangents, *, axis_name):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis_name=axis_name)
        if type(t) is Zero:
            return out, Zero(aval(out))
        m = convert_element_type(eq(x, out), aval(x).dtype)
        num = psum_p.bind(mul(m, t), axis_name=axis_name)
        cnt = psum_p.bind(m, axis_name=axis_name)
        return out, div(num, cnt)
    return rule


def _reduce_with(name):
    def f(x, axes):
        return getattr(reductions, name)(x, axes)
    return f


for _p, _r in ((pmax_p, "reduce_max"), (pmin_p, "reduce_min")):
    _p.def_rules(abstract_eval=_same_aval(_p.name, "fiub"), impl=_impl_unbound,
                 jvp=_chooser_jvp(_p), batch=_reducing_batch(_p, _reduce_with(_r),
                                                             lambda x, n: x))

# --------------------------------------------------------------------------- all_gather

all_gather_p = _collective("all_gather")


def _all_gather_aval(x, *, axis_name, axis, axis_size):
    if not 0 <= axis <= x.ndim:
        raise ValueError(f"all_gather: axis {axis} out of range for operand {x.str_short()}")
    shape = x.shape[:axis] + (axis_size,) + x.shape[axis:]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _gather_invariant(x, d, axis, n):
    """Broadcast ``x`` (batch dim ``d`` or None) along a new axis ``axis`` of size n."""
    if d is not None:
        x = move_batch_axis(x, d, 0)
        axis += 1
    shape = aval(x).shape
    out_shape = shape[:axis] + (n,) + shape[axis:]
    dims = tuple(i if i < axis else i + 1 for i in range(len(shape)))
    return broadcast_in_dim(x, out_shape, dims), (None if d is None else 0)


def _all_gather_batch(args, dims, *, axis_name, axis, axis_size):
    (x,), (d,) = args, dims
    top = axis_frames()[-1]
    if top.name == axis_name:
        if d is None:
            return _gather_invariant(x, None, axis, top.size)
        # the batch dim itself is the gathered axis, the same in every example
        return move_batch_axis(x, d, axis), None
    frame = find_axis(axis_name)
    if not _varies(x, frame):
        return _gather_invariant(x, d, axis, frame.size)
    x = move_batch_axis(x, d, 0) if d is not None else x
    out = all_gather_p.bind(x, axis_name=axis_name, axis=axis + (d is not None),
                            axis_size=axis_size)
    return out, (None if d is None else 0)


def _all_gather_transpose(ct, x, *, axis_name, axis, axis_size):
    # ct_x_b = sum_b' ct_b'[b]: sum the cotangents, then take this example's row
    if type(ct) is Zero:
        return [Zero(x.aval)]
    s = psum_p.bind(ct, axis_name=axis_name)
    idx = broadcast_in_dim(axis_index(axis_name), (axis_size,), ())
    onehot = convert_element_type(eq(np.arange(axis_size, dtype=np.int32), idx), aval(s).dtype)
    return [reduce_sum(mul(s, broadcast_in_dim(onehot, aval(s).shape, (axis,))), (axis,))]


all_gather_p.def_rules(abstract_eval=_all_gather_aval, impl=_impl_unbound,
                       batch=_all_gather_batch)
deflinear(all_gather_p, _all_gather_transpose)

# --------------------------------------------------------------------------- axis_index

axis_index_p = _collective("axis_index")
axis_index_p.not_differentiable = True


def _axis_index_batch(args, dims, *, axis_name):
    top = axis_frames()[-1]
    if top.name == axis_name:
        return np.arange(top.size, dtype=np.int32), 0
    return _record_axis_index(find_axis(axis_name), axis_name), None


def _record_axis_index(frame, axis_name):
    """axis_index has no operand to find a trace by: record it in the trace of its vmap."""
    if frame.tracing and frame.level < trace_depth():
        trace = trace_at_level(frame.level)
        return trace.process(axis_index_p, (), {"axis_name": axis_name})
    raise NameError(f"axis_index({axis_name!r}) used outside the function traced by "
                    f"vmap(..., axis_name={axis_name!r})")


axis_index_p.def_rules(abstract_eval=lambda *, axis_name: ShapedArray((), np.int32),
                       impl=_impl_unbound, batch=_axis_index_batch)

# --------------------------------------------------------------------------- lax wrappers


def psum(x, axis_name):
    """Sum of ``x`` over the examples of the vmap axis (or axes) ``axis_name``.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: psum(x, "i"), axis_name="i")(np.arange(3.0)).tolist()
    [3.0, 3.0, 3.0]
    """
    for n in _names(axis_name, "psum"):
        frame = find_axis(n)
        x = psum_p.bind(x, axis_name=n) if _varies(x, frame) else _psum_invariant(x, frame.size)
    return x


def pmean(x, axis_name):
    """Mean of ``x`` over the vmap axis (or axes) ``axis_name``; integers give float64.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: pmean(x, "i"), axis_name="i")(np.arange(3.0)).tolist()
    [1.0, 1.0, 1.0]
    """
    names = _names(axis_name, "pmean")
    n = 1
    for name in names:
        n *= find_axis(name).size
    if aval(x).dtype.kind not in "fc":
        x = convert_element_type(x, np.float64)
    s = psum(x, names)
    return div(s, np.full(aval(s).shape, n, aval(s).dtype))


def _chooser(prim, what, result):
    """``pmax``/``pmin``: ``prim`` over each named axis ``x`` varies along."""
    def f(x, axis_name):
        for n in _names(axis_name, prim.name):
            if _varies(x, find_axis(n)):
                x = prim.bind(x, axis_name=n)
        return x
    f.__name__ = prim.name
    f.__doc__ = f"""{what} of ``x`` over the vmap axis ``axis_name``.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: {prim.name}(x, "i"), axis_name="i")(np.array([1.0, 5.0])).tolist()
    {result}
    """
    return f


pmax = _chooser(pmax_p, "Maximum", [5.0, 5.0])
pmin = _chooser(pmin_p, "Minimum", [1.0, 1.0])


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every example's ``x``, stacked along a new axis ``axis`` (concatenated if ``tiled``).

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: all_gather(x, "i"), axis_name="i")(np.arange(2.0)).tolist()
    [[0.0, 1.0], [0.0, 1.0]]
    """
    _check_name(axis_name, "all_gather")
    frame = find_axis(axis_name)
    nd = aval(x).ndim
    if not -nd - 1 <= axis <= nd:
        raise ValueError(f"all_gather: axis {axis} out of range for an operand of shape "
                         f"{aval(x).shape}")
    axis = axis % (nd + 1)
    if _varies(x, frame):
        out = all_gather_p.bind(x, axis_name=axis_name, axis=axis, axis_size=frame.size)
    else:
        out = _gather_invariant(x, None, axis, frame.size)[0]
    if tiled:
        if axis == nd:
            raise ValueError("all_gather(tiled=True): axis must name an existing axis of x")
        shape = aval(out).shape
        out = reshape(out, shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:])
    return out


def axis_index(axis_name):
    """The position (int32) of the current example along the vmap axis ``axis_name``.

    >>> import functrans as ft, numpy as np
    >>> ft.vmap(lambda x: x + axis_index("i"), axis_name="i")(np.zeros(3)).tolist()
    [0.0, 1.0, 2.0]
    """
    _check_name(axis_name, "axis_index")
    return _record_axis_index(find_axis(axis_name), axis_name)
