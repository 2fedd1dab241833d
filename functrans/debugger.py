"""``ft.debug.breakpoint``, ``visualize_array_sharding``, ``visualize_sharding`` and
``inspect_array_sharding`` (JAX's ``jax.debug`` names of them).

``breakpoint()`` stops where it is called, when the computation runs (under ``jit`` at
each call of the compiled function, with that call's values; eagerly at once): it opens
``pdb`` on a frame holding the caller's local variables, arrays as numpy values (a
pytree of arrays as that pytree), anything else as it was at trace time; ``l`` lists
the caller's source at the breakpoint, ``p x`` prints a value, ``c`` continues. It reads
commands from ``sys.stdin`` and writes to ``sys.stdout``.

Shardings: a functrans array is whole on every process and its ``.sharding`` records how
it is laid out over a mesh (``functrans.sharding``); the text drawing shows which devices
(processes ``CPU r``) hold each block of a 1-d or 2-d array, without ``rich``.

>>> import functrans.numpy as fnp
>>> visualize_array_sharding(fnp.ones((4, 4)))
+---------+
|  CPU 0  |
+---------+
"""
from __future__ import annotations

import copy
import functools
import logging
import pdb
import string
import sys
import types
from typing import Any, Callable

import numpy as np

from .callbacks import debug_callback
from .sharding import NamedSharding, Sharding, SingleDeviceSharding, host_device
from .tracing import Tracer
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["breakpoint", "log", "visualize_array_sharding", "visualize_sharding",
           "inspect_array_sharding"]

_LOGGER = logging.getLogger("functrans.debug")
_VALUES = (Tracer, np.ndarray, np.generic, int, float, complex, bool)


def _split(value) -> tuple:
    """``(leaves, treedef, positions of its array leaves)`` of a local (treedef None: one
    leaf that flattening rejects): the array leaves pass through the callback, the rest
    is kept as it was at trace time."""
    try:
        leaves, tree = tree_flatten(value)
    except Exception:   # noqa: BLE001 (a local that flattening rejects)
        leaves, tree = [value], None
    arrays = [i for i, x in enumerate(leaves) if isinstance(x, (Tracer, np.ndarray, np.generic))]
    return leaves, tree, arrays


