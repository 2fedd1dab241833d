"""JAX's multi-process helpers in one process: multihost_utils, mesh_utils, the
make_array_from_* constructors, the older shard_map import path and DLPack. (Under
mpiexec: tests/mpi_programs/multihost.py, run by tests/test_distributed.py.)"""
import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import dlpack
from functrans.experimental import mesh_utils, multihost_utils as mu
from functrans.sharding import Device, Mesh, P, SingleDeviceSharding


def test_multihost_utils_one_process_as_jax():
    # JAX 0.10.2, one process: stacked adds an axis; tiled leaves a scalar a scalar
    tree = {"a": np.arange(3), "s": np.float32(3)}
    st, ti = mu.process_allgather(tree), mu.process_allgather(tree, tiled=True)
    assert st["a"].shape == (1, 3) and st["s"].shape == (1,) and st["s"].dtype == np.float32
    assert ti["a"].tolist() == [0, 1, 2] and ti["s"].shape == ()
    assert type(ti["a"]) is np.ndarray
    out = mu.broadcast_one_to_all({"w": np.ones(2), "b": 2.0})
    assert out["w"].tolist() == [1.0, 1.0] and out["b"].shape == ()
    mu.assert_equal({"a": np.arange(3), "s": 1.0})
    mu.sync_global_devices("here")
    with pytest.raises(TypeError, match="concrete"):
        ft.jit(lambda x: mu.process_allgather(x))(np.ones(2))


def test_host_local_and_global_arrays_one_process():
    m = Mesh(mesh_utils.create_device_mesh((1, 1)), ("a", "b"))
    x = np.arange(12.0).reshape(4, 3)
    g = mu.host_local_array_to_global_array({"x": x}, m, {"x": P("a", "b")})["x"]
    assert isinstance(g, ft.Array) and g.sharding == ft.NamedSharding(m, P("a", "b"))
    np.testing.assert_array_equal(g, x)
    back = mu.global_array_to_host_local_array([g], m, P("a"))[0]
    np.testing.assert_array_equal(back, x)
    jitted = ft.jit(lambda v: mu.global_array_to_host_local_array(v, m, P(None, "b")))(g)
    np.testing.assert_array_equal(jitted, x)
    with pytest.raises(ValueError, match="`None` is not a valid input"):
        mu.host_local_array_to_global_array(x, m, None)


def test_make_array_constructors_one_process():
    s = ft.NamedSharding(ft.make_mesh((1,), ("i",)), P("i", None))
    X = np.arange(6.0).reshape(2, 3)
    seen = []
    out = ft.make_array_from_callback(X.shape, s, lambda idx: seen.append(idx) or X[idx])
    assert seen == [(slice(None), slice(None))] and out.sharding == s   # JAX's index
    np.testing.assert_array_equal(out, X)
    a = X.copy()
    local = ft.make_array_from_process_local_data(s, a)
    a[0, 0] = 99.0                          # the Array does not share the caller's memory
    assert local[0, 0] == 0.0 and local.sharding == s
    tree = ft.make_array_from_process_local_data({"x": s, "y": s}, {"x": X, "y": X[:1]},
                                                 {"x": (2, 3), "y": None})
    assert tree["y"].shape == (1, 3)
    np.testing.assert_array_equal(ft.make_array_from_single_device_arrays((2, 3), s, [X]), X)
    whole = ft.make_array_from_callback((3,), SingleDeviceSharding(ft.local_devices()[0]),
                                        lambda idx: np.ones(3)[idx], dtype=np.float32)
    assert whole.dtype == np.float32 and whole.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("call, exc, text", [
    (lambda s: ft.make_array_from_process_local_data(s.mesh, s.spec, np.ones(2)), TypeError,
     "JAX's argument order"),
    (lambda s: ft.make_array_from_process_local_data(s, np.ones(3), (4,)), ValueError,
     "must be the whole dimension"),
    (lambda s: ft.make_array_from_single_device_arrays((4,), s, [np.ones(4)] * 2), ValueError,
     "one device"),
    (lambda s: ft.make_array_from_callback((4,), s, lambda i: np.ones(3)), ValueError,
     r"block has shape \(3,\)"),
    (lambda s: ft.make_array_from_callback((4,), SingleDeviceSharding(Device("cpu", 1)),
                                           lambda i: np.ones(4)), ValueError, "CpuDevice"),
    (lambda s: ft.make_array_from_callback((4, 2, 1), ft.NamedSharding(s.mesh, P(None, None)),
                                           lambda i: np.ones(3)), ValueError, "block"),
    (lambda s: ft.make_array_from_process_local_data(s, np.ones(()),), ValueError, "rank 0"),
    (lambda s: ft.jit(lambda v: ft.make_array_from_process_local_data(s, v))(np.ones(2)),
     TypeError, "concrete"),
])
def test_make_array_errors(call, exc, text):
    with pytest.raises(exc, match=text):
        call(ft.NamedSharding(ft.make_mesh((1,), ("i",)), P("i")))


def test_mesh_utils_and_meshes_of_devices():
    d = mesh_utils.create_device_mesh((1, 1, 1))
    assert d.shape == (1, 1, 1) and d.dtype == object and d.flat[0] == ft.devices()[0]
    with pytest.raises(ValueError, match=r"Number of devices 1 must equal .* \(2,\)"):
        mesh_utils.create_device_mesh((2,))
    h = mesh_utils.create_hybrid_device_mesh((1, 1), (1, 1), process_is_granule=True)
    assert h.shape == (1, 1)
    with pytest.raises(ValueError, match="process_is_granule"):
        mesh_utils.create_hybrid_device_mesh((1,), (1,))
    m = Mesh(d, ("x", "y", "z"))
    assert m.axis_sizes == (1, 1, 1) and m == Mesh((1, 1, 1), ("x", "y", "z"))
    assert ft.sharding.Mesh(ft.devices(), "i").axis_names == ("i",)
    with pytest.raises(ValueError, match="in order"):
        Mesh([Device("cpu", 1)], "i")
    from functrans.experimental.shard_map import shard_map
    assert shard_map is ft.shard_map


def test_dlpack_shares_read_only_and_copies_in():
    x = fnp.arange(4.0)
    y = np.from_dlpack(x)                     # numpy asks for DLPack 1.0: a read-only view
    assert np.shares_memory(x, y) and not y.flags.writeable
    assert x.__dlpack_device__() == (1, 0)
    cap = x.__dlpack__()                      # no max_version: cannot say read-only, a copy
    assert type(cap).__name__ == "PyCapsule"
    with pytest.raises(BufferError, match="read-only"):
        x.__dlpack__(copy=False)
    a = np.arange(3.0)
    for f in (dlpack.from_dlpack, fnp.from_dlpack):
        z = f(a)
        a[0] += 1.0                           # the producer writes: the Array keeps its value
        assert isinstance(z, ft.Array) and z[0] == a[0] - 1.0
    assert dlpack.from_dlpack(x) is x and dlpack.from_dlpack(x, copy=True) is not x
    with pytest.raises(ValueError, match="copy=False"):
        dlpack.from_dlpack(a, copy=False)
    with pytest.raises(TypeError, match="__dlpack__"):
        dlpack.from_dlpack([1, 2])
    assert dlpack.is_supported_dtype(np.float16) and not dlpack.is_supported_dtype(object)
    assert dlpack.from_dlpack(np.ones(2, np.int16)).dtype == np.int16     # a dtype now
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        np.from_dlpack(x)
