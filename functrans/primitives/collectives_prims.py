"""The collective primitives and their rules (the public functions are in ``collectives``).

Each rule serves both kinds of axis: a ``vmap`` axis (the batching rule of the vmap owning
the name does the work) and a mesh axis bound by ``shard_map`` (the implementation calls
MPI through ``collectives_mesh``; the batching rules of inner vmaps rebind the collective
on the batched value). ``all_gather_p``, ``psum_scatter_p`` and ``all_to_all_p`` work on
whole blocks (the tiled forms); the public functions build the untiled ones from them.

>>> psum_p.name, all_gather_p.transpose is not None
('psum', True)
"""
from __future__ import annotations

import numpy as np

from jaxpr_ir import ShapedArray, dtype_kind
from ..tracing import Tracer, axis_frames, trace_at_level, trace_depth
from ..sharding import find_mesh_frame
from . import collectives_mesh as mesh_ops
from .base import Primitive, Zero, aval, deflinear, move_batch_axis
from .elementwise import convert_element_type, convert_element_type_p, div, eq, mul
from .reductions import reduce_max, reduce_min, reduce_sum
from .slicing import concatenate, slice_in_dim
from .structural import broadcast_in_dim, reshape, transpose


class MeshAxis:
    """A name bound by a shard_map's mesh (the frame-like counterpart of a vmap AxisFrame)."""
    __slots__ = ("name", "size", "frame")

    def __init__(self, name, frame):
        self.name, self.frame = name, frame
        self.size = frame.mesh.axis_size(name)


def binding(name):
    """The vmap frame or mesh axis binding ``name`` (the innermost binding), or NameError."""
    m = find_mesh_frame(name)
    if name is not None:
        for i in range(len(axis_frames()) - 1, -1, -1):
            if axis_frames()[i].name == name:
                if m is None or i >= m.vmap_depth:
                    return axis_frames()[i]
                break
    if m is None:
        raise mesh_ops.unbound(name)
    return MeshAxis(name, m)


def varies(x, frame):
    """Whether ``x`` may differ between the members of ``frame``'s axis.

    On a mesh axis every process holds its own value: always. Under a vmap, concrete
    values and tracers of traces older than the vmap's own are the same for every
    example; a frame that is not tracing cannot tell.
    """
    if type(frame) is MeshAxis:
        return True
    if not isinstance(x, Tracer):
        return False
    return not frame.tracing or x._trace.level >= frame.level


def into_body(x, ax):
    """On a mesh axis while shard_map traces its body: ``x`` as a value of the body's trace,
    so that the collective is recorded in the body (never run while tracing, nor recorded in
    an outer trace that owns a closed-over ``x``)."""
    if type(ax) is not MeshAxis or not ax.frame.tracing:
        return x
    if isinstance(x, Tracer) and x._trace.level >= ax.frame.level:
        return x
    a = aval(x)
    return trace_at_level(ax.frame.level).process(
        convert_element_type_p, (x,), {"new_dtype": a.dtype, "weak_type": a.weak_type})


def _collective(name, mesh_impl):
    p = Primitive(name)
    p.batch_always = True     # an unbatched operand still needs the rule (e.g. psum -> x * n)
    p.defer_concrete = True   # tracing never runs impl: the value depends on other members
    p.impl = mesh_impl        # outside a vmap: over a mesh axis bound by shard_map
    return p


def check_name(axis_name, what):
    if axis_name is None:
        raise TypeError(f"{what}: axis_name must be given (the axis_name of an enclosing vmap "
                        f"or a mesh axis of an enclosing shard_map)")
    if not isinstance(axis_name, (str, int)) or isinstance(axis_name, bool):
        raise TypeError(f"{what}: axis_name must be a str (or int), got {axis_name!r}")


def axis_names(axis_name, what):
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        check_name(n, what)
    return names


def _same_aval(what, kinds):
    def rule(x, *, axis_name):
        if dtype_kind(x.dtype) not in kinds:
            raise TypeError(f"{what}: operand dtype {x.dtype} is not supported "
                            f"(operand {x.str_short()})")
        return x
    return rule


def _owner(axis_name):
    """(frame, True) when the innermost vmap (whose batch dims the rule sees) owns the name;
    else (the vmap frame or mesh axis that binds it, False)."""
    frame = binding(axis_name)
    return frame, frame is axis_frames()[-1]


def _reducing_batch(prim, reduce_fn, invariant_fn):
    """The batch rule shared by psum/pmax/pmin: reduce over the owning vmap's batch dim;
    a collective of an outer vmap or a mesh axis is rebound on the batched value."""
    def rule(args, dims, *, axis_name):
        (x,), (d,) = args, dims
        frame, mine = _owner(axis_name)
        if mine:
            if d is None:
                return invariant_fn(x, frame.size), None
            return reduce_fn(x, (d,)), None
        if varies(x, frame):
            return prim.bind(x, axis_name=axis_name), d
        return invariant_fn(x, frame.size), d
    return rule


