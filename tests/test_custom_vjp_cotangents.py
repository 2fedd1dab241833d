"""What custom_vjp's bwd is given and may return, as JAX 0.10.2 (values and error types
from /work/notes/b33/customad/vjp_cts.py run with JAX): float0 cotangents for integer
and key outputs; None, float0 or any value for an integer or key argument means zero;
another float dtype for a float argument is cast; a wrong structure is a TypeError and a
wrong shape a ValueError naming the argument."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

FLOAT0 = ft.dtypes.float0


def _with_key(bwd):
    @ft.custom_vjp
    def f(x, key):
        return x * 2.0

    f.defvjp(lambda x, key: (f(x, key), key), bwd)
    return f


@pytest.mark.parametrize("key_ct", ["none", "float0"])
def test_key_argument_cotangent(key_ct):
    # JAX: grad 3.0; bwd may give None or float0 zeros for the key (before: a float0
    # raised "has structure PyTreeDef(*) but the argument has structure ...KeyArray...")
    give = (lambda k: None) if key_ct == "none" else (lambda k: np.zeros((), FLOAT0))
    f = _with_key(lambda key, ct: (ct * 3.0, give(key)))
    key = ft.random.key(0)
    assert float(ft.grad(f)(1.0, key)) == 3.0
    assert float(ft.jit(ft.grad(f))(1.0, key)) == 3.0
    assert float(ft.vjp(f, 1.0, key)[1](1.0)[0]) == 3.0


@pytest.mark.parametrize("given", ["none", "float", "float0"])
def test_integer_argument_cotangent_is_zero(given):
    # JAX ignores what bwd gives for an integer argument (before: a float cotangent
    # raised "has dtype float64 but must have dtype int64", float0 "not a valid array")
    give = {"none": lambda ct: None, "float": lambda ct: ct * 0.5,
            "float0": lambda ct: np.zeros((), FLOAT0)}[given]

    @ft.custom_vjp
    def f(x, n):
        return x * n

    f.defvjp(lambda x, n: (f(x, n), (x, n)), lambda r, ct: (ct * r[1], give(ct)))
    gx, gn = ft.vjp(f, 2.0, 3)[1](1.0)
    assert float(gx) == 3.0 and float(gn) == 0.0
    g = ft.grad(f, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(g[0]) == 3.0 and g[1].dtype == FLOAT0


def test_integer_and_key_outputs_give_bwd_float0():
    seen = []

    @ft.custom_vjp
    def f(x, key):
        return x * 2.0, x.astype(fnp.int32), key

    def bwd(r, ct):
        seen.append([(c.dtype, c.shape) for c in ct])
        return ct[0] * 5.0, None

    f.defvjp(lambda x, key: (f(x, key), None), bwd)
    assert float(ft.grad(lambda x: f(x, ft.random.key(1))[0])(1.0)) == 5.0
    assert seen == [[(np.dtype(np.float64), ()), (FLOAT0, ()), (FLOAT0, ())]]


def test_float_cotangent_of_another_width_is_cast():
    # JAX api_test test_excess_precision_hell: a float32 cotangent for a bfloat16 primal
    # is accepted (JAX keeps float32; functrans casts to the primal's bfloat16: the value
    # 1.0 either way). Before: TypeError "has dtype float32 but must have dtype bfloat16".
    @ft.custom_vjp
    def fb(x):
        return x

    fb.defvjp(lambda x: (x, None), lambda _, ct: (ct.astype(fnp.float32),))
    g = ft.grad(lambda x: fb(x).astype(fnp.float32))(fnp.bfloat16(1.5))
    assert float(g) == 1.0 and g.dtype == fnp.bfloat16
    g = ft.jit(ft.grad(lambda x: fb(x * 3.0).astype(fnp.float32)))(fnp.bfloat16(1.5))
    assert float(g) == 3.0

    @ft.custom_vjp
    def fs(x):
        return x.sum()

    fs.defvjp(lambda x: (fs(x), x), lambda r, ct: (fnp.full(3, 0.25, fnp.float32) * ct,))
    np.testing.assert_array_equal(ft.jit(ft.grad(fs))(np.ones(3)), [0.25] * 3)


def test_complex_cotangent_for_a_real_argument_raises():
    # JAX returns the complex cotangent as the real input's gradient; casting would drop
    # the imaginary part silently, so functrans refuses
    @ft.custom_vjp
    def fs(x):
        return x.sum()

    fs.defvjp(lambda x: (fs(x), x), lambda r, ct: (fnp.ones(3, fnp.complex128) * 1j * ct,))
    with pytest.raises(TypeError, match="argument 0 of 'fs'.*complex128"):
        ft.grad(fs)(np.ones(3))


def test_wrong_structure_and_shape_errors_name_the_argument():
    @ft.custom_vjp
    def fd(d, y):
        return d["a"] * d["b"] * y

    fd.defvjp(lambda d, y: (fd(d, y), (d, y)), lambda r, ct: (None, {"a": ct}))
    with pytest.raises(TypeError, match="same container.*argument 1 of 'fd'"):
        ft.grad(fd, argnums=1)({"a": 1.0, "b": 2.0}, 3.0)
    fd.defvjp(lambda d, y: (fd(d, y), (d, y)), lambda r, ct: (ct,))
    with pytest.raises(TypeError, match="same container.*one cotangent per"):
        ft.grad(fd, argnums=1)({"a": 1.0, "b": 2.0}, 3.0)

    @ft.custom_vjp
    def fs(x):
        return x.sum()

    fs.defvjp(lambda x: (fs(x), x), lambda r, ct: (ct,))
    with pytest.raises(ValueError, match=r"argument 0 of 'fs' \(leaf 0\).*f64\[\].*f64\[3\]"):
        ft.vjp(fs, np.ones(3))[1](1.0)
    fs.defvjp(lambda x: (fs(x), x),
              lambda r, ct: (ft.custom_derivatives.SymbolicZero.from_primal_value(np.ones(2)),))
    with pytest.raises(ValueError, match="SymbolicZero"):
        ft.grad(fs)(np.ones(3))


def test_none_subtrees_in_bwd_cotangents():
    # JAX custom_api_test test_pytree_nones_returned_by_bwd: None stands for a zero
    # subtree, also where the argument itself holds a None (before: structure TypeError)
    @ft.custom_vjp
    def f(x):
        return x[0]

    x = (1.0, (2.0, None))
    for cts, want in ((lambda z: ((z, (None, None)),), 0.0), (lambda z: ((z, None),), 0.0),
                      (lambda z: ((z, (3.0 * z, None)),), 3.0)):
        f.defvjp(lambda x: (f(x), None), lambda _, z, cts=cts: cts(z))
        g = ft.grad(f)(x)
        assert float(g[0]) == 1.0 and float(g[1][0]) == want and g[1][1] is None
    f.defvjp(lambda x: (f(x), None), lambda _, z: ((z,),))
    with pytest.raises(TypeError, match="same container.*argument 0 of 'f'"):
        ft.grad(f)(x)
