"""Program-load checks: does a dense program's `robot_cell` header block match a compiled cell?

The header is a JSON object; its minimal form is
`{"robot_cell": {"model_id": ..., "description_identity": ..., "calibration_identity": ...}}`,
other fields belong to other readers and are ignored here. The cell's side is recomputed from the
files the cell serves, and must agree with its cell.json, so a tampered cell is never trusted.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.bundle import unsafe_mode_findings
from pipeline.calibration import (
    CALIBRATION_NAME,
    calibration_identity,
    check_calibration,
    empty_document,
    parse_calibration,
)
from pipeline.cell import CELL_NAME, DESCRIPTION, Cell, compiled_cell_json
from pipeline.config import CONFIG_FILE, RobotConfig, config_from_bytes
from pipeline.findings import ContractError, Finding, json_pointer, raise_if_errors
from pipeline.identity import registered_identity
from pipeline.machine import MachineConfig, Pin
from pipeline.manifest import MANIFEST_NAME, SRDF_NAME, read_manifest
from pipeline.review import kinematics_review
from pipeline.srdf.groups import home_values, manipulator_links
from pipeline.srdf.read import load_srdf
from pipeline.strict_io import JSON_LIMIT, XML_LIMIT, read_bytes, refusal
from pipeline.strict_json import load_json, parse_json
from pipeline.urdf import Robot, check_rules, parse_urdf
from pipeline.urdf.rules import MODEL_ID

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


# how to check a program too large for the JSON reader
HEADER_ALONE = (
    "give load-check the program's header: a JSON object holding its robot_cell block alone "
    f"(the other fields are not read), at most {JSON_LIMIT // (1024 * 1024)} MiB"
)
# what a user who named some other folder as --cell is to name
NAME_A_CELL = (
    "name a compiled cell: build/cells/<cell_id> (`doit` makes it), or the <cell_id>/ folder "
    "its bundle unpacks to; a compiled cell is never written by hand"
)


def not_a_cell(folder: Path, display: str) -> ContractError | None:
    """Why `folder` (--cell) is no compiled cell when it holds no cell.json, naming what to
    name instead: the bundle itself (a file), a cell's sources, the folder a bundle was
    unpacked into; None when it holds one (or cannot be searched: reading it says so)."""
    try:
        if os.path.lexists(folder / CELL_NAME):
            return None
        info = os.stat(folder)
    except FileNotFoundError:
        return refusal(
            "file_missing",
            f"{display}/{CELL_NAME}",
            "",
            f"file does not exist: there is no such folder as {display}",
            NAME_A_CELL,
        )
    except OSError:  # not a folder (ENOTDIR) or not searchable: said below, or by the read
        info = None
    if info is None or not stat.S_ISDIR(info.st_mode):
        if not os.path.isfile(folder):
            return None
        bundle = folder.name.endswith((".tar.gz", ".tgz"))
        how = f"unpack it (tar xzf {display}) and name the <cell_id>/ folder it holds"
        return refusal(
            "not_a_folder",
            display,
            "",
            "is a file, not the folder of a compiled cell",
            how if bundle else NAME_A_CELL,
        )
    try:
        inner = sorted(p.name for p in folder.iterdir() if (p / CELL_NAME).is_file())
    except OSError:
        return None
    if (folder / "machine.json").exists():
        hint = f"it holds a cell's sources: name its compiled cell, build/cells/{folder.name}"
    elif len(inner) == 1:
        hint = f"name {display}/{inner[0]}, the folder holding {CELL_NAME}"
    elif inner:
        some = ", ".join(f"{display}/{name}" for name in inner[:3])
        hint = f"name the compiled cell the program is for: {some}{', ...' * (len(inner) > 3)}"
    else:
        hint = NAME_A_CELL
    message = "file does not exist: the folder is not a compiled cell"
    return refusal("file_missing", f"{display}/{CELL_NAME}", "", message, hint)


def read_cell(folder: Path, display: str) -> CellIdentity:
    """A compiled cell's identities, recomputed from its files and checked against cell.json."""
    problem = not_a_cell(folder, display)
    if problem is not None:
        raise problem
    doc = load_json(folder / CELL_NAME, f"{display}/{CELL_NAME}")
    block = doc.get(BLOCK)
    model = block.get("model_id", ABSENT) if isinstance(block, dict) else ABSENT
    if not isinstance(block, dict) or not isinstance(model, str):
        # before, blamed on the description's manifest for not naming the model None
        raise ContractError([_inconsistent(doc, display, [BLOCK, "model_id"], model, "a model id")])
    if (folder / DESCRIPTION).is_symlink():
        # the manifest refuses a linked meshes/ inside it; the folder itself is no different
        raise refusal(
            "symlink_refused",
            f"{display}/{DESCRIPTION}",
            "",
            "is a symbolic link: the cell would serve files from wherever it points",
            "replace the link with the folder itself (unpack the bundle again)",
        )
    if not (folder / DESCRIPTION).is_dir():  # its manifest was named: "create it"
        exists = os.path.lexists(folder / DESCRIPTION)
        raise refusal(
            "not_a_folder" if exists else "file_missing",
            f"{display}/{DESCRIPTION}",
            "",
            "is a file, not the folder of the description" if exists else "does not exist",
            "the cell serves its description there: put the folder back "
            "(unpack the bundle again, or compile the cell again)",
        )
    # the manifest must name the cell's model; read once, for the identity and the modes
    files = read_manifest(folder / DESCRIPTION, f"{display}/{DESCRIPTION}", str(model)).files
    description = registered_identity(folder / DESCRIPTION, f"{display}/{DESCRIPTION}", files)
    served = read_bytes(folder / CALIBRATION_NAME, f"{display}/{CALIBRATION_NAME}", JSON_LIMIT)
    modes = unsafe_mode_findings(
        folder,
        display,
        [CELL_NAME, CALIBRATION_NAME, *(f"{DESCRIPTION}/{p}" for p in (MANIFEST_NAME, *files))],
    )
    cell = CellIdentity(
        cell_id=str(doc.get("cell_id", "")),
        model_id=model if isinstance(model, str) else "",
        description_identity=description,
        calibration_identity=calibration_identity(served),
    )
    # the header block against the files; then the same fields at cell.json's top, once each
    problems = [
        _inconsistent(doc, display, [BLOCK, name], block.get(name, ABSENT), repr(cell.value(name)))
        for name, _ in FIELDS
        if block.get(name) != cell.value(name)
    ] + [
        _inconsistent(doc, display, [name], doc.get(name, ABSENT), repr(cell.value(name)))
        for name, _ in FIELDS
        if block.get(name) == cell.value(name) != doc.get(name)  # one line per wrong field
    ]
    if modes or problems:  # a mode is wrong whatever the files hold
        raise ContractError(modes + problems)
    raise_if_errors(_compiled_problems(folder, display, doc, served, cell))
    return cell


