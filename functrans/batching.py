"""The public ``vmap``.

The function is traced once, on one example: batched arguments become abstract
tracers of the per-example shape; unbatched ones keep their values, so Python
control flow on them works. Then ``vmap_eval`` runs the jaxpr with the
batching rules on the real batched arrays (eagerly, or into an enclosing
trace), so the cost is one trace plus one vectorised op per equation.

>>> import functrans as ft, functrans.numpy as fnp, numpy as np
>>> ft.vmap(lambda x: fnp.sum(x * x))(np.ones((4, 3))).tolist()
[3.0, 3.0, 3.0, 3.0]
"""
from __future__ import annotations

import collections
import inspect
from typing import Any, Callable, Hashable

import numpy as np

from .api_util import FLOAT0, as_array, flatten_fun, float0_as_structure, keep_metadata
from .primitives.base import move_batch_axis
from .tracing import Tracer, leaked_tracer_error, axis_frames, get_aval, trace_to_jaxpr, wrap
from .transforms.vmap import AxisFrame, vmap_eval
from .traceback_util import api_boundary
from .key_array import KeyArray, is_key
from .tree_util import node_handlers, tree_flatten, tree_leaves, tree_unflatten

__all__ = ["vmap"]


def _out(x):
    if isinstance(x, Tracer):
        if not x._trace.alive:
            raise leaked_tracer_error(x)     # a tracer leaked from an earlier transform, returned as is
        return x
    return wrap(np.asarray(x))


def _is_axis(a):
    return a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)))


def _child_keys(t, h, x):
    """Path components of the children of node ``x`` (type ``t``, handlers ``h``)."""
    children, aux = h[0](x)
    if t is dict or t is collections.OrderedDict:   # keys compared, not positions
        return children, [f"[{k!r}]" for k in aux]
    if t is collections.defaultdict:
        return children, [f"[{k!r}]" for k in aux[1]]
    if hasattr(x, "_fields"):
        return children, [f".{f}" for f in x._fields]
    return children, [f"[{i}]" for i in range(len(children))]


def _leaf_paths(tree, path, out):
    """Append the path of every leaf of ``tree`` (in tree_flatten order) to ``out``."""
    stack = [(tree, path)]          # an explicit stack: pytrees may nest thousands deep
    while stack:
        x, p = stack.pop()
        t, h = node_handlers(x)
        if h is None:
            out.append(p)
            continue
        children, keys = _child_keys(t, h, x)
        stack.extend((c, p + k) for c, k in zip(reversed(children), reversed(keys)))


def _leaf_axes(axis, tree, count):
    """``axis`` for each of the ``count`` leaves of ``tree``; a negative axis counts a typed
    key's axes, so its uint32 words (a trailing axis of 2 more) take ``axis - 1``."""
    if axis is None or axis >= 0:
        return [axis] * count
    return [axis - 1 if isinstance(x, KeyArray) else axis for x in tree_leaves(tree, is_key)]


def _broadcast_axes(prefix, tree, path, axes, paths, what):
    """Expand the pytree prefix ``prefix`` of ``tree`` to one axis per leaf.

    Errors name the argument (``path``) whose structure does not match.
    """
    stack = [(prefix, tree, path)]   # explicit, in tree_flatten order (deep pytrees)
    while stack:
        prefix, tree, path = stack.pop()
        if _is_axis(prefix):
            n = len(paths)
            _leaf_paths(tree, path, paths)
            axes.extend(_leaf_axes(prefix, tree, len(paths) - n))
            continue
        pt, ph = node_handlers(prefix)
        if ph is None:
            raise ValueError(f"vmap {what} for {path} must be an int, None or a pytree prefix "
                             f"of it, got {prefix!r:.60}")
        tt, th = node_handlers(tree)
        if tt is not pt or th is None:
            raise ValueError(f"vmap {what} for {path} is a {pt.__name__} ({prefix!r:.60}) but "
                             f"{path} is a {tt.__name__}; the {what} tree must be a prefix of "
                             "the argument's pytree structure")
        pc, pk = _child_keys(pt, ph, prefix)
        tc, tk = _child_keys(tt, th, tree)
        if pk != tk:
            raise ValueError(f"vmap {what} for {path} has entries {''.join(pk) or '(none)'} but "
                             f"{path} has {''.join(tk) or '(none)'}; the {what} tree must match "
                             "the argument's pytree structure")
        stack.extend((p, c, path + k) for p, c, k in
                     zip(reversed(pc), reversed(tc), reversed(pk)))


