"""The pose of a cell's kinematics review: the SRDF's home state, 0 elsewhere, within the limits."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from pipeline.calibration import Correction
from pipeline.homepose import home_positions
from pipeline.review import POSE_AT_ZERO, POSE_LISTED, kinematics_review
from pipeline.srdf.groups import home_values, manipulator_links
from pipeline.srdf.read import load_srdf, srdf_from_bytes
from pipeline.urdf import Joint, Robot, check_rules, parse_urdf
from tests.cellrepo import ABB_J3_LIMIT

REPO = Path(__file__).resolve().parents[1]
ABB = "abb_irb2400"
ZERO = {f"joint_{i}": 0.0 for i in range(1, 7)}
J3_ABOVE_0 = (ABB_J3_LIMIT, ABB_J3_LIMIT.replace('"-1.0472"', '"0.2"'))
J3_BELOW_0 = (ABB_J3_LIMIT, ABB_J3_LIMIT.replace('"1.1345"', '"-0.3"'))
J5_LIMIT = '<limit effort="0" lower="-2.0944" upper="2.0944" velocity="6.2832"/>'
J5_MIMICS_J3 = (J5_LIMIT, J5_LIMIT + '<mimic joint="joint_3" multiplier="2" offset="0.1"/>')
# weld_cell_a's corrections
CORRECTIONS = {
    "joint_2": Correction((0.0004, 0.0, -0.0002), (0.0, 0.0008, 0.0)),
    "joint_3": Correction((0.0, 0.0, 0.0003), (0.0, -0.0005, 0.0)),
}


def abb(*edits: tuple[str, str]) -> Robot:
    """The shipped ABB's URDF with `edits` applied, refused by no URDF rule."""
    text = (REPO / "robots" / ABB / "robot.urdf").read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    robot, findings = parse_urdf(text.encode(), "robot.urdf", ABB)
    assert not findings + check_rules(robot)
    return robot


def chain(robot: Robot) -> list[Joint]:
    return robot.chain(robot.root(), "tool0") or []


# (case, URDF edits, the home state's values, the positions that differ from 0)
CASES = [
    ("no_home_state_all_zero", [], {}, {}),
    (
        "home_state_sets_joints",
        [],
        {"joint_2": 0.5, "joint_5": -0.25},
        {"joint_2": 0.5, "joint_5": -0.25},
    ),
    # a knee of [-2.7, -0.9] rad: 0 is outside, its nearest limit is the pose
    ("zero_clamped_to_lower_limit", [J3_ABOVE_0], {}, {"joint_3": 0.2}),
    ("zero_clamped_to_upper_limit", [J3_BELOW_0], {}, {"joint_3": -0.3}),
    ("home_state_wins_over_clamped_zero", [J3_ABOVE_0], {"joint_3": 0.7}, {"joint_3": 0.7}),
    # what validation refuses (group_state_above_limit, non_finite_joint_value), as a load-check
    # can read it in an unpacked bundle: still a pose within the limits
    ("home_value_above_limit_clamped", [], {"joint_2": 9.0}, {"joint_2": 1.9199}),
    ("home_value_not_finite_is_zero", [], {"joint_2": math.nan, "joint_4": math.inf}, {}),
    ("home_value_negative_zero_is_zero", [], {"joint_2": -0.0}, {}),
    ("home_value_of_other_joint_ignored", [], {"joint_6-tool0": 1.0, "nowhere": 2.0}, {}),
    # a mimic joint follows its leader, multiplier * q + offset, as MoveIt sets it
    (
        "mimic_follows_home_state",
        [J5_MIMICS_J3],
        {"joint_3": 0.4},
        {"joint_3": 0.4, "joint_5": 0.9},
    ),
    (
        "mimic_follows_clamped_zero",
        [J3_ABOVE_0, J5_MIMICS_J3],
        {},
        {"joint_3": 0.2, "joint_5": 0.5},
    ),
    ("mimic_at_offset_when_leader_at_0", [J5_MIMICS_J3], {}, {"joint_5": 0.1}),
]


