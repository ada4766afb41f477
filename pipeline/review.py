"""A cell's kinematics review: what its calibration's corrections do to the tip of the SRDF's
`manipulator` group, at the group's home state."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pipeline.calibration import Correction
from pipeline.homepose import home_positions
from pipeline.kinematics import (
    Mat4,
    corrected_origin,
    forward_kinematics,
    matrix_quaternion,
    matrix_rpy,
    rotation_angle,
    rotation_part,
    rounded,
    transform,
    translation_part,
)
from pipeline.urdf import Robot

# the review's `pose`: every chain joint at 0, or at the positions `joint_positions` lists
POSE_AT_ZERO = "home: every joint at 0"
POSE_LISTED = "home: every joint at joint_positions"


def manipulator_tip(robot: Robot, manipulator: frozenset[str] = frozenset()) -> str:
    """The tip of the manipulator: the link of the SRDF's `manipulator` group farthest from the
    root (most joints; ties: name order), the tip of its chain (`tool0` on the example robots).

    With no link of that group (every compiled SRDF has one: missing_manipulator_group), the
    leaf link below the most movable joints from the root (ties: more joints in all, then name
    order). That alone is not the arm's tip on a robot with a gripper: a prismatic finger is one
    movable joint more than the flange (a Panda's `panda_leftfinger`).
    """
    root = robot.root()
    depths = {
        link: len(path) for link in manipulator if (path := robot.chain(root, link)) is not None
    }
    if depths:
        return min(depths, key=lambda link: (-depths[link], link))
    children = {joint.parent for joint in robot.joints}
    best: tuple[int, int, str] | None = None
    for link in robot.links:
        if link.name in children or link.name == root:
            continue
        path = robot.chain(root, link.name) or []
        movable = sum(1 for joint in path if joint.type != "fixed")
        key = (-movable, -len(path), link.name)
        best = key if best is None or key < best else best
    return root if best is None else best[2]


def _pose(t: Mat4) -> dict[str, list[float]]:
    # Rounded to 1e-12 (a picometre, a picoradian: far below any calibration's resolution)
    # because sin/cos may differ in the last bit between libm builds; unrounded, that noise
    # would change cell.json's bytes, and with them its stamp, from one machine to the next.
    rotation = rotation_part(t)
    return {
        "xyz_m": [rounded(v) for v in translation_part(t)],
        "rpy_rad": [rounded(v) for v in matrix_rpy(rotation)],
        "quaternion_wxyz": [rounded(v) for v in matrix_quaternion(rotation)],
    }


def kinematics_review(
    robot: Robot,
    corrections: dict[str, Correction],
    manipulator: frozenset[str] = frozenset(),
    home: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Nominal and corrected joint origins, and the tip's pose at home, for the tip of the SRDF's
    manipulator group (its links: `manipulator`; home: its `home` state's values, homepose.py)."""
    root, tip = robot.root(), manipulator_tip(robot, manipulator)
    origins: dict[str, Mat4] = {}
    corrected: dict[str, Mat4] = {}
    for joint in robot.joints:
        origins[joint.name] = transform(joint.origin.xyz, joint.origin.rpy)
        c = corrections.get(joint.name)
        corrected[joint.name] = (
            origins[joint.name]
            if c is None
            else corrected_origin(origins[joint.name], c.xyz_m, c.rpy_rad)
        )
    path = robot.chain(root, tip) or []
    positions = home_positions(robot, path, home or {})
    at = [(j, positions.get(j.name, 0.0)) for j in path]
    nominal_tip = forward_kinematics([(origins[j.name], j.type, j.axis, q) for j, q in at])
    calibrated_tip = forward_kinematics([(corrected[j.name], j.type, j.axis, q) for j, q in at])
    nominal_xyz, calibrated_xyz = translation_part(nominal_tip), translation_part(calibrated_tip)
    delta = [b - a for a, b in zip(nominal_xyz, calibrated_xyz, strict=True)]
    at_zero = all(q == 0.0 for q in positions.values())
    # written only off zero, so that a review at 0 (every shipped cell's) keeps its bytes
    listed = {} if at_zero else {"joint_positions": positions}
    return {
        **listed,
        "convention": "T' = T_origin · Trans(xyz) · R(rpy), R = Rz(yaw)·Ry(pitch)·Rx(roll)",
        "pose": POSE_AT_ZERO if at_zero else POSE_LISTED,
        "base_link": root,
        "tip_link": tip,
        "joints": {
            name: {
                "correction": {"xyz_m": list(c.xyz_m), "rpy_rad": list(c.rpy_rad)},
                "nominal_origin": _pose(origins[name]),
                "calibrated_origin": _pose(corrected[name]),
                "in_tip_chain": any(j.name == name for j in path),
            }
            for name, c in sorted(corrections.items())
        },
        "tip": {
            "nominal": _pose(nominal_tip),
            "calibrated": _pose(calibrated_tip),
            "difference": {
                "xyz_m": [rounded(v) for v in delta],
                "distance_m": rounded(math.sqrt(sum(v * v for v in delta))),
                "angle_rad": rounded(
                    rotation_angle(rotation_part(nominal_tip), rotation_part(calibrated_tip))
                ),
            },
        },
    }
