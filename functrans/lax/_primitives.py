"""The primitive objects under the ``jax.lax.<name>_p`` names JAX 0.10.2 exports, for
code that binds them (``lax.integer_pow_p.bind(x, y=3)``) or recognises equations by
them (``eqn.primitive is lax.while_p``). Only primitives that are the same operation
as JAX's are named; ``scatter_p`` is not: functrans's ``scatter`` primitive carries
every combining mode (JAX's ``scatter_p`` is the overwriting one, ``scatter_add_p`` and
the others separate primitives). JAX's ``_p`` names for operations functrans composes
from other primitives (``reduce_window_p``, ``igamma_p``, ``clamp_p``...) have no
object here. Equation parameters are functrans's, not always JAX's.

>>> from functrans import lax
>>> lax.integer_pow_p.name, lax.while_p.name, lax.linear_solve_p.name
('integer_pow', 'while', 'custom_linear_solve')
"""
from ..primitives.elementwise import (  # noqa: F401
    abs_p, acos_p, acosh_p, add_p, and_p, asin_p, asinh_p, atan2_p, atan_p, atanh_p,
    bitcast_convert_type_p, cbrt_p, ceil_p, complex_p, conj_p, convert_element_type_p,
    cos_p, cosh_p, div_p, eq_p, erf_p, erfc_p, exp2_p, exp_p, expm1_p, floor_p, ge_p,
    gt_p, imag_p, integer_pow_p, is_finite_p, le_p, log1p_p, log_p, logistic_p, lt_p,
    max_p, min_p, mul_p, ne_p, neg_p, not_p, or_p, pow_p, real_p, rem_p, round_p,
    rsqrt_p, select_n_p, shift_left_p, shift_right_arithmetic_p, shift_right_logical_p,
    sign_p, sin_p, sinh_p, sqrt_p, square_p, sub_p, tan_p, tanh_p, xor_p)
from ..primitives.structural import (  # noqa: F401
    broadcast_in_dim_p, iota_p, reshape_p, squeeze_p, stop_gradient_p, transpose_p)
from ..primitives.slicing import (  # noqa: F401
    concatenate_p, cumprod_p, pad_p, reduce_prod_p, rev_p, slice_p)
from ..primitives.reductions import (  # noqa: F401
    argmax_p, argmin_p, cummax_p, cummin_p, cumsum_p, reduce_and_p, reduce_max_p,
    reduce_min_p, reduce_or_p, reduce_sum_p)
from ..primitives.dot import dot_general_p  # noqa: F401
from ..primitives.indexing import dynamic_slice_p, dynamic_update_slice_p  # noqa: F401
from ..primitives.gather_scatter import gather_p  # noqa: F401
from ..primitives.sorting import sort_p, top_k_p  # noqa: F401
from ..primitives.fft import fft_p  # noqa: F401
from ..primitives.conv import conv_general_dilated_p  # noqa: F401
from ..primitives.custom import optimization_barrier_p  # noqa: F401
from ..primitives.linear_solve import linear_solve_p  # noqa: F401
from ..primitives.control_flow import cond_p, scan_p, while_p  # noqa: F401
from ..primitives.collectives import (  # noqa: F401
    all_gather_p, all_to_all_p, axis_index_p, pmax_p, pmin_p, ppermute_p, psum_p)