@pytest.mark.parametrize(
    ("edits", "home", "moved"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_home_positions(
    edits: list[tuple[str, str]], home: dict[str, float], moved: dict[str, float]
) -> None:
    robot = abb(*edits)
    positions = home_positions(robot, chain(robot), home)
    assert list(positions) == list(ZERO)  # the movable joints of the chain, in its order
    assert positions == pytest.approx({**ZERO, **moved}, abs=1e-15)
    assert all(math.copysign(1.0, q) == 1.0 for q in positions.values() if q == 0.0)


@pytest.mark.parametrize(
    ("states", "values"),
    [
        (
            '<group_state name="home" group="manipulator"><joint name="joint_2" value="0.5"/>'
            "</group_state>",
            {"joint_2": 0.5},
        ),
        # a legacy value_deg of a revolute joint is read in rad
        (
            '<group_state name="home" group="manipulator"><joint name="joint_2" value_deg="90"/>'
            "</group_state>",
            {"joint_2": math.pi / 2},
        ),
        # another group's home, or another state of manipulator, is not the review's pose
        (
            '<group_state name="home" group="arm"><joint name="joint_2" value="0.5"/>'
            '</group_state><group_state name="park" group="manipulator">'
            '<joint name="joint_3" value="0.5"/></group_state>',
            {},
        ),
        ("", {}),
    ],
    ids=["home", "value_deg", "other_states", "none"],
)
def test_home_values_are_the_manipulator_home_state_in_native_units(
    states: str, values: dict[str, float]
) -> None:
    robot = abb()
    text = (
        f'<robot name="{ABB}"><group name="manipulator"><chain base_link="base_link" '
        f'tip_link="tool0"/></group><group name="arm"><joint name="joint_2"/></group>{states}'
        "</robot>"
    )
    assert home_values(srdf_from_bytes(text.encode(), "robot.srdf"), robot) == values


def _np_tip(
    robot: Robot, positions: dict[str, float], corrections: dict[str, Correction]
) -> np.ndarray:
    """tool0 in base_link by numpy and scipy: origin · correction · rotation about the axis."""
    out = np.eye(4)
    for joint in chain(robot):
        step = np.eye(4)
        step[:3, :3] = Rotation.from_euler("xyz", joint.origin.rpy).as_matrix()
        step[:3, 3] = joint.origin.xyz
        c = corrections.get(joint.name)
        if c is not None:
            fix = np.eye(4)
            fix[:3, :3] = Rotation.from_euler("xyz", c.rpy_rad).as_matrix()
            fix[:3, 3] = c.xyz_m
            step = step @ fix
        if joint.type == "revolute":
            axis = np.array(joint.axis) / np.linalg.norm(joint.axis)
            motion = np.eye(4)
            motion[:3, :3] = Rotation.from_rotvec(axis * positions[joint.name]).as_matrix()
            step = step @ motion
        out = out @ step
    return out


def test_review_off_zero_is_taken_at_joint_positions() -> None:
    """A joint whose limits exclude 0 was reviewed at 0, a pose the robot cannot take."""
    robot = abb(J3_ABOVE_0)
    review = kinematics_review(robot, CORRECTIONS, frozenset(), {"joint_2": 0.5, "joint_5": -0.25})
    expected = {**ZERO, "joint_2": 0.5, "joint_3": 0.2, "joint_5": -0.25}
    assert review["pose"] == POSE_LISTED == "home: every joint at joint_positions"
    assert review["joint_positions"] == expected
    for key, corrections in (("nominal", {}), ("calibrated", CORRECTIONS)):
        tip = _np_tip(robot, expected, corrections)
        assert np.allclose(review["tip"][key]["xyz_m"], tip[:3, 3], atol=1e-12), key
        quaternion = review["tip"][key]["quaternion_wxyz"]
        ours = Rotation.from_quat([*quaternion[1:], quaternion[0]]).as_matrix()
        assert np.allclose(ours, tip[:3, :3], atol=1e-11), key
    at_zero = kinematics_review(abb(), CORRECTIONS)
    assert review["tip"]["nominal"]["xyz_m"] != at_zero["tip"]["nominal"]["xyz_m"]


@pytest.mark.parametrize("model", [ABB, "lbr_iiwa_14_r820"])
def test_review_at_zero_keeps_its_pose_string_and_lists_no_positions(model: str) -> None:
    """The shipped robots' home is every joint at 0: their cells' bytes must not change."""
    robot, findings = parse_urdf((REPO / "robots" / model / "robot.urdf").read_bytes(), "u", model)
    assert not findings
    srdf = load_srdf(REPO / "build/robots" / model / "robot.srdf", "robot.srdf")
    review = kinematics_review(robot, {}, manipulator_links(srdf, robot), home_values(srdf, robot))
    assert review["pose"] == POSE_AT_ZERO == "home: every joint at 0"
    assert "joint_positions" not in review
    assert review == kinematics_review(robot, {}, manipulator_links(srdf, robot))
