"""The draws recorded in jax_random_reference.npz: name -> (function, seed, args, kwargs).

Plain data shared by make_jax_random_reference.py (which calls ``jax.random``) and
tests/test_random_jax.py (which calls ``functrans.random``); it imports neither library.
Dtypes are strings; every call gets ``PRNGKey(seed)`` as its first argument.
"""
CASES = {
    "key_0": ("key_data", 0, (), {}),
    "key_42": ("key_data", 42, (), {}),
    "key_big": ("key_data", 2 ** 40 + 5, (), {}),
    "key_neg": ("key_data", -3, (), {}),
    "split_2": ("split", 0, (), {}),
    "split_5": ("split", 42, (5,), {}),
    "split_2x3": ("split", 1, ((2, 3),), {}),
    "fold_in_7": ("fold_in", 0, (7,), {}),
    "fold_in_big": ("fold_in", 42, (2 ** 31 + 1,), {}),
    "bits_u32": ("bits", 0, ((2, 3),), {"dtype": "uint32"}),
    "bits_u64": ("bits", 3, ((5,),), {"dtype": "uint64"}),
    "bits_u16": ("bits", 4, ((5,),), {"dtype": "uint16"}),
    "bits_u8": ("bits", 5, ((5,),), {"dtype": "uint8"}),
    "uniform_f32": ("uniform", 0, ((7,),), {"dtype": "float32"}),
    "uniform_f64": ("uniform", 0, ((7,),), {"dtype": "float64"}),
    "uniform_range_f64": ("uniform", 9, ((2, 3),), {"dtype": "float64", "minval": -2.0,
                                                     "maxval": 5.0}),
    "uniform_range_f32": ("uniform", 9, ((2, 3),), {"dtype": "float32", "minval": -2.0,
                                                     "maxval": 5.0}),
    "normal_f32": ("normal", 1, ((500,),), {"dtype": "float32"}),
    "normal_f64": ("normal", 1, ((500,),), {"dtype": "float64"}),
    "normal_2d": ("normal", 2, ((3, 4),), {"dtype": "float64"}),
    "randint_i64": ("randint", 0, ((10,), 0, 10), {"dtype": "int64"}),
    "randint_i32": ("randint", 0, ((10,), 0, 10), {"dtype": "int32"}),
    "randint_wide": ("randint", 7, ((8,), -5, 1000003), {"dtype": "int64"}),
    "randint_u8": ("randint", 8, ((8,), 0, 256), {"dtype": "uint8"}),
    "randint_i8": ("randint", 8, ((8,), -100, 100), {"dtype": "int8"}),
    "randint_empty_range": ("randint", 8, ((3,), 5, 2), {"dtype": "int64"}),
    "permutation_10": ("permutation", 0, (10,), {}),
    "permutation_2000": ("permutation", 3, (2000,), {}),
    "permutation_axis1": ("permutation", 4, ("arange_3x5",), {"axis": 1}),
    "permutation_indep": ("permutation", 5, ("arange_3x5",), {"axis": 1, "independent": True}),
    "choice_replace": ("choice", 0, (10, (6,)), {}),
    "choice_noreplace": ("choice", 1, (10, (6,)), {"replace": False}),
    "choice_p_replace": ("choice", 2, (5, (8,)), {"p": [0.1, 0.2, 0.3, 0.15, 0.25]}),
    "choice_p_noreplace": ("choice", 3, (5, (3,)), {"p": [0.1, 0.2, 0.3, 0.15, 0.25],
                                                     "replace": False}),
    "choice_array_axis1": ("choice", 4, ("arange_3x5", (2,)), {"axis": 1}),
    "bernoulli": ("bernoulli", 0, (0.3, (20,)), {}),
    "gumbel_f32": ("gumbel", 0, ((50,),), {"dtype": "float32"}),
    "gumbel_f64": ("gumbel", 0, ((50,),), {"dtype": "float64"}),
    "categorical": ("categorical", 0, ("logits_3x5",), {}),
    "categorical_axis0_shape": ("categorical", 1, ("logits_3x5",), {"axis": 0,
                                                                     "shape": (2, 5)}),
    "gumbel_high": ("gumbel", 4, ((50,),), {"mode": "high"}),
    "categorical_noreplace": ("categorical", 5, ("logits_3x5",), {"shape": (3, 3),
                                                                   "replace": False}),
    "exponential_f64": ("exponential", 0, ((50,),), {"dtype": "float64"}),
    "exponential_f32": ("exponential", 0, ((50,),), {"dtype": "float32"}),
    "laplace": ("laplace", 0, ((50,),), {}),
    "logistic": ("logistic", 0, ((50,),), {}),
    "cauchy": ("cauchy", 0, ((50,),), {}),
    "pareto": ("pareto", 0, (3.0, (50,)), {}),
    "rademacher": ("rademacher", 0, ((20,),), {}),
    "maxwell": ("maxwell", 0, ((20,),), {}),
    "double_sided_maxwell": ("double_sided_maxwell", 0, (1.0, 2.0, (20,)), {}),
    "weibull_min": ("weibull_min", 0, (2.0, 1.5, (20,)), {}),
    "rayleigh": ("rayleigh", 0, (2.0, (20,)), {}),
    "wald": ("wald", 0, (1.5, (20,)), {}),
    "geometric": ("geometric", 0, (0.3, (20,)), {}),
    "triangular": ("triangular", 0, (0.0, 1.0, 3.0, (20,)), {}),
    "lognormal": ("lognormal", 0, (0.5, (20,)), {}),
    "truncated_normal": ("truncated_normal", 0, (-1.0, 2.0, (50,)), {}),
    "truncated_normal_f32": ("truncated_normal", 0, (-1.0, 2.0, (50,)), {"dtype": "float32"}),
    "multivariate_normal": ("multivariate_normal", 0, ("mean_3", "cov_3", (4,)), {}),
    "gamma": ("gamma", 0, (2.0, (20,)), {}),
    "gamma_small_a": ("gamma", 1, (0.5, (20,)), {}),
    "gamma_f32": ("gamma", 2, (3.0, (20,)), {"dtype": "float32"}),
    "gamma_array_a": ("gamma", 3, ("alpha_3",), {}),
    "loggamma": ("loggamma", 0, (0.01, (20,)), {}),
    "beta": ("beta", 0, (2.0, 3.0, (20,)), {}),
    "dirichlet": ("dirichlet", 0, ("alpha_3", (4,)), {}),
    "chisquare": ("chisquare", 0, (3.0, (20,)), {}),
    "f": ("f", 0, (3.0, 5.0, (20,)), {}),
    "t": ("t", 0, (4.0, (20,)), {}),
    "generalized_normal": ("generalized_normal", 0, (3.0, (20,)), {}),
    "ball": ("ball", 0, (3,), {"shape": (5,)}),
    "binomial_small": ("binomial", 0, (10.0, 0.3, (20,)), {}),
    "binomial_large": ("binomial", 1, (200.0, 0.4, (20,)), {}),
    "binomial_p_high": ("binomial", 2, (50.0, 0.9, (20,)), {}),
    "binomial_mixed": ("binomial", 3, ("counts_4", "probs_4"), {}),
    "poisson_small": ("poisson", 0, (3.0, (50,)), {}),
    "poisson_large": ("poisson", 1, (50.0, (200,)), {}),
    "poisson_mixed": ("poisson", 2, ("lams_5",), {}),
    "multinomial": ("multinomial", 0, (20.0, "alpha_3"), {"shape": (4, 3)}),
}

# named array arguments (kept as nested lists so this module needs no numpy)
ARRAYS = {
    "arange_3x5": [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]],
    "logits_3x5": [[0.1, -1.0, 2.0, 0.5, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0],
                   [-3.0, 0.0, 3.0, -1.5, 2.5]],
    "mean_3": [1.0, -2.0, 0.5],
    "alpha_3": [0.3, 1.0, 4.5],
    "lams_5": [0.0, 0.5, 9.9, 10.0, 1000.0],
    "counts_4": [5.0, 40.0, 1000.0, 0.0],
    "probs_4": [0.5, 0.2, 0.05, 0.7],
    "cov_3": [[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]],
}


# lax.erf_inv is recorded on this grid (float32 and float64): dense, the ends, tiny values
ERF_INV_GRID = ([i / 2000.0 - 1.0 for i in range(4001)]
                + [1e-300, -1e-300, 1e-30, 1e-10, 0.999999, -0.9999999999, 0.5 + 2.0 ** -40])


def resolve(args, as_array):
    """``args`` with named arrays replaced by ``as_array(nested list)``."""
    return tuple(as_array(ARRAYS[a]) if isinstance(a, str) and a in ARRAYS else a
                 for a in args)
