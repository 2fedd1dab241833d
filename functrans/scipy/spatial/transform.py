"""``functrans.scipy.spatial.transform``: ``Rotation`` (3-D rotations stored as unit
quaternions ``(x, y, z, w)``, scalar last, as scipy's and JAX's) and ``Slerp``
(spherical linear interpolation between key rotations). Both are NamedTuples of
arrays, so they pass through jit and vmap, and every conversion is composed of
functrans operations (differentiable away from the conversions' own singularities).

>>> import numpy as np
>>> from functrans.scipy.spatial.transform import Rotation
>>> r = Rotation.from_rotvec(np.array([0.0, 0.0, np.pi / 2]))
>>> np.round(np.asarray(r.apply(np.array([1.0, 0.0, 0.0]))), 12).tolist()
[0.0, 1.0, 0.0]
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ... import numpy as fnp
from ... import random
from ...array import Array
from ...typing import ArrayLike, DTypeLike

__all__ = ["Rotation", "Slerp"]


def _float(x):
    x = fnp.asarray(x)
    return x if fnp.issubdtype(x.dtype, fnp.floating) else x.astype(fnp.float64)


def _qmul(p, q):
    """The quaternion product p q (scalar last): the rotation q, then p."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    v = pw * qv + qw * pv + fnp.cross(pv, qv)
    w = pw * qw - fnp.sum(pv * qv, axis=-1, keepdims=True)
    return fnp.concatenate([v, w], axis=-1)


def _elementary(axis, angle):
    """The quaternion of a rotation by ``angle`` about coordinate axis 0, 1 or 2."""
    half = angle / 2
    zero = fnp.zeros_like(half)
    parts = [zero, zero, zero]
    parts[axis] = fnp.sin(half)
    return fnp.stack(parts + [fnp.cos(half)], axis=-1)


def _parse_seq(seq):
    if len(seq) not in (1, 2, 3) or not (seq.islower() or seq.isupper()) \
            or any(c not in "xyzXYZ" for c in seq) \
            or any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Euler sequence must be 1 to 3 of 'xyz' (extrinsic) or 'XYZ' "
                         f"(intrinsic) with no axis twice in a row, got {seq!r}")
    return [("xyz".index(c.lower())) for c in seq], seq.isupper()


def _canonical(q):
    """q or -q, whichever has w > 0 (then x > 0, y > 0, z > 0 where w is zero)."""
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return fnp.where(flip[..., None], -q, q)


def _euler_from_quat(q, axes, intrinsic):
    """Bernardes and Viollet's direct quaternion-to-Euler-angles formulas."""
    if intrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    w = q[..., 3]
    if symmetric:
        a, b, c, d = w, q[..., i], q[..., j], q[..., k] * sign
    else:
        a, b = w - q[..., j], q[..., i] + q[..., k] * sign
        c, d = q[..., j] + w, q[..., k] * sign - q[..., i]
    middle = 2 * fnp.arctan2(fnp.hypot(c, d), fnp.hypot(a, b))
    eps = 1e-7
    at_zero, at_pi = fnp.abs(middle) <= eps, fnp.abs(middle - np.pi) <= eps
    half_sum, half_diff = fnp.arctan2(b, a), fnp.arctan2(d, c)
    # gimbal lock: the third angle is set to 0 and the first takes the whole turn
    first = fnp.where(at_zero, 2 * half_sum,
                      fnp.where(at_pi, -2 * half_diff, half_sum - half_diff))
    third = fnp.where(at_zero | at_pi, fnp.zeros_like(first), half_sum + half_diff)
    if not symmetric:
        third = third * sign
        middle = middle - np.pi / 2
    angles = fnp.stack([first, middle, third], axis=-1)
    if intrinsic:
        angles = angles[..., ::-1]
    return (angles + np.pi) % (2 * np.pi) - np.pi


