"""int16 and uint16 are dtypes of functrans, as in JAX (they were refused): the dtype
and its scalar type, promotion against JAX's table (tests/data/jax_promotion_table.json,
written by tests/data/make_jax_promotion_table.py with JAX 0.10.2 and x64), transforms
and loops carrying them, and what needs a 16-bit integer: random bits and randint as
JAX draws them, truncated_normal and reduce_precision of float16/bfloat16 (bit views).
The per-op rows (wrap-around, division signs, shifts, casts, bitcasts, reductions, sorts,
gathers) are in tests/cases/narrow_ints.py; the JAX bits below were measured with JAX 0.10.2
(jax_enable_x64) and are hard-coded.
"""
from __future__ import annotations

import json
import os

import ml_dtypes
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import jaxpr_ir
from functrans import lax, random

I16, U16 = np.dtype(np.int16), np.dtype(np.uint16)
BF = np.dtype(ml_dtypes.bfloat16)
BACKENDS = ["interpret", "cpu"]
TABLE = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                    "jax_promotion_table.json")))


def _dt(name):
    return BF if name == "bfloat16" else np.dtype(name)


# --------------------------------------------------------------------------- the dtype

@pytest.mark.parametrize("dt", [I16, U16])
def test_the_dtype(dt):
    name = dt.name
    assert getattr(fnp, name) == dt.type and fnp.dtype(getattr(fnp, name)) == dt
    assert getattr(fnp, name)(300).dtype == dt               # a scalar type converts
    with pytest.raises(OverflowError):                       # as numpy's and JAX's
        getattr(fnp, name)(70000)
    info = fnp.iinfo(dt)
    assert (info.bits, info.min, info.max) == (16, np.iinfo(dt).min, np.iinfo(dt).max)
    assert fnp.issubdtype(dt, fnp.integer) and fnp.isdtype(dt, "integral")
    assert fnp.issubdtype(dt, fnp.signedinteger) == (dt == I16)
    x = fnp.arange(5, dtype=name)
    assert x.dtype == dt and repr(x) == f"Array([0, 1, 2, 3, 4], dtype={name})"
    assert fnp.asarray(np.arange(3, dtype=dt)).dtype == dt      # PCM data is kept
    assert fnp.zeros(2, name).dtype == fnp.full((2,), 7, dt).dtype == dt
    short = "i16" if dt == I16 else "u16"
    closed = ft.make_jaxpr(lambda v: v * v + 1)(np.ones(3, dt))
    assert str(closed).count(f"{short}[3]") >= 3
    assert str(jaxpr_ir.parse(str(closed))) == str(closed)


# --------------------------------------------------------------------------- promotion

def _numpy_rule(a, b):
    """functrans promotes as numpy 2 (NEP 50) except bfloat16 (JAX's lattice), README: an
    integer with a float or complex of too few mantissa bits to hold it widens the float
    (int16 + float16: float32; JAX: float16). Those pairs are the only differences."""
    kinds = {np.dtype(d).kind for d in (a, b) if d != "bfloat16"}
    return "bfloat16" not in (a, b) and kinds & {"i", "u"} and kinds & {"f", "c"}


def test_promotion_table_is_jax_s_but_numpy_s_int_float_widening():
    differ = []
    for key, want in TABLE["pairs"].items():
        a, b = key.split(",")
        got = fnp.promote_types(_dt(a), _dt(b))
        if str(got) != want:
            assert _numpy_rule(a, b) and got == np.promote_types(a, b), (key, got, want)
            differ.append(key)
    # the known numpy-vs-JAX pairs (both orders): f16 with >= 16-bit ints, f32 and c64
    # with >= 32-bit ints
    assert len(differ) == 28 and "int16,float16" in differ and "uint16,float16" in differ
    assert not [k for k in differ if "int8" in k or "bool" in k]


@pytest.mark.parametrize("other", ["bool", "int8", "uint8", "int16", "uint16", "int32",
                                   "uint32", "int64", "uint64", "float16", "bfloat16",
                                   "float32", "float64", "complex64"])
