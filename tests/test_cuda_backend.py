"""The CUDA backend without a GPU: every jit-able case of the shared table on Numba's
CUDA simulator against the interpreter, PTX for sm_90 covering every kernel template
those runs generated (a representative subset of the kernels, see ``select_for_ptx``),
host-driven control flow, device arrays, introspection and error messages.

Isolation: the simulator is chosen by ``NUMBA_ENABLE_CUDASIM=1`` when numba is first
imported, for the whole process, and PTX can only be built with the simulator off. So
this module never sets the variable in the pytest process: it runs this same file as a
worker script in subprocesses (``python tests/test_cuda_backend.py sim ...`` with the
variable set, then ``... ptx ...`` with it removed), two at a time for CI's two cores,
and each test reads the workers' JSON report. Nothing leaks into other test modules.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

HAVE_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is not None
pytestmark = pytest.mark.skipif(not HAVE_NUMBA_CUDA, reason="numba-cuda is not installed "
                                "(pip install -e '.[cuda]')")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NPARTS = 2


# =========================================================================== worker side

def _close(got, want, what):
    from functrans.tree_util import tree_flatten
    g = [np.asarray(v) for v in tree_flatten(got)[0]]
    w = [np.asarray(v) for v in tree_flatten(want)[0]]
    assert len(g) == len(w), f"{what}: {len(g)} outputs vs {len(w)}"
    for a, b in zip(g, w):
        assert a.shape == b.shape and a.dtype == b.dtype, \
            f"{what}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype.kind in "fc":
            # tree reductions and libdevice round differently from numpy's pairwise sums
            tol = 2e-5 if a.dtype in (np.float32, np.complex64) else 1e-10
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(a, b, err_msg=what)


def _run_table(part, nparts, names=None):
    """Run this part's share of the jit cases (of ``names`` only, when given)."""
    import functrans as ft
    from tests.cases import all_cases
    out = {}
    cases = [c for c in all_cases() if c.jit and (names is None or c.name in names)]
    for c in cases[part::nparts]:
        try:
            args = c.make_args()
            want = ft.jit(c.fun, backend="interpret")(*args)
            got = ft.jit(c.fun, backend="cuda")(*args)
            _close(got, want, c.name)
            out[c.name] = "ok"
        except Exception as e:  # reported per case by the pytest side
            out[c.name] = f"{type(e).__name__}: {e}"[:2000]
    return out


def _check_device_put_round_trip():
    import functrans as ft
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = ft.device_put(x, "cuda")
    assert type(d).__name__ == "DeviceArray" and d.shape == (2, 3) and d.dtype == np.float32
    back = np.asarray(d)
    assert back.dtype == np.float32 and np.array_equal(back, x)
    assert ft.device_put(d, "cuda") is d
    assert np.array_equal(np.asarray(ft.device_put(3.5, "cuda")), np.float64(3.5))


def _check_results_stay_on_device():
    import functrans as ft
    import functrans.numpy as fnp
    from backends.cuda import runtime
    f = ft.jit(lambda x: fnp.sin(x) * 2.0 + x, backend="cuda")
    x = np.linspace(0, 1, 10)
    y = f(ft.device_put(x, "cuda"))
    assert getattr(y, "__device_array__", False), f"jit returned {type(y).__name__}"
    calls = []
    orig = runtime.to_device
    runtime.to_device = lambda *a, **k: calls.append(1) or orig(*a, **k)
    try:
        from backends.cuda import program
        program.to_device = runtime.to_device
        z = f(y)                      # a device input: no host-to-device copy at all
    finally:
        runtime.to_device = program.to_device = orig
    assert not calls, f"{len(calls)} host-to-device copies for a device argument"
    ref = np.sin(np.sin(x) * 2 + x) * 2 + (np.sin(x) * 2 + x)
    np.testing.assert_allclose(np.asarray(z), ref, rtol=1e-12)
    assert f.cache_info()["misses"] == 1, f.cache_info()


