"""Remaining functions of ``functrans.numpy``: window functions, number theory and
float decomposition (``gcd lcm frexp bitwise_count``), ``vectorize``, ``histogramdd
histogram2d polydiv mask_indices``, and numpy's static helpers (printing, ``load``/``save``,
``frombuffer``-style constructors, ``einsum_path``) applied to concrete values.

>>> import functrans.numpy as fnp
>>> fnp.gcd(fnp.asarray([12, 7]), 18).tolist()
[6, 1]
"""
from __future__ import annotations

import functools
import math
import operator
import re

import numpy as np

from jaxpr_ir import dtype_kind

from ..batching import vmap
from ..tracing import Tracer
from . import _elementwise as el
from . import _elementwise_select as sel
from . import _reductions as red
from . import _structural as st
from . import _joining as jn
from . import _promotion_mode
from ._creation import asarray, zeros_like
from ._joining import array_split
from ._statistics import histogram_bin_edges, searchsorted, bincount
from ._util import promote
from typing import Any, Callable, Sequence
from ..array import Array
from ..dlpack import from_dlpack  # noqa: F401  (copies: an Array is immutable)
from ..typing import ArrayLike

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "gcd", "lcm", "frexp",
           "bitwise_count", "vectorize", "histogramdd", "histogram2d", "polydiv",
           "mask_indices", "array_repr", "array_str", "printoptions", "get_printoptions",
           "set_printoptions", "load", "save", "savez", "frombuffer", "fromfile", "fromiter",
           "fromstring", "from_dlpack", "einsum_path", "ComplexWarning", "dsplit", "iterable"]


def _window(np_fn, name):
    def window(M: int, *args: ArrayLike) -> Array:
        if isinstance(M, Tracer):
            raise TypeError(f"{name}: M must be a static int (it is the output length)")
        return asarray(np_fn(operator.index(M), *args))
    window.__name__ = window.__qualname__ = name
    window.__doc__ = (f"numpy's {name} window of static length ``M``.\n\n"
                      f"    >>> import functrans.numpy as fnp\n"
                      f"    >>> fnp.{name}(4{', 0.0' if name == 'kaiser' else ''}).shape\n"
                      f"    (4,)\n    ")
    return window


bartlett = _window(np.bartlett, "bartlett")
blackman = _window(np.blackman, "blackman")
hamming = _window(np.hamming, "hamming")
hanning = _window(np.hanning, "hanning")
kaiser = _window(np.kaiser, "kaiser")

# Euclid's algorithm halves the smaller operand at least every two steps, so 64-bit
# inputs finish within 2 * 64 steps; the loop is unrolled to stay jittable.
_GCD_STEPS = 128