# --------------------------------------------------------------------------- psum

psum_p = _collective("psum", lambda x, *, axis_name: mesh_ops.mesh_psum(x, axis_name))


def psum_invariant(x, n):
    return mul(x, np.full(aval(x).shape, n, aval(x).dtype))


def _psum_transpose(ct, x, *, axis_name):
    # y_b = sum_b' x_b' for every b, so ct_x_b = sum_b' ct_b': psum again
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [psum_p.bind(per_member(ct, axis_name), axis_name=axis_name)]


psum_p.def_rules(abstract_eval=_same_aval("psum", "fciu"),
                 batch=_reducing_batch(psum_p, reduce_sum, psum_invariant))
deflinear(psum_p, _psum_transpose)

# --------------------------------------------------------------------------- pmax / pmin

pmax_p = _collective("pmax", lambda x, *, axis_name: mesh_ops.mesh_pmax(x, axis_name))
pmin_p = _collective("pmin", lambda x, *, axis_name: mesh_ops.mesh_pmin(x, axis_name))


def _chooser_jvp(prim):
    # the tangent of the member(s) attaining the extreme, averaged over ties
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


for _p, _r in ((pmax_p, reduce_max), (pmin_p, reduce_min)):
    _p.def_rules(abstract_eval=_same_aval(_p.name, "fiub"), jvp=_chooser_jvp(_p),
                 batch=_reducing_batch(_p, _r, lambda x, n: x))

# --------------------------------------------------------------------------- axis_index

axis_index_p = _collective("axis_index",
                           lambda *, axis_name: mesh_ops.mesh_axis_index(axis_name))
axis_index_p.not_differentiable = True


def _axis_index_batch(args, dims, *, axis_name):
    frame, mine = _owner(axis_name)
    if mine:
        return np.arange(frame.size, dtype=np.int32), 0
    return record_axis_index(frame, axis_name), None


def record_axis_index(frame, axis_name):
    """axis_index has no operand to find a trace by: record it in the trace of the vmap or
    shard_map body that binds the name (or, running a body, compute it)."""
    if type(frame) is MeshAxis:
        frame = frame.frame
        if not frame.tracing:
            return axis_index_p.bind(axis_name=axis_name)
    if frame.tracing and frame.level < trace_depth():
        trace = trace_at_level(frame.level)
        return trace.process(axis_index_p, (), {"axis_name": axis_name})
    raise NameError(f"axis_index({axis_name!r}) used outside the function traced by "
                    f"vmap(..., axis_name={axis_name!r}) or shard_map")


axis_index_p.def_rules(abstract_eval=lambda *, axis_name: ShapedArray((), np.int32),
                       batch=_axis_index_batch)


def own_block(y, axis_name, dim, n):
    """Block ``axis_index(axis_name)`` of ``n`` equal blocks of ``y`` along ``dim``."""
    shape = aval(y).shape
    k = shape[dim] // n
    y = reshape(y, shape[:dim] + (n, k) + shape[dim + 1:])
    idx = broadcast_in_dim(record_axis_index(binding(axis_name), axis_name), (n,), ())
    onehot = convert_element_type(eq(np.arange(n, dtype=np.int32), idx), aval(y).dtype)
    return reduce_sum(mul(y, broadcast_in_dim(onehot, aval(y).shape, (dim,))), (dim,))



def lift_invariant(x, frame):
    """A value the same for every example of a vmap axis (a tracer of an older trace, or a
    constant), recorded in the vmap's trace so that the batching rule treats it per example
    (only needed by collectives without an invariant shortcut)."""
    if varies(x, frame):
        return x
    if frame.tracing and frame.level < trace_depth():
        a = aval(x)
        return trace_at_level(frame.level).process(
            convert_element_type_p, (x,), {"new_dtype": a.dtype, "weak_type": a.weak_type})
    return x


def per_member(ct, axis_name):
    """A cotangent as a value of the trace binding ``axis_name``, before a transpose rule
    binds a collective on it: one the same for every member of a vmap axis (grad's seed,
    a constant) would otherwise never reach that vmap's batching rule and run as a mesh
    collective (a NameError without a mesh, the wrong communication with one)."""
    frame = binding(axis_name)
    return into_body(lift_invariant(ct, frame), frame)


