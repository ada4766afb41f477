"""Every SRDF finding code, one crafted case each, through `pipeline srdf` (exit 2, code, file)."""

from __future__ import annotations

import json
import os
import py_compile
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.conftest import REPO

ABB = "robots/abb_irb2400"
SOURCE = f"{ABB}/srdf.py"
URDF = f"{ABB}/robot.urdf"
ROSIE = "robots/rosie_test"
J6 = '<joint name="joint_6" type="revolute">'
J6_LIMIT = '<limit effort="0" lower="-6.9813" upper="6.9813" velocity="7.854"/>'

# Appended to the real generator: `robot` is its <robot> element; helpers add and find elements.
WRAP = """

_real_gen_srdf = gen_srdf


def _add(parent, tag, **attrs):
    return ET.SubElement(parent, tag, {{k: str(v) for k, v in attrs.items()}})


def _find(tag, **attrs):
    for el in robot.iter(tag):
        if all(el.get(k) == v for k, v in attrs.items()):
            return el
    raise LookupError(tag)


def gen_srdf():
    global robot
    envelope = _real_gen_srdf()
    robot = envelope["xml"]
{body}
    return envelope
"""

STATE = "state = _add(robot, 'group_state', name='s', group='manipulator')\n"

# (finding code, edit of the real abb_irb2400 generator's XML) -> that code, in srdf.py
XML_CASES = [
    ("unknown_element", "_add(robot, 'link_sphere_approximation', link='link_1')"),
    ("unknown_attribute", "_find('group', name='manipulator').set('colour', 'red')"),
    ("missing_attribute", "_add(robot, 'passive_joint')"),
    ("invalid_number", STATE + "_add(state, 'joint', name='joint_1', value='90deg')"),
    ("ambiguous_joint_value", STATE + "_add(state, 'joint', name='joint_1', value=1, value_deg=1)"),
    (
        "duplicate_name",
        "g = _add(robot, 'group', name='manipulator'); _add(g, 'joint', name='joint_1')",
    ),
    ("empty_group", "_add(robot, 'group', name='nothing')"),
    ("unknown_link", "g = _add(robot, 'group', name='g'); _add(g, 'link', name='link_99')"),
    ("unknown_joint", "g = _add(robot, 'group', name='g'); _add(g, 'joint', name='joint_99')"),
    (
        "chain_not_a_path",
        "_find('chain').set('base_link', 'link_6'); _find('chain').set('tip_link', 'link_2')",
    ),
    ("chain_not_a_path", "_find('chain').set('tip_link', 'base_link')"),
    (
        "unknown_group",
        "g = _add(robot, 'group', name='g'); _add(g, 'link', name='link_1')\n"
        "_add(g, 'group', name='nope')",
    ),
    (
        "subgroup_cycle",
        "for a, b in (('a', 'b'), ('b', 'a')):\n"
        "    g = _add(robot, 'group', name=a); _add(g, 'link', name='link_1')\n"
        "    _add(g, 'group', name=b)",
    ),
    ("tesseract_group_kind", "_add(_find('group', name='manipulator'), 'joint', name='joint_1')"),
    # Tesseract loads a group without its subgroups: g would lose the manipulator's joints.
    (
        "tesseract_group_kind",
        "g = _add(robot, 'group', name='g'); _add(g, 'joint', name='joint_1')\n"
        "_add(g, 'group', name='manipulator')",
    ),
    ("unknown_group", "_find('group_state').set('group', 'arm')"),
    ("empty_group_state", "_add(robot, 'group_state', name='empty', group='manipulator')"),
    ("unknown_joint", STATE + "_add(state, 'joint', name='joint_99', value=0)"),
    (
        "joint_not_in_group",
        "g = _add(robot, 'group', name='wrist'); _add(g, 'joint', name='joint_6')\n"
        "state = _add(robot, 'group_state', name='s', group='wrist')\n"
        "_add(state, 'joint', name='joint_1', value=0)",
    ),
    ("group_state_fixed_joint", STATE + "_add(state, 'joint', name='joint_6-tool0', value=0)"),
    (
        "group_state_passive_joint",
        STATE + "_add(state, 'joint', name='joint_2', value=0)\n"
        "_add(robot, 'passive_joint', name='joint_2')",
    ),
    ("non_finite_joint_value", STATE + "_add(state, 'joint', name='joint_1', value='nan')"),
    ("group_state_above_limit", STATE + "_add(state, 'joint', name='joint_1', value=90)"),
    ("group_state_below_limit", STATE + "_add(state, 'joint', name='joint_2', value=-1.8)"),
    ("group_state_above_limit", STATE + "_add(state, 'joint', name='joint_1', value_deg=181)"),
    ("unknown_group", "_find('group_tcps').set('group', 'arm')"),
    ("empty_group_tcps", "_add(robot, 'group_tcps', group='manipulator')"),
    ("tcp_needs_one_rotation", "del _find('tcp', name='laser').attrib['rpy']"),
    ("tcp_needs_one_rotation", "_find('tcp', name='laser').set('wxyz', '1 0 0 0')"),
    ("missing_attribute", "del _find('tcp', name='laser').attrib['xyz']"),
    ("tcp_zero_quaternion", "_find('tcp', name='welder').set('wxyz', '0 0 0 0')"),
    ("non_finite_number", "_find('tcp', name='welder').set('xyz', '0 inf 0')"),
    ("duplicate_name", "_find('tcp', name='welder').set('name', 'laser')"),
    ("unknown_group", "_add(robot, 'end_effector', name='e', group='tool', parent_link='tool0')"),
    (
        "end_effector_overlaps_parent_group",
        "g = _add(robot, 'group', name='wrist'); _add(g, 'joint', name='joint_6')\n"
        "_add(robot, 'end_effector', name='e', group='wrist', parent_link='link_5',"
        " parent_group='manipulator')",
    ),
    (
        "unknown_link",
        "g = _add(robot, 'group', name='wrist'); _add(g, 'joint', name='joint_6')\n"
        "_add(robot, 'end_effector', name='e', group='wrist', parent_link='flange')",
    ),
    ("invalid_virtual_joint_type", "_find('virtual_joint').set('type', 'revolute')"),
    ("virtual_joint_not_root", "_find('virtual_joint').set('child_link', 'link_1')"),
    ("unknown_link", "_find('virtual_joint').set('child_link', 'nowhere')"),
    ("virtual_joint_parent_is_link", "_find('virtual_joint').set('parent_frame', 'tool0')"),
    ("duplicate_name", "_find('virtual_joint').set('name', 'joint_1')"),
    ("unknown_joint", "_add(robot, 'passive_joint', name='joint_99')"),
    (
        "unknown_link",
        "_add(robot, 'disable_collisions', link1='link_1', link2='link_99', reason='Never')",
    ),
    (
        "disable_collisions_same_link",
        "_add(robot, 'disable_collisions', link1='link_1', link2='link_1', reason='Never')",
    ),
    (
        "duplicate_collision_pair",
        "_add(robot, 'disable_collisions', link1='link_1', link2='base_link', reason='Never')",
    ),
    (
        "unknown_link",
        "m = _add(robot, 'collision_margins', default_margin=0.02)\n"
        "_add(m, 'pair_margin', link1='link_1', link2='x', margin=0.1)",
    ),
    ("non_finite_margin", "_add(robot, 'collision_margins', default_margin='inf')"),
    (
        "non_finite_margin",
        "m = _add(robot, 'collision_margins', default_margin=0.02)\n"
        "_add(m, 'pair_margin', link1='link_1', link2='link_6', margin='nan')",
    ),
    (
        "duplicate_collision_margins",
        "_add(robot, 'collision_margins', default_margin=0)\n"
        "_add(robot, 'collision_margins', default_margin=0)",
    ),
    (
        "plugin_config_refused",
        "_add(robot, 'kinematics_plugin_config', filename='kinematics.yaml')",
    ),
    (
        "plugin_config_refused",
        "_add(robot, 'contact_managers_plugin_config', filename='contact.yaml')",
    ),
    ("plugin_config_refused", "_add(robot, 'calibration_config', filename='calibration.yaml')"),
    (
        "missing_manipulator_group",
        "_find('group').set('name', 'arm'); _find('group_state').set('group', 'arm')\n"
        "_find('group_tcps').set('group', 'arm')",
    ),
    # a name holding a line break, control or bidirectional control, as a URDF link's is
    (
        "invalid_text_character",
        "g = _add(robot, 'group', name='wrist\\nx'); _add(g, 'joint', name='joint_6')",
    ),
    ("invalid_text_character", "_find('group_state').set('name', 'home\\u202e')"),
    ("invalid_text_character", "_find('tcp', name='laser').set('name', 'laser\\u2028beam')"),
    (
        "invalid_text_character",
        "g = _add(robot, 'group', name='wrist'); _add(g, 'joint', name='joint_6')\n"
        "_add(robot, 'end_effector', name='torch\\tx', group='wrist', parent_link='link_5')",
    ),
    ("invalid_text_character", "_find('virtual_joint').set('name', 'world\\x85joint')"),
    ("robot_name_mismatch", "robot.set('name', 'irb2400')"),
    ("root_not_robot", "robot.tag = 'robot_semantics'"),
    ("invalid_version", "robot.set('version', '1.0.0-beta')"),
]