def gcd(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Greatest common divisor of integers (non-negative, ``gcd(0, 0) = 0``).

    >>> import functrans.numpy as fnp
    >>> fnp.gcd(0, 5).item()
    5
    """
    # numpy's result dtype (a Python int adapts to the array: gcd(6, int32) is int32)
    x1, x2 = promote("gcd", x1, x2)
    if dtype_kind(x1.dtype) not in "iub" or dtype_kind(x2.dtype) not in "iub":
        raise TypeError(f"gcd: integer inputs required, got {x1.dtype} and {x2.dtype}")
    if not isinstance(x1, Tracer) and not isinstance(x2, Tracer):
        return asarray(np.gcd(np.asarray(x1), np.asarray(x2)))
    a, b = st.broadcast_arrays(el.abs(x1), el.abs(x2))
    for _ in range(_GCD_STEPS):
        zero = el.equal(b, 0)
        safe_b = sel.where(zero, el.add(b, 1), b)
        a, b = sel.where(zero, a, b), sel.where(zero, b, el.remainder(a, safe_b))
    return a


def lcm(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Least common multiple of integers (``lcm(0, n) = 0``).

    >>> import functrans.numpy as fnp
    >>> fnp.lcm(4, 6).item()
    12
    """
    x1, x2 = promote("lcm", x1, x2)
    g = gcd(x1, x2)
    safe = sel.where(el.equal(g, 0), el.add(g, 1), g)
    # |x1| / g * |x2|, as numpy and JAX: a product that overflows wraps (int8 lcm(34, 102)
    # is -102 there); taking abs after the product gave +102
    return el.multiply(el.floor_divide(el.abs(x1), safe), el.abs(x2))


def frexp(x: ArrayLike) -> tuple[Array, Array]:
    """Mantissa in [0.5, 1) (signed) and integer exponent with ``x = m * 2**e``.

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.frexp(fnp.asarray([8.0, -3.0]))]
    [[0.5, -0.75], [4, 2]]
    """
    x = asarray(x)
    if dtype_kind(x.dtype) not in "f":
        x = asarray(x, np.float64)
    special = el.logical_or(el.equal(x, 0), el.logical_not(el.isfinite(x)))
    safe = sel.where(special, el.add(zeros_like(x), 1), x)
    e = el.add(el.floor(el.log2(el.abs(safe))), 1)
    # x * 2**-e in two exact power-of-two steps: 2**e alone overflows for the largest
    # floats (e = 1024 gave a mantissa of 0), 2**-e for the smallest
    h = el.floor(el.multiply(e, 0.5))
    m = el.multiply(el.multiply(safe, el.exp2(el.negative(h))), el.exp2(el.subtract(h, e)))
    # log2 may round across a power of two; one correction step each way fixes it
    low = el.less(el.abs(m), 0.5)
    m, e = sel.where(low, el.multiply(m, 2), m), sel.where(low, el.subtract(e, 1), e)
    high = el.greater_equal(el.abs(m), 1)
    m, e = sel.where(high, el.multiply(m, 0.5), m), sel.where(high, el.add(e, 1), e)
    return sel.where(special, x, m), asarray(sel.where(special, zeros_like(e), e), np.int32)


def bitwise_count(x: ArrayLike) -> Array:
    """Number of 1 bits in ``|x|`` of an integer array (uint8 result, as numpy).

    >>> import functrans.numpy as fnp
    >>> fnp.bitwise_count(fnp.asarray([7, -1, 0])).tolist()
    [3, 1, 0]
    """
    x = asarray(x)
    if dtype_kind(x.dtype) not in "iub":
        raise TypeError(f"bitwise_count: integer input required, got {x.dtype}")
    # uint64 counts its own bits (logical shifts): as int64, values >= 2**63 went negative
    v = x if x.dtype == np.uint64 else el.abs(asarray(x, np.int64))
    count = zeros_like(v)
    for _ in range(64):
        count = el.add(count, el.bitwise_and(v, 1))
        v = el.right_shift(v, 1)
    return asarray(count, np.uint8)


def _parse_signature(signature):
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    def dims(part):
        groups = re.findall(r"\(([^()]*)\)", part)
        if ",".join(f"({g})" for g in groups).replace(" ", "") != part.replace(" ", ""):
            raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
        return [tuple(d.strip() for d in g.split(",") if d.strip()) for g in groups]
    if "->" not in signature:
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = signature.split("->")
    return dims(ins), dims(outs)


def _check_loop_ranks(arrays, loops, signature):
    """``numpy_rank_promotion`` for the loop (broadcast) dimensions of the arguments that
    are not 0-d, as JAX's ``vectorize``: their loop ranks must agree."""
    if _promotion_mode.ACTIVE and len({len(lp) for a, lp in zip(arrays, loops) if a.ndim}) > 1:
        _promotion_mode.report_rank_promotion(
            f"vectorize: operands with shapes {[tuple(a.shape) for a in arrays]} require rank "
            f"promotion of their loop dimensions (signature {signature}); add the leading "
            "axes explicitly or set numpy_rank_promotion to 'allow'")


def _vectorize_signature(pyfunc, signature, keep, args, kwargs):
    """JAX's ``vectorize(signature=...)``: the loop (leading) dimensions broadcast and
    are vmapped over, flattened into one; each argument keeps its core dimensions."""
    in_core, out_core = _parse_signature(signature)
    arrays = [asarray(a) for i, a in enumerate(args) if i not in keep]
    if len(arrays) != len(in_core):
        raise TypeError(f"vectorize: signature {signature!r} has {len(in_core)} inputs, got "
                        f"{len(arrays)} arguments")
    sizes, loops = {}, []
    for a, core in zip(arrays, in_core):
        if a.ndim < len(core):
            raise ValueError(f"vectorize: input of shape {a.shape} has fewer dimensions than "
                             f"its core dimensions {core} in {signature!r}")
        for name, n in zip(core, a.shape[a.ndim - len(core):]):
            if sizes.setdefault(name, n) != n:
                raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: "
                                 f"{sizes[name]} and {n}")
        loops.append(a.shape[:a.ndim - len(core)])
    _check_loop_ranks(arrays, loops, signature)
    loop = np.broadcast_shapes(*loops) if loops else ()
    n = math.prod(loop)
    flat = [st.reshape(st.broadcast_to(a, loop + a.shape[a.ndim - len(c):]),
                       (n,) + a.shape[a.ndim - len(c):]) for a, c in zip(arrays, in_core)]

    def core_fn(*vals):
        it = iter(vals)
        return pyfunc(*[args[i] if i in keep else next(it) for i in range(len(args))],
                      **kwargs)
    out = vmap(core_fn)(*flat)
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != len(out_core):
        raise ValueError(f"vectorize: the function returned {len(outs)} outputs, the "
                         f"signature {signature!r} names {len(out_core)}")
    for o, core in zip(outs, out_core):     # JAX's output checks
        if o.ndim - 1 != len(core):
            raise ValueError(f"vectorize: output shape {tuple(o.shape[1:])} does not match "
                             f"core dimensions {core} of {signature!r}")
        for name, k in zip(core, o.shape[1:]):
            if sizes.setdefault(name, k) != k:
                raise ValueError(f"vectorize: inconsistent size for core dimension "
                                 f"{name!r}: {sizes[name]} and {k}")
    res = tuple(st.reshape(o, loop + tuple(o.shape[1:])) for o in outs)
    return res if isinstance(out, tuple) else res[0]


