"""JAX's pjit_test, single-device parts, ported: jit's JAX keywords (in_shardings,
out_shardings, device, compiler_options), the AOT stages' attributes and call checks,
device_put(donate=), experimental.pjit."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.experimental.pjit import pjit


def test_jit_takes_shardings_and_outputs_carry_them():
    s = ft.sharding.SingleDeviceSharding(ft.devices()[0])
    f = ft.jit(lambda x: x * 2, in_shardings=s, out_shardings=s, device=ft.devices()[0],
               compiler_options={"xla_embed_ir_in_executable": True})
    out = f(np.arange(4.0))
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0] and out.sharding == s
    ns = ft.NamedSharding(ft.make_mesh((1,), ("x",)), ft.P("x"))
    a, b = ft.jit(lambda x, y: (x + y, x), out_shardings=(ns, None))(np.ones(4), 1.0)
    assert a.sharding == ns and b.tolist() == [1.0] * 4
    assert pjit(lambda x: x + 2, in_shardings=None, out_shardings=None)(1) == 3
    assert ft.grad(ft.jit(lambda x: (x ** 2).sum(), in_shardings=s))(np.ones(3)).tolist() == [2.0] * 3
    with pytest.raises(ValueError, match="kwargs when in_shardings"):
        ft.jit(lambda x: x, in_shardings=s)(x=np.arange(8.0))
    with pytest.raises(ValueError, match="host"):
        ft.jit(lambda x: x, device="gpu")


def test_lowered_and_compiled_describe_their_arguments_and_outputs():
    # testLowerCompile, test_lowered_out_info, test_jit_trace, test_jit_trace_lower_and_compile
    x = fnp.arange(64).reshape(8, 8)
    lo = ft.jit(lambda x, y: x @ y, donate_argnums=1).lower(x, x + 1)
    c = lo.compile()
    assert lo.in_avals == c.in_avals and len(lo.in_avals) == 2 and lo.in_avals[1] == {}
    assert [a.shape for a in lo.in_avals[0]] == [(8, 8), (8, 8)]
    assert lo.out_info.shape == (8, 8) and c.out_info.dtype == np.int64
    assert [a.donated for a in lo.args_info[0]] == [False, True]
    assert lo.donate_argnums == c.donate_argnums == (1,)
    assert lo.cost_analysis()["flops"] > 0 and isinstance(lo.as_text(dialect="hlo"), str)
    assert lo.compiler_ir() is not None and c(x, x + 1).tolist() == (x @ (x + 1)).tolist()
    t = ft.jit(lambda x: x * 2).trace(fnp.arange(8, dtype="int32"))
    assert len(t.in_avals) == 2 and len(t.in_avals[0]) == 1 and t.args_info[0][0].shape == (8,)
    assert ft.ShapeDtypeStruct((2,), "float32", sharding=None).sharding is None


def test_compiled_call_checks_its_arguments():
    # testLowerCompileInTreeMismatch, testLowerCompileArgTypeMismatch,
    # test_aot_error_on_dced_avals_mismatch: JAX raises TypeError (was: cast / computed)
    x = fnp.arange(64).reshape(8, 8)
    exe = ft.jit(lambda x, y: x @ y).lower(x.astype("float32"), x.astype("float32")).compile()
    with pytest.raises(TypeError, match="does not match the input pytree"):
        exe([x], [x + 1])
    with pytest.raises(TypeError, match="Argument types differ.*\n.*float32.*int32"):
        exe(x.astype("int32"), x.astype("int32"))
    with pytest.raises(TypeError, match="Argument types differ"):
        exe(fnp.ones((8, 9), "float32"), fnp.ones((9, 8), "float32"))
    g = ft.jit(lambda x, n: x * n, static_argnums=1).lower(np.ones(3), 3).compile()
    assert g(np.ones(3)).tolist() == [3.0] * 3                 # static arguments left out
    k = ft.jit(lambda x, y, **kw: x - y).lower(1.0, 2.0, a=1.0).compile()
    assert float(k(1.0, 2.0, a=5.0)) == -1.0 and float(k(3, 2.0, a=1.0)) == 1.0


def test_device_put_donate_and_may_alias():
    # test_device_put_copy_donate, test_device_put_donate_pytree
    y = ft.device_put(np.arange(4), ft.devices()[0], may_alias=False, donate=False)
    z = ft.device_put(y, donate=True)
    assert y.is_deleted() and z.tolist() == [0, 1, 2, 3]
    a, b = fnp.ones(2), fnp.ones(2)
    ft.device_put((a, b), donate=(True, False))
    assert a.is_deleted() and not b.is_deleted()
