"""JAX's sharding names on functrans: ``make_mesh``, ``NamedSharding``, ``P``, ``set_mesh``,
``device_put(x, sharding)``, ``Array.sharding``, ``lax.with_sharding_constraint``. A process
is one device and holds arrays whole: a sharding is checked (as JAX checks it) and
recorded, values never change. The many-process side runs in tests/test_pmap.py's
mpiexec program."""
import numpy as np
import pytest

import functrans as ft
from functrans import lax
from functrans.sharding import (Mesh, NamedSharding, P, Sharding, SingleDeviceSharding,
                                get_mesh, make_mesh, set_mesh)


def test_names_where_jax_has_them():
    assert ft.make_mesh is make_mesh and ft.NamedSharding is NamedSharding and ft.P is P
    assert ft.set_mesh is set_mesh and ft.sharding.SingleDeviceSharding is SingleDeviceSharding
    assert ft.local_devices() == ft.devices() and ft.process_count() == 1


def test_make_mesh_and_named_sharding():
    mesh = make_mesh((1, 1), ("data", "model"))
    assert mesh == Mesh((1, 1), ("data", "model")) and mesh.devices.shape == (1, 1)
    s = NamedSharding(mesh, P("data", None))
    assert isinstance(s, Sharding) and s.mesh is mesh and s.spec == P("data", None)
    assert s.shard_shape((4, 3)) == (4, 3) and s.is_fully_replicated
    assert s.is_fully_addressable and s.num_devices == 1
    assert s.device_set == {ft.devices()[0]} and s == NamedSharding(mesh, P("data", None))
    assert s.with_spec(P()).spec == P()
    with pytest.raises(ValueError, match="needs 2 processes, but the MPI world has 1"):
        make_mesh((2,), ("i",))
    assert make_mesh((1,), ("i",), devices=ft.devices()) == Mesh((1,), ("i",))
    with pytest.raises(ValueError, match="devices must be None"):
        make_mesh((1,), ("i",), devices=["gpu"])
    # JAX 0.10's axis types: Auto and Explicit compute the same values here (was an error)
    AT = ft.sharding.AxisType
    assert make_mesh((1, 1), ("a", "b"), axis_types=(AT.Explicit, AT.Auto)) == \
        Mesh((1, 1), ("a", "b"))
    with pytest.raises(ValueError, match="one AxisType.Auto or AxisType.Explicit per axis"):
        make_mesh((1,), ("i",), axis_types=("Explicit",))
    with pytest.raises(ValueError, match="Manual axes exist only inside shard_map"):
        make_mesh((1,), ("i",), axis_types=(AT.Manual,))
    with pytest.raises(ValueError, match="'k', which is not an axis"):
        NamedSharding(mesh, P("k"))
    with pytest.raises(ValueError, match="used twice"):
        NamedSharding(mesh, P("data", "data"))
    with pytest.raises(TypeError, match="must be a PartitionSpec"):
        NamedSharding(mesh, ("data",))


def test_device_put_records_the_sharding_and_keeps_values():
    mesh = make_mesh((1,), ("i",))
    s = NamedSharding(mesh, P("i"))
    x = np.arange(6.0).reshape(3, 2)
    y = ft.device_put({"a": x, "b": np.ones(2)}, s)
    assert y["a"].sharding == s and y["a"].tolist() == x.tolist()
    assert isinstance((y["a"] + 1).sharding, SingleDeviceSharding)   # results: whole, here
    assert ft.device_put(x).sharding == SingleDeviceSharding(ft.devices()[0])
    with pytest.raises(ValueError, match="names 3 dimensions, but the array has rank 2"):
        ft.device_put(x, NamedSharding(mesh, P("i", None, None)))
    with pytest.raises(ValueError, match="needs a mesh"):
        ft.device_put(x, P("i"))
    with set_mesh(mesh):
        assert get_mesh() is mesh and ft.device_put(x, P(None, "i")).sharding.spec == P(None, "i")
    assert get_mesh() is None
    set_mesh(mesh)              # called, it stays set
    try:
        assert ft.device_put(x, P("i")).sharding == s
    finally:
        set_mesh(None)


def test_with_sharding_constraint_is_identity_on_values():
    mesh = make_mesh((1,), ("i",))
    s = NamedSharding(mesh, P("i"))
    f = ft.jit(lambda x: lax.with_sharding_constraint(2.0 * x, s) + 1.0)
    x = np.arange(4.0)
    assert f(x).tolist() == [1.0, 3.0, 5.0, 7.0]
    assert ft.grad(lambda x: lax.with_sharding_constraint(x * x, s).sum())(x).tolist() == \
        [0.0, 2.0, 4.0, 6.0]
    out = lax.with_sharding_constraint((x, {"b": x}), (s, {"b": NamedSharding(mesh, P())}))
    assert out[0].sharding == s and out[1]["b"].sharding.spec == P()
    with set_mesh(mesh):
        assert ft.vmap(lambda v: lax.with_sharding_constraint(v, P()))(x).tolist() == x.tolist()
    with pytest.raises(ValueError, match="with_sharding_constraint: .* rank 1"):
        lax.with_sharding_constraint(x, NamedSharding(mesh, P("i", None)))
    for bad in ["i", None, (s, None)]:       # JAX refuses None too
        with pytest.raises(TypeError, match="expected a NamedSharding"):
            lax.with_sharding_constraint((x, x) if isinstance(bad, tuple) else x, bad)
