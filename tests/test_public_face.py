"""The public face: every public name documented with an example that the doctest run
picks up, the transforms' parameters explained and annotated, transformed functions
keeping the identity of the function they transform, and ``py.typed`` shipped."""
import doctest
import enum
import functools
import importlib
import inspect
import os
import types
import typing
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.example_libraries.optimizers
import functrans.example_libraries.stax
import functrans.nn.initializers
import functrans.scipy.integrate
import functrans.scipy.signal
import functrans.scipy.special
import functrans.scipy.stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _names(module):
    return getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]


def _public_objects():
    """(dotted name, object) for every public name: ``functrans.__all__``, the public
    names of lax, nn, random and tree_util, and functrans.numpy's names that do not
    mirror numpy's (the mirrors document themselves by pointing at numpy).
    A namespace (``checkpoint_policies``) stands for its members."""
    out = []
    for module, names in [(ft, ft.__all__), (ft.lax, _names(ft.lax)), (ft.nn, _names(ft.nn)),
                          (ft.random, _names(ft.random)), (ft.tree_util, _names(ft.tree_util)),
                          (fnp, [n for n in _names(fnp) if not hasattr(np, n)])]:
        for name in names:
            obj = getattr(module, name)
            if isinstance(obj, types.SimpleNamespace):
                out += [(f"{module.__name__}.{name}.{k}", v) for k, v in vars(obj).items()]
            elif isinstance(obj, type) and not obj.__module__.startswith("functrans"):
                continue    # numpy's own classes re-exported (float_, ComplexWarning...)
            elif typing.get_origin(obj) is not None:
                continue    # a type alias (lax.DotDimensionNumbers): no docstring of its own
            elif isinstance(obj, types.ModuleType) or callable(obj):
                out.append((f"{module.__name__}.{name}", obj))
    return out


PUBLIC = _public_objects()


def test_the_public_names_are_many():
    # a guard on the walk itself: lax alone has ~100 functions
    assert len(PUBLIC) > 150, len(PUBLIC)
    assert {"functrans.grad", "functrans.lax.cos", "functrans.tree_util.tree_map",
            "functrans.numpy.Array", "functrans.checkpoint_policies.dots_saveable"} \
        <= {n for n, _ in PUBLIC}


@functools.lru_cache(maxsize=None)
def _doctest_names(module_name):
    module = importlib.import_module(module_name)
    return {t.name for t in doctest.DocTestFinder().find(module) if t.examples}


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_public_name_has_a_docstring_with_an_example_that_the_doctests_run(name, obj):
    doc = obj.__doc__ or ""
    assert doc.strip(), f"{name} has no docstring"
    assert ">>>" in doc, f"{name}'s docstring has no >>> example"
    # tests/test_doctests.py runs doctest.testmod on every module: the example must be
    # found there, under the module that defines the object (by its name in that module)
    if isinstance(obj, types.ModuleType):
        home, want = obj.__name__, {obj.__name__}
    else:
        # a wrapper (functools.wraps: lax's 16-bit-float special functions) is found
        # through the function it wraps, whose example it shares
        home, found = obj.__module__, (obj, getattr(obj, "__wrapped__", obj))
        want = {f"{home}.{k}" for k, v in vars(importlib.import_module(home)).items()
                if any(v is o for o in found)}
    assert want & _doctest_names(home), f"{name}: doctest does not collect it in {home}"


# the transforms whose every parameter the docstring explains
EXPLAINED = [ft.grad, ft.value_and_grad, ft.jit, ft.vmap, ft.jvp, ft.vjp, ft.linearize,
             ft.jacfwd, ft.jacrev, ft.jacobian, ft.hessian, ft.checkpoint, ft.custom_jvp,
             ft.custom_vjp]


def _signature(obj):
    return inspect.signature(obj.__init__ if isinstance(obj, type) else obj)


