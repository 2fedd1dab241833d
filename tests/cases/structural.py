"""Table rows for the structural primitives."""
import numpy as np

import functrans.numpy as fnp
from tests.cases import OpCase, gen, randn

CASES = [
    OpCase("reshape", lambda x: fnp.reshape(x, (4, -1)), gen(randn(2, 6)), lambda x: np.reshape(x, (4, 3))),
    OpCase("transpose", lambda x: fnp.transpose(x), gen(randn(2, 3, 4)), np.transpose),
    OpCase("broadcast_to", lambda x: fnp.broadcast_to(x, (3, 4)), gen(randn(4)),
           lambda x: np.broadcast_to(x, (3, 4))),
    OpCase("convert_f32", lambda x: fnp.asarray(x, "float32"), gen(randn(3)),
           lambda x: x.astype(np.float32), diff=False),
]