def _compiled_problems(
    folder: Path, display: str, doc: dict[str, Any], served: bytes, cell: CellIdentity
) -> list[Finding]:
    """Every other field of cell.json against what the served files compile to.

    The pin's path and source and the cell id cannot be recomputed from the files, so they are
    taken as cell.json states them; the pin's digest, the kinematics review and the rest must agree.
    """
    urdf = f"{display}/{DESCRIPTION}/robot.urdf"
    data = read_bytes(folder / DESCRIPTION / "robot.urdf", urdf, XML_LIMIT)
    robot, findings = parse_urdf(data, urdf, cell.model_id)
    raise_if_errors(findings + check_rules(robot))
    calibration = parse_calibration(served, f"{display}/{CALIBRATION_NAME}")
    # the served calibration obeys the rules against the served URDF and caps, as when compiled:
    # a cell whose calibration widens a limit or names another model is not to be trusted
    config = _served_config(folder / DESCRIPTION, f"{display}/{DESCRIPTION}", robot)
    rules = check_calibration(
        calibration, cell.model_id, robot, config, f"{display}/{CALIBRATION_NAME}"
    )
    if rules:
        return rules
    stated = doc.get("calibration_pin")
    pin = None
    if isinstance(stated, dict) and all(isinstance(stated.get(k), str) for k in ("path", "source")):
        digest = cell.calibration_identity.removeprefix("sha256:")
        pin = Pin(stated["path"], digest, stated["source"])
    elif stated is not None:
        return [
            _inconsistent(doc, display, ["calibration_pin"], stated, "a {path, sha256, source} pin")
        ]
    elif served != empty_document(cell.model_id):
        why = f"a pin: {CALIBRATION_NAME} is not the empty document"
        return [_inconsistent(doc, display, ["calibration_pin"], stated, why)]
    machine = MachineConfig(str(doc.get("cell_id")), cell.model_id, pin)
    srdf = load_srdf(folder / DESCRIPTION / SRDF_NAME, f"{display}/{DESCRIPTION}/{SRDF_NAME}")
    review = kinematics_review(
        robot, calibration.kinematics, manipulator_links(srdf, robot), home_values(srdf, robot)
    )
    compiled = compiled_cell_json(
        Cell(machine, robot, served, calibration), cell.description_identity, review
    )
    want = parse_json(compiled, f"{display}/{CELL_NAME}")
    return [
        _inconsistent(doc, display, where, found, _brief(value))
        for where, found, value in _differences(doc, want, [])
    ]


