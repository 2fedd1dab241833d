"""Cases of ``preferred_element_type`` on the numpy contractions, shared by
tests/test_numpy_jax_api.py and the script that stored JAX 0.10.2's results
(tests/data/jnp_preferred_element_type.json): ``call(m, fn, a, b, pet)`` with ``m`` either
``jax.numpy`` or ``functrans.numpy``."""
import numpy as np

A = np.array([[1.7, 2.6], [3.5, -4.2]]) * 3
B = np.array([[0.9, -1.6], [2.25, 1.5]]) * 3
CASES = [("float32", "float32", "int32"), ("float32", "float32", "float16"),
         ("float64", "float64", "float32"), ("complex64", "complex64", "float32"),
         ("complex128", "complex128", "complex64"), ("int8", "int8", "int32"),
         ("int32", "int32", "int8"), ("int32", "int32", "float32"),
         ("float32", "int32", "int32"), ("int8", "float32", "float32"),
         ("float16", "float32", "float16"), ("float32", "float32", "bfloat16"),
         ("bfloat16", "bfloat16", "float32"), ("float32", "float32", "float64"),
         ("uint8", "uint8", "int32"), ("bool", "bool", "int32"),
         ("float16", "float16", "float32"), ("int32", "int32", "complex64"),
         ("float32", "float32", "complex64"), ("complex64", "complex64", "int32"),
         ("int64", "int32", "int32"), ("float32", "int32", "float64")]
FNS = ["matmul", "dot", "tensordot", "inner", "vdot", "einsum", "einsum_batch", "inner0",
       "einsum1", "vecdot", "convolve", "correlate"]


def mk(m, v, dt):
    """``v`` in ``dt`` (bool: ``v > 1``; integers truncate) as an array of ``m``."""
    x = np.asarray(v > 1) if dt == "bool" else np.asarray(v).astype(dt)
    return m.asarray(x, dtype=dt)


def call(m, fn, a, b, p):
    """``m.<fn>`` of ``a`` and ``b`` asked for ``p``."""
    kw = {"preferred_element_type": p}
    return {
        "matmul": lambda: m.matmul(a, b, **kw), "dot": lambda: m.dot(a, b, **kw),
        "tensordot": lambda: m.tensordot(a, b, 1, **kw), "inner": lambda: m.inner(a, b, **kw),
        "vdot": lambda: m.vdot(a, b, **kw), "einsum": lambda: m.einsum("ij,jk->ik", a, b, **kw),
        "einsum_batch": lambda: m.einsum("ij,ij->i", a, b, **kw),
        "inner0": lambda: m.inner(a[0, 0], b, **kw), "einsum1": lambda: m.einsum("ij->j", a, **kw),
        "vecdot": lambda: m.vecdot(a, b, **kw),
        "convolve": lambda: m.convolve(a[0], b[1], **kw),
        "correlate": lambda: m.correlate(a[0], b[1], **kw),
    }[fn]()
