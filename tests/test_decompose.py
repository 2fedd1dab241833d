"""Composite primitives decomposed once for the native backends (``backends.decompose``),
and every primitive of the registry placed on each native backend: lowered, decomposed,
or run on the host, the host-stepped ones listed here by hand (a new primitive must be
placed consciously).

Special values: each decomposition, and each native backend running it, gives numpy's
result bit for bit on ±0, ±inf, nan, subnormals and huge values (the sign of a zero
included). The CUDA check runs on Numba's simulator in a subprocess (the simulator is
chosen when numba is first imported; see tests/test_cuda_backend.py).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import functrans  # noqa: F401  (registers the primitives)
from backends import fusion
from backends import llvm as cpu
from backends.decompose import DECOMPOSITIONS, decompose
from backends.interpret import eval_jaxpr
from backends.llvm import equations as llvm_equations, ops as llvm_ops
from functrans.primitives.elementwise import BINARY
from jaxpr_ir import ClosedJaxpr, Eqn, Jaxpr, ShapedArray, Var, check, primitives

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ------------------------------------------------------------------ the registry walk

# every primitive the CPU backend does not run natively, and why: each runs through
# its numpy impl as a host step (a new segment after it), or never reaches a backend
# (conv_general_dilated is lowered, backends/llvm/conv.py, for float32/float64 with a
# BLAS; integer, complex and mixed-precision convolutions stay its numpy impl)
_INLINED = "call-like: inlined by jit's simplification before a backend sees it"
_MPI = "collective over a mesh axis: its impl calls MPI (one host step per collective)"
LLVM_HOST = {
    "all_gather": _MPI, "axis_index": _MPI, "pmax": _MPI, "pmin": _MPI, "psum": _MPI,
    "checkpoint": _INLINED, "pjit": _INLINED, "custom_jvp_call": _INLINED,
    "custom_vjp_call": _INLINED, "custom_vjp_lin": _INLINED, "custom_self_call": _INLINED,
    "custom_linear_solve": _INLINED, "custom_vmap_call": _INLINED, "linear_call": _INLINED,
    "name": "identity marker for checkpoint policies: dropped by the last compile pass",
    "optimization_barrier": "identity opaque to CSE: dropped by the last compile pass",
    "qr_pivots": "LAPACK ?geqp3 through scipy's wrapper as a host step (only the "
                 "permutation; the QR of the permuted columns is native)",
    "debug_print": "prints from Python: a host callback by nature",
    "check": "checkify's check: discharged by checkify before jit; compiled without it, "
             "refused with JAX's error (a debug_check compiles to nothing)",
    **{n: "calls the user's Python function: a host callback by nature"
       for n in ("pure_callback", "io_callback", "debug_callback")},
    "all_to_all": _MPI, "ppermute": _MPI, "psum_scatter": _MPI,
    "shard_map": "under jit inlined into the program (collectives_native.inline_shard_map) "
                 "when its body allows; else a host step running the body in the mesh context",
    "mpi_allreduce": "native once functrans.primitives.collectives_native registers its "
                     "emitter (a multi-process run); its impl (mpi4py) until then",
    "mpi_collective": "native once functrans.primitives.collectives_native registers its "
                      "emitter (a multi-process run); its impl (mpi4py) until then",
    "mpi_alltoall": "native once functrans.primitives.collectives_native registers its "
                    "emitter (a multi-process run); its impl (mpi4py) until then",
    "mpi_allgather": "native once functrans.primitives.collectives_native registers its "
                     "emitter (a multi-process run); its impl (mpi4py) until then"}
CUDA_HOST = {
    "all_gather", "axis_index", "checkpoint", "cholesky", "complex", "conj",
    "conv_general_dilated", "name", "optimization_barrier",
    "custom_jvp_call", "custom_vjp_call", "custom_vjp_lin", "custom_self_call", "debug_print",
    "pure_callback", "io_callback", "debug_callback", "custom_linear_solve",
    "custom_vmap_call", "det", "imag", "check",
    "pjit", "pmax", "pmin", "psum", "real", "slogdet", "solve", "sort", "triangular_solve",
    "eigh", "svd", "qr", "eig", "pinv", "fft", "lu", "lu_pivots_to_permutation", "sqrtm",
    "schur", "qr_pivots", "linear_call", "top_k",
    "all_to_all", "ppermute", "psum_scatter", "shard_map", "mpi_allreduce", "mpi_collective",
    "mpi_alltoall", "mpi_allgather"}


def _llvm_lowered():
    return (set(llvm_ops.TABLE) | set(llvm_ops.REDUCTIONS) | set(llvm_equations.NATIVE) |
            set(fusion.VIEW_RULES))


def _cuda_lowered():
    from backends.cuda import control, equations, ops     # imports no numba
    return (set(ops.TABLE) | set(ops.REDUCTIONS) | set(equations.LOWER) | set(control.LOWER) |
            set(fusion.VIEW_RULES))


def _library_primitives():
    """The primitives the library itself registers, every module of it imported: read in a
    fresh interpreter, since test modules register primitives of their own when collected."""
    code = ("import importlib, pkgutil, jaxpr_ir, functrans\n"
            "for m in pkgutil.walk_packages(functrans.__path__, 'functrans.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(' '.join(sorted(jaxpr_ir.primitives)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize("backend", ["llvm", "cuda"])
def test_every_primitive_is_lowered_decomposed_or_listed_as_host_stepped(backend):
    if backend == "cuda" and importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed")
    lowered = _llvm_lowered() if backend == "llvm" else _cuda_lowered()
    host = set(LLVM_HOST) if backend == "llvm" else CUDA_HOST
    decomposed = set(DECOMPOSITIONS) - lowered
    library = _library_primitives()
    unplaced = sorted(library - lowered - decomposed - host)
    assert not unplaced, f"{backend}: place these primitives (lower, decompose or list " \
                         f"them as host-stepped here): {unplaced}"
    stale = sorted(host & (lowered | decomposed)) + sorted(host - library)
    assert not stale, f"{backend}: listed as host-stepped but lowered, decomposed or gone: {stale}"


def test_op_tables_hold_no_composite_the_other_backend_decomposes():
    # a backend keeps a leaf row only where it has real code for it (llvm: logistic is
    # a vectorised routine of its own); the rest of each table is leaves
    both = set(DECOMPOSITIONS) & _llvm_lowered()
    assert both == {"logistic"}


# ------------------------------------------------------------------ special values

def _specials(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        fi = np.finfo(dtype)
        vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, fi.smallest_subnormal,
                -fi.smallest_subnormal, fi.tiny, -fi.tiny, fi.max, -fi.max, 1.0, -1.0,
                0.3, -2.5, 1e-30, 80.0, -80.0, 800.0, -800.0]
        with np.errstate(over="ignore"):
            return np.array(vals, dtype)
    info = np.iinfo(dtype)
    vals = [0, 1, 7, info.max, info.max - 1]
    if dtype.kind == "i":
        vals += [-1, -7, info.min, info.min + 1]
    return np.array(vals, dtype)


def _bits(a):
    """The array's bytes, every nan made the same (numpy does not fix nan payloads)."""
    a = np.array(a)
    if a.dtype.kind == "f":
        a[np.isnan(a)] = np.nan
    return a.tobytes()


