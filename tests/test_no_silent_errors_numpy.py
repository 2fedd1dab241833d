"""numpy functions on traced values never silently detach them from the trace (issue 13.1).

A numpy function with a functrans.numpy twin dispatches to it (value and derivative equal
to the twin's); anything else, and np.asarray itself, raises TracerArrayConversionError.
"""
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.errors import ConcretizationError, TracerArrayConversionError

A = np.array([0.3, 0.5, 0.9])
B = np.array([0.7, 0.2, 0.4])
M = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, 0.4], [0.1, 0.3, 1.8]])
I = np.array([5, 3, 12])
# argument patterns tried in turn for each function; the first one fnp accepts is used.
# The traced argument is the first float array (or list of them).
PATTERNS = [(A,), (M,), (A, B), (M, M), ([A, B],), (M, 1), (A, 2), (I,), (I, I), (I, 1),
            (M, (9,)), (A, (2, 3)), (M, 0, 1), (M, np.array([[0], [2], [1]]), 1),
            ("ij,j->i", M, A)]
# numpy functions that take no array (shapes, dtypes, ranges): nothing to trace
NO_ARRAY_ARGUMENT = {"arange", "array", "asarray", "broadcast_shapes", "empty", "eye", "full",
                     "identity", "ones", "tri", "zeros"}
# file I/O: called with the patterns above they would write files into the working
# directory (numpy's own functions on concrete data; round trip in test_numpy_extra)
FILE_IO = {"save", "savez", "savez_compressed", "load", "fromfile", "loadtxt", "savetxt",
           "genfromtxt"}


def _numpy_twins():
    """(label, fnp function, numpy function) for every fnp function numpy also has."""
    rows = []
    modules = [("", fnp, np)] + [(f"{m}.", getattr(fnp, m), getattr(np, m))
                                 for m in ("linalg", "fft") if hasattr(fnp, m)]
    for prefix, fmod, nmod in modules:
        for name in sorted(dir(fmod)):
            f, g = getattr(fmod, name), getattr(nmod, name, None)
            if name.startswith("_") or g is None or not callable(f) or isinstance(f, type) \
                    or isinstance(g, type) or name in NO_ARRAY_ARGUMENT | FILE_IO:
                continue
            rows.append((prefix + name, f, g))
    return rows


def _pattern(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in PATTERNS:
            try:
                f(*p)
                return p
            except Exception:
                continue
    return None


def _traced_position(args):
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            return i
        if isinstance(a, list):
            return i
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            return i
    return None


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _leaves(o)]
    return [out]


def _scalar_of(out):
    """sum(out * weights) over the inexact leaves of ``out`` (a scalar to differentiate)."""
    total = 0.0
    for o in _leaves(out):
        o = fnp.asarray(o)
        if o.dtype.kind in "fc":
            w = fnp.cos(fnp.arange(o.size, dtype=o.real.dtype).reshape(o.shape))
            total = total + fnp.sum(fnp.real(o) * w)
    return total


ROWS = _numpy_twins()


@pytest.mark.parametrize("label,f,g", ROWS, ids=[r[0] for r in ROWS])
def test_numpy_function_on_tracer_equals_its_fnp_twin(label, f, g):
    args = _pattern(f)
    if args is None:
        # no pattern fits: then numpy on a tracer may raise, but never detach; checked
        # with the simplest call there is
        args = (A,)
    pos = _traced_position(args)
    assert pos is not None, label

    def call(fn):
        return lambda t: fn(*args[:pos], t, *args[pos + 1:])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = ft.jit(call(f))(args[pos])
        except Exception as e:        # fnp itself refuses under jit: so must numpy's route
            with pytest.raises(Exception):
                ft.jit(call(g))(args[pos])
            want = e
        if not isinstance(want, Exception):
            got = ft.jit(call(g))(args[pos])
            for w_, g_ in zip(_leaves(want), _leaves(got)):
                np.testing.assert_allclose(np.asarray(g_), np.asarray(w_), rtol=1e-12,
                                           err_msg=label)
        if args[pos] is I or _pattern(f) is None:
            return
        try:
            gw = ft.grad(lambda t: _scalar_of(call(f)(t)))(args[pos])
        except Exception:
            with pytest.raises(Exception):
                ft.grad(lambda t: _scalar_of(call(g)(t)))(args[pos])
            return
        gg = ft.grad(lambda t: _scalar_of(call(g)(t)))(args[pos])
        for w_, g_ in zip(_leaves(gw), _leaves(gg)):
            np.testing.assert_allclose(np.asarray(g_), np.asarray(w_), rtol=1e-12,
                                       err_msg=label)


