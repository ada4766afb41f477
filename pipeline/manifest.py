"""The description manifest: what it registers, how it is written, and its rules."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pipeline.findings import ContractError, Finding, json_pointer
from pipeline.strict_io import is_utf8
from pipeline.strict_json import dump_json, load_json

MANIFEST_NAME = "robot_description_manifest.json"
MANIFEST_SCHEMA = "rosie.robot-manifest.v1"
CALIBRATION_NAME = "machine_planning_calibration.json"
SRDF_NAME = "robot.srdf"
REGISTERED_NAMES = (
    "robot.urdf",
    SRDF_NAME,
    "config.json",
    "spheres.json",
    "rtcore_definition.json",
)
MESH_FOLDER = "meshes"


@dataclass(frozen=True)
class Manifest:
    """A parsed `robot_description_manifest.json`."""

    model_id: str
    files: tuple[str, ...]


def byte_order(paths: list[str]) -> list[str]:
    """Paths sorted by their UTF-8 bytes, the order the spec fixes."""
    return sorted(paths, key=lambda p: p.encode("utf-8"))


def is_registered(path: str) -> bool:
    """Whether a description-relative path is of a kind the manifest registers."""
    return path in REGISTERED_NAMES or path.startswith(f"{MESH_FOLDER}/")


def registered_files(folder: Path) -> list[str]:
    """The files a manifest of `folder` registers: the named files present, and all of meshes/."""
    files = [name for name in REGISTERED_NAMES if (folder / name).is_file()]
    meshes = folder / MESH_FOLDER
    if meshes.is_dir():
        for dirpath, dirnames, filenames in os.walk(meshes):
            dirnames.sort()
            rel = Path(dirpath).relative_to(folder).as_posix()
            files.extend(f"{rel}/{name}" for name in filenames)
    return byte_order([path for path in files if is_registered(path)])


def manifest_bytes(model_id: str, files: list[str]) -> bytes:
    """The canonical bytes of a manifest registering `files`."""
    return dump_json({"schema": MANIFEST_SCHEMA, "model_id": model_id, "files": byte_order(files)})


def path_findings(path: object, index: int, seen: set[str], display: str) -> list[Finding]:
    """The spec's rules for one entry of `files` (everything but the on-disk check)."""
    place = f"/files/{index}"

    def bad(code: str, message: str, hint: str) -> list[Finding]:
        return [Finding(code, display, place, message, hint)]

    if not isinstance(path, str):
        return bad("path_not_string", f"entry {path!r} is not a string", "list paths as strings")
    if path == "":
        return bad("empty_path", "entry is empty", "remove it or name a file")
    if "\x00" in path or not is_utf8(path):
        return bad(
            "invalid_path_character",
            f"{path!r} holds a NUL or a lone surrogate, which no file name can",
            "list the file's real name",
        )
    if "\\" in path:
        return bad("backslash_path", f"{path!r} contains a backslash", "use '/' separators")
    if (
        path.startswith("/")
        or PurePosixPath(path).is_absolute()
        or (len(path) > 1 and path[1] == ":")
    ):
        return bad(
            "absolute_path", f"{path!r} is absolute", "write it relative to the description folder"
        )
    if any(part in (".", "..", "") for part in path.split("/")):
        return bad(
            "dot_segment",
            f"{path!r} has a '.', '..' or empty segment",
            "write the plain relative path",
        )
    if path in seen:
        return bad("duplicate_path", f"{path!r} is listed more than once", "list it once")
    if path == MANIFEST_NAME:
        return bad(
            "manifest_lists_itself",
            "the manifest lists itself",
            "remove it: the identity covers the manifest anyway",
        )
    if path.split("/")[-1] == CALIBRATION_NAME:
        return bad(
            "manifest_lists_calibration",
            f"{path!r} is the cell's calibration file",
            "remove it: a cell serves its calibration beside the description",
        )
    return []


def folder_model_id(folder: Path) -> str:
    """The model id a description folder's name gives, also for `.` or a path ending in `..`."""
    return Path(os.path.abspath(folder)).name


