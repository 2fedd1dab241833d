"""Table rows for lax operand rules JAX 0.10.2 has and functrans lacked (session 31):
``lax.max``/``lax.min`` on complex (lexicographic), ``lax.conj`` of a real array (its
complex value), ``lax.pow`` of an inexact base with an integer exponent array."""
import numpy as np

from functrans import lax
from tests.cases import OpCase, gen, positive, randn


def _complex_ties(rng):
    x = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    y = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    y[1] = x[1].real + 1j * (x[1].imag + 1.0)   # equal real parts: the imaginary decides
    return [x, y]


def _lex(pick_x_where):
    def ref(x, y):
        pick = np.where(x.real == y.real, pick_x_where(x.imag, y.imag),
                        pick_x_where(x.real, y.real))
        return np.where(pick, x, y)
    return ref


CASES = [
    OpCase("lax_max_complex", lax.max, _complex_ties, _lex(np.greater), diff=False),
    OpCase("lax_min_complex", lax.min, _complex_ties, _lex(np.less), diff=False),
    # the complex value, and a real function of it for the derivative checks
    OpCase("lax_conj_real", lambda x: (lax.conj(x), lax.imag(lax.mul(lax.conj(x), 2 + 3j))),
           gen(randn(3, 4)), lambda x: (x.astype(np.complex128), 3 * x)),
    OpCase("lax_pow_int_exponent", lambda x, n: lax.pow(x, n),
           lambda rng: [positive(5)(rng), rng.integers(-3, 4, 5)],
           lambda x, n: x ** n.astype(np.float64), diff_argnums=(0,)),
    OpCase("lax_pow_int32_exponent_f32", lambda x, n: lax.pow(x, n),
           lambda rng: [randn(4, dtype=np.float32)(rng), rng.integers(-2, 4, 4).astype(np.int32)],
           lambda x, n: (x.astype(np.float64) ** n).astype(np.float32), rtol=1e-6, diff=False),
]