REAL = "from pathlib import Path\nexec(Path('{real}').read_text())\n"

# Whole generator sources (replacing srdf.py) and the finding each must give.
GENERATORS = [
    ("generator_raised", "def gen_srdf():\n    raise ValueError('no arm here')\n"),
    ("generator_raised", "def gen_srdf(:\n    pass\n"),
    ("generator_exited", "import sys\n\ndef gen_srdf():\n    sys.exit(3)\n"),
    ("generator_exited", "import os\n\ndef gen_srdf():\n    os._exit(0)\n"),
    ("generator_timeout", "def gen_srdf():\n    while True:\n        pass\n"),
    # returned, but a thread left running kept the process alive: generator_timeout, at 60 s
    (
        "generator_left_thread",
        REAL + "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(3600,), name='poller').start()\n",
    ),
    # the real generator, its allowed collisions iterated as a set (order by hash seed)
    (
        "generator_not_deterministic",
        REAL + "ALLOWED_COLLISIONS = set(ALLOWED_COLLISIONS)\n",
    ),
    ("missing_gen_srdf", "def generate():\n    return {}\n"),
    ("gen_srdf_takes_arguments", "def gen_srdf(robot):\n    return {}\n"),
    ("envelope_not_dict", "def gen_srdf():\n    return '<robot name=\"abb_irb2400\"/>'\n"),
    (
        "envelope_missing_key",
        "def gen_srdf():\n    return {'xml': '<robot name=\"abb_irb2400\"/>'}\n",
    ),
    (
        "envelope_unknown_key",
        "ENV = {'xml': '<robot/>', 'urdf': 'robot.urdf', 'srdf': 'x.srdf'}\n"
        "def gen_srdf():\n    return ENV\n",
    ),
    (
        "envelope_xml_type",
        "def gen_srdf():\n    return {'xml': b'<robot/>', 'urdf': 'robot.urdf'}\n",
    ),
    ("urdf_path_not_string", "def gen_srdf():\n    return {'xml': '<robot/>', 'urdf': None}\n"),
    ("urdf_path_empty", "def gen_srdf():\n    return {'xml': '<robot/>', 'urdf': ''}\n"),
    (
        "urdf_path_backslash",
        "def gen_srdf():\n"
        "    return {'xml': '<robot/>', 'urdf': '..\\\\abb_irb2400\\\\robot.urdf'}\n",
    ),
    (
        "urdf_path_absolute",
        "def gen_srdf():\n    return {'xml': '<robot/>', 'urdf': '/etc/robot.urdf'}\n",
    ),
    (
        "urdf_path_not_urdf",
        "def gen_srdf():\n    return {'xml': '<robot/>', 'urdf': 'robot.xml'}\n",
    ),
    (
        "urdf_path_missing",
        "def gen_srdf():\n    return {'xml': '<robot/>', 'urdf': 'meshes/robot.urdf'}\n",
    ),
    (
        "urdf_path_outside_repo",
        "def gen_srdf():\n    return {'xml': '<robot/>', 'urdf': '../../../../x/robot.urdf'}\n",
    ),
    (
        "invalid_xml",
        "def gen_srdf():\n"
        "    return {'xml': '<robot name=\"abb_irb2400\">', 'urdf': 'robot.urdf'}\n",
    ),
    # 40 MB returned: sent whole to the compiler through a JSON file, twice, read into memory
    (
        "file_too_large",
        "def gen_srdf():\n"
        "    return {'xml': '<robot name=\"abb_irb2400\">' + ' ' * 40_000_000 + '</robot>', "
        "'urdf': 'robot.urdf'}\n",
    ),
    (
        "generator_printed",
        REAL + "print('debug')\n",
    ),
    (
        "generator_wrote_files",
        REAL + "Path('robot.srdf').write_text('x')\n",
    ),
    (
        "generator_wrote_files",
        REAL + "Path('{real}').write_text('x')\n",
    ),
    # a database read by sqlite, in C: no input of the step (an in-memory one is no file)
    (
        "generator_read_untracked_file",
        REAL + "import sqlite3\n"
        "sqlite3.connect(Path('{real}').with_name('NOTICE').as_uri() + '?mode=ro', uri=True)\n",
    ),
    # an extended attribute set or removed: a change to the file as chmod is (both passed)
    (
        "generator_wrote_files",
        REAL + "import os\nos.setxattr('{real}', 'user.note', b'1')\n",
    ),
    (
        "generator_wrote_files",
        REAL + "import os\nos.removexattr('{real}', 'user.note')\n",
    ),
    (
        "generator_spawned_process",
        REAL + "import os\nos.system('true')\n",
    ),
    # a pseudo-terminal's child, and multiprocessing's spawn, which calls _posixsubprocess
    # itself: neither raised an audit event the guard refused
    (
        "generator_spawned_process",
        REAL + "import os\npid, fd = os.forkpty()\nif pid == 0:\n    os._exit(0)\n",
    ),
    (
        "generator_spawned_process",
        REAL + "import sys\nfrom multiprocessing import util\n"
        "util.spawnv_passfds(sys.executable.encode(), [b'python', b'-c', b'pass'], [])\n",
    ),
    # the checkout's absolute path: both runs agree on it, another clone builds other bytes
    (
        "generator_output_has_path",
        "import os\n\ndef gen_srdf():\n"
        "    here = os.path.dirname(os.path.abspath(__file__))\n"
        '    xml = f\'<robot name="abb_irb2400"><group name="{here}"/></robot>\'\n'
        "    return {'xml': xml, 'urdf': 'robot.urdf'}\n",
    ),
    # a data file beside srdf.py is no input of the srdf step: its change went unseen
    (
        "generator_read_untracked_file",
        REAL + "Path(__file__).with_name('NOTICE').read_text()\n",
    ),
    # outside its folder but in the repository: another robot's URDF, a cell's file
    (
        "generator_read_untracked_file",
        REAL + "(Path(__file__).parents[1] / 'lbr_iiwa_14_r820' / 'robot.urdf').read_text()\n",
    ),
    (
        "generator_read_untracked_file",
        REAL + "(Path(__file__).parents[2] / 'cells/weld_cell_a/machine.json').read_text()\n",
    ),
    # lxml reads a file named by path in libxml2, where no audit hook sees it (another robot's
    # URDF, a tcps.xml beside srdf.py): by the default parser, one of its own, or a file: URL
    *(
        (
            "generator_read_untracked_file",
            REAL + f"from lxml import etree\netree.parse({source})\n",
        )
        for source in [
            "str(Path(__file__).parents[1] / 'lbr_iiwa_14_r820' / 'robot.urdf')",
            "str(Path(__file__).parents[1] / 'lbr_iiwa_14_r820' / 'robot.urdf'), "
            "etree.XMLParser(remove_blank_text=True)",
            "(Path(__file__).parents[1] / 'lbr_iiwa_14_r820' / 'robot.urdf').as_uri()",
        ]
    ),
]

