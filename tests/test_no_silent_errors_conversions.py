"""Python conversions of a differentiated value raise instead of detaching it.

Under grad or jvp outside jit a tracer knows its value, and ``float(x)``, ``math.sin(x)``,
``x.item()`` ... used to return that value as a Python number: the result no longer
depended on ``x``, and the derivative came out silently zero (``grad(lambda x: float(x[0])
* x[1])`` gave [0, 1, 0, 0]). They raise ConcretizationError (JAX's
ConcretizationTypeError) naming the user's line. Integer and boolean values still convert,
so Python control flow on known values keeps working; so does everything outside a
transform. Also here: eager where/select keep small ints as jit does, int16 wraps eagerly
as under jit, ``Array.is_deleted`` and ``round``.
"""
import math

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

X = np.array([1.0, 2.0, 3.0, 4.0])
HERE = "test_no_silent_errors_conversions.py"


def _setitem(x):
    a = np.zeros(3)
    a[0] = x[0]
    return a[0] * x[1]


# each converts x[0] (or x) to a Python/numpy number and multiplies by x[1]
CONVERSIONS = {
    "float": lambda x: float(x[0]) * x[1],
    "math.sin": lambda x: math.sin(x[0]) * x[1],
    "np.float64": lambda x: np.float64(x[0]) * x[1],
    "tolist": lambda x: x.tolist()[0] * x[1],
    "tobytes": lambda x: np.frombuffer(x.tobytes())[0] * x[1],
    "complex": lambda x: complex(x[0]).real * x[1],
    "complex-of-complex": lambda x: complex((x[0] * 1j)).imag * x[1],
    "item": lambda x: x[0].item() * x[1],
    "item-index": lambda x: x.item(0) * x[1],
    "setitem": _setitem,
}


def _under(transform, f):
    if transform == "grad":
        return ft.grad(f)(X)
    if transform == "jvp":
        return ft.jvp(f, (X,), (np.ones(4),))
    if transform == "vjp":
        return ft.vjp(f, X)[1](1.0)
    if transform == "jacrev":
        return ft.jacrev(f)(X)
    if transform == "jacfwd":
        return ft.jacfwd(f)(X)
    if transform == "hessian":
        return ft.hessian(f)(X)
    raise AssertionError(transform)


def _conversion_error(info):
    """The ConcretizationError raised, or the one numpy chained to its own ValueError
    (``a[i] = tracer``: numpy replaces __float__'s error by 'setting an array element with
    a sequence', keeping ours as the cause)."""
    e = info.value
    if not isinstance(e, ft.errors.ConcretizationError):
        assert isinstance(e, ValueError) and isinstance(e.__cause__,
                                                        ft.errors.ConcretizationError), e
        e = e.__cause__
    return e