def _regular_file(folder: Path, path: str) -> str:
    """Empty when `folder/path` is a regular file reached through real folders; else what it is."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        # a linked folder (meshes -> elsewhere) would take the entry out of the description
        inner = "/".join(parts[:depth])
        try:
            mode = os.lstat(folder / inner).st_mode
        except OSError:
            return "does not exist"
        if stat.S_ISLNK(mode):
            return f"lies in {inner!r}, a symbolic link"
        if not stat.S_ISDIR(mode):
            return f"lies in {inner!r}, which is not a folder"
    try:
        mode = os.lstat(folder / path).st_mode
    except OSError:
        return "does not exist"
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    return ""


def read_manifest(folder: Path, display_folder: str, model_id: str | None = None) -> Manifest:
    """Read and check a manifest; its model_id must be `model_id` (default: the folder's name)."""
    display = f"{display_folder}/{MANIFEST_NAME}"
    data = load_json(folder / MANIFEST_NAME, display)
    findings: list[Finding] = []
    for key in sorted(set(data) - {"schema", "model_id", "files"}):
        findings.append(
            Finding(
                "unknown_field",
                display,
                json_pointer([key]),
                f"unknown field {key!r}",
                "a manifest has only schema, model_id and files",
            )
        )
    if data.get("schema") != MANIFEST_SCHEMA:
        findings.append(
            Finding(
                "wrong_schema",
                display,
                "/schema",
                f"schema is {data.get('schema')!r}",
                f'set "schema": "{MANIFEST_SCHEMA}"',
            )
        )
    expected = model_id or folder_model_id(folder)
    model_id = data.get("model_id")
    if model_id != expected:
        findings.append(
            Finding(
                "model_id_mismatch",
                display,
                "/model_id",
                f"model_id {model_id!r} differs from the model {expected!r}",
                "set model_id to the description's model id",
            )
        )
    files = data.get("files")
    if not isinstance(files, list):
        findings.append(
            Finding(
                "files_not_list",
                display,
                "/files",
                "files is not a list",
                "list the registered paths",
            )
        )
        files = []
    seen: set[str] = set()
    for index, path in enumerate(files):
        problems = path_findings(path, index, seen, display)
        if not problems and isinstance(path, str):
            what = _regular_file(folder, path)
            if what:
                problems = [
                    Finding(
                        "not_a_regular_file",
                        display,
                        f"/files/{index}",
                        f"{path!r} {what}",
                        "register only regular files",
                    )
                ]
        findings.extend(problems)
        if isinstance(path, str):
            seen.add(path)
    if findings:
        raise ContractError(findings)
    return Manifest(str(model_id), tuple(str(p) for p in files))


def check_complete(folder: Path, manifest: Manifest, display_folder: str) -> list[Finding]:
    """The manifest registers exactly what the folder holds of the registered kinds, no other."""
    display = f"{display_folder}/{MANIFEST_NAME}"
    expected, listed = set(registered_files(folder)), set(manifest.files)
    out = [
        Finding(
            "unregistered_file",
            display,
            "/files",
            f"{path!r} is present but not listed",
            # in build/, `doit` lists what its steps make and leaves a file no step makes
            "remove it if no step made it (in build/, `doit` leaves such a file); otherwise "
            "regenerate the manifest (`doit`)",
        )
        for path in byte_order(sorted(expected - listed))
    ]
    # the reverse: "everything else in the directory is provenance", never registered
    out += [
        Finding(
            "provenance_registered",
            display,
            f"/files/{index}",
            f"{path!r} is provenance, not a file of a registered kind",
            "remove it from files: only robot.urdf, robot.srdf, config.json, spheres.json, "
            "rtcore_definition.json and the files in meshes/ are registered",
        )
        for index, path in enumerate(manifest.files)
        if not is_registered(path)
    ]
    out += (
        [
            Finding(
                "files_not_in_byte_order",
                display,
                "/files",
                "files are not sorted by byte order",
                "regenerate the manifest",
            )
        ]
        if list(manifest.files) != byte_order(list(manifest.files))
        else []
    )
    return out
