"""Table rows for the reductions."""
import numpy as np

import functrans.numpy as fnp
from tests.cases import OpCase, gen, randn

CASES = [
    OpCase("sum_all", fnp.sum, gen(randn(3, 4)), np.sum),
    OpCase("sum_axis1", lambda x: fnp.sum(x, axis=1), gen(randn(3, 4)), lambda x: np.sum(x, axis=1)),
    OpCase("sum_keepdims", lambda x: fnp.sum(x, axis=0, keepdims=True), gen(randn(3, 4)),
           lambda x: np.sum(x, axis=0, keepdims=True)),
]
