"""Calibration rules: the schema, then limits, held joints and corrections against URDF and caps."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.calibration import (
    calibration_identity,
    check_calibration,
    empty_document,
    parse_calibration,
)
from pipeline.config import load_config
from pipeline.findings import ContractError, Finding
from pipeline.urdf import load_robot, parse_urdf

REPO = Path(__file__).resolve().parents[1]
MODEL = "abb_irb2400"
ROBOT = load_robot(REPO / "robots" / MODEL, REPO)
CONFIG = load_config(REPO / "robots" / MODEL, ROBOT, REPO)
EXAMPLE = json.loads((REPO / "cells/weld_cell_a/machine_planning_calibration.json").read_bytes())
DISPLAY = "cells/weld_cell_a/machine_planning_calibration.json"


def findings_of(doc: dict[str, Any], config: Any = CONFIG) -> list[Finding]:
    """Parse and check a calibration document as the cell would."""
    try:
        cal = parse_calibration(json.dumps(doc).encode(), DISPLAY)
    except ContractError as exc:
        return list(exc.findings)
    return check_calibration(cal, MODEL, ROBOT, config, DISPLAY)


def edited(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = copy.deepcopy(EXAMPLE)
    change(doc)
    return doc


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        for part in parents:
            doc = doc.setdefault(part, {})
        doc[last] = value

    return change


J1 = {"lower_rad": -1.0, "upper_rad": 1.0, "velocity_rad_s": 1.0}
REFUSED = [
    ("calibration_model_mismatch", _set("model_id", "lbr_iiwa_14_r820"), "/model_id"),
    ("unknown_joint-limits", _set("limits/joints/joint_9", J1), "/limits/joints/joint_9"),
    (
        "unknown_joint-held",
        _set("limits/held/joint_9", {"position_rad": 0}),
        "/limits/held/joint_9",
    ),
    (
        "unknown_joint-kinematics",
        _set("kinematics/joint_9", {"xyz_m": [0, 0, 0], "rpy_rad": [0, 0, 0]}),
        "/kinematics/joint_9",
    ),
    (
        "joint_not_revolute",
        _set("limits/joints/joint_6-tool0", J1),
        "/limits/joints/joint_6-tool0",
    ),
    (
        "limit_order",
        _set("limits/joints/joint_2", {**J1, "lower_rad": 0.5, "upper_rad": 0.5}),
        "/limits/joints/joint_2",
    ),
    (
        "limit_widens-lower",
        _set("limits/joints/joint_1", {**J1, "lower_rad": -3.2}),
        "/limits/joints/joint_1/lower_rad",
    ),
    (
        "limit_widens-upper",
        _set("limits/joints/joint_1", {**J1, "upper_rad": 3.1417}),
        "/limits/joints/joint_1/upper_rad",
    ),
    (
        "velocity_widens",
        _set("limits/joints/joint_1", {**J1, "velocity_rad_s": 2.6181}),
        "/limits/joints/joint_1/velocity_rad_s",
    ),
    (
        "held_outside_limits-narrowed",
        _set("limits/held/joint_1", {"position_rad": 1.6}),
        "/limits/held/joint_1/position_rad",
    ),
    (
        "held_outside_limits-urdf",
        _set("limits/held/joint_2", {"position_rad": -1.75}),
        "/limits/held/joint_2/position_rad",
    ),
    (
        "correction_over_cap-xyz",
        _set("kinematics/joint_2", {"xyz_m": [0, 0.0021, 0], "rpy_rad": [0, 0, 0]}),
        "/kinematics/joint_2/xyz_m/1",
    ),
    (
        "correction_over_cap-rpy",
        _set("kinematics/joint_2", {"xyz_m": [0, 0, 0], "rpy_rad": [0, 0, -0.0051]}),
        "/kinematics/joint_2/rpy_rad/2",
    ),
    (
        "correction_over_cap-uncapped_joint",
        _set("kinematics/joint_6-tool0", {"xyz_m": [0.0001, 0, 0], "rpy_rad": [0, 0, 0]}),
        "/kinematics/joint_6-tool0/xyz_m/0",
    ),
    ("unexpected_field-top", _set("comment", "x"), "/comment"),
    ("unexpected_field-limit", _set("limits/joints/joint_1", {**J1, "effort": 1}), None),
    ("out_of_range-speed_ceiling", _set("limits/speed_ceiling_rad_s", 0), None),
    ("out_of_range-velocity", _set("limits/joints/joint_1", {**J1, "velocity_rad_s": 0}), None),
    ("wrong_length", _set("kinematics/joint_2", {"xyz_m": [0, 0], "rpy_rad": [0, 0, 0]}), None),
    ("missing_field", _set("limits/held/joint_1", {}), None),
    ("invalid_value-schema", _set("schema", "rosie.machine-planning-calibration.v2"), None),
]


@pytest.mark.parametrize(("case", "change", "place"), REFUSED, ids=[case for case, _, _ in REFUSED])
def test_refused_with_one_finding(
    case: str, change: Callable[[dict[str, Any]], None], place: str | None
) -> None:
    findings = findings_of(edited(change))
    assert [f.code for f in findings] == [case.split("-")[0]], findings
    if place is not None:
        assert findings[0].place == place
    assert findings[0].file == DISPLAY


def test_the_example_calibration_is_accepted() -> None:
    assert findings_of(EXAMPLE) == []


def test_equal_limits_and_caps_are_accepted() -> None:
    """Narrowing to exactly the URDF's numbers and correcting exactly to the cap are allowed."""

    def change(doc: dict[str, Any]) -> None:
        doc["limits"]["joints"]["joint_1"] = {
            "lower_rad": -3.1416,
            "upper_rad": 3.1416,
            "velocity_rad_s": 2.618,
        }
        doc["limits"]["held"] = {"joint_4": {"position_rad": -3.49}}
        doc["kinematics"]["joint_5"] = {"xyz_m": [0.002, -0.002, 0], "rpy_rad": [-0.005, 0, 0.005]}

    assert findings_of(edited(change)) == []