@pytest.mark.parametrize("transform", EXPLAINED, ids=lambda t: t.__name__)
def test_every_parameter_is_explained_and_annotated(transform):
    params = [p for p in _signature(transform).parameters.values() if p.name != "self"]
    doc = transform.__doc__
    missing = [p.name for p in params if f"{p.name}:" not in doc]
    assert not missing, f"{transform.__name__}'s docstring does not explain {missing}"
    if isinstance(transform, type):
        return          # a class: its __init__ takes what the docstring lists
    unannotated = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    assert not unannotated, f"{transform.__name__}: no type hint for {unannotated}"
    assert inspect.signature(transform).return_annotation is not inspect.Signature.empty


FUNCTIONS = [getattr(ft, n) for n in ft.__all__ if inspect.isfunction(getattr(ft, n))
             or isinstance(getattr(ft, n), type) and getattr(ft, n) is not ft.Array]


@pytest.mark.parametrize("fun", FUNCTIONS, ids=lambda f: f.__name__)
def test_public_api_is_type_annotated(fun):
    sig = _signature(fun)
    unannotated = [p.name for p in sig.parameters.values()
                   if p.name != "self" and p.annotation is inspect.Parameter.empty]
    assert not unannotated, f"{fun.__name__}: no type hint for {unannotated}"
    assert sig.return_annotation is not inspect.Signature.empty, f"{fun.__name__}: no return hint"



ANNOTATED_NAMESPACES = [
    ft.lax, ft.nn, ft.nn.initializers, ft.random, ft.scipy.special, ft.scipy.integrate,
    ft.scipy.signal, ft.example_libraries.stax, ft.example_libraries.optimizers,
    ft.tree_util, ft.test_util, fnp, fnp.linalg, fnp.fft, ft.scipy.linalg,
    ft.scipy.optimize, ft.scipy.fft, ft.scipy.stats, ft.scipy.sparse.linalg,
    ft.scipy.interpolate, ft.scipy.ndimage, ft.scipy.cluster.vq, ft.scipy.spatial.transform,
] + [getattr(ft.scipy.stats, n) for n in ft.scipy.stats.__all__
     if isinstance(getattr(ft.scipy.stats, n), types.ModuleType)]


def _annotated_api():
    """(dotted name, function or class) for each name in those namespaces' ``__all__``."""
    out = []
    for module in ANNOTATED_NAMESPACES:
        assert hasattr(module, "__all__"), f"{module.__name__} has no __all__"
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, enum.Enum):
                continue        # an enum's "constructor" is the enum machinery
            if obj is ft.Array or (inspect.isfunction(obj) or isinstance(obj, type)) \
                    and not obj.__module__.startswith("functrans"):
                continue        # numpy's own (scalar types, dtype, printoptions...) that fnp
                                # re-exports; Array is made by asarray, not its constructor
            if inspect.isfunction(obj) or isinstance(obj, (type, functools.partial)):
                out.append((f"{module.__name__}.{name}", obj))
    return out


ANNOTATED = _annotated_api()


def test_the_annotated_namespaces_are_walked():
    assert len(ANNOTATED) > 400, len(ANNOTATED)
    assert {"functrans.lax.sin", "functrans.lax.add", "functrans.random.normal",
            "functrans.scipy.stats.norm.logpdf", "functrans.example_libraries.stax.Conv",
            "functrans.numpy.sin", "functrans.numpy.sum", "functrans.numpy.linalg.svd",
            "functrans.numpy.fft.fft", "functrans.scipy.linalg.lu_factor"} \
        <= {n for n, _ in ANNOTATED}


@pytest.mark.parametrize("name, obj", ANNOTATED, ids=[n for n, _ in ANNOTATED])
def test_library_api_is_type_annotated(name, obj):
    # a class: its constructor's parameters (NamedTuple fields, __init__, __new__)
    sig = inspect.signature(obj)
    unannotated = [p.name for p in sig.parameters.values()
                   if p.annotation is inspect.Parameter.empty]
    assert not unannotated, f"{name}: no type hint for {unannotated}"
    if not isinstance(obj, type):
        assert sig.return_annotation is not inspect.Signature.empty, f"{name}: no return hint"


