"""cells/<cell_id>/machine.json (rosie.machine-config.v1): its model, the fields of a refused
one that can still be trusted, and the rules of its calibration pin's path."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.findings import Finding, raise_if_errors
from pipeline.schemas import check_schema
from pipeline.sourcenames import ignored_part
from pipeline.strict_io import is_utf8
from pipeline.strict_json import lone_surrogates, parse_json

MACHINE_NAME = "machine.json"
MACHINE_SCHEMA = "machine-config"
PIN = "/robot/machine_planning_calibration"


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
class MachineFields:
    """What a machine.json says that its schema findings leave trustworthy (None: not that)."""

    cell_id: str | None
    model_id: str | None
    pin: Pin | None  # the whole pin
    pin_path: str | None  # enough to read the calibration and check it on its own
    pin_sha256: str | None
    unpinned: bool  # robot is an object without a pin: the cell serves the empty document


def machine_fields(doc: dict[str, Any], findings: list[Finding]) -> MachineFields:
    """The fields of a machine config whose values (and all they hold) no finding is about."""

    def clean(pointer: str) -> bool:
        return not any(f.place == pointer or f.place.startswith(pointer + "/") for f in findings)

    def text(holder: object, key: str, pointer: str) -> str | None:
        value = holder.get(key) if isinstance(holder, dict) else None
        return value if isinstance(value, str) and clean(pointer) else None

    robot = doc.get("robot")
    pin = robot.get("machine_planning_calibration") if isinstance(robot, dict) else None
    path, sha256 = text(pin, "path", f"{PIN}/path"), text(pin, "sha256", f"{PIN}/sha256")
    whole = isinstance(pin, dict) and clean(PIN)
    return MachineFields(
        cell_id=text(doc, "cell_id", "/cell_id"),
        model_id=text(robot, "model_id", "/robot/model_id"),
        pin=Pin(pin["path"], pin["sha256"], pin["source"]) if whole and pin else None,
        pin_path=path,
        pin_sha256=sha256,
        unpinned=isinstance(robot, dict) and "machine_planning_calibration" not in robot,
    )


# digests a pin may have been given instead of a SHA-256's, by their number of hex digits
_OTHER_DIGESTS = {32: "an MD5", 40: "a SHA-1", 56: "a SHA-224", 96: "a SHA-384", 128: "a SHA-512"}
_HEX = re.compile("[0-9a-fA-F]+")


def pin_digest_hint(written: str, file: str) -> str:
    """How to write a pin's `sha256` that is not 64 bare lowercase hex digits: the digest
    itself when it is there in another form (upper case, `sha256:`, a `sha256sum` line)."""
    changes, digest = [], written
    if digest != digest.strip():
        changes.append("leave out the space or line break around the digits")
        digest = digest.strip()
    if len(digest.split()) > 1:
        changes.append("only the digest, not what follows it")
        digest = digest.split()[0]
    algorithm, colon, rest = digest.partition(":")
    if colon and algorithm.lower() == "sha256":
        changes.append("leave out 'sha256:' (cell.json's form)")
        digest = rest
    if _HEX.fullmatch(digest) and len(digest) == 64:
        if digest != digest.lower():
            changes.append("write the same digits in lower case")
        return f"{'; '.join(changes)}: {digest.lower()}"
    command = f"`sha256sum {file}`, 64 lowercase hex digits"
    digits = rest if colon else digest
    other = _OTHER_DIGESTS.get(len(digits)) if _HEX.fullmatch(digits) else None
    if other is not None:
        return (
            f"that is {len(digits)} hex digits, the length of {other} digest: pin the SHA-256 "
            f"of the file's exact bytes ({command})"
        )
    return f"pin the SHA-256 of the file's exact bytes ({command})"


def machine_findings(doc: Any, display: str) -> list[Finding]:
    """The schema's findings on a machine config, and a lone surrogate in any text they leave."""
    findings = check_schema(doc, MACHINE_SCHEMA, display)
    robot = doc.get("robot") if isinstance(doc, dict) else None
    pin = robot.get("machine_planning_calibration") if isinstance(robot, dict) else None
    written = pin.get("sha256") if isinstance(pin, dict) else None
    if isinstance(written, str):  # the schema's "write it in that form" left the fix to guess
        path = pin.get("path") if isinstance(pin, dict) else None
        folder = display.rpartition("/")[0]
        file = "<file>" if not isinstance(path, str) else f"{folder}/{path}" if folder else path
        findings = [
            f._replace(hint=pin_digest_hint(written, file))
            if f.place == f"{PIN}/sha256" and f.code == "invalid_value"
            else f
            for f in findings
        ]
    # a free text (the pin's source) is copied into cell.json, which UTF-8 cannot hold it in;
    # a field the schema already refused is one problem, said once
    reported = {finding.place for finding in findings}
    return findings + [f for f in lone_surrogates(doc, display) if f.place not in reported]


def parse_machine(data: bytes, display: str) -> MachineConfig:
    """Strictly parse and schema-check a machine config into its model."""
    doc = parse_json(data, display)
    raise_if_errors(machine_findings(doc, display))
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


def pin_path_findings(folder: Path, pinned: str, display: str) -> list[Finding]:
    """The pin path stays inside the cell folder `folder` and passes through no symbolic link."""
    place = "/robot/machine_planning_calibration/path"
    parts = pinned.split("/")
    if "\x00" in pinned or not is_utf8(pinned):
        return [
            Finding(
                "invalid_path_character",
                display,
                place,
                f"pin path {pinned!r} holds a NUL or a lone surrogate, which no file name can",
                "pin the calibration file's real name",
            )
        ]
    if pinned.startswith("/"):
        problem = "is absolute"
    elif "\\" in pinned:
        problem = "uses '\\'"
    elif len(pinned) > 1 and pinned[1] == ":":
        problem = f"starts as a Windows drive does ({pinned[:2]!r})"
    elif ".." in parts:
        problem = "climbs out with '..'"
    elif any(part in ("", ".") for part in parts):
        problem = "has an empty or '.' segment"
    elif ignored_part(pinned) is not None:
        return [
            Finding(
                "ignored_file_name",
                display,
                place,
                f"pin path {_brief(pinned)} names {ignored_part(pinned)!r}, which the build "
                "never reads as a source (a hidden file, an editor's backup or lock, OS metadata)",
                "rename the calibration file to a plain name and pin that",
            )
        ]
    else:
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
                    f"pin path {_brief(pinned)} cannot name a file ({exc.strerror})",
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
            f"pin path {_brief(pinned)} {problem}",
            "write a '/'-separated path relative to the cell folder, inside it",
        )
    ]
