"""stax's transposed convolution layers (output shapes as JAX 0.10.2's stax gives them for
the same arguments, recorded here; values = lax.conv_transpose + bias, trained by grad),
and the names JAX's stax and optimizers modules expose beyond the layers."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax, nn, random
from functrans.example_libraries import optimizers, stax
from functrans.nn import initializers

# (layer, args, input shape, JAX's output shape, dimension numbers)
CASES = [
    ("ConvTranspose", (3, (3, 3), (2, 2), "SAME"), (2, 5, 5, 2), (2, 10, 10, 3),
     ("NHWC", "HWIO", "NHWC")),
    ("ConvTranspose", (3, (3, 2), (2, 1), "VALID"), (-1, 5, 4, 2), (-1, 11, 5, 3),
     ("NHWC", "HWIO", "NHWC")),
    ("Conv1DTranspose", (4, (3,), (3,), [(1, 2)]), (2, 5, 3), (2, 14, 4),
     ("NHC", "HIO", "NHC")),
    ("GeneralConvTranspose", (("NCHW", "OIHW", "NCHW"), 3, (2, 2), (2, 2), "SAME"),
     (2, 2, 4, 4), (2, 3, 8, 8), ("NCHW", "OIHW", "NCHW")),
]


@pytest.mark.parametrize("name,args,in_shape,out_shape,dn", CASES)
def test_transposed_conv_layer(name, args, in_shape, out_shape, dn):
    init, apply = getattr(stax, name)(*args)
    got_shape, (W, b) = init(random.key(0), in_shape)
    assert tuple(got_shape) == out_shape
    x = np.random.default_rng(1).standard_normal([2 if d == -1 else d for d in in_shape])
    spec = args[0] if name == "GeneralConvTranspose" else None
    strides, padding = (args[3], args[4]) if spec else (args[2], args[3])
    want = lax.conv_transpose(x, W, strides, padding, dimension_numbers=dn) + b
    y = apply((W, b), x)
    assert y.shape == tuple(2 if d == -1 else d for d in out_shape)
    np.testing.assert_allclose(np.asarray(y), np.asarray(want), rtol=1e-13, atol=1e-13)
    g = ft.grad(lambda p: fnp.sum(apply(p, x) ** 2))((W, b))
    assert all(np.all(np.isfinite(np.asarray(t))) for t in g)


def test_stax_exposes_jax_function_names():
    assert stax.relu is nn.relu and stax.logsoftmax is nn.log_softmax
    assert stax.softmax is nn.softmax and stax.standardize is nn.standardize
    assert stax.glorot_normal is initializers.glorot_normal and stax.zeros is initializers.zeros
    assert stax.ones is initializers.ones and stax.normal is initializers.normal
    for n in ("elu", "gelu", "leaky_relu", "selu", "sigmoid", "softplus", "log_softmax"):
        assert getattr(stax, n) is getattr(nn, n)


def test_optimizers_type_names():
    assert optimizers.Step is int
    for n in ("Params", "Updates", "State", "InitFn", "UpdateFn", "ParamsFn"):
        assert hasattr(optimizers, n) and n in optimizers.__all__