@pytest.mark.parametrize("dt", ["int16", "uint16"])
def test_promotion_eager_operator_and_jit_agree(dt, other):
    want = fnp.promote_types(_dt(dt), _dt(other))
    if not _numpy_rule(dt, other):
        assert str(want) == TABLE["pairs"][f"{dt},{other}"]
    a, b = np.ones(3, _dt(dt)), np.ones(3, _dt(other))
    assert fnp.add(a, b).dtype == want and fnp.multiply(b, a).dtype == want
    assert (fnp.asarray(a) + fnp.asarray(b)).dtype == want and fnp.result_type(a, b) == want
    for back in BACKENDS:
        assert ft.jit(lambda u, v: u + v, backend=back)(a, b).dtype == want


def test_python_scalars_are_weak_as_in_jax():
    values = {"bool": True, "int": 2, "float": 2.5, "complex": 1j}
    for key, want in TABLE["weak"].items():
        a, w = key.split(",")
        x = np.ones(2, _dt(a))
        assert str((fnp.asarray(x) + values[w]).dtype) == want, key
        assert str(ft.jit(lambda u: u + values[w])(x).dtype) == want, key


def test_int8_with_uint8_is_int16():
    a, b = np.array([-128, 100], np.int8), np.array([255, 200], np.uint8)
    for f in (fnp.add, ft.jit(lambda u, v: u + v), ft.jit(lambda u, v: u * v)):
        assert f(a, b).dtype == I16
    assert fnp.add(a, b).tolist() == [127, 300]


def _saturated(v, dt):
    info = np.iinfo(dt)
    return 0 if np.isnan(v) else int(np.clip(v, info.min, info.max)) if np.isinf(v) else \
        int(np.clip(np.trunc(v), info.min, info.max))


@pytest.mark.parametrize("pair", [(np.int8, I16), (np.uint8, U16)], ids=["i16", "u16"])
def test_nan_inf_and_out_of_range_casts_follow_the_rule_of_the_8_bit_ints(pair):
    """A float that int16/uint16 cannot hold converts by the rule the other integer
    dtypes follow (saturating as JAX, or numpy's x86 instruction): int8's choice on each
    value decides int16's, eagerly and under jit on each backend."""
    small, dt = pair
    vals = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 70000.5, -70000.5, 40000.0, -1.5])
    for f in (lambda x, d: fnp.asarray(x).astype(d),
              ft.jit(lambda x, d: x.astype(d), static_argnums=1, backend="interpret"),
              ft.jit(lambda x, d: x.astype(d), static_argnums=1, backend="cpu")):
        got8, got16 = f(vals, small).tolist(), f(vals, dt).tolist()
        with np.errstate(all="ignore"):
            raw8, raw16 = vals.astype(small).tolist(), vals.astype(dt).tolist()
        for v, g8, g16, r8, r16 in zip(vals, got8, got16, raw8, raw16):
            s8, s16 = _saturated(v, small), _saturated(v, dt)
            if s8 == r8 or s16 == r16:          # both rules agree here
                assert g16 == s16, (v, g16)
            else:
                assert g8 in (s8, r8), (v, g8)
                assert g16 == (s16 if g8 == s8 else r16), (v, g8, g16)


# --------------------------------------------------------------------------- transforms

