"""The pose a cell's kinematics review is taken at: the SRDF's home state, within the limits."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pipeline.urdf import Joint, Robot

# the joint types with one position (rad or m); any other has none in forward kinematics
MOVABLE = ("revolute", "continuous", "prismatic")


def home_positions(
    robot: Robot, joints: Sequence[Joint], home: Mapping[str, float]
) -> dict[str, float]:
    """Each movable joint of `joints` at its review position, in their order (rad or m).

    A joint takes its value in `home` (the SRDF's `home` state of `manipulator`), or 0 where the
    state sets none; either is clamped into the joint's `[lower, upper]`, so that a joint whose
    limits exclude 0 (a knee of [-2.7, -0.9] rad) is reviewed at its nearest limit. A mimic
    joint follows the joint it mimics, `multiplier * q + offset`, as MoveIt sets it (unclamped).
    """
    return {
        joint.name: _position(robot, joint, home, frozenset())
        for joint in joints
        if joint.type in MOVABLE
    }


def _position(robot: Robot, joint: Joint, home: Mapping[str, float], seen: frozenset[str]) -> float:
    """One joint's review position; 0 for a value no finding-free model can hold (NaN, a cycle)."""
    mimic = joint.mimic
    if mimic is not None:
        leader = robot.joint(mimic.joint)
        if leader is None or leader.name in seen:  # unknown_mimic_joint, mimic_cycle
            return 0.0
        position = mimic.multiplier * _position(robot, leader, home, seen | {joint.name})
        position += mimic.offset
    elif joint.type not in MOVABLE:
        return 0.0  # a fixed joint has no position (a mimic of one: mimic_of_unmovable_joint)
    else:
        position = _clamped(joint, home.get(joint.name, 0.0))
    # + 0.0 writes -0.0 as 0.0: the same pose, one spelling
    return position + 0.0 if math.isfinite(position) else 0.0


def _clamped(joint: Joint, value: float) -> float:
    """`value` within the joint's finite, ordered bounds (unchanged when it has none)."""
    limit = joint.limit
    value = value if math.isfinite(value) else 0.0  # non_finite_joint_value
    if limit is None or limit.lower is None or limit.upper is None:
        return value
    lower, upper = limit.lower, limit.upper
    if not (math.isfinite(lower) and math.isfinite(upper) and lower <= upper):
        return value  # invalid_number, invalid_joint_limit
    return min(max(value, lower), upper)
