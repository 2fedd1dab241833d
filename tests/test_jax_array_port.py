"""JAX's array_test / array_interoperability_test, single-device parts, ported: the
Array type's JAX API (delete, shards, device, namespace, repr, immutability)."""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


def test_delete_makes_every_use_raise_and_is_idempotent():
    # array_test: test_single_device_array_usage_after_delete, test_array_delete_idempotent
    x = fnp.array([1, 2, 3])
    f = ft.jit(lambda v: v + 1)
    f(x)
    x.delete()
    assert x.is_deleted()
    for use in (lambda: x + 1, lambda: f(x), lambda: x.tolist(), lambda: float(x[0])):
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            use()
    x.delete()                                  # twice: allowed, as in JAX
    assert x.is_deleted() and "deleted" in repr(x)


def test_shards_and_host_queries():
    # array_test: test_device_put, test_array_addressable_shards, test_shards_have_correct_dtype
    x = ft.device_put(np.array([1, 2, 3]), ft.devices()[0])
    s, = x.addressable_shards
    assert s.device == ft.devices()[0] and s.index == (slice(None),) and s.replica_id == 0
    assert s.data.tolist() == [1, 2, 3] and isinstance(x.addressable_data(0), ft.Array)
    assert [g.index for g in x.global_shards] == [s.index]
    assert x.is_fully_replicated and x.is_fully_addressable and x.is_ready()
    assert x.on_device_size_in_bytes() == 24 and x.copy_to_host_async() is None
    assert x.sharding.num_devices == 1 and x.sharding.addressable_devices == {ft.devices()[0]}
    assert fnp.ones((), "float32").addressable_shards[0].data.dtype == np.float32


def test_device_and_to_device_are_jax_s():
    x = fnp.arange(3.0)
    assert x.device == ft.devices()[0] and x.devices() == {ft.devices()[0]}
    assert x.to_device(ft.devices()[0]) is x and x.to_device("cpu") is x
    assert x.to_device(ft.sharding.SingleDeviceSharding(ft.devices()[0])) is x
    with pytest.raises(ValueError, match="host"):
        x.to_device("gpu")


def test_in_place_writers_are_absent():
    # JAX arrays have no fill / put; numpy's would change an immutable array silently
    x = fnp.arange(3.0)
    for name in ("fill", "put"):
        assert not hasattr(x, name)
        with pytest.raises(AttributeError, match="immutable"):
            getattr(x, name)
    assert x.tolist() == [0.0, 1.0, 2.0]
    assert np.median(x) == 1.0 and np.sort(fnp.array([2.0, 1.0])).tolist() == [1.0, 2.0]


def test_empty_repr_shows_the_shape():
    # array_test: test_empty_repr
    assert repr(fnp.empty((0, 5), "float32")) == "Array([], shape=(0, 5), dtype=float32)"
    assert repr(fnp.arange(2.0)) == "Array([0., 1.], dtype=float64)"


def test_array_namespace_is_functrans_numpy_also_under_jit():
    x = fnp.arange(3.0)
    assert x.__array_namespace__() is fnp

    def f(v):                       # array-API code: xp from the argument
        xp = v.__array_namespace__()
        return xp.sum(xp.sin(v))
    assert float(ft.jit(f)(x)) == pytest.approx(np.sin([0.0, 1.0, 2.0]).sum())