def _check_as_text_and_cost_analysis():
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax

    def g(a, b):
        return fnp.sum(fnp.exp(a) * b, axis=1), lax.sort(a[0])
    a, b = np.ones((3, 4)), np.ones((3, 4))
    comp = ft.jit(g, backend="cuda").lower(a, b).compile()
    text = comp.as_text()
    assert "def red_" in text and "cuda.shared.array" in text and "lm.exp(" in text, text
    assert "host step: sort" in text, text
    ca = comp.cost_analysis()
    assert ca["kernels"] >= 1 and ca["bytes accessed"] > 0 and ca["host primitives"] == ["sort"]
    _close(comp(a, b), g(a, b), "as_text")


def _check_gemm_tiles_and_batches():
    import functrans as ft
    import functrans.numpy as fnp
    rng = np.random.default_rng(0)
    for shape_a, shape_b, dt in [((9, 7), (7, 10), np.float32), ((2, 5, 3), (2, 3, 6), np.float64),
                                 ((5, 0), (0, 3), np.float64), ((3, 6), (6, 2), np.int32)]:
        a = (rng.standard_normal(shape_a) * 3).astype(dt)
        b = (rng.standard_normal(shape_b) * 3).astype(dt)
        got = ft.jit(fnp.matmul, backend="cuda")(a, b)
        _close(got, np.matmul(a, b), f"matmul {shape_a} {shape_b} {dt}")
    a = rng.standard_normal((4, 3, 5))          # contraction over non-trailing dims
    _close(ft.jit(lambda a: fnp.einsum("ijk,ilk->jl", a, a), backend="cuda")(a),
           np.einsum("ijk,ilk->jl", a, a), "einsum")


def _check_two_pass_reduction():
    import functrans as ft
    import functrans.numpy as fnp
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    comp = ft.jit(lambda x: (fnp.sum(x), fnp.max(x)), backend="cuda").lower(x).compile()
    assert any(k.name.startswith("red2_") for k in comp.exe.kernels), "no second pass"
    s, m = comp(x)
    np.testing.assert_allclose(np.asarray(s), x.sum(dtype=np.float64), rtol=1e-5)
    assert np.asarray(m) == x.max()


def _check_gather_scatter():
    import functrans as ft
    from functrans.primitives import gather_scatter as gs
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([[5], [-2], [1]])
    comp = ft.jit(lambda x, i: gs.gather(x, i, 1), backend="cuda").lower(x, idx).compile()
    assert any(k.name.startswith("gather_") for k in comp.exe.kernels)
    _close(comp(x, idx), x[[3, 0, 1]], "gather clamps")
    u = np.ones((3, 3))
    for imode, rows in (("drop", [1]), ("clip", [3, 0, 1])):
        f = ft.jit(lambda x, i, u: gs.scatter(x, i, u, 1, "add", index_mode=imode),
                   backend="cuda")
        want = x.copy()
        np.add.at(want, rows, 1.0)
        _close(f(x, idx, u), want, f"scatter add {imode}")


def _check_scatter_into_a_constant_on_every_call():
    # the atomics used to add into the program's cached constant buffer itself, so
    # each call started from the previous call's result ([0, 1, 0, 2, 0], then
    # [0, 2, 0, 4, 0], ...)
    import functrans as ft
    import functrans.numpy as fnp
    f = ft.jit(lambda i, u: (fnp.zeros(5).at[i].add(u),
                             fnp.full((2, 3), 1.5, np.float32).at[i[:2] % 2].add(u[:2, None])),
               backend="cuda")
    i, u = np.array([1, 3, 1]), np.array([1.0, 2.0, 4.0])
    want0 = np.zeros(5)
    np.add.at(want0, i, u)
    want1 = np.full((2, 3), 1.5, np.float32)
    np.add.at(want1, i[:2] % 2, u[:2, None].astype(np.float32))
    for call in range(3):
        _close(f(i, u), (want0, want1), f"call {call}")


def _check_host_step_without_impl_names_primitive():
    from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, ShapedArray, Var
    import backends.cuda as bc
    import jaxpr_ir
    from backends import fusion
    prim = jaxpr_ir.primitives["sort"]
    a = Var(ShapedArray((3,), "float64"))
    o = Var(ShapedArray((3,), "float64"))
    saved = prim.impl
    prim.impl = None
    try:
        eqn = Eqn(prim, [a], [o], {"dimension": 0, "is_stable": True, "num_keys": 1})
        try:
            bc.Program(ClosedJaxpr(Jaxpr([], [a], [eqn], [o])),
                       fusion.plan(Jaxpr([], [a], [eqn], [o]), bc.ops.classify))
        except NotImplementedError as e:
            assert "'sort'" in str(e), e
        else:
            raise AssertionError("no error for a primitive without kernel or impl")
    finally:
        prim.impl = saved


