"""The ufunc methods of ``fnp.add``, ``fnp.maximum`` and the other functions that are
``jnp.ufunc`` objects in JAX: ``reduce``, ``accumulate``, ``reduceat``, ``outer``, ``at``
and the ``identity``/``nin``/``nout``/``nargs`` attributes, attached to the plain
functions (their calls stay the fast elementwise path). Reductions and updates with a
dedicated operation use it (``add.reduce`` is ``sum``, ``add.at`` is ``.at[].add``);
the rest fold the function with the generic ``ufunc`` (``lax.scan``, in order).

>>> import functrans.numpy as fnp
>>> fnp.add.reduce(fnp.arange(4)).item(), fnp.multiply.outer(fnp.arange(2), fnp.arange(3)).tolist()
(6, [[0, 0, 0], [0, 1, 2]])
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import _elementwise as el
from . import _reductions as red
from ._creation import asarray
from ._structural import reshape
from ._ufunc import ufunc
from ..array import Array
from ..typing import ArrayLike, DTypeLike

__all__: list[str] = []

_BINARY = ("add", "subtract", "multiply", "maximum", "minimum", "logaddexp", "logaddexp2",
           "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
           "bitwise_xor")
_UNARY = ("negative",)
# reductions with an operation of their own (which take initial= and where=)
_REDUCE = {"add": red.sum, "multiply": red.prod, "maximum": red.max, "minimum": red.min,
           "logical_and": red.all, "logical_or": red.any}
# index updates with an operation of their own
_AT = {"add": "add", "multiply": "multiply", "maximum": "max", "minimum": "min"}


def _methods(name: str, func: Callable[..., Any], nin: int) -> None:
    identity = getattr(np, name).identity
    generic = ufunc(func, nin, 1, name=name, identity=identity)
    logical = name.startswith("logical_")

    def _in(a, dtype):
        # logical ufuncs fold booleans (numpy's result dtype, also for 1-element slices)
        x = asarray(a) if dtype is None else asarray(a, dtype)
        return asarray(x, np.bool_) if logical else x

    def reduce(a: ArrayLike, axis: int | Sequence[int] | None = 0,
               dtype: DTypeLike | None = None, out: None = None, keepdims: bool = False,
               initial: Any = None, where: ArrayLike | None = None) -> Array:
        if out is not None:
            raise NotImplementedError(f"{name}.reduce: out= is not supported (as in JAX)")
        fast = _REDUCE.get(name)
        if fast is not None:
            x = asarray(a) if dtype is None else asarray(a, dtype)
            kw = {k: v for k, v in (("initial", initial), ("where", where)) if v is not None}
            if name in ("add", "multiply"):
                kw["dtype"] = dtype
            return fast(x, axis=axis, keepdims=keepdims, **kw)
        return generic.reduce(_in(a, dtype), axis=axis, keepdims=keepdims, initial=initial,
                              where=where)

    def accumulate(a: ArrayLike, axis: int = 0, dtype: DTypeLike | None = None,
                   out: None = None) -> Array:
        x = asarray(a) if dtype is None else asarray(a, dtype)
        if name in ("add", "multiply"):
            # numpy's: bools and small integers widen as in cumsum (JAX keeps the dtype)
            cum = red.cumsum if name == "add" else red.cumprod
            return cum(x, axis=axis, dtype=dtype)
        return generic.accumulate(_in(x, None), axis=axis, out=out)

    def reduceat(a: ArrayLike, indices: ArrayLike, axis: int = 0,
                 dtype: DTypeLike | None = None, out: None = None) -> Array:
        if dtype is None and name in ("add", "multiply"):
            dtype = red.accumulation_dtype(asarray(a).dtype)    # numpy's, as in sum
        return generic.reduceat(_in(a, dtype), indices, axis=axis, out=out)

    def outer(A: ArrayLike, B: ArrayLike, /) -> Array:
        A, B = asarray(A), asarray(B)
        # both at full rank: no implicit rank promotion (numpy_rank_promotion='raise')
        return func(reshape(A, A.shape + (1,) * B.ndim), reshape(B, (1,) * A.ndim + B.shape))

    def at(a: ArrayLike, indices: Any, b: ArrayLike | None = None, /, *,
           inplace: bool = True) -> Array:
        op = _AT.get(name)
        if op is None or inplace:
            return generic.at(a, indices, *(() if b is None else (b,)), inplace=inplace)
        x = asarray(a)
        return getattr(x.at[indices], op)(b)

    for f in (reduce, accumulate, reduceat, outer, at):
        f.__name__ = f.__qualname__ = f"{name}.{f.__name__}"
        f.__doc__ = (f"numpy's ``{name}.{f.__name__.split('.')[1]}`` (see ``fnp.ufunc``)."
                     f"\n\n    >>> callable({f.__name__.split('.')[1]})\n    True\n")
    if nin == 2:
        func.reduce, func.accumulate, func.reduceat, func.outer = reduce, accumulate, reduceat, outer
    func.at = at
    func.identity, func.nin, func.nout, func.nargs = identity, nin, 1, nin


def install() -> None:
    """Attach the methods to ``fnp.add`` and the other JAX ufuncs (once, at import)."""
    for n in _BINARY:
        _methods(n, getattr(el, n), 2)
    for n in _UNARY:
        _methods(n, getattr(el, n), 1)


install()