def _out_dtype(name, dtype):
    return np.dtype(np.bool_) if name == "is_finite" else np.dtype(dtype)


def _arity(name):
    return 2 if name in BINARY else 1


def _operands(name, dtype):
    """The specials, or for a binary op every pair of them (two flat arrays)."""
    x = _specials(dtype)
    if _arity(name) == 1:
        return [x]
    return [a.ravel() for a in np.meshgrid(x, x)]


def _composite(name, dtype, n):
    xs = [Var(ShapedArray((n,), dtype)) for _ in range(_arity(name))]
    y = Var(ShapedArray((n,), _out_dtype(name, dtype)))
    return Jaxpr([], xs, [Eqn(primitives[name], xs, [y], {})], [y])


CASES = [(name, dt) for name in sorted(DECOMPOSITIONS)
         for dt in ("float64", "float32", "int64", "int32", "uint32", "uint64")
         if (name in ("square", "sign") or dt.startswith("float"))]


def _reference(name, dtype, xs):
    with np.errstate(all="ignore"):
        return eval_jaxpr(_composite(name, dtype, xs[0].size), [], xs)[0]


@pytest.mark.parametrize("name,dtype", CASES)
def test_decomposition_equals_the_composite_bit_for_bit(name, dtype):
    xs = _operands(name, dtype)
    jaxpr = _composite(name, dtype, xs[0].size)
    pieces = decompose(jaxpr, {}, {np.dtype(dtype)})
    assert pieces is not jaxpr and name not in [e.primitive.name for e in pieces.eqns]
    check(ClosedJaxpr(pieces, []))
    with np.errstate(all="ignore"):
        got = eval_jaxpr(pieces, [], xs)[0]
    _assert_matches_composite(name, dtype, xs, got, _reference(name, dtype, xs))