def _rebind_batched(prim, x, d, shift_params, params):
    """A collective of an outer vmap or a mesh axis under an inner vmap: the same collective
    on the batched value (batch dim moved to 0, axis params shifted past it)."""
    if d is None:
        return prim.bind(x, **params), None
    x = move_batch_axis(x, d, 0)
    return prim.bind(x, **{**params, **{k: params[k] + 1 for k in shift_params}}), 0


def _merge(x, axis):
    """Merge dimensions ``axis`` and ``axis + 1`` (row-major)."""
    s = aval(x).shape
    return reshape(x, s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2:])


def _split(x, axis, n):
    """Split dimension ``axis`` into (n, size // n)."""
    s = aval(x).shape
    return reshape(x, s[:axis] + (n, s[axis] // n) + s[axis + 1:])


# --------------------------------------------------------------------------- all_gather

def _all_gather_aval(x, *, axis_name, axis, axis_size):
    if not 0 <= axis <= x.ndim:
        raise ValueError(f"all_gather: axis {axis} out of range for operand {x.str_short()}")
    shape = x.shape[:axis] + (axis_size,) + x.shape[axis:]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _all_gather_impl(x, *, axis_name, axis, axis_size):
    return mesh_ops.mesh_all_gather(x, axis_name, axis)


all_gather_p = _collective("all_gather", _all_gather_impl)


def gather_invariant(x, d, axis, n):
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
    frame, mine = _owner(axis_name)
    if mine:
        if d is None:
            return gather_invariant(x, None, axis, frame.size)
        # the batch dim itself is the gathered axis, the same in every example
        return move_batch_axis(x, d, axis), None
    if not varies(x, frame):
        return gather_invariant(x, d, axis, frame.size)
    return _rebind_batched(all_gather_p, x, d, ("axis",),
                           dict(axis_name=axis_name, axis=axis, axis_size=axis_size))


def _all_gather_transpose(ct, x, *, axis_name, axis, axis_size):
    # ct_x_b = sum_b' ct_b'[b]: the sum of the cotangents, block b to member b
    if type(ct) is Zero:
        return [Zero(x.aval)]
    s = psum_scatter_p.bind(per_member(ct, axis_name), axis_name=axis_name,
                            scatter_dimension=axis, axis_size=axis_size)
    return [reshape(s, x.aval.shape)]


all_gather_p.def_rules(abstract_eval=_all_gather_aval, batch=_all_gather_batch)
deflinear(all_gather_p, _all_gather_transpose)


def gather_tiled(x, name, axis, frame, tiled):
    """all_gather over one name: a new axis at ``axis`` (merged with the next if tiled)."""
    if varies(x, frame):
        out = all_gather_p.bind(into_body(x, frame), axis_name=name, axis=axis,
                                axis_size=frame.size)
    else:
        out = gather_invariant(x, None, axis, frame.size)[0]
    return _merge(out, axis) if tiled else out


# --------------------------------------------------------------------------- psum_scatter

def _psum_scatter_aval(x, *, axis_name, scatter_dimension, axis_size):
    d = scatter_dimension
    if not 0 <= d < x.ndim or x.shape[d] % axis_size:
        raise ValueError(f"psum_scatter: dimension {d} of operand {x.str_short()} does not "
                         f"split into {axis_size} blocks")
    shape = x.shape[:d] + (x.shape[d] // axis_size,) + x.shape[d + 1:]
    return ShapedArray(shape, x.dtype, x.weak_type)


def _psum_scatter_impl(x, *, axis_name, scatter_dimension, axis_size):
    return mesh_ops.mesh_psum_scatter(x, axis_name, scatter_dimension)


psum_scatter_p = _collective("psum_scatter", _psum_scatter_impl)


def _psum_scatter_batch(args, dims, *, axis_name, scatter_dimension, axis_size):
    (x,), (d,) = args, dims
    frame, mine = _owner(axis_name)
    n = frame.size
    if mine:
        # out_b = block b of the sum: the blocks become the batch dim
        s = psum_invariant(x, n) if d is None else reduce_sum(x, (d,))
        return _split(s, scatter_dimension, n), scatter_dimension
    if not varies(x, frame):
        dim = scatter_dimension + (d is not None and d <= scatter_dimension)
        return own_block(psum_invariant(x, n), axis_name, dim, n), d
    return _rebind_batched(psum_scatter_p, x, d, ("scatter_dimension",),
                           dict(axis_name=axis_name, scatter_dimension=scatter_dimension,
                                axis_size=axis_size))


def _psum_scatter_transpose(ct, x, *, axis_name, scatter_dimension, axis_size):
    # ct_x_c = concatenation over b of ct_b: all_gather, tiled
    if type(ct) is Zero:
        return [Zero(x.aval)]
    g = all_gather_p.bind(per_member(ct, axis_name), axis_name=axis_name,
                          axis=scatter_dimension, axis_size=axis_size)
    return [_merge(g, scatter_dimension)]


psum_scatter_p.def_rules(abstract_eval=_psum_scatter_aval, batch=_psum_scatter_batch)
deflinear(psum_scatter_p, _psum_scatter_transpose)


def scatter_tiled(x, name, dim, frame):
    """psum_scatter over one name, tiled (the block keeps its dimension)."""
    if varies(x, frame):
        return psum_scatter_p.bind(into_body(x, frame), axis_name=name,
                                   scatter_dimension=dim, axis_size=frame.size)
    return own_block(psum_invariant(x, frame.size), name, dim, frame.size)


# --------------------------------------------------------------------------- ppermute

def _ppermute_impl(x, *, axis_name, perm, axis_size):
    return mesh_ops.mesh_ppermute(x, axis_name, perm)


ppermute_p = _collective("ppermute", _ppermute_impl)


def _ppermute_batch(args, dims, *, axis_name, perm, axis_size):
    (x,), (d,) = args, dims
    frame, mine = _owner(axis_name)
    if not mine:
        x = lift_invariant(x, frame)
        return _rebind_batched(ppermute_p, x, d, (),
                               dict(axis_name=axis_name, perm=perm, axis_size=axis_size))
    n = frame.size
    x = move_batch_axis(x, d, 0, n)
    src_of = {dst: src for src, dst in perm}
    zero = None
    rows = []
    for b in range(n):
        if b in src_of:
            rows.append(slice_in_dim(x, src_of[b], src_of[b] + 1, axis=0))
        else:
            if zero is None:     # (not 0 * x: that is NaN where x is inf or NaN)
                zero = broadcast_in_dim(np.zeros((), aval(x).dtype),
                                        (1,) + aval(x).shape[1:], ())
            rows.append(zero)
    return concatenate(rows, 0), 0


def _ppermute_transpose(ct, x, *, axis_name, perm, axis_size):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    inverse = tuple((d, s) for s, d in perm)
    return [ppermute_p.bind(per_member(ct, axis_name), axis_name=axis_name, perm=inverse,
                            axis_size=axis_size)]


ppermute_p.def_rules(abstract_eval=lambda x, **_: x, batch=_ppermute_batch)
deflinear(ppermute_p, _ppermute_transpose)

# --------------------------------------------------------------------------- all_to_all


def _all_to_all_aval(x, *, axis_name, split_axis, concat_axis, axis_size):
    s, c, n = split_axis, concat_axis, axis_size
    if not (0 <= s < x.ndim and 0 <= c < x.ndim) or x.shape[s] % n:
        raise ValueError(f"all_to_all: split axis {s} / concat axis {c} invalid for operand "
                         f"{x.str_short()} over {n} members")
    shape = list(x.shape)
    shape[s] //= n
    shape[c] *= n
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _all_to_all_impl(x, *, axis_name, split_axis, concat_axis, axis_size):
    return mesh_ops.mesh_all_to_all(x, axis_name, split_axis, concat_axis)


all_to_all_p = _collective("all_to_all", _all_to_all_impl)


def _all_to_all_batch(args, dims, *, axis_name, split_axis, concat_axis, axis_size):
    (x,), (d,) = args, dims
    frame, mine = _owner(axis_name)
    params = dict(axis_name=axis_name, split_axis=split_axis, concat_axis=concat_axis,
                  axis_size=axis_size)
    if not mine:
        return _rebind_batched(all_to_all_p, lift_invariant(x, frame), d,
                               ("split_axis", "concat_axis"), params)
    n = frame.size
    x = move_batch_axis(x, d, 0, n)           # X[j]: example j's operand
    nd = aval(x).ndim - 1
    # label X's axes: "J" the example, then the operand's, the split one as ("B", "K")
    labels = ["J"]
    for i in range(nd):
        labels += ["B", ("K", i)] if i == split_axis else [i]
    x = _split(x, split_axis + 1, n)
    key = lambda i: ("K", i) if i == split_axis else i   # noqa: E731
    target = ["B"]
    for i in range(nd):
        target += ["J", key(i)] if i == concat_axis else [key(i)]
    x = transpose(x, tuple(labels.index(t) for t in target))
    return _merge(x, 1 + concat_axis), 0


def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, axis_size):
    if type(ct) is Zero:
        return [Zero(x.aval)]
    return [all_to_all_p.bind(per_member(ct, axis_name), axis_name=axis_name,
                              split_axis=concat_axis,
                              concat_axis=split_axis, axis_size=axis_size)]


all_to_all_p.def_rules(abstract_eval=_all_to_all_aval, batch=_all_to_all_batch)
deflinear(all_to_all_p, _all_to_all_transpose)
