"""``jax.custom_derivatives``: user-defined derivative rules (``custom_jvp``,
``custom_vjp`` and their helpers, from ``functrans.custom_rules``), ``custom_gradient``,
``closure_convert`` and ``linear_call`` (``functrans.closures``).

>>> import functrans as ft
>>> from functrans.custom_derivatives import custom_gradient
>>> f = custom_gradient(lambda x: (x * 2.0, lambda g: (g * 5.0,)))
>>> float(ft.grad(f)(1.0))
5.0
"""
from .closures import closure_convert, custom_gradient, linear_call
from .custom_rules import (CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp,
                           custom_vjp_primal_tree_values, zero_from_primal)

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient", "custom_jvp",
           "custom_vjp", "custom_vjp_primal_tree_values", "linear_call", "zero_from_primal"]