def vectorize(pyfunc: Callable[..., Any], *, excluded: Any = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` applied elementwise over broadcast arguments, via ``vmap`` (so it is
    traced once, not called per element); with a gufunc ``signature`` such as
    ``"(m,n),(n)->(m)"``, over the leading dimensions, each argument keeping its core
    dimensions (JAX's).

    >>> import functrans.numpy as fnp
    >>> f = fnp.vectorize(lambda a, b: fnp.where(a > b, a, b))
    >>> f(fnp.asarray([1, 5]), 3).tolist()
    [3, 5]
    >>> g = fnp.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")
    >>> g(fnp.ones((4, 2, 3)), fnp.ones(3)).shape
    (4, 2)
    """
    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError(f"vectorize: excluded may hold only integers and strings, got "
                        f"{excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"vectorize: excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        # None arguments are passed through as excluded ones (JAX's)
        keep = {i for i in range(len(args)) if i in excluded or args[i] is None}
        if signature is not None:
            nones = {i for i in range(len(args)) if args[i] is None and i not in excluded}
            if nones:
                raise ValueError(f"vectorize: cannot pass None at locations {nones} with "
                                 f"signature={signature!r}")
            return _vectorize_signature(pyfunc, signature, keep, args, kwargs)
        # keyword arguments not excluded are vectorized too (numpy's; JAX drops them)
        static_kw = {k: v for k, v in kwargs.items() if k in excluded or v is None}
        names = [k for k in kwargs if k not in static_kw]
        arrays = [asarray(a) for i, a in enumerate(args) if i not in keep]
        arrays += [asarray(kwargs[k]) for k in names]
        _check_loop_ranks(arrays, [a.shape for a in arrays], "None")
        shape = np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()
        flat = [st.ravel(st.broadcast_to(a, shape)) for a in arrays]

        def scalar_fn(*vals):
            it = iter(vals)
            full = [args[i] if i in keep else next(it) for i in range(len(args))]
            return pyfunc(*full, **{k: next(it) for k in names}, **static_kw)
        if not shape:
            return asarray(scalar_fn(*arrays))
        out = vmap(scalar_fn)(*flat)
        # an output may have dimensions of its own after the broadcast ones
        if isinstance(out, tuple):
            return tuple(st.reshape(o, shape + tuple(o.shape[1:])) for o in out)
        return st.reshape(out, shape + tuple(out.shape[1:]))
    return wrapped


def histogramdd(sample: ArrayLike, bins: ArrayLike = 10, range: tuple[float, float] | None = None,
                weights: ArrayLike | None = None,
                density: bool | None = None) -> tuple[Array, list[Array]]:  # noqa: A002
    """Multidimensional histogram of ``(N, D)`` samples: ``(counts, edges_per_dim)``.

    >>> import functrans.numpy as fnp
    >>> h, _ = fnp.histogramdd(fnp.asarray([[0.0, 0.0], [1.0, 1.0]]), bins=2)
    >>> h.tolist()
    [[1, 0], [0, 1]]
    """
    sample = asarray(sample)
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got shape {sample.shape}")
    n, d = sample.shape
    bins = [bins] * d if isinstance(bins, (int, np.integer)) else list(bins)
    ranges = [None] * d if range is None else list(range)
    edges, flat_idx, inside = [], None, None
    sizes = []
    for j in builtins_range(d):
        col = sample[:, j]
        e = histogram_bin_edges(col, bins[j], ranges[j])
        nb = e.shape[0] - 1
        idx = el.subtract(searchsorted(e, col, side="right"), 1)
        idx = sel.where(el.equal(col, e[-1]), el.add(el.multiply(idx, 0), nb - 1), idx)
        ok = el.logical_and(el.greater_equal(col, e[0]), el.less_equal(col, e[-1]))
        inside = ok if inside is None else el.logical_and(inside, ok)
        flat_idx = idx if flat_idx is None else el.add(el.multiply(flat_idx, nb), idx)
        edges.append(e)
        sizes.append(nb)
    total = int(np.prod(sizes))
    flat_idx = sel.where(inside, flat_idx, el.add(el.multiply(flat_idx, 0), total))
    # as JAX's: integer counts unweighted (floats for density), float with weights
    w = None if weights is None else asarray(weights)
    counts = bincount(flat_idx, w, length=total)
    if w is not None or density:
        counts = asarray(counts, np.result_type(np.float64, counts.dtype))
    counts = st.reshape(counts, tuple(sizes))
    if density:
        vol = None
        for j, e in enumerate(edges):
            dj = st.reshape(el.subtract(e[1:], e[:-1]),
                            tuple(sizes[j] if k == j else 1 for k in builtins_range(d)))
            vol = dj if vol is None else el.multiply(vol, dj)
        counts = el.true_divide(counts, el.multiply(red.sum(counts), vol))
    return counts, edges


builtins_range = range


def histogram2d(x: ArrayLike, y: ArrayLike, bins: ArrayLike = 10,
                range: tuple[float, float] | None = None, weights: ArrayLike | None = None,
                density: bool | None = None) -> tuple[Array, Array, Array]:  # noqa: A002
    """2-d histogram: ``(counts, x_edges, y_edges)``.

    >>> import functrans.numpy as fnp
    >>> fnp.histogram2d(fnp.asarray([0.0, 1.0]), fnp.asarray([0.0, 1.0]), bins=2)[0].tolist()
    [[1, 0], [0, 1]]
    """
    h, e = histogramdd(jn.stack([asarray(x), asarray(y)], axis=1), bins, range, weights,
                       density)
    return h, e[0], e[1]


def polydiv(u: ArrayLike, v: ArrayLike, *, trim_leading_zeros: bool = False) -> tuple[Array, Array]:
    """Quotient and remainder of polynomial division (``v``'s leading coefficient must
    be nonzero). The remainder keeps ``len(u)`` coefficients (JAX's static shape) unless
    ``trim_leading_zeros`` (eager only) strips its leading zeros as numpy does.

    >>> import functrans.numpy as fnp
    >>> [q.tolist() for q in fnp.polydiv(fnp.asarray([1.0, -3.0, 2.0]), fnp.asarray([1.0, -1.0]))]
    [[1.0, -2.0], [0.0, 0.0, 0.0]]
    """
    u = asarray(u, np.result_type(asarray(u).dtype, np.float64))
    v = asarray(v, u.dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = el.true_divide(1.0, v[0])
    rem = u
    qs = []
    for k in builtins_range(max(m - n + 1, 0)):
        d = el.multiply(scale, rem[k])
        qs.append(d)
        upd = jn.concatenate([asarray(np.zeros(k), u.dtype), el.multiply(d, v),
                              asarray(np.zeros(m - n - k), u.dtype)])
        rem = el.subtract(rem, upd)
    q = jn.stack(qs) if qs else asarray(np.zeros(1), u.dtype)
    if trim_leading_zeros:
        if isinstance(rem, Tracer):
            raise TypeError("polydiv: trim_leading_zeros=True needs concrete values (it "
                            "changes the output length)")
        r = np.trim_zeros(np.asarray(rem), "f")
        rem = asarray(r if r.size else np.zeros(1, np.asarray(rem).dtype))
    return q, rem


def mask_indices(n: int, mask_func: Callable[..., Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Array, ...]:
    """Indices where ``mask_func(ones((n, n)), k)`` is nonzero (``n`` static); ``size``
    fixes their length as ``nonzero``'s does (cut short, or padded with 0).

    >>> import functrans.numpy as fnp
    >>> [v.tolist() for v in fnp.mask_indices(2, fnp.triu)]
    [[0, 0, 1], [0, 1, 1]]
    """
    m = np.asarray(mask_func(np.ones((n, n), dtype=int), k))
    idx = np.nonzero(m)
    if size is not None:   # as nonzero(size=...): cut short or padded with 0
        idx = tuple(np.pad(v[:size], (0, max(0, size - v.size))) for v in idx)
    return tuple(asarray(v) for v in idx)


def _concrete(name, fn, returns="Any"):
    """``fn`` refusing traced arguments; ``returns``: its return annotation."""
    def f(*args: Any, **kwargs: Any) -> Any:
        for a in args:
            if isinstance(a, Tracer):
                raise TypeError(f"{name}: needs concrete values, not traced ones")
        return fn(*args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__annotations__["return"] = returns
    f.__doc__ = f"numpy's ``{name}`` on concrete values.\n\n    >>> callable({name})\n    True\n"
    return f


def _wrapped_numpy(name, fn):
    g = _concrete(name, fn)

    def f(*args: Any, **kwargs: Any) -> Array:
        return asarray(g(*args, **kwargs))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = g.__doc__
    return f


array_repr = _concrete("array_repr", lambda a, *args, **kw: np.array_repr(np.asarray(a),
                                                                           *args, **kw), "str")
array_str = _concrete("array_str", lambda a, *args, **kw: np.array_str(np.asarray(a),
                                                                        *args, **kw), "str")
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
save = _concrete("save", lambda file, arr, *args, **kw: np.save(file, np.asarray(arr),
                                                                 *args, **kw), "None")
savez = _concrete("savez", lambda file, *args, **kw: np.savez(
    file, *[np.asarray(a) for a in args], **{k: np.asarray(v) for k, v in kw.items()}), "None")
load = _concrete("load", np.load)
frombuffer = _wrapped_numpy("frombuffer", np.frombuffer)
fromfile = _wrapped_numpy("fromfile", np.fromfile)
fromiter = _wrapped_numpy("fromiter", np.fromiter)
fromstring = _wrapped_numpy("fromstring", np.fromstring)


def einsum_path(subscripts: str, *operands: Any, optimize: Any = "greedy",
                **kwargs: Any) -> tuple[list[Any], str]:
    """numpy's contraction path for ``einsum``; it needs the operands' shapes only, so
    traced operands work too (as JAX's). opt_einsum's strategy names that numpy lacks
    (``'auto'``, ``'eager'``, ``'dp'``, ``'branch-2'``, ...) plan as numpy's ``'optimal'``
    for up to 4 operands, else ``'greedy'``.

    >>> import functrans.numpy as fnp
    >>> fnp.einsum_path("ij,jk,kl->il", fnp.ones((2, 2)), fnp.ones((2, 5)), fnp.ones((5, 2)),
    ...                 optimize="auto")[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    if isinstance(optimize, str) and optimize not in ("greedy", "optimal"):
        optimize = "optimal" if len(operands) <= 4 else "greedy"
    shapes = [np.shape(o) if isinstance(o, Tracer) else asarray(o).shape for o in operands]
    return np.einsum_path(subscripts, *[np.empty(sh) for sh in shapes], optimize=optimize,
                          **kwargs)
ComplexWarning = np.exceptions.ComplexWarning


def dsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """Split along the third axis (``ary`` must be at least 3-d).

    >>> import functrans.numpy as fnp
    >>> [p.shape for p in fnp.dsplit(fnp.ones((1, 1, 4)), 2)]
    [(1, 1, 2), (1, 1, 2)]
    """
    ary = asarray(ary)
    if ary.ndim < 3:
        raise ValueError(f"dsplit: needs an array of rank >= 3, got shape {ary.shape}")
    if isinstance(indices_or_sections, (int, np.integer)) and \
            ary.shape[2] % int(indices_or_sections):
        raise ValueError("dsplit: array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis=2)


def iterable(y: ArrayLike) -> bool:
    """Whether ``iter(y)`` works (a 0-d array is not iterable).

    >>> iterable([1]), iterable(2.0)
    (True, False)
    """
    if isinstance(y, Tracer):
        return y.ndim > 0
    return np.iterable(y)
