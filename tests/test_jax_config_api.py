"""JAX's top-level option API on functrans: ``ft.config.update`` with JAX's option names,
the option context managers (``ft.numpy_rank_promotion``, ``ft.debug_infs``...), the host
queries, ``float0``, ``fnp.bool`` and lax's platform / random / token names. Expected
values and messages are JAX 0.10.2's (x64 enabled) where JAX has them."""
import os
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import experimental, lax
from functrans.numpy._promotion_mode import TypePromotionError


# ---------------------------------------------------------------- config.update names

ACCEPTED = [("jax_enable_x64", True), ("jax_debug_nans", False), ("jax_debug_infs", False),
            ("jax_platform_name", "cpu"), ("jax_platforms", "cpu"),
            ("jax_default_matmul_precision", "highest"), ("jax_numpy_rank_promotion", "allow"),
            ("jax_log_compiles", False), ("jax_disable_jit", False),
            ("jax_default_prng_impl", "threefry2x32"), ("jax_threefry_partitionable", True),
            ("jax_persistent_cache_min_compile_time_secs", 0.0),
            ("jax_numpy_dtype_promotion", "standard"), ("jax_transfer_guard", "allow"),
            ("jax_softmax_custom_jvp", True), ("jax_default_device", None),
            ("jax_explain_cache_misses", False), ("jax_check_tracer_leaks", False),
            ("jax_debug_key_reuse", False), ("jax_enable_custom_prng", False),
            ("jax_legacy_prng_key", "allow"), ("jax_allow_f16_reductions", True)]


@pytest.mark.parametrize("name, value", ACCEPTED, ids=[n for n, _ in ACCEPTED])
def test_jax_option_names_are_accepted_and_read_back(name, value):
    old = ft.config.read(name)
    try:
        ft.config.update(name, value)
        assert ft.config.read(name) == value
        assert getattr(ft.config, name) == value          # jax.config.jax_enable_x64 style
    finally:
        ft.config.update(name, old)


REFUSED = [("jax_enable_x64", False, ValueError), ("jax_threefry_partitionable", False,
                                                    NotImplementedError),
           ("jax_default_prng_impl", "rbg", NotImplementedError),
           ("jax_no_execution", True, NotImplementedError),
           ("jax_platform_name", "tpu", ValueError),
           ("jax_default_matmul_precision", "F16_F16_F16", ValueError),
           ("jax_numpy_rank_promotion", "sometimes", ValueError),
           ("jax_numpy_dtype_promotion", "loose", ValueError),
           ("jax_transfer_guard", "bogus", ValueError),
           ("jax_default_device", ft.Device("cuda", 0), NotImplementedError),
           ("jax_debug_key_reuse", True, NotImplementedError),
           ("jax_enable_custom_prng", True, NotImplementedError),
           ("jax_legacy_prng_key", "error", NotImplementedError),
           ("jax_allow_f16_reductions", False, NotImplementedError),
           ("jax_not_an_option", 1, AttributeError)]


@pytest.mark.parametrize("name, value, error", REFUSED, ids=[f"{n}={v}" for n, v, _ in REFUSED])
def test_values_functrans_cannot_honour_raise_and_change_nothing(name, value, error):
    before = ft.config.options()
    with pytest.raises(error, match=name.removeprefix("jax_") if error is not AttributeError
                       else "unknown functrans option"):
        ft.config.update(name, value)
    assert ft.config.options() == before


def test_context_managers_restore_and_refuse_on_entry():
    with ft.default_matmul_precision("float32"), ft.default_device(ft.devices("cpu")[0]):
        assert ft.config.read("default_matmul_precision") == "float32"
        assert (fnp.ones(3) @ fnp.ones(3)).item() == 3.0
    assert ft.config.read("default_matmul_precision") is None
    assert ft.config.read("default_device") is None
    with ft.transfer_guard("disallow"):
        assert ft.config.read("transfer_guard_host_to_device") == "disallow"
        assert fnp.asarray(np.ones(2)).tolist() == [1.0, 1.0]
    assert ft.config.read("transfer_guard_host_to_device") is None
    with pytest.raises(ValueError, match="enable_x64 cannot be turned off"):
        with ft.enable_x64(False):
            pass
    with pytest.raises(ValueError, match="enable_x64 cannot be turned off"):
        with experimental.disable_x64():
            pass
    with experimental.enable_x64():
        assert fnp.asarray(1.0).dtype == np.float64
    with ft.explain_cache_misses():
        assert ft.config.read("log_compiles") is True
    assert ft.config.read("log_compiles") is False


