"""Rigid transforms in plain floats: URDF roll-pitch-yaw, quaternions, 4x4 homogeneous matrices.

Pure Python with a fixed order of operations (no BLAS), so the same inputs give the same bits
wherever the same libm runs. Conventions are URDF's: `rpy = (roll, pitch, yaw)` about the fixed
x, y, z axes, so `R = Rz(yaw) · Ry(pitch) · Rx(roll)`; quaternions are `(w, x, y, z)`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
Mat3 = tuple[Vec3, Vec3, Vec3]
Row4 = tuple[float, float, float, float]
Mat4 = tuple[Row4, Row4, Row4, Row4]

IDENTITY: Mat4 = (
    (1.0, 0.0, 0.0, 0.0),
    (0.0, 1.0, 0.0, 0.0),
    (0.0, 0.0, 1.0, 0.0),
    (0.0, 0.0, 0.0, 1.0),
)


def rot_x(angle: float) -> Mat3:
    """Rotation by `angle` rad about the x axis."""
    c, s = math.cos(angle), math.sin(angle)
    return ((1.0, 0.0, 0.0), (0.0, c, -s), (0.0, s, c))


def rot_y(angle: float) -> Mat3:
    """Rotation by `angle` rad about the y axis."""
    c, s = math.cos(angle), math.sin(angle)
    return ((c, 0.0, s), (0.0, 1.0, 0.0), (-s, 0.0, c))


def rot_z(angle: float) -> Mat3:
    """Rotation by `angle` rad about the z axis."""
    c, s = math.cos(angle), math.sin(angle)
    return ((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0))


def mat3_mul(a: Mat3, b: Mat3) -> Mat3:
    """The product a · b of two 3x3 matrices."""
    rows = [
        (
            a[i][0] * b[0][0] + a[i][1] * b[1][0] + a[i][2] * b[2][0],
            a[i][0] * b[0][1] + a[i][1] * b[1][1] + a[i][2] * b[2][1],
            a[i][0] * b[0][2] + a[i][1] * b[1][2] + a[i][2] * b[2][2],
        )
        for i in range(3)
    ]
    return (rows[0], rows[1], rows[2])


def transpose3(r: Mat3) -> Mat3:
    """The transpose of a 3x3 matrix (the inverse of a rotation)."""
    return ((r[0][0], r[1][0], r[2][0]), (r[0][1], r[1][1], r[2][1]), (r[0][2], r[1][2], r[2][2]))


def rotation_angle(a: Mat3, b: Mat3) -> float:
    """The angle in rad of the rotation taking frame a to frame b, accurate for small angles."""
    r = mat3_mul(transpose3(a), b)
    sin_part = math.hypot(r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]) / 2
    return math.atan2(sin_part, (r[0][0] + r[1][1] + r[2][2] - 1) / 2)


def rpy_matrix(rpy: Vec3) -> Mat3:
    """URDF roll-pitch-yaw as a rotation matrix: Rz(yaw) · Ry(pitch) · Rx(roll)."""
    roll, pitch, yaw = rpy
    return mat3_mul(rot_z(yaw), mat3_mul(rot_y(pitch), rot_x(roll)))


def matrix_rpy(r: Mat3) -> Vec3:
    """The URDF roll-pitch-yaw of a rotation matrix, pitch in [-pi/2, pi/2] (as KDL computes it).

    Within 1e-12 rad of gimbal lock (|pitch| = pi/2) only roll -+ yaw is defined; yaw is set to 0.
    Near the lock rpy is ill-conditioned: the quaternion is the unambiguous form.
    """
    pitch = math.atan2(-r[2][0], math.hypot(r[0][0], r[1][0]))
    if abs(pitch) > math.pi / 2 - 1e-12:
        # r[1][1] = cos(roll -+ yaw), r[1][2] = -sin(roll -+ yaw) at pitch = +-pi/2.
        return (math.atan2(-r[1][2], r[1][1]), pitch, 0.0)
    return (math.atan2(r[2][1], r[2][2]), pitch, math.atan2(r[1][0], r[0][0]))


def rpy_quaternion(rpy: Vec3) -> Quat:
    """The unit quaternion (w, x, y, z) of URDF roll-pitch-yaw."""
    roll, pitch, yaw = rpy
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return canonical_quaternion(
        (
            cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
        )
    )


def canonical_quaternion(q: Quat) -> Quat:
    """The same rotation with w >= 0 (q and -q are one rotation; pick one for stable output)."""
    w, x, y, z = q
    if w < 0 or (w == 0 and (x, y, z) < (0.0, 0.0, 0.0)):
        return (-w, -x, -y, -z)
    return q


def quaternion_matrix(q: Quat) -> Mat3:
    """The rotation matrix of a quaternion (w, x, y, z), normalised first."""
    n = math.sqrt(sum(c * c for c in q))
    if n == 0.0:
        raise ValueError("the zero quaternion is no rotation")
    w, x, y, z = (c / n for c in q)
    return (
        (1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
        (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
        (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)),
    )


def matrix_quaternion(r: Mat3) -> Quat:
    """The unit quaternion (w, x, y, z) of a rotation matrix, with w >= 0."""
    trace = r[0][0] + r[1][1] + r[2][2]
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = (0.25 * s, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s)
    elif r[0][0] > r[1][1] and r[0][0] > r[2][2]:
        s = 2.0 * math.sqrt(1.0 + r[0][0] - r[1][1] - r[2][2])
        q = ((r[2][1] - r[1][2]) / s, 0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s)
    elif r[1][1] > r[2][2]:
        s = 2.0 * math.sqrt(1.0 + r[1][1] - r[0][0] - r[2][2])
        q = ((r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + r[2][2] - r[0][0] - r[1][1])
        q = ((r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s)
    return canonical_quaternion(q)


def axis_angle_matrix(axis: Vec3, angle: float) -> Mat3:
    """Rotation by `angle` rad about `axis` (normalised first; Rodrigues' formula)."""
    n = math.sqrt(axis[0] ** 2 + axis[1] ** 2 + axis[2] ** 2)
    if n == 0.0:
        raise ValueError("a rotation axis must not be the zero vector")
    x, y, z = axis[0] / n, axis[1] / n, axis[2] / n
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return (
        (t * x * x + c, t * x * y - s * z, t * x * z + s * y),
        (t * x * y + s * z, t * y * y + c, t * y * z - s * x),
        (t * x * z - s * y, t * y * z + s * x, t * z * z + c),
    )


def homogeneous(rotation: Mat3, translation: Vec3) -> Mat4:
    """The 4x4 homogeneous transform of a rotation and a translation."""
    r, p = rotation, translation
    return (
        (r[0][0], r[0][1], r[0][2], p[0]),
        (r[1][0], r[1][1], r[1][2], p[1]),
        (r[2][0], r[2][1], r[2][2], p[2]),
        (0.0, 0.0, 0.0, 1.0),
    )


def transform(xyz: Vec3, rpy: Vec3) -> Mat4:
    """A URDF `<origin xyz rpy>` as a 4x4 transform: Trans(xyz) · R(rpy)."""
    return homogeneous(rpy_matrix(rpy), xyz)


def translation(xyz: Vec3) -> Mat4:
    """Pure translation Trans(xyz)."""
    return homogeneous(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)), xyz)


