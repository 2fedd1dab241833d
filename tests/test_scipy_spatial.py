"""functrans.scipy.spatial.transform (Rotation, Slerp) against scipy's: every
conversion both ways, Euler sequences (extrinsic/intrinsic, symmetric or not, gimbal
lock round trips), composition, inversion, means, application, interpolation; jit and
vmap (NamedTuple pytrees) and gradients against finite differences."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SRotation
from scipy.spatial.transform import Slerp as SSlerp

import functrans as ft
from functrans.scipy.spatial.transform import Rotation, Slerp
from functrans.test_util import check_grads

_RNG = np.random.default_rng(8)
_Q = _RNG.normal(size=(20, 4))
_REF = SRotation.from_quat(_Q)
_OURS = Rotation.from_quat(_Q)
_V = _RNG.normal(size=(20, 3))


def _close(got, want, tol=1e-14):
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)


def test_conversions_against_scipy():
    _close(_OURS.as_quat(), _REF.as_quat())
    _close(_OURS.as_quat(canonical=True), _REF.as_quat(canonical=True))
    _close(_OURS.as_quat(scalar_first=True), _REF.as_quat(scalar_first=True))
    _close(_OURS.as_matrix(), _REF.as_matrix())
    _close(_OURS.as_rotvec(), _REF.as_rotvec())
    _close(_OURS.as_rotvec(degrees=True), _REF.as_rotvec(degrees=True), 1e-12)
    _close(_OURS.as_mrp(), _REF.as_mrp())
    _close(_OURS.magnitude(), _REF.magnitude())
    _close(Rotation.from_matrix(_REF.as_matrix()).as_quat(canonical=True),
           _REF.as_quat(canonical=True))
    _close(Rotation.from_rotvec(_REF.as_rotvec()).as_matrix(), _REF.as_matrix(), 1e-15 * 8)
    _close(Rotation.from_rotvec(_REF.as_rotvec(degrees=True), degrees=True).as_matrix(),
           _REF.as_matrix(), 1e-14)
    _close(Rotation.from_mrp(_REF.as_mrp()).as_matrix(), _REF.as_matrix())
    tiny = np.array([1e-5, 2e-5, 0.0])
    _close(Rotation.from_rotvec(tiny).as_quat(), SRotation.from_rotvec(tiny).as_quat(), 1e-17)
    _close(Rotation.from_rotvec(tiny).as_rotvec(), tiny, 1e-20)


@pytest.mark.parametrize("seq", ["xyz", "zyx", "XYZ", "ZXZ", "zxz", "xyx", "YXY", "yzx", "XZY"])
def test_euler_against_scipy(seq):
    _close(_OURS.as_euler(seq), _REF.as_euler(seq))
    _close(_OURS.as_euler(seq, degrees=True), _REF.as_euler(seq, degrees=True), 1e-12)
    _close(Rotation.from_euler(seq, _REF.as_euler(seq)).as_matrix(), _REF.as_matrix())
    for middle in (0.0, np.pi / 2, np.pi):          # gimbal lock: any exact decomposition
        if seq[0].lower() != seq[2].lower() and middle != np.pi / 2 or \
                seq[0].lower() == seq[2].lower() and middle == np.pi / 2:
            continue
        ref = SRotation.from_euler(seq, [0.3, middle, 0.1])
        back = Rotation.from_euler(seq, Rotation.from_quat(ref.as_quat()).as_euler(seq))
        _close(back.as_matrix(), ref.as_matrix())


def test_short_euler_sequences_and_errors():
    a = _RNG.uniform(-3, 3, size=(5, 2))
    _close(Rotation.from_euler("xz", a).as_matrix(), SRotation.from_euler("xz", a).as_matrix())
    _close(Rotation.from_euler("XY", a).as_matrix(), SRotation.from_euler("XY", a).as_matrix())
    _close(Rotation.from_euler("y", 0.7).as_matrix(), SRotation.from_euler("y", 0.7).as_matrix())
    for bad in ("xxz", "xYz", "abc", "xyzx"):
        with pytest.raises(ValueError):
            Rotation.from_euler(bad, np.zeros(len(bad)))
    with pytest.raises(ValueError):
        Rotation.from_quat(np.ones(3))
    with pytest.raises(TypeError):
        len(Rotation.identity())


def test_composition_application_mean():
    _close(_OURS.apply(_V), _REF.apply(_V))
    _close(_OURS.apply(_V, inverse=True), _REF.apply(_V, inverse=True))
    _close(_OURS[0].apply(_V), _REF[0].apply(_V))
    _close(_OURS.apply(_V[0]), _REF.apply(_V[0]))
    _close((_OURS * _OURS[::-1]).as_matrix(), (_REF * _REF[::-1]).as_matrix())
    _close(_OURS.inv().as_matrix(), _REF.inv().as_matrix())
    _close(_OURS.mean().as_matrix(), _REF.mean().as_matrix())
    w = np.arange(20.0)
    _close(_OURS.mean(w).as_matrix(), _REF.mean(w).as_matrix())
    both = Rotation.concatenate([_OURS[:3], Rotation.identity()])
    assert len(both) == 4 and not both.single and both[3].single
    _close(Rotation.identity(2).as_matrix(), np.stack([np.eye(3)] * 2))
    drawn = Rotation.random(ft.random.PRNGKey(1), 5).as_quat()
    _close(np.linalg.norm(np.asarray(drawn), axis=-1), np.ones(5))


def test_slerp_against_scipy():
    times = np.array([0.0, 1.0, 3.0, 4.0])
    ours = Slerp.init(times, Rotation.from_quat(_Q[:4]))
    ref = SSlerp(times, SRotation.from_quat(_Q[:4]))
    t = np.linspace(0, 4, 17)
    _close(ours(t).as_matrix(), ref(t).as_matrix())
    _close(ours(2.2).as_matrix(), ref(2.2).as_matrix())
    with pytest.raises(TypeError):
        Slerp.init(times[:1], Rotation.identity())
    jitted = ft.jit(lambda s, x: s(x).as_quat())(ours, t)
    _close(jitted, ours(t).as_quat())


def test_jit_vmap_grads():
    _close(ft.jit(lambda r, v: r.apply(v))(_OURS, _V), _REF.apply(_V))
    _close(ft.vmap(lambda q: Rotation.from_quat(q).as_euler("xyz"))(_Q), _REF.as_euler("xyz"))
    rv = np.array([0.3, -0.4, 0.5])
    check_grads(lambda r, v: Rotation.from_rotvec(r).apply(v), (rv, _V[:3]), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda q: Rotation.from_quat(q).as_euler("ZXZ"), (_Q[:3],), order=1,
                modes=("fwd", "rev"))
    check_grads(lambda m: Rotation.from_matrix(m).as_rotvec(), (_REF[:2].as_matrix(),),
                order=1, modes=("fwd", "rev"))
