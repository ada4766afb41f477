"""Program-load checks: does a dense program's `robot_cell` header block match a compiled cell?

The header is a JSON object; its minimal form is
`{"robot_cell": {"model_id": ..., "description_identity": ..., "calibration_identity": ...}}`,
other fields belong to other readers and are ignored here. The cell's side is recomputed from the
files the cell serves, and must agree with its cell.json, so a tampered cell is never trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.calibration import CALIBRATION_NAME, calibration_identity
from pipeline.findings import ContractError, Finding, json_pointer
from pipeline.identity import description_identity
from pipeline.strict_io import JSON_LIMIT, read_bytes
from pipeline.strict_json import load_json

BLOCK = "robot_cell"
# Header field -> the reason code when it differs from the cell.
FIELDS = (
    ("model_id", "model_mismatch"),
    ("description_identity", "description_mismatch"),
    ("calibration_identity", "calibration_mismatch"),
)
REASONS = ("missing_field", *(reason for _, reason in FIELDS))


@dataclass(frozen=True)
class CellIdentity:
    """What a program must name to load on a compiled cell."""

    cell_id: str
    model_id: str
    description_identity: str
    calibration_identity: str

    def value(self, field: str) -> str:
        """The cell's value of a `robot_cell` field."""
        value: str = getattr(self, field)
        return value


def served_description_identity(folder: Path, display: str, model_id: str) -> str:
    """The identity of a cell's `description/`, whose manifest must name the cell's model."""
    return description_identity(folder, display, model_id)[0]


def read_cell(folder: Path, display: str) -> CellIdentity:
    """A compiled cell's identities, recomputed from its files and checked against cell.json."""
    doc = load_json(folder / "cell.json", f"{display}/cell.json")
    block = doc.get(BLOCK)
    model = block.get("model_id") if isinstance(block, dict) else None
    if not isinstance(block, dict) or not isinstance(model, str):
        # before, blamed on the description's manifest for not naming the model None
        raise ContractError([_inconsistent(display, [BLOCK, "model_id"], model, "a model id")])
    description = served_description_identity(
        folder / "description", f"{display}/description", str(model)
    )
    served = read_bytes(folder / CALIBRATION_NAME, f"{display}/{CALIBRATION_NAME}", JSON_LIMIT)
    cell = CellIdentity(
        cell_id=str(doc.get("cell_id", "")),
        model_id=model if isinstance(model, str) else "",
        description_identity=description,
        calibration_identity=calibration_identity(served),
    )
    # the header block against the files; then the same fields at cell.json's top, once each
    problems = [
        _inconsistent(display, [BLOCK, name], block.get(name), repr(cell.value(name)))
        for name, _ in FIELDS
        if block.get(name) != cell.value(name)
    ] + [
        _inconsistent(display, [name], doc.get(name), repr(cell.value(name)))
        for name, _ in FIELDS
        if block.get(name) == cell.value(name) != doc.get(name)  # one line per wrong field
    ]
    if problems:
        raise ContractError(problems)
    return cell


def _inconsistent(display: str, where: list[str], found: object, want: str) -> Finding:
    return Finding(
        "cell_inconsistent",
        f"{display}/cell.json",
        json_pointer(where),
        f"cell.json says {found!r} but the cell's files give {want}",
        "recompile the cell (`doit cellbuild:<cell_id>`); never edit build/ by hand",
    )


def header_refusals(header: dict[str, object], cell: CellIdentity, display: str) -> list[Finding]:
    """One refusal per `robot_cell` field that is missing or differs from the cell."""
    block = header.get(BLOCK)
    if not isinstance(block, dict):
        return [
            Finding(
                "missing_field",
                display,
                json_pointer([BLOCK]),
                f"the header has no {BLOCK!r} object",
                f"write the {BLOCK} block of cell {cell.cell_id!r} (its cell.json) into the header",
            )
        ]
    out = []
    for name, reason in FIELDS:
        place = json_pointer([BLOCK, name])
        value = block.get(name)
        if not isinstance(value, str):
            what = "is missing" if name not in block else "is not a string"
            out.append(
                Finding(
                    "missing_field",
                    display,
                    place,
                    f"{BLOCK}.{name} {what}",
                    f"write {cell.value(name)!r}, the value of cell {cell.cell_id!r}",
                )
            )
        elif value != cell.value(name):
            out.append(
                Finding(
                    reason,
                    display,
                    place,
                    f"the program names {value!r}, cell {cell.cell_id!r} has {cell.value(name)!r}",
                    "re-plan the program for this cell, or load it on the cell it was made for",
                )
            )
    return out


def load_check(
    program: Path, program_display: str, cell_dir: Path, cell_display: str
) -> list[Finding]:
    """The refusals of loading `program` on the compiled cell in `cell_dir` (empty: accepted)."""
    # both sides are read before either is judged: a bad program and a bad cell are two findings
    findings: list[Finding] = []
    try:
        header = load_json(program, program_display)
    except ContractError as exc:
        findings.extend(exc.findings)
    try:
        cell = read_cell(cell_dir, cell_display)
    except ContractError as exc:
        findings.extend(exc.findings)
    if findings:
        raise ContractError(findings)
    return header_refusals(header, cell, program_display)
