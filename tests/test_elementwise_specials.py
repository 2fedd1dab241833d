"""Every float row of the op table (``LINEAR_TABLE``, ``UNARY_TABLE``, ``BINARY_TABLE``
in functrans.primitives.elementwise) swept through special values on every backend,
against the row's numpy function: nan exactly where numpy has nan, infinities and
signed zeros exactly where numpy has them, every other value within the row's ``ulp``.

A new row is swept without any line here. The interpreter and the CPU backend take
every pair of specials (binary rows); the CUDA backend runs on Numba's simulator in one
subprocess (the simulator is chosen when numba is first imported), one vector per row
and dtype, and is marked ``slow``.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import functrans as ft
from functrans.primitives import elementwise as E
from functrans.primitives.elementwise import ARITY, BINARY_TABLE, LINEAR_TABLE, UNARY_TABLE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = {r.name: (r, ARITY[r.name]) for r in LINEAR_TABLE + UNARY_TABLE + BINARY_TABLE
        if "f" in r.kinds}
DTYPES = ("float64", "float32", "float16", "bfloat16")
_NARROW = (np.dtype(np.float16), ft.numpy.bfloat16.dtype)   # computed in float32, rounded


def specials(dtype, short=False) -> np.ndarray:
    """±0, ±inf, nan, ± the smallest subnormal, ± tiny, ± huge, and a few ordinary
    values (``short``: the ones a binary row pairs on the simulator)."""
    fi = np.finfo(dtype)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, fi.smallest_subnormal, -fi.smallest_subnormal,
            fi.tiny, -fi.tiny, fi.max, -fi.max, 1.0, -1.0]
    if not short:
        vals += [0.5, -2.5, 3.0, 1e-30, 88.0, -88.0, 710.0, -710.0]
    with np.errstate(over="ignore"):
        return np.array(vals, dtype)


def operands(name, dtype, short=False) -> list:
    x = specials(dtype, short)
    if ROWS[name][1] == 1:
        return [x]
    return [a.ravel() for a in np.meshgrid(x, x)]


def expected(name, xs):
    """numpy's values; for float16 numpy's float32 values rounded once to float16 (JAX's
    and XLA's CPU rule: each float16 operation computed in float32 and rounded)."""
    row = ROWS[name][0]
    with np.errstate(all="ignore"):
        want = np.asarray(row.numpy(*[x.astype(np.float32) if x.dtype in _NARROW else x
                                      for x in xs]))
        return want.astype(row.out_dtype or xs[0].dtype)


def _ulps(got, want):
    it = {8: np.int64, 4: np.int32, 2: np.int16}[got.dtype.itemsize]

    def key(a):
        i = a.view(it).astype(np.int64)
        return np.where(i < 0, -(i & np.iinfo(it).max), i)
    return np.abs(key(got) - key(want))


def check_specials(name, xs, got, want):
    """nan, ±inf and ±0 exactly where numpy has them; the rest within the row's ulp."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    where = lambda m: [f"{tuple(x[i] for x in xs)}: got {got[i]!r}, numpy {want[i]!r}"
                       for i in np.flatnonzero(m)[:5]]
    if want.dtype.kind != "f" and want.dtype not in _NARROW:
        bad = got != want
        assert not bad.any(), (name, where(bad))
        return
    bad = np.isnan(got) != np.isnan(want)
    assert not bad.any(), (name, "nan positions", where(bad))
    exact = ~np.isnan(want) & (np.isinf(want) | (want == 0))
    bad = exact & ((got != want) | (np.signbit(got) != np.signbit(want)))
    assert not bad.any(), (name, "infinities and signed zeros", where(bad))
    rest = ~np.isnan(want) & ~exact
    # float16: within one ulp of the rounded float32 value (a float32 error can cross a
    # float16 rounding boundary), exact where the row is exact
    ulp = ROWS[name][0].ulp if got.dtype not in _NARROW else min(ROWS[name][0].ulp, 1)
    bad = rest & (_ulps(np.where(rest, got, 0), np.where(rest, want, 0)) > ulp)
    assert not bad.any(), (name, f"beyond {ulp} ulp", where(bad))


@pytest.mark.parametrize("backend", ["interpret", "cpu"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_gives_numpys_special_values(name, dtype, backend):
    xs = operands(name, dtype)
    # the row's own primitive function: lax.round wraps the ``round`` row (numpy's rint)
    # with JAX's default tie rule (halves away from zero)
    got = ft.jit(getattr(E, name), backend=backend)(*xs)
    check_specials(name, xs, got, expected(name, xs))


_CUDA_WORKER = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import functrans as ft
from functrans.primitives import elementwise as E
from tests.test_elementwise_specials import DTYPES, ROWS, operands
out = {}
for name in ROWS:
    for dtype in DTYPES:
        got = np.asarray(ft.jit(getattr(E, name), backend="cuda")(*operands(name, dtype, True)))
        out[name + ":" + dtype] = [got.dtype.name, got.view(f"u{got.dtype.itemsize}").tolist()]
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def cuda_results():
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    res = subprocess.run([sys.executable, "-c", _CUDA_WORKER, ROOT], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ROWS))
def test_row_gives_numpys_special_values_on_the_cuda_simulator(cuda_results, name):
    for dtype in DTYPES:
        xs = operands(name, dtype, short=True)
        dstr, bits = cuda_results[f"{name}:{dtype}"]
        dt = np.dtype(dstr)
        got = np.array(bits, dtype=f"u{dt.itemsize}").view(dt)
        check_specials(name, xs, got, expected(name, xs))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_second_derivative_at_finite_ties(name):
    # the tie x == y used to take the constant 1/2, whose derivative is 0: d/dx of the
    # jvp with tangents (t1, t2) is (t1 - t2) p'(0), p' = 1/4 (ln 2 / 4 for base 2)
    f = getattr(E, name)
    x = np.array([0.3, -1.0])
    t1, t2 = np.array([0.3, -1.0]), np.array([1.0, 0.2])
    scale = 0.25 if name == "logaddexp" else np.log(2) / 4
    jv = lambda a, b: ft.jvp(f, (a, b), (t1, t2))[1]
    got = ft.jvp(jv, (x, x.copy()), (np.ones(2), np.zeros(2)))[1]
    np.testing.assert_allclose(got, (t1 - t2) * scale, rtol=1e-12)
    # the infinite ties keep 1/2 each (a - out is NaN there); a NaN operand stays NaN
    inf = np.array([np.inf, -np.inf, np.nan])
    tan = ft.jvp(f, (inf, np.array([np.inf, -np.inf, 1.0])), (np.ones(3), np.ones(3)))[1]
    np.testing.assert_array_equal(np.asarray(tan)[:2], [1.0, 1.0])
    assert np.isnan(np.asarray(tan)[2])
