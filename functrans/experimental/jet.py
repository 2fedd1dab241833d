"""Taylor-mode higher-order automatic differentiation: ``jet`` (JAX's
``jax.experimental.jet``).

``jet(f, (x,), ((x_1, ..., x_K),))`` pushes the truncated Taylor polynomial of a path
through ``f``: with the default ``factorial_scaled=True`` the terms are derivatives, so
for the path ``x + t v`` (terms ``(v, 0, ..., 0)``) the output terms are the directional
derivatives ``d^k/dt^k f(x + t v)`` at ``t = 0``, in one pass instead of ``K`` nested
``jvp``s. The rules are in ``jet_rules``; a primitive with none raises
``NotImplementedError`` naming it.

>>> import numpy as np
>>> import functrans.numpy as fnp
>>> y0, (y1, y2) = jet(fnp.sin, (0.5 ** 3,), ((3 * 0.5 ** 2, 6 * 0.5),))
>>> bool(np.isclose(y2, -np.sin(0.125) * 0.75 ** 2 + np.cos(0.125) * 3.0))
True
"""
from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable

from ..api_util import as_array, flatten_fun
from ..tree_util import tree_flatten, tree_unflatten
from . import jet_rules  # noqa: F401  (registers the rules)
from .jet_eval import jet_fun

__all__ = ["jet", "jet2"]


def jet(fun: Callable[..., Any], primals: Any, series: Any, factorial_scaled: bool = True,
        **_: Any) -> tuple[Any, Any]:
    """Taylor-mode expansion of ``fun`` (JAX's ``jax.experimental.jet.jet``).

    ``primals``: a tuple or list of arrays (one per positional argument of ``fun``);
    ``series``: one tuple or list of ``K`` terms per argument (every argument the same
    ``K``). Returns ``(primals_out, series_out)``: ``fun(*primals)`` and, for each output
    leaf (in ``fun``'s output structure), its list of ``K`` terms. With
    ``factorial_scaled`` (the default) term ``k`` is the ``k``-th derivative along the
    path; with False, the plain Taylor coefficient (``jet2``).

    >>> import functrans.numpy as fnp
    >>> y, (d1, d2, d3) = jet(fnp.exp, (0.0,), ((1.0, 0.0, 0.0),))
    >>> float(y), float(d1), float(d2), float(d3)
    (1.0, 1.0, 1.0, 1.0)
    """
    try:
        order, = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if len(tree_flatten(x)[0]) != 1 or tree_flatten(x)[0][0] is not x:
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if len(tree_flatten(t)[0]) != 1 or tree_flatten(t)[0][0] is not t:
                raise ValueError(f"term {j} for argument {i} is not an array")
    flat_fun, out_tree = flatten_fun(fun, tree_flatten(tuple(primals))[1])
    primals = [as_array(x) for x in primals]
    series = [[as_array(t) for t in terms] for terms in series]
    if factorial_scaled:
        series = [[_scale(t, 1.0 / math.factorial(k + 1)) for k, t in enumerate(terms)]
                  for terms in series]
    outs, out_series = jet_fun(flat_fun, primals, series)
    if factorial_scaled:
        out_series = [[_scale(t, float(math.factorial(k + 1))) for k, t in enumerate(terms)]
                      for terms in out_series]
    tree = out_tree()
    return tree_unflatten(tree, outs), tree_unflatten(tree, out_series)


def _scale(t, c):
    return t * c


jet2 = partial(jet, factorial_scaled=False)
jet2.__doc__ = """``jet`` with ``factorial_scaled=False``: the series are plain Taylor
coefficients (JAX's ``jet2``).

>>> import functrans.numpy as fnp
>>> y, (c1, c2) = jet2(fnp.exp, (0.0,), ((1.0, 0.0),))
>>> float(c2)
0.5
"""
