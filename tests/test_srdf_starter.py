"""`pipeline template srdf MODEL_ID`: a first srdf.py from the URDF, which the SRDF rules pass."""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from lxml import etree

from pipeline.cli import main
from pipeline.srdf import compile_srdf
from pipeline.srdf.starter import starter_source
from pipeline.urdf import parse_urdf
from tests.conftest import REPO
from tests.test_urdf import break_urdf

ABB = "robots/abb_irb2400"
ABB_ARM = [f"joint_{i}" for i in range(1, 7)]
IIWA_ARM = [f"joint_a{i}" for i in range(1, 8)]
J2_LIMIT = '<limit effort="0" lower="-1.7453" upper="1.9199" velocity="2.618"/>'
BOX = '<collision><geometry><box size="0.05 0.02 0.08"/></geometry></collision>'
# a two-finger hand under tool0, as a Panda's: one prismatic finger and one that mimics it
HAND = f"""
  <link name="hand">{BOX}</link>
  <link name="finger_left">{BOX}</link>
  <link name="finger_right">{BOX}</link>
  <joint name="tool0-hand" type="fixed"><parent link="tool0"/><child link="hand"/></joint>
  <joint name="finger_joint1" type="prismatic">
    <parent link="hand"/><child link="finger_left"/><axis xyz="0 1 0"/>
    <limit effort="20" lower="0" upper="0.04" velocity="0.2"/>
  </joint>
  <joint name="finger_joint2" type="prismatic">
    <parent link="hand"/><child link="finger_right"/><axis xyz="0 -1 0"/>
    <limit effort="20" lower="0" upper="0.04" velocity="0.2"/><mimic joint="finger_joint1"/>
  </joint>
</robot>"""