def _served_config(description: Path, display: str, robot: Robot) -> RobotConfig | None:
    """The description's config.json (its correction caps), or None when it serves none."""
    path = description / CONFIG_FILE
    if not os.path.lexists(path):
        return None
    name = f"{display}/{CONFIG_FILE}"
    return config_from_bytes(read_bytes(path, name, JSON_LIMIT), robot, name)


class _Absent:
    def __repr__(self) -> str:
        return "nothing"


ABSENT = _Absent()


def _differences(
    found: Any, want: Any, where: list[str | int]
) -> list[tuple[list[str | int], Any, Any]]:
    """Each place where `found` differs from `want`, comparing object members one by one and
    the items of arrays of one length (a changed coordinate is named by its index)."""
    if isinstance(found, list) and isinstance(want, list) and len(found) == len(want):
        pairs = enumerate(zip(found, want, strict=True))
        return [d for i, (f, w) in pairs for d in _differences(f, w, [*where, i])]
    if not (isinstance(found, dict) and isinstance(want, dict)):
        same = found == want and type(found) is type(want)
        return [] if same else [(where, found, want)]
    out = []
    for key in sorted(set(found) | set(want)):
        out += _differences(found.get(key, ABSENT), want.get(key, ABSENT), [*where, key])
    return out


def _brief(value: object) -> str:
    """A value for a message, cut short when long (a whole kinematics review is pages)."""
    text = repr(value)
    return text if len(text) <= 120 else f"{text[:100]}... ({len(text)} characters)"


def _inconsistent(
    doc: dict[str, Any], display: str, where: list[str | int], found: object, want: str
) -> Finding:
    """A field of cell.json (`doc`) that is not what the cell's files give."""
    cell_id = doc.get("cell_id")
    # an id of the right form only: cell.json may be anything a hand put there
    cell_id = cell_id if isinstance(cell_id, str) and MODEL_ID.fullmatch(cell_id) else "<cell_id>"
    return Finding(
        "cell_inconsistent",
        f"{display}/{CELL_NAME}",
        json_pointer(where),
        f"cell.json says {_brief(found)} but the cell's files give {want}",
        f"compile the cell again (`doit cell:{cell_id}` in its repository) or unpack its "
        "bundle again; never edit a compiled cell by hand",
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


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file (however each is written), or one missing file."""
    if os.path.abspath(one) == os.path.abspath(other):
        return True
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def load_check(
    program: Path, program_display: str, cell_dir: Path, cell_display: str
) -> list[Finding]:
    """The refusals of loading `program` on the compiled cell in `cell_dir` (empty: accepted)."""
    # both sides are read before either is judged: a bad program and a bad cell are two findings
    findings: list[Finding] = []
    try:
        header = load_json(program, program_display)
    except ContractError as exc:  # a dense program's points may be megabytes: not a mesh's fix
        findings.extend(
            f._replace(hint=HEADER_ALONE) if f.code == "file_too_large" else f for f in exc.findings
        )
    # the cell's own cell.json as the program (a cell checked alone): its findings are the cell's
    if findings and _same_file(program, cell_dir / CELL_NAME):
        findings = []
    try:
        cell = read_cell(cell_dir, cell_display)
    except ContractError as exc:
        findings.extend(exc.findings)
    if findings:  # a missing cell.json named as the program too is one line
        raise ContractError(list(dict.fromkeys(findings)))
    return header_refusals(header, cell, program_display)
