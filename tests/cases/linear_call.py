"""Table rows for ``linear_call`` (jax.custom_derivatives'): a call linear in its second
argument with a transpose of its own. The derivative checks differentiate the linear
operand only (residual derivatives are refused, as JAX's); with a true transpose the
VJP identity holds, and vmap batches residuals and linear operands alike."""
import numpy as np

import functrans.numpy as fnp
from functrans.custom_derivatives import linear_call
from tests.cases import OpCase, gen, positive, randn

CASES = []


def _scale(r, x):
    return {"y": x / r, "z": fnp.sum(x * r)}


def _scale_t(r, ct):
    return ct["y"] / r + ct["z"] * r


CASES.append(OpCase("linear_call_div", lambda r, x: linear_call(_scale, _scale_t, r, x),
                    gen(positive(3), randn(3)), lambda r, x: {"y": x / r, "z": np.sum(x * r)},
                    diff_argnums=(1,)))
CASES.append(OpCase("linear_call_matmul",
                    lambda a, x: linear_call(lambda a, x: a @ x, lambda a, c: a.T @ c, a, x),
                    gen(randn(3, 4), randn(4, 2)), lambda a, x: a @ x, diff_argnums=(1,)))
