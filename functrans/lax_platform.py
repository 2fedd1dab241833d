"""``jax.lax``'s platform, low-level random and token functions and its dimension-number
type names.

``platform_dependent`` picks the branch of the default backend; ``rng_bit_generator``
draws with functrans's threefry (JAX's bits are backend-specific, and so are these).
``rng_uniform`` is XLA's stateful generator: a host draw per call (an ``io_callback``,
never cached or merged, so a jitted function draws anew each run). The effect tokens
(``create_token``, ``after_all``) are ``Token`` objects, pytrees with no leaves: they pass
through ``jit`` and the other transforms, and order nothing, since a program's effects
run in program order here anyway.

>>> from functrans import lax
>>> float(lax.platform_dependent(2.0, cpu=lambda x: x * 10, default=lambda x: x))
20.0
"""
from __future__ import annotations

import enum
from typing import Any, Callable

import numpy as np

from backends import default_backend
from jaxpr_ir import canonical_dtype
from .callbacks import io_callback
from .precision import DotDimensionNumbers, PrecisionLike  # noqa: F401  (jax.lax's type names)
from .primitives.conv_api import ConvDimensionsLike
from .primitives.elementwise import add, convert_element_type, lt
from .primitives.structural import reshape
from .primitives.slicing import concatenate, slice as _slice
from .random_core import bits, fold_in
from .stages import ShapeDtypeStruct
from .tracing import get_aval
from .tree_util import register_pytree_node
from .typing import Array, ArrayLike, DTypeLike, Shape

__all__ = ["platform_dependent", "rng_bit_generator", "RandomAlgorithm", "Token",
           "after_all", "create_token", "rng_uniform",
           "ConvGeneralDilatedDimensionNumbers", "DotDimensionNumbers", "PrecisionLike"]

# jax.lax's name for what conv_general_dilated's dimension_numbers= may be
ConvGeneralDilatedDimensionNumbers = ConvDimensionsLike

# the branch names of each backend, most specific first
_PLATFORMS = {"cpu": ("cpu",), "interpret": ("cpu",), "cuda": ("cuda", "gpu")}


def platform_dependent(*args: Any, default: Callable | None = None,
                       **per_platform: Callable) -> Any:
    """``per_platform[p](*args)`` for the platform ``p`` of the default backend (``cpu``
    for the CPU and interpreter backends, ``cuda`` or ``gpu`` for CUDA), else
    ``default(*args)`` (JAX's ``lax.platform_dependent``). The choice is made when the
    call is traced, for the default backend: a function jitted with another ``backend=``
    still gets the default backend's branch.

    >>> from functrans import lax
    >>> float(lax.platform_dependent(1.0, tpu=lambda x: x + 1, default=lambda x: x - 1))
    0.0
    """
    backend = default_backend()
    for name in _PLATFORMS.get(backend, (backend,)):
        if name in per_platform:
            return per_platform[name](*args)
    if default is None:
        raise NotImplementedError(
            f"platform_dependent: no branch for the platform {backend!r} (branches: "
            f"{sorted(per_platform)}) and no default=")
    return default(*args)


class RandomAlgorithm(enum.IntEnum):
    """The algorithm names of ``rng_bit_generator`` (JAX's ``lax.RandomAlgorithm``);
    every one draws with functrans's threefry.

    >>> RandomAlgorithm.RNG_THREE_FRY.name
    'RNG_THREE_FRY'
    """
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


_BIT_DTYPES = ("uint8", "uint16", "uint32", "uint64")


