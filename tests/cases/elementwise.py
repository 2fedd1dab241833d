"""Table rows for the elementwise primitives."""
import numpy as np

import functrans.numpy as fnp
from tests.cases import OpCase, gen, positive, randn

CASES = [
    OpCase("add", fnp.add, gen(randn(3, 4), randn(3, 4)), np.add),
    OpCase("add_broadcast", fnp.add, gen(randn(3, 1), randn(4)), np.add),
    OpCase("sub", fnp.subtract, gen(randn(2, 3), randn(2, 3)), np.subtract),
    OpCase("mul", fnp.multiply, gen(randn(5), randn(5)), np.multiply),
    OpCase("mul_f32_weak", lambda x: fnp.multiply(x, 2.0), gen(randn(4, dtype=np.float32)),
           lambda x: np.multiply(x, 2.0), diff=False),
    OpCase("div", fnp.true_divide, gen(randn(4), positive(4)), np.true_divide),
    OpCase("neg", fnp.negative, gen(randn(3)), np.negative),
    OpCase("sin", fnp.sin, gen(randn(3, 2)), np.sin),
    OpCase("cos", fnp.cos, gen(randn(3)), np.cos),
    OpCase("exp", fnp.exp, gen(randn(2, 2)), np.exp),
    OpCase("log", fnp.log, gen(positive(6)), np.log),
    OpCase("scalar_sin", fnp.sin, gen(randn()), np.sin),
    OpCase("empty_add", fnp.add, gen(randn(0, 3), randn(0, 3)), np.add),
]