class Rotation(NamedTuple):
    """Rotations in 3 dimensions, one (``quat`` of shape (4,)) or a stack ((N, 4)), as
    unit quaternions ``(x, y, z, w)``. Build them with the ``from_*`` class methods,
    ``identity`` or ``random``; compose with ``*`` (``(p * q).apply(v)`` applies q
    first), invert with ``inv``.

    >>> import numpy as np
    >>> from functrans.scipy.spatial.transform import Rotation
    >>> Rotation.identity().as_quat().tolist()
    [0.0, 0.0, 0.0, 1.0]
    """
    quat: Array

    @classmethod
    def from_quat(cls, quat: ArrayLike) -> "Rotation":
        """From quaternions ``(x, y, z, w)`` (normalised here).

        >>> Rotation.from_quat(np.array([0.0, 0.0, 0.0, 2.0])).as_quat().tolist()
        [0.0, 0.0, 0.0, 1.0]
        """
        q = _float(quat)
        if q.shape[-1:] != (4,) or q.ndim > 2:
            raise ValueError(f"from_quat: expected shape (4,) or (N, 4), got {q.shape}")
        return cls(q / fnp.linalg.norm(q, axis=-1, keepdims=True))

    @classmethod
    def from_matrix(cls, matrix: ArrayLike) -> "Rotation":
        """From rotation matrices ((3, 3) or (N, 3, 3)), by Shepperd's method (the
        largest of the four quaternion components computed first).

        >>> Rotation.from_matrix(np.eye(3)).as_quat().tolist()
        [0.0, 0.0, 0.0, 1.0]
        """
        m = _float(matrix)
        if m.shape[-2:] != (3, 3) or m.ndim > 3:
            raise ValueError(f"from_matrix: expected shape (3, 3) or (N, 3, 3), got {m.shape}")
        diag = fnp.diagonal(m, axis1=-2, axis2=-1)
        trace = fnp.sum(diag, axis=-1)
        choice = fnp.argmax(fnp.concatenate([diag, trace[..., None]], axis=-1), axis=-1)
        cands = []
        for i in range(3):
            j, k = (i + 1) % 3, (i + 2) % 3
            q = [None] * 4
            q[i] = 1 - trace + 2 * m[..., i, i]
            q[j] = m[..., j, i] + m[..., i, j]
            q[k] = m[..., k, i] + m[..., i, k]
            q[3] = m[..., k, j] - m[..., j, k]
            cands.append(fnp.stack(q, axis=-1))
        cands.append(fnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
        q = cands[3]
        for i in range(3):
            q = fnp.where((choice == i)[..., None], cands[i], q)
        return cls(q / fnp.linalg.norm(q, axis=-1, keepdims=True))

    @classmethod
    def from_rotvec(cls, rotvec: ArrayLike, degrees: bool = False) -> "Rotation":
        """From rotation vectors (axis times angle, radians or ``degrees``).

        >>> np.round(Rotation.from_rotvec(np.array([np.pi, 0, 0])).as_quat(), 12).tolist()
        [1.0, 0.0, 0.0, 0.0]
        """
        v = _float(rotvec)
        if v.shape[-1:] != (3,) or v.ndim > 2:
            raise ValueError(f"from_rotvec: expected shape (3,) or (N, 3), got {v.shape}")
        if degrees:
            v = v * (np.pi / 180)
        angle2 = fnp.sum(v * v, axis=-1)
        small = angle2 < 1e-6
        angle = fnp.sqrt(fnp.where(small, 1.0, angle2))
        # sin(angle / 2) / angle, its Taylor series near 0
        scale = fnp.where(small, 0.5 - angle2 / 48 + angle2 * angle2 / 3840,
                          fnp.sin(angle / 2) / angle)
        w = fnp.where(small, 1 - angle2 / 8 + angle2 * angle2 / 384, fnp.cos(angle / 2))
        return cls(fnp.concatenate([scale[..., None] * v, w[..., None]], axis=-1))

    @classmethod
    def from_mrp(cls, mrp: ArrayLike) -> "Rotation":
        """From modified Rodrigues parameters ``axis * tan(angle / 4)``.

        >>> np.round(Rotation.from_mrp(np.array([1.0, 0, 0])).as_quat(), 12).tolist()
        [1.0, 0.0, 0.0, 0.0]
        """
        p = _float(mrp)
        if p.shape[-1:] != (3,) or p.ndim > 2:
            raise ValueError(f"from_mrp: expected shape (3,) or (N, 3), got {p.shape}")
        n2 = fnp.sum(p * p, axis=-1, keepdims=True)
        return cls(fnp.concatenate([2 * p, 1 - n2], axis=-1) / (1 + n2))

    @classmethod
    def from_euler(cls, seq: str, angles: ArrayLike, degrees: bool = False) -> "Rotation":
        """From Euler angles about the axes of ``seq``: lower case extrinsic (fixed
        axes), upper case intrinsic (moving axes), 1 to 3 axes; ``angles`` of shape
        (len(seq),) or (N, len(seq)) (a scalar for one axis).

        >>> r = Rotation.from_euler("z", 90, degrees=True)
        >>> np.round(np.asarray(r.as_rotvec(degrees=True)), 9).tolist()
        [0.0, 0.0, 90.0]
        """
        axes, intrinsic = _parse_seq(seq)
        a = _float(angles)
        if a.ndim == 0 or (len(axes) == 1 and a.shape[-1:] != (1,)):
            a = a[..., None]
        if a.shape[-1] != len(axes) or a.ndim > 2:
            raise ValueError(f"from_euler: angles must end in an axis of {len(axes)}, "
                             f"got shape {a.shape}")
        if degrees:
            a = a * (np.pi / 180)
        q = _elementary(axes[0], a[..., 0])
        for n, axis in enumerate(axes[1:], 1):
            e = _elementary(axis, a[..., n])
            q = _qmul(q, e) if intrinsic else _qmul(e, q)
        return cls(q)

    @classmethod
    def identity(cls, num: int | None = None, dtype: DTypeLike = float) -> "Rotation":
        """The identity rotation (a stack of ``num`` if given).

        >>> Rotation.identity(2).as_quat().shape
        (2, 4)
        """
        q = np.zeros((4,) if num is None else (num, 4), dtype)
        q[..., 3] = 1
        return cls(fnp.asarray(q))

    @classmethod
    def random(cls, random_key: Array, num: int | None = None) -> "Rotation":
        """Uniformly distributed rotations (normalised 4-d normal draws).

        >>> from functrans import random
        >>> Rotation.random(random.PRNGKey(0), 3).as_quat().shape
        (3, 4)
        """
        q = random.normal(random_key, (4,) if num is None else (num, 4))
        return cls.from_quat(q)

    @classmethod
    def concatenate(cls, rotations: Sequence["Rotation"]) -> "Rotation":
        """One stack of the given rotations (single ones or stacks).

        >>> len(Rotation.concatenate([Rotation.identity(), Rotation.identity(2)]))
        3
        """
        return cls(fnp.concatenate([fnp.atleast_2d(r.quat) for r in rotations], axis=0))

    @property
    def single(self) -> bool:
        """Whether this is one rotation (not a stack)."""
        return self.quat.ndim == 1

    def __len__(self) -> int:
        if self.single:
            raise TypeError("a single rotation has no len()")
        return self.quat.shape[0]

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("a single rotation is not subscriptable")
        return Rotation(self.quat[indexer])

    def __mul__(self, other: "Rotation") -> "Rotation":
        """The composition: ``other`` first, then ``self``."""
        return Rotation(_qmul(self.quat, other.quat))

    def inv(self) -> "Rotation":
        """The inverse rotation(s).

        >>> r = Rotation.from_rotvec(np.array([0.3, 0.0, 0.0]))
        >>> np.round(np.asarray((r * r.inv()).as_quat()), 12).tolist()
        [0.0, 0.0, 0.0, 1.0]
        """
        return Rotation(self.quat * fnp.asarray([-1.0, -1.0, -1.0, 1.0], self.quat.dtype))

    def magnitude(self) -> Array:
        """The rotation angle(s) in radians, in [0, pi].

        >>> round(float(Rotation.from_rotvec(np.array([0.0, 2.0, 0.0])).magnitude()), 12)
        2.0
        """
        return 2 * fnp.arctan2(fnp.linalg.norm(self.quat[..., :3], axis=-1),
                               fnp.abs(self.quat[..., 3]))

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
        """The quaternions; ``canonical``: the sign with w >= 0; ``scalar_first``:
        ``(w, x, y, z)``.

        >>> q = Rotation.from_quat(np.array([0.6, 0, 0, -0.8])).as_quat(canonical=True)
        >>> [round(float(c), 12) + 0.0 for c in q]
        [-0.6, 0.0, 0.0, 0.8]
        """
        q = _canonical(self.quat) if canonical else self.quat
        return fnp.roll(q, 1, axis=-1) if scalar_first else q

    def as_matrix(self) -> Array:
        """The rotation matrices, (3, 3) or (N, 3, 3).

        >>> Rotation.identity().as_matrix().tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        """
        x, y, z, w = (self.quat[..., i] for i in range(4))
        rows = [[w * w + x * x - y * y - z * z, 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), w * w - x * x + y * y - z * z, 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), w * w - x * x - y * y + z * z]]
        return fnp.stack([fnp.stack(r, axis=-1) for r in rows], axis=-2)

    def as_rotvec(self, degrees: bool = False) -> Array:
        """The rotation vectors (angle in [0, pi] times the axis), radians or ``degrees``.

        >>> np.round(np.asarray(Rotation.from_euler("x", 0.5).as_rotvec()), 12).tolist()
        [0.5, 0.0, 0.0]
        """
        q = fnp.where((self.quat[..., 3:] < 0), -self.quat, self.quat)
        v, w = q[..., :3], q[..., 3]
        angle = 2 * fnp.arctan2(fnp.linalg.norm(v, axis=-1), w)
        a2 = angle * angle
        small = angle < 1e-3
        # angle / sin(angle / 2), its Taylor series near 0
        scale = fnp.where(small, 2 + a2 / 12 + 7 * a2 * a2 / 2880,
                          angle / fnp.sin(fnp.where(small, 1.0, angle) / 2))
        out = scale[..., None] * v
        return out * (180 / np.pi) if degrees else out

    def as_mrp(self) -> Array:
        """The modified Rodrigues parameters (angle at most pi).

        >>> r = Rotation.from_rotvec(np.array([np.pi, 0, 0]))
        >>> np.round(np.asarray(r.as_mrp()), 12).tolist()
        [1.0, 0.0, 0.0]
        """
        q = fnp.where((self.quat[..., 3:] < 0), -self.quat, self.quat)
        return q[..., :3] / (1 + q[..., 3:])

    def as_euler(self, seq: str, degrees: bool = False) -> Array:
        """Euler angles for a 3-axis ``seq`` (as ``from_euler``), in [-pi, pi] (the
        middle one in [0, pi] or [-pi/2, pi/2]); at gimbal lock the third is 0.

        >>> r = Rotation.from_euler("xyz", np.array([0.1, 0.2, 0.3]))
        >>> np.round(np.asarray(r.as_euler("xyz")), 12).tolist()
        [0.1, 0.2, 0.3]
        """
        axes, intrinsic = _parse_seq(seq)
        if len(axes) != 3:
            raise ValueError(f"as_euler: expected a sequence of 3 axes, got {seq!r}")
        angles = _euler_from_quat(self.quat, axes, intrinsic)
        return angles * (180 / np.pi) if degrees else angles

    def apply(self, vectors: ArrayLike, inverse: bool = False) -> Array:
        """The rotated vectors ((3,) or (N, 3); a single rotation applies to each
        vector, a stack pairs with the vectors or applies to one).

        >>> r = Rotation.from_euler("z", np.pi / 2)
        >>> np.round(np.asarray(r.apply(np.array([1.0, 0, 0]), inverse=True)), 12).tolist()
        [0.0, -1.0, 0.0]
        """
        m = self.as_matrix()
        if inverse:
            m = fnp.swapaxes(m, -1, -2)
        v = _float(vectors)
        return fnp.einsum("...ij,...j->...i", m, v)

    def mean(self, weights: ArrayLike | None = None) -> "Rotation":
        """The (weighted) mean rotation: the eigenvector of the largest eigenvalue of
        sum_i w_i q_i q_i^T (Markley et al.), so q and -q count alike.

        >>> Rotation.identity(3).mean().as_quat().tolist()
        [0.0, 0.0, 0.0, 1.0]
        """
        q = fnp.atleast_2d(self.quat)
        w = fnp.ones(q.shape[0], q.dtype) if weights is None else _float(weights)
        k = fnp.einsum("n,ni,nj->ij", w, q, q)
        _, vecs = fnp.linalg.eigh(k)
        return Rotation(_canonical(vecs[:, -1]))


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations: build with
    ``Slerp.init(times, rotations)`` (increasing key times, a stack of key rotations),
    call with times inside [times[0], times[-1]].

    >>> import numpy as np
    >>> from functrans.scipy.spatial.transform import Rotation, Slerp
    >>> keys = Rotation.from_euler("z", np.array([0.0, np.pi / 2]))
    >>> s = Slerp.init(np.array([0.0, 1.0]), keys)
    >>> np.round(np.asarray(s(0.5).as_euler("xyz")), 12).tolist()
    [0.0, 0.0, 0.785398163397]
    """
    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times: ArrayLike, rotations: Rotation) -> "Slerp":
        """The interpolator of ``rotations`` (a stack of at least 2) at ``times``.

        >>> Slerp.init(np.array([0.0, 1.0]), Rotation.identity(2)).rotvecs.shape
        (1, 3)
        """
        if not isinstance(rotations, Rotation) or rotations.single:
            raise TypeError("Slerp.init: rotations must be a stack of Rotation")
        times = _float(times)
        if times.ndim != 1 or times.shape[0] != len(rotations) or times.shape[0] < 2:
            raise ValueError("Slerp.init: times must be 1-d, one per rotation, at least 2")
        delta = fnp.diff(times)
        rotvecs = (rotations[:-1].inv() * rotations[1:]).as_rotvec()
        return cls(times, delta, rotations, rotvecs)

    def __call__(self, times: ArrayLike) -> Rotation:
        """The interpolated rotation(s) at ``times`` (a scalar gives one rotation), computed
        in the key times' dtype, as JAX's (float64 ``times`` for float32 keys give float32)."""
        t = fnp.asarray(times, dtype=self.times.dtype)
        scalar = t.ndim == 0
        t = fnp.atleast_1d(t)
        n = self.times.shape[0]
        idx = fnp.clip(fnp.searchsorted(self.times, t, side="right") - 1, 0, n - 2)
        alpha = (t - self.times[idx]) / self.timedelta[idx]
        step = Rotation.from_rotvec(self.rotvecs[idx] * alpha[:, None])
        out = Rotation(self.rotations.quat[idx]) * step
        return Rotation(out.quat[0]) if scalar else out