def test_compilation_cache_dir_names_the_disk_cache_folder(tmp_path):
    before = os.environ.get("FUNCTRANS_CACHE_DIR")
    ft.config.update("jax_compilation_cache_dir", str(tmp_path))
    try:
        assert os.environ["FUNCTRANS_CACHE_DIR"] == str(tmp_path)
    finally:
        ft.config.update("jax_compilation_cache_dir", None)
    assert os.environ.get("FUNCTRANS_CACHE_DIR") == before


# ---------------------------------------------------------------- debug_infs, no_tracing

def test_debug_infs_names_the_equation_and_turns_off_again():
    f = ft.jit(lambda x: fnp.exp(x) * 2.0)
    assert np.isinf(f(1000.0))
    with ft.debug_infs():
        with pytest.raises(FloatingPointError, match=r"debug_infs: inf produced .*'exp'"):
            f(1000.0)
        assert f(1.0).item() == pytest.approx(2 * np.e)
        with pytest.raises(FloatingPointError, match="argument 0 .* already holds an inf"):
            f(np.inf)
        assert np.isnan(ft.jit(lambda x: x * 0.0)(np.nan))     # NaNs are debug_nans's
    assert np.isinf(f(1000.0))


def test_no_tracing_refuses_a_cache_miss_only():
    f = ft.jit(lambda x: x + 1)
    f(1.0)
    with ft.no_tracing():
        assert f(2.0).item() == 3.0
        with pytest.raises(RuntimeError, match="'no_tracing' is set"):
            f(np.ones(3))
    assert f(np.ones(3)).tolist() == [2.0, 2.0, 2.0]


def test_disable_jit_option_applies_everywhere_and_the_context_manager_wins():
    f = ft.jit(lambda x: x * 2 if x > 0 else -x)      # Python control flow on a value
    ft.config.update("jax_disable_jit", True)
    try:
        assert f(3.0) == 6.0
        with ft.disable_jit(False):
            with pytest.raises(Exception):
                f(3.0)
        assert f(-2.0) == 2.0
    finally:
        ft.config.update("jax_disable_jit", False)
    with pytest.raises(Exception):
        f(3.0)


def test_check_tracer_leaks_scans_after_each_jit_trace():
    kept = []

    def inner_leak(x):
        def body(y):
            kept.append(y)             # a vmap tracer escapes, under the jit
            return y * 2
        return ft.vmap(body)(x)

    with ft.checking_leaks():
        with pytest.raises(ft.errors.UnexpectedTracerError,
                           match=r"1 tracer\(s\) leaked out of jit\(<lambda>\).*from a jit"):
            ft.jit(lambda x: kept.append(x) or x)(1.0)
        with pytest.raises(ft.errors.UnexpectedTracerError, match="leaked out of "
                           "jit\\(inner_leak\\): f64\\[\\] from a vmap"):
            ft.jit(inner_leak)(fnp.ones(2))
        kept.clear()
        # no false alarm: nested transforms, loops, custom rules, remat, nested jit
        body = lambda c, x: (c + fnp.sin(x), c * x)
        f = lambda x: ft.lax.scan(body, 0.0, x)[0]
        assert ft.jit(ft.grad(f))(fnp.ones(3)).shape == (3,)
        assert ft.jit(ft.vmap(ft.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2))))(
            fnp.ones((2, 3))).shape == (2, 3)
        assert ft.jit(ft.grad(ft.checkpoint(lambda x: fnp.sin(fnp.sin(x)))))(1.0) > 0
        assert ft.jit(lambda x: ft.jit(lambda y: y * 2)(x) + 1)(1.0).item() == 3.0
        assert ft.jit(ft.hessian(lambda x: fnp.sum(x ** 3)))(fnp.ones(2)).tolist() == \
            [[6.0, 0.0], [0.0, 6.0]]
    kept.append(None)
    assert ft.jit(lambda x: kept.append(x) or x)(2.0).item() == 2.0     # off again


# ---------------------------------------------------------------- rank promotion

def _both(f, *args):
    """f's result eagerly and under jit (each must agree: the same error or value)."""
    return [f(*args), ft.jit(f)(*args)]