def _check_backend_env_var():
    import functrans as ft
    os.environ["FUNCTRANS_BACKEND"] = "cuda"
    try:
        y = ft.jit(lambda x: x + 1.0)(np.zeros(3))
    finally:
        del os.environ["FUNCTRANS_BACKEND"]
    assert getattr(y, "__device_array__", False), type(y)


def _count_device_to_host(fn):
    """(result of fn(), sizes of the device-to-host copies it made)."""
    from numba import cuda
    cls = type(cuda.to_device(np.zeros(1)))
    sizes, orig = [], cls.copy_to_host

    def counting(self, *a, **k):
        sizes.append(self.size)
        return orig(self, *a, **k)
    cls.copy_to_host = counting
    try:
        return fn(), sizes
    finally:
        cls.copy_to_host = orig


def _check_control_flow_runs_on_device():
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)

    def loops(n, x):
        c = lax.cond(n > 2, lambda x: fnp.sin(x) * 2.0, lambda x: x - 1.0, x)
        s = lax.switch(n, [lambda x: x + 1.0, lambda x: x * 3.0, lambda x: -x], x)
        w = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, fnp.cos(c[1]) + c[1]),
                           (0, x))[1]
        carry, ys = lax.scan(lambda c, r: (c * 0.5 + r, fnp.sum(c * r)), x[0], x)
        carry2, ys2 = lax.scan(lambda c, r: (c + r, c), x[1], x, reverse=True)
        return c, s, w, carry, ys, carry2, ys2
    f = ft.jit(loops, backend="cuda")
    dx = ft.device_put(x, "cuda")
    for n in (1, 3, 7):
        comp = f.lower(n, x).compile()
        host = comp.cost_analysis()["host primitives"]
        assert not set(host) & {"cond", "while", "scan"}, host
        assert comp.cost_analysis()["control flow"] == ["cond", "scan", "while"]
        assert "# ---- control flow: while" in comp.as_text()
        got, copies = _count_device_to_host(lambda: f(n, dx))
        # one index per cond/switch, one predicate per while test (n + 1 of them)
        assert copies == [1] * (2 + n + 1), copies
        _close(got, ft.jit(loops, backend="interpret")(n, x), f"control flow n={n}")


def _check_kernels_replace_host_steps():
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax
    u = np.array([1, 2**31 + 5, 2**32 - 1, 7], np.uint32)
    v = np.array([3, 4, 40, 0], np.uint32)
    i = np.array([-5, 7, -2**31, 2**31 - 1], np.int32)
    sh = np.array([1, 31, 40, -1], np.int32)
    x = np.arange(12.0).reshape(3, 4) - 5.0
    cases = {
        "uint32": (lambda a, b: (a + b, a - b, a * b, -a, ~a, a // b, a % b, a >> b, a << b,
                                 lax.shift_right_arithmetic(a, b), a.astype(np.float32),
                                 a > b, lax.reduce_sum(a, (0,)), lax.iota(np.uint32, 4) ^ a), (u, v)),
        "int32 shifts": (lambda a, b: (a >> b, a << b, lax.shift_right_logical(a, b)), (i, sh)),
        "cumulative": (lambda a: (fnp.cumsum(a, axis=1), fnp.cumprod(a, 0),
                                  lax.cummax(a, 1, reverse=True), lax.cummin(a, 0)), (x,)),
        "argmax": (lambda a: (fnp.argmax(a, axis=1), fnp.argmin(a, axis=0)),
                   (np.array([[1, np.nan, 3.0], [2, 5, 5]]),)),
        "structural": (lambda a, k: (lax.pad(a, 0.5, ((1, -1, 1), (0, 2, 0))),
                                     fnp.concatenate([a, a * 2, a[:, :0]], axis=1),
                                     lax.dynamic_slice(a, (k, 1), (2, 2)),
                                     lax.dynamic_update_slice(a, -fnp.ones((2, 3)), (k, 2)),
                                     a.T.reshape(12), lax.rev(a, (0,))[1:, ::2]), (x, 5)),
        "random": (lambda k: (ft.random.uniform(k, (5,)), ft.random.bits(k, (2, 3))),
                   (ft.random.PRNGKey(3),)),
        "bitcast": (lambda a: lax.bitcast_convert_type(a, np.uint32) >> np.uint32(3),
                    (x.astype(np.float32),)),
    }
    for name, (f, args) in cases.items():
        comp = ft.jit(f, backend="cuda").lower(*args).compile()
        assert comp.cost_analysis()["host primitives"] == [], (name, comp.cost_analysis())
        _close(comp(*args), ft.jit(f, backend="interpret")(*args), name)


