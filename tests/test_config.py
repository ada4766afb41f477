"""config.json: one case per rule, each one finding line and exit status 2 through the CLI."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from pipeline.config import (
    ZERO_CAP,
    CorrectionCap,
    RobotConfig,
    caps_for,
    check_unique,
    config_findings,
    load_config,
)
from pipeline.findings import ContractError
from pipeline.urdf import load_robot
from tests.conftest import REPO, run_doit, tree_bytes

ABB = "abb_irb2400"
Edit = Callable[[Path], None]


def edit_json(name: str, change: Callable[[dict[str, Any]], None]) -> Edit:
    """An edit that loads robots/abb_irb2400/<name>, changes the data and writes it back."""

    def apply(folder: Path) -> None:
        path = folder / name
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data, indent=2) + "\n")

    return apply


def edit_text(name: str, old: str, new: str) -> Edit:
    """An edit that replaces the first `old` in robots/abb_irb2400/<name> by `new`."""

    def apply(folder: Path) -> None:
        path = folder / name
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))

    return apply


def validate(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> tuple[int, list[str]]:
    """Run `pipeline validate abb_irb2400` in the scratch repo; exit code and stderr lines."""
    monkeypatch.chdir(repo)
    status = main(["validate", ABB])
    return status, capsys.readouterr().err.splitlines()


def expect_one_finding(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, edit: Edit, prefix: str
) -> None:
    """Apply `edit` to the ABB sources; validation prints one line starting with `prefix`."""
    edit(repo / "robots" / ABB)
    status, lines = validate(repo, monkeypatch, capsys)
    assert status == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith(prefix + ": ")


def add_prismatic_joint(folder: Path) -> None:
    """Give the URDF a prismatic joint `slide` below tool0."""
    edit_text(
        "robot.urdf",
        "</robot>",
        '  <link name="probe"/>\n  <joint name="slide" type="prismatic">\n'
        '    <parent link="tool0"/><child link="probe"/><axis xyz="0 0 1"/>\n'
        '    <limit lower="0" upper="0.1" velocity="0.1" effort="0"/>\n  </joint>\n</robot>',
    )(folder)


def _set(path: list[str | int], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value

    return change


def _delete(path: list[str]) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]

    return change


def _planning(joint: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["planning"]["joints"].append(joint)

    return change


def _two(*edits: Edit) -> Edit:
    def apply(folder: Path) -> None:
        for one in edits:
            one(folder)

    return apply


CFG = "config.json"
CASES: list[tuple[str, Edit, str]] = [
    (
        "unexpected_field-at-depth",
        edit_json(CFG, _set(["axes", "joint_3", "bus"], "ecat0")),
        "/axes/joint_3/bus: unexpected_field",
    ),
    (
        "unexpected_field-top",
        edit_json(CFG, _set(["comment"], "x")),
        "/comment: unexpected_field",
    ),
    (
        "duplicate_key",
        edit_text(CFG, '"sign": 1', '"sign": 1, "sign": -1'),
        "/axes/joint_1/sign: duplicate_key",
    ),
    (
        "non_finite_number-nan",
        edit_text(CFG, '"joint_2": 0.0', '"joint_2": NaN'),
        "/reset_pose/joint_2: non_finite_number",
    ),
    (
        "unknown_joint-planning",
        edit_json(CFG, _planning("joint_7")),
        "/planning/joints/6: unknown_joint",
    ),
    (
        "joint_not_revolute-prismatic-planning",
        _two(add_prismatic_joint, edit_json(CFG, _planning("slide"))),
        "/planning/joints/6: joint_not_revolute",
    ),
    (
        "joint_not_revolute-fixed-axes",
        edit_json(CFG, _set(["axes", "joint_6-tool0"], {"controller_axis": 9, "sign": 1})),
        "/axes/joint_6-tool0: joint_not_revolute",
    ),
    (
        "unknown_joint-reset_pose",
        edit_json(CFG, _set(["reset_pose", "joint_0"], 0.0)),
        "/reset_pose/joint_0: unknown_joint",
    ),
    (
        "unknown_joint-calibration_caps",
        edit_json(
            CFG, _set(["calibration_caps", "J9"], {"xyz_m": [0, 0, 0], "rpy_rad": [0, 0, 0]})
        ),
        "/calibration_caps/J9: unknown_joint",
    ),
    (
        "restates_urdf-limits-top",
        edit_json(CFG, _set(["limits"], {"joint_1": {"lower": -3.1416, "upper": 3.1416}})),
        "/limits: restates_urdf",
    ),
    (
        "restates_urdf-velocity-at-depth",
        edit_json(CFG, _set(["axes", "joint_2", "velocity_rad_s"], 2.618)),
        "/axes/joint_2/velocity_rad_s: restates_urdf",
    ),
    (
        "restates_urdf-origin-in-cap",
        edit_json(CFG, _set(["calibration_caps", "joint_2", "origin"], [0, 0, 0.445])),
        "/calibration_caps/joint_2/origin: restates_urdf",
    ),
    (
        "restates_urdf-camel-case",
        edit_json(CFG, _set(["planning", "upperLimit"], 1.9199)),
        "/planning/upperLimit: restates_urdf",
    ),
    # a note the config template writes beside each field is no URDF number (hostile trial)
    (
        "unexpected_field-template-note",
        edit_json(CFG, _set(["calibration_caps", "joint_2", "rpy_rad_doc"], "Largest ...")),
        "/calibration_caps/joint_2/rpy_rad_doc: unexpected_field",
    ),
    # the template's note on a joint's entry: one finding, not also wrong_type and unknown_joint
    (
        "unexpected_field-template-note-of-a-joint",
        edit_json(CFG, _set(["reset_pose", "joint_2_doc"], "The joint's position ...")),
        "/reset_pose/joint_2_doc: unexpected_field",
    ),
    (
        "reset_pose_outside_limits",
        edit_json(CFG, _set(["reset_pose", "joint_2"], 2.0)),
        "/reset_pose/joint_2: reset_pose_outside_limits",
    ),
    (
        "model_id_mismatch",
        edit_json(CFG, _set(["model_id"], "abb_irb2600")),
        "/model_id: model_id_mismatch",
    ),
    (
        "duplicate_axis",
        edit_json(CFG, _set(["axes", "joint_2", "controller_axis"], "rax_1")),
        "/axes/joint_2/controller_axis: duplicate_axis",
    ),
    ("missing_field", edit_json(CFG, _delete(["planning"])), "/: missing_field"),
    (
        "wrong_type",
        edit_json(CFG, _set(["reset_pose", "joint_1"], "zero")),
        "/reset_pose/joint_1: wrong_type",
    ),
    (
        "invalid_value-sign",
        edit_json(CFG, _set(["axes", "joint_4", "sign"], 0)),
        "/axes/joint_4/sign: invalid_value",
    ),
    (
        "invalid_value-schema",
        edit_json(CFG, _set(["schema"], "rosie.robot-config.v2")),
        "/schema: invalid_value",
    ),
    (
        "out_of_range-negative-cap",
        edit_json(CFG, _set(["calibration_caps", "joint_3", "rpy_rad", 1], -0.001)),
        "/calibration_caps/joint_3/rpy_rad/1: out_of_range",
    ),
    # Regression: a cap (and so a correction) of 1.7e308 m overflowed the cell's forward
    # kinematics to inf, and cell.json's writer raised (a traceback).
    (
        "out_of_range-cap-beyond-1e6-m",
        edit_json(CFG, _set(["calibration_caps", "joint_3", "xyz_m", 0], 1.7e308)),
        "/calibration_caps/joint_3/xyz_m/0: out_of_range",
    ),
    (
        "wrong_length-cap",
        edit_json(CFG, _set(["calibration_caps", "joint_3", "xyz_m"], [0.001, 0.001])),
        "/calibration_caps/joint_3/xyz_m: wrong_length",
    ),
    (
        "duplicate_item-planning",
        edit_json(CFG, _planning("joint_1")),
        "/planning/joints: duplicate_item",
    ),
]


@pytest.mark.parametrize(("edit", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_config_gives_one_finding_and_exit_2(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, edit: Edit, expected: str
) -> None:
    expect_one_finding(repo, monkeypatch, capsys, edit, f"robots/{ABB}/{CFG}:{expected}")


@pytest.mark.parametrize("place", ["planning", "axes"])
def test_joint_not_revolute_hint_says_where_a_prismatic_track_goes(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, place: str
) -> None:
    """A KR16 on a linear track named its track joint in config.json: the fix said only 'name
    only revolute joints', not that the track is planned from the SRDF's groups instead."""
    folder = repo / "robots" / ABB
    add_prismatic_joint(folder)
    axis = {"controller_axis": 7, "sign": 1}
    edit = _planning("slide") if place == "planning" else _set(["axes", "slide"], axis)
    edit_json(CFG, edit)(folder)
    status, lines = validate(repo, monkeypatch, capsys)
    assert status == 2
    [line] = [x for x in lines if ": joint_not_revolute: " in x]
    assert line.endswith("a linear track is planned from the SRDF's groups and the URDF's <limit>)")


# joint_1's limit removed: a URDF that parses but fails its own rules (missing_joint_limit)
URDF_BREAK = ('<limit effort="0" lower="-3.1416" upper="3.1416" velocity="2.618"/>', "")
URDF_FINDING = f"robots/{ABB}/robot.urdf:155: missing_joint_limit: "
# the config.json rules that name the URDF's joints: skipped while the URDF fails its own rules
NEEDS_URDF = {"unknown_joint", "joint_not_revolute", "reset_pose_outside_limits"}


def expect_with_broken_urdf(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: Any,
    edit: Edit,
    prefix: str,
    needs_urdf: set[str] = NEEDS_URDF,
) -> None:
    """Apply `edit` and break the URDF: validation prints the URDF's finding, then the edit's
    unless its rule names the URDF's joints (`needs_urdf`); exit 2, nothing written."""
    folder = repo / "robots" / ABB
    edit(folder)
    edit_text("robot.urdf", *URDF_BREAK)(folder)
    status, lines = validate(repo, monkeypatch, capsys)
    assert status == 2
    assert lines[0].startswith(URDF_FINDING), lines
    code = prefix.rsplit(": ", 1)[1]
    if code in needs_urdf:
        assert lines[1:] == []
    else:
        assert len(lines) == 2 and lines[1].startswith(prefix + ": "), lines
    assert not (repo / "build").exists()


