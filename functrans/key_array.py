"""Typed PRNG key arrays, as JAX's ``jax.random.key``: dtype ``key<fry>``, shape without
the trailing 2 of the uint32 words that hold each key.

A ``KeyArray`` wraps its key data, a uint32 array (or tracer) of shape ``shape + (2,)``.
It is a pytree node whose one child is that data, so ``jit``, ``vmap``, ``grad``,
``scan``, ``cond``, ``while_loop``, ``shard_map`` and ``pmap`` carry keys as their
uint32 words without knowing about them, and rebuild keys on the way out (``vmap``'s
``in_axes``/``out_axes`` count the key's axes: a non-negative axis is the same axis of
the data). The public ``ft.tree`` functions see a key as one leaf, as ``jax.tree``
does. Arithmetic on keys raises a TypeError, as in JAX; ``==`` and ``!=`` compare keys.

>>> import numpy as np
>>> k = KeyArray(np.zeros((3, 2), np.uint32))
>>> k.shape, str(k.dtype), k[0].shape
((3,), 'key<fry>', ())
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .tree_util import register_pytree_node

__all__ = ["operand_error", "moved_by_index", "extended", "prng_key", "KeyDtype", "KEY_DTYPE", "KeyArray", "is_key", "key_base", "key_words"]


class extended(np.generic):  # noqa: N801 (JAX's name)
    """JAX's abstract class of extended dtypes (typed PRNG keys); no numpy dtype is one.

    >>> import numpy as np
    >>> np.issubdtype(np.float32, extended)
    False
    """


class prng_key(extended):  # noqa: N801 (JAX's name)
    """JAX's abstract class of typed-key dtypes: ``KEY_DTYPE.type``.

    >>> import numpy as np
    >>> np.issubdtype(np.uint32, prng_key), issubclass(KEY_DTYPE.type, prng_key)
    (False, True)
    """


class KeyDtype:
    """The dtype of threefry2x32 keys, printed ``key<fry>`` as JAX's.

    >>> str(KEY_DTYPE), KEY_DTYPE == KeyDtype()
    ('key<fry>', True)
    """
    type = prng_key
    name = "key<fry>"
    impl = "threefry2x32"
    kind = "V"
    itemsize = 8          # two uint32 words per key, as JAX's

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, KeyDtype)

    def __hash__(self) -> int:
        return hash(KeyDtype)


KEY_DTYPE = KeyDtype()


def operand_error(name: str, args: tuple) -> TypeError:
    """JAX's TypeError for typed keys among the operands of arithmetic ``name``: it names
    the operands' dtypes (one dtype when every operand is a key).

    >>> str(operand_error("add", (KeyArray(np.zeros(2, np.uint32)), 1)))[:39]
    'add does not accept dtypes key<fry>, in'
    """
    dts = [str(getattr(a, "dtype", None) or np.asarray(a).dtype) for a in args]
    got = "dtype key<fry>" if set(dts) == {"key<fry>"} else "dtypes " + ", ".join(dts)
    return TypeError(f"{name} does not accept {got}: keys take no arithmetic "
                     f"(random.key_data(k) gives their uint32 words)")


def _no_arithmetic(name):
    def op(self, *other):
        raise operand_error(name, (self,) + other)
    op.__name__ = f"__{name}__"
    return op


def _index_count(index: tuple) -> int:
    """How many axes ``index`` (a tuple) consumes: None and ... none, a boolean mask its
    rank, anything else one."""
    n = 0
    for i in index:
        if i is None or i is Ellipsis:
            continue
        dt = getattr(i, "dtype", None)
        n += len(i.shape) if dt is not None and dt == np.bool_ else 1
    return n


class _KeyIndexRef:
    """``keys.at[idx]``: ``get`` and ``set`` of whole keys, as on JAX's key arrays (``mode``
    and the other keywords as for numeric arrays; a filled key is all ones bits, as JAX's)."""
    __slots__ = ("keys", "index")

    def __init__(self, keys: KeyArray, index: Any):
        self.keys, self.index = keys, index

    def get(self, **kwargs: Any) -> KeyArray:
        if kwargs.get("fill_value") is not None:
            raise TypeError("keys.at[].get: fill_value must be None for typed keys")
        if kwargs.get("mode") in ("fill", "drop"):
            kwargs["fill_value"] = np.uint32(0xFFFFFFFF)
        return KeyArray(self.keys._base.at[self.keys._word_index(self.index)].get(**kwargs))

    def set(self, values: KeyArray, **kwargs: Any) -> KeyArray:
        words = key_words("keys.at[].set", values)
        return KeyArray(self.keys._base.at[self.keys._word_index(self.index)].set(
            words, **kwargs))