def _assert_matches_composite(name, dtype, xs, got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype
    if _arity(name) == 2:
        # numpy's logaddexp calls scalar libm (exp, log1p); the pieces run numpy's
        # vectorised loops, which (by the CPU's SIMD level: AVX2 or AVX-512) may round
        # each of exp and log1p differently by an ulp; special values stay exact
        _assert_close_to_ulps(got, want, 2)
    else:
        assert _bits(got) == _bits(want), (name, dtype, xs, got, want)


def _assert_close_to_ulps(got, want, ulps):
    """nan, ±inf and signed zeros exactly where numpy has them, the rest within ulps."""
    assert got.dtype == want.dtype
    special = ~np.isfinite(want) | (want == 0)
    assert _bits(got[special]) == _bits(want[special]), (got, want)
    np.testing.assert_array_max_ulp(got[~special], want[~special], ulps)


@pytest.mark.parametrize("name,dtype", CASES)
def test_llvm_backend_gives_numpys_special_values(name, dtype):
    xs = _operands(name, dtype)
    got = cpu.compile(ClosedJaxpr(_composite(name, dtype, xs[0].size), []))(*xs)[0]
    want = _reference(name, dtype, xs)
    if name in llvm_ops.TABLE or _arity(name) == 2:
        # a leaf of its own here (a vmath routine), or built of vmath leaves: a few ulp
        _assert_close_to_ulps(got, want, 4)
    else:                           # decomposed: numpy's own arithmetic, bit for bit
        assert got.dtype == want.dtype and _bits(got) == _bits(want), (xs, got, want)


def test_decomposed_pieces_fuse_into_one_kernel():
    x = Var(ShapedArray((64,), "float64"))
    y, z = Var(x.aval), Var(x.aval)
    jaxpr = Jaxpr([], [x], [Eqn(primitives["sign"], [x], [y], {}),
                            Eqn(primitives["rsqrt"], [y], [z], {})], [z])
    exe = cpu.compile(ClosedJaxpr(jaxpr, []))
    assert exe.cost_analysis()["native kernels"] == 1


_CUDA_WORKER = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import functrans
from backends import cuda
from jaxpr_ir import ClosedJaxpr
from tests.test_decompose import CASES, _composite, _operands
out = {}
for name, dtype in CASES:
    xs = _operands(name, dtype)
    got = np.asarray(cuda.compile(ClosedJaxpr(_composite(name, dtype, xs[0].size), []))(*xs)[0])
    out[name + ":" + dtype] = [got.dtype.str, got.tolist()]
json.dump(out, sys.stdout)
"""


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                    reason="numba-cuda is not installed")
def test_cuda_backend_gives_numpys_special_values_on_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    res = subprocess.run([sys.executable, "-c", _CUDA_WORKER, ROOT], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    results = json.loads(res.stdout)
    for name, dtype in CASES:
        xs = _operands(name, dtype)
        want = _reference(name, dtype, xs)
        dstr, values = results[f"{name}:{dtype}"]
        _assert_matches_composite(name, dtype, xs, np.array(values, dtype=np.dtype(dstr)), want)