def test_rank_promotion_raise_eager_jit_operators_and_where():
    with ft.numpy_rank_promotion("raise"):
        for f in (lambda a, b: a + b, fnp.multiply, lambda a, b: a < b, fnp.power,
                  fnp.nextafter, fnp.arctan2, lambda a, b: fnp.clip(b, a, 2.0)):
            with pytest.raises(ValueError, match=r"shapes \((3,|2, 3)\) \((2, 3|3,)\).*"
                               "numpy_rank_promotion='raise'"):
                f(fnp.ones(3), fnp.ones((2, 3)))
            with pytest.raises(ValueError, match="numpy_rank_promotion='raise'"):
                ft.jit(f)(fnp.ones(3), fnp.ones((2, 3)))
        # no rank promotion: same ranks, scalars, 0-d arrays, matmul's batch rule
        assert [r.shape for r in _both(lambda a, b: a * b, fnp.ones((3, 1)),
                                       fnp.ones((3, 4)))] == [(3, 4)] * 2
        assert [r.shape for r in _both(lambda a: a + 1.0 + fnp.ones(()), fnp.ones(3))] \
            == [(3,)] * 2
        assert (fnp.ones((2, 3, 4)) @ fnp.ones((4, 5))).shape == (2, 3, 5)
        # where broadcasts its operands without the check, as JAX 0.10.2's (its
        # scipy_spatial_test selects rows by a (4,) condition under 'raise')
        for f in (lambda a, b: fnp.where(a > 0, b, 0.0), lambda a, b: fnp.where(b > 0, a, b)):
            assert [r.shape for r in _both(f, fnp.ones(3), fnp.ones((2, 3)))] == [(2, 3)] * 2
    assert (fnp.ones(3) + fnp.ones((2, 3))).shape == (2, 3)      # 'allow' again


def test_rank_promotion_warn():
    with ft.numpy_rank_promotion("warn"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fnp.ones(3) + fnp.ones((2, 3))
    assert out.shape == (2, 3)
    assert [w.category for w in seen] == [UserWarning]
    assert "rank promotion on shapes (3,) (2, 3)" in str(seen[0].message)


# ---------------------------------------------------------------- strict dtype promotion

F32, F64, I32 = fnp.ones(3, "float32"), fnp.ones(3), fnp.ones(3, "int32")
# (operation, JAX 0.10.2's result dtype under 'strict', or None: TypePromotionError)
STRICT = [("f32+f64", lambda: F32 + F64, None), ("f32+1.0", lambda: F32 + 1.0, "float32"),
          ("i32+1.0", lambda: I32 + 1.0, None), ("i32+1", lambda: I32 + 1, "int32"),
          ("i32+True", lambda: I32 + True, None), ("f32+1j", lambda: F32 + 1j, None),
          ("c64+1.0", lambda: fnp.ones(2, "complex64") + 1.0, "complex64"),
          ("u8+1", lambda: fnp.ones(2, "uint8") + 1, "uint8"),
          ("bool&True", lambda: fnp.ones(2, bool) & True, "bool"),
          ("f32+np.float64", lambda: F32 + np.float64(1), None),
          ("f32<f64", lambda: F32 < F64, None), ("i32**2", lambda: I32 ** 2, "int32"),
          ("where f32/f64", lambda: fnp.where(True, F32, F64), None),
          ("where f64/0.0", lambda: fnp.where(F64 > 0, F64, 0.0), "float64"),
          ("logical_and", lambda: fnp.logical_and(F32, F64), None),
          ("fmod", lambda: fnp.fmod(F32, F64), None), ("heaviside", lambda: fnp.heaviside(F32, F64),
                                                        None),
          ("float_power", lambda: fnp.float_power(F32, F64), None),
          ("clip", lambda: fnp.clip(F32, F64, 2.0), None),
          ("clip f32 0.0", lambda: fnp.clip(F32, 0.0, 2.0), "float32")]


@pytest.mark.parametrize("label, op, want", STRICT, ids=[s[0] for s in STRICT])
def test_strict_dtype_promotion_as_jax(label, op, want):
    with ft.numpy_dtype_promotion("strict"):
        if want is None:
            with pytest.raises(TypePromotionError, match="no available implicit dtype "
                               "promotion path when numpy_dtype_promotion='strict'"):
                op()
        else:
            assert op().dtype == np.dtype(want)
    op()     # 'standard' again: numpy 2's promotion


def test_strict_dtype_promotion_under_transforms():
    with ft.numpy_dtype_promotion("strict"):
        for f in (lambda a, b: a + b, fnp.logical_and, fnp.fmod, lambda a, b: fnp.clip(a, b)):
            with pytest.raises(TypePromotionError):
                ft.jit(f)(F32, F64)
        # a weakly typed traced scalar adapts, as JAX's
        assert ft.jit(lambda t: F32 * t)(2.0).dtype == np.float32
        g = ft.grad(lambda x: fnp.sum(ft.nn.softmax(x) * 2.0))(F32)
        assert g.dtype == np.float32
        assert ft.vmap(lambda x: x * 2.0 + 1)(fnp.ones((2, 3), "float32")).dtype == np.float32


# ---------------------------------------------------------------- host queries, float0, bool

def test_host_queries():
    assert ft.host_id() == ft.process_index() == 0
    assert ft.host_count() == ft.process_count() == 1
    assert ft.host_ids() == ft.process_indices() == [0]
    assert ft.local_devices() == ft.local_devices(process_index=0) == ft.devices()
    with pytest.raises(ValueError, match="process 1 is not this process"):
        ft.local_devices(process_index=1)
    tree = {"w": fnp.ones(2), "n": 3}
    assert ft.copy_to_host_async(tree) is tree
    info = ft.print_environment_info(return_string=True)
    assert info.startswith("functrans:") and "numpy:" in info and "backend:" in info
    with pytest.raises(NotImplementedError, match="live_arrays"):
        ft.live_arrays()


def test_float0_is_the_integer_gradient_dtype():
    assert ft.float0 is ft.dtypes.float0
    g = ft.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(1.0, 3)
    assert g[0].item() == 3.0 and g[1].dtype == ft.float0


def test_float0_gradients_come_out_of_jit():
    # JAX 0.10.2: jit(grad(f, allow_int=True)) returns the float0 zeros as eager grad does
    g = ft.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)
    for x in (1.0, 2.0):                        # the second call: the fast path
        dx, dn = ft.jit(g)(x, 3)
        assert dx.item() == 3.0 and dn.dtype == ft.float0 and dn.shape == ()
    h = ft.grad(lambda x, n: fnp.sum(x * n), argnums=(0, 1), allow_int=True)
    dx, dn = ft.jit(h)(np.ones(2), np.arange(2))
    assert dx.tolist() == [0.0, 1.0] and dn.dtype == ft.float0 and dn.shape == (2,)