class _KeyIndexHelper:
    __slots__ = ("keys",)

    def __init__(self, keys: KeyArray):
        self.keys = keys

    def __getitem__(self, index: Any) -> _KeyIndexRef:
        return _KeyIndexRef(self.keys, index)


class KeyArray:
    """An array of PRNG keys over its uint32 data ``shape + (2,)``.

    >>> import numpy as np
    >>> k = KeyArray(np.arange(8, dtype=np.uint32).reshape(4, 2))
    >>> k.reshape(2, 2).shape, bool((k == k).all()), len(k)
    ((2, 2), True, 4)
    """
    __slots__ = ("_base",)
    __array_priority__ = 1000
    __hash__ = None  # type: ignore[assignment]   (arrays are unhashable)

    def __init__(self, data: Any):
        self._base = data

    # ------------------------------------------------------------------ type
    @property
    def dtype(self) -> KeyDtype:
        return KEY_DTYPE

    @property
    def shape(self) -> tuple:
        return tuple(self._base.shape[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a scalar key)")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        data = str(self._base) if isinstance(self._base, np.ndarray) else repr(self._base)
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{data}"

    __str__ = __repr__

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array "
                        "(dtype key<fry>): random.key_data(keys) gives their uint32 words.")

    # ------------------------------------------------------------------ JAX's Array API
    itemsize = KeyDtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def copy(self) -> KeyArray:
        return KeyArray(self._base.copy())

    __copy__ = copy

    def __deepcopy__(self, memo: Any) -> KeyArray:
        return self.copy()

    def block_until_ready(self) -> KeyArray:
        self._base.block_until_ready()
        return self

    def delete(self) -> None:
        self._base.delete()

    def addressable_data(self, index: int) -> KeyArray:
        return KeyArray(self._base.addressable_data(index))

    @property
    def at(self) -> _KeyIndexHelper:
        return _KeyIndexHelper(self)

    def __getattr__(self, name: str) -> Any:
        if name in _DATA_ATTRIBUTES:           # where the words live: the keys' place too
            return getattr(self._base, name)
        raise AttributeError(f"'KeyArray' object has no attribute {name!r}")

    # ------------------------------------------------------------------ structure
    def _axis(self, axis: int, ndim: int | None = None) -> int:
        n = self.ndim if ndim is None else ndim
        a = operator.index(axis)
        if not -n <= a < n:
            raise ValueError(f"axis {axis} is out of bounds for a key array of {n} dimensions")
        return a % n

    def _word_index(self, index: Any) -> tuple:
        """``index`` into keys as an index into their words (the words' axis kept whole)."""
        if not isinstance(index, tuple):
            index = (index,)
        n = _index_count(index)
        if n > self.ndim:
            raise IndexError(f"Too many indices: key array is {self.ndim}-dimensional, but "
                             f"{n} were indexed")
        if any(i is Ellipsis for i in index):
            return index + (slice(None),)
        return index + (Ellipsis, slice(None))

    def __getitem__(self, index: Any) -> KeyArray:
        return KeyArray(self._base[self._word_index(index)])

    def reshape(self, *shape: Any, order: str = "C") -> KeyArray:
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return KeyArray(self._base.reshape(tuple(shape) + (2,)))

    def ravel(self) -> KeyArray:
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> KeyArray:
        if axis is None:
            axes = tuple(i for i, d in enumerate(self.shape) if d == 1)
        else:
            axes = tuple(self._axis(a) for a in (axis if isinstance(axis, (tuple, list))
                                                 else (axis,)))
            if any(self.shape[a] != 1 for a in axes):
                raise ValueError(f"cannot squeeze axes {axes} of keys of shape {self.shape}")
        return KeyArray(self._base.reshape(tuple(d for i, d in enumerate(self.shape)
                                                 if i not in axes) + (2,)))

    def expand_dims(self, axis: Any) -> KeyArray:
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        n = self.ndim + len(axes)
        axes = sorted(self._axis(a, n) for a in axes)
        shape = list(self.shape)
        for a in axes:
            shape.insert(a, 1)
        return KeyArray(self._base.reshape(tuple(shape) + (2,)))

    def transpose(self, *axes: Any) -> KeyArray:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(range(self.ndim))[::-1]
        axes = tuple(self._axis(a) for a in axes)
        return KeyArray(self._base.transpose(axes + (self.ndim,)))

    @property
    def T(self) -> KeyArray:  # noqa: N802 (numpy's name)
        return self.transpose()

    # ------------------------------------------------------------------ comparison
    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, KeyArray):
            raise TypeError(f"eq does not accept dtypes key<fry>, "
                            f"{getattr(other, 'dtype', type(other).__name__)}")
        a, b = self._base, other._base
        if self.ndim != other.ndim and min(self.ndim, other.ndim) == 0:
            # one key against an array of them (a scalar: no rank promotion to refuse)
            n = max(self.ndim, other.ndim)
            a, b = (w.reshape((1,) * n + (2,)) if k.ndim == 0 else w
                    for k, w in ((self, a), (other, b)))
        return (a == b).all(axis=-1)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return ~(self == other)

    for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                  "and", "or", "xor", "lshift", "rshift", "lt", "le", "gt", "ge",
                  "radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow",
                  "rmatmul", "rand", "ror", "rxor", "neg", "pos", "abs", "invert"):
        locals()[f"__{_name}__"] = _no_arithmetic(_name.removeprefix("r") if _name.startswith(
            "r") and _name not in ("rshift",) else _name)
    del _name


