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
from ..primitives.fft import *  # noqa: F401,F403
from ..primitives.sorting import *  # noqa: F401,F403
from ..primitives.custom import *  # noqa: F401,F403
from ..primitives.collectives import *  # noqa: F401,F403
from ..primitives.control_flow import *  # noqa: F401,F403
# JAX's precision= / preferred_element_type= arguments on the contractions (issue 14)
from ..precision import Precision, dot, dot_general  # noqa: F401,E402
from ..lax_special import erf_inv  # noqa: F401  (composed from the primitives above)