def rotation_part(t: Mat4) -> Mat3:
    """The 3x3 rotation block of a transform."""
    return ((t[0][0], t[0][1], t[0][2]), (t[1][0], t[1][1], t[1][2]), (t[2][0], t[2][1], t[2][2]))


def translation_part(t: Mat4) -> Vec3:
    """The translation column of a transform."""
    return (t[0][3], t[1][3], t[2][3])


def compose(a: Mat4, b: Mat4) -> Mat4:
    """The product a · b of two homogeneous transforms (b expressed in a's frame)."""
    rot = mat3_mul(rotation_part(a), rotation_part(b))
    pb = translation_part(b)
    p = tuple(a[i][0] * pb[0] + a[i][1] * pb[1] + a[i][2] * pb[2] + a[i][3] for i in range(3))
    return homogeneous(rot, (p[0], p[1], p[2]))


def chain(transforms: Iterable[Mat4]) -> Mat4:
    """The product of transforms from left to right (the identity when there are none)."""
    out = IDENTITY
    for t in transforms:
        out = compose(out, t)
    return out


def corrected_origin(origin: Mat4, xyz: Vec3, rpy: Vec3) -> Mat4:
    """A calibration correction on a joint origin: T' = T_origin · Trans(xyz) · R(rpy)."""
    return compose(origin, compose(translation(xyz), homogeneous(rpy_matrix(rpy), (0, 0, 0))))


def joint_motion(kind: str, axis: Vec3, position: float) -> Mat4:
    """The motion of a joint at `position`: rotation about, or translation along, its axis."""
    if kind in ("revolute", "continuous"):
        return homogeneous(axis_angle_matrix(axis, position), (0.0, 0.0, 0.0))
    if kind == "prismatic":
        n = math.sqrt(axis[0] ** 2 + axis[1] ** 2 + axis[2] ** 2)
        return translation((axis[0] / n * position, axis[1] / n * position, axis[2] / n * position))
    return IDENTITY


def forward_kinematics(steps: Sequence[tuple[Mat4, str, Vec3, float]]) -> Mat4:
    """The tip pose of a serial chain of (origin, joint type, axis, position), base to tip."""
    return chain(
        compose(origin, joint_motion(kind, axis, position))
        for origin, kind, axis, position in steps
    )


def rounded(value: float, digits: int = 12) -> float:
    """A float rounded to `digits` decimals, with -0.0 written as 0.0."""
    out = round(value, digits)
    return out if out != 0.0 else 0.0
