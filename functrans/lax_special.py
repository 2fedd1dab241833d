"""Special functions composed from existing primitives (no new primitive, so every
transform and backend handles them already): ``erf_inv``.

``erf_inv`` follows the piecewise polynomial approximations of M. Giles,
"Approximating the erfinv function" (GPU Computing Gems, 2011), in the form XLA
evaluates them (one branch set for float32, a three-branch double-precision set for
float64), so ``functrans.random.normal`` reproduces JAX's normal draws. Its derivative
is the exact ``sqrt(pi)/2 * exp(erf_inv(x)**2)`` (a custom JVP), not the derivative
of the polynomial.

>>> import numpy as np
>>> from functrans.lax_special import erf_inv
>>> round(float(erf_inv(np.float64(0.5))), 12)
0.476936276204
"""
from __future__ import annotations

import math

import numpy as np

from jaxpr_ir import bfloat16, dtype_kind

from . import numpy as fnp
from .custom_derivatives import custom_jvp
from .typing import Array, ArrayLike

__all__ = ["erf_inv", "lgamma"]

# Giles' single-precision coefficients, highest power first; w = -log1p(-x*x)
_F32_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_F32_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
             0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
# Giles' double-precision coefficients: w < 6.25, w < 16, and beyond
_F64_CENTRAL = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_F64_MIDDLE = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_F64_TAIL = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)


def _horner(coeffs, w):
    """sum c_i w^(n-i), evaluated by Horner's rule in ``w``'s dtype."""
    t = w.dtype.type
    p = fnp.full_like(w, t(coeffs[0]))
    for c in coeffs[1:]:
        p = t(c) + p * w
    return p


def _erf_inv_value(x):
    t = x.dtype.type
    ends = fnp.abs(x) == t(1.0)
    safe = fnp.where(ends, t(0.0), x)       # the ends are replaced below: no log(0) there
    w = -fnp.log1p(-safe * safe)            # -log(1 - x^2) >= 0
    if x.dtype == np.float32:
        central = _horner(_F32_CENTRAL, w - t(2.5))
        tail = _horner(_F32_TAIL, fnp.sqrt(w) - t(3.0))
        p = fnp.where(w < t(5.0), central, tail)
    else:
        root = fnp.sqrt(w)
        p = fnp.where(w < t(6.25), _horner(_F64_CENTRAL, w - t(3.125)),
                      fnp.where(w < t(16.0), _horner(_F64_MIDDLE, root - t(3.25)),
                                _horner(_F64_TAIL, root - t(5.0))))
    # the polynomials are finite at |x| = 1, where erf_inv is +-inf
    return fnp.where(ends, fnp.where(x > 0, t(np.inf), t(-np.inf)), p * x)


@custom_jvp
def _erf_inv(x):
    return _erf_inv_value(x)


@_erf_inv.defjvp
def _erf_inv_jvp(primals, tangents):
    (x,), (tx,) = primals, tangents
    y = _erf_inv(x)
    return y, tx * (x.dtype.type(math.sqrt(math.pi) / 2) * fnp.exp(y * y))


def erf_inv(x: ArrayLike) -> Array:
    """The inverse error function: ``erf(erf_inv(x)) == x`` on [-1, 1] (+-inf at +-1,
    NaN outside), elementwise, for float32, float64, float16 and bfloat16 (integers become
    float64; the 16-bit floats compute in float32, rounded once, as XLA does).

    >>> import numpy as np
    >>> from functrans.lax_special import erf_inv
    >>> erf_inv(np.array([-1.0, 0.0, 1.0])).tolist()
    [-inf, 0.0, inf]
    """
    x = fnp.asarray(x)
    if dtype_kind(x.dtype) in "iub":
        x = fnp.asarray(x, np.float64)
    if x.dtype in (bfloat16, np.float16):   # in float32, rounded once (as XLA computes it)
        return fnp.asarray(_erf_inv(fnp.asarray(x, np.float32)), x.dtype)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"erf_inv: expected float16, float32, float64 or bfloat16, got {x.dtype}")
    return _erf_inv(x)


# Lanczos approximation (g = 7, 9 terms), as XLA evaluates lgamma
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.32342877765313, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def lgamma(x: ArrayLike) -> Array:
    """log|Gamma(x)|, elementwise: the Lanczos approximation (g = 7) that XLA uses, with
    the reflection formula below 1/2; +inf at the poles. float32/float64; float16 and
    bfloat16 compute in float32, rounded once (the Lanczos terms in 16-bit arithmetic
    were off by ~1%). Differentiable by composition.

    >>> import numpy as np
    >>> from functrans.lax_special import lgamma
    >>> round(float(lgamma(np.float64(5.0))), 10)   # log(24)
    3.1780538303
    """
    x = fnp.asarray(x)
    if dtype_kind(x.dtype) in "iub":
        x = fnp.asarray(x, np.float64)
    if x.dtype in (bfloat16, np.float16):   # in float32, rounded once (as XLA computes it)
        return fnp.asarray(lgamma(fnp.asarray(x, np.float32)), x.dtype)
    t = x.dtype.type
    reflect = x < t(0.5)
    z = fnp.where(reflect, -x, x - t(1))
    acc = fnp.full_like(z, t(_LANCZOS_BASE))
    for i, c in enumerate(_LANCZOS):
        acc = acc + t(c) / (z + t(i + 1))
    half_g = t(_LANCZOS_G + 0.5)
    tt = z + half_g
    log_t = t(math.log(_LANCZOS_G + 0.5)) + fnp.log1p(z / half_g)
    log_y = t(0.5 * math.log(2 * math.pi)) + (z + t(0.5) - tt / log_t) * log_t + fnp.log(acc)
    # reflection: log|Gamma(x)| = log(pi) - log|sin(pi x)| - log|Gamma(1 - x)|
    frac = fnp.abs(x) - fnp.floor(fnp.abs(x))
    frac = fnp.where(frac > t(0.5), t(1) - frac, frac)
    frac = fnp.where(reflect, frac, t(0.5))     # unused there: keep its gradient finite
    reflected = t(math.log(math.pi)) - fnp.log(fnp.sin(t(math.pi) * frac)) - log_y
    out = fnp.where(reflect, reflected, log_y)
    return fnp.where(fnp.isinf(x), t(np.inf), out)