# attributes of the uint32 data that are the keys' own as they are (JAX's Array API)
_DATA_ATTRIBUTES = frozenset((
    "device", "devices", "sharding", "is_deleted", "is_ready", "is_fully_addressable",
    "is_fully_replicated", "on_device_size_in_bytes", "copy_to_host_async"))

register_pytree_node(KeyArray, lambda k: ((k._base,), None), lambda _, data: KeyArray(data[0]))


def is_key(x: Any) -> bool:
    """Whether ``x`` is a typed key array.

    >>> is_key(np.zeros(2, np.uint32))
    False
    """
    return isinstance(x, KeyArray)


def key_base(x: Any) -> Any:
    """The uint32 data of a key array; anything else unchanged.

    >>> key_base(KeyArray(np.zeros(2, np.uint32))).shape
    (2,)
    """
    return x._base if isinstance(x, KeyArray) else x


def moved_by_index(f: Any, keys: KeyArray, *args: Any, **kwargs: Any) -> Any:
    """``f(keys, *args)`` for ``f`` a function that only moves elements (flip, roll,
    repeat, split, ...): ``f`` runs on the keys' flat positions ``arange(size)`` shaped as
    the keys, and each result picks its keys' words at those positions (a list or tuple
    of results gives one of keys).

    >>> import numpy as np
    >>> k = KeyArray(np.arange(6, dtype=np.uint32).reshape(3, 2))
    >>> moved_by_index(np.flip, k)._base.tolist()
    [[4, 5], [2, 3], [0, 1]]
    """
    words = keys._base.reshape((-1, 2))
    out = f(np.arange(keys.size).reshape(keys.shape), *args, **kwargs)
    if isinstance(out, (list, tuple)):
        return type(out)(KeyArray(words[o]) for o in out)
    return KeyArray(words[out])


def key_words(name: str, x: Any) -> Any:
    """The uint32 data of typed keys ``x``; a TypeError naming ``name`` for anything else
    (keys and non-keys do not mix, as in JAX).

    >>> key_words("stack", KeyArray(np.zeros(2, np.uint32))).shape
    (2,)
    """
    if not isinstance(x, KeyArray):
        raise TypeError(f"{name}: cannot mix typed PRNG keys (key<fry>) with "
                        f"{getattr(x, 'dtype', type(x).__name__)} values")
    return x._base
