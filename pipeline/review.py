"""A cell's kinematics review: what its calibration's corrections do to each tip of the SRDF's
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
from pipeline.urdf import Joint, Robot

# the review's `pose`: every chain joint at 0, or at the positions `joint_positions` lists
POSE_AT_ZERO = "home: every joint at 0"
POSE_LISTED = "home: every joint at joint_positions"
CONVENTION = "T' = T_origin · Trans(xyz) · R(rpy), R = Rz(yaw)·Ry(pitch)·Rx(roll)"


def manipulator_tips(robot: Robot, manipulator: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The tips of the manipulator: each link of the SRDF's `manipulator` group that is no other
    link's ancestor in it (a chain's `tip_link`: `tool0` on the example robots; one per arm of a
    two-arm group), those farthest from the root first (most joints; ties: name order).

    With no link of that group (every compiled SRDF has one: missing_manipulator_group), the
    one leaf link below the most movable joints from the root (_leaf_tip).
    """
    depth = _depths(robot)
    below = [link for link in manipulator if link in depth]
    above: set[str] = set()  # every link above one of them: one walk up each, stopping at one seen
    for link in below:
        joint = robot.parent_joint(link)
        while joint is not None and joint.parent not in above:
            above.add(joint.parent)
            joint = robot.parent_joint(joint.parent)
    tips = sorted((link for link in below if link not in above), key=lambda t: (-depth[t], t))
    return tuple(tips) if tips else (_leaf_tip(robot),)


def _depths(robot: Robot) -> dict[str, int]:
    """Each link below the root and its number of joints from it (the root: 0)."""
    depth = {robot.root(): 0}
    for link in robot.links:
        trail: list[str] = []
        seen: set[str] = set()
        at: str | None = link.name
        while at is not None and at not in depth and at not in seen:
            trail.append(at)
            seen.add(at)
            joint = robot.parent_joint(at)
            at = None if joint is None else joint.parent
        if at is not None and at in depth:  # not a second root, not a cycle
            for steps, name in enumerate(reversed(trail), start=1):
                depth[name] = depth[at] + steps
    return depth


def _leaf_tip(robot: Robot) -> str:
    """The leaf link below the most movable joints from the root (ties: more joints in all, then
    name order). That alone is not the arm's tip on a robot with a gripper: a prismatic finger
    is one movable joint more than the flange (a Panda's `panda_leftfinger`)."""
    root = robot.root()
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


def _tip(nominal: Mat4, calibrated: Mat4) -> dict[str, Any]:
    """One tip's review: its pose without and with the corrections, and how far they differ."""
    nominal_xyz, calibrated_xyz = translation_part(nominal), translation_part(calibrated)
    delta = [b - a for a, b in zip(nominal_xyz, calibrated_xyz, strict=True)]
    return {
        "nominal": _pose(nominal),
        "calibrated": _pose(calibrated),
        "difference": {
            "xyz_m": [rounded(v) for v in delta],
            "distance_m": rounded(math.sqrt(sum(v * v for v in delta))),
            "angle_rad": rounded(rotation_angle(rotation_part(nominal), rotation_part(calibrated))),
        },
    }


def kinematics_review(
    robot: Robot,
    corrections: dict[str, Correction],
    manipulator: frozenset[str] = frozenset(),
    home: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Nominal and corrected joint origins, and each tip's pose at home, for every tip of the
    SRDF's manipulator group (its links: `manipulator`; home: its `home` state's values,
    homepose.py)."""
    root, tips = robot.root(), manipulator_tips(robot, manipulator)
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
    paths = {tip: robot.chain(root, tip) or [] for tip in tips}
    # each joint once, though two arms on a torso share its joints
    reviewed: dict[str, Joint] = {j.name: j for path in paths.values() for j in path}
    positions = home_positions(robot, list(reviewed.values()), home or {})

    def tip_pose(frames: dict[str, Mat4], path: list[Joint]) -> Mat4:
        return forward_kinematics(
            [(frames[j.name], j.type, j.axis, positions.get(j.name, 0.0)) for j in path]
        )

    ends = {tip: _tip(tip_pose(origins, p), tip_pose(corrected, p)) for tip, p in paths.items()}
    at_zero = all(q == 0.0 for q in positions.values())
    # written only off zero, so that a review at 0 (every shipped cell's) keeps its bytes
    listed = {} if at_zero else {"joint_positions": positions}
    # one tip keeps the one-arm fields; several have no `tip` a reader could take for all arms
    reach: dict[str, Any] = (
        {"tip_link": tips[0], "tip": ends[tips[0]]}
        if len(tips) == 1
        else {"tips": [{"tip_link": tip, **ends[tip]} for tip in tips]}
    )
    return {
        **listed,
        "convention": CONVENTION,
        "pose": POSE_AT_ZERO if at_zero else POSE_LISTED,
        "base_link": root,
        **reach,
        "joints": {
            name: {
                "correction": {"xyz_m": list(c.xyz_m), "rpy_rad": list(c.rpy_rad)},
                "nominal_origin": _pose(origins[name]),
                "calibrated_origin": _pose(corrected[name]),
                "in_tip_chain": name in reviewed,
            }
            for name, c in sorted(corrections.items())
        },
    }
