"""Which chain `pipeline template srdf` makes the `manipulator` group: the longest serial chain of
actuated revolute and prismatic joints, never a wheel, and none on a robot without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.findings import ContractError
from pipeline.srdf import compile_srdf
from pipeline.srdf import starter as starter_module
from pipeline.srdf.starter import starter, starter_source
from pipeline.urdf import Joint, parse_urdf

BOX = '<collision><geometry><box size="0.05 0.05 0.05"/></geometry></collision>'
# a wheel rolls about y (its axis level, as on a floor), its tyre round about that axis
WHEEL = (
    '<collision><origin rpy="1.5708 0 0"/><geometry><cylinder radius="0.05" length="0.04"/>'
    "</geometry></collision>"
)
# a continuous joint as the compiler takes it (unbounded_joint_type's fix): a full turn
ENDLESS = 'lower="-3.14159" upper="3.14159"'
BOUNDED = 'lower="-1" upper="1"'


def _joint(
    name: str,
    parent: str,
    child: str,
    kind: str = "revolute",
    extra: str = "",
    limits: str = BOUNDED,
    axis: str = "0 0 1",
) -> str:
    links = f'<parent link="{parent}"/><child link="{child}"/>'
    if kind == "fixed":
        return f'<joint name="{name}" type="fixed">{links}</joint>'
    limit = f'<limit effort="1" {limits} velocity="1"/>'
    return f'<joint name="{name}" type="{kind}">{links}<axis xyz="{axis}"/>{limit}{extra}</joint>'


def _link(name: str, shape: str = BOX) -> str:
    return f'<link name="{name}">{shape}</link>'


def _arm(parent: str, prefix: str = "", count: int = 6, tool: bool = True) -> str:
    """A serial arm of `count` revolute joints from `parent`, a tool0 frame fixed to its end."""
    parts, above = [], parent
    for i in range(1, count + 1):
        parts += [_link(f"{prefix}link{i}"), _joint(f"{prefix}j{i}", above, f"{prefix}link{i}")]
        above = f"{prefix}link{i}"
    if tool:
        parts += [
            _link(f"{prefix}tool0", ""),
            _joint(f"{prefix}flange", above, f"{prefix}tool0", "fixed"),
        ]
    return "".join(parts)


def _wheels(parent: str, names: tuple[str, ...] = ("fl", "fr", "rl", "rr")) -> str:
    """A wheel (a full turn, nothing moving below it) per name, hanging from `parent`."""
    return "".join(
        _link(f"{n}_wheel", WHEEL)
        + _joint(f"{n}_wheel_joint", parent, f"{n}_wheel", limits=ENDLESS, axis="0 1 0")
        for n in names
    )


def _steered(parent: str, side: str) -> str:
    """A steering hinge (+-1 rad) carrying a wheel: pybullet_data's racecar's front wheels."""
    hinge = f"{side}_steering_hinge"
    return _link(hinge, "") + _joint(f"{hinge}_joint", parent, hinge) + _wheels(hinge, (side,))


def _gripper() -> str:
    """A Robotiq 2F-85's shape: the left outer knuckle's joint actuated, the other knuckles and
    the fingers following it (mimic)."""
    parts = [_link("gripper_base"), _joint("tool0-gripper", "tool0", "gripper_base", "fixed")]
    follow = '<mimic joint="finger_joint"/>'
    for side in ("left", "right"):
        outer, inner, finger = (f"{side}_{part}" for part in ("outer", "inner", "finger"))
        actuated = side == "left"
        parts += [_link(outer), _link(inner), _link(finger)]
        parts += [
            _joint("finger_joint" if actuated else f"{outer}_joint", "gripper_base", outer,
                   extra="" if actuated else follow),
            _joint(f"{inner}_joint", "gripper_base", inner, extra=follow),
            _joint(f"{finger}_joint", outer, finger, extra=follow),
        ]  # fmt: skip
    return "".join(parts)


TORSO = _link("torso") + _joint("torso_lift", "base_link", "torso", "prismatic")
CHASSIS = _link("chassis") + _joint("base-chassis", "base_link", "chassis", "fixed")
SENSORS = _link("laser") + _joint("laser_joint", "chassis", "laser", "fixed")
PAN_TILT = _link("pan") + _link("tilt") + _joint("pan_joint", "base_link", "pan")
PAN_TILT += _joint("tilt_joint", "pan", "tilt")
RACECAR = CHASSIS + _wheels("chassis", ("left_rear", "right_rear")) + SENSORS
RACECAR += _steered("chassis", "left_front") + _steered("chassis", "right_front")
# ABB's joint_6 turns +-400 degrees: an arm's last joint is no wheel, whatever its range
FULL_TURN_WRIST = _arm("base_link", count=5, tool=False) + _link("link6")
FULL_TURN_WRIST += _joint("j6", "link5", "link6", limits='lower="-6.9813" upper="6.9813"')
# a planar base as unbounded_joint_type's fix writes one: prismatic x, y and a yaw of a full
# turn through links without geometry, its wheels below (none of the three is the wheel's own)
PLANAR = _link("base_x", "") + _link("base_y", "") + _link("chassis")
PLANAR += _joint("x", "base_link", "base_x", "prismatic") + _joint(
    "y", "base_x", "base_y", "prismatic"
)
PLANAR += _joint("yaw", "base_y", "chassis", limits=ENDLESS) + _wheels("chassis", ("l", "r"))
# a rotary table, and a positioner that tilts it: one serial chain, its last joint a full turn
TURNTABLE = _link("table") + _joint("turn", "base_link", "table", limits=ENDLESS)
TILT = _link("tilted") + _joint("tilt", "base_link", "tilted")
# a welding cell's two-axis positioner beside the arm: a tilt (x) and a table turning a full turn
# about an upright axis, round about it (before: both left out and named as wheels)
TABLE = '<collision><geometry><cylinder radius="0.3" length="0.04"/></geometry></collision>'
POSITIONER = _link("pos_tilt") + _joint("pos_tilt_joint", "base_link", "pos_tilt", axis="1 0 0")
POSITIONER += _link("pos_table", TABLE)
POSITIONER += _joint("pos_rotate", "pos_tilt", "pos_table", limits=ENDLESS)
# a drone's rotors turn a full turn about upright axes: no wheels
ROTORS = "".join(
    _link(f"rotor{i}", TABLE.replace("0.3", "0.1")) + _joint(f"r{i}", "base_link", f"rotor{i}",
    limits=ENDLESS) for i in range(4)
)  # fmt: skip
FRAME = _link("ee_link", "") + _joint("ee_fixed", "link6", "ee_link", "fixed")
ARM = [f"j{i}" for i in range(1, 7)]
NO_CHAIN = "# This robot has no chain of actuated joints but its wheels: no manipulator group"
NO_JOINT = "# This robot has no chain of actuated joints: no manipulator group is written"
# jdrones' droneplus: every joint fixed (before: the note spoke of wheels it does not have)
FIXED_ONLY = _link("arm_a") + _joint("fa", "base_link", "arm_a", "fixed")
STEERED = "#   left_steering_hinge_joint, left_wheel_joint, right_steering_hinge_joint,\n"

# (case, the URDF below base_link, the chain's tip (None: no manipulator group), the home pose's
# joints, a line the starter holds)
CASES = [
    ("arm_only", _arm("base_link"), "tool0", ARM, ""),
    ("arm_on_wheels", _wheels("base_link") + _arm("base_link"), "tool0", ARM, "rr_wheel_joint"),
    # before: the way to the first wheel (steering hinge, wheel) was as long as the head's
    ("pan_tilt_on_steered_base", _steered("base_link", "left") + _steered("base_link", "right")
     + PAN_TILT, "tilt", ["pan_joint", "tilt_joint"], STEERED),
    ("wheels_only", _wheels("base_link"), None, [], NO_CHAIN),
    ("fixed_joints_only", FIXED_ONLY, None, [], NO_JOINT),
    ("wheels_on_a_planar_base", PLANAR, None, [], NO_CHAIN),
    ("arm_on_a_planar_base", PLANAR + _arm("chassis"), "tool0", ["x", "y", "yaw", *ARM], ""),
    # pybullet_data's racecar: rear wheels, steered front wheels, a laser (before: tip a wheel)
    ("racecar", RACECAR, None, [], NO_CHAIN),
    ("two_arms", TORSO + _arm("torso", "left_") + _arm("torso", "right_"), "left_tool0",
     ["torso_lift", *(f"left_{j}" for j in ARM)], 'chain to "right_tool0" is as long'),
    ("mimic_gripper", _arm("base_link") + _gripper(), "gripper_base", ARM, ""),
    ("prismatic_torso_arm", TORSO + _arm("torso"), "tool0", ["torso_lift", *ARM], ""),
    # UR5's ee_link and tool0 hang from its last link equally deep: one chain, tool0 first
    ("two_frames_at_the_flange", _arm("base_link") + FRAME, "tool0", ARM, ""),
    ("positioner_beside_an_arm", POSITIONER + _arm("base_link"), "tool0", ARM, ""),
    ("rotors", ROTORS, "rotor0", ["r0"], ""),
    ("full_turn_wrist", _wheels("base_link", ("l", "r")) + FULL_TURN_WRIST, "link6", ARM, ""),
    # a robot that never branches has no wheels (before: a turntable and a two-axis positioner
    # whose last joint turns a full turn were taken for wheels, and got no manipulator group)
    ("turntable", TURNTABLE, "table", ["turn"], ""),
    ("positioner", TILT + TURNTABLE.replace('"base_link"', '"tilted"'), "table",
     ["tilt", "turn"], ""),
]  # fmt: skip


def _robot_text(parts: str, name: str = "crafted") -> str:
    return f'<robot name="{name}"><link name="base_link">{BOX}</link>{parts}</robot>'


@pytest.mark.parametrize(("case", "parts", "tip", "home", "line"), CASES, ids=[c[0] for c in CASES])
def test_the_manipulator_chain_is_the_longest_actuated_chain_never_a_wheel(
    case: str, parts: str, tip: str | None, home: list[str], line: str
) -> None:
    robot, findings = parse_urdf(_robot_text(parts).encode(), "crafted.urdf", "crafted")
    assert not findings, findings
    plan = starter(robot)
    assert (plan.tip, list(plan.home)) == (tip, home)
    text = starter_source(robot, "crafted")
    assert f"TIP_LINK = {'None' if tip is None else repr(tip).replace(chr(39), chr(34))}\n" in text
    assert line in text
    assert (" as long: " in text) == (case in ("two_arms", "rotors"))
    assert ("# Wheels" in text) == (plan.wheels != []), text
    if case in ("positioner_beside_an_arm", "rotors"):
        assert plan.wheels == []


@pytest.mark.parametrize("case", ["racecar", "pan_tilt_on_steered_base"])
def test_the_starter_compiles_and_without_a_chain_says_the_group_is_missing(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """A robot without an arm gets a starter whose SRDF has no manipulator group, which the
    SRDF rules then name (missing_manipulator_group) and nothing else; one with a chain passes."""
    parts = dict((c[0], c[1]) for c in CASES)[case]
    folder = repo / "robots" / "rover"
    folder.mkdir()
    (folder / "robot.urdf").write_text(_robot_text(parts, "rover"))
    monkeypatch.chdir(repo)
    assert main(["template", "srdf", "rover"]) == 0
    (folder / "srdf.py").write_text(capsys.readouterr().out)
    if case != "racecar":
        compile_srdf(folder / "srdf.py", repo / "out.srdf", repo)
        return
    with pytest.raises(ContractError) as exc:
        compile_srdf(folder / "srdf.py", repo / "out.srdf", repo)
    assert [f.code for f in exc.value.findings] == ["missing_manipulator_group"]


def _fan(count: int, stem: int) -> str:
    """`count` one-joint leaves at the end of `stem` fixed joints: a tie of `count` chains."""
    parts, above = [], "base_link"
    for i in range(stem):
        parts += [_link(f"s{i}", ""), _joint(f"f{i}", above, f"s{i}", "fixed")]
        above = f"s{i}"
    parts += [_link(f"leaf{i}") + _joint(f"j{i}", above, f"leaf{i}") for i in range(count)]
    return "".join(parts)


@pytest.mark.parametrize(("count", "stem"), [(3000, 0), (1000, 1000)], ids=["wide", "broom"])
def test_a_tie_of_thousands_of_chains_costs_steps_in_proportion(
    monkeypatch: pytest.MonkeyPatch, count: int, stem: int
) -> None:
    """Each tied leaf's way was walked and tested at each fork, every branch of the fork
    measured again: 3,000 one-joint leaves at the root were 9 million steps (8,000 took 6 s),
    1,000 below 1,000 fixed joints a million."""
    robot, findings = parse_urdf(_robot_text(_fan(count, stem)).encode(), "fan.urdf", "crafted")
    assert not findings, findings[:3]
    steps = 0
    measure = starter_module._branch

    def counted(joint: Joint, depth: dict[str, int]) -> int:
        nonlocal steps
        steps += 1
        return measure(joint, depth)

    monkeypatch.setattr(starter_module, "_branch", counted)
    plan = starter(robot)
    assert (plan.tip, len(plan.others)) == ("leaf0", count - 1)
    assert steps <= 3 * len(robot.joints), steps