def test_fnp_bool_is_numpy_2s_bool():
    assert fnp.bool == np.bool_ and np.dtype(fnp.bool) == np.bool_
    assert fnp.ones(2, dtype=fnp.bool).dtype == np.bool_
    assert fnp.arange(3).astype(fnp.bool).tolist() == [False, True, True]
    assert ft.jit(lambda x: fnp.bool(x))(2.0).item() is True
    assert isinstance(np.True_, fnp.bool)


# ---------------------------------------------------------------- lax names

def test_platform_dependent_picks_the_default_backends_branch():
    f = lambda y: lax.platform_dependent(y, cpu=lambda x: x * x, default=lambda x: x * 3)
    backend_is_cpu = ft.default_backend() in ("cpu", "interpret")
    assert float(f(2.0)) == (4.0 if backend_is_cpu else 6.0)
    assert ft.jit(f)(2.0).item() == float(f(2.0))
    assert ft.grad(f)(2.0).item() == (4.0 if backend_is_cpu else 3.0)
    assert float(lax.platform_dependent(1.0, tpu=lambda x: x, default=lambda x: -x)) == -1.0
    with pytest.raises(NotImplementedError, match="no branch for the platform"):
        lax.platform_dependent(1.0, tpu=lambda x: x)


def test_rng_bit_generator_shapes_dtypes_and_key_advance():
    key = np.array([7, 9, 0xFFFFFFFF, 0], np.uint32)
    new, b = lax.rng_bit_generator(key, (200,))
    assert new.tolist() == [7, 9, 0, 1]          # the 64-bit counter carries
    assert b.shape == (200,) and b.dtype == np.uint32
    new2, b2 = ft.jit(lambda k: lax.rng_bit_generator(k, (200,)))(key)
    assert new2.tolist() == new.tolist() and b2.tolist() == b.tolist()
    _, b3 = lax.rng_bit_generator(new, (200,))
    assert (b3 != b).mean() > 0.99                # the next key draws other words
    for dt in (np.uint8, np.uint64):
        _, w = lax.rng_bit_generator(key, (2, 3), dtype=dt,
                                     algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
        assert w.shape == (2, 3) and w.dtype == dt
    # roughly uniform: the mean of 2000 uint8 words near 127.5 (sd 1.7)
    _, w = lax.rng_bit_generator(key, (2000,), dtype=np.uint8)
    assert abs(float(np.mean(w)) - 127.5) < 8
    with pytest.raises(TypeError, match="key must be uint32 of shape"):
        lax.rng_bit_generator(np.zeros(2, np.uint64), (2,))
    with pytest.raises(TypeError, match="dtype must be one of"):
        lax.rng_bit_generator(key, (2,), dtype=np.float32)


def test_type_names_tokens_and_host_rng_uniform():
    assert lax.DotDimensionNumbers is not None and lax.ConvGeneralDilatedDimensionNumbers
    assert lax.PrecisionLike is not None
    # present since 544a111: tokens are leafless pytrees, rng_uniform a host draw per call
    tok = lax.after_all(lax.create_token(), lax.create_token())
    assert ft.tree_util.tree_leaves(tok) == []
    u = lax.rng_uniform(np.float32(2.0), np.float32(3.0), (1000,))
    assert u.dtype == np.float32 and u.shape == (1000,) and 2.0 <= float(u.min()) <= float(u.max()) < 3.0