def test_the_table_covers_the_core_of_numpy():
    tested = {label for label, f, _ in ROWS if _pattern(f) is not None}
    core = {"sum", "mean", "max", "min", "prod", "sin", "exp", "log", "sqrt", "dot",
            "matmul", "concatenate", "stack", "reshape", "transpose", "where", "cumsum",
            "sort", "clip", "outer", "tensordot", "einsum", "linalg.norm", "linalg.solve"}
    assert core <= tested, core - tested
    assert len(tested) >= 150


def _under_every_transform(fun, x):
    """Run ``fun`` on a traced x under each transform (and inside control-flow bodies and
    a custom rule): each must raise TracerArrayConversionError."""
    runs = {
        "grad": lambda: ft.grad(lambda t: fnp.sum(fun(t)))(x),
        "jvp": lambda: ft.jvp(fun, (x,), (fnp.ones_like(x),)),
        "vjp": lambda: ft.vjp(fun, x),
        "vmap": lambda: ft.vmap(fun)(fnp.stack([x, x])),
        "jit": lambda: ft.jit(fun)(x),
        "cond": lambda: lax.cond(True, fun, lambda t: t, x),
        "fori": lambda: lax.fori_loop(0, 2, lambda i, t: fun(t), x),
        "scan": lambda: lax.scan(lambda c, t: (c, fun(t)), 0.0, fnp.stack([x, x])),
    }

    @ft.custom_jvp
    def h(t):
        return t

    @h.defjvp
    def h_jvp(primals, tangents):
        return fun(primals[0]), tangents[0]
    runs["custom_jvp rule"] = lambda: ft.jvp(h, (x,), (fnp.ones_like(x),))
    for name, run in runs.items():
        with pytest.raises(TracerArrayConversionError) as info:
            run()
        assert "functrans.numpy" in str(info.value), name
        assert "test_no_silent_errors_numpy.py" in str(info.value), name   # the user's line


def test_asarray_of_a_tracer_raises_under_every_transform():
    _under_every_transform(lambda t: np.asarray(t) * 1.0, fnp.arange(3.0))
    _under_every_transform(lambda t: np.array(t) * 1.0, fnp.arange(3.0))
    _under_every_transform(lambda t: t.__array__() * 1.0, fnp.arange(3.0))


def test_numpy_function_without_twin_raises_under_every_transform():
    # np.r_ builds with np.array; sliding_window_view has no twin
    _under_every_transform(lambda t: np.r_[t, t][:3], fnp.arange(3.0))
    _under_every_transform(lambda t: np.lib.stride_tricks.sliding_window_view(t, 2), fnp.arange(3.0))


def test_conversion_error_is_also_a_concretization_error_and_type_error():
    assert issubclass(TracerArrayConversionError, ConcretizationError)
    assert issubclass(TracerArrayConversionError, TypeError)


@pytest.mark.parametrize("np_fn", [
    lambda x: np.sum(np.rot90(x.reshape(2, 2))),
    lambda x: np.sum(np.append(x, x)),
    lambda x: np.sum(np.r_[x, x]),
    lambda x: np.sum(np.kron(x, x)),
    lambda x: np.sum(np.cross(x[:3], x[1:])),
    lambda x: np.sum(np.diff(x) ** 2),
], ids=["rot90", "append", "r_", "kron", "cross", "diff"])
def test_issue_examples_never_give_a_zero_gradient(np_fn):
    x = fnp.array([1.0, 2.0, 4.0, 7.0])
    try:
        g = ft.grad(np_fn)(x)
    except TracerArrayConversionError:
        return
    # when fnp has the function, the gradient is the finite-difference one, never zero
    eps = 1e-6
    fd = [(np_fn(np.asarray(x) + eps * e) - np_fn(np.asarray(x) - eps * e)) / (2 * eps)
          for e in np.eye(4)]
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-5, atol=1e-6)


def test_numpy_reductions_and_ufuncs_on_tracers_are_differentiable():
    x = fnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ft.grad(lambda t: np.sum(t * t))(x), 2 * np.asarray(x))
    np.testing.assert_allclose(ft.grad(lambda t: np.mean(t))(x), np.full(3, 1 / 3))
    np.testing.assert_allclose(ft.grad(lambda t: fnp.sum(np.sin(t)))(x), np.cos(x))
    np.testing.assert_allclose(ft.grad(lambda t: np.add.reduce(t * t))(x), 2 * np.asarray(x))
    np.testing.assert_allclose(ft.grad(lambda t: np.multiply.reduce(t))(x), [6.0, 3.0, 2.0])
    np.testing.assert_allclose(ft.grad(lambda t: np.sum(np.add.accumulate(t)))(x),
                               [3.0, 2.0, 1.0])
    m = fnp.ones((2, 3))
    assert ft.jit(lambda t: np.add.reduce(t))(m).shape == (3,)      # numpy's axis=0
    np.testing.assert_allclose(ft.jit(lambda t: np.linalg.norm(t))(x), np.linalg.norm(x))
    assert ft.jit(lambda t: np.shape(t))(m) == (2, 3)
    assert ft.jit(lambda t: np.ndim(t))(m) == 2


