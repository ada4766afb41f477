"""One robot cell: its machine config and calibration pin, and compiling it into build/cells/."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.calibration import (
    CALIBRATION_NAME,
    CALIBRATION_SCHEMA,
    Calibration,
    calibration_identity,
    check_calibration,
    empty_document,
    parse_calibration,
)
from pipeline.config import RobotConfig, load_config
from pipeline.findings import (
    ContractError,
    Finding,
    escaped,
    listed_and_closest,
    raise_if_errors,
)
from pipeline.identity import description_identity
from pipeline.machine import (
    MACHINE_NAME,
    PIN,
    MachineConfig,
    MachineFields,
    machine_fields,
    machine_findings,
    pin_path_findings,
)
from pipeline.manifest import MANIFEST_NAME, SRDF_NAME
from pipeline.review import kinematics_review
from pipeline.sourcenames import ignored
from pipeline.srdf.groups import home_values, manipulator_links
from pipeline.srdf.read import srdf_from_bytes
from pipeline.stamps import STAMP_ROOT, read_stamp, sha256_bytes
from pipeline.strict_io import (
    JSON_LIMIT,
    MESH_LIMIT,
    case_collisions,
    folder_refused,
    linked_folder,
    read_bytes,
    read_regular,
    require_source,
    twin_hint,
)
from pipeline.strict_json import dump_json, parse_json
from pipeline.urdf import Robot, load_robot
from pipeline.winnames import unportable_id

CELLS = "cells"
CELL_NAME = "cell.json"
DESCRIPTION = "description"
COMPILED_SCHEMA = "rosie.compiled-cell.v1"


@dataclass(frozen=True)
class Cell:
    """A validated cell: its config and the calibration bytes it serves."""

    machine: MachineConfig
    robot: Robot
    served: bytes
    calibration: Calibration | None


def cell_dir(cell_id: str) -> str:
    """Repo-relative folder of a cell's sources."""
    return f"{CELLS}/{cell_id}"


def cell_build_dir(cell_id: str) -> str:
    """Repo-relative folder of a compiled cell."""
    return f"build/cells/{cell_id}"


def load_cell(root: Path, cell_id: str) -> Cell:
    """Validate a cell's machine config, pin and calibration; collect every finding.

    machine.json and the calibration it pins are checked in the same run: a finding of one
    hides none of the other, and one about a field stops only what needs that field (without a
    valid pin no calibration to read; without the model's valid URDF and config.json, no check
    of the calibration against them).
    """
    folder = cell_dir(cell_id)
    display = f"{folder}/{MACHINE_NAME}"
    linked = linked_folder(root / folder, folder, "cell")
    raise_if_errors(linked or case_collisions(root / folder, folder))
    # a cell folder holds other JSON (its calibration): only a *machine*.json is a misnamed one
    require_source(root / folder, MACHINE_NAME, display, like="*machine*.json")
    # not JSON: no field of it can be trusted, not even the pin that names the calibration
    doc = parse_json(read_bytes(root / display, display, JSON_LIMIT), display)
    findings = machine_findings(doc, display)
    fields = machine_fields(doc, findings)
    if fields.cell_id is not None and fields.cell_id != cell_id:
        findings.append(
            Finding(
                "cell_id_mismatch",
                display,
                "/cell_id",
                # escaped as a robot folder's name is: 'c\xe9' and 'ce\u0301' both look like cé
                f"cell_id '{escaped(fields.cell_id)}' differs from the folder name "
                f"'{escaped(cell_id)}'",
                "make cell_id equal to the name of the cell's folder",
            )
        )
    elif fields.cell_id is not None and (
        why := unportable_id(fields.cell_id, shown := escaped(fields.cell_id))
    ):
        findings.append(
            Finding(
                "invalid_value",
                display,
                "/cell_id",
                f"cell_id {why}, so a checkout there would fail",
                "rename the cell's folder and its cell_id to an id Windows can hold, such as "
                f"{shown.split('.')[0].lower() or 'my'}_cell",
            )
        )
    model_folder, problems = _model_folder(root, fields.model_id, display)
    findings += problems
    served, calibration = empty_document(fields.model_id or ""), None
    if fields.pin_path is not None:
        served, calibration, problems = _pinned(root, cell_id, fields, display)
        findings += problems
    elif fields.unpinned:
        findings += _unpinned_calibrations(root / folder, folder)
    # the model's own sources: `pipeline cell --check` names what is wrong with them too
    robot, config, problems = _model(root, model_folder)
    findings += problems
    if calibration is not None and robot is not None and not problems:
        cal_display = f"{folder}/{fields.pin_path}"
        findings += check_calibration(calibration, robot.name, robot, config, cal_display)
    raise_if_errors(findings)
    # no finding: every field passed the schema, and the model loaded
    assert fields.cell_id is not None and fields.model_id is not None and robot is not None
    machine = MachineConfig(fields.cell_id, fields.model_id, fields.pin)
    return Cell(machine, robot, served, calibration)


