"""Table rows for int8, uint8, int16 and uint16 (JAX's narrow integers; images, audio PCM
and quantised weights hold them): wrap-around arithmetic, floor division and remainder
signs (INT_MIN // -1 wraps to INT_MIN, x // 0 is 0 as the other integers), shifts by the
bit width or more (and by negative amounts through lax), bit counts, bitcasts (16 bits)
to and from float16 and bfloat16, conversions (floats in range truncate; NaN, inf and out-of-range floats follow
the rule of every integer dtype, tests/test_int16.py),
reductions (sums accumulate in int64/uint64, as numpy's and JAX's with x64), sorts,
gathers and scatters. Each row also runs under jit on every backend, vmap and the IR
round trip (tests/test_op_table.py, test_llvm_backend.py, test_cuda_backend.py)."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen

BF16 = fnp.bfloat16.dtype
I8, U8 = np.dtype(np.int8), np.dtype(np.uint8)
I16, U16 = np.dtype(np.int16), np.dtype(np.uint16)
_EDGES = {I16: [-32768, -32767, -1, 0, 1, 32767], U16: [0, 1, 32767, 32768, 65534, 65535],
          I8: [-128, -127, -1, 0, 1, 127], U8: [0, 1, 127, 128, 254, 255]}
# divisors: 0 (x // 0 is 0), -1 (INT_MIN // -1 wraps), signs mixed
_DIVISORS = {I16: [-1, 0, 3, -7, 32767, -32768], U16: [0, 3, 32768, 7, 65535, 2],
             I8: [-1, 0, 3, -7, 127, -128], U8: [0, 3, 128, 7, 255, 2]}
_SUFFIX = {I8: "i8", U8: "u8", I16: "i16", U16: "u16"}

CASES = []


def row(name, fun, args, ref, **kw):
    CASES.append(OpCase(name, fun, args, ref, diff=False, **kw))


def _draw(dt, *shape):
    """Full-range values with the edges first (so sums and products wrap)."""
    def draw(rng):
        info = np.iinfo(dt)
        x = rng.integers(int(info.min), int(info.max) + 1, shape).astype(dt)
        n = min(x.size, len(_EDGES[dt]))
        x.reshape(-1)[:n] = _EDGES[dt][:n]
        return x
    return draw


def _quiet(f):
    def ref(*xs):
        with np.errstate(all="ignore"):     # wrap-around; x // 0 is 0 as numpy's
            return f(*xs)
    return ref


def _fnp_np(*names):
    return [(n, getattr(fnp, n), getattr(np, n)) for n in names]


def _shift_ref(kind, bits):
    """lax's shifts: amounts outside [0, bits) shift everything out (logical: 0;
    arithmetic: the sign fill)."""
    def ref(x, y):
        x, y = x.astype(np.int64), y.astype(np.int64)
        out = []
        for a, s in zip(x.tolist(), y.tolist()):
            u = a & ((1 << bits) - 1)
            if kind == "left":
                v = 0 if not 0 <= s < bits else (u << s) & ((1 << bits) - 1)
            elif kind == "logical":
                v = 0 if not 0 <= s < bits else u >> s
            else:
                sa = u - (1 << bits) if u >> (bits - 1) else u
                v = (sa >> min(s, bits - 1) if s >= 0 else sa >> (bits - 1)) & ((1 << bits) - 1)
            out.append(v)
        return np.array(out, np.uint64).astype(f"uint{bits}")
    return ref


def _xla_rem_div(x, y):
    """XLA's (JAX's) integer rem and div, not numpy's: truncating, x rem 0 = x, x div 0 =
    all ones (-1), INT_MIN div -1 wraps to INT_MIN."""
    rem, div = [], []
    for a, b in zip(x.astype(np.int64).tolist(), y.astype(np.int64).tolist()):
        q = -1 if b == 0 else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        div.append(q)
        rem.append(a if b == 0 else a - q * b)
    return tuple(np.array(v, np.int64).astype(x.dtype) for v in (rem, div))


def _bits_ref(kind, dt):
    bits = np.dtype(dt).itemsize * 8

    def ref(x):
        u = [v & ((1 << bits) - 1) for v in x.astype(np.int64).tolist()]
        if kind == "popcount":
            r = [bin(v).count("1") for v in u]
        else:
            r = [bits - v.bit_length() for v in u]
        return np.array(r, dt)
    return ref


def _bitcast_rows(_dt, _s):
    """Bitcasts of a 16-bit integer dtype to and from float16 and bfloat16."""
    _f16_bits = np.array([0x0000, 0x8000, 0x3C00, 0x7C00, 0xFC00, 0x7E01, 0x0001, 0xFBFF],
                         np.uint16)
    row(f"lax_bitcast_{_s}_f16_bf16",
        lambda x, _d=_dt: (lax.bitcast_convert_type(x, np.float16),
                           lax.bitcast_convert_type(x, BF16),
                           lax.bitcast_convert_type(lax.bitcast_convert_type(x, np.float16), _d),
                           lax.bitcast_convert_type(lax.bitcast_convert_type(x, BF16), _d)),
        [_f16_bits.view(_dt)],
        lambda x: (x.view(np.float16), x.view(BF16), x, x))
    row(f"lax_bitcast_f16_bf16_to_{_s}",
        lambda x, y, _d=_dt: (lax.bitcast_convert_type(x, _d), lax.bitcast_convert_type(y, _d)),
        [np.array([0.0, -0.0, 1.5, -65504, np.inf, 6e-8], np.float16),
         np.array([0.0, -0.0, 1.5, -3e38, np.inf, 1e-40], BF16)],
        lambda x, y, _d=_dt: (x.view(_d), y.view(_d)))


for _dt in (I8, U8, I16, U16):
    _s, _b, _signed = _SUFFIX[_dt], _dt.itemsize * 8, _dt.kind == "i"
    for _n, _f, _r in _fnp_np("add", "subtract", "multiply", "maximum", "minimum", "less",
                              "greater_equal", "equal", "not_equal", "bitwise_and",
                              "bitwise_or", "bitwise_xor"):
        row(f"{_n}_{_s}", _f, gen(_draw(_dt, 8), _draw(_dt, 8)), _quiet(_r))
    for _n, _f, _r in _fnp_np("floor_divide", "remainder"):
        row(f"{_n}_{_s}_edges", _f, [np.array(_EDGES[_dt], _dt), np.array(_DIVISORS[_dt], _dt)],
            _quiet(_r))
        row(f"{_n}_{_s}", _f, gen(_draw(_dt, 8), _draw(_dt, 8)), _quiet(_r))
    for _n, _f, _r in _fnp_np("abs", "negative", "sign", "square", "invert", "positive"):
        row(f"{_n}_{_s}", _f, gen(_draw(_dt, 8)), _quiet(_r))
    _amounts = np.array([0, 1, _b - 1, _b, _b + 1, 40], _dt)
    row(f"left_shift_{_s}", fnp.left_shift, [np.array(_EDGES[_dt], _dt), _amounts], np.left_shift)
    row(f"right_shift_{_s}", fnp.right_shift, [np.array(_EDGES[_dt], _dt), _amounts],
        np.right_shift)
    row(f"lax_integer_pow_{_s}", lambda x: lax.integer_pow(x, 3), gen(_draw(_dt, 6)),
        _quiet(lambda x: x ** 3))
    row(f"lax_rem_div_{_s}", lambda x, y: (lax.rem(x, y), lax.div(x, y)),
        [np.array(_EDGES[_dt], _dt), np.array(_DIVISORS[_dt], _dt)], _xla_rem_div)
    row(f"lax_population_count_clz_{_s}", lambda x: (lax.population_count(x), lax.clz(x)),
        [np.array(_EDGES[_dt] + [0x1234 % (1 << _b), 7], _dt)],
        lambda x, _d=_dt: (_bits_ref("popcount", _d)(x), _bits_ref("clz", _d)(x)))
    # sums and products accumulate in int64 / uint64 (numpy's and JAX's x64 rule); max,
    # min, argmax in the dtype; lax.cumsum wraps in it
    row(f"reductions_{_s}", lambda x: (fnp.sum(x), fnp.sum(x, axis=0), fnp.prod(x[:2], axis=1),
                                       fnp.max(x, axis=1), fnp.min(x), fnp.argmax(x, axis=0),
                                       fnp.cumsum(x, axis=1), fnp.mean(x)),
        gen(_draw(_dt, 3, 4)),
        lambda x: (np.sum(x), np.sum(x, axis=0), np.prod(x[:2], axis=1), np.max(x, axis=1),
                   np.min(x), np.argmax(x, axis=0), np.cumsum(x, axis=1), np.mean(x)))
    row(f"lax_cumsum_{_s}_wraps", lambda x: (lax.cumsum(x, 0), lax.reduce_max(x, (0,))),
        [np.array(_EDGES[_dt][::-1] + [30000 >> (16 - _b)] * 2, _dt)],
        lambda x: (np.add.accumulate(x, dtype=x.dtype), np.max(x, 0)))
    row(f"sort_argsort_top_k_{_s}", lambda x: (fnp.sort(x), fnp.argsort(x, stable=True),
                                                lax.top_k(x, 3)),
        gen(_draw(_dt, 9)),
        lambda x: (np.sort(x), np.argsort(x, stable=True),
                   (np.sort(x)[::-1][:3], np.argsort(-x.astype(np.int64), stable=True)[:3]
                    .astype(np.int32))))
    row(f"gather_scatter_{_s}", lambda x, i: _gather_scatter(fnp.asarray(x), i),
        gen(_draw(_dt, 8), lambda rng: np.array([7, 0, 3])),
        lambda x, i: (x[i], _quiet(lambda: _scatter_add(x, i, x[:3]))(),
                      _scatter_max(x, i, x[3:6]), np.where(x > 0, x, x[::-1]),
                      np.concatenate([x, x[:2]]), x.reshape(2, 4).T))
    row(f"lax_shifts_{_s}", lambda x, y: (lax.shift_left(x, y), lax.shift_right_logical(x, y),
                                          lax.shift_right_arithmetic(x, y)),
        [np.array(_EDGES[_dt] + [-3 if _signed else 12345 % (1 << _b)] * 2, _dt),
         np.array([0, 1, _b - 1, _b, _b + 4, 3, -1 if _signed else (1 << _b) - 1, 7], _dt)],
        lambda x, y, _b=_b: tuple(_shift_ref(k, _b)(x, y).view(x.dtype)
                                  for k in ("left", "logical", "arithmetic")))
    # conversions from floats inside the range (truncation toward zero; NaN, inf and
    # out-of-range floats convert by the rule of every integer dtype: test_int16.py)
    _top = float(np.iinfo(_dt).max)
    row(f"float_to_{_s}", lambda x, y, z, _d=_dt: (fnp.asarray(x).astype(_d),
                                                   fnp.asarray(y).astype(_d),
                                                   fnp.asarray(z).astype(_d)),
        [np.array([_top * 0.009 + 0.7, 0.2, _top + 0.9, 1.5, 0.99, _top * 0.37 + 0.5]),
         np.array([_top * 0.009 + 0.7, 0.5, 7.9, _top], np.float32),
         np.array([min(_top, 300.0) + 0.75, 1.5, min(_top, 2047.0), 0.25], np.float16)],
        lambda x, y, z, _d=_dt: (x.astype(_d), y.astype(_d), z.astype(_d)))
    if _signed:
        _low = float(np.iinfo(_dt).min)
        row(f"float_to_{_s}_negative", lambda x, _d=_dt: fnp.asarray(x).astype(_d),
            [np.array([_low * 0.009 - 0.7, -1.5, _low - 0.9, -0.5])],
            lambda x, _d=_dt: x.astype(_d))
    _to = (np.float64, np.float32, np.float16, BF16, I8, U8, np.int32, np.int64,
           np.uint32, np.uint64, I16, U16, bool)
    row(f"{_s}_to_every_dtype", lambda x: tuple(fnp.asarray(x).astype(d) for d in _to),
        gen(_draw(_dt, 8)), _quiet(lambda x: tuple(x.astype(d) for d in _to)))
    row(f"every_int_to_{_s}", lambda a, b, c, _d=_dt: tuple(fnp.asarray(v).astype(_d)
                                                            for v in (a, b, c)),
        [np.array([70000, -70000, 2**40 + 5, -1], np.int64),
         np.array([2**32 - 1, 65536, 65537], np.uint32), np.array([-128, 127, -1], np.int8)],
        lambda a, b, c, _d=_dt: tuple(v.astype(_d) for v in (a, b, c)))
    if _b == 16:   # bitcasts to and from the 16-bit floats (NaN payloads and -0.0 included)
        _bitcast_rows(_dt, _s)
    # mixing with Python ints (weak: stays narrow) and with other integer dtypes
    row(f"weak_and_mixed_{_s}", lambda x, y, z: _weak_mixed(fnp.asarray(x), y, z),
        gen(_draw(_dt, 6), lambda rng: rng.integers(-128, 128, 6).astype(np.int8),
            lambda rng: rng.integers(0, 256, 6).astype(np.uint8)),
        _quiet(lambda x, y, z: (x + x.dtype.type(1), x.dtype.type(3) * x, x // x.dtype.type(2),
                                x + y, x * z)))



def _gather_scatter(x, i):
    return (x[i], x.at[i].add(x[:3]), x.at[i].max(x[3:6]), fnp.where(x > 0, x, x[::-1]),
            fnp.concatenate([x, x[:2]]), x.reshape(2, 4).T)


def _weak_mixed(x, y, z):
    return x + 1, 3 * x, x // 2, x + y, x * z


def _scatter_add(x, i, v):
    out = x.copy()
    np.add.at(out, i, v)
    return out


def _scatter_max(x, i, v):
    out = x.copy()
    np.maximum.at(out, i, v)
    return out


# the op table's integer rows (functrans.primitives.elementwise) in 8 and 16 bits
def _table_rows():
    from functrans.primitives import elementwise as E
    for r in E.LINEAR_TABLE + E.UNARY_TABLE + E.BINARY_TABLE:
        if "i" not in r.kinds or "f" not in r.kinds:
            continue
        arity = E.ARITY[r.name]
        for dt, s in _SUFFIX.items():
            row(f"table_{r.name}_{s}", getattr(lax, r.name),
                gen(*[lambda rng, _d=dt: rng.integers(1, 4, 6).astype(_d)] * arity),
                _quiet(r.impl or r.numpy))


_table_rows()