# (finding code, [(old, new)] in the URDF, edit of the generator's XML) for rules that need
# a joint kind the example robots lack.
URDF_CASES = [
    ("group_state_mimic_joint", [(J6_LIMIT, J6_LIMIT + '<mimic joint="joint_5"/>')], "pass"),
    (
        "degrees_on_prismatic_joint",
        [(J6, '<joint name="joint_6" type="prismatic">')],
        "j = _find('joint', name='joint_6'); j.attrib.pop('value'); j.set('value_deg', '1')",
    ),
]


def run_srdf(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, list[dict[str, str]]]:
    """Run `pipeline --json srdf ...` in the scratch repo; the exit status and the findings.

    The time limit is generous (a loaded machine must not turn a case into a timeout); the
    timeout case passes its own `--timeout 1`, which argparse lets win as the later one.
    """
    monkeypatch.chdir(repo)
    status = main(["--json", "srdf", "--timeout", "30", *argv])
    err = capsys.readouterr().err
    return status, (json.loads(err) if err.strip() else [])


def assert_refused(
    status: int, findings: list[dict[str, str]], code: str, file: str, out: Path
) -> None:
    assert status == 2
    found = [f for f in findings if f["code"] == code and f["file"] == file]
    assert found, findings
    # one line naming the rule and its fix: `file:place: code: what is wrong; how to fix it`
    assert all(f["hint"] for f in found), found
    assert not out.exists()


def wrap(body: str) -> str:
    return WRAP.format(body=textwrap.indent(body, "    "))