@pytest.mark.parametrize("back", BACKENDS)
def test_loops_carry_int16_and_wrap(back):
    def f(x):
        def body(c, v):
            c = c * np.int16(3) + v
            return c, c ^ v
        return lax.scan(body, np.int16(1), x)
    x = np.arange(20, dtype=I16) * 1000
    c, ys = ft.jit(f, backend=back)(x)
    want_c, want = np.int16(1), []
    with np.errstate(all="ignore"):
        for v in x:
            want_c = np.int16(want_c * np.int16(3) + v)
            want.append(want_c ^ v)
    assert c.dtype == I16 and c.item() == want_c and ys.tolist() == np.array(want).tolist()
    n = ft.jit(lambda k: lax.fori_loop(0, 5, lambda i, v: v * np.uint16(300), k),
               backend=back)(np.uint16(7))
    assert n.dtype == U16 and n.item() == (7 * 300 ** 5) % 2 ** 16
    w = ft.jit(lambda k: lax.while_loop(lambda v: v > 0, lambda v: v + np.int16(20000), k),
               backend=back)(np.int16(1))
    assert w.dtype == I16 and w.item() == -25535          # 1 + 20000 + 20000 wraps


def test_vmap_grad_and_cond_with_int16_operands():
    x = np.linspace(0.0, 1.0, 6)
    idx = np.array([[5, 0], [2, 2]], I16)
    g = ft.grad(lambda v, i: fnp.sum(v[i] ** 2))(x, idx)
    want = np.zeros(6)
    np.add.at(want, idx.reshape(-1), 2 * x[idx.reshape(-1)])
    np.testing.assert_allclose(g, want)
    out = ft.vmap(lambda i: fnp.sum(fnp.asarray(x)[i]))(idx)
    np.testing.assert_allclose(out, x[idx].sum(1))
    y = ft.jit(lambda p, a: lax.cond(p, lambda b: b >> 2, lambda b: -b, a))(True, idx)
    assert y.dtype == I16 and y.tolist() == (idx >> 2).tolist()


