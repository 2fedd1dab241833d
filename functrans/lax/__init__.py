"""functrans.lax: the primitives as functions, and structured control flow.

These are strict: operands of elementwise ops share shape and dtype (Python
scalars adapt). ``functrans.numpy`` is the broadcasting, promoting layer above.

>>> from functrans import lax
>>> import numpy as np
>>> float(lax.add(np.float64(1.0), 2.0))
3.0
"""
from ..primitives.elementwise import *  # noqa: F401,F403
from ..primitives.structural import *  # noqa: F401,F403
from ..primitives.slicing import *  # noqa: F401,F403
from ..primitives.indexing import *  # noqa: F401,F403
from ..primitives.reductions import *  # noqa: F401,F403
from ..primitives.dot import *  # noqa: F401,F403
from ..primitives.linalg import *  # noqa: F401,F403
from ..primitives.linalg_decomp import *  # noqa: F401,F403
from ..primitives.linalg_det import *  # noqa: F401,F403
from ..primitives.linalg_lu import *  # noqa: F401,F403
from ..primitives.fft import *  # noqa: F401,F403
from ..primitives.sorting import *  # noqa: F401,F403
from ..primitives.custom import *  # noqa: F401,F403
from ..primitives.linear_solve import *  # noqa: F401,F403
from ..primitives.conv_api import *  # noqa: F401,F403
from ..primitives.collectives import *  # noqa: F401,F403
from ..primitives.control_flow import *  # noqa: F401,F403
# JAX's precision= / preferred_element_type= arguments on the contractions (issue 14)
from ..precision import Precision, batch_matmul, dot, dot_general  # noqa: F401,E402
from ..lax_special import erf_inv, lgamma  # noqa: F401  (composed from the primitives above)
from ..lax_window import *  # noqa: F401,F403,E402  (composed from pad, slice and the monoids)
from ..lax_scan import *  # noqa: F401,F403,E402  (composed: slicing, sort, elementwise)
from ..lax_solves import custom_root  # noqa: F401,E402  (a custom_jvp over traced bodies)
from ..lax_more import *  # noqa: F401,F403,E402  (ragged_dot, reduce, select, split...)
from ..lax_approx import *  # noqa: F401,F403,E402  (approx_max_k/min_k: exact, as on CPU)
from ..lax_bits import *  # noqa: F401,F403,E402  (bit-level; JAX's round: halves away)
from ..lax_gather import *  # noqa: F401,F403,E402  (XLA dimension numbers on gather/scatter)
from ..lax_shapes import *  # noqa: F401,F403,E402  (shape tuples; pshuffle, pbroadcast...)
from ..lax_platform import *  # noqa: F401,F403,E402  (platform_dependent, rng_bit_generator...)
from . import linalg  # noqa: F401,E402  (jax.lax.linalg's signatures and defaults)
from ._primitives import *  # noqa: F401,F403,E402  (the primitives under JAX's *_p names)
from ..lax_keywords import *  # noqa: F401,F403,E402  (mul(out_dtype=), exp(accuracy=), ...)
# special functions as JAX's lax names them, reusing functrans.scipy.special's (composed of
# the ops above; imported last, since functrans.scipy itself imports this module)
from ..scipy._special_gamma import digamma, zeta  # noqa: F401,E402
from ._polygamma import polygamma  # noqa: F401,E402  (JAX's floating order m)
from ..scipy._special_incomplete import betainc  # noqa: F401,E402
from ..scipy._special_incomplete import gammainc as igamma  # noqa: F401,E402
from ..scipy._special_incomplete import gammaincc as igammac  # noqa: F401,E402
from ..scipy._special_incomplete import igamma_grad_a, random_gamma_grad  # noqa: F401,E402
from ..scipy._special_misc import i0e as bessel_i0e, i1e as bessel_i1e  # noqa: F401,E402
from ..scipy._sixteen_bit import in_float32_for_16_bit as _in_float32_for_16_bit  # noqa: E402
# float16/bfloat16 operands run in float32 and round once, as JAX's (they raised TypeError)
for _name in ("digamma", "zeta", "polygamma", "betainc", "igamma", "igammac", "igamma_grad_a",
              "random_gamma_grad", "bessel_i0e", "bessel_i1e"):
    globals()[_name] = _in_float32_for_16_bit(globals()[_name])
del _name

__all__ = sorted(n for n in dir() if not n.startswith("_"))