@pytest.mark.parametrize(("edit", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_config_is_reported_with_the_findings_of_a_broken_urdf(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, edit: Edit, expected: str
) -> None:
    """A refused URDF hid every config.json finding until it passed."""
    expect_with_broken_urdf(repo, monkeypatch, capsys, edit, f"robots/{ABB}/{CFG}:{expected}")


@pytest.mark.parametrize("model", [None, "robot"])
def test_config_findings_without_the_urdf_skip_only_its_joint_rules(model: str | None) -> None:
    data = (REPO / "robots" / ABB / CFG).read_bytes().replace(b'"joint_6"', b'"joint_9"', 1)
    data = data.replace(b'"model_id": "abb_irb2400"', b'"model_id": "irb"', 1)
    robot = load_robot(REPO / "robots" / ABB, REPO) if model else None
    found = config_findings(data, ABB, robot, "config.json")
    expected = {"model_id_mismatch"} | ({"unknown_joint"} if model else set())
    assert {f.code for f in found} == expected and len(found) == len(expected)


def test_restates_urdf_says_the_number_belongs_in_the_urdf(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    edit_json(CFG, _set(["effort"], 0))(repo / "robots" / ABB)
    _, lines = validate(repo, monkeypatch, capsys)
    assert lines == [
        f"robots/{ABB}/config.json:/effort: restates_urdf: field 'effort' restates a number "
        "the URDF already holds; delete it; the number belongs in robot.urdf (<limit>, "
        "<origin>, <axis>, <inertial>, <dynamics>) and config.json states only what the "
        "URDF cannot"
    ]


def test_all_findings_are_collected(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    edit_json(CFG, _set(["reset_pose", "joint_2"], 2.0))(repo / "robots" / ABB)
    edit_json(CFG, _planning("joint_7"))(repo / "robots" / ABB)
    edit_json(CFG, _set(["lower"], 1))(repo / "robots" / ABB)
    status, lines = validate(repo, monkeypatch, capsys)
    assert status == 2
    assert [line.split(": ")[1] for line in lines] == [  # in the file's order: lower is last
        "unknown_joint",
        "reset_pose_outside_limits",
        "restates_urdf",
    ]


def test_reset_pose_on_the_limit_is_accepted(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    edit_json(CFG, _set(["reset_pose", "joint_2"], 1.9199))(repo / "robots" / ABB)
    assert validate(repo, monkeypatch, capsys) == (0, [])


def test_shipped_configs_load() -> None:
    for model_id in ("abb_irb2400", "lbr_iiwa_14_r820"):
        folder = REPO / "robots" / model_id
        robot = load_robot(folder, REPO)
        config = load_config(folder, robot, REPO)
        assert config is not None
        revolute = tuple(j.name for j in robot.joints if j.type == "revolute")
        assert config.planning_joints == revolute
        assert all(robot.joint(name) is not None for name in config.caps)


def test_config_model_and_caps(repo: Path) -> None:
    folder = repo / "robots" / ABB
    edit_json(
        CFG,
        _set(["calibration_caps", "joint_2"], {"xyz_m": [0.001, 0, 0.5], "rpy_rad": [0, 2, 0]}),
    )(folder)
    config = load_config(folder, load_robot(folder, repo), repo)
    assert config is not None
    assert config.cap("joint_2") == CorrectionCap((0.001, 0.0, 0.5), (0.0, 2.0, 0.0))
    assert all(isinstance(v, float) for v in config.cap("joint_2").rpy_rad)
    assert config.cap("joint_6-tool0") == ZERO_CAP
    assert caps_for(config, "joint_2") == config.cap("joint_2")
    assert config.axes["joint_1"].axis == "rax_1" and config.axes["joint_1"].sign == 1
    assert config.reset_pose["joint_3"] == 0.0


def test_no_config_means_zero_caps(repo: Path) -> None:
    folder = repo / "robots" / ABB
    (folder / CFG).unlink()
    config = load_config(folder, load_robot(folder, repo), repo)
    assert config is None
    assert caps_for(config, "joint_2") == ZERO_CAP == CorrectionCap((0, 0, 0), (0, 0, 0))


def test_robot_config_is_frozen() -> None:
    config = RobotConfig(planning_joints=("a",), axes={}, reset_pose={}, caps={})
    assert config.cap("a") == ZERO_CAP
    with pytest.raises(AttributeError):
        config.planning_joints = ("b",)  # type: ignore[misc]


def test_symlinked_config_is_refused(repo: Path) -> None:
    folder = repo / "robots" / ABB
    (folder / CFG).rename(repo / "elsewhere.json")
    (folder / CFG).symlink_to(repo / "elsewhere.json")
    with pytest.raises(ContractError) as info:
        load_config(folder, load_robot(folder, repo), repo)
    assert [f.code for f in info.value.findings] == ["symlink_refused"]


def test_doit_refuses_bad_config_and_leaves_build_intact(project: Path) -> None:
    before = tree_bytes(project / "build")
    edit_json(CFG, _set(["axes", "joint_1", "lower"], -3.1416))(project / "robots" / ABB)
    result = run_doit(project)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if ": restates_urdf: " in line]
    assert len(lines) == 1 and lines[0].startswith(f"robots/{ABB}/config.json:/axes/joint_1/lower")
    assert tree_bytes(project / "build") == before


def test_doit_copies_valid_config_byte_for_byte_and_registers_it(project: Path) -> None:
    build = project / "build" / "robots" / ABB
    index_before = (project / "build" / "index.json").read_bytes()
    source = project / "robots" / ABB / CFG
    source.write_bytes(source.read_bytes().replace(b'"joint_2": 0.0', b'"joint_2": 0.5', 1))
    assert run_doit(project).returncode == 0
    assert (build / CFG).read_bytes() == source.read_bytes()
    assert CFG in json.loads((build / "robot_description_manifest.json").read_text())["files"]
    assert (project / "build" / "index.json").read_bytes() != index_before
    source.unlink()
    # weld_cell_a's calibration corrects joints of this model, which needs config.json's caps.
    shutil.rmtree(project / "cells" / "weld_cell_a", ignore_errors=True)
    assert run_doit(project).returncode == 0
    assert not (build / CFG).exists()
    assert CFG not in json.loads((build / "robot_description_manifest.json").read_text())["files"]


# joint_2's controller axis -> the findings of config.json (code, place's joint): a program
# matches the name, so what a person cannot see in it is refused, and two names a person reads
# alike (case, spaces, invisible characters, how an accent is encoded aside) are one axis
AXIS_NAMES: list[tuple[str, object, list[tuple[str, str]]]] = [
    ("plain", "A2", []),
    ("inner-space", "Axis 2", []),
    ("composed-accent", "ax\u00e9_2", []),
    ("index", 1, []),
    ("trailing-space", "rax_2 ", [("invalid_text_character", "joint_2")]),
    ("leading-space", " rax_2", [("invalid_text_character", "joint_2")]),
    ("no-break-space", "rax\u00a02", [("invalid_text_character", "joint_2")]),
    ("zero-width-space", "rax_\u200b2", [("invalid_text_character", "joint_2")]),
    ("byte-order-mark", "\ufeffrax_2", [("invalid_text_character", "joint_2")]),
    ("soft-hyphen", "rax\u00ad_2", [("invalid_text_character", "joint_2")]),
    ("decomposed-accent", "raxe\u0301_2", [("invalid_text_character", "joint_2")]),
    ("right-to-left-override", "rax_\u202e2", [("invalid_text_character", "joint_2")]),
    ("line-separator", "rax\u2028_2", [("invalid_text_character", "joint_2")]),
    # "A1" and "A1 ": the end's white space, and the same axis as joint_1's
    (
        "joint_1-with-a-trailing-space",
        "rax_1 ",
        [("invalid_text_character", "joint_2"), ("duplicate_axis", "joint_2")],
    ),
    ("joint_1-in-capitals", "RAX_1", [("duplicate_axis", "joint_2")]),
    (
        "joint_1-with-a-zero-width-space",
        "rax_\u200b1",
        [("invalid_text_character", "joint_2"), ("duplicate_axis", "joint_2")],
    ),
    ("joint_1-as-an-index", 0, []),  # an index is no name
]


# (section, field, value, what): a number shared, which no case or space tells apart
UNIQUE_NUMBERS = [
    ("axes", "controller_axis", 2, "controller axis"),
    ("joints", "drive_address", 1002, "drive address"),
]


@pytest.mark.parametrize(("section", "field", "value", "what"), UNIQUE_NUMBERS)
def test_a_number_used_twice_is_not_told_of_names(
    section: str, field: str, value: int, what: str
) -> None:
    """A duplicate drive address, an integer, was told to be 'names told apart by more than
    case, spaces or invisible characters' (a review)."""
    data = {section: {"joint_1": {field: value}, "joint_2": {field: value}}}
    [found] = check_unique(data, "x.json", section, field, "duplicate", what)
    assert found.message == f"{what} {value} is used by both 'joint_1' and 'joint_2'"
    assert found.hint == f"give every joint its own {what}"


@pytest.mark.parametrize(
    ("axis", "expected"), [c[1:] for c in AXIS_NAMES], ids=[c[0] for c in AXIS_NAMES]
)
def test_a_controller_axis_name_is_what_a_person_reads(
    axis: object, expected: list[tuple[str, str]]
) -> None:
    """Names "A1" and "A1 " were two axes, and a no-break space, a zero-width space or a decomposed
    accent passed: a controller matching the name finds no such axis (a review)."""
    data = json.loads((REPO / "robots" / ABB / CFG).read_text())
    data["axes"]["joint_2"]["controller_axis"] = axis
    found = config_findings(json.dumps(data).encode(), ABB, None, "config.json")
    assert [(f.code, f.place) for f in found] == [
        (code, f"/axes/{joint}/controller_axis") for code, joint in expected
    ]
    for finding in found:  # one line, and the name escaped: the difference is seen
        assert finding.line().isascii() and "\n" not in finding.line()
    if expected and expected[0][0] == "invalid_text_character":  # the fix names the name
        assert " as 'rax" in found[0].hint
