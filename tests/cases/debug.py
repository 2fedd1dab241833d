"""Table rows for ``debug_print`` (``ft.debug.print``): it has no outputs, so each row
prints and returns a value computed next to it; the driver checks that the print
survives every transform (jit, jvp, vjp, vmap, print/parse round trip) without
changing the result. Output checks per transform are in tests/test_tools.py."""
import numpy as np

import functrans as ft
import functrans.numpy as fnp
from tests.cases import OpCase, gen, randn


def _printed(x):
    ft.debug.print("debug_print row: {x}", x=x)
    return fnp.sin(x) * 2.0


def _printed_pytree(x, y):
    ft.debug.print("{} {d}", (x, y), d={"y": y})
    return fnp.multiply(x, y)


CASES = [
    OpCase("debug_print", _printed, gen(randn(3)), ref=lambda x: np.sin(x) * 2.0),
    OpCase("debug_print_scalar", _printed, gen(randn()), ref=lambda x: np.sin(x) * 2.0),
    OpCase("debug_print_pytree", _printed_pytree, [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
           ref=lambda x, y: x * y),
]
