"""rtcore_definition.json: one case per rule, each one finding line and exit status 2."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from pipeline.findings import ContractError
from pipeline.rtcore import definition_findings, load_rtcore
from pipeline.urdf import load_robot
from tests.conftest import REPO
from tests.test_config import (
    ABB,
    Edit,
    _delete,
    _set,
    _two,
    add_prismatic_joint,
    edit_json,
    edit_text,
    expect_one_finding,
    expect_with_broken_urdf,
)
from tests.test_config import validate as run_validate

DEF = "rtcore_definition.json"
J1 = ["joints", "joint_1"]


def _copy_entry(source: str, target: str, address: int) -> Edit:
    def change(data: dict[str, Any]) -> None:
        data["joints"][target] = {**data["joints"][source], "drive_address": address}

    return edit_json(DEF, change)


CASES: list[tuple[str, Edit, str]] = [
    (
        "missing_source",
        edit_json(DEF, _delete([*J1, "gear_ratio_unverified"])),
        "/joints/joint_1/gear_ratio: missing_source",
    ),
    (
        "source_and_unverified",
        edit_json(DEF, _set([*J1, "direction_source"], "ABB manual 3HAC, page 12")),
        "/joints/joint_1/direction: source_and_unverified",
    ),
    (
        "unexpected_field-at-depth",
        edit_json(DEF, _set([*J1, "brake"], {"voltage": "24V"})),
        "/joints/joint_1/brake: unexpected_field",
    ),
    (
        "unexpected_field-numeric-no-second-finding",
        edit_json(DEF, _set([*J1, "inertia_kgm2"], 0.001)),
        "/joints/joint_1/inertia_kgm2: unexpected_field",
    ),
    (
        "duplicate_key",
        edit_text(DEF, '"direction": 1,', '"direction": 1,\n      "direction": -1,'),
        "/joints/joint_1/direction: duplicate_key",
    ),
    (
        "non_finite_number-nan",
        edit_text(DEF, '"gear_ratio": 100.0', '"gear_ratio": NaN'),
        "/joints/joint_1/gear_ratio: non_finite_number",
    ),
    (
        "non_finite_number-infinity",
        edit_text(DEF, '"motor_rated_torque_nm": 1.0', '"motor_rated_torque_nm": -Infinity'),
        "/joints/joint_1/motor_rated_torque_nm: non_finite_number",
    ),
    (
        "joint_not_revolute-fixed",
        _copy_entry("joint_1", "joint_6-tool0", 1099),
        "/joints/joint_6-tool0: joint_not_revolute",
    ),
    (
        "joint_not_revolute-prismatic",
        _two(add_prismatic_joint, _copy_entry("joint_1", "slide", 1099)),
        "/joints/slide: joint_not_revolute",
    ),
    (
        "unknown_joint",
        _copy_entry("joint_1", "joint_7", 1099),
        "/joints/joint_7: unknown_joint",
    ),
    (
        "joint_not_mapped",
        edit_json(DEF, _delete(["joints", "joint_6"])),
        "/joints: joint_not_mapped",
    ),
    (
        "duplicate_drive_address",
        edit_json(DEF, _set(["joints", "joint_4", "drive_address"], 1002)),
        "/joints/joint_4/drive_address: duplicate_drive_address",
    ),
    # a unit or exponent mistake (hostile-input sweep: both passed)
    (
        "out_of_range-gear_ratio-denormal",
        edit_json(DEF, _set(["joints", "joint_1", "gear_ratio"], 5e-324)),
        "/joints/joint_1/gear_ratio: out_of_range",
    ),
    (
        "out_of_range-encoder_counts-1e30",
        edit_json(DEF, _set(["joints", "joint_1", "encoder_counts_per_rev"], 10**30)),
        "/joints/joint_1/encoder_counts_per_rev: out_of_range",
    ),
    # JSON Schema's "integer" takes 1003.0 (which was then a duplicate of 1003): the schemas'
    # integers are written without a fraction
    (
        "wrong_type-integral-float",
        edit_json(DEF, _set(["joints", "joint_5", "drive_address"], 1003.0)),
        "/joints/joint_5/drive_address: wrong_type",
    ),
    (
        "model_id_mismatch",
        edit_json(DEF, _set(["model_id"], "irb2400")),
        "/model_id: model_id_mismatch",
    ),
    (
        "invalid_value-blank-reason",
        edit_json(DEF, _set([*J1, "gear_ratio_unverified"], "  ")),
        "/joints/joint_1/gear_ratio_unverified: invalid_value",
    ),
    (
        "out_of_range-gear-ratio",
        edit_json(DEF, _set([*J1, "gear_ratio"], 0)),
        "/joints/joint_1/gear_ratio: out_of_range",
    ),
    (
        "wrong_type-fractional-counts",
        edit_json(DEF, _set([*J1, "encoder_counts_per_rev"], 4096.5)),
        "/joints/joint_1/encoder_counts_per_rev: wrong_type",
    ),
    (
        "invalid_value-schema",  # DESIGN.md layout: schema rosie.robot-definition.v1
        edit_json(DEF, _set(["schema"], "rosie.robot-definition.v2")),
        "/schema: invalid_value",
    ),
    (
        "invalid_value-direction",
        edit_json(DEF, _set([*J1, "direction"], 0)),
        "/joints/joint_1/direction: invalid_value",
    ),
    (
        "missing_field",
        edit_json(DEF, _delete([*J1, "drive_address"])),
        "/joints/joint_1: missing_field",
    ),
    # the template's note on a joint's entry: one finding, not also wrong_type and unknown_joint
    (
        "unexpected_field-template-note-of-a-joint",
        edit_json(DEF, _set(["joints", "joint_1_doc"], "One entry per revolute URDF joint ...")),
        "/joints/joint_1_doc: unexpected_field",
    ),
]


@pytest.mark.parametrize(("edit", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_definition_gives_one_finding_and_exit_2(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, edit: Edit, expected: str
) -> None:
    expect_one_finding(repo, monkeypatch, capsys, edit, f"robots/{ABB}/{DEF}:{expected}")


# the rtcore_definition.json rules that name the URDF's joints, skipped while the URDF fails
NEEDS_URDF = {"unknown_joint", "joint_not_revolute", "joint_not_mapped"}


@pytest.mark.parametrize(("edit", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_definition_is_reported_with_the_findings_of_a_broken_urdf(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, edit: Edit, expected: str
) -> None:
    """A refused URDF hid every rtcore_definition.json finding until it passed."""
    prefix = f"robots/{ABB}/{DEF}:{expected}"
    expect_with_broken_urdf(repo, monkeypatch, capsys, edit, prefix, NEEDS_URDF)


@pytest.mark.parametrize("model", [None, "robot"])
def test_definition_findings_without_the_urdf_skip_only_its_joint_rules(
    model: str | None,
) -> None:
    data = (REPO / "robots" / ABB / DEF).read_bytes().replace(b'"joint_6"', b'"joint_9"', 1)
    data = data.replace(b'"model_id": "abb_irb2400"', b'"model_id": "irb"', 1)
    robot = load_robot(REPO / "robots" / ABB, REPO) if model else None
    found = definition_findings(data, ABB, robot, DEF)
    joints = {"unknown_joint", "joint_not_mapped"} if model else set()
    assert sorted(f.code for f in found) == sorted({"model_id_mismatch"} | joints)


def test_source_replacing_unverified_is_accepted(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    folder = repo / "robots" / ABB
    edit_json(DEF, _delete([*J1, "direction_unverified"]))(folder)
    edit_json(DEF, _set([*J1, "direction_source"], "jog test, cell 7"))(folder)
    assert run_validate(repo, monkeypatch, capsys) == (0, [])
    definition = load_rtcore(folder, load_robot(folder, repo), repo)
    assert definition is not None
    origin = definition.joints["joint_1"].provenance["direction"]
    assert origin.verified and origin.text == "jog test, cell 7"


def test_shipped_definitions_map_every_revolute_joint_and_verify_nothing() -> None:
    for model_id in ("abb_irb2400", "lbr_iiwa_14_r820"):
        folder = REPO / "robots" / model_id
        robot = load_robot(folder, REPO)
        definition = load_rtcore(folder, robot, REPO)
        assert definition is not None and definition.model_id == model_id
        revolute = [j.name for j in robot.joints if j.type == "revolute"]
        assert sorted(definition.joints) == sorted(revolute)
        # No datasheet was available: every number must say it is unverified.
        assert len(definition.unverified()) == 5 * len(revolute)


def test_counts_per_rad() -> None:
    folder = REPO / "robots" / ABB
    definition = load_rtcore(folder, load_robot(folder, REPO), REPO)
    assert definition is not None
    drive = definition.joints["joint_1"]
    expected = drive.direction * drive.encoder_counts_per_rev * drive.gear_ratio / (2 * math.pi)
    assert drive.counts_per_rad() == pytest.approx(expected)


def test_no_definition_loads_as_none(repo: Path) -> None:
    folder = repo / "robots" / ABB
    (folder / DEF).unlink()
    assert load_rtcore(folder, load_robot(folder, repo), repo) is None


def test_definition_and_config_findings_are_reported_together(repo: Path) -> None:
    from pipeline.description import make_config_copies

    folder = repo / "robots" / ABB
    edit_json(DEF, _delete([*J1, "gear_ratio_unverified"]))(folder)
    edit_json("config.json", _set(["lower"], 0))(folder)
    with pytest.raises(ContractError) as info:
        make_config_copies(repo, ABB)
    assert [f.code for f in info.value.findings] == ["restates_urdf", "missing_source"]
