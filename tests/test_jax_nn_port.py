"""Regressions found by running JAX 0.10.2's tests/nn_test.py and tests/image_test.py
against functrans (driver in /work/jt31/jtrand): complex initializers, initializer dtypes,
one_hot errors, image.resize shape checks. Stored numbers are JAX 0.10.2's (x64 on)."""
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import image, nn, random
from functrans.errors import ConcretizationTypeError
from functrans.nn import initializers

# JAX 0.10.2: initializer()(random.PRNGKey(0), (2, 3), dtype)
_COMPLEX = {
    ("glorot_uniform", np.complex64): [
        [0.8200225234031677 + 0.037606675177812576j, 0.37868639826774597 + 0.049995072185993195j,
         -0.37172481417655945 - 0.20871786773204803j],
        [-0.20084692537784576 + 0.23715190589427948j, 0.06604526191949844 + 0.3861202001571655j,
         0.5563427805900574 + 0.5177786350250244j]],
    ("glorot_uniform", np.complex128): [
        [0.770254674940236 + 0.4273945883192983j, 0.4458954284534317 - 0.23091720332456625j,
         -0.0732036415077644 - 0.7235456718455461j],
        [-0.7818870636120616 - 0.4263356296473816j, -0.3887817598731391 - 0.273616477272527j,
         -0.1647087245955426 - 0.5072100692980851j]],
    ("he_normal", np.complex64): [
        [1.3880053758621216 + 0.06365466862916946j, 0.46200233697891235 + 0.06099463254213333j,
         -0.45955777168273926 - 0.25803473591804504j],
        [-0.24083223938941956 + 0.2843649685382843j, 0.08079720288515091 + 0.4723643958568573j,
         0.853076159954071 + 0.7939432859420776j]],
    ("he_normal", np.complex128): [
        [1.5996852118722846 + 0.887624346611947j, 0.5668737584057927 - 0.29356861402050116j,
         -0.10806158883299034 - 1.0680820418553925j],
        [-1.7527257713025453 - 0.9556999726474764j, -0.48900891838193233 - 0.34415425673820893j,
         -0.21230027650486652 - 0.6537652344917136j]],
}


@pytest.mark.parametrize("name,dtype", list(_COMPLEX))
def test_variance_scaling_complex_dtypes(name, dtype):
    """nn_test.testInitializer / testInitializerProvider (complex64/complex128 cases):
    JAX draws complex weights (uniform on a disk; a normal with truncated modulus);
    functrans raised ValueError 'dtype must be a floating dtype'."""
    got = getattr(initializers, name)()(random.PRNGKey(0), (2, 3), dtype)
    assert got.dtype == dtype
    rtol = 2e-6 if dtype == np.complex64 else 1e-14
    np.testing.assert_allclose(np.asarray(got), np.array(_COMPLEX[name, dtype]), rtol=rtol)


def test_variance_scaling_complex_moments():
    """The complex uniform has E|w|^2 = scale / fan (independent of the stored draws)."""
    w = initializers.lecun_uniform()(random.PRNGKey(1), (200, 300), np.complex128)
    w = np.asarray(w) * np.sqrt(200)
    assert abs(np.mean(np.abs(w) ** 2) - 1.0) < 0.02
    assert abs(np.mean(w)) < 0.01
    assert np.abs(w).max() <= np.sqrt(2) + 1e-12


def test_variance_scaling_float32_rounds_as_jax():
    """variance_scaling rounds its variance and deviation in the weights' dtype as JAX:
    float32 draws equal JAX's bit for bit."""
    got = initializers.variance_scaling(2.0, "fan_avg", "truncated_normal")(
        random.PRNGKey(0), (2, 3), np.float32)
    want = np.array([[1.4804586172103882, 1.7436027526855469, -0.41961944103240967],
                     [-0.07629602402448654, 0.1708279550075531, -0.9279706478118896]],
                    np.float32)
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("name,want", [
    ("uniform", [0.32421875, 0.28515625, 0.078125]),
    ("normal", [0.193359375, 0.09130859375, -0.5]),
    ("truncated_normal", [0.1796875, 0.08349609375, -0.47265625])])
def test_initializer_float32_scale_keeps_bfloat16(name, want):
    """nn_test.testAccidentalUpcasting: a float32 array scale must not promote bfloat16
    draws (functrans returned float32)."""
    init = getattr(initializers, name)(fnp.array(0.5, dtype=np.float32), fnp.bfloat16)
    got = init(random.PRNGKey(0), (3,))
    assert got.dtype == fnp.bfloat16
    assert np.asarray(got.astype(np.float32)).tolist() == want


def test_one_hot_traced_num_classes_is_concretization_error():
    """nn_test.testOneHotConcretizationError: JAX raises ConcretizationTypeError."""
    with pytest.raises(ConcretizationTypeError, match="num_classes"):
        ft.jit(nn.one_hot)(3, 5)


def test_one_hot_float_input_warns():
    """nn_test.testOneHotNonInteger: float class indices are deprecated in JAX (a
    DeprecationWarning); the values are still the one-hot rows."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        got = nn.one_hot(fnp.array([1.0, 2.0]), 3)
    assert any(issubclass(w.category, DeprecationWarning) for w in rec)
    assert np.asarray(got).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.one_hot(fnp.array([1, 2], np.uint8), 3)


def test_resize_rejects_fractional_shape():
    """image_test.testResizeWithUnusualShapes: a fractional output shape is a TypeError
    in JAX; functrans truncated 10.5 to 10. Array shapes stay accepted."""
    x = fnp.ones((3, 4))
    assert image.resize(x, fnp.array((10, 17)), "nearest").shape == (10, 17)
    with pytest.raises(TypeError, match="integers"):
        image.resize(x, [10.5, 17], "bicubic")
    with pytest.raises(TypeError, match="integers"):
        image.scale_and_translate(x, (3.0, 4), (0, 1), fnp.ones(2), fnp.zeros(2), "linear")
