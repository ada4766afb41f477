"""A robot's JSON sources: each checked on its own, and against a valid URDF model."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pipeline.plan import CONFIG_SOURCES, SPHERES_SETTINGS
from pipeline.robotinputs import JSON_SOURCES, SETTINGS_FILE, json_source_findings
from pipeline.spheres import provenance
from pipeline.urdf import load_robot
from tests.conftest import REPO, ROBOTS

ABB = "abb_irb2400"
CONFIG, DEFINITION = "config.json", "rtcore_definition.json"

# (case, file, bytes written to it, codes without a URDF model, codes with the valid model)
CASES: list[tuple[str, str, bytes, list[str], list[str]]] = [
    ("duplicate_key-config", CONFIG, b'{"a": 1, "a": 2}', ["duplicate_key"], ["duplicate_key"]),
    ("invalid_json-definition", DEFINITION, b"{", ["invalid_json"], ["invalid_json"]),
    (
        "missing_field-config",
        CONFIG,
        b'{"schema": "rosie.robot-config.v1", "model_id": "abb_irb2400"}',
        ["missing_field"],
        ["missing_field"],
    ),
    (
        "model_id_mismatch-definition",
        DEFINITION,
        b'{"schema": "rosie.robot-definition.v1", "model_id": "irb", "joints": {}}',
        ["model_id_mismatch", "invalid_value"],
        # every revolute joint unmapped: joint_not_mapped once per joint, needing the URDF
        ["model_id_mismatch", "invalid_value", *["joint_not_mapped"] * 6],
    ),
    ("wrong_type-settings", SETTINGS_FILE, b'{"defaults": {"seed": 1.0}}', ["wrong_type"], None),
    ("unknown_link-settings", SETTINGS_FILE, b'{"links": {"ghost": {}}}', [], ["unknown_link"]),
    (
        "unexpected_field-settings",
        SETTINGS_FILE,
        b'{"defaults": {"max_sphere": 4}, "links": {"ghost": {}}}',
        ["unexpected_field"],
        ["unexpected_field", "unknown_link"],
    ),
]


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "robots" / ABB, tmp_path / "robots" / ABB)
    return tmp_path


@pytest.mark.parametrize(
    ("name", "data", "alone", "with_model"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_each_json_source_is_checked_with_or_without_the_urdf_model(
    tmp_path: Path, name: str, data: bytes, alone: list[str], with_model: list[str] | None
) -> None:
    root = _copy(tmp_path)
    (root / "robots" / ABB / name).write_bytes(data)
    found = json_source_findings(root, ABB, None)
    assert sorted(f.code for f in found) == sorted(alone)
    assert {f.file for f in found} <= {f"robots/{ABB}/{name}"}
    robot = load_robot(root / "robots" / ABB, root)
    found = json_source_findings(root, ABB, robot)
    assert sorted(f.code for f in found) == sorted(alone if with_model is None else with_model)
    assert {f.file for f in found} <= {f"robots/{ABB}/{name}"}


def test_every_file_is_reported_in_one_run_in_source_order(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    folder = root / "robots" / ABB
    for name in (CONFIG, DEFINITION, SETTINGS_FILE):
        (folder / name).write_bytes(b'{"x": 1, "x": 2}')
    found = json_source_findings(root, ABB, None)
    assert [(f.code, f.file) for f in found] == [
        ("duplicate_key", f"robots/{ABB}/{name}") for name in JSON_SOURCES
    ]


def test_symlink_refused_a_linked_source_is_named_not_read(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    folder = root / "robots" / ABB
    (folder / CONFIG).rename(root / "elsewhere.json")
    (folder / CONFIG).symlink_to(root / "elsewhere.json")
    found = json_source_findings(root, ABB, None)
    assert [(f.code, f.file) for f in found] == [("symlink_refused", f"robots/{ABB}/{CONFIG}")]


@pytest.mark.parametrize("model_id", ROBOTS)
def test_shipped_sources_have_no_finding(model_id: str) -> None:
    folder = REPO / "robots" / model_id
    assert json_source_findings(REPO, model_id, None) == []
    assert json_source_findings(REPO, model_id, load_robot(folder, REPO)) == []
    assert any(os.path.lexists(folder / name) for name in JSON_SOURCES)


def test_the_sources_are_the_ones_the_build_plans() -> None:
    assert (*CONFIG_SOURCES, SPHERES_SETTINGS) == JSON_SOURCES
    assert provenance.SETTINGS_FILE == SETTINGS_FILE