@pytest.mark.parametrize(("code", "body"), XML_CASES, ids=[c for c, _ in XML_CASES])
def test_srdf_rule(
    code: str,
    body: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = repo / SOURCE
    source.write_text(source.read_text() + wrap(body))
    status, findings = run_srdf(repo, monkeypatch, capsys, f"{SOURCE}=out/robot.srdf")
    assert_refused(status, findings, code, SOURCE, repo / "out/robot.srdf")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        # a new-user trial: r2d2's starter with its tip misspelt, 'left_tipp', was told that too
        # and that each joint of its home state is not in the group, which holds none
        ("_find('chain').set('tip_link', 'tool9')", "unknown_link"),
        ("_find('chain').set('base_link', 'base_lnk')", "unknown_link"),
        ("c = _find('chain'); c.set('base_link', 'tool0'); c.set('tip_link', 'base_link')", ""),
        (
            "g = _add(robot, 'group', name='wrist'); _add(g, 'joint', name='joint_66')\n"
            "state = _add(robot, 'group_state', name='s', group='wrist')\n"
            "_add(state, 'joint', name='joint_6', value=0)",
            "unknown_joint",
        ),
    ],
    ids=["chain-tip", "chain-base", "chain-not-a-path", "joint-member"],
)
def test_a_group_whose_member_is_refused_is_not_also_judged_by_its_states(
    body: str,
    code: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its joints are not known: the member's own finding says why, and no state's joint is
    called not in the group."""
    source = repo / SOURCE
    source.write_text(source.read_text() + wrap(body))
    status, findings = run_srdf(repo, monkeypatch, capsys, f"{SOURCE}=out/robot.srdf")
    codes = [f["code"] for f in findings]
    assert status == 2 and (code or "chain_not_a_path") in codes
    assert "joint_not_in_group" not in codes, findings


def install_generator(repo: Path, text: str) -> None:
    """Make `text` the robot's srdf.py, its `{real}` naming a copy of the real source."""
    real = repo / ABB / "real_srdf.py"
    shutil.copy(repo / SOURCE, real)
    (repo / SOURCE).write_text(text.replace("{real}", str(real)))


@pytest.mark.parametrize(("code", "text"), GENERATORS, ids=[c for c, _ in GENERATORS])
def test_srdf_generator(
    code: str,
    text: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    install_generator(repo, text)
    limit = ["--timeout", "1"] if code == "generator_timeout" else []
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE, *limit)
    assert_refused(status, findings, code, SOURCE, repo / ABB / "srdf.srdf")
    assert len([f for f in findings if f["code"].startswith("generator_")]) <= 1
    assert not (repo / "robot.srdf").exists()
    assert (repo / ABB / "real_srdf.py").read_bytes() == (REPO / SOURCE).read_bytes()


@pytest.mark.parametrize(("code", "edits", "body"), URDF_CASES, ids=[c for c, _, _ in URDF_CASES])
def test_srdf_rule_needing_urdf_edit(
    code: str,
    edits: list[tuple[str, str]],
    body: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    urdf = repo / URDF
    text = urdf.read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    urdf.write_text(text)
    source = repo / SOURCE
    source.write_text(source.read_text() + wrap(body))
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE, "-o", "out.srdf")
    assert_refused(status, findings, code, SOURCE, repo / "out.srdf")


def test_group_state_units_rad_for_revolute_m_for_prismatic(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Group-state values are URDF-native: limits checked and named in rad or m by joint type."""
    urdf = repo / URDF
    urdf.write_text(urdf.read_text().replace(J6, '<joint name="joint_6" type="prismatic">'))
    body = "_find('joint', name='joint_6').set('value', '7.5')\n"
    body += "_find('joint', name='joint_1').set('value', '90')"
    source = repo / SOURCE
    source.write_text(source.read_text() + wrap(body))
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    assert status == 2
    assert sorted((f["code"], f["message"].split(" value ")[1]) for f in findings) == [
        ("group_state_above_limit", "7.5 m is above the upper limit 6.9813"),
        ("group_state_above_limit", "90.0 rad is above the upper limit 3.1416"),
    ]


@pytest.mark.parametrize(("value", "degrees"), [("90", True), ("-45", True), ("3.3", False)])
def test_group_state_above_limit_hints_degrees_only_for_a_value_over_a_turn(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
    degrees: bool,
) -> None:
    """0.3 over a limit of 0.19 rad was told it 'looks like degrees: write 0.0052 rad'."""
    body = f"_find('joint', name='joint_1').set('value', '{value}')"
    source = repo / SOURCE
    source.write_text(source.read_text() + wrap(body))
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    assert status == 2
    [finding] = findings
    assert ("looks like degrees" in finding["hint"]) is degrees, finding["hint"]


def test_srdf_bad_urdf_is_reported_in_the_urdf(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    urdf = repo / URDF
    urdf.write_text(urdf.read_text().replace('velocity="2.618"', 'velocity="-1"', 1))
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    assert_refused(status, findings, "invalid_joint_velocity", URDF, repo / ABB / "srdf.srdf")


def make_rosie(repo: Path) -> Path:
    """A Rosie model: the abb_irb2400 sources under the model id rosie_test."""
    folder = repo / ROSIE
    shutil.copytree(repo / ABB, folder)
    urdf = folder / "robot.urdf"
    urdf.write_text(urdf.read_text().replace("abb_irb2400", "rosie_test"))
    source = folder / "srdf.py"
    source.write_text(source.read_text().replace('"abb_irb2400"', '"rosie_test"'))
    return source


HOME = "_find('group_state').set('name', 'home')\n"
ROSIE_CASES = [
    ("missing_home_state", ""),
    (
        "home_state_not_zero",
        HOME + "_find('joint', name='joint_3').set('value', '0.5')",
    ),
    (
        "home_state_not_zero",
        HOME + "_find('group_state').remove(_find('joint', name='joint_3'))",
    ),
]


@pytest.mark.parametrize(("code", "body"), ROSIE_CASES, ids=[c for c, _ in ROSIE_CASES])
def test_srdf_rosie_rule(
    code: str,
    body: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = make_rosie(repo)
    source.write_text(source.read_text() + wrap(body or "pass"))
    status, findings = run_srdf(repo, monkeypatch, capsys, f"{ROSIE}/srdf.py")
    assert_refused(status, findings, code, f"{ROSIE}/srdf.py", repo / ROSIE / "srdf.srdf")


def test_srdf_rosie_home_at_zero_passes(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_rosie(repo)
    source.write_text(source.read_text() + wrap("_find('group_state').set('name', 'home')"))
    status, findings = run_srdf(repo, monkeypatch, capsys, f"{ROSIE}/srdf.py")
    assert (status, findings) == (0, [])
    assert (
        b'<group_state name="home" group="manipulator">'
        in (repo / ROSIE / "srdf.srdf").read_bytes()
    )


def test_missing_collision_reason_is_allowed(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pair without `reason` (optional for Tesseract and MoveIt) is accepted and kept so."""
    source = repo / SOURCE
    body = "_add(robot, 'disable_collisions', link1='link_1', link2='link_6')"
    source.write_text(source.read_text() + wrap(body))
    status, findings = run_srdf(repo, monkeypatch, capsys, f"{SOURCE}=out/robot.srdf")
    assert (status, findings) == (0, [])
    srdf = (repo / "out/robot.srdf").read_text()
    assert '<disable_collisions link1="link_1" link2="link_6"/>' in srdf


def test_tcp_name_is_scoped_to_its_group(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One TCP name in two groups is two transforms: duplicate_name is per group (Tesseract)."""
    body = (
        "g = _add(robot, 'group', name='wrist')\n"
        "_add(g, 'chain', base_link='link_4', tip_link='tool0')\n"
        "t = _add(robot, 'group_tcps', group='wrist')\n"
        "_add(t, 'tcp', name='laser', xyz='0 0 1', rpy='0 0 0')"
    )
    source = repo / SOURCE
    source.write_text(source.read_text() + wrap(body))
    status, findings = run_srdf(repo, monkeypatch, capsys, f"{SOURCE}=out/robot.srdf")
    assert (status, findings) == (0, [])
    srdf = (repo / "out/robot.srdf").read_text()
    assert srdf.count('<tcp name="laser"') == 2


TARGET_CASES = [
    ("output_not_srdf", [f"{SOURCE}=out/robot.xml"]),
    ("duplicate_output", [f"{SOURCE}=out/a.srdf", "robots/lbr_iiwa_14_r820/srdf.py=out/a.srdf"]),
    ("source_not_python", ["robots/abb_irb2400/robot.urdf=out/a.srdf"]),
    ("output_not_srdf", [f"{SOURCE}=out/robot.py"]),
    ("file_missing", ["robots/abb_irb2400/x=y.py"]),
    # a source with no file name (the current folder, the root, an empty word) had no
    # SOURCE.srdf to write: a ValueError traceback (hostile-input trial)
    ("source_not_python", ["."]),
    ("source_not_python", ["/"]),
    ("source_not_python", [""]),
    ("output_with_many_targets", [SOURCE, "robots/lbr_iiwa_14_r820/srdf.py", "-o", "out/a.srdf"]),
    # an empty -o was taken for no -o: SOURCE.srdf written beside the source (hostile trial)
    ("output_not_srdf", [SOURCE, "-o", ""]),
    ("file_missing", ["robots/abb_irb2400/nothing.py"]),
]


@pytest.mark.parametrize(
    ("code", "argv"), TARGET_CASES, ids=[f"{c}-{'-'.join(a)[:40]}" for c, a in TARGET_CASES]
)
def test_srdf_target_rule(
    code: str,
    argv: list[str],
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, findings = run_srdf(repo, monkeypatch, capsys, *argv)
    assert status == 2
    assert [f["code"] for f in findings] == [code]
    assert not (repo / "out").exists()


# a path may hold '=' itself (a variant's folder robots/x/arm=left/): SOURCE.py alone, with -o,
# and SOURCE.py=OUT.srdf each named the source before its first '=', source_not_python ('the
# source is not a .py file'), or output_with_many_targets for one source (hostile-input trial)
EQUALS = "robots/abb_irb2400/x=y.py"
EQUALS_CASES = [
    ([EQUALS], "robots/abb_irb2400/x=y.srdf"),
    ([EQUALS, "-o", "out/a.srdf"], "out/a.srdf"),
    ([f"{EQUALS}=out/a.srdf"], "out/a.srdf"),
    ([f"{SOURCE}=out/b=c.srdf"], "out/b=c.srdf"),
]


@pytest.mark.parametrize(("argv", "written"), EQUALS_CASES, ids=[w for _, w in EQUALS_CASES])
def test_srdf_target_path_holding_an_equals_sign(
    argv: list[str],
    written: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shutil.copy(repo / SOURCE, repo / EQUALS)
    status, findings = run_srdf(repo, monkeypatch, capsys, *argv)
    assert (status, findings) == (0, [])
    assert (repo / written).read_bytes().startswith(b"<?xml")


def test_srdf_output_unwritable(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output the system refuses (a file where its folder should be) is a finding, exit 2."""
    (repo / "out").write_text("a file, not a folder")
    status, findings = run_srdf(repo, monkeypatch, capsys, f"{SOURCE}=out/robot.srdf")
    assert status == 2
    assert [(f["code"], f["file"]) for f in findings] == [("output_unwritable", "out/robot.srdf")]


@pytest.mark.parametrize("blocked", ["second", "first"])
def test_srdf_output_unwritable_writes_no_other_output(
    blocked: str, repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One refused output of two: exit 2 and nothing written, as docs/srdf.md promises."""
    (repo / "blocker").write_text("a file, not a folder")
    (repo / "out").mkdir()
    (repo / "out/lbr.srdf").write_text("previous output")
    outputs = ["out/abb.srdf", "blocker/lbr.srdf"]
    if blocked == "first":
        outputs = ["blocker/abb.srdf", "out/lbr.srdf"]
    sources = [SOURCE, "robots/lbr_iiwa_14_r820/srdf.py"]
    argv = [f"{s}={o}" for s, o in zip(sources, outputs, strict=True)]
    status, findings = run_srdf(repo, monkeypatch, capsys, *argv)
    assert status == 2
    blocked_output = outputs[0] if blocked == "first" else outputs[1]
    assert [(f["code"], f["file"]) for f in findings] == [("output_unwritable", blocked_output)]
    assert sorted(p.name for p in (repo / "out").iterdir()) == ["lbr.srdf"]  # no temporary left
    assert (repo / "out/lbr.srdf").read_text() == "previous output"


# Rules of the build step only (pipeline srdf may link any URDF the spec allows).
BUILD_CASES = [("urdf_path_other_robot", "../lbr_iiwa_14_r820/robot.urdf")]


@pytest.mark.parametrize(("code", "urdf"), BUILD_CASES, ids=[c for c, _ in BUILD_CASES])
def test_srdf_build_step_rule(code: str, urdf: str, repo: Path) -> None:
    from pipeline.findings import ContractError
    from pipeline.srdf.compile import make_srdf

    source = repo / SOURCE
    text = source.read_text()
    assert '"urdf": "robot.urdf"' in text
    source.write_text(text.replace('"urdf": "robot.urdf"', f'"urdf": {urdf!r}'))
    with pytest.raises(ContractError) as raised:
        make_srdf(repo, "abb_irb2400")
    assert [(f.code, f.file) for f in raised.value.findings] == [(code, SOURCE)]


# Whole generator sources and the warning each must give, the SRDF written all the same.
def warning_lines(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    timeout: str = "30",
) -> list[str]:
    """Make `text` the generator, run `pipeline srdf` on it: exit 0, the SRDF written, and the
    lines it printed on stderr (its warnings)."""
    install_generator(repo, text)
    monkeypatch.chdir(repo)
    assert main(["srdf", "--timeout", timeout, SOURCE]) == 0
    assert (repo / ABB / "srdf.srdf").is_file()
    return capsys.readouterr().err.splitlines()


WARNING_CASES = [("generator_wrote_stderr", REAL + "import sys\nsys.stderr.write('note\\n')\n")]


@pytest.mark.parametrize(("code", "text"), WARNING_CASES, ids=[c for c, _ in WARNING_CASES])
def test_srdf_generator_warning(
    code: str,
    text: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    [line] = warning_lines(repo, monkeypatch, capsys, text)
    assert line.startswith(f"{SOURCE}:gen_srdf(): {code}: ") and line.endswith(" (warning)")


# Group states whose links touch where no <disable_collisions> allows it (contact_check.py):
# warnings, each naming the state's place; the SRDF is written.
CONTACT_CASES = [
    # link_6's mesh hull reaches into link_4's at all-zeros: the setup assistant's "Default"
    (
        "group_state_in_contact",
        REAL + "ALLOWED_COLLISIONS.remove(('link_4', 'link_6', 'Default'))\n",
        ["link_4 and link_6"],
    ),
    # link_6 turns inside link_4's fork: in contact at every joint_5, so in each state
    (
        "group_state_in_contact",
        REAL
        + "ALLOWED_COLLISIONS.remove(('link_4', 'link_6', 'Default'))\n"
        + "STATES[('manipulator', 'bent')] = {'joint_5': 1.5}\n",
        ["link_4 and link_6", "link_4 and link_6"],
    ),
    # without the Adjacent entries of its first joints, both states find those pairs
    (
        "group_state_in_contact",
        REAL
        + "ALLOWED_COLLISIONS[:] = [p for p in ALLOWED_COLLISIONS if p[0] != 'base_link']\n"
        + "STATES[('manipulator', 'bent')] = {'joint_5': 1.5}\n",
        ["base_link and link_1", "base_link and link_1"],
    ),
]


@pytest.mark.parametrize(("code", "text", "pairs"), CONTACT_CASES)
def test_srdf_group_state_contact_warning(
    code: str,
    text: str,
    pairs: list[str],
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = warning_lines(repo, monkeypatch, capsys, text)
    assert [line.split(" puts links ")[1].split(" in contact")[0] for line in lines] == pairs
    for line in lines:
        assert line.startswith(f"{SOURCE}:/robot/group_state[") and f": {code}: " in line
        assert line.endswith(" (warning)") and 'reason="Default"/>' in line


def _with_group(group: str, members: str) -> str:
    """REAL, its gen_srdf() wrapped to add `members` (kind, attributes) to group `group`."""
    return REAL + (
        "import xml.etree.ElementTree as _ET\n"
        "_gen = gen_srdf\n"
        "def gen_srdf():\n"
        "    out = _gen()\n"
        f"    group = out['xml'].find(\"group[@name='{group}']\")\n"
        "    if group is None:\n"
        f"        group = _ET.Element('group', {{'name': '{group}'}})\n"
        "        out['xml'].insert(0, group)\n"
        f"    for kind, attrs in {members}:\n"
        "        _ET.SubElement(group, kind, attrs)\n"
        "    return out\n"
    )


# Groups Tesseract's Environment builds no joint group from (jointgroups.py): warnings
JOINT_GROUP_CASES = [
    # two arms' chains in one group (here: two chains of the one arm)
    (
        "tesseract_no_joint_group",
        _with_group(
            group="arms",
            members="[('chain', {'base_link': 'base_link', 'tip_link': 'link_3'}), "
            "('chain', {'base_link': 'link_3', 'tip_link': 'tool0'})]",
        ),
        ["group 'arms' is a group of 2 chains"],
    ),
    # a second chain added to the manipulator's
    (
        "tesseract_no_joint_group",
        _with_group(
            group="manipulator",
            members="[('chain', {'base_link': 'link_3', 'tip_link': 'link_6'})]",
        ),
        ["group 'manipulator' is a group of 2 chains"],
    ),
    # an end effector's group of links needs no joint group: no warning
    (
        "none",
        _with_group(
            group="hand", members="[('link', {'name': 'link_6'}), ('link', {'name': 'tool0'})]"
        ),
        [],
    ),
]


@pytest.mark.parametrize(("code", "text", "starts"), JOINT_GROUP_CASES)
def test_srdf_joint_group_warning(
    code: str,
    text: str,
    starts: list[str],
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = warning_lines(repo, monkeypatch, capsys, text)
    assert [line.split(f": {code}: ")[1].split(":")[0] for line in lines] == starts
    assert all(line.endswith(" (warning)") for line in lines)


# More group states than the contact check's budget of constraints collides (made 10,000 here,
# some 20 of abb's programmes): one warning at the first state not collided.
BUDGET_CASES = [
    (
        "group_states_not_collided",
        REAL
        + "ALLOWED_COLLISIONS.clear()\n"
        + "STATES.update({('manipulator', f's{i}'): {'joint_1': i / 10} for i in range(20)})\n",
    ),
]


@pytest.mark.parametrize(("code", "text"), BUDGET_CASES, ids=[c for c, _ in BUDGET_CASES])
def test_srdf_contact_budget_warning(
    code: str,
    text: str,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("pipeline.contacts.PROGRAMME_BUDGET", 10_000, raising=False)
    lines = warning_lines(repo, monkeypatch, capsys, text)
    assert [line.split(": ")[1] for line in lines] == ["group_state_in_contact"] * (
        len(lines) - 1
    ) + [code]
    assert lines[-1].endswith(" (warning)")
    assert " having solved linear programmes of the 10,000 constraints " in lines[-1]


def test_srdf_states_of_one_pose_are_collided_once(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """10,000 states of one pose cost one state's programmes, and each still gets its warnings."""
    text = REAL + "ALLOWED_COLLISIONS.clear()\n"
    text += "STATES.update({('manipulator', f's{i}'): {'joint_1': 0.0} for i in range(10000)})\n"
    monkeypatch.setattr("pipeline.contacts.PROGRAMME_BUDGET", 30_000, raising=False)
    install_generator(repo, text)
    # every warning: the lines stop at FINDINGS_SHOWN, `--json` gives them all
    status, warnings = run_srdf(repo, monkeypatch, capsys, "--timeout", "60", SOURCE)
    assert status == 0 and (repo / ABB / "srdf.srdf").is_file()
    assert {warning["code"] for warning in warnings} == {"group_state_in_contact"}
    assert warnings and len(warnings) % 10001 == 0  # all-zeros and the 10,000, alike


def test_every_srdf_finding_code_has_a_case() -> None:
    """Each code the SRDF modules emit appears in one of the tables above."""
    emitted: set[str] = set()
    for path in (REPO / "pipeline/srdf").glob("*.py"):
        pattern = r'(?:add|_finding|bad|_bad|Finding)\(\s*"([a-z][a-z_]+)"'
        emitted |= set(re.findall(pattern, path.read_text()))
    tables = [XML_CASES, GENERATORS, URDF_CASES, ROSIE_CASES, TARGET_CASES, BUILD_CASES]
    tables += [WARNING_CASES, CONTACT_CASES, JOINT_GROUP_CASES, BUDGET_CASES]
    tested = {case[0] for table in tables for case in table}
    assert len(emitted) > 50
    assert emitted - tested == set()


# A file of the robot's folder as gen_srdf() names it, and whether it is an input of the srdf step
READS = [
    ("robot.urdf", True),
    ("./robot.urdf", True),
    ("meshes/../robot.urdf", True),
    # a mesh is the urdf step's input, whose stamp the srdf step's inputs hold: a changed mesh
    # re-runs both (a new-user trial: a TCP placed from a tool mesh's bounds was refused)
    ("meshes/link_6.stl", True),
    ("meshes/./link_6.dae", True),
    ("tcps.py", True),
    # no step's input: a hidden file or an editor's backup in meshes/ (the build lists neither),
    # a link to robot.urdf beside it (re-pointed unseen), a source of another step
    ("meshes/.tool.stl", False),
    ("meshes/link_6.stl~", False),
    # a hidden module: the build lists none (sourcenames.ignored), so a change to it went unseen
    (".tcps.py", False),
    ("__pycache__/tcps.py", False),
    ("urdf_link.urdf", False),
    ("config.json", False),
]


@pytest.mark.parametrize(("name", "read"), READS, ids=[n for n, _ in READS])
def test_a_generator_may_read_its_inputs_robot_urdf_modules_and_meshes(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    read: bool,
) -> None:
    """The read guard refuses files that are no input; robot.urdf, .py files and meshes are."""
    folder = repo / ABB
    (folder / "meshes/.tool.stl").write_bytes(b"solid tool\nendsolid tool\n")
    shutil.copy(folder / "meshes/link_6.stl", folder / "meshes/link_6.stl~")
    (folder / "urdf_link.urdf").symlink_to("robot.urdf")
    (folder / "__pycache__").mkdir()
    for module in ("tcps.py", ".tcps.py", "__pycache__/tcps.py"):
        (folder / module).write_text("TCPS = {}\n")
    install_generator(repo, REAL + f"assert (Path(__file__).parent / {name!r}).read_bytes()\n")
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    if read:
        assert (status, findings) == (0, [])
        return
    [finding] = findings
    assert (status, finding["code"]) == (2, "generator_read_untracked_file")
    assert finding["message"] == (
        f"read {ABB}/{name}, which is no input of the srdf step: a change to it would leave the "
        "built SRDF stale"
    )
    assert finding["hint"].endswith("or a mesh in meshes/, named plainly: those are inputs")


# A `..` after a linked folder climbs out of the folder it leads to, not back to where it was
# named: meshes/sub/../link_6.stl, meshes/sub a link to elsewhere/inner, reads elsewhere/link_6.stl
CLIMBS = [
    ("meshes/sub/../link_6.stl", "elsewhere/link_6.stl"),
    ("meshes/sub/../robot.urdf", "elsewhere/robot.urdf"),
    ("meshes/sub/../tcps.py", "elsewhere/tcps.py"),
]


@pytest.mark.parametrize(("name", "read"), CLIMBS, ids=[n for n, _ in CLIMBS])
def test_a_dotdot_after_a_linked_folder_is_read_where_it_leads(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    read: str,
) -> None:
    """The guard judged a path with its `..` taken away by name (os.path.abspath): behind a
    linked folder of meshes/, which neither the build lists through nor the urdf step refuses
    when no <mesh> names it, gen_srdf() read a file of no step as meshes/link_6.stl, built,
    and after that file changed doit ran nothing and `pipeline check` said current."""
    (repo / "elsewhere/inner").mkdir(parents=True)
    for file in ("link_6.stl", "robot.urdf", "tcps.py"):
        (repo / "elsewhere" / file).write_text("TCPS = {}\n")
    (repo / ABB / "meshes/sub").symlink_to("../../../elsewhere/inner")
    install_generator(repo, REAL + f"assert (Path(__file__).parent / {name!r}).read_bytes()\n")
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    [finding] = findings
    assert (status, finding["code"]) == (2, "generator_read_untracked_file")
    assert finding["message"] == (
        f"read {read}, outside {ABB}/, which is no input of the srdf step: a change to it would "
        "leave the built SRDF stale"
    )


def test_a_source_of_a_hidden_name_is_run_by_the_srdf_command(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pipeline srdf` runs any source it is given: one the build would not list, a draft
    .draft.py, reads itself (runpy), which the guard's hidden modules are not."""
    shutil.copy(repo / SOURCE, repo / ABB / ".draft.py")
    assert run_srdf(repo, monkeypatch, capsys, f"{ABB}/.draft.py=out/robot.srdf") == (0, [])


@pytest.mark.parametrize("name", ["':memory:'", "''", "'file:x?mode=memory', uri=True"])
def test_a_generator_may_use_a_database_in_memory(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """sqlite's in-memory (and private temporary) databases are no file of the repository."""
    use = f"import sqlite3\nsqlite3.connect({name}).execute('create table t(x)')\n"
    install_generator(repo, REAL.replace("exec(", use + "exec("))
    assert run_srdf(repo, monkeypatch, capsys, SOURCE) == (0, [])


def test_async_gen_srdf_is_one_finding_without_the_never_awaited_warning(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An async def gen_srdf() also gave generator_wrote_stderr, Python's RuntimeWarning that the
    coroutine was never awaited, naming pipeline/srdf/child.py (a new-user trial)."""
    install_generator(
        repo,
        "async def gen_srdf():\n"
        "    return {'xml': '<robot name=\"abb_irb2400\"/>', 'urdf': 'robot.urdf'}\n",
    )
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    [finding] = findings
    assert (status, finding["code"]) == (2, "envelope_not_dict")
    assert finding["message"] == "returned a coroutine, not a dictionary"
    assert "async def" in finding["hint"]


@pytest.mark.parametrize(
    ("start", "left"),
    [
        ("threading.Thread(target=time.sleep, args=(3600,), name='poller').start()", "'poller'"),
        # a pool never shut down: the interpreter joins its workers at exit, busy or idle
        (
            "from concurrent.futures import ThreadPoolExecutor\n"
            "POOL = ThreadPoolExecutor(1, 'pool')\nPOOL.submit(time.sleep, 3600)",
            "'pool_0'",
        ),
        # a daemon thread is stopped with the process, which ends once the XML is taken
        ("threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()", ""),
    ],
    ids=["thread", "pool", "daemon-thread"],
)
def test_a_thread_left_running_is_named_not_waited_for(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    start: str,
    left: str,
) -> None:
    """A non-daemon thread left running kept the child alive until generator_timeout, 'did not
    return', though gen_srdf() had returned (the interpreter waits for it at exit)."""
    install_generator(repo, REAL + "import threading, time\n" + start + "\n")
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    if not left:
        assert (status, findings) == (0, [])
        return
    [finding] = findings
    assert (status, finding["code"], finding["place"]) == (2, "generator_left_thread", "gen_srdf()")
    assert finding["message"] == f"returned leaving the thread {left} running"


# Generators whose envelope or leftovers acted after gen_srdf() returned, in child.py's own code,
# and what each is: (id, source, (code, place, message) or None for a clean pass).
# an element whose __iter__ (which child.py calls, then ET.tostring) does {body}
ELEMENT = (
    "import xml.etree.ElementTree as ET\nclass E(ET.Element):\n    def __iter__(self):\n"
    "        {body}\n"
    "def gen_srdf():\n"
    "    return {'xml': E('robot', {'name': 'abb_irb2400'}), 'urdf': 'robot.urdf'}\n"
)
# A timer set as gen_srdf()'s last statement, firing after the return unless child.py undoes it.
# Under load 0.1 ms of wall time passed before the return (a 0.0001 s ITIMER_REAL ended the
# process inside gen_srdf()): the XML holds 100 000 comments (not written to the SRDF), which
# child.py takes about 0.25 s of CPU to read after the return, past each timer; a CPU-time one
# (VIRTUAL, PROF, counted in 4 ms ticks of the process's own running) cannot run out in the few
# bytecodes before the return however loaded the machine, the wall-clock one only if the process
# stalls 50 ms there.
TIMER = (
    REAL + "import signal\n_real = gen_srdf\n"
    "def gen_srdf():\n    envelope = _real()\n"
    "    envelope['xml'].extend(ET.Comment('') for _ in range(100_000))\n"
    "    signal.setitimer(signal.{timer})\n    return envelope\n"
)
AFTER_RETURN = [
    # what still runs, a method of the element returned, ended or kept the process: "before
    # returning", "did not return", though gen_srdf() had returned
    (
        "element-method-exits",
        ELEMENT.replace("{body}", "__import__('os')._exit(0)"),
        (
            "generator_exited",
            "gen_srdf()",
            "the process ended with status 0 after gen_srdf() returned, before its envelope "
            "was read",
        ),
    ),
    (
        "element-method-loops",
        ELEMENT.replace("{body}", "while True: pass"),
        (
            "generator_timeout",
            "gen_srdf()",
            "returned, but its process did not end within 5 s and was stopped",
        ),
    ),
    # a key's __str__ raising ran in child.py: generator_exited "before returning", a traceback
    (
        "key-str-raises",
        REAL + "class K:\n    def __str__(self):\n        raise ValueError('no name')\n"
        "_real = gen_srdf\ngen_srdf = lambda: {**_real(), K(): 1}\n",
        ("envelope_unknown_key", "gen_srdf()", "the envelope has a key of type K, not a name"),
    ),
    # a dict subclass's own __getitem__ (generator_exited) or endless __iter__ (generator_timeout)
    (
        "dict-subclass-getitem",
        REAL + "class D(dict):\n    def __getitem__(self, key):\n        raise KeyError(key)\n"
        "_real = gen_srdf\ngen_srdf = lambda: D(_real())\n",
        None,
    ),
    (
        "dict-subclass-endless-iter",
        REAL + "import itertools\nclass D(dict):\n    def __iter__(self):\n"
        "        return map(str, itertools.count())\n"
        "_real = gen_srdf\ngen_srdf = lambda: D(_real())\n",
        None,
    ),
    # a recursion limit of 8 set in gen_srdf(): RecursionError in child.py, generator_exited
    (
        "recursion-limit",
        REAL + "import sys\n_real = gen_srdf\n"
        "def gen_srdf():\n    envelope = _real()\n    sys.setrecursionlimit(8)\n"
        "    return envelope\n",
        None,
    ),
    # a timer firing after the return: its signal ended the process, generator_exited -14
    ("alarm-timer", TIMER.replace("{timer}", "ITIMER_REAL, 0.05"), None),
    ("virtual-timer", TIMER.replace("{timer}", "ITIMER_VIRTUAL, 0.02"), None),
    ("prof-timer", TIMER.replace("{timer}", "ITIMER_PROF, 0.02"), None),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in AFTER_RETURN], ids=[c[0] for c in AFTER_RETURN]
)
def test_what_a_generator_left_acting_after_it_returned(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    expected: tuple[str, str, str] | None,
) -> None:
    """The envelope is read as the dict it is, a limit or timer it set undone, and what still
    runs after gen_srdf() returned is not told as its not returning."""
    install_generator(repo, text)
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE, "--timeout", "5")
    if expected is None:
        assert (status, findings) == (0, [])
        return
    [finding] = findings
    assert (status, finding["code"], finding["place"], finding["message"]) == (2, *expected)


def test_the_guards_names_no_source_are_sourcenames_ignored() -> None:
    """child_guard.py imports no pipeline code: it keeps its own copy of sourcenames.ignored."""
    import ast
    import inspect

    from pipeline import sourcenames
    from pipeline.srdf import child_guard

    assert child_guard._METADATA == sourcenames._METADATA
    names = [".tcps.py", "tcps.py~", "#tcps.py#", "#", "Thumbs.db", "DESKTOP.INI", "tcps.py"]
    assert [child_guard.ignored(n) for n in names] == [sourcenames.ignored(n) for n in names]
    # the same code, not only the same answers for these names: `len(name) > 2` in one copy
    # answered each of them alike, and a module in a folder named `##` was the guard's input,
    # not the build's
    code = [ast.dump(ast.parse(inspect.getsource(m.ignored))) for m in (child_guard, sourcenames)]
    assert code[0] == code[1]


def test_returned_xml_limit_is_the_xml_files_limit() -> None:
    """child.py imports no pipeline code: child_xml.py keeps its own copy of
    strict_io.XML_LIMIT."""
    from pipeline.strict_io import XML_LIMIT

    text = (REPO / "pipeline/srdf/child_xml.py").read_text()
    assert f"_XML_LIMIT = {XML_LIMIT // 1024 // 1024} * 1024 * 1024" in text


def test_returned_xml_over_the_limit_names_its_size(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 40 MB string was written whole to the result JSON by both runs and read back, before
    the XML reader refused one text of it as over 10 MB."""
    install_generator(
        repo, "def gen_srdf():\n    return {'xml': 'é' * 20_000_000, 'urdf': 'robot.urdf'}\n"
    )
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    [finding] = findings
    assert (status, finding["code"], finding["place"]) == (2, "file_too_large", 'gen_srdf()["xml"]')
    assert finding["message"] == "is 40000000 bytes of XML, over the limit of 33554432 bytes"


def test_generator_raised_a_long_message_is_one_short_line(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 10 MB exception message was printed whole, as one finding line (hostile sweep)."""
    install_generator(repo, "def gen_srdf():\n    raise ValueError('x' * 10_000_000)\n")
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    [finding] = findings
    assert (status, finding["code"]) == (2, "generator_raised")
    assert len(finding["message"]) < 600
    more = 10_000_000 + len("ValueError: ") - 500
    assert finding["message"].endswith(f"... ({more} more characters)")


@pytest.mark.parametrize("text", ["", "\n", "  \n\n"])
def test_an_empty_srdf_py_is_said_to_be_empty_and_how_to_write_one(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    """A new-user trial: `pipeline template srdf vision60 > robots/vision60/srdf.py`, run
    while the URDF still failed its rules, printed nothing but left the file the shell made,
    empty; the build then said the file 'defines no top-level function gen_srdf()'."""
    install_generator(repo, text)
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    [finding] = findings
    assert (status, finding["code"], finding["file"]) == (2, "missing_gen_srdf", SOURCE)
    assert finding["message"] == "is empty: it defines no top-level function gen_srdf()"
    assert finding["hint"].startswith(
        f"write one with `pipeline template srdf abb_irb2400 > {SOURCE}` once `pipeline "
        "validate abb_irb2400` passes (run before, it prints nothing and leaves the file empty)"
    )


def test_a_read_outside_the_robots_folder_names_the_repository_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shared data file elsewhere in the checkout was read unguarded, its changes unseen."""
    (repo / "data").mkdir()
    (repo / "data" / "tcps.json").write_text("{}")
    install_generator(repo, REAL + "(Path(__file__).parents[2] / 'data/tcps.json').read_text()\n")
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    [finding] = findings
    assert (status, finding["code"]) == (2, "generator_read_untracked_file")
    assert finding["message"].startswith(f"read data/tcps.json, outside {ABB}/, which is no input")


@pytest.mark.parametrize(
    ("source", "compiled", "code"),
    [
        # a module only compiled, beside srdf.py: no input of the step (inputs are .py files),
        # so a change to it left the SRDF stale and `pipeline check` saying current
        (None, "tcpname.pyc", "generator_read_untracked_file"),
        # the cache of a module beside srdf.py, which Python reads only while it matches its .py
        ("tcpname.py", f"__pycache__/tcpname.{sys.implementation.cache_tag}.pyc", None),
    ],
    ids=["sourceless", "cache"],
)
def test_a_compiled_module_is_read_only_as_its_sources_cache(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: str | None,
    compiled: str,
    code: str | None,
) -> None:
    module = repo / "tcpname.py"
    module.write_text("NAME = 'laser'\n")
    py_compile.compile(str(module), cfile=str(repo / ABB / compiled), doraise=True)
    if source is not None:
        shutil.copy2(module, repo / ABB / source)
    install_generator(repo, REAL + "from tcpname import NAME\n")
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    if code is None:
        assert (status, findings) == (0, [])
        return
    [finding] = findings
    assert (status, finding["code"]) == (2, code)
    assert finding["message"].startswith(f"read {ABB}/{compiled}, which is no input")


# srdf.py's bytes -> the line of generator_raised and its message's start (None: it builds), as
# `python srdf.py` reads them: a byte its encoding (UTF-8 unless declared) cannot decode is a
# SyntaxError, in a comment too, where compile() of the bytes, which runpy calls, let it pass
UNDECODABLE: list[tuple[bytes, str | None, str]] = [
    (b"# caf\xe9\n", "1", "SyntaxError: Non-UTF-8 code starting with '\\xe9' on line 1"),
    (b"X = 1\n# \xff\n", "2", "SyntaxError: Non-UTF-8 code starting with '\\xff' on line 2"),
    (b"# -*- coding: latin-1 -*-\n# caf\xe9\n", None, ""),
    (b"# caf\xc3\xa9\n", None, ""),
]


@pytest.mark.parametrize(
    ("head", "line", "says"), UNDECODABLE, ids=["comment", "second-line", "latin-1", "utf-8"]
)
def test_a_source_byte_its_encoding_cannot_decode_is_a_syntax_error(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    head: bytes,
    line: str | None,
    says: str,
) -> None:
    """A Latin-1 é in a comment of srdf.py built, though `python srdf.py` refuses the file
    (a review)."""
    install_generator(repo, REAL)
    (repo / SOURCE).write_bytes(head + (repo / SOURCE).read_bytes())
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    if line is None:
        assert (status, findings) == (0, [])
        return
    [finding] = findings
    assert (status, finding["code"], finding["place"]) == (2, "generator_raised", line)
    assert finding["message"].startswith(says) and str(repo) not in finding["message"]


# a temporary file or folder made in gen_srdf() -> the write the finding names: the call, not
# the random name it drew, nor the sandbox's or the system's absolute folder
TEMPORARY = [
    (f"tempfile.{call}", f"a temporary file or folder (tempfile.{named})")
    for call, named in [
        ("mkstemp()", "mkstemp()"),
        ("mkstemp(dir='.')", "mkstemp()"),
        ("NamedTemporaryFile()", "NamedTemporaryFile()"),
        ("TemporaryFile()", "TemporaryFile()"),
        ("mkdtemp()", "mkdtemp()"),
        ("TemporaryDirectory()", "TemporaryDirectory()"),
    ]
]
# a file of the working folder (a fresh temporary folder) named by its absolute path
TEMPORARY.append(("open(os.path.abspath('notes.txt'), 'w')", "notes.txt"))


@pytest.mark.parametrize(("call", "named"), TEMPORARY, ids=[c for c, _ in TEMPORARY])
def test_a_temporary_file_is_named_by_the_call_that_made_it(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    call: str,
    named: str,
) -> None:
    """tempfile.mkstemp() gave 'tried to write files: /tmp/twxvlemi, /var/tmp/d7kismp1,
    /usr/tmp/_xbrtk9k, /tmp/gen_srdf.oahiija5/cwd/cbghu67p' and a generator_raised naming the
    sandbox: other names on every run, and absolute paths (a review)."""
    install_generator(repo, REAL.replace("exec(", f"import os, tempfile\n{call}\nexec("))
    runs = [run_srdf(repo, monkeypatch, capsys, SOURCE) for _ in range(2)]
    assert runs[0] == runs[1]
    status, findings = runs[0]
    assert (status, [f["code"] for f in findings]) == (2, ["generator_wrote_files"])
    message = findings[0]["message"]
    assert message == f"tried to write files: {named}"


# a file made by a call that raises no audit event (os.mkfifo, os.mknod) or whose event the
# guard let pass (socket.bind to a path): a FIFO was made beside srdf.py, and the second run's
# FileExistsError was the finding
MADE_UNSEEN = [
    ("mkfifo", "import os\nos.mkfifo({path})\n"),
    ("mknod", "import os, stat\nos.mknod({path}, stat.S_IFIFO | 0o644)\n"),
    ("posix-mkfifo", "import posix\nposix.mkfifo({path})\n"),
    ("socket-bind", "import socket\nsocket.socket(socket.AF_UNIX).bind({path})\n"),
    # sqlite opens (and makes) its database in C, unseen by the audit hook's open
    ("sqlite3", "import sqlite3\nsqlite3.connect({path}).execute('create table t(x)')\n"),
    (
        "sqlite3-uri",
        "import sqlite3, pathlib\n"
        "sqlite3.connect(pathlib.Path({path}).as_uri(), uri=True).execute('create table t(x)')\n",
    ),
]


@pytest.mark.parametrize("call", [c for _, c in MADE_UNSEEN], ids=[i for i, _ in MADE_UNSEEN])
def test_a_file_made_without_open_is_a_write(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], call: str
) -> None:
    made = repo / ABB / "made"
    text = REAL.replace("exec(", call.format(path=repr(str(made))) + "exec(")
    install_generator(repo, text)
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    assert (status, [f["code"] for f in findings]) == (2, ["generator_wrote_files"]), findings
    assert findings[0]["message"] == f"tried to write files: {ABB}/made"
    assert not os.path.lexists(made)


# an extension module beside srdf.py (a copy of the interpreter's cmath, found first on the
# path), loaded by an import or by ctypes: no input of the step, as a sourceless .pyc is not
EXTENSIONS = [
    ("import", "import cmath\n"),
    ("ctypes", "import ctypes\nctypes.CDLL(str(Path(__file__).with_name('{name}')))\n"),
]


@pytest.mark.parametrize("load", [text for _, text in EXTENSIONS], ids=[i for i, _ in EXTENSIONS])
def test_an_extension_module_beside_srdf_py_is_no_input(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], load: str
) -> None:
    """A cmath.<tag>.so beside srdf.py was imported and the SRDF built: a change to it left the
    SRDF stale and `pipeline check` saying current (a review)."""
    import cmath

    name = Path(str(cmath.__file__)).name
    shutil.copy(str(cmath.__file__), repo / ABB / name)
    install_generator(repo, REAL + load.format(name=name))
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    [finding] = findings
    assert (status, finding["code"]) == (2, "generator_read_untracked_file")
    assert finding["message"].startswith(f"read {ABB}/{name}, which is no input")
    assert finding["hint"].startswith("a compiled module (an extension module, a .pyc)")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "    return {'xml': '<robot name=\"abb_irb2400\">\\n<group>\\n</robot>', "
            "'urdf': 'robot.urdf'}\n",
            "line 3 of the returned XML: Opening and ending tag mismatch: group line 2 and robot",
        ),
        (
            "    import xml.etree.ElementTree as ET\n"
            "    return {'xml': ET.Element('robot', {'name': 'a\\x01'}), 'urdf': 'robot.urdf'}\n",
            "line 1 of the returned XML: invalid character in attribute value",
        ),
        # an element appended into itself (a new-user trial): ET.tostring looped until the
        # generator_timeout of 60 s, though gen_srdf() had returned
        (
            "    import xml.etree.ElementTree as ET\n"
            "    root = ET.Element('robot', {'name': 'abb_irb2400'})\n"
            "    ET.SubElement(root, 'group', {'name': 'arm'}).append(root)\n"
            "    return {'xml': root, 'urdf': 'robot.urdf'}\n",
            "holds an element inside itself (<robot> is within its own <group>), which no XML "
            "can write",
        ),
        # elements 3000 deep: a RecursionError in ET.tostring, told to "give attribute values
        # as strings"
        (
            "    import xml.etree.ElementTree as ET\n"
            "    root = node = ET.Element('robot', {'name': 'abb_irb2400'})\n"
            "    for _ in range(3000):\n"
            "        node = ET.SubElement(node, 'group')\n"
            "    return {'xml': root, 'urdf': 'robot.urdf'}\n",
            "nests elements more than 256 deep",
        ),
    ],
    ids=[
        "invalid_xml-string-line-3",
        "invalid_xml-element-control-character",
        "invalid_xml-element-inside-itself",
        "invalid_xml-element-too-deep",
    ],
)
def test_invalid_xml_returned_is_placed_in_the_envelope_not_at_a_source_line(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    body: str,
    message: str,
) -> None:
    """The returned XML's line read as srdf.py's own (`srdf.py:1: invalid_xml`, hostile sweep),
    where a raised exception's place is the source line it was raised at."""
    install_generator(repo, "def gen_srdf():\n" + body)
    status, findings = run_srdf(repo, monkeypatch, capsys, SOURCE)
    [finding] = findings
    assert (status, finding["code"], finding["file"]) == (2, "invalid_xml", SOURCE)
    assert (finding["place"], finding["message"]) == ('gen_srdf()["xml"]', message)
