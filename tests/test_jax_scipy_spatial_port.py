"""Regressions found by running JAX 0.10.2's tests/scipy_spatial_test.py against
functrans (driver: /work/jt30/jtscipy). Each test names the JAX test it comes from."""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation as ORotation, Slerp as OSlerp

from functrans.scipy.spatial.transform import Rotation, Slerp


def test_slerp_computes_in_the_key_times_dtype():
    # testSlerp (compute_times=np.zeros(1) / np.zeros(2), float32 keys): the float64 query
    # times made float64 rotations; JAX casts them to the key times' dtype (float32)
    q = np.random.RandomState(0).randn(10, 4).astype(np.float32)
    s = Slerp.init(np.arange(10, dtype=np.float32), Rotation.from_quat(q))
    ref = OSlerp(np.arange(10.0), ORotation.from_quat(q.astype(np.float64)))
    for t in (0.0, np.zeros(1), np.array([0.5, 3.25, 8.9])):
        got = s(t).as_rotvec()
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref(t).as_rotvec(), rtol=1e-5, atol=1e-6)
    s64 = Slerp.init(np.arange(10.0), Rotation.from_quat(q.astype(np.float64)))
    got = s64(np.array([0.5, 3.25], np.float32)).as_rotvec()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref([0.5, 3.25]).as_rotvec(), rtol=1e-12, atol=1e-12)
