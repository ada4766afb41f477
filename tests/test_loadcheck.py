"""`pipeline load-check`: a program header's robot_cell block against a compiled cell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from pipeline.loadcheck import REASONS
from tests.cellrepo import REPO, copy_repo, read_doc

CELL = REPO / "build/cells/weld_cell_a"


def header_of(cell: Path) -> dict[str, Any]:
    """The header a program planned for `cell` carries, with a field other readers own."""
    return {"program": "seam_17", "robot_cell": read_doc(cell / "cell.json")["robot_cell"]}


def run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: Any, cell: Path = CELL
) -> tuple[int, list[str]]:
    program = tmp_path / "program.json"
    program.write_text(json.dumps(header))
    code = main(["load-check", str(program), "--cell", str(cell)])
    captured = capsys.readouterr()
    return code, captured.err.splitlines() + captured.out.splitlines()


def test_own_header_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(tmp_path, capsys, header_of(CELL))
    assert code == 0
    assert len(lines) == 1 and " accepted on " in lines[0]


TAMPERED = [
    ("model_mismatch", "model_id", "lbr_iiwa_14_r820"),
    ("description_mismatch", "description_identity", "sha256:" + "0" * 64),
    ("calibration_mismatch", "calibration_identity", "sha256:" + "1" * 64),
    ("missing_field-absent", "model_id", None),
    ("missing_field-not_a_string", "calibration_identity", 42),
]


@pytest.mark.parametrize(("case", "field", "value"), TAMPERED, ids=[c for c, _, _ in TAMPERED])
def test_each_tampered_field_is_refused_with_its_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, field: str, value: Any
) -> None:
    header = header_of(CELL)
    if value is None:
        del header["robot_cell"][field]
    else:
        header["robot_cell"][field] = value
    code, lines = run(tmp_path, capsys, header)
    assert code == 3
    assert len(lines) == 1, lines
    reason = case.split("-")[0]
    assert reason in REASONS
    assert f":/robot_cell/{field}: {reason}: " in lines[0]


@pytest.mark.parametrize("header", [{}, {"robot_cell": "weld_cell_a"}], ids=["absent", "string"])
def test_a_header_without_the_block_is_refused_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], header: dict[str, Any]
) -> None:
    code, lines = run(tmp_path, capsys, header)
    assert code == 3
    assert len(lines) == 1 and ":/robot_cell: missing_field: " in lines[0]


def test_another_cells_program_is_refused_on_every_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = run(tmp_path, capsys, header_of(REPO / "build/cells/iiwa_bench"))
    assert code == 3
    assert [line.split(": ")[1] for line in lines] == [
        "model_mismatch",
        "description_mismatch",
        "calibration_mismatch",
    ]


def test_a_tampered_cell_is_bad_input_cell_inconsistent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_repo(tmp_path / "repo")
    cell = root / "build/cells/weld_cell_a"
    header = header_of(cell)
    served = cell / "machine_planning_calibration.json"
    served.write_bytes(served.read_bytes() + b" ")
    code, lines = run(tmp_path, capsys, header, cell)
    assert code == 2
    assert len(lines) == 1 and ": cell_inconsistent: " in lines[0]


def test_a_program_that_is_not_json_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "program.json"
    program.write_text("{robot_cell")
    assert main(["load-check", str(program), "--cell", str(CELL)]) == 2
    assert ": invalid_json: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "place"),
    [
        # was blamed on description/robot_description_manifest.json (model 'None')
        (lambda doc: doc.__setitem__("robot_cell", 5), "/robot_cell/model_id"),
        (lambda doc: doc["robot_cell"].pop("model_id"), "/robot_cell/model_id"),
        (
            lambda doc: doc["robot_cell"].pop("description_identity"),
            "/robot_cell/description_identity",
        ),
        # was accepted: the top-level copy of a field was never compared
        (lambda doc: doc.pop("model_id"), "/model_id"),
        (lambda doc: doc.__setitem__("description_identity", "sha256:0"), "/description_identity"),
    ],
)
def test_cell_inconsistent_a_hand_edited_cell_json_is_named_where_it_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, place: str
) -> None:
    root = copy_repo(tmp_path / "repo")
    cell = root / "build/cells/weld_cell_a"
    header = header_of(cell)
    doc = read_doc(cell / "cell.json")
    change(doc)
    (cell / "cell.json").write_text(json.dumps(doc))
    code, lines = run(tmp_path, capsys, header, cell)
    assert code == 2
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{cell}/cell.json:{place}: cell_inconsistent: "), lines


def test_a_bad_program_and_a_bad_cell_are_both_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The program's finding stopped the check: the cell's was only seen after fixing it."""
    program = tmp_path / "program.json"
    program.write_text("{robot_cell")
    assert main(["load-check", str(program), "--cell", str(tmp_path / "no_cell")]) == 2
    err = capsys.readouterr().err
    assert ": invalid_json: " in err and "no_cell/cell.json: file_missing: " in err
