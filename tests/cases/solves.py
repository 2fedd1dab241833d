"""Table rows for ``lax.custom_linear_solve`` and ``lax.custom_root``: a dense solve
behind the custom rules (symmetric and not), so value, derivatives (by the linear
map, not the solver), batching and jit are checked like any primitive's."""
import numpy as np

import functrans.numpy as fnp
from functrans import lax
from tests.cases import OpCase, gen, randn
from tests.cases.linalg import spd, wellcond


def _sym_solve(a, b):
    return lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: fnp.linalg.solve(a, r),
                                   symmetric=True)


def _solve(a, b):
    return lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: fnp.linalg.solve(a, r),
                                   lambda vm, r: fnp.linalg.solve(a.T, r))


def _cube_root(a):
    # the real cube root of a > 0 by Newton's method, differentiated implicitly
    def newton(f, x):
        for _ in range(40):
            x = x - f(x) / (3.0 * x * x)
        return x
    return lax.custom_root(lambda x: x ** 3 - a, fnp.ones_like(a), newton,
                           lambda g, y: y / g(fnp.ones_like(y)))


CASES = [
    OpCase("lax_custom_linear_solve_symmetric", _sym_solve, gen(spd(3, 3), randn(3)),
           np.linalg.solve),
    OpCase("lax_custom_linear_solve_transpose_solve", _solve, gen(wellcond(3, 3), randn(3)),
           np.linalg.solve),
    OpCase("lax_custom_root_newton", _cube_root,
           lambda rng: [rng.uniform(0.5, 3.0, (3,))], np.cbrt),
]