def loss(x, y=2.0):
    """The documented loss."""
    return fnp.sum(x * x) * y


WRAPPERS = {
    "grad": ft.grad, "value_and_grad": ft.value_and_grad, "vmap": ft.vmap,
    "jacfwd": ft.jacfwd, "jacrev": ft.jacrev, "jacobian": ft.jacobian, "hessian": ft.hessian,
    "jit": ft.jit, "checkpoint": ft.checkpoint, "custom_jvp": ft.custom_jvp,
    "custom_vjp": ft.custom_vjp,
    "grad(jit)": lambda f: ft.grad(ft.jit(f)), "jit(grad)": lambda f: ft.jit(ft.grad(f)),
}


@pytest.mark.parametrize("make", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_transformed_function_keeps_name_doc_module_and_wrapped(make):
    g = make(loss)
    assert g.__name__ == "loss"
    assert g.__qualname__ == "loss"
    assert g.__doc__ == "The documented loss."
    assert g.__module__ == __name__
    assert inspect.unwrap(g) is loss
    assert list(inspect.signature(g).parameters) == ["x", "y"]


def test_wrapping_changes_no_value():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(ft.grad(loss)(x), 4.0 * x)
    np.testing.assert_allclose(ft.vmap(loss)(np.stack([x, x])), [10.0, 10.0])
    np.testing.assert_allclose(ft.hessian(loss)(x), 4.0 * np.eye(2))


def test_a_callable_without_a_name_lends_its_type_name():
    g = ft.grad(functools.partial(loss, y=3.0))
    assert g.__name__ == "partial"
    assert float(g(np.float64(1.0))) == 6.0


def test_repr_of_jit_names_the_function():
    assert repr(ft.jit(loss)) == "<jit(loss)>"
    assert "<lambda>" in repr(ft.jit(lambda x: x))


def test_repr_of_custom_rules_names_the_function():
    assert repr(ft.custom_vjp(loss)) == "<custom_vjp(loss)>"
    assert repr(ft.custom_jvp(loss)) == "<custom_jvp(loss)>"


def _declared_package_data():
    """``[tool.setuptools.package-data]`` of pyproject.toml, for when setuptools is not in
    the environment (a Python 3.12 venv has none; pip builds in an isolated one)."""
    try:
        import tomllib
    except ImportError:           # Python 3.10: the table is simple enough to read by hand
        text = open(os.path.join(ROOT, "pyproject.toml")).read()
        table = text.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
        return {k.strip(): v for k, v in (line.split("=", 1) for line in table.splitlines()
                                          if "=" in line and not line.startswith("#"))}
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]["package-data"]


def _build_py_outputs():
    """The files setuptools would put in a wheel, without building one."""
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        dist = Distribution()
        dist.script_name = "setup.py"
        apply_configuration(dist, "pyproject.toml")
        # only the declared package data (the manifest scan would write an egg-info
        # folder into the source tree, and a wheel gets the declared files anyway)
        dist.include_package_data = False
        build_py = dist.get_command_obj("build_py")
        build_py.build_lib = "build-not-written"
        build_py.ensure_finalized()
        return [os.path.relpath(f, "build-not-written") for f in build_py.get_outputs()]
    finally:
        os.chdir(cwd)


def test_py_typed_ships_with_the_package():
    assert os.path.isfile(os.path.join(ROOT, "functrans", "py.typed"))
    assert "py.typed" in str(_declared_package_data()["functrans"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            outputs = _build_py_outputs()
        except ImportError:       # no setuptools here: the declaration above is the check
            return
    assert os.path.join("functrans", "py.typed") in outputs
