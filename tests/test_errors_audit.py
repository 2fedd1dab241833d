"""Bad input raises, naming what is wrong, where JAX 0.10.2 raises (session 30's audit of
~340 misuse cases against JAX: /work/notes/b30/errors/). Each case here returned a value
(often a wrong one) or raised an internal error before its fix."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax


def raises(exc, match, f):
    with pytest.raises(exc, match=match):
        f()


# --- eager lax elementwise ops skipped the shape/dtype rule the traced ones apply

@pytest.mark.parametrize("op", ["sin", "exp", "sqrt", "log", "tanh"])
def test_eager_lax_unary_float_op_of_int_raises(op):
    # lax.sin of int returned int zeros, lax.exp [1, 2, 7] (numpy's float cast back to int)
    f = getattr(lax, op)
    x = np.arange(3, dtype=np.int32)
    raises(TypeError, rf"{op}: dtype int32 is not supported", lambda: f(x))
    raises(TypeError, rf"{op}: dtype int32 is not supported", lambda: f(fnp.asarray(x)))
    raises(TypeError, rf"{op}: dtype int32 is not supported", lambda: ft.jit(f)(x))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "pow", "atan2"])
def test_eager_lax_binary_mixed_dtypes_raise(op):
    # lax.add(f32, i32) gave f64 eagerly, raised under jit
    f = getattr(lax, op)
    x, y = np.ones(3, np.float32), np.ones(3, np.float64)
    raises(TypeError, r"operands must have the same shape and dtype, got f32\[3\] \(operand 0\) "
           r"and f64\[3\] \(operand 1\)", lambda: f(x, y))
    raises(TypeError, r"f32\[3\].*f64\[3\]", lambda: f(fnp.asarray(x), fnp.asarray(y)))


def test_eager_lax_binary_rank_broadcast_raises():
    # lax.add of (2, 3) and (3,) broadcast like numpy eagerly (JAX: ranks must agree)
    raises(TypeError, r"f64\[2,3\] \(operand 0\) and f64\[3\]",
           lambda: lax.add(fnp.ones((2, 3)), fnp.ones(3)))
    raises(TypeError, r"f64\[2,3\] \(operand 0\) and f64\[3\]",
           lambda: ft.jit(lax.add)(fnp.ones((2, 3)), fnp.ones(3)))


def test_eager_lax_binary_int_only_op_of_floats_raises():
    # atan2 of int operands: numpy's float result was truncated back to int
    raises(TypeError, r"atan2: dtype int32 is not supported",
           lambda: lax.atan2(np.ones(3, np.int32), np.ones(3, np.int32)))


def test_lax_ops_still_accept_what_jax_accepts():
    # scalars adapt, 0-d and size-1 operands broadcast, same-typed operands run
    assert lax.add(np.float32(1), 2.0).dtype == np.float32
    assert lax.mul(np.ones((2, 3)), np.float64(2)).tolist() == [[2.0] * 3] * 2
    assert lax.add(np.ones((2, 1)), np.ones((2, 3))).shape == (2, 3)
    assert float(lax.sin(np.float32(0.5))) == pytest.approx(np.sin(0.5), rel=1e-6)
    assert lax.add(np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32)).tolist() == [0, 2, 4]


# --- other lax parameters that were folded, truncated or ignored

def test_integer_pow_float_exponent_raises():
    # int(2.5): integer_pow(x, 2.5) computed x ** 2
    raises(TypeError, r"integer_pow: the exponent y must be a Python int, got float 2.5",
           lambda: lax.integer_pow(fnp.arange(3.0), 2.5))
    assert lax.integer_pow(fnp.arange(3.0), np.int64(3)).tolist() == [0.0, 1.0, 8.0]


def test_reduce_dimension_out_of_range_raises():
    # d % ndim: lax.reduce of a vector over (1,) reduced axis 0 and returned 3.0
    raises(ValueError, r"reduce: dimensions \(1,\) out of range or repeated for operand \(3,\)",
           lambda: lax.reduce(fnp.ones(3), 0.0, lax.add, (1,)))
    raises(ValueError, r"dimensions \(0, -2\) out of range or repeated",
           lambda: lax.reduce(fnp.ones((2, 3)), 0.0, lax.add, (0, -2)))
    assert lax.reduce(fnp.ones((2, 3)), 0.0, lax.add, (-1,)).tolist() == [3.0, 3.0]


def test_transpose_permutation_of_wrong_length_raises():
    # transpose(x, (0,)) of a matrix returned x (the identity shortcut); (0, 2): numpy AxisError
    raises(ValueError, r"permutation \(0,\) is not a permutation of the axes of f64\[2,3\]",
           lambda: lax.transpose(fnp.ones((2, 3)), (0,)))
    raises(ValueError, r"permutation \(0, 2\) is not a permutation of the axes of f64\[2,3\]",
           lambda: lax.transpose(fnp.ones((2, 3)), (0, 2)))


def test_broadcast_in_dim_bad_dimensions_name_the_operand():
    # IndexError: tuple index out of range / numpy's "remapped shapes" message
    raises(TypeError, r"broadcast_in_dim: operand f64\[3\] needs 1 broadcast_dimensions",
           lambda: lax.broadcast_in_dim(fnp.ones(3), (4, 3), (0, 1)))
    raises(TypeError, r"cannot broadcast operand shape \(3,\) to \(4,\)",
           lambda: lax.broadcast_in_dim(fnp.ones(3), (4,), (0,)))


def test_conv_zero_stride_raises_value_error():
    # ZeroDivisionError from the SAME padding computation
    raises(ValueError, r"window_strides \(0, 1\) must all be >= 1 \(lhs f64\[1,3,8,8\]",
           lambda: lax.conv(fnp.ones((1, 3, 8, 8)), fnp.ones((4, 3, 3, 3)), (0, 1), "SAME"))
    raises(ValueError, r"rhs_dilation \(1, 0\) must all be >= 1",
           lambda: lax.conv_general_dilated(fnp.ones((1, 3, 8, 8)), fnp.ones((4, 3, 3, 3)),
                                            (1, 1), "VALID", rhs_dilation=(1, 0)))


# --- transform API misuse

@pytest.mark.parametrize("name", ["jacfwd", "jacrev", "hessian", "custom_jvp", "custom_vjp"])
def test_transform_of_a_non_callable_raises_where_written(name):
    raises(TypeError, r"expects a callable, got int \(3\)", lambda: getattr(ft, name)(3))


def test_jit_donate_argnums_out_of_range_raises():
    # was silently never donated
    raises(ValueError, r"donate_argnums \(3,\) out of range: f_one takes 1 positional",
           lambda: ft.jit(f_one, donate_argnums=3))
    raises(ValueError, r"donate_argnums \(-2,\) out of range",
           lambda: ft.jit(f_one, donate_argnums=-2))
    # *args takes any position; -1 is the last parameter
    assert ft.jit(lambda *a: a[0], donate_argnums=3)(fnp.ones(2)).tolist() == [1.0, 1.0]
    assert ft.jit(lambda x, y: x + y, donate_argnums=-1)(fnp.ones(2), fnp.ones(2)).tolist() \
        == [2.0, 2.0]


def f_one(x):
    return x


def test_jit_static_and_donated_argument_raises():
    raises(ValueError, r"arguments \[0\] of jit\(f_one\) are both static .* and donated",
           lambda: ft.jit(f_one, static_argnums=0, donate_argnums=0))
    raises(ValueError, r"arguments \[1\] .* both static",
           lambda: ft.jit(lambda x, y: x, static_argnames="y", donate_argnums=1))


def test_custom_jvp_rule_tangent_of_a_lossy_kind_raises():
    # a concrete complex tangent for a real primal was cast to float (imaginary part lost)
    @ft.custom_jvp
    def f(x):
        return fnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), fnp.ones(3) * 1j

    raises(TypeError, r"custom_jvp rule of 'f': tangent output 0 has dtype complex128 but "
           r"must have dtype float64", lambda: ft.jvp(f, (fnp.ones(3),), (fnp.ones(3),)))


def test_eager_select_complex_real_check_like_traced():
    # select of f64 and i32 cases was numpy's promotion eagerly (a TypeError under jit)
    raises(TypeError, r"select_n: cases must have the same shape and dtype, got f64\[3\] "
           r"\(case 0\) and i32\[3\] \(case 1\)",
           lambda: lax.select(np.array([True, False, True]), np.ones(3, np.int32), np.ones(3)))
    raises(TypeError, r"complex: operands must have the same shape and dtype, got f32\[3\]",
           lambda: lax.complex(np.ones(3, np.float32), np.ones(3, np.int32)))
    raises(TypeError, r"real: needs a complex operand, got f64\[3\]", lambda: lax.real(np.ones(3)))
    raises(TypeError, r"imag: needs a complex operand", lambda: lax.imag(np.ones(3)))
    # a scalar predicate still picks whole cases
    assert lax.select(True, np.ones(2), np.zeros(2)).tolist() == [1.0, 1.0]
    assert lax.complex(np.float32(1), np.float32(2)) == np.complex64(1 + 2j)


def test_axis_arguments_out_of_range_raise():
    # d % ndim folded them: expand_dims(x, (3,)) of a vector gave shape (3, 1), a 1-d
    # dynamic_index_in_dim(axis=2) indexed axis 0; full((-1,), 1.0) had shape (1,)
    raises(ValueError, r"expand_dims: dimensions \(3,\) out of range or repeated for a result "
           r"of rank 2 \(operand shape \(3,\)\)", lambda: lax.expand_dims(fnp.ones(3), (3,)))
    raises(ValueError, r"expand_dims: dimensions \(0, -3\)",
           lambda: lax.expand_dims(fnp.ones(3), (0, -3)))
    assert lax.expand_dims(fnp.ones(3), (-1,)).shape == (3, 1)
    raises(ValueError, r"dynamic_slice_in_dim: axis 2 out of range for operand shape \(4,\)",
           lambda: lax.dynamic_index_in_dim(fnp.ones(4), 1, axis=2))
    raises(ValueError, r"full: shape \(-1,\) has a negative dimension",
           lambda: lax.full((-1,), 1.0))


def test_array_reshape_size_below_minus_one_raises():
    # numpy takes any negative size as the unknown one: reshape(-3, 2) gave shape (3, 2)
    x = fnp.ones(6)
    raises(ValueError, r"reshape: negative dimension in new shape \(-3, 2\)",
           lambda: x.reshape(-3, 2))
    raises(ValueError, r"negative dimension", lambda: fnp.reshape(x, (2, -3)))
    assert x.reshape(-1, 2).shape == (3, 2) and x.reshape((2, 3)).shape == (2, 3)


@pytest.mark.parametrize("name", ["grad", "value_and_grad"])
def test_grad_of_a_non_callable_raises_where_written(name):
    # grad(3) returned a function that failed only when called
    raises(TypeError, r"grad expects a callable, got int \(3\)", lambda: getattr(ft, name)(3))


def test_iota_and_broadcast_bad_shapes_raise_naming_them():
    # broadcasted_iota's dimension was taken % rank (5 of a matrix: axis 1); a negative
    # size raised numpy's "all elements of broadcast shape must be non-negative"
    raises(ValueError, r"iota: dimension 5 out of range for shape \(2, 3\)",
           lambda: lax.broadcasted_iota(np.int32, (2, 3), 5))
    raises(ValueError, r"iota: dimension 0 out of range for shape \(-1,\)",
           lambda: lax.iota(np.int32, -1))
    assert lax.broadcasted_iota(np.int32, (2, 3), -1).tolist() == [[0, 1, 2]] * 2
    raises(TypeError, r"broadcast_in_dim: shape \(-1, 3\) has a negative dimension",
           lambda: lax.broadcast(fnp.ones(3), (-1,)))


@pytest.mark.parametrize("name, call", [
    ("slice_in_dim", lambda x: lax.slice_in_dim(x, 0, 1, axis=2)),
    ("index_in_dim", lambda x: lax.index_in_dim(x, 0, axis=2)),
    ("dynamic_update_slice_in_dim",
     lambda x: lax.dynamic_update_slice_in_dim(x, fnp.ones((2, 1)), 0, axis=2)),
    ("dynamic_update_index_in_dim",
     lambda x: lax.dynamic_update_index_in_dim(x, fnp.ones(2), 0, axis=2)),
    ("split", lambda x: lax.split(x, (1, 2), axis=-3)),
])
def test_in_dim_axis_out_of_range_raises(name, call):
    # axis % ndim: slice_in_dim(matrix, 0, 1, axis=2) sliced axis 0 and returned shape (1, 3)
    raises(ValueError, rf"{name}: axis -?\d is out of range for an operand of rank 2",
           lambda: call(fnp.ones((2, 3))))
    raises(ValueError, rf"{name}: axis", lambda: ft.jit(call)(fnp.ones((2, 3))))


def test_in_dim_negative_axes_still_count_from_the_end():
    x = fnp.arange(6.0).reshape(2, 3)
    assert lax.slice_in_dim(x, 1, 3, axis=-1).tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert [a.shape for a in lax.split(x, (1, 2), axis=-1)] == [(2, 1), (2, 2)]
    assert lax.index_in_dim(x, 1, axis=-2, keepdims=False).tolist() == [3.0, 4.0, 5.0]


def test_initializer_fan_axis_out_of_range_raises():
    # in_axis=5 of a (2, 3) kernel took the fan of axis 1 (5 % 2): a plausible wrong scale
    key = ft.random.PRNGKey(0)
    raises(ValueError, r"variance_scaling: in_axis \(5,\) out of range for shape \(2, 3\)",
           lambda: ft.nn.initializers.lecun_normal(in_axis=5)(key, (2, 3)))
    raises(ValueError, r"out_axis \(-3,\) out of range",
           lambda: ft.nn.initializers.glorot_uniform(out_axis=-3)(key, (2, 3)))
    assert ft.nn.initializers.lecun_normal(in_axis=-1, out_axis=0)(key, (2, 3)).shape == (2, 3)


def test_scale_and_translate_spatial_dim_out_of_range_raises():
    # spatial_dims (5,) of a 2-d image resized axis 1 (5 % 2): shape (8, 4) asked, (4, 4) came
    raises(ValueError, r"scale_and_translate: spatial_dims \(5,\) out of range for an image "
           r"of shape \(4, 4\)",
           lambda: ft.image.scale_and_translate(fnp.ones((4, 4)), (8, 4), (5,),
                                                fnp.array([2.0]), fnp.array([0.0]), "linear"))
    assert ft.image.scale_and_translate(fnp.ones((4, 4)), (8, 4), (-2,), fnp.array([2.0]),
                                        fnp.array([0.0]), "linear").shape == (8, 4)