def rng_bit_generator(key: ArrayLike, shape: Shape, dtype: DTypeLike = np.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT,
                      out_sharding: Any = None) -> tuple[Array, Array]:
    """``(new_key, bits)``: uniformly random unsigned integers of ``shape`` and ``dtype``
    (uint8, uint16, uint32 or uint64) from a uint32 key of shape ``(4,)``, and the key to pass to
    the next call (JAX's ``lax.rng_bit_generator``). The words are functrans's threefry
    of the key's first two words with the last two as a 64-bit counter, which the new key
    advances by one; like JAX's, whose words differ between backends, they are not
    JAX's words. Prefer ``functrans.random``.

    >>> import numpy as np
    >>> from functrans import lax
    >>> k, b = lax.rng_bit_generator(np.zeros(4, np.uint32), (2, 3))
    >>> k.tolist(), b.shape, b.dtype
    ([0, 0, 1, 0], (2, 3), dtype('uint32'))
    """
    dt = canonical_dtype(dtype)
    if str(dt) not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: dtype must be one of {list(_BIT_DTYPES)}, "
                        f"got {dt}")
    if RandomAlgorithm(algorithm) not in RandomAlgorithm:
        raise ValueError(f"rng_bit_generator: unknown algorithm {algorithm!r}")
    if tuple(np.shape(key)) != (4,) or np.result_type(key) != np.uint32:
        raise TypeError("rng_bit_generator: key must be uint32 of shape (4,), got "
                        f"{np.result_type(key)}{list(np.shape(key))}")
    if out_sharding is not None:
        raise NotImplementedError("rng_bit_generator: out_sharding is not supported")
    key = convert_element_type(key, np.dtype(np.uint32))
    words = [reshape(_slice(key, (i,), (i + 1,)), ()) for i in range(4)]
    k = fold_in(fold_in(concatenate([reshape(w, (1,)) for w in words[:2]], 0), words[2]),
                words[3])
    low = add(words[2], np.uint32(1))
    high = add(words[3], convert_element_type(lt(low, words[2]), np.dtype(np.uint32)))
    new_key = concatenate([reshape(w, (1,)) for w in (words[0], words[1], low, high)], 0)
    return new_key, bits(k, tuple(shape), dt)


class Token:
    """An effect token (JAX's ``core.Token``): no data, a pytree with no leaves.

    >>> isinstance(create_token(), Token)
    True
    """
    __slots__ = ()

    def __repr__(self) -> str:
        return "Token()"


register_pytree_node(Token, lambda t: ((), None), lambda aux, children: Token())


def create_token(_: Any = None) -> Token:
    """A fresh effect token, as JAX's ``lax.create_token`` (the argument is ignored).

    >>> create_token()
    Token()
    """
    return Token()


def after_all(*operands: Token) -> Token:
    """A token that follows all of ``operands`` (tokens), as JAX's ``lax.after_all``.

    >>> after_all(create_token(), create_token())
    Token()
    """
    for i, t in enumerate(operands):
        if not isinstance(t, Token):
            raise TypeError(f"after_all: operands must be tokens, operand {i} is "
                            f"{type(t).__name__}")
    return Token()


_RNG = {"gen": None}


def _draw(a, b, shape, dtype):
    if _RNG["gen"] is None:
        _RNG["gen"] = np.random.default_rng()
    gen = _RNG["gen"]
    if dtype.kind == "f":
        u = gen.random(shape)
        return np.asarray(a + (b - a) * u, dtype)
    return np.asarray(gen.integers(int(a), int(b), shape, endpoint=False), dtype)


def rng_uniform(a: ArrayLike, b: ArrayLike, shape: Shape) -> Array:
    """Uniform values in ``[a, b)`` of ``shape`` from a stateful generator, as JAX's
    (XLA's) ``lax.rng_uniform``: scalar ``a`` and ``b`` of one float or integer dtype,
    new values at every call, jitted or not (a host draw, numpy's generator). Not
    reproducible and not differentiable: prefer ``functrans.random``.

    >>> import numpy as np
    >>> x = rng_uniform(np.float32(0.0), np.float32(1.0), (3,))
    >>> x.shape, x.dtype, bool(((x >= 0) & (x < 1)).all())
    ((3,), dtype('float32'), True)
    """
    shape = tuple(int(d) for d in shape)
    va, vb = get_aval(a), get_aval(b)
    if va.ndim or vb.ndim or va.dtype != vb.dtype or np.dtype(va.dtype).kind not in "fiu":
        raise TypeError(f"rng_uniform: a and b must be scalars of one float or integer "
                        f"dtype, got {va.str_short()} and {vb.str_short()}")
    dt = canonical_dtype(va.dtype)
    return io_callback(lambda x, y: _draw(x, y, shape, np.dtype(dt)),
                       ShapeDtypeStruct(shape, dt), a, b)