def _arg_names(fun):
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return [], None
    pos = [p.name for p in params
           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    return pos, var



def _with_leaves(flat_fun, passed, n):
    """``flat_fun`` taking only the traced leaves: the leaves in ``passed`` (position ->
    value), objects no transform can trace, are put back in their places."""
    def f(*xs):
        it = iter(xs)
        return flat_fun(*[passed[i] if i in passed else next(it) for i in range(n)])
    return f

class _Vmapped:
    """``vmap(fun, ...)``: call it with batched arguments."""

    def __init__(self, fun, in_axes, out_axes, axis_size, axis_name):
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)   # as JAX: a list of in_axes is one entry per argument
        if not (_is_axis(in_axes) or type(in_axes) is tuple):
            raise ValueError("vmap in_axes must be an int, None, or a tuple with one entry per "
                             f"positional argument, got {type(in_axes).__name__} "
                             f"{in_axes!r:.60}")
        if axis_size is not None and (not _is_axis(axis_size) or axis_size < 0):
            raise ValueError(f"vmap axis_size must be a non-negative int, got {axis_size!r}")
        self.fun = fun
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.axis_size = None if axis_size is None else int(axis_size)
        self.axis_name = axis_name
        self._names = None
        self._axes_cache = {}
        self.name = f"vmap({getattr(fun, '__name__', 'fun')})"

    def _argname(self, i):
        if self._names is None:
            self._names = _arg_names(self.fun)
        pos, var = self._names
        if i < len(pos):
            return f"argument {pos[i]}"
        return f"argument {var or 'args'}[{i - len(pos)}]"

    # ------------------------------------------------------------------ in_axes

    def _in_dims(self, args, kwargs, in_tree):
        """One axis per flat leaf (cached per argument structure) and the leaf names."""
        key = in_tree
        hit = self._axes_cache.get(key)
        if hit is not None:
            return hit
        in_axes = self.in_axes
        if type(in_axes) is tuple and len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes has {len(in_axes)} entries but {self.name} was "
                             f"called with {len(args)} positional argument(s); in_axes must "
                             "be an int, None, or a tuple with one entry per positional argument")
        axes, paths = [], []
        for i, a in enumerate(args):
            pre = in_axes[i] if type(in_axes) is tuple else in_axes
            _broadcast_axes(pre, a, self._argname(i), axes, paths, "in_axes")
        # keyword arguments are mapped over their leading axis, as in JAX
        _broadcast_axes(0, kwargs, "keyword argument", axes, paths, "in_axes")
        hit = (axes, paths)
        if len(self._axes_cache) < 64:
            self._axes_cache[key] = hit
        return hit

    def __call__(self, *args, **kwargs):
        flat, in_tree = tree_flatten((args, kwargs))
        axes, paths = self._in_dims(args, kwargs, in_tree)
        size = self.axis_size
        norm, avals, vals = [], [], []
        sizes = None
        passed = {}     # leaf position -> a non-array leaf not mapped (a function): as is
        for i, (x, d) in enumerate(zip(flat, axes)):
            try:
                x = flat[i] = as_array(x)
            except TypeError:
                if d is not None:
                    raise
                passed[i] = x
                norm.append(None)
                avals.append(None)
                vals.append(None)
                continue
            a = get_aval(x)
            if d is None:
                norm.append(None)
                avals.append(a)
                vals.append(x.val if isinstance(x, Tracer) else x)
                continue
            nd = len(a.shape)
            if not -nd <= d < nd:
                raise ValueError(f"vmap in_axes {d} is out of range for {paths[i]} of shape "
                                 f"{a.shape} (rank {nd}; valid axes are {-nd}..{nd - 1})"
                                 if nd else
                                 f"vmap in_axes {d} given for {paths[i]}, a scalar (rank 0) "
                                 "with no axis to map over; use None for it")
            if d < 0:
                d += nd
            norm.append(d)
            n = a.shape[d]
            if size is None:
                size = n
            elif n != size:
                sizes = True
            avals.append(a.update(shape=a.shape[:d] + a.shape[d + 1:]))
            vals.append(None)
        if sizes is not None:
            self._size_error(flat, norm, paths)
        if size is None:
            raise ValueError(f"{self.name}: no argument is mapped (all in_axes are None "
                             "or there are no array arguments); pass axis_size to say how "
                             "many examples there are")
        flat_fun, out_tree = flatten_fun(lambda a, k: float0_as_structure(self.fun(*a, **k)),
                                         in_tree)
        if passed:
            flat_fun = _with_leaves(flat_fun, passed, len(flat))
            flat, norm, avals, vals = ([x for i, x in enumerate(xs) if i not in passed]
                                       for xs in (flat, norm, avals, vals))
        frame = AxisFrame(self.axis_name, size, tracing=True)
        frames = axis_frames()
        frames.append(frame)
        try:
            jaxpr, consts, _ = trace_to_jaxpr(flat_fun, avals, vals, name="vmap", in_sources=flat)
        finally:
            frames.pop()
        outs, odims = vmap_eval(jaxpr, consts, flat, norm, size, self.axis_name)
        return self._batch_float0(self._place_outputs(outs, odims, out_tree(), size), size)

    def _batch_float0(self, tree, size):
        """float0 outputs (``grad(..., allow_int=True)``'s, carried in the structure, not
        traced) get the mapped axis at their out_axes, as JAX's."""
        leaves, tdef = tree_flatten(tree)
        if not any(getattr(x, "dtype", None) == FLOAT0 for x in leaves):
            return tree
        axes = [self.out_axes] * len(leaves)
        if not _is_axis(self.out_axes):
            axes = []
            _broadcast_axes(self.out_axes, tree_unflatten(tdef, [0] * len(leaves)), "output",
                            axes, [], "out_axes")
        return tree_unflatten(tdef, [
            np.zeros(x.shape[:t % (x.ndim + 1)] + (size,) + x.shape[t % (x.ndim + 1):], FLOAT0)
            if getattr(x, "dtype", None) == FLOAT0 and t is not None else x
            for x, t in zip(leaves, axes)])

    def _size_error(self, flat, norm, paths):
        lines = []
        for x, d, p in zip(flat, norm, paths):
            if d is not None:
                shape = get_aval(x).shape
                lines.append(f"  {p} has size {shape[d]} along axis {d} (shape {shape})")
        extra = (f"\nbut axis_size={self.axis_size} was given" if self.axis_size is not None
                 else "")
        raise ValueError("vmap got inconsistent sizes for the mapped axis:\n"
                         + "\n".join(lines) + extra)

    # ------------------------------------------------------------------ out_axes

    def _place_outputs(self, outs, odims, otree, size):
        out_axes = self.out_axes
        if _is_axis(out_axes) and (out_axes is None or out_axes >= 0):
            oaxes = [out_axes] * len(outs)
            opaths = None
        else:
            if isinstance(out_axes, list) and otree.node_type is not list:
                out_axes = tuple(out_axes)
            oaxes, opaths = [], []
            like = tree_unflatten(otree, [0] * otree.num_leaves)
            _broadcast_axes(out_axes, like, "output", oaxes, opaths, "out_axes")
            traced = [getattr(x, "dtype", None) != FLOAT0 for x in tree_leaves(like)]
            if not all(traced):     # float0 outputs are in the structure (_batch_float0)
                oaxes, opaths = ([v for v, k in zip(xs, traced) if k] for xs in (oaxes, opaths))
        res = []
        for i, (o, d, t) in enumerate(zip(outs, odims, oaxes)):
            if t is None:
                if d is not None:
                    where = opaths[i] if opaths else f"output leaf {i}"
                    raise ValueError(f"vmap out_axes is None for {where}, but it varies along "
                                     "the mapped axis (it depends on a mapped input); give it "
                                     "an int out_axes")
                res.append(_out(o))
                continue
            nd = get_aval(o).ndim + (d is None)
            if not -nd <= t < nd:
                where = opaths[i] if opaths else f"output leaf {i}"
                raise ValueError(f"vmap out_axes {t} out of range for {where}, which has rank "
                                 f"{nd} with the mapped axis")
            # an output that does not vary is broadcast along the mapped axis, as in JAX
            res.append(_out(move_batch_axis(o, d, int(t) % nd, size)))
        return tree_unflatten(otree, res)


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: Hashable | None = None, axis_size: int | None = None,
         spmd_axis_name: Hashable | tuple | None = None) -> Callable[..., Any]:
    """Vectorise ``fun`` over an axis of its arguments: one call computes a whole batch.

    ``fun`` is written for one example; the new function takes arguments with an extra
    (mapped) axis and returns outputs with it, without a Python loop.

    Args:
      fun: the function to vectorise (arrays, scalars or pytrees in and out).
      in_axes: which axis of each argument is mapped. An int (negative counts from the
        end) maps that axis of every argument; None leaves an argument unmapped (it is
        the same for every example); a tuple (or list) has one entry per positional
        argument, each an int, None, or a pytree prefix of that argument giving one of
        those per leaf. Keyword arguments are always mapped over their axis 0.
      out_axes: where the mapped axis goes in each output, in the same forms as
        ``in_axes`` (for the output's structure). An output that does not depend on a
        mapped input is broadcast along the mapped axis; None returns it unbatched
        (an error if it does vary).
      axis_size: the number of examples; needed only when no argument is mapped, and
        checked against the mapped axes otherwise.
      axis_name: a name for the mapped axis, used by the collectives ``lax.psum``,
        ``pmean``, ``pmax``, ``pmin``, ``all_gather`` and ``axis_index`` inside ``fun``.
      spmd_axis_name: JAX's mesh axis (or tuple of axes) to shard the mapped axis over;
        it never changes a value (JAX gives the plain vmap's wherever it runs), and a
        functrans process holds whole arrays, so it is checked to be names and unused.
      (The positional order is JAX's: axis_name before axis_size.)

    Returns:
      The batched function. It keeps ``fun``'s ``__name__``, ``__qualname__``,
      ``__doc__`` and ``__module__``, and ``__wrapped__`` is ``fun``.

    >>> import functrans as ft, functrans.numpy as fnp, numpy as np
    >>> ft.vmap(lambda a, b: a * b, in_axes=(0, None))(np.ones((2, 3)), 2.0).shape
    (2, 3)
    >>> ft.vmap(fnp.dot, in_axes=(1, None), out_axes=0)(np.eye(2), np.array([3.0, 4.0])).tolist()
    [3.0, 4.0]
    >>> ft.vmap(lambda x: x - ft.lax.pmean(x, "i"), axis_name="i")(np.array([1.0, 3.0])).tolist()
    [-1.0, 1.0]
    """
    if not callable(fun):
        raise TypeError(f"vmap expects a callable, got {type(fun).__name__}")
    spmd = spmd_axis_name if isinstance(spmd_axis_name, tuple) else (spmd_axis_name,)
    if spmd_axis_name is not None and not all(isinstance(a, str) for a in spmd):
        raise TypeError(f"vmap: spmd_axis_name must be a mesh axis name or a tuple of "
                        f"them, got {spmd_axis_name!r}")
    v = _Vmapped(fun, in_axes, out_axes, axis_size, axis_name)

    @api_boundary           # an error in the user's function ends in the user's frame
    def vmapped(*args, **kwargs):
        return v(*args, **kwargs)

    return keep_metadata(vmapped, fun)
