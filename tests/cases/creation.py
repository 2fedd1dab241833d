"""Table rows for array creation (``zeros ones full *_like arange linspace eye identity
tri tril triu array asarray``), used next to traced values."""
import numpy as np

import functrans.numpy as fnp
from tests.cases import OpCase, gen, ints, randn

CASES = [
    OpCase("zeros_ones_like", lambda x: fnp.zeros_like(x) + x * fnp.ones_like(x), gen(randn(2, 3)),
           lambda x: np.zeros_like(x) + x * np.ones_like(x)),
    OpCase("zeros_shape", lambda x: fnp.zeros((0, 3)) + x, gen(randn(0, 3)), lambda x: np.zeros((0, 3)) + x),
    OpCase("ones_f32", lambda x: fnp.ones(3, dtype="float32") * x, gen(randn(3, dtype=np.float32)),
           lambda x: np.ones(3, np.float32) * x, diff=False),
    OpCase("full_like", lambda x: fnp.full_like(x, 2.5) * x, gen(randn(4)), lambda x: np.full_like(x, 2.5) * x),
    OpCase("full_traced_fill", lambda x: fnp.full((2, 3), x), gen(randn()), lambda x: np.full((2, 3), x)),
    OpCase("full_like_traced_fill", lambda x, v: fnp.full_like(x, v), gen(randn(3), randn()),
           lambda x, v: np.full_like(x, v)),
    OpCase("full_int", lambda x: fnp.full((3,), 4) + x, gen(ints(3)), lambda x: np.full((3,), 4) + x, diff=False),
    OpCase("empty_like", lambda x: fnp.empty_like(x) * 0 + x, gen(randn(2)), lambda x: x),
    OpCase("arange", lambda x: x + fnp.arange(4), gen(randn(4)), lambda x: x + np.arange(4)),
    OpCase("arange_float_step", lambda x: x * fnp.arange(0.5, 2.0, 0.25), gen(randn(6)),
           lambda x: x * np.arange(0.5, 2.0, 0.25)),
    OpCase("arange_int32", lambda x: x + fnp.arange(2, 8, 2, dtype="int32"), gen(ints(3, dtype=np.int32)),
           lambda x: x + np.arange(2, 8, 2, dtype=np.int32), diff=False),
    OpCase("linspace", lambda x: x * fnp.linspace(-1, 1, 5), gen(randn(5)), lambda x: x * np.linspace(-1, 1, 5)),
    OpCase("linspace_no_endpoint", lambda x: x + fnp.linspace(0, 1, 4, endpoint=False), gen(randn(4)),
           lambda x: x + np.linspace(0, 1, 4, endpoint=False)),
    OpCase("eye_identity", lambda x: (x * fnp.eye(3, 4, k=1), x[:, :3] + fnp.identity(3)), gen(randn(3, 4)),
           lambda x: (x * np.eye(3, 4, k=1), x[:, :3] + np.identity(3))),
    OpCase("tri", lambda x: x * fnp.tri(3, 2, -1), gen(randn(3, 2)), lambda x: x * np.tri(3, 2, -1)),
    OpCase("tril", fnp.tril, gen(randn(3, 4)), np.tril),
    OpCase("triu_k", lambda x: fnp.triu(x, 1), gen(randn(2, 3, 3)), lambda x: np.triu(x, 1)),
    OpCase("tril_neg_k_int", lambda x: fnp.tril(x, -1), gen(ints(4, 3)), lambda x: np.tril(x, -1), diff=False),
    OpCase("triu_vector", fnp.triu, gen(randn(3)), np.triu),
    OpCase("array_of_tracers", lambda x, y: fnp.array([x, y, 1.0]), gen(randn(), randn()),
           lambda x, y: np.array([x, y, 1.0])),
    OpCase("array_ndmin", lambda x: fnp.array(x, ndmin=3), gen(randn(2)), lambda x: np.array(x, ndmin=3)),
    OpCase("asarray_dtype", lambda x: fnp.asarray(x, dtype=fnp.float32), gen(randn(2)),
           lambda x: x.astype(np.float32), diff=False),
]
