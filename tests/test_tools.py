"""The tools that let a user see inside: profiler, stage dumps, compile log,
debug.print, debug_nans, to_dot, traceback filtering and config."""
from __future__ import annotations

import inspect
import logging
import os
import re
import subprocess
import sys
import traceback

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import config, lax, tracing
from functrans.array import Array
from jaxpr_ir import parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = tuple(os.path.join(ROOT, d) + os.sep for d in ("functrans", "jaxpr_ir", "backends"))


@pytest.fixture(autouse=True)
def _restore_config():
    saved = config.options()
    yield
    for k, v in saved.items():
        config.update(k, v)


def _lineno(fn, text):
    """The line number of the first line of ``fn``'s source containing ``text``."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, l in enumerate(lines) if text in l)


def _fusible(x):
    return fnp.sum(fnp.tanh(x) * 2.0 + fnp.exp(-x) * x)


# --------------------------------------------------------------------------- config

def test_config_read_update_and_errors():
    config.update("log_compiles", True)
    assert config.read("log_compiles") is True
    assert ft.config.log_compiles is True
    config.update("functrans_log_compiles", "off")
    assert config.read("log_compiles") is False
    config.update("jax_explain_cache_misses", True)     # JAX's jit guide: the compile log
    assert config.read("log_compiles") is True
    config.update("log_compiles", False)
    with pytest.raises(AttributeError, match="unknown functrans option 'debug_nan'"):
        config.update("debug_nan", True)
    with pytest.raises(ValueError, match="boolean"):
        config.update("debug_nans", "maybe")
    with pytest.raises(TypeError, match="folder path"):
        config.update("dump_dir", 3)


def test_config_from_environment(tmp_path):
    code = ("import functrans as ft; print(ft.config.options())")
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCTRANS_LOG_COMPILES="1",
               FUNCTRANS_DUMP=str(tmp_path), FUNCTRANS_TRACEBACK_FILTERING="off")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert "'log_compiles': True" in out and "'traceback_filtering': False" in out
    assert str(tmp_path) in out


def test_source_lines_recorded_only_when_a_tool_needs_them():
    f = lambda x: fnp.sin(x) * 2.0   # noqa: E731
    assert all(e.source is None for e in ft.make_jaxpr(f)(1.0).eqns)
    config.update("debug_nans", True)
    srcs = [e.source for e in ft.make_jaxpr(f)(1.0).eqns]
    assert all(s and s.startswith(__file__ + ":") for s in srcs), srcs
    assert "test_tools.py" not in str(ft.make_jaxpr(f)(1.0))   # the printer hides it


# --------------------------------------------------------------------------- profiler

def test_profile_compiled_has_fewer_kernels_and_moves_fewer_bytes(capsys):
    x = np.linspace(0.1, 1.0, 20_000)
    r = ft.profile(_fusible, x, repeats=3)
    out = capsys.readouterr().out
    assert "operations / kernels" in out and "bytes moved" in out and "compile time" in out
    e, c = r["eager"], r["compiled"]
    assert r["compile_error"] is None
    assert c["backend"] == "cpu", r["notes"]
    assert e["operations"] == 7, e["ops_by_name"]    # tanh mul exp neg mul add sum
    assert c["kernels"] < e["operations"]
    assert c["bytes_moved"] < e["bytes_moved"]
    assert c["temporaries"] < e["temporaries"]
    for side in (e, c):
        assert side["time_s"] > 0 and side["peak_bytes"] > 0
    assert c["compile_s"] >= 0 and c["first_call_s"] >= c["time_s"]


def test_profile_eager_counts_operators_and_library_calls():
    x = np.ones((4, 3))
    r = ft.profile(lambda x: (x * 2.0).sum() + fnp.max(fnp.reshape(x, (12,))), x,
                   repeats=1, show=False)
    e = r["eager"]
    assert e["ops_by_name"] == {"add": 1, "sum": 1, "max": 1, "multiply": 1, "reshape": 1}
    assert e["temporaries"] == 4          # reshape is a view: no temporary, no traffic


def test_profile_restores_every_hook():
    fns = {n: getattr(fnp, n) for n in ("sin", "sum", "reshape")}
    methods = dict(Array.__dict__)
    bind = tracing.bind
    ft.profile(_fusible, np.ones(5), repeats=1, show=False)
    assert tracing.bind is bind and ft.primitives.base.bind is bind
    assert "__array_ufunc__" not in Array.__dict__
    assert Array.__dict__["__array_function__"] is methods["__array_function__"]
    assert all(getattr(fnp, n) is f for n, f in fns.items())
    assert dict(Array.__dict__) == methods


def test_profile_of_an_uncompilable_function_still_profiles_eager():
    def branchy(x):
        if fnp.sum(x) > 0:        # Python control flow on a value: jit cannot stage it
            return x * 2.0
        return x

    r = ft.profile(branchy, np.ones(3), repeats=2, show=False)
    assert r["compiled"] is None
    # (TracerBoolConversionError is the ConcretizationError of bool(), as in JAX)
    assert r["compile_error"].startswith(("ConcretizationError", "TracerBoolConversionError"))
    assert any("cannot be compiled" in n for n in r["notes"])
    assert r["eager"]["ops_by_name"] == {"greater": 1, "multiply": 1, "sum": 1}
    text = str(r)
    assert "cannot be compiled" in text


def test_profile_command_line(tmp_path):
    mod = tmp_path / "mymodel.py"
    mod.write_text("import functrans.numpy as fnp, numpy as np\n"
                   "def model(x):\n    return fnp.sum(fnp.sin(x) * x)\n"
                   "model_args = (np.ones(100),)\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "functrans.profile", f"{mod}:model",
                        "--repeats", "2"], env=env, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "profile of model" in r.stdout and "RuntimeWarning" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "functrans.profile", "mymodel:model",
                        "--args", "np.ones(7)", "--repeats", "1", "--backend", "interpret"],
                       env=dict(env, PYTHONPATH=ROOT + os.pathsep + str(tmp_path)),
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "compiled (interpret)" in r.stdout


# --------------------------------------------------------------------------- dumps

def _dumped(tmp_path, fn, *args, backend=None):
    config.update("dump_dir", str(tmp_path))
    ft.jit(fn, backend=backend)(*args)
    config.update("dump_dir", None)
    (sub,) = sorted(os.listdir(tmp_path))
    return sub, sorted(os.listdir(tmp_path / sub))


def test_dump_files_in_pipeline_order(tmp_path):
    sub, files = _dumped(tmp_path, _fusible, np.ones(8), backend="cpu")
    assert sub == "001_jit(_fusible)"
    stems = [re.sub(r"^\d{3}_", "", f) for f in files]
    assert stems == ["reason.txt", "traced.jaxpr", "inline_calls.jaxpr",
                     "fold_constants.jaxpr", "cse.jaxpr", "dce.jaxpr", "drop_barriers.jaxpr",
                     "fusion_plan.txt",
                     "llvm_before_opt.ll", "llvm_after_opt.ll", "cost_analysis.txt",
                     "timings.txt"]
    assert [int(f[:3]) for f in files] == list(range(len(files)))
    d = tmp_path / sub
    traced = (d / files[1]).read_text()
    assert str(parse(traced)).strip() == traced.strip()      # dumps parse back
    assert "kernel over loop shape [8]" in (d / files[7]).read_text()
    assert "define" in (d / files[8]).read_text()
    assert "first call" in (d / files[0]).read_text()


def test_dump_of_a_row_kernel_lists_its_phases(tmp_path):
    def lse(x):
        return fnp.log(fnp.sum(fnp.exp(x - fnp.max(x, axis=1, keepdims=True)), axis=1))

    sub, files = _dumped(tmp_path, lse, np.ones((16, 8)), backend="cpu")
    plan = (tmp_path / sub / next(f for f in files if "fusion_plan" in f)).read_text()
    assert "1 fused kernels" in plan and "row kernel over loop shape [16, 8] (rows [16])" in plan
    phases = re.findall(r"phase (\d) \((inner|row)\):", plan)
    assert phases == [("0", "inner"), ("1", "inner"), ("2", "row")], plan
    assert plan.index("reduce_max") < plan.index("exp") < plan.index("log")


def test_dump_shows_each_pass_and_transform_bodies(tmp_path):
    def f(x):
        y = fnp.sin(x)
        return fnp.sin(x) * y + 0.0 * fnp.cos(x)   # CSE merges the sins, DCE nothing

    sub, files = _dumped(tmp_path, f, np.ones(3), backend="interpret")
    d = tmp_path / sub
    text = {re.sub(r"^\d{3}_", "", n): (d / n).read_text() for n in files}
    assert text["traced.jaxpr"].count("sin") == 2 and text["cse.jaxpr"].count("sin") == 1
    assert "interpreter" in text["backend.txt"]
    # grad of an inner jit compiles transformed bodies: they are dumped too
    config.update("dump_dir", str(tmp_path / "g"))
    ft.grad(ft.jit(lambda x: fnp.sum(fnp.sin(x))))(np.ones(3))
    names = sorted(os.listdir(tmp_path / "g"))
    assert any("jvp" in n for n in names) and any("transpose" in n for n in names), names


# --------------------------------------------------------------------------- compile log

def test_compile_log_gives_the_reason_for_each_miss(caplog):
    config.update("log_compiles", True)

    def f(x, n, scale=1.0):
        return x * n * scale

    jf = ft.jit(f, static_argnums=1)
    calls = [((np.ones(3), 2), {}, "first call"),
             ((np.ones(4), 2), {}, "argument 'x': shape (3,) -> (4,)"),
             ((np.ones(4, np.float32), 2), {}, "argument 'x': dtype float64 -> float32"),
             ((np.ones(4, np.float32), 3), {}, "static argument 'n' (position 1) changed "
                                               "from 2 to 3"),
             ((np.ones(4, np.float32), 3), {"scale": np.float32(2)},
              "the argument structure changed"),
             ((np.ones(4, np.float32), 3), {"scale": 2.0},
              "keyword argument 'scale': dtype float32 -> float64, weak type False -> True"),
             ((np.float32(1), 3), {"scale": 2.0}, "argument 'x': shape (4,) -> ()")]
    for args, kwargs, want in calls:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="functrans"):
            jf(*args, **kwargs)
        msgs = [r.getMessage() for r in caplog.records]
        assert len(msgs) == 1 and want in msgs[0], (want, msgs)
        assert "jit(f)" in msgs[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="functrans"):
        jf(np.ones(3), 2)         # cached: no compile, no log
    assert not caplog.records
    assert jf.cache_info() == {"hits": 1, "misses": 7, "entries": 7}


def test_compile_log_names_pytree_leaves_and_weak_types(caplog):
    config.update("log_compiles", True)
    jf = ft.jit(lambda params, x: params["w"] * x)
    jf({"w": np.ones(2)}, 1.0)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="functrans"):
        jf({"w": np.ones(2)}, np.float64(1.0))
    (msg,) = [r.getMessage() for r in caplog.records]
    assert "argument 'x': weak type True -> False" in msg


def test_compile_log_from_environment():
    code = ("import functrans as ft, numpy as np\n"
            "f = ft.jit(lambda x: x + 1.0)\nf(np.ones(2)); f(np.ones(3)); f(np.ones(3))\n")
    env = dict(os.environ, PYTHONPATH=ROOT, FUNCTRANS_LOG_COMPILES="1")
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stderr
    assert err.count("functrans: compiled") == 2 and "shape (2,) -> (3,)" in err


# --------------------------------------------------------------------------- debug.print

def _printing(x):
    ft.debug.print("x={x} y={}", x * 2.0, x=x)
    return x * 3.0


def test_debug_print_eager_and_jit(capsys):
    _printing(np.float64(1.0))
    assert capsys.readouterr().out == "x=1.0 y=2.0\n"
    jf = ft.jit(_printing)
    print(ft.make_jaxpr(_printing)(1.0).eqns[-2])    # tracing does not print...
    assert "debug_print" in capsys.readouterr().out
    jf(1.0)
    jf(2.0)                                           # ...each call does, cache hits too
    assert capsys.readouterr().out == "x=1.0 y=2.0\nx=2.0 y=4.0\n"


def test_debug_print_survives_dce_and_cse(capsys):
    def f(x):
        ft.debug.print("a {}", x)
        ft.debug.print("a {}", x)                     # same op twice: CSE must keep both
        return x

    ft.jit(f)(1.0)
    assert capsys.readouterr().out == "a 1.0\na 1.0\n"


def test_debug_print_under_vmap_prints_per_lane(capsys):
    ft.vmap(_printing)(np.array([1.0, 2.0]))
    assert capsys.readouterr().out == "x=1.0 y=2.0\nx=2.0 y=4.0\n"
    ft.jit(ft.vmap(_printing))(np.array([1.0, 2.0]))
    assert capsys.readouterr().out == "x=1.0 y=2.0\nx=2.0 y=4.0\n"
    # nested vmap and an unbatched operand
    ft.vmap(ft.vmap(lambda x, y: (ft.debug.print("{} {}", x, y), x)[1], (0, None)),
            (0, None))(np.arange(4.0).reshape(2, 2), 7.0)
    assert capsys.readouterr().out == "0.0 7.0\n1.0 7.0\n2.0 7.0\n3.0 7.0\n"


def test_debug_print_under_grad_prints_primals_once(capsys):
    g = ft.grad(_printing)(1.0)
    assert float(g) == 3.0
    assert capsys.readouterr().out == "x=1.0 y=2.0\n"
    for fn in (ft.jit(ft.grad(_printing)), ft.grad(ft.jit(_printing))):
        assert float(fn(1.0)) == 3.0
        assert capsys.readouterr().out == "x=1.0 y=2.0\n"
    ft.vmap(ft.grad(_printing))(np.array([1.0, 2.0]))
    assert capsys.readouterr().out == "x=1.0 y=2.0\nx=2.0 y=4.0\n"


def test_debug_print_in_a_loop_and_on_the_cpu_backend(capsys):
    def body(c, x):
        ft.debug.print("step {}", x)
        return c + x, c
    ft.jit(lambda xs: lax.scan(body, 0.0, xs))(np.array([1.0, 2.0]))
    assert capsys.readouterr().out == "step 1.0\nstep 2.0\n"
    ft.jit(_printing, backend="cpu")(np.array([1.0, 2.0]))
    assert capsys.readouterr().out == "x=[1. 2.] y=[2. 4.]\n"


def test_debug_print_bad_format():
    with pytest.raises(TypeError, match="format string"):
        ft.debug.print(3.0)


# --------------------------------------------------------------------------- debug_nans

def _nan_maker(x):
    y = fnp.sin(x) * 2.0
    z = fnp.log(y - 5.0)          # NaN: log of a negative number
    return fnp.sum(z * 3.0)


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
def test_debug_nans_names_equation_primitive_and_line(backend):
    x = np.ones(3)
    assert np.isnan(ft.jit(_nan_maker, backend=backend)(x))   # off: a NaN comes back
    config.update("debug_nans", True)
    with pytest.raises(FloatingPointError) as info:
        ft.jit(_nan_maker, backend=backend)(x)
    msg = str(info.value)
    assert "primitive 'log'" in msg and "= log " in msg
    assert f"{__file__}:{_lineno(_nan_maker, 'fnp.log(')}" in msg


def test_debug_nans_recompiles_functions_compiled_before_it_was_on():
    jf = ft.jit(_nan_maker)
    jf(np.ones(2))
    config.update("debug_nans", True)
    with pytest.raises(FloatingPointError, match="'log'"):
        jf(np.ones(2))
    config.update("debug_nans", False)
    assert np.isnan(jf(np.ones(2)))


def test_debug_nans_as_a_context_manager():
    # JAX's debugging guide: with jax.debug_nans(False): ... under the global option
    jf = ft.jit(_nan_maker)
    with ft.debug_nans(True):
        with pytest.raises(FloatingPointError, match="'log'"):
            jf(np.ones(2))
        with ft.debug_nans(False):
            assert np.isnan(jf(np.ones(2)))
        assert config.read("debug_nans") is True
    assert config.read("debug_nans") is False


def test_debug_nans_blames_a_nan_argument():
    config.update("debug_nans", True)
    with pytest.raises(FloatingPointError, match="argument 0 .* already holds a NaN"):
        ft.jit(lambda x: x + 1.0)(np.array([np.nan]))
    assert float(ft.jit(lambda x: x + 1.0)(1.0)) == 2.0       # no NaN: no error


def test_debug_nans_checks_eager_operations():
    # JAX's debug_nans_test: eager 0. / x, log(-1), grad(sqrt)(0) under debug_infs, a NaN
    # in a scan/vmap body raise at the operation, with JAX's "invalid value (nan)" wording
    x = fnp.array(0.0)
    assert np.isnan(0.0 / x) and np.isnan(fnp.log(fnp.array(-1.0)))      # off: silent
    config.update("debug_nans", True)
    for f in (lambda: 0.0 / x, lambda: x / x, lambda: fnp.log(fnp.array(-1.0)),
              lambda: fnp.array([1 + 1j]) * np.nan,
              lambda: ft.vmap(fnp.log)(fnp.array([1.0, -1.0])),
              lambda: ft.grad(lambda t: fnp.sqrt(t) * 0.0)(0.0),
              lambda: ft.lax.scan(lambda c, t: (c + fnp.log(t), c), 0.0,
                                  fnp.array([1.0, -1.0]))[0]):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered"):
            f()
    assert float(fnp.tanh(fnp.array(1.0)) + 1.0) == pytest.approx(1.7615941559557649)
    assert float(fnp.sinc(0.0)) == 1.0                     # JAX's testSinc: no false alarm
    config.update("debug_nans", False)
    config.update("debug_infs", True)
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered"):
        1.0 / x
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\)"):
        ft.grad(fnp.sqrt)(0.0)
    assert np.isnan(0.0 / x)                               # only infinities are checked
    config.update("debug_infs", False)
    assert np.isinf(1.0 / x) and np.isinf(fnp.exp(fnp.array(1e3)))


def test_debug_nans_jit_message_says_which_operation():
    # JAX's testDebugNansZeroDiv / testCallDeoptimized: "invalid value (nan) encountered
    # in div", and in cond for a NaN a branch makes
    f = ft.jit(lambda x: ft.lax.cond(x == 1, lambda _: np.nan, lambda _: 2.0, operand=None))
    assert float(f(2)) == 2.0
    config.update("debug_nans", True)
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in div"):
        ft.jit(lambda a, b: a / b)(fnp.zeros(()), fnp.zeros(()))
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in cond"):
        f(1)


# --------------------------------------------------------------------------- to_dot

def _dot_nodes_and_edges(text):
    nodes = set(re.findall(r"^\s*(\w+) \[label=", text, re.M))
    edges = re.findall(r"^\s*(\w+) -> (\w+)", text, re.M)
    return nodes, edges


def test_to_dot_one_node_per_equation():
    j = ft.make_jaxpr(lambda x, y: fnp.sum(fnp.sin(x) * y + x))(np.ones(3), np.ones(3))
    text = ft.to_dot(j)
    assert text.startswith("digraph jaxpr {") and text.rstrip().endswith("}")
    assert text.count("{") == text.count("}")
    assert text.count("shape=box") == len(j.eqns)
    for e in j.eqns:
        assert f'label="{e.primitive.name}' in text
    nodes, edges = _dot_nodes_and_edges(text)
    assert edges and all(a in nodes and b in nodes for a, b in edges)
    assert text.count("shape=ellipse") == 2


def test_to_dot_draws_sub_jaxprs_as_clusters():
    j = ft.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + fnp.sin(x), c), 0.0, xs))(
        np.ones(3))
    text = ft.to_dot(j)
    assert "subgraph cluster_" in text and 'label="scan.jaxpr"' in text
    inner = len(j.eqns[-1].params["jaxpr"].jaxpr.eqns)
    assert text.count("shape=box") == len(j.eqns) + inner
    nodes, edges = _dot_nodes_and_edges(text)
    assert all(a in nodes and b in nodes for a, b in edges)
    with pytest.raises(TypeError, match="make_jaxpr"):
        ft.to_dot(fnp.sin)


# --------------------------------------------------------------------------- tracebacks

def _bad_shapes(x):
    return fnp.add(x, fnp.ones(4))        # (3,) + (4,): a user error


def _frames(fn, *args, exc=Exception):
    with pytest.raises(exc) as info:
        fn(*args)
    return traceback.extract_tb(info.value.__traceback__), info.value


def test_user_error_in_jit_has_a_traceback_ending_in_user_code():
    frames, e = _frames(ft.jit(_bad_shapes), np.ones(3), exc=ValueError)
    assert frames[-1].filename == __file__ and frames[-1].name == "_bad_shapes"
    assert frames[-1].lineno == _lineno(_bad_shapes, "fnp.add(")
    assert not [f for f in frames if f.filename.startswith(LIB)]
    assert any("FUNCTRANS_TRACEBACK_FILTERING" in n for n in e.__notes__)

    def raises_itself(x):
        raise KeyError("mine")
    frames, _ = _frames(ft.jit(raises_itself), 1.0, exc=KeyError)
    assert frames[-1].name == "raises_itself"
    assert not [f for f in frames if f.filename.startswith(LIB)]
    frames, _ = _frames(ft.make_jaxpr(_bad_shapes), np.ones(3), exc=ValueError)
    assert not [f for f in frames if f.filename.startswith(LIB)]


def test_traceback_filtering_opt_out_keeps_library_frames():
    config.update("traceback_filtering", False)
    frames, e = _frames(ft.jit(_bad_shapes), np.ones(3), exc=ValueError)
    lib = [f for f in frames if f.filename.startswith(LIB)]
    assert len(lib) > 3 and frames[-1].filename.startswith(LIB)
    assert not getattr(e, "__notes__", None)


@pytest.mark.parametrize("transform", ["grad", "vmap", "jacfwd", "jacrev", "hessian"])
def test_traceback_filtering_under_transforms_without_jit(transform):
    import traceback

    def f(x):
        return fnp.sin(x) + undefined_name_for_the_test  # noqa: F821

    arg = fnp.ones(3) if transform == "vmap" else fnp.ones(())
    with pytest.raises(NameError) as e:
        getattr(ft, transform)(f)(arg)
    frames = traceback.extract_tb(e.value.__traceback__)
    assert frames[-1].name == "f"
    assert not any("/functrans/" in fr.filename for fr in frames)


# ------------------------------------------------------------------ the compile path

def test_compile_cache_is_bounded_lru():
    ft.config.update("compile_cache_size", 2)
    try:
        f = ft.jit(lambda x: x + 1.0, backend="interpret")
        for n in range(1, 6):
            f(np.ones(n))
        assert f.cache_info()["entries"] == 2
        assert f(np.ones(5)).tolist() == [2.0] * 5       # the newest entries remain
        assert f.cache_info()["misses"] == 5
    finally:
        ft.config.update("compile_cache_size", 256)


def test_hooks_observe_jit_lower_and_nested_calls():
    from functrans import compiler
    seen = []

    class Record(compiler.CompileHook):
        def start(self, c):
            seen.append(("start", c.name, c.cause is not None))

        def stage(self, c, pass_name, jaxpr):
            seen.append(pass_name)

        def compiled(self, c, exe):
            seen.append("compiled")
            return exe

    hook = compiler.add_hook(Record())
    try:
        f = ft.jit(lambda x: x * 2.0, backend="interpret")
        assert float(f(3.0)) == 6.0
        assert seen == [("start", "jit(<lambda>)", True), "inline_calls", "fold_constants",
                        "cse", "dce", "drop_barriers", "compiled"]
        seen.clear()
        assert float(f.lower(3.0).compile()(4.0)) == 8.0
        assert seen[0] == ("start", "jit(<lambda>)", False) and seen[-1] == "compiled"
        seen.clear()
        assert float(ft.grad(f)(3.0)) == 2.0             # bodies of the nested call
        assert seen and all(s[2] is False for s in seen if isinstance(s, tuple))
    finally:
        compiler.remove_hook(hook)


def test_profile_by_primitive_times_each_equation_of_the_compiled_jaxpr():
    f = lambda x: fnp.sum(fnp.sin(x) * 2.0 + x)   # noqa: E731
    r = ft.profile(f, np.ones(100), repeats=1, backend="interpret", show=False,
                   by_primitive=True)
    rows = {row["primitive"]: row for row in r["by_primitive"]}
    assert sum(row["count"] for row in rows.values()) == r["compiled"]["equations"]
    assert rows["sin"]["bytes_written"] == 800 and rows["reduce_sum"]["bytes_written"] == 8
    assert all(row["seconds"] >= 0 for row in rows.values())
    assert "slowest primitives" in r.table()


def test_native_fast_paths_are_bounded_too():
    pytest.importorskip("llvmlite")
    ft.config.update("compile_cache_size", 2)
    try:
        f = ft.jit(lambda x: x * 2.0, backend="cpu")
        for n in range(1, 6):
            assert f(np.ones(n)).tolist() == [2.0] * n
            assert f(np.ones(n)).tolist() == [2.0] * n
        assert f.cache_info()["entries"] <= 2 and len(f._fast) <= 2
    finally:
        ft.config.update("compile_cache_size", 256)


def test_lower_compile_goes_through_the_hooks():
    # lower().compile() shares jit's compile path, so debug_nans checks it as well
    config.update("debug_nans", True)
    exe = ft.jit(lambda x: fnp.log(x) * 2.0, backend="interpret").lower(1.0).compile()
    assert float(exe(1.0)) == 0.0
    with pytest.raises(FloatingPointError, match="log"):
        exe(-1.0)
