"""IR -> IR transforms: jvp, partial evaluation/linearize, transpose, vmap."""
from .jvp import jvp_eval, jvp_jaxpr  # noqa: F401
from .partial_eval import linearize_jaxpr, partial_eval, LinearJaxpr  # noqa: F401
from .transpose import backward_pass, transpose_jaxpr  # noqa: F401
from .vmap import vmap_eval, vmap_jaxpr  # noqa: F401