def test_a_correction_without_config_json_is_refused() -> None:
    findings = findings_of(EXAMPLE, config=None)
    assert {f.code for f in findings} == {"correction_over_cap"}
    assert all("config.json does not exist" in f.message for f in findings)
    assert [f.place for f in findings] == [
        "/kinematics/joint_2/xyz_m/0",
        "/kinematics/joint_2/xyz_m/2",
        "/kinematics/joint_2/rpy_rad/1",
        "/kinematics/joint_3/xyz_m/2",
        "/kinematics/joint_3/rpy_rad/1",
    ]


def test_zero_corrections_need_no_config_json() -> None:
    doc = edited(_set("kinematics", {"joint_2": {"xyz_m": [0, 0, 0], "rpy_rad": [0, 0, 0]}}))
    assert findings_of(doc, config=None) == []


def test_the_empty_document_is_exact_and_valid() -> None:
    data = empty_document(MODEL)
    assert data == b'{"schema":"rosie.machine-planning-calibration.v1","model_id":"abb_irb2400"}\n'
    assert check_calibration(parse_calibration(data, "x"), MODEL, ROBOT, None, "x") == []


def test_identity_hashes_the_exact_bytes_not_a_reserialisation() -> None:
    compact = json.dumps(EXAMPLE, separators=(",", ":")).encode()
    pretty = json.dumps(EXAMPLE, indent=4).encode()
    assert parse_calibration(compact, "x") == parse_calibration(pretty, "x")
    assert calibration_identity(compact) != calibration_identity(pretty)
    assert calibration_identity(b"abc") == (
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )


@pytest.mark.parametrize(
    ("text", "code"),
    [(b'{"schema": 1, "schema": 2}', "duplicate_key"), (b'{"model_id": NaN}', "non_finite_number")],
)
def test_strict_json_applies(text: bytes, code: str) -> None:
    with pytest.raises(ContractError) as exc:
        parse_calibration(text, DISPLAY)
    assert [f.code for f in exc.value.findings] == [code]


TRACK_URDF = b"""<robot name="on_track">
  <link name="floor"/><link name="carriage"/><link name="arm"/>
  <joint name="track" type="prismatic"><parent link="floor"/><child link="carriage"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="4" velocity="1" effort="100"/></joint>
  <joint name="joint_1" type="revolute"><parent link="carriage"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="2" effort="100"/></joint>
</robot>"""


def test_a_prismatic_axis_limited_is_named_once_in_the_fix() -> None:
    """A mobile manipulator's base slide, or a track, narrowed in a calibration: the fix read
    `'track''s travel`, the joint's quoted name run into the possessive."""
    robot, found = parse_urdf(TRACK_URDF, "robot.urdf", "on_track")
    assert found == []
    doc = {
        "schema": "rosie.machine-planning-calibration.v1",
        "model_id": "on_track",
        "limits": {"joints": {"track": J1}},
    }
    cal = parse_calibration(json.dumps(doc).encode(), DISPLAY)
    [finding] = check_calibration(cal, "on_track", robot, None, DISPLAY)
    assert (finding.code, finding.place) == ("joint_not_revolute", "/limits/joints/track")
    assert finding.message == "joint 'track' is prismatic, not revolute"
    assert finding.hint == (
        "limit or hold only revolute joints (a calibration narrows no prismatic axis: the "
        "travel of 'track' is robot.urdf's <limit>)"
    )


def test_a_correction_of_a_joint_config_json_does_not_cap_says_it_is_not_listed() -> None:
    """A joint missing from calibration_caps has zero caps: the message read as though
    config.json held a cap of 0 for it. The file is named by its path, as the finding is the
    cell's (a new-user trial: a KUKA track cell's correction was told of 'config.json', which
    the cell's folder does not hold)."""
    change = _set("kinematics/joint_6-tool0", {"xyz_m": [0.0001, 0, 0], "rpy_rad": [0, 0, 0]})
    [finding] = findings_of(edited(change))
    assert finding.message == (
        "|0.0001| is over the cap 0.0; robots/abb_irb2400/config.json's calibration_caps lists "
        "no 'joint_6-tool0', so every cap of it is 0"
    )
    assert finding.hint == (
        "re-measure, or give 'joint_6-tool0' a cap in robots/abb_irb2400/config.json's "
        "calibration_caps"
    )


def test_a_correction_of_a_model_without_config_json_names_the_file_to_write() -> None:
    [finding, *_] = findings_of(EXAMPLE, None)
    assert finding.code == "correction_over_cap"
    assert finding.message.endswith(
        "; robots/abb_irb2400/config.json does not exist, so every cap of 'joint_2' is 0"
    ), finding.message
    assert finding.hint == (
        "re-measure, or give 'joint_2' a cap in robots/abb_irb2400/config.json's "
        "calibration_caps (`pipeline template config` prints its form)"
    )


def test_a_correction_over_a_listed_cap_names_the_file_of_the_cap() -> None:
    change = _set("kinematics/joint_2", {"xyz_m": [0.5, 0, 0], "rpy_rad": [0, 0, 0]})
    [finding] = findings_of(edited(change))
    assert finding.message.startswith(
        "|0.5| is over the cap 0.002; robots/abb_irb2400/config.json caps 'joint_2' at xyz_m"
    ), finding.message
    assert finding.hint == (
        "re-measure, or raise the cap in robots/abb_irb2400/config.json's calibration_caps"
    )