def own_findings(root: Path, cell_id: str) -> list[Finding]:
    """The findings in a cell's own files, for a cell its failed robot kept from compiling.

    The robot's findings are left out: its own step reported them. So is `unknown_model`: the
    robot's folder is planned, so its robot.urdf is missing or refused, which its step said.
    """
    try:
        load_cell(root, cell_id)
    except ContractError as exc:
        own = f"{cell_dir(cell_id)}/"
        return [
            finding
            for finding in exc.findings
            if finding.file.startswith(own) and finding.code != "unknown_model"
        ]
    except (OSError, MemoryError):  # the cell's own step says it, once it runs
        return []
    return []


def _model_folder(
    root: Path, model_id: str | None, display: str
) -> tuple[Path | None, list[Finding]]:
    """robots/<model_id> when it holds a robot.urdf, else None and the finding why not."""
    if model_id is None:
        return None, []  # the schema's finding says what is wrong with it
    robots = root / "robots"
    model_folder = robots / model_id
    try:
        known = {p.name for p in robots.iterdir()} if robots.is_dir() else set()
        present = model_id in known and (model_folder / "robot.urdf").is_file()
    except PermissionError as exc:  # robots/ or the model's folder: no "unknown model" then
        where = "robots" if exc.filename == str(robots) else f"robots/{model_id}"
        return None, list(folder_refused(where, exc).findings)
    if present:
        return model_folder, []
    # the models there are and the one most likely meant, as `pipeline validate` names them
    # (os.path.isfile: a folder this user cannot search is no model here, and raises nothing)
    models = sorted(
        n for n in known if not ignored(n) and os.path.isfile(robots / n / "robot.urdf")
    )
    listed, meant = listed_and_closest(model_id, models)
    return None, [
        Finding(
            "unknown_model",
            display,
            "/robot/model_id",
            f"there is no robot model {model_id!r} under robots/; it holds {listed or 'none'}",
            f"name {meant!r}" if meant else "name a folder of robots/ that holds a robot.urdf",
        )
    ]


def _pinned(
    root: Path, cell_id: str, fields: MachineFields, display: str
) -> tuple[bytes, Calibration | None, list[Finding]]:
    """The bytes of the pinned calibration, its model when it passes its schema, and the
    findings of the pin and of the calibration on its own (a digest the schema refused is not
    compared: only the path is needed to read the file)."""
    pinned = str(fields.pin_path)
    path_problems = pin_path_findings(root / cell_dir(cell_id), pinned, display)
    if path_problems:
        return b"", None, path_problems
    cal_display = f"{cell_dir(cell_id)}/{pinned}"
    try:
        served = read_bytes(root / cal_display, cal_display, JSON_LIMIT)
    except ContractError as exc:  # a pin written on macOS, in another case: name the file
        hint = twin_hint(root / cal_display)
        return (
            b"",
            None,
            [
                f._replace(hint=hint) if hint and f.code == "file_missing" else f
                for f in exc.findings
            ],
        )
    findings = []
    pin = fields.pin_sha256
    if pin is not None and sha256_bytes(served) != pin:
        findings.append(
            Finding(
                "pin_mismatch",
                display,
                f"{PIN}/sha256",
                f"the pin is {pin} but {cal_display} hashes to {sha256_bytes(served)}",
                "review the calibration file, then pin the SHA-256 of its exact bytes",
            )
        )
    try:
        return served, parse_calibration(served, cal_display), findings
    except ContractError as exc:
        return served, None, findings + list(exc.findings)


def _model(
    root: Path, model_folder: Path | None
) -> tuple[Robot | None, RobotConfig | None, list[Finding]]:
    """The model's valid URDF and config.json (None when it has none), or their findings."""
    if model_folder is None:
        return None, None, []
    try:
        robot = load_robot(model_folder, root)
    except ContractError as exc:
        return None, None, list(exc.findings)
    try:
        return robot, load_config(model_folder, robot, root), []
    except ContractError as exc:
        return robot, None, list(exc.findings)