@pytest.mark.parametrize("transform", ["grad", "jvp", "vjp", "jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversion_of_differentiated_value_raises_naming_the_line(name, transform):
    with pytest.raises((ft.errors.ConcretizationError, ValueError)) as info:
        _under(transform, CONVERSIONS[name])
    e = _conversion_error(info)
    assert isinstance(e, ft.errors.ConcretizationTypeError)
    assert isinstance(e, TypeError)
    msg = str(e)
    assert HERE in msg, msg          # the user's line: a lambda above, or _setitem
    if not isinstance(e, ft.errors.TracerArrayConversionError):   # np.float64: __array__
        assert "detached" in msg and "stop_gradient" in msg and "fnp" in msg, msg


def test_error_names_the_exact_line():
    def f(x):
        return float(x) * x       # the line
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(ft.errors.ConcretizationError, match=f"{HERE}:{line} "):
        ft.grad(f)(1.5)
    with pytest.raises(ft.errors.ConcretizationError, match=f"{HERE}:{line} "):
        ft.jvp(f, (1.5,), (1.0,))


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversions_work_outside_transforms(name):
    want = math.sin(1.0) * 2.0 if name == "math.sin" else 2.0
    assert float(CONVERSIONS[name](fnp.asarray(X))) == want
    assert float(CONVERSIONS[name](X)) == want


def test_conversions_of_values_no_derivative_reaches_work():
    # stop_gradient: no derivative is meant (a logged value, a step size)
    logged = []

    def f(x):
        logged.append(float(lax.stop_gradient(x[0])))
        logged.append(lax.stop_gradient(x).tolist())
        return float(ft.stop_gradient(x[0])) * x[1]
    np.testing.assert_array_equal(ft.grad(f)(X), [0, 1, 0, 0])
    np.testing.assert_array_equal(ft.jvp(f, (X,), (np.ones(4),))[1], 1.0)
    assert logged[0] == 1.0 and logged[1] == X.tolist()
    # a constant computed inside the function depends on no input
    assert float(ft.jvp(lambda x: float(fnp.asarray(2.0) * 3) * x, (1.0,), (1.0,))[1]) == 6.0
    assert float(ft.grad(lambda x: float(fnp.sqrt(fnp.asarray(4.0))) * x)(1.0)) == 2.0
    # integer values carry no derivative: float() of them is exact
    assert ft.grad(lambda x: float(fnp.argmax(x)) * x[0])(X).tolist() == [3, 0, 0, 0]
    assert ft.jvp(lambda x, i: float(i) * x, (1.0, 3), (1.0, 0))[1] == 3.0


def test_int_bool_index_control_flow_on_known_values_still_works():
    def f(x):
        i = int(fnp.argmax(x))              # int() of an integer tracer
        y = x[i] * x[fnp.argmin(x)]         # __index__ of integer tracers
        if x[1] > 0:                        # bool() of a comparison
            y = y * 2.0
        while fnp.abs(y) > 100.0:           # a while loop on a tolerance
            y = y / 2.0
        for _ in range(int(fnp.sum(x > 2))):  # range of a known integer
            y = y + x[0]
        return y * int(x[3])                # int() of a float: piecewise constant, as JAX
    # f = 4 * (2 * x3 * x0 + 2 * x0) at X
    expect = np.array([4 * (2 * 4.0 + 2), 0, 0, 4 * 2 * 1.0])
    np.testing.assert_allclose(ft.grad(f)(X), expect)
    np.testing.assert_allclose(ft.jvp(f, (X,), (np.eye(4)[0],))[1], expect[0])
    np.testing.assert_allclose(ft.jacrev(f)(X), expect)
    assert bool(ft.grad(lambda x: x * (2.0 if x else 3.0))(1.0) == 2.0)   # bool of a float


def test_vmap_and_checkpoint_alone_keep_conversions_of_known_values():
    # unbatched, undifferentiated values: converting loses nothing
    got = ft.vmap(lambda a, s: float(s) * a, in_axes=(0, None))(X, 2.0)
    np.testing.assert_array_equal(got, 2 * X)
    assert float(ft.checkpoint(lambda x: float(x[0]) * x[1])(X)) == 2.0


def test_conversions_nested_in_other_transforms_under_grad_raise():
    vm = lambda s: ft.vmap(lambda a, s: float(s) * a, in_axes=(0, None))(X, s).sum()
    closure = lambda s: ft.vmap(lambda a: float(s) * a)(X).sum()
    remat = ft.checkpoint(lambda x: float(x[0]) * x[1])
    second = lambda y: ft.grad(lambda x: float(y) * x * x)(y)
    for f, x in [(vm, 2.0), (closure, 2.0), (remat, X), (second, 1.5)]:
        with pytest.raises(ft.errors.ConcretizationError, match=HERE):
            ft.grad(f)(x)


def test_jit_still_raises_its_own_concretization_error():
    with pytest.raises(ft.errors.ConcretizationTypeError, match="needs a concrete value"):
        ft.jit(lambda x: float(x) * x)(1.0)
    with pytest.raises(ft.errors.ConcretizationTypeError, match="needs a concrete value"):
        ft.grad(ft.jit(lambda x: float(x) * x))(1.0)


def test_concretization_type_error_is_jax_name():
    assert ft.errors.ConcretizationTypeError is ft.errors.ConcretizationError
    assert issubclass(ft.errors.TracerBoolConversionError, ft.errors.ConcretizationTypeError)
    assert issubclass(ft.errors.TracerIntegerConversionError,
                      ft.errors.ConcretizationTypeError)
    assert issubclass(ft.errors.TracerArrayConversionError,
                      ft.errors.ConcretizationTypeError)


# --------------------------------------------------------------------------- round

def test_round_of_arrays_and_tracers_is_fnp_round():
    assert round(fnp.asarray(2.7)).tolist() == 3.0 and type(round(fnp.asarray(2.7))) is \
        type(fnp.asarray(2.7))
    np.testing.assert_array_equal(round(fnp.asarray([1.26, -2.54]), 1), [1.3, -2.5])
    assert round(fnp.arange(3)).dtype == fnp.arange(3).dtype
    assert float(ft.jit(lambda x: round(x))(2.7)) == 3.0
    assert float(ft.jit(lambda x: round(x, 1))(2.75)) == 2.8
    # derivative zero almost everywhere, as fnp.round's
    assert float(ft.grad(lambda x: round(x) * x)(2.7)) == 3.0
    assert ft.vmap(lambda x: round(x))(np.array([0.4, 1.6])).tolist() == [0.0, 2.0]


# --------------------------------------------------------------------------- is_deleted

def test_is_deleted_after_donation():
    f = ft.jit(lambda x: x * 2.0, donate_argnums=0)
    x = fnp.ones(3)
    assert not x.is_deleted()
    y = f(x)
    assert not y.is_deleted()
    z = f(y)                    # y is an output functrans owns: its buffer is donated
    if type(y).__name__ == "DeletedArray":
        assert y.is_deleted()
        with pytest.raises(RuntimeError, match="deleted"):
            y + 1
    assert not z.is_deleted()
    np.testing.assert_array_equal(z, 4.0)


def test_deleted_array_reports_deleted():
    from functrans.array import DeletedArray
    a = fnp.ones(2) + 0
    a.__class__ = DeletedArray
    assert a.is_deleted()


# --------------------------------------------------------------------------- where / select

SMALL = ["uint8", "int8"]


@pytest.mark.parametrize("dt", SMALL)
def test_eager_where_select_keep_small_ints_as_jit(dt):
    c = np.array([True, False, True, False])
    x = (np.arange(4) * 70).astype(dt)
    y = np.full(4, 3, dt)
    cases = [
        lambda c, x, y: fnp.where(c, x, y),
        lambda c, x, y: fnp.where(c, x, 5),
        lambda c, x, y: fnp.where(c, 5, y),
        lambda c, x, y: fnp.select([c, ~c], [x, y]),
        lambda c, x, y: fnp.select([c], [x], 7),
        lambda c, x, y: fnp.select([c], [x], y),
        lambda c, x, y: fnp.where(c, fnp.asarray(x), fnp.asarray(y)),
    ]
    for i, f in enumerate(cases):
        eager, jitted = f(c, x, y), ft.jit(f)(c, x, y)
        assert eager.dtype == jitted.dtype == np.dtype(dt), (i, eager.dtype, jitted.dtype)
        np.testing.assert_array_equal(eager, jitted)
    # and the numbers wrap as that dtype's do
    w = fnp.where(c, x, y)
    assert (w + w).dtype == np.dtype(dt)
    np.testing.assert_array_equal(w + w, (np.where(c, x, y) + np.where(c, x, y)))


def test_select_with_python_default_keeps_choice_dtype():
    c = np.array([True, False])
    for dt in ("float32", "int32", "uint8"):
        x = np.ones(2, dt)
        f = lambda c, x: fnp.select([c], [x], 0)
        assert f(c, x).dtype == ft.jit(f)(c, x).dtype == np.dtype(dt)


# --------------------------------------------------------------------------- int16

@pytest.mark.parametrize("dt", ["int16", "uint16"])
def test_int16_wraps_eagerly_as_under_jit(dt):
    """int16/uint16 are dtypes of their own (they were refused): never widened silently,
    so x + x wraps at 16 bits eagerly and under jit, as numpy's and JAX's do."""
    x = np.array([30000, 2], dt)
    want = (x + x).tolist()
    for f in (lambda v: fnp.add(v, v), lambda v: fnp.asarray(v) + v, ft.jit(lambda v: v + v),
              ft.jit(lambda v: v + v, backend="interpret")):
        r = f(x)
        assert r.dtype == np.dtype(dt) and r.tolist() == want
    assert fnp.asarray(x).dtype == np.dtype(dt) and fnp.multiply(x, 2).dtype == np.dtype(dt)
    assert fnp.asarray(x, "int32").tolist() == [30000, 2]
