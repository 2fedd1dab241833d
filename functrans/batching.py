"""The public ``vmap``.

The function is traced on one example (batched arguments become abstract
tracers of the per-example shape; unbatched ones keep their values, so Python
control flow on them works), then ``vmap_eval`` runs the jaxpr with the
batching rules on the real batched arrays.

>>> import functrans as ft, functrans.numpy as fnp
>>> ft.vmap(lambda x: fnp.sum(x * x))(fnp.ones((4, 3))).tolist()
[3.0, 3.0, 3.0, 3.0]
"""
from __future__ import annotations

import numpy as np

from .api_util import as_array, flatten_fun
from .primitives.base import move_batch_axis
from .tracing import Tracer, get_aval, trace_to_jaxpr, wrap
from .transforms.vmap import vmap_eval
from .tree_util import broadcast_prefix, tree_flatten, tree_unflatten


def _out(x):
    return x if isinstance(x, Tracer) else wrap(np.asarray(x))


def vmap(fun, in_axes=0, out_axes=0, axis_size=None, axis_name=None):
    """Vectorise ``fun`` over an axis of its arguments.

    ``in_axes``/``out_axes``: an int, None (not batched) or a pytree prefix of
    the arguments / outputs; negative axes count from the end.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.vmap(lambda a, b: a * b, in_axes=(0, None))(fnp.ones((2, 3)), 2.0).shape
    (2, 3)
    """
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    def vmapped(*args, **kwargs):
        if kwargs:
            raise TypeError("vmap: keyword arguments are not batched; pass them positionally "
                            "or close over them")
        axes_tree = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes has {len(in_axes)} entries but the function was "
                             f"called with {len(args)} positional arguments")
        flat, in_tree = tree_flatten(tuple(args))
        flat = [as_array(x) for x in flat]
        dims = broadcast_prefix(axes_tree, tuple(args), what="vmap in_axes")
        size = axis_size
        sizes = []
        norm = []
        for i, (x, d) in enumerate(zip(flat, dims)):
            if d is None:
                norm.append(None)
                continue
            if not isinstance(d, (int, np.integer)):
                raise ValueError(f"vmap in_axes must be ints or None, got {d!r} for argument leaf {i}")
            nd = get_aval(x).ndim
            if not -nd <= d < nd:
                raise ValueError(f"vmap: in_axes {d} is out of range for argument leaf {i} of "
                                 f"rank {nd} (shape {get_aval(x).shape})")
            d = int(d) % nd
            norm.append(d)
            sizes.append((i, get_aval(x).shape[d]))
        if sizes:
            distinct = {s for _, s in sizes}
            if len(distinct) > 1 or (size is not None and size not in distinct):
                desc = ", ".join(f"argument leaf {i} has size {s}" for i, s in sizes)
                raise ValueError(f"vmap got inconsistent sizes for the mapped axis: {desc}"
                                 + (f" (axis_size={size})" if size is not None else ""))
            size = sizes[0][1]
        elif size is None:
            raise ValueError("vmap needs at least one batched argument or an explicit axis_size")
        avals, vals = [], []
        for x, d in zip(flat, norm):
            a = get_aval(x)
            if d is None:
                avals.append(a)
                vals.append(x.val if isinstance(x, Tracer) else x)
            else:
                avals.append(a.update(shape=a.shape[:d] + a.shape[d + 1:]))
                vals.append(None)
        flat_fun, out_tree = flatten_fun(fun, in_tree)
        jaxpr, consts, _ = trace_to_jaxpr(flat_fun, avals, vals, name="vmap")
        outs, odims = vmap_eval(jaxpr, consts, flat, norm, size, axis_name)
        otree = out_tree()
        oaxes = broadcast_prefix(out_axes, tree_unflatten(otree, [0] * otree.num_leaves),
                                 what="vmap out_axes")
        res = []
        for o, d, t in zip(outs, odims, oaxes):
            if t is None:
                if d is not None:
                    raise ValueError("vmap: out_axes=None for an output that is batched "
                                     "(it varies along the mapped axis)")
                res.append(_out(o))
                continue
            nd = get_aval(o).ndim + 1
            if not -nd <= t < nd:
                raise ValueError(f"vmap: out_axes {t} out of range for an output of rank {nd}")
            res.append(_out(move_batch_axis(o, d, int(t) % nd, size)))
        return tree_unflatten(otree, res)

    vmapped.__name__ = f"vmap({getattr(fun, '__name__', 'fun')})"
    return vmapped