def test_mixed_numpy_array_and_tracer_dispatch():
    c = np.array([1.0, 2.0, 3.0])
    x = fnp.array([0.5, 0.5, 0.5])
    np.testing.assert_allclose(ft.grad(lambda t: fnp.sum(np.multiply(c, t)))(x), c)
    np.testing.assert_allclose(ft.grad(lambda t: fnp.sum(c * t))(x), c)
    np.testing.assert_allclose(ft.grad(lambda t: fnp.sum(fnp.asarray(c) * t))(x), c)
    np.testing.assert_allclose(ft.grad(lambda t: np.sum(np.concatenate([c, t])))(x),
                               np.ones(3))


def test_ufunc_methods_without_twin_and_out_arguments_raise():
    x = fnp.array([1.0, 2.0, 3.0])
    for fun in (lambda t: np.add.outer(t, t), lambda t: np.add.at(np.zeros(3), [0], t),
                lambda t: np.sin(t, out=np.zeros(3)), lambda t: np.sum(t, out=np.zeros(())),
                lambda t: np.add(t, 1.0, where=np.array([True, False, True]))):
        with pytest.raises(TracerArrayConversionError):
            ft.grad(lambda t: fnp.sum(fun(t)))(x)

    def in_place(t):
        a = np.ones(3)
        a += t          # would write the concrete value into a numpy array
        return fnp.sum(a)
    with pytest.raises(TracerArrayConversionError):
        ft.grad(in_place)(x)


def test_eager_arrays_keep_numpy_semantics():
    x = fnp.array([1.0, 2.0, 3.0])
    assert float(np.sum(x)) == 6.0
    assert np.asarray(x).base is not None or np.shares_memory(np.asarray(x), x)
    np.testing.assert_allclose(np.sin(x), np.sin([1.0, 2.0, 3.0]))
    assert np.add.reduce(x) == 6.0


def test_scipy_special_ufuncs_on_tracers_run_their_functrans_twin():
    """scipy.special's ufuncs call functrans.scipy.special (JAX's jax.scipy.special names)
    on traced values: gradient and jit equal the twin's, checked against a central
    difference of scipy itself; ``psi`` is digamma; the six with numpy's names and
    meaning (cbrt, exp2, expm1, i0, log1p, round) without a scipy twin run numpy's."""
    import scipy.special as sp
    import functrans.scipy.special as fss
    x = np.array([0.3, 0.7, 1.9])
    for name in ("gammaln", "erf", "expit", "psi", "xlogy", "log1p", "i0e", "ndtri"):
        u = getattr(sp, name)
        arg = x / 2.5 if name == "ndtri" else x
        f = (lambda t: u(t, t + 1.0)) if u.nin == 2 else u
        got = ft.jit(ft.grad(lambda t: fnp.sum(f(t))))(arg)
        h = 1e-6
        fd = (np.asarray(f(arg + h)) - np.asarray(f(arg - h))) / (2 * h)
        np.testing.assert_allclose(got, fd, rtol=1e-6, err_msg=name)
        twin = getattr(fss, "digamma" if name == "psi" else name, None) or getattr(fnp, name)
        g = (lambda t: twin(t, t + 1.0)) if u.nin == 2 else twin
        np.testing.assert_array_equal(ft.jit(f)(arg), ft.jit(g)(arg))
    np.testing.assert_array_equal(ft.jit(sp.round)(np.array([0.5, 1.5, -2.5])), [0., 2., -2.])


def test_other_ufuncs_on_tracers_raise_whatever_their_name():
    """Only numpy's and scipy.special's own ufuncs dispatch: a ufunc of another library
    named like a numpy one (a numba.vectorize called ``square``) used to run fnp.square,
    a silently different function; a scipy.special ufunc with no twin names itself."""
    import numba
    import scipy.special as sp

    @numba.vectorize(["float64(float64)"])
    def square(v):
        return v + 1.0
    x = fnp.array([1.0, 2.0])
    with pytest.raises(TracerArrayConversionError, match="'square' \\(not numpy's"):
        ft.grad(lambda t: fnp.sum(square(t)))(x)
    with pytest.raises(TracerArrayConversionError, match="scipy.special.ellipk"):
        ft.jit(sp.ellipk)(x / 4)
    np.testing.assert_array_equal(square(np.array([1.0])), [2.0])    # eager: the ufunc's own
