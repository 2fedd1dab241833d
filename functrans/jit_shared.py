"""The caches that fresh ``jit`` wrappers of one function share.

``for _ in range(n): y = jit(step)(y)`` builds a new wrapper at each step; each used to
trace and look up its own empty cache (0.75 ms a call against 0.15 ms for JAX, which
caches traces per function object). ``shared(fun, options, make)`` gives every wrapper of
the same ``fun`` with the same jit options one set of caches (``make()`` builds it).

The key is chosen so that two functions that could trace differently never meet:

- the function object itself, held weakly: an entry dies with its function (and is
  never keyed by an id a dead function left behind);
- the options (static/donated arguments, backend, inline);
- for a Python function, what a call reads besides its arguments that Python lets one
  rebind on the same object: its code, defaults and closure cells. A cell or default
  holding a number, string, None or a tuple of them is keyed by its value (a float by
  its bits: 0.0 and -0.0 trace apart); any other
  object by its identity, held weakly and checked alive (a dead object's id reused by a
  new one is not a hit). A cell holding something neither (a list, a dict: mutable and
  not weakly referable) keeps that wrapper's caches private, as before.

Module globals read by ``fun`` are not part of the key (nor are they in JAX's): a
changed global is seen only by a new trace, as with one reused wrapper.

>>> def f(x):
...     return x
>>> shared(f, ("opts",), dict) is shared(f, ("opts",), dict)
True
>>> shared(f, ("other",), dict) is shared(f, ("opts",), dict)
False
"""
from __future__ import annotations

import types
import weakref
from typing import Any, Callable

import numpy as np

__all__ = ["clear", "every_shared", "shared"]

_PER_FUNCTION = 8      # variants (closure contents, options) kept per function
_VALUES = (bool, int, float, complex, str, bytes, type(None), np.generic)

# id(fun) -> (weakref to fun, {key: (weakrefs the key's identities need alive, caches)})
_REGISTRY: dict = {}


class _Private(Exception):
    """This function's wrappers keep private caches."""


def _content_key(x, refs: list, depth: int = 0):
    if isinstance(x, float):        # by its bits: 0.0 == -0.0, yet they trace apart
        return (type(x), x.hex())
    if isinstance(x, complex):
        return (type(x), x.real.hex(), x.imag.hex())
    if isinstance(x, np.generic):
        return (type(x), x.tobytes())
    if isinstance(x, _VALUES):
        return (type(x), x)
    if type(x) is tuple and depth < 4:
        return tuple(_content_key(e, refs, depth + 1) for e in x)
    try:
        refs.append(weakref.ref(x))
    except TypeError:
        raise _Private from None
    return ("id", id(x))


def _reads(fun, refs: list) -> tuple:
    """What ``fun`` reads besides its arguments that can change on the same object."""
    if not isinstance(fun, types.FunctionType):
        return ()
    cells = []
    for c in fun.__closure__ or ():
        try:
            v = c.cell_contents
        except ValueError:          # an empty cell (a name assigned later)
            cells.append(("empty",))
            continue
        cells.append(("self",) if v is fun else _content_key(v, refs))
    kwd = tuple(sorted(fun.__kwdefaults__.items())) if fun.__kwdefaults__ else ()
    return (id(fun.__code__), _content_key(fun.__defaults__ or (), refs),
            _content_key(kwd, refs), tuple(cells))


def _forget(fid):
    def forget(ref):
        if _REGISTRY.get(fid, (None,))[0] is ref:
            del _REGISTRY[fid]
    return forget


def shared(fun: Callable[..., Any], options: tuple, make: Callable[[], Any]) -> Any:
    """The caches of ``fun`` under ``options`` (``make()`` the first time), or a fresh
    ``make()`` when ``fun`` cannot be keyed safely (see the module doc).

    >>> def make():
    ...     box = []
    ...     return lambda x: x + len(box)
    >>> g = make()
    >>> shared(g, (), dict) is shared(g, (), dict)      # a list in a cell: private
    False
    """
    refs: list = []
    try:
        key = (options, _reads(fun, refs))
        hash(key)
        entry = _REGISTRY.get(id(fun))
        if entry is None or entry[0]() is not fun:
            entry = _REGISTRY[id(fun)] = (weakref.ref(fun, _forget(id(fun))), {})
    except (_Private, TypeError):
        return make()
    variants = entry[1]
    hit = variants.get(key)
    if hit is not None and all(r() is not None for r in hit[0]):
        return hit[1]
    for k in [k for k, (rs, _) in variants.items() if any(r() is None for r in rs)]:
        del variants[k]             # a variant whose closure objects died
    if len(variants) >= _PER_FUNCTION:
        del variants[next(iter(variants))]
    caches = make()
    variants[key] = (refs, caches)
    return caches


def every_shared() -> list:
    """Every live set of shared caches (for ``clear_caches`` and the debugging options)."""
    return [c for _, variants in list(_REGISTRY.values()) for _, c in list(variants.values())]


def clear() -> None:
    """Forget every shared set of caches.

    >>> clear(); every_shared()
    []
    """
    _REGISTRY.clear()
