"""Fresh ``jit`` wrappers of one function share its traces and executables
(functrans.jit_shared), keyed so that functions that could trace differently never meet."""
import gc
import weakref

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import jit_shared


_TRACED = [0]    # a global: a list in a closure would make the caches private


def test_fresh_wrappers_of_one_function_trace_once():
    def step(y):
        _TRACED[0] += 1
        return fnp.sin(y) * 0.5 + y
    n = _TRACED
    n[0] = 0
    y = np.ones(4)
    for _ in range(5):
        y = ft.jit(step)(y)
    assert n[0] == 1
    np.testing.assert_array_equal(y, _reference(5))
    ft.jit(step)(np.ones(3))                      # a new shape traces again
    assert n[0] == 2
    ft.jit(step, backend="interpret")(np.ones(4))  # other options: their own cache
    assert n[0] == 3
    ft.jit(step, donate_argnums=0)(np.ones(4))
    assert n[0] == 4


def _reference(k):
    y = np.ones(4)
    for _ in range(k):
        y = np.sin(y) * 0.5 + y
    return y


def test_closures_and_defaults_that_differ_never_collide():
    def make(c):
        return lambda x: x * c
    x = np.arange(3.0)
    assert [float(ft.jit(make(c))(x)[1]) for c in (2.0, 3.0, 2.0)] == [2.0, 3.0, 2.0]

    def scaled(x, c=2.0):
        return x * c
    assert float(ft.jit(scaled)(x)[1]) == 2.0
    scaled.__defaults__ = (5.0,)                  # the same object, rebound default
    assert float(ft.jit(scaled)(x)[1]) == 5.0

    def kw(x, *, c=2.0):
        return x * c
    assert float(ft.jit(kw)(x)[1]) == 2.0
    kw.__kwdefaults__ = {"c": 7.0}
    assert float(ft.jit(kw)(x)[1]) == 7.0

    z = 0.0

    def zero(x):
        return x * z
    assert not np.signbit(ft.jit(zero)(1.0))
    z = -0.0                                       # equal to 0.0, but another result
    assert np.signbit(ft.jit(zero)(1.0))
    c = 1.0

    def cell(x):
        return x + c
    assert float(ft.jit(cell)(x)[0]) == 1.0
    c = 4.0                                        # the same function, a new cell value
    assert float(ft.jit(cell)(x)[0]) == 4.0
    w = np.array([1.0, 2.0, 3.0])

    def arr(x):
        return x * w
    assert ft.jit(arr)(x).tolist() == [0.0, 2.0, 6.0]
    w = np.array([1.0, 1.0, 1.0])                  # a new array object in the cell
    assert ft.jit(arr)(x).tolist() == [0.0, 1.0, 2.0]
    box = [2.0]                                    # a mutable cell: private caches

    def listed(x):
        return x * box[0]
    assert float(ft.jit(listed)(x)[1]) == 2.0
    box[0] = 3.0
    assert float(ft.jit(listed)(x)[1]) == 3.0


def test_shared_caches_do_not_keep_dead_functions_alive():
    def make():
        scale = np.ones(3)

        def f(x):
            return x * scale
        return f
    f = make()
    for x in (np.ones(3), 1.0):                   # array and scalar fast paths
        ft.jit(f)(x)
        ft.jit(f)(x)
    ref, key = weakref.ref(f), id(f)
    gc.collect()        # entries of functions earlier tests left to die go first
    n = len(jit_shared._REGISTRY)
    assert key in jit_shared._REGISTRY
    del f
    gc.collect()
    assert ref() is None
    assert key not in jit_shared._REGISTRY and len(jit_shared._REGISTRY) == n - 1


def test_clear_cache_of_a_fresh_wrapper_clears_the_shared_one():
    def g(x):
        return x + 1.0
    ft.jit(g)(1.0)
    assert ft.jit(g).cache_info()["entries"] == 1
    ft.jit(g).clear_cache()
    assert ft.jit(g).cache_info()["entries"] == 0
    ft.jit(g)(1.0)
    ft.clear_caches()
    assert ft.jit(g).cache_info()["entries"] == 0
