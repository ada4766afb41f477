"""Transforms and the calibration correction, checked against independent numpy/scipy matrices."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from pipeline import kinematics as k
from pipeline.calibration import Correction
from pipeline.review import kinematics_review
from pipeline.urdf import load_robot

REPO = Path(__file__).resolve().parents[1]
IDENT = k.IDENTITY
RPYS = [
    (0.0, 0.0, 0.0),
    (0.1, 0.0, 0.0),
    (0.0, 0.2, 0.0),
    (0.0, 0.0, -0.3),
    (0.3, -0.7, 1.9),
    (-2.5, 1.2, 3.0),
    (0.0, 1.57079632679, 0.0),
    (1e-4, -5e-4, 8e-4),
]


def np_rx(a: float) -> np.ndarray:
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


def np_ry(a: float) -> np.ndarray:
    return np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])


def np_rz(a: float) -> np.ndarray:
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])


def np_h(rot: np.ndarray, xyz: tuple[float, float, float]) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = rot
    out[:3, 3] = xyz
    return out


def np_rpy(rpy: tuple[float, float, float]) -> np.ndarray:
    return np_rz(rpy[2]) @ np_ry(rpy[1]) @ np_rx(rpy[0])


@pytest.mark.parametrize("rpy", RPYS)
def test_rpy_matrix_is_rz_ry_rx(rpy: tuple[float, float, float]) -> None:
    ours = np.array(k.rpy_matrix(rpy))
    assert np.allclose(ours, np_rpy(rpy), atol=1e-15)
    # scipy's extrinsic "xyz" Euler angles are URDF's roll-pitch-yaw.
    assert np.allclose(ours, Rotation.from_euler("xyz", rpy).as_matrix(), atol=1e-15)


@pytest.mark.parametrize("rpy", RPYS)
def test_matrix_rpy_round_trips(rpy: tuple[float, float, float]) -> None:
    back = k.matrix_rpy(k.rpy_matrix(rpy))
    assert np.allclose(np.array(k.rpy_matrix(back)), np_rpy(rpy), atol=1e-12)
    if abs(rpy[1]) < 1.5:
        assert np.allclose(back, rpy, atol=1e-12)


def test_matrix_rpy_at_gimbal_lock_keeps_the_rotation() -> None:
    rotation = np_rpy((0.4, math.pi / 2, -0.2))
    back = k.matrix_rpy(tuple(map(tuple, rotation)))  # type: ignore[arg-type]
    assert back[2] == 0.0
    assert np.allclose(np_rpy(back), rotation, atol=1e-12)


@pytest.mark.parametrize("rpy", RPYS)
def test_quaternions_agree_with_scipy(rpy: tuple[float, float, float]) -> None:
    x, y, z, w = Rotation.from_euler("xyz", rpy).as_quat()
    expected = np.array([w, x, y, z]) * (1 if w >= 0 else -1)
    assert np.allclose(k.rpy_quaternion(rpy), expected, atol=1e-15)
    assert np.allclose(k.matrix_quaternion(k.rpy_matrix(rpy)), expected, atol=1e-12)
    assert np.allclose(k.quaternion_matrix(k.rpy_quaternion(rpy)), np_rpy(rpy), atol=1e-15)


@pytest.mark.parametrize("axis", [(1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.3, 0.4, 1.2)])
@pytest.mark.parametrize("angle", [0.0, 0.7, -2.9])
def test_axis_angle_agrees_with_scipy(axis: tuple[float, float, float], angle: float) -> None:
    unit = np.array(axis) / np.linalg.norm(axis)
    expected = Rotation.from_rotvec(unit * angle).as_matrix()
    assert np.allclose(k.axis_angle_matrix(axis, angle), expected, atol=1e-15)


def test_correction_composes_translation_then_rotation_in_the_origin_frame() -> None:
    origin = k.transform((0.1, 0.0, 0.615), (0.0, 0.0, math.pi / 2))
    xyz, rpy = (0.001, 0.002, -0.003), (0.004, -0.005, 0.006)
    ours = np.array(k.corrected_origin(origin, xyz, rpy))
    # Independent: T' = T_origin · Trans(xyz) · R(rpy), each matrix written out here.
    t_origin = np_h(np_rz(math.pi / 2), (0.1, 0.0, 0.615))
    expected = t_origin @ np_h(np.eye(3), xyz) @ np_h(np_rpy(rpy), (0.0, 0.0, 0.0))
    assert np.allclose(ours, expected, atol=1e-15)
    # By hand: a yaw of 90 degrees maps the correction's x to the parent's y, its y to -x.
    assert np.allclose(ours[:3, 3], (0.1 - 0.002, 0.001, 0.615 - 0.003), atol=1e-15)
    # The other order, R(rpy) before Trans(xyz), moves the joint elsewhere.
    wrong = t_origin @ np_h(np_rpy(rpy), (0.0, 0.0, 0.0)) @ np_h(np.eye(3), xyz)
    assert not np.allclose(ours[:3, 3], wrong[:3, 3], atol=1e-9)


def test_zero_correction_is_the_origin() -> None:
    origin = k.transform((0.3, -0.2, 0.1), (0.1, 0.2, 0.3))
    assert k.corrected_origin(origin, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) == origin


def _np_fk(
    robot_dir: str, positions: dict[str, float], corrections: dict[str, Correction]
) -> np.ndarray:
    robot = load_robot(REPO / "robots" / robot_dir, REPO)
    out = np.eye(4)
    for joint in robot.chain(robot.root(), "tool0") or []:
        step = np_h(np_rpy(joint.origin.rpy), joint.origin.xyz)
        c = corrections.get(joint.name)
        if c is not None:
            step = step @ np_h(np.eye(3), c.xyz_m) @ np_h(np_rpy(c.rpy_rad), (0.0, 0.0, 0.0))
        axis = np.array(joint.axis) / (np.linalg.norm(joint.axis) or 1.0)
        q = positions.get(joint.name, 0.0)
        if joint.type == "revolute":
            step = step @ np_h(Rotation.from_rotvec(axis * q).as_matrix(), (0.0, 0.0, 0.0))
        out = out @ step
    return out


@pytest.mark.parametrize("model", ["abb_irb2400", "lbr_iiwa_14_r820"])
def test_forward_kinematics_at_a_pose_matches_numpy(model: str) -> None:
    robot = load_robot(REPO / "robots" / model, REPO)
    path = robot.chain(robot.root(), "tool0") or []
    positions = {j.name: 0.1 * (i + 1) * (-1) ** i for i, j in enumerate(path)}
    steps = [
        (k.transform(j.origin.xyz, j.origin.rpy), j.type, j.axis, positions[j.name]) for j in path
    ]
    ours = np.array(k.forward_kinematics(steps))
    assert np.allclose(ours, _np_fk(model, positions, {}), atol=1e-12)


def test_review_gives_nominal_and_calibrated_tip_at_home() -> None:
    robot = load_robot(REPO / "robots" / "abb_irb2400", REPO)
    corrections = {
        "joint_2": Correction((0.0004, 0.0, -0.0002), (0.0, 0.0008, 0.0)),
        "joint_3": Correction((0.0, 0.0, 0.0003), (0.0, -0.0005, 0.0)),
    }
    review = kinematics_review(robot, corrections)
    assert (review["base_link"], review["tip_link"]) == ("base_link", "tool0")
    # By hand from the URDF: x = 0.1 + 0.258 + 0.497 + 0.085, z = 0.615 + 0.705 + 0.135.
    assert review["tip"]["nominal"]["xyz_m"] == [0.94, 0.0, 1.455]
    expected = _np_fk("abb_irb2400", {}, corrections)
    assert np.allclose(review["tip"]["calibrated"]["xyz_m"], expected[:3, 3], atol=1e-12)
    calibrated = review["joints"]["joint_2"]["calibrated_origin"]
    assert calibrated["xyz_m"] == [0.1004, 0.0, 0.6148]
    assert calibrated["rpy_rad"] == [0.0, 0.0008, 0.0]
    difference = review["tip"]["difference"]
    assert math.isclose(difference["angle_rad"], 0.0003, abs_tol=1e-12)
    assert math.isclose(
        difference["distance_m"],
        float(np.linalg.norm(expected[:3, 3] - [0.94, 0, 1.455])),
        abs_tol=1e-12,
    )


def test_review_numbers_are_rounded_and_never_negative_zero() -> None:
    assert k.rounded(-0.0) == 0.0 and math.copysign(1.0, k.rounded(-1e-15)) == 1.0
    assert k.rounded(0.1234567890123456) == 0.123456789012
    assert repr(float(repr(k.rounded(1 / 3)))) == repr(k.rounded(1 / 3))


angles = st.floats(min_value=-math.pi, max_value=math.pi, allow_nan=False)
small = st.floats(min_value=-0.01, max_value=0.01, allow_nan=False)
vec3 = st.tuples(small, small, small)


@settings(max_examples=200, deadline=None)
@given(origin_rpy=st.tuples(angles, angles, angles), xyz=vec3, rpy=vec3)
def test_correction_matches_numpy_for_any_origin(
    origin_rpy: tuple[float, float, float],
    xyz: tuple[float, float, float],
    rpy: tuple[float, float, float],
) -> None:
    origin_xyz = (0.1, -0.2, 0.3)
    ours = np.array(k.corrected_origin(k.transform(origin_xyz, origin_rpy), xyz, rpy))
    expected = (
        np_h(np_rpy(origin_rpy), origin_xyz)
        @ np_h(np.eye(3), xyz)
        @ np_h(np_rpy(rpy), (0.0, 0.0, 0.0))
    )
    assert np.allclose(ours, expected, atol=1e-14)
    q = k.matrix_quaternion(k.rotation_part(k.corrected_origin(IDENT, xyz, rpy)))
    assert np.allclose(k.quaternion_matrix(q), np_rpy(rpy), atol=1e-14)