def _unpinned_calibrations(folder: Path, display: str) -> list[Finding]:
    """Calibration files in a cell folder whose machine.json pins none.

    The cell would serve the empty document, and its robot would be planned on nominal
    kinematics and limits while its measured calibration lies beside the config.
    """
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        # as the plan lists the cell's inputs: a `cal.json~` is an editor's, not the cell's
        dirnames[:] = sorted(d for d in dirnames if not ignored(d))
        for name in sorted(n for n in filenames if not ignored(n)):
            path = Path(dirpath) / name
            if name == CALIBRATION_NAME or (name.endswith(".json") and _is_calibration(path)):
                found.append(path.relative_to(folder).as_posix())
    return [
        Finding(
            "calibration_not_pinned",
            f"{display}/{MACHINE_NAME}",
            "/robot",
            f"pins no calibration, so the cell serves the empty document, but {display}/{rel} "
            "is a calibration",
            "pin it (robot.machine_planning_calibration: path, sha256 of its bytes, source), "
            "or remove it from the cell's folder",
        )
        for rel in found
    ]


def _is_calibration(path: Path) -> bool:
    """Whether a JSON file names the calibration schema (read leniently: others are no concern)."""
    found = None if path.is_symlink() else read_regular(path, JSON_LIMIT)
    try:
        doc = parse_json(found[0], path.name) if found else None
    except ContractError:
        return False
    return isinstance(doc, dict) and doc.get("schema") == CALIBRATION_SCHEMA


def _description_files(root: Path, model_id: str) -> dict[str, bytes]:
    """Every file the steps of build/robots/<model_id>/ recorded making, byte for byte, by
    description-relative path.

    Not every file found there: one no step made (a stray file, a Finder's .DS_Store) would be
    served in every cell of the model, and stay there after it is deleted, since the cell's
    input, the manifest's stamp, vouches only for what the steps made.
    """
    base = f"build/robots/{model_id}"
    manifest = read_stamp(root, f"manifest:{model_id}")
    if manifest is None or not (root / base / MANIFEST_NAME).is_file():
        raise ContractError(
            [
                Finding(
                    "description_not_built",
                    base,
                    "",
                    f"the description of {model_id!r} has not been compiled",
                    f"run `doit manifest:{model_id}` (or plain `doit`) first",
                )
            ]
        )
    recorded = set(manifest.outputs)
    # the manifest step reads the stamps of the steps that write the rest of the description
    for path in manifest.inputs:
        group, _, name = path.removeprefix(f"{STAMP_ROOT}/").removesuffix(".json").partition("/")
        upstream = read_stamp(root, f"{group}:{name}") if path.startswith(STAMP_ROOT) else None
        recorded.update(upstream.outputs if upstream is not None else ())
    return {
        path[len(base) + 1 :]: read_bytes(root / path, path, MESH_LIMIT)
        for path in sorted(recorded)
        if path.startswith(f"{base}/")
    }


def compiled_cell_json(cell: Cell, description_id: str, review: dict[str, Any]) -> bytes:
    """The bytes of cell.json: identities, the pin, the kinematics review, the header block."""
    machine = cell.machine
    calibration_id = calibration_identity(cell.served)
    pin = machine.pin
    return dump_json(
        {
            "schema": COMPILED_SCHEMA,
            "cell_id": machine.cell_id,
            "model_id": machine.model_id,
            "description_identity": description_id,
            "calibration_identity": calibration_id,
            "calibration_pin": None
            if pin is None
            else {"path": pin.path, "sha256": pin.sha256, "source": pin.source},
            "kinematics": review,
            "robot_cell": {
                "model_id": machine.model_id,
                "description_identity": description_id,
                "calibration_identity": calibration_id,
            },
        }
    )


def make_cell(root: Path, cell_id: str) -> dict[str, bytes]:
    """Compile one cell: its description copy, the calibration it serves, and cell.json."""
    cell = load_cell(root, cell_id)
    model_id = cell.machine.model_id
    files = _description_files(root, model_id)
    description_id, _ = description_identity(
        root / "build" / "robots" / model_id, f"build/robots/{model_id}"
    )
    corrections = {} if cell.calibration is None else cell.calibration.kinematics
    srdf = srdf_from_bytes(files[SRDF_NAME], f"build/robots/{model_id}/{SRDF_NAME}")
    manipulator = manipulator_links(srdf, cell.robot)
    review = kinematics_review(cell.robot, corrections, manipulator, home_values(srdf, cell.robot))
    out_dir = cell_build_dir(cell_id)
    out = {f"{out_dir}/{DESCRIPTION}/{rel}": data for rel, data in files.items()}
    out[f"{out_dir}/{CALIBRATION_NAME}"] = cell.served
    out[f"{out_dir}/{CELL_NAME}"] = compiled_cell_json(cell, description_id, review)
    return out