def _frame(values: dict, filename: str, lineno: int, name: str, globs: dict):
    """A finished frame whose locals are ``values``, at ``filename:lineno`` of function
    ``name`` (so pdb's ``l`` lists the caller's source)."""
    names = [k for k in values if k.isidentifier()]
    src = ("\n" * max(lineno - 2, 0) + f"def {name if name.isidentifier() else 'f'}"
           f"({', '.join(names)}):\n    return __import__('sys')._getframe()\n")
    code = compile(src, filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(fcode, globs)(*[values[k] for k in names])


def _stop(values: dict, filename: str, lineno: int, name: str, globs: dict) -> None:
    frame = _frame(values, filename, lineno, name, globs)
    dbg = pdb.Pdb(stdin=sys.stdin, stdout=sys.stdout)
    dbg.prompt = "(functrans pdb) "
    dbg.reset()
    dbg.interaction(frame, None)
    sys.settrace(None)


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> None:
    """Stop here when the computation runs and open ``pdb`` with the caller's locals
    (see the module doc).

    >>> import functrans as ft, io, sys, contextlib
    >>> def f(x):
    ...     y = x * 2.0
    ...     breakpoint()
    ...     return y
    >>> sys.stdin, old = io.StringIO("p y\\nc\\n"), sys.stdin
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     _ = ft.jit(f)(3.0)
    >>> sys.stdin = old; "array(6.)" in out.getvalue()
    True
    """
    caller = sys._getframe(1)
    locals_, dyn = [], []       # (name, leaves, treedef, array positions); array leaves
    for k, v in caller.f_locals.items():
        leaves, tree, arrays = _split(v)
        locals_.append((k, leaves, tree, arrays))
        dyn.extend(leaves[i] for i in arrays)
    where = (caller.f_code.co_filename, caller.f_lineno, caller.f_code.co_name,
             caller.f_globals)
    del caller

    def stop(*vals):
        values, it = {}, iter(vals)
        for k, leaves, tree, arrays in locals_:
            leaves = list(leaves)
            for i in arrays:
                leaves[i] = np.asarray(next(it))
            values[k] = leaves[0] if tree is None else tree_unflatten(tree, leaves)
        _stop(values, *where)

    debug_callback(stop, *dyn, ordered=ordered)


def _message(fmt: str, args, kwargs) -> str:
    """``fmt`` formatted as ``jax.debug.print`` does: with placeholders ``str.format``,
    else the values after it, separated by spaces."""
    fields = [f for _, f, _, _ in string.Formatter().parse(fmt) if f is not None]
    if fields:
        return fmt.format(*args, **kwargs)
    return " ".join((fmt, *(str(a) for a in args)))


def log(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """``jax.debug.log``: as ``ft.debug.print`` (when the code runs: eagerly, each call of
    a jitted function, per lane under ``vmap``), but the message goes to the logger
    ``functrans.debug`` at level INFO, with the caller's file and line. With no ``fmt``,
    returns the function that takes it (the two-call form ``log(ordered=True)(fmt, ...)``).

    >>> import functrans as ft, logging, io
    >>> h = logging.StreamHandler(io.StringIO()); _LOGGER.addHandler(h); _LOGGER.setLevel("INFO")
    >>> _ = ft.jit(lambda x: log("x is {x}", x=x) or x)(2.0)
    >>> _LOGGER.removeHandler(h); h.stream.getvalue().strip()
    'x is 2.0'
    """
    if fmt is None:
        if args or kwargs:
            raise TypeError(f"debug.log received unexpected arguments in the two-call form: "
                            f"{args=} {kwargs=}")
        return functools.partial(log, ordered=ordered, partitioned=partitioned,
                                 skip_format_check=skip_format_check)
    caller = sys._getframe(1)
    record = _LOGGER.makeRecord(_LOGGER.name, logging.INFO, caller.f_code.co_filename,
                                caller.f_lineno, "", (), None)
    del caller
    leaves, tree = tree_flatten((args, kwargs))
    dyn = [i for i, x in enumerate(leaves) if isinstance(x, _VALUES)]
    if not skip_format_check:
        _message(fmt, *tree_unflatten(tree, leaves))    # a missing field raises here

    def emit(*values):
        full = list(leaves)
        for i, v in zip(dyn, values):
            full[i] = v
        a, k = tree_unflatten(tree, full)
        rec = copy.copy(record)
        rec.msg = _message(fmt, a, k)
        _LOGGER.handle(rec)

    debug_callback(emit, *[leaves[i] for i in dyn], ordered=ordered)
    return None


# ------------------------------------------------------------------ shardings

def _sharding_of(x) -> Sharding:
    s = getattr(x, "sharding", None) if not isinstance(x, Tracer) else None
    return s if isinstance(s, Sharding) else SingleDeviceSharding(host_device())


def inspect_array_sharding(value: Any, *, callback: Callable[[Sharding], None]) -> None:
    """Call ``callback(sharding)`` for each array of the pytree ``value``, at once (under
    ``jit``: when it is traced, as JAX calls it at compile time); a traced value has the
    host device's sharding (``jit`` of one process computes on its one device).

    >>> import functrans.numpy as fnp
    >>> inspect_array_sharding(fnp.ones(3), callback=print)
    SingleDeviceSharding(device=CpuDevice(id=0))
    """
    for leaf in tree_flatten(value)[0]:
        callback(_sharding_of(leaf))


def _blocks(shape: tuple, sharding: Sharding) -> dict:
    """Block index (one per dimension) -> the device ids holding it."""
    if not isinstance(sharding, NamedSharding):
        return {(0,) * len(shape): [getattr(next(iter(sharding.device_set)), "id", 0)]}
    mesh, spec = sharding.mesh, tuple(sharding.spec) + (None,) * len(shape)
    out: dict = {}
    for r in range(mesh.size):
        coords = np.unravel_index(r, mesh.axis_sizes)
        idx = []
        for d in range(len(shape)):
            e = spec[d]
            i = 0
            for n in (() if e is None else e if isinstance(e, tuple) else (e,)):
                k = mesh.axis_names.index(n)
                i = i * mesh.axis_sizes[k] + int(coords[k])
            idx.append(i)
        out.setdefault(tuple(idx), []).append(r)
    return out


def visualize_sharding(shape, sharding: Sharding, *, use_color: bool = False,
                       scale: float = 1., min_width: int = 9, max_width: int = 80,
                       color_map: Any = None) -> None:
    """Print which devices hold each block of an array of ``shape`` laid out as
    ``sharding`` (1-d: one row of blocks; 2-d: a grid), as text.

    >>> from functrans.sharding import Mesh, NamedSharding, P
    >>> visualize_sharding((4,), NamedSharding(Mesh((1,), ("i",)), P("i")))
    +---------+
    |  CPU 0  |
    +---------+
    """
    shape = tuple(int(d) for d in shape)
    if len(shape) > 2:
        raise ValueError(f"Unsupported array shape: {shape}. visualize_sharding draws 1-d "
                         "and 2-d arrays only.")
    blocks = _blocks(shape, sharding)
    rows = 1 + max((b[0] for b in blocks if len(b) > 1), default=0)
    cols = 1 + max((b[-1] for b in blocks if b), default=0)
    if len(shape) == 1:
        rows, grid = 1, {(0, b[0]): ids for b, ids in blocks.items()}
    else:
        grid = {(b[0], b[1]) if len(b) == 2 else (0, 0): ids for b, ids in blocks.items()}
    label = {k: "CPU " + ",".join(map(str, sorted(v))) for k, v in grid.items()}
    width = min(max_width, max(min_width, max(len(t) for t in label.values()) + 2))
    line = "+" + "+".join("-" * width for _ in range(cols)) + "+"
    text = [line]
    for i in range(rows):
        text.append("|" + "|".join(label.get((i, j), "").center(width)
                                   for j in range(cols)) + "|")
        text.append(line)
    print("\n".join(text))


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """``visualize_sharding(arr.shape, arr.sharding, **kwargs)``.

    >>> import functrans.numpy as fnp
    >>> visualize_array_sharding(fnp.ones(2))
    +---------+
    |  CPU 0  |
    +---------+
    """
    visualize_sharding(np.shape(arr), _sharding_of(arr), **kwargs)
