"""Helpers the native-collective test programs share (imported from their own folder,
which ``python tests/mpi_programs/X.py`` puts first on the path)."""
import numpy as np

import functrans as ft
from functrans.primitives.collectives_native import native_collectives


def run(g, xs, native):
    """``g(*xs)`` with the native collectives on or off: its values and counted traffic."""
    before = native_collectives(native)
    try:
        g(*xs)
        values, counted = ft.distributed.measure_comm(lambda: g(*xs))
    finally:
        native_collectives(before)
    return [np.asarray(v) for v in values], counted


def bits(a):
    """What bit-equality compares: dtype, shape and bytes."""
    return a.dtype, a.shape, a.tobytes()
