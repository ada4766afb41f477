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
from pipeline.config import load_config
from pipeline.findings import ContractError, Finding, raise_if_errors
from pipeline.identity import description_identity
from pipeline.manifest import MANIFEST_NAME, SRDF_NAME
from pipeline.review import kinematics_review
from pipeline.schemas import check_schema
from pipeline.sourcenames import ignored, ignored_part
from pipeline.srdf.groups import home_values, manipulator_links
from pipeline.srdf.read import srdf_from_bytes
from pipeline.stamps import STAMP_ROOT, read_stamp, sha256_bytes
from pipeline.strict_io import (
    JSON_LIMIT,
    MESH_LIMIT,
    case_collisions,
    folder_refused,
    is_utf8,
    linked_folder,
    read_bytes,
    read_regular,
    require_source,
)
from pipeline.strict_json import dump_json, parse_json
from pipeline.urdf import Robot, load_robot

CELLS = "cells"
MACHINE_NAME = "machine.json"
CELL_NAME = "cell.json"
DESCRIPTION = "description"
MACHINE_SCHEMA = "machine-config"
COMPILED_SCHEMA = "rosie.compiled-cell.v1"


@dataclass(frozen=True)
class Pin:
    """`robot.machine_planning_calibration`: the pinned calibration file of a cell."""

    path: str
    sha256: str
    source: str


@dataclass(frozen=True)
class MachineConfig:
    """A parsed `cells/<cell_id>/machine.json`."""

    cell_id: str
    model_id: str
    pin: Pin | None


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


def parse_machine(data: bytes, display: str) -> MachineConfig:
    """Strictly parse and schema-check a machine config into its model."""
    doc = parse_json(data, display)
    raise_if_errors(check_schema(doc, MACHINE_SCHEMA, display))
    robot = doc["robot"]
    pin = robot.get("machine_planning_calibration")
    return MachineConfig(
        cell_id=doc["cell_id"],
        model_id=robot["model_id"],
        pin=None if pin is None else Pin(pin["path"], pin["sha256"], pin["source"]),
    )


def _brief(text: str) -> str:
    """A path for a message: quoted, and cut short when it is very long."""
    return repr(text) if len(text) <= 120 else f"{text[:60]!r}... ({len(text)} characters)"


def _pin_path_findings(root: Path, cell_id: str, pin: Pin, display: str) -> list[Finding]:
    """The pin path stays inside the cell folder and passes through no symbolic link."""
    place = "/robot/machine_planning_calibration/path"
    parts = pin.path.split("/")
    if "\x00" in pin.path or not is_utf8(pin.path):
        return [
            Finding(
                "invalid_path_character",
                display,
                place,
                f"pin path {pin.path!r} holds a NUL or a lone surrogate, which no file name can",
                "pin the calibration file's real name",
            )
        ]
    if pin.path.startswith("/") or "\\" in pin.path or (len(pin.path) > 1 and pin.path[1] == ":"):
        problem = "is absolute or uses '\\'"
    elif ".." in parts:
        problem = "climbs out with '..'"
    elif any(part in ("", ".") for part in parts):
        problem = "has an empty or '.' segment"
    elif ignored_part(pin.path) is not None:
        return [
            Finding(
                "ignored_file_name",
                display,
                place,
                f"pin path {_brief(pin.path)} names {ignored_part(pin.path)!r}, which the build "
                "never reads as a source (a hidden file, an editor's backup or lock, OS metadata)",
                "rename the calibration file to a plain name and pin that",
            )
        ]
    else:
        folder = root / cell_dir(cell_id)
        target = folder.joinpath(*parts)
        try:
            for depth in range(1, len(parts) + 1):
                link = folder.joinpath(*parts[:depth])
                if link.is_symlink():
                    return [
                        Finding(
                            "symlink_refused",
                            display,
                            place,
                            f"{'/'.join(parts[:depth])!r} is a symbolic link",
                            "pin the regular file itself, inside the cell folder",
                        )
                    ]
            inside = target.resolve().is_relative_to(folder.resolve())
        except OSError as exc:  # a name or path too long for the system, say
            return [
                Finding(
                    "file_missing",
                    display,
                    place,
                    f"pin path {_brief(pin.path)} cannot name a file ({exc.strerror})",
                    "pin the calibration file's real path",
                )
            ]
        if not inside:
            problem = "resolves outside the cell folder"
        elif target.resolve() == (folder / MACHINE_NAME).resolve():
            problem = f"names {MACHINE_NAME} itself, which cannot hold its own digest"
        else:
            return []
    return [
        Finding(
            "pin_path_outside_cell",
            display,
            place,
            f"pin path {_brief(pin.path)} {problem}",
            "write a '/'-separated path relative to the cell folder, inside it",
        )
    ]