def _check_uint64_is_a_host_step_with_numpy_values():
    import functrans as ft
    import functrans.numpy as fnp
    u = np.array([1, 2**63 + 5, 2**64 - 1, 7], np.uint64)
    v = np.array([3, 4, 2**63, 0], np.uint64)
    b = np.array([200, 255, 1, 9], np.uint8)

    def f(a, c, s):
        return (a + c, a * c, a - c, a // c, a % c, a > c, fnp.maximum(a, c), a >> (c % 70),
                fnp.sum(a), fnp.cumsum(s), a.astype(np.float64), (a // c).astype(np.int64) + 1)
    comp = ft.jit(f, backend="cuda").lower(u, v, b).compile()
    assert comp.cost_analysis()["host primitives"], comp.cost_analysis()
    got = comp(u, v, b)
    with np.errstate(all="ignore"):
        want = f(fnp.asarray(u), fnp.asarray(v), fnp.asarray(b))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w)


def _check_signed_zeros_order_as_jax():
    # -0.0 is below +0.0 in max/min (elementwise, reductions, scans), as JAX's
    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax
    x = np.array([0.0, -0.0, 0.0, -0.0], np.float32)
    y = np.array([-0.0, 0.0, 0.0, -0.0], np.float32)
    got = ft.jit(lambda a, b: (fnp.maximum(a, b), fnp.minimum(a, b), fnp.max(a),
                               fnp.min(b[1:]), lax.cummax(b, 0), lax.cummin(a, 0)),
                 backend="cuda")(x, y)
    want = [[0, 0, 0, 1], [1, 1, 0, 1], [0], [1], [1, 0, 0, 0], [0, 1, 1, 1]]
    assert [np.signbit(g).astype(int).ravel().tolist() for g in got] == want


def _check_shared_arrays_survive_thread_switches():
    # Numba's simulator made each block's shared array on first use without a lock: a
    # thread switch between its look-up and its store gave threads of one block their
    # own arrays, and reductions and GEMM tiles folded uninitialised memory (a wrong
    # number once or twice a table run at a 0.1 ms switch interval; see sim_shared).
    # Here numpy.empty sleeps in simulated threads, so every allocation is interrupted.
    import threading
    import time
    import functrans as ft
    import functrans.numpy as fnp
    real_empty = np.empty

    def interrupted_empty(*a, **k):
        if hasattr(threading.current_thread(), "threadIdx"):    # a simulated GPU thread
            time.sleep(2e-4)
        return real_empty(*a, **k)
    f = ft.jit(lambda x, a, b: (fnp.sum(x, axis=1), fnp.max(x), fnp.sum(x), a @ b),
               backend="cuda")
    rng = np.random.default_rng(7)
    saved = sys.getswitchinterval()
    np.empty = interrupted_empty
    sys.setswitchinterval(1e-5)
    try:
        for rep in range(3):
            x = rng.standard_normal((3, 37))
            a, b = rng.standard_normal((5, 6)), rng.standard_normal((6, 7))
            _close(f(x, a, b), (x.sum(1), x.max(), x.sum(), a @ b), f"repeat {rep}")
    finally:
        np.empty = real_empty
        sys.setswitchinterval(saved)


SIM_CHECKS = {n[len("_check_"):]: f for n, f in list(globals().items())
              if n.startswith("_check_")}


def _worker(mode, out_path, part, nparts, path=None):
    """``sim``: run the table cases and checks (those listed in the JSON file ``path``,
    when given); ``ptx``: compile this part's share of the kernels listed in ``path``."""
    import warnings
    warnings.simplefilter("ignore")       # numpy scalar overflow/nan warnings on the simulator
    np.seterr(all="ignore")
    sys.path.insert(0, ROOT)
    report = {}
    if mode == "sim":
        # The simulator runs each block's threads as Python threads while the launching
        # thread polls them in a loop; at Python's default 5 ms GIL switch interval that
        # loop held the GIL most of the time. Switching every 0.1 ms is faster and mixes
        # the simulated threads far more (which found the simulator's shared-array race,
        # see backends/cuda/sim_shared.py)
        sys.setswitchinterval(1e-4)
        from backends.cuda import runtime
        selected = {"cases": None, "checks": None}
        if path is not None:
            with open(path) as f:
                selected = json.load(f)
        report["cases"] = _run_table(part, nparts, selected["cases"])
        checks = {}
        chosen_checks = [(n, fn) for n, fn in sorted(SIM_CHECKS.items())
                         if selected["checks"] is None or n in selected["checks"]]
        for name, fn in chosen_checks[part::nparts]:
            try:
                fn()
                checks[name] = "ok"
            except Exception as e:
                import traceback
                checks[name] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"[-3000:]
        report["checks"] = checks
        report["kernels"] = [[k.name, k.source, list(k.argtypes)] for k in runtime.GENERATED]
    else:
        from backends.cuda import runtime
        from backends.cuda.source import KernelSource
        with open(path) as f:
            kernels = json.load(f)[part::nparts]
        bad = {}
        for name, source, argtypes in kernels:
            try:
                text = runtime.ptx(KernelSource(name, source, tuple(argtypes)))
                assert ".target sm_90" in text and ".entry" in text
            except Exception as e:
                bad[name] = f"{type(e).__name__}: {e}"[:2000] + "\n" + source
        report = {"compiled": len(kernels), "failed": bad}
    with open(out_path, "w") as f:
        json.dump(report, f)


# =========================================================================== PTX selection
# Compiling a kernel to PTX costs ~0.1 s of Numba's Python pipeline, and most kernels the
# table generates differ only in shapes or in which ops a fused chain strings together.
# So the PTX test compiles a representative subset that still covers every *template*:
# every kernel skeleton (its statements with numbers, indices and value names
# abstracted, plus its argument types) and every statement of a fused chain typed by
# its operands (``f32(lm.expf(<f32>))``). Numba types and lowers statement by statement
# from the operand types, so a template that compiles in one kernel compiles in all.
# FUNCTRANS_CUDA_PTX_ALL=1 compiles every kernel instead.

_NUM = re.compile(r"(?<![\w.])\d+(?:\.\d*)?(?:e[-+]?\d+)?(?![\w.])")
_CHAIN = re.compile(r"^\s*([xv]\d+) = (.*)$")
_TYPED_CONST = re.compile(r"\b(f64|f32|i64|i32|u32|u64|b1)\((-?(?:\d[\w.+-]*|NAN|INF))\)")
_SHORT = {"float64": "f64", "float32": "f32", "int64": "i64", "int32": "i32",
          "uint32": "u32", "bool": "b1"}


def kernel_templates(source, argtypes):
    """The set of templates (see above) one kernel's source instantiates."""
    lines = source.splitlines()
    params = re.match(r"def \w+\((.*)\):", lines[0]).group(1).split(", ")
    types = dict(zip(params, argtypes))

    def typed(expr):
        expr = _TYPED_CONST.sub(lambda m: f"<{m.group(1)}>", expr)
        expr = re.sub(r"\b[A-Za-z_]\w*\b",
                      lambda m: f"<{types[m.group(0)]}>" if m.group(0) in types else m.group(0),
                      expr)
        return _NUM.sub("N", expr)
    out, skeleton = set(), []
    for ln in lines[1:]:
        m = _CHAIN.match(ln)
        if m:
            var, expr = m.groups()
            if re.match(r"g\d+\[", expr):        # a read of an input buffer
                types[var] = _SHORT[types[expr.split("[")[0]][:-5]]
                out.add(f"read <{types[var]}>")
            else:
                head = re.match(r"(\w+)\(", expr)
                out.add(typed(expr))
                types[var] = head.group(1) if head else "?"
            continue
        if re.match(r"\s*(d\d+|q_) = ", ln):      # index decomposition
            out.add(_NUM.sub("N", re.sub(r"\bd\d+", "d", ln.strip())))
            continue
        ln = re.sub(r"\[[^\[\]]*\]", "[_]", ln)
        skeleton.append(typed(re.sub(r"\b[xv]\d+\b", "V", ln)))
    out.add(("skeleton", "\n".join(skeleton), tuple(argtypes)))
    return out


def select_for_ptx(kernels):
    """A subset of ``[name, source, argtypes]`` covering every template (greedy cover)."""
    if os.environ.get("FUNCTRANS_CUDA_PTX_ALL") == "1":
        return list(kernels)
    feats = {k[0]: kernel_templates(k[1], k[2]) for k in kernels}
    left = set().union(*feats.values()) if feats else set()
    by_name = {k[0]: k for k in kernels}
    chosen = []
    while left:
        best = max(sorted(feats), key=lambda n: (len(feats[n] & left), -len(by_name[n][1])))
        chosen.append(by_name[best])
        left -= feats[best]
    return sorted(chosen)


# =========================================================================== pytest side

def _spawn(args, sim, tmp):
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if sim:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _gather(procs, outs, what):
    reports = []
    for p, out in zip(procs, outs):
        log, _ = p.communicate(timeout=600)
        if p.returncode != 0 or not os.path.exists(out):
            pytest.fail(f"{what} worker failed (exit {p.returncode}):\n{log[-4000:]}")
        with open(out) as f:
            reports.append(json.load(f))
    return reports


def _selected(session):
    """What this session's selected tests need from the workers: ``None`` when the PTX
    test is selected (it needs every kernel the whole table generates), else the case
    and check names of the selected simulator tests."""
    cases, checks = [], []
    for item in session.items:
        if os.path.abspath(str(item.path)) != os.path.abspath(__file__):
            continue
        test = getattr(item, "originalname", item.name)
        if test == "test_ptx_sm90_for_every_generated_kernel_template":
            return None
        if test == "test_table_case_on_simulator_matches_interpreter":
            cases.append(item.callspec.params["name"])
        elif test == "test_behaviour_on_simulator":
            checks.append(item.callspec.params["name"])
    return {"cases": cases, "checks": checks}


@pytest.fixture(scope="module")
def reports(request):
    """Run the simulator workers on what the selected tests read (``pytest -k sin`` runs
    only the sin cases), then, when the PTX test is selected, the PTX workers on every
    kernel the whole table generated."""
    selected = _selected(request.session)
    with tempfile.TemporaryDirectory() as tmp:
        extra, nparts = [], NPARTS
        if selected is not None:
            extra = [os.path.join(tmp, "selected.json")]
            with open(extra[0], "w") as f:
                json.dump(selected, f)
            # one worker is enough for a few cases (each worker pays numba's import)
            nparts = NPARTS if len(selected["cases"]) + len(selected["checks"]) > 20 else 1
        outs = [os.path.join(tmp, f"sim{i}.json") for i in range(nparts)]
        procs = [_spawn(["sim", outs[i], str(i), str(nparts), *extra], True, tmp)
                 for i in range(nparts)]
        sims = _gather(procs, outs, "simulator")
        kernels = {k[0]: k for r in sims for k in r["kernels"]}
        cases = {k: v for r in sims for k, v in r["cases"].items()}
        checks = {k: v for r in sims for k, v in r["checks"].items()}
        if selected is not None:
            return {"cases": cases, "checks": checks, "kernels": kernels}
        chosen = select_for_ptx(sorted(kernels.values()))
        kpath = os.path.join(tmp, "kernels.json")
        with open(kpath, "w") as f:
            json.dump(chosen, f)
        pouts = [os.path.join(tmp, f"ptx{i}.json") for i in range(NPARTS)]
        procs = [_spawn(["ptx", pouts[i], str(i), str(NPARTS), kpath], False, tmp)
                 for i in range(NPARTS)]
        ptx = _gather(procs, pouts, "PTX")
    return {"cases": cases, "checks": checks, "kernels": kernels, "ptx": ptx,
            "chosen": chosen}


def _jit_case_names():
    from tests.cases import all_cases
    return [c.name for c in all_cases() if c.jit]


@pytest.mark.parametrize("name", _jit_case_names())
def test_table_case_on_simulator_matches_interpreter(reports, name):
    result = reports["cases"].get(name, "not run")
    assert result == "ok", result


@pytest.mark.parametrize("name", sorted(SIM_CHECKS))
def test_behaviour_on_simulator(reports, name):
    result = reports["checks"].get(name, "not run")
    assert result == "ok", result


def test_ptx_sm90_for_every_generated_kernel_template(reports):
    kernels, chosen = reports["kernels"], reports["chosen"]
    assert len(kernels) > 100, f"only {len(kernels)} kernels generated"
    compiled = sum(r["compiled"] for r in reports["ptx"])
    failed = {k: v for r in reports["ptx"] for k, v in r["failed"].items()}
    assert compiled == len(chosen)
    assert not failed, f"{len(failed)} kernels rejected:\n" + "\n\n".join(
        f"{k}: {v}" for k, v in list(failed.items())[:3])
    every = set().union(*(kernel_templates(k[1], k[2]) for k in kernels.values()))
    covered = set().union(*(kernel_templates(k[1], k[2]) for k in chosen))
    assert covered == every, f"{len(every - covered)} templates not compiled"
    kinds = {k.split("_")[0] for k in kernels}
    assert {"ew", "red", "red2", "copy", "gemm", "gather", "scatter", "pad", "concat",
            "dslice", "dus", "cum", "arg", "threefry"} <= kinds, kinds


def test_template_cover_keeps_distinct_chains_and_skeletons():
    src = "def K(n, o0, g0):\n    x0 = g0[i]\n    v1 = f32(lm.expf(x0))\n    o0[i] = v1\n"
    a = kernel_templates(src.replace("K", "a"), ["i64", "float32[::1]", "float32[::1]"])
    b = kernel_templates(src.replace("K", "b").replace("expf", "logf"),
                         ["i64", "float32[::1]", "float32[::1]"])
    c = kernel_templates(src.replace("K", "c").replace("[i]", "[i + 3]"),
                         ["i64", "float32[::1]", "float32[::1]"])
    assert "f32(lm.expf(<f32>))" in a and a != b and a == c
    ks = [["a", src, ["i64", "float32[::1]", "float32[::1]"]],
          ["b", src.replace("expf", "logf"), ["i64", "float32[::1]", "float32[::1]"]],
          ["c", src.replace("[i]", "[i + 3]"), ["i64", "float32[::1]", "float32[::1]"]]]
    assert [k[0] for k in select_for_ptx(ks)] == ["a", "b"]


# ---------------------------------------------------------------- in-process (no simulator)

def test_no_gpu_and_no_simulator_says_how_to_enable_it(monkeypatch):
    import numba
    from numba import cuda
    import functrans as ft
    monkeypatch.setattr(numba.config, "ENABLE_CUDASIM", 0)
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="NUMBA_ENABLE_CUDASIM=1"):
        ft.jit(lambda x: x + 1.0, backend="cuda")(np.zeros(2))
    with pytest.raises(RuntimeError, match="NUMBA_ENABLE_CUDASIM=1"):
        ft.device_put(np.zeros(2), "cuda")


def test_out_of_memory_is_reported_with_sizes(monkeypatch):
    from numba import cuda
    from backends.cuda import runtime

    class FakeDriverError(Exception):
        pass

    def fail(*a, **k):
        raise FakeDriverError("[2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY")
    monkeypatch.setattr(cuda, "device_array", fail)
    with pytest.raises(MemoryError, match=r"out of memory allocating 4000000000 bytes "
                                          r"\(1000000000 x float32\)"):
        runtime.alloc(10**9, np.float32, "test")


def test_device_put_rejects_unknown_device_and_non_arrays():
    import functrans as ft
    with pytest.raises(ValueError, match="'tpu'"):
        ft.device_put(np.zeros(2), "tpu")
    with pytest.raises(TypeError, match="device_put"):
        ft.device_put(object(), "cpu")


if __name__ == "__main__":
    _mode, _out, _part, _n, *_rest = sys.argv[1:]
    _worker(_mode, _out, int(_part), int(_n), *_rest)
