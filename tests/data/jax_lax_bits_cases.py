"""The cases of tests/test_lax_names.py's bit-level rows (shared with
make_jax_lax_bits_reference.py): ``outputs(lax)`` runs them through a lax module."""
import numpy as np


def _inputs():
    r = np.random.default_rng(3)
    ints = {}
    for dt in [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64]:
        info = np.iinfo(dt)
        a = r.integers(info.min, info.max, 200, dtype=dt, endpoint=True)
        b = r.integers(info.min, info.max, 200, dtype=dt, endpoint=True)
        a[:4] = [0, 1, info.max, info.min]
        b[:4] = [info.min, info.max, info.max, info.min]
        ints[np.dtype(dt).name] = (a, b)
    f64 = np.concatenate([r.normal(size=50) * 10.0 ** r.integers(-300, 300, 50),
                          [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 5e-324, -5e-324, 1.5, 2.5]])
    g64 = np.concatenate([r.normal(size=50),
                          [1.0, -1.0, 0.0, np.inf, 1.0, 1.0, 0.0, 0.0, 1.5, -np.inf]])
    f32 = (r.normal(size=60) * 10.0 ** r.integers(-40, 40, 60)).astype(np.float32)
    return ints, f64, g64, f32


ROUND_X = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, -3.5, 1e300, np.nan,
                    np.inf, -0.0])


def outputs(lax):
    ints, f64, g64, f32 = _inputs()
    out = {}
    for k, (a, b) in ints.items():
        out[k + "pc"] = np.asarray(lax.population_count(a))
        out[k + "clz"] = np.asarray(lax.clz(a))
        out[k + "mh"] = np.asarray(lax.mulhi(a, b))
    out["na64"] = np.asarray(lax.nextafter(f64, g64))
    out["na32"] = np.asarray(lax.nextafter(f32, f32[::-1].copy()))
    for e, m in [(8, 7), (5, 10), (8, 23), (11, 52), (4, 3), (8, 0)]:
        out[f"rp64_{e}_{m}"] = np.asarray(lax.reduce_precision(f64, e, m))
        if m <= 23 and e <= 8:
            out[f"rp32_{e}_{m}"] = np.asarray(lax.reduce_precision(f32, e, m))
    out["round"] = np.asarray(lax.round(ROUND_X))
    out["round_even"] = np.asarray(lax.round(ROUND_X, lax.RoundingMethod.TO_NEAREST_EVEN))
    return out