def load_cell(root: Path, cell_id: str) -> Cell:
    """Validate a cell's machine config, pin and calibration; collect every finding."""
    folder = cell_dir(cell_id)
    display = f"{folder}/{MACHINE_NAME}"
    linked = linked_folder(root / folder, folder, "cell")
    raise_if_errors(linked or case_collisions(root / folder, folder))
    # a cell folder holds other JSON (its calibration): only a *machine*.json is a misnamed one
    require_source(root / folder, MACHINE_NAME, display, like="*machine*.json")
    machine = parse_machine(read_bytes(root / display, display, JSON_LIMIT), display)
    findings: list[Finding] = []
    if machine.cell_id != cell_id:
        findings.append(
            Finding(
                "cell_id_mismatch",
                display,
                "/cell_id",
                f"cell_id {machine.cell_id!r} differs from the folder name {cell_id!r}",
                "make cell_id equal to the name of the cell's folder",
            )
        )
    robots = root / "robots"
    model_folder = robots / machine.model_id
    try:
        known = {p.name for p in robots.iterdir()} if robots.is_dir() else set()
        present = machine.model_id in known and (model_folder / "robot.urdf").is_file()
    except PermissionError as exc:  # robots/ or the model's folder: no "unknown model" then
        where = "robots" if exc.filename == str(robots) else f"robots/{machine.model_id}"
        raise ContractError(findings + list(folder_refused(where, exc).findings)) from None
    if not present:
        findings.append(
            Finding(
                "unknown_model",
                display,
                "/robot/model_id",
                f"there is no robot model {machine.model_id!r} under robots/",
                "name a folder of robots/ that holds a robot.urdf",
            )
        )
        raise ContractError(findings)
    robot = load_robot(model_folder, root)
    if machine.pin is None:
        raise_if_errors(findings + _unpinned_calibrations(root / folder, folder))
        return Cell(machine, robot, empty_document(machine.model_id), None)
    pin = machine.pin
    path_problems = _pin_path_findings(root, cell_id, pin, display)
    if path_problems:
        raise ContractError(findings + path_problems)
    cal_display = f"{folder}/{pin.path}"
    try:
        served = read_bytes(root / cal_display, cal_display, JSON_LIMIT)
    except ContractError as exc:
        raise ContractError(findings + list(exc.findings)) from None
    if sha256_bytes(served) != pin.sha256:
        findings.append(
            Finding(
                "pin_mismatch",
                display,
                "/robot/machine_planning_calibration/sha256",
                f"the pin is {pin.sha256} but {cal_display} hashes to {sha256_bytes(served)}",
                "review the calibration file, then pin the SHA-256 of its exact bytes",
            )
        )
    try:
        calibration = parse_calibration(served, cal_display)
        config = load_config(model_folder, robot, root)
    except ContractError as exc:
        raise ContractError(findings + list(exc.findings)) from None
    findings += check_calibration(calibration, machine.model_id, robot, config, cal_display)
    raise_if_errors(findings)
    return Cell(machine, robot, served, calibration)


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