def _written(
    repo: Path, model_id: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> etree._Element:
    """Write the starter as the robot's srdf.py and compile it; the SRDF's root."""
    monkeypatch.chdir(repo)
    assert main(["template", "srdf", model_id]) == 0
    source = repo / "robots" / model_id / "srdf.py"
    source.write_text(capsys.readouterr().out)
    return etree.fromstring(compile_srdf(source, repo / "out.srdf", repo))


def _summary(srdf: etree._Element) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    chain = [(c.get("base_link"), c.get("tip_link")) for c in srdf.iter("chain")]
    home = [j.get("name") for j in srdf.iterfind("group_state/joint")]
    return [f"{base}->{tip}" for base, tip in chain], home, _pairs(srdf, "Adjacent")


def _pairs(srdf: etree._Element, reason: str) -> list[tuple[str | None, str | None]]:
    """The SRDF's disabled pairs of one reason, in its order."""
    found = srdf.iterfind(f"disable_collisions[@reason='{reason}']")
    return [(d.get("link1"), d.get("link2")) for d in found]


@pytest.mark.parametrize(
    ("model_id", "arm", "last"),
    [("abb_irb2400", ABB_ARM, "link_6"), ("lbr_iiwa_14_r820", IIWA_ARM, "link_7")],
)
def test_the_shipped_robots_starter_passes_the_srdf_rules(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    model_id: str,
    arm: list[str],
    last: str,
) -> None:
    chain, home, pairs = _summary(_written(repo, model_id, monkeypatch, capsys))
    assert chain == ["base_link->tool0"]
    assert home == arm
    links = ["base_link", *(f"link_{i}" for i in range(1, len(arm) + 1))]
    assert pairs == list(itertools.pairwise(links)) and pairs[-1][1] == last


def test_a_hand_ends_the_chain_and_its_fingers_stay_out_of_the_home_pose(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    break_urdf(repo, [("</robot>", HAND)])
    chain, home, pairs = _summary(_written(repo, "abb_irb2400", monkeypatch, capsys))
    # the way to the deepest finger forks at the hand into two moving fingers
    assert chain == ["base_link->hand"] and home == ABB_ARM
    # tool0 has no collision geometry: the hand touches link_6 through it
    assert pairs[-3:] == [("link_6", "hand"), ("hand", "finger_left"), ("hand", "finger_right")]


# a camera and a cover fixed to the hand, the cover through a frame without geometry
PARTS = f"""
  <link name="camera">{BOX}</link>
  <link name="cover_frame"/>
  <link name="cover">{BOX}</link>
  <joint name="hand-camera" type="fixed"><parent link="hand"/><child link="camera"/></joint>
  <joint name="hand-frame" type="fixed"><parent link="hand"/><child link="cover_frame"/></joint>
  <joint name="frame-cover" type="fixed"><parent link="cover_frame"/><child link="cover"/></joint>
</robot>"""


def test_links_fixed_to_each_other_are_every_one_listed(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One rigid body whether a pair touches never changes: link_6, hand (through tool0), the
    camera and the cover are all fixed to each other; the fingers move."""
    break_urdf(repo, [("</robot>", HAND.replace("</robot>", PARTS))])
    *_, pairs = _summary(_written(repo, "abb_irb2400", monkeypatch, capsys))
    rigid = ["link_6", "hand", "camera", "cover"]
    assert {frozenset(p) for p in itertools.combinations(rigid, 2)} <= {frozenset(p) for p in pairs}
    assert ("camera", "finger_left") not in pairs and ("link_5", "hand") not in pairs
    assert len(pairs) == len({frozenset(p) for p in pairs})  # each pair once


def test_a_joint_whose_limits_exclude_0_is_at_its_nearest_limit(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    break_urdf(repo, [(J2_LIMIT, J2_LIMIT.replace('lower="-1.7453"', 'lower="0.25"'))])
    srdf = _written(repo, "abb_irb2400", monkeypatch, capsys)
    values = {j.get("name"): j.get("value") for j in srdf.iterfind("group_state/joint")}
    assert values["joint_2"] == "0.25" and values["joint_1"] == "0.0"


def test_a_root_link_named_world_gets_no_virtual_joint(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """gym-ignition's Panda and pybullet's xarm root their URDF at a `world` link."""
    world = '<link name="world"/>\n  <joint name="world-base" type="fixed">'
    world += '<parent link="world"/><child link="base_link"/></joint>\n</robot>'
    break_urdf(repo, [("</robot>", world)])
    srdf = _written(repo, "abb_irb2400", monkeypatch, capsys)
    assert srdf.find("virtual_joint") is None
    assert _summary(srdf)[0] == ["world->tool0"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["template", "srdf"], "srdf needs the model id of the robot to write it for"),
        (["template", "config", "abb_irb2400"], "the config template takes no model id"),
    ],
)
def test_usage_error_a_model_id_missing_or_not_taken(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(repo)
    assert main(argv) == 2
    assert capsys.readouterr().err == f"pipeline template: usage_error: {message}; " + (
        "pass MODEL_ID\n" if argv[1] == "srdf" else "pipeline template config\n"
    )


def test_a_robot_whose_urdf_is_refused_gets_no_starter(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    break_urdf(repo, [(J2_LIMIT, J2_LIMIT.replace('upper="1.9199"', 'upper="x"'))])
    monkeypatch.chdir(repo)
    assert main(["template", "srdf", "abb_irb2400"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"{ABB}/robot.urdf:") and ": invalid_number: " in err


def _branch(parent: str, count: int) -> str:
    """A second arm of `count` revolute joints hanging from `parent`."""
    links, joints, above = [], [], parent
    for i in range(1, count + 1):
        links.append(f'<link name="arm2_{i}">{BOX}</link>')
        joints.append(
            f'<joint name="arm2_j{i}" type="revolute"><parent link="{above}"/>'
            f'<child link="arm2_{i}"/><axis xyz="0 0 1"/>'
            '<limit effort="1" lower="-1" upper="1" velocity="1"/></joint>'
        )
        above = f"arm2_{i}"
    return "\n  ".join(links + joints)


def test_a_fork_into_long_branches_is_not_a_hand(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """link_1 forks into the arm (5 joints on) and a second arm of 4, as a mobile manipulator's
    torso forks into arms and a head: the chain goes on down the deeper arm."""
    break_urdf(repo, [("</robot>", _branch("link_1", 4) + "\n</robot>")])
    chain, home, _ = _summary(_written(repo, "abb_irb2400", monkeypatch, capsys))
    assert chain == ["base_link->tool0"] and home == ABB_ARM


def _chain_urdf(count: int) -> bytes:
    links = "".join(f'<link name="l{i}">{BOX}</link>' for i in range(count + 1))
    joints = "".join(
        f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
        '<axis xyz="0 0 1"/><limit effort="1" lower="-1" upper="1" velocity="1"/></joint>'
        for i in range(1, count + 1)
    )
    return f'<robot name="chain">{links}{joints}</robot>'.encode()


def test_a_chain_of_thousands_of_links_gets_its_starter() -> None:
    """A 2,000-link serial chain is a valid URDF: the walk was recursive and raised
    RecursionError past about 335 links."""
    robot, findings = parse_urdf(_chain_urdf(2000), "chain.urdf", "chain")
    assert not findings
    text = starter_source(robot, "chain")
    assert 'TIP_LINK = "l2000"' in text and text.count(": 0.0,\n") == 2000


_FIXED_ONLY = (
    f'<robot name="brick"><link name="base"/><link name="housing">{BOX}</link>'
    f'<link name="wheel">{BOX}</link>'
    '<joint name="a" type="fixed"><parent link="base"/><child link="housing"/></joint>'
    '<joint name="b" type="fixed"><parent link="housing"/><child link="wheel"/></joint></robot>'
)


def _named_urdf(name: str, base: str = "base") -> bytes:
    """A two-link robot whose second link and joint carry `name`."""
    link, joint = quoteattr(f"l{name}"), quoteattr(f"j{name}")
    return (
        f'<robot name="odd"><link name="{base}">{BOX}</link><link name={link}>{BOX}</link>'
        f'<joint name={joint} type="revolute"><parent link="{base}"/><child link={link}/>'
        '<axis xyz="0 0 1"/><limit effort="1" lower="-1" upper="1" velocity="1"/></joint></robot>'
    ).encode()


# links named as a xacro's prefixes name them: each pair longer than a line
_LONG = _named_urdf("_" + "x" * 50, "base_" + "y" * 45).decode()
_UNCOLLIDED = (
    '<robot name="frames"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
    '<parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
    '<limit effort="1" lower="-1" upper="1" velocity="1"/></joint></robot>'
)


@pytest.mark.parametrize(
    ("urdf", "model_id", "written"),
    [
        # airo-models' KELO wheel brick: every joint fixed, so no joint to set at home
        (_FIXED_ONLY, "brick", ["HOME = {}\n", 'ADJACENT = [\n    ("housing", "wheel"),\n]\n']),
        # frames without collision geometry: no pair to list
        (_UNCOLLIDED, "frames", ['HOME = {\n    "j": 0.0,\n}\n', "ADJACENT = []\n"]),
        (_chain_urdf(2).decode(), "chain", ['HOME = {\n    "j1": 0.0,\n    "j2": 0.0,\n}\n']),
        # a pair past the line's 100 columns is split, an item a line, as ruff format splits it
        (
            _LONG,
            "odd",
            ['    (\n        "base_yyyyy', 'yyyy",\n        "l_xxxxx', 'xxx",\n    ),\n]\n'],
        ),
    ],
    ids=["fixed-only", "uncollided", "chain", "long-names"],
)
def test_the_starter_is_as_ruff_formats_it(urdf: str, model_id: str, written: list[str]) -> None:
    """A robot of fixed joints only (airo-models' KELO wheel brick) got `HOME = {` and `}` on
    two lines, which `ruff format --check` (CI's, over robots/*/srdf.py) refused."""
    robot, findings = parse_urdf(urdf.encode(), "robot.urdf", model_id)
    assert not findings
    text = starter_source(robot, model_id)
    assert all(part in text for part in written)
    ruff = [sys.executable, "-m", "ruff", "format", "--check", "--stdin-filename", "srdf.py", "-"]
    checked = subprocess.run(ruff, input=text, capture_output=True, text=True, cwd=REPO)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # CI's ruff check too: a line past 100 columns is E501
    lint = [sys.executable, "-m", "ruff", "check", "--no-cache", "--stdin-filename", "srdf.py", "-"]
    checked = subprocess.run(lint, input=text, capture_output=True, text=True, cwd=REPO)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_hand_of_five_long_fingers_ends_the_chain(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """TIAGo's hey5 hand: five fingers of up to six joints each, longer than HAND_DEPTH, but
    five of them and each shorter than the arm before the palm."""
    fingers = "\n  ".join(_branch("hand", 4).replace("arm2_", f"f{k}_") for k in range(5))
    hand = f'<link name="hand">{BOX}</link>\n  <joint name="tool0-hand" type="fixed">'
    hand += '<parent link="tool0"/><child link="hand"/></joint>'
    break_urdf(repo, [("</robot>", f"{hand}\n  {fingers}\n</robot>")])
    chain, home, _ = _summary(_written(repo, "abb_irb2400", monkeypatch, capsys))
    assert chain == ["base_link->hand"] and home == ABB_ARM


def test_the_pairs_in_contact_at_home_are_allowed_as_default(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """abb's link_4 and link_6 overlap at home, as a planner collides them (link_6's mesh hull
    reaches into link_4's): ROS-Industrial's MoveIt configuration of this robot allows the pair
    as "Default" too; the iiwa has no such pair."""
    abb = _written(repo, "abb_irb2400", monkeypatch, capsys)
    assert _pairs(abb, "Default") == [("link_4", "link_6")]
    assert "DEFAULT = [" in (repo / "robots/abb_irb2400/srdf.py").read_text()
    iiwa = _written(repo, "lbr_iiwa_14_r820", monkeypatch, capsys)
    assert _pairs(iiwa, "Default") == []
    assert "DEFAULT" not in (repo / "robots/lbr_iiwa_14_r820/srdf.py").read_text()


def test_fingers_that_overlap_at_home_are_allowed_as_default(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hand's two fingers sit at its origin when closed (prismatic, at 0): their boxes
    overlap, and no joint joins them, so the starter allows them as "Default"."""
    break_urdf(repo, [("</robot>", HAND)])
    srdf = _written(repo, "abb_irb2400", monkeypatch, capsys)
    assert ("finger_left", "finger_right") in _pairs(srdf, "Default")
    assert ("hand", "finger_left") not in _pairs(srdf, "Default")  # Adjacent already


def test_home_contacts_past_the_budget_are_a_warning_not_a_traceback(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Thousands of links overlapping at home would take minutes of linear programmes: past
    the budget (made 0 here: abb's home needs one, link_4 and link_6) the starter has no
    DEFAULT list."""
    monkeypatch.chdir(repo)
    monkeypatch.setattr("pipeline.contacts.PROGRAMME_BUDGET", 0, raising=False)
    assert main(["template", "srdf", "abb_irb2400"]) == 0
    out, err = capsys.readouterr()
    assert "DEFAULT" not in out and "ADJACENT = [" in out
    [line] = err.splitlines()
    assert line.startswith(f"{ABB}/robot.urdf: home_contacts_not_collided: colliding the")
    assert line.endswith(" (warning)")


# A new-user trial: jdrones' droneplus, whose joints are all fixed, got `HOME = {\n}` and
# `ADJACENT = [\n]`, which this repository's own `ruff format --check .` (CI) refuses.
LONG_A, LONG_B = "left_" + "a" * 45, "right_" + "b" * 45
_DRONE = (
    f'<robot name="drone"><link name="base_link">{BOX}</link><link name="prop"/>'
    '<joint name="prop_joint" type="fixed"><parent link="base_link"/><child link="prop"/>'
    "</joint></robot>"
)
_LONG = (
    f'<robot name="long"><link name="{LONG_A}">{BOX}</link><link name="{LONG_B}">{BOX}</link>'
    f'<joint name="j" type="revolute"><parent link="{LONG_A}"/><child link="{LONG_B}"/>'
    '<axis xyz="0 0 1"/><limit effort="1" lower="-1" upper="1" velocity="1"/></joint></robot>'
)


@pytest.mark.parametrize(
    ("urdf", "model_id", "touching"),
    [(_DRONE, "drone", []), (_LONG, "long", [(LONG_A, LONG_B)])],
    ids=["no-movable-joint", "long-link-names"],
)
def test_the_starter_passes_the_repositorys_ruff(
    urdf: str, model_id: str, touching: list[tuple[str, str]]
) -> None:
    """The srdf.py the starter writes is committed to robots/, which CI formats and lints."""
    robot, findings = parse_urdf(urdf.encode(), "robot.urdf", model_id)
    assert not [f for f in findings if f.severity.value == "error"]
    text = starter_source(robot, model_id, touching)
    for command in (["format", "--diff"], ["check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--stdin-filename", "robots/x/srdf.py", "-"],
            input=text,
            capture_output=True,
            text=True,
            cwd=REPO,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    "name",
    # names the URDF rules take: quotes were written "a\"b", which ruff format writes 'a"b';
    # a character past U+FFFF was written as JSON's two surrogates, "\ud83d\ude00", not itself
    ['a"b', "a'b", 'a"\'"b', "a\"b'c", '"""', "a\\b", "\\", '\\"', "é", "λ链", "\U0001f600"],
)
def test_a_name_is_written_as_the_python_literal_ruff_format_leaves(name: str) -> None:
    robot, findings = parse_urdf(_named_urdf(name), "robot.urdf", "odd")
    assert not findings
    text = starter_source(robot, "odd")
    values = {
        target.id: ast.literal_eval(node.value)
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    assert values["TIP_LINK"] == f"l{name}" and values["HOME"] == {f"j{name}": 0.0}
    assert values["ADJACENT"] == [("base", f"l{name}")]
    ruff = [sys.executable, "-m", "ruff", "format", "--check", "--stdin-filename", "srdf.py", "-"]
    checked = subprocess.run(ruff, input=text, capture_output=True, text=True, cwd=REPO)
    assert checked.returncode == 0, checked.stdout + checked.stderr
