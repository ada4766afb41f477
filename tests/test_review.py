"""The kinematics review of a cell: every tip of the SRDF's manipulator group, one arm or two."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from pipeline.calibration import Correction
from pipeline.review import POSE_LISTED, kinematics_review, manipulator_tips
from pipeline.srdf.groups import home_values, manipulator_links
from pipeline.srdf.read import load_srdf, srdf_from_bytes
from pipeline.urdf import Robot, check_rules, load_robot, parse_urdf
from tests.cellrepo import PAIR, PAIR_CHAINS, PAIR_HOME, two_arm_urdf

REPO = Path(__file__).resolve().parents[1]
ABB = "abb_irb2400"
IIWA = "lbr_iiwa_14_r820"
FINGER = """
  <link name="finger"/>
  <joint name="finger_joint" type="prismatic">
    <parent link="tool0"/>
    <child link="finger"/>
    <axis xyz="0 1 0"/>
    <limit lower="0" upper="0.04" effort="20" velocity="0.2"/>
  </joint>
</robot>"""
JOINTS_GROUP = "".join(f'<joint name="joint_a{i}"/>' for i in range(1, 8))


@pytest.mark.parametrize(
    ("model", "finger", "srdf", "tip"),
    [
        (ABB, False, "built", "tool0"),
        (IIWA, False, "built", "tool0"),
        (ABB, False, None, "tool0"),  # no SRDF group: the leaf below most joints
        (IIWA, True, "built", "tool0"),  # the chain base_link -> tool0, not the finger
        (IIWA, True, None, "finger"),  # what the leaf rule alone gives a gripper
        (IIWA, True, f'<group name="manipulator">{JOINTS_GROUP}</group>', "link_7"),
        (
            IIWA,
            True,
            '<group name="arm"><chain base_link="base_link" tip_link="tool0"/></group>',
            "finger",
        ),
    ],
    ids=["abb", "iiwa", "abb_no_srdf", "gripper", "gripper_no_srdf", "joints_group", "other_name"],
)
def test_manipulator_tip_is_the_srdf_manipulator_groups_tip(
    tmp_path: Path, model: str, finger: bool, srdf: str | None, tip: str
) -> None:
    """The calibration review of a Panda measured its left finger: the leaf below the most
    movable joints, as a prismatic finger is one joint more than the flange."""
    folder = tmp_path / "robots" / model
    shutil.copytree(REPO / "robots" / model, folder)
    if finger:
        urdf = folder / "robot.urdf"
        urdf.write_text(urdf.read_text().replace("</robot>", FINGER))
    robot = load_robot(folder, tmp_path)
    if srdf == "built":
        group = load_srdf(REPO / "build/robots" / model / "robot.srdf", "robot.srdf")
    else:
        text = f'<robot name="{robot.name}">{srdf or ""}</robot>'
        group = srdf_from_bytes(text.encode(), "robot.srdf")
    assert manipulator_tips(robot, manipulator_links(group, robot)) == (tip,)


def pair() -> Robot:
    """The shipped ABB twice on a common pedestal (cellrepo.two_arm_urdf), refused by no rule."""
    robot, findings = parse_urdf(two_arm_urdf().encode(), "robot.urdf", PAIR)
    assert not findings + check_rules(robot)
    return robot


def arm(side: str) -> str:
    return "".join(f'<joint name="{side}_joint_{i}"/>' for i in range(1, 7))


SUBGROUPS = (
    '<group name="manipulator"><group name="left_arm"/><group name="right_arm"/></group>'
    + "".join(
        f'<group name="{side}_arm"><chain base_link="pedestal" tip_link="{side}_tool0"/></group>'
        for side in ("right", "left")
    )
)
# (case, the pair's SRDF groups, the tips reviewed, in order)
PAIR_GROUPS = [
    (
        "two_chains",
        f'<group name="manipulator">{PAIR_CHAINS}</group>',
        ("left_tool0", "right_tool0"),
    ),
    # the document's order is not the review's: the same SRDF with its chains swapped
    (
        "two_chains_right_first",
        '<group name="manipulator"><chain base_link="pedestal" tip_link="right_tool0"/>'
        '<chain base_link="pedestal" tip_link="left_tool0"/></group>',
        ("left_tool0", "right_tool0"),
    ),
    # a group of subgroups (tesseract_group_kind refuses it, a load-check can still read one)
    ("subgroups", SUBGROUPS, ("left_tool0", "right_tool0")),
    # a group of joints reaches each arm's last moving link, not its flange
    (
        "joints",
        f'<group name="manipulator">{arm("right")}{arm("left")}</group>',
        ("left_link_6", "right_link_6"),
    ),
    (
        "links",
        '<group name="manipulator"><link name="right_link_3"/><link name="right_tool0"/>'
        '<link name="left_link_2"/></group>',
        ("right_tool0", "left_link_2"),  # the tip farther from the root first
    ),
    (
        "one_arm",
        '<group name="manipulator"><chain base_link="pedestal" tip_link="right_tool0"/></group>',
        ("right_tool0",),
    ),
    ("no_group", "", ("left_tool0",)),  # the leaf below the most movable joints, by name
]


@pytest.mark.parametrize(
    ("groups", "tips"), [c[1:] for c in PAIR_GROUPS], ids=[c[0] for c in PAIR_GROUPS]
)
def test_manipulator_tips_are_every_arms_tip(groups: str, tips: tuple[str, ...]) -> None:
    """A two-arm manipulator was reviewed at one tip, the first by name: the other arm's
    corrections moved nothing the review showed."""
    robot = pair()
    srdf = srdf_from_bytes(f'<robot name="{PAIR}">{groups}</robot>'.encode(), "robot.srdf")
    assert manipulator_tips(robot, manipulator_links(srdf, robot)) == tips


# weld_cell_a's corrections, on joints of the pair's right (second) arm
CORRECTIONS = {
    "joint_2": Correction((0.0004, 0.0, -0.0002), (0.0, 0.0008, 0.0)),
    "joint_3": Correction((0.0, 0.0, 0.0003), (0.0, -0.0005, 0.0)),
}
RIGHT = {f"right_{name}": c for name, c in CORRECTIONS.items()}


def _pair_review(groups: str, corrections: dict[str, Correction]) -> dict[str, Any]:
    robot = pair()
    home = "".join(f'<joint name="{n}" value="{v!r}"/>' for n, v in PAIR_HOME.items())
    text = (
        f'<robot name="{PAIR}">{groups}'
        f'<group_state name="home" group="manipulator">{home}</group_state></robot>'
    )
    srdf = srdf_from_bytes(text.encode(), "robot.srdf")
    return kinematics_review(
        robot, corrections, manipulator_links(srdf, robot), home_values(srdf, robot)
    )


def _mounted(side: str, single: dict[str, Any]) -> list[float]:
    """One arm's tip position from the one-arm ABB's review, moved onto the pair's pedestal:
    the left arm 0.8 m along y, the right -0.8 m along y and turned half a turn about z."""
    x, y, z = single["xyz_m"]
    return [x, y + 0.8, z] if side == "left" else [-x, -y - 0.8, z]


# (case, each arm's tip link: the ABB's tool0, or link_6, the same frame (joint_6-tool0 is fixed
# at the origin), for a group of joints)
SECOND_ARM = [("two_chains", "tool0"), ("subgroups", "tool0"), ("joints", "link_6")]


@pytest.mark.parametrize(("case", "link"), SECOND_ARM, ids=[c[0] for c in SECOND_ARM])
def test_a_correction_of_the_second_arm_is_reviewed_at_its_tip(case: str, link: str) -> None:
    """Each arm's tip is the one-arm ABB's tip on its mount: the right arm's corrections move
    the right tip as they move the ABB's, and the left tip not at all."""
    groups = next(c[1] for c in PAIR_GROUPS if c[0] == case)
    review = _pair_review(groups, RIGHT)
    assert "tip" not in review and "tip_link" not in review
    tips = {tip["tip_link"]: tip for tip in review["tips"]}
    assert list(tips) == [f"left_{link}", f"right_{link}"]
    assert review["pose"] == POSE_LISTED
    assert review["joint_positions"] == {
        f"{side}_joint_{i}": PAIR_HOME.get(f"{side}_joint_{i}", 0.0)
        for side in ("left", "right")
        for i in range(1, 7)
    }
    assert {name: j["in_tip_chain"] for name, j in review["joints"].items()} == dict.fromkeys(
        RIGHT, True
    )
    abb = load_robot(REPO / "robots" / ABB, REPO)
    for side, corrections in (("left", {}), ("right", CORRECTIONS)):
        home = {name.removeprefix(f"{side}_"): q for name, q in PAIR_HOME.items()}
        single = kinematics_review(abb, corrections, frozenset({"tool0"}), home)["tip"]
        tip = tips[f"{side}_{link}"]
        for key in ("nominal", "calibrated"):
            expected = _mounted(side, single[key])
            assert tip[key]["xyz_m"] == pytest.approx(expected, abs=1e-11), (side, key)
        for key in ("distance_m", "angle_rad"):
            assert tip["difference"][key] == pytest.approx(single["difference"][key], abs=1e-12)
    assert tips[f"left_{link}"]["difference"] == {
        "xyz_m": [0.0, 0.0, 0.0],
        "distance_m": 0.0,
        "angle_rad": 0.0,
    }
    assert math.isclose(tips[f"right_{link}"]["difference"]["angle_rad"], 0.0003, abs_tol=1e-12)
    assert tips[f"right_{link}"]["difference"]["distance_m"] > 1e-3


def test_one_tip_keeps_the_one_arm_fields() -> None:
    """A group with one tip is written as before there were several: `tip_link` and `tip`."""
    one = next(c[1] for c in PAIR_GROUPS if c[0] == "one_arm")
    review = _pair_review(one, RIGHT)
    assert "tips" not in review
    assert review["tip_link"] == "right_tool0"
    assert review["tip"]["difference"]["angle_rad"] == pytest.approx(0.0003, abs=1e-12)
    # only the reviewed arm's joints are positioned
    assert set(review["joint_positions"]) == {f"right_joint_{i}" for i in range(1, 7)}