@pytest.mark.parametrize("dt", [np.dtype(np.int8), np.dtype(np.uint8), I16, U16])
def test_cpu_backend_fuses_narrow_integer_code(dt):
    """int8/uint8/int16/uint16 arithmetic, shifts, comparisons, float conversions and
    reductions are native i8/i16 code on the CPU backend (they were host steps: 1e6 int16
    values of ((x*x + 3) ^ (x >> 2)) // 7 took 10 ms, now 0.07 ms, int32's 0.19; a jitted
    uint8 Game of Life step ran 20 of its 21 steps in numpy, 33x JAX's time)."""
    from backends.llvm import program

    def f(x, y):
        z = ((x * x + dt.type(3)) ^ (x >> dt.type(2))) // y
        return fnp.max(z, axis=1), fnp.where(z > x, z, x % y).astype(np.float32), \
            (y.astype(np.float64) * 2.5).astype(dt)
    x = np.arange(-40, 40).astype(dt).reshape(8, 10)
    y = (np.arange(80) % 7).astype(dt).reshape(8, 10)
    plan = program.plan_jaxpr(ft.make_jaxpr(f)(x, y).jaxpr)
    assert {type(s).__name__ for s in plan.steps} == {"Kernel"}
    for g, w in zip(ft.jit(f, backend="cpu")(x, y), ft.jit(f, backend="interpret")(x, y)):
        assert g.dtype == w.dtype and g.tolist() == w.tolist()

    def life(g):
        n = sum(fnp.roll(fnp.roll(g, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                if (dy, dx) != (0, 0))
        return ((n == 3) | ((g == 1) & (n == 2))).astype(g.dtype)
    board = (np.random.default_rng(0).uniform(size=(24, 24)) < 0.35).astype(dt)
    plan = program.plan_jaxpr(ft.make_jaxpr(life)(board).jaxpr)
    assert not [s for s in plan.steps if type(s).__name__ == "HostStep"]
    want = board
    for _ in range(3):
        n = sum(np.roll(np.roll(want, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                if (dy, dx) != (0, 0))
        want = ((n == 3) | ((want == 1) & (n == 2))).astype(dt)
    got = ft.jit(lambda g: ft.lax.fori_loop(0, 3, lambda i, g: life(g), g))(board)
    assert got.dtype == dt and np.array_equal(np.asarray(got), want)


# --------------------------------------------------------------------------- random

def test_bits_and_randint_are_jax_s():
    want = {("bits", 0): [20391, 13970, 3624, 43061, 15287, 26947, 60029],
            ("bits", 7): [10507, 32256, 10666, 17712, 25478, 39787, 13144],
            ("int16", 0, -1000, 30000): [8789, 25000, 25712, 3373, 16771, 16347, 21832],
            ("uint16", 7, 0, 65536): [36639, 19814, 20860, 16365, 53470, 62310, 16748],
            ("int16", 7, -32768, 32768): [3871, -12954, -11908, -16403, 20702, 29542, -16020],
            ("uint16", 0, 5, 17): [6, 5, 13, 6, 16, 8, 5]}
    for case, bits in want.items():
        k = random.key(case[1])
        if case[0] == "bits":
            fns = [lambda kk: random.bits(kk, (7,), np.uint16)]
        else:
            fns = [lambda kk, c=case: random.randint(kk, (7,), c[2], c[3], c[0])]
        for f in fns + [ft.jit(fns[0])]:
            got = f(k)
            assert got.dtype == (U16 if case[0] == "bits" else np.dtype(case[0]))
            assert got.tolist() == bits, case


def test_truncated_normal_16_bit_floats_are_jax_s():
    """It raised (nextafter of the bounds needs a 16-bit bitcast); now JAX's bits, eager
    and jit. float16 uniform's minval/maxval scaling rounds the product, then the sum, as
    XLA (these draws caught a fused float16 multiply-add: 5 of 16 one ulp off)."""
    want = {
        (np.float16, 0, -1.0, 1.0): [46407, 47131, 47832, 13397, 47002, 45280, 14916, 14413,
                                     47620, 12904, 47380, 14978, 14347, 9595, 14750, 14634],
        (np.float16, 3, -2.0, 0.5): [48421, 47983, 48730, 47652, 11836, 47078, 13921, 47563,
                                     46824, 48334, 48085, 48617, 46285, 47594, 48290, 45975],
        (BF, 3, -2.0, 0.5): [48835, 15797, 16004, 49030, 48496, 48913, 49059, 49032, 15885,
                             48934, 49131, 49035, 48496, 48991, 48805, 15776]}
    for (dt, seed, lo, hi), bits in want.items():
        k = random.key(seed)
        def f(kk, _d=dt, _lo=lo, _hi=hi):
            return random.truncated_normal(kk, _lo, _hi, (16,), _d)
        for g in (f, ft.jit(f)):
            got = np.asarray(g(k))
            assert got.dtype == dt and got.view(np.uint16).tolist() == bits, (dt, seed)


def test_reduce_precision_of_16_bit_floats_is_jax_s():
    x = np.array([1.0, 1.0009765625, 1.00146484375, 65504, 3.1415, -2.7182, 1e-5, 6e-8,
                  np.inf, -np.inf, np.nan, 0.0, -0.0, 1000.5, 0.1], np.float16)
    want = {
        (np.float16, 5, 7): [15360, 15360, 15360, 31744, 16968, 49520, 168, 0, 31744, 64512,
                             32256, 0, 32768, 25552, 11880],
        (np.float16, 4, 3): [15360, 15360, 15360, 31744, 17024, 49536, 0, 0, 31744, 64512,
                             32256, 0, 32768, 31744, 11904],
        (BF, 5, 2): [16256, 16256, 16256, 32640, 16448, 49184, 0, 0, 32640, 65408, 32704, 0,
                     32768, 17536, 15808],
        (BF, 8, 3): [16256, 16256, 16256, 18304, 16464, 49200, 14112, 13184, 32640, 65408,
                     32704, 0, 32768, 17536, 15824]}
    for (dt, e, m), bits in want.items():
        v = x.astype(np.float32).astype(dt)
        for f in (lax.reduce_precision, ft.jit(lax.reduce_precision, static_argnums=(1, 2))):
            got = np.asarray(f(v, e, m))
            assert got.dtype == dt and got.view(np.uint16).tolist() == bits, (dt, e, m)
