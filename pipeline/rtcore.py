"""rtcore_definition.json (rosie.robot-definition.v1): joint-to-drive mapping, its rules, loader."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pipeline.annotated_templates import template_notes
from pipeline.config import JointNames, check_model_id, check_revolute, check_unique, is_number
from pipeline.findings import Finding, json_pointer, raise_if_errors
from pipeline.schemas import check_schema, one_per_value
from pipeline.strict_io import JSON_LIMIT, read_bytes
from pipeline.strict_json import lone_surrogates, parse_json
from pipeline.urdf import Robot, display_path

DEFINITION_FILE = "rtcore_definition.json"
DEFINITION_SCHEMA = "robot-definition"
SOURCE = "_source"
UNVERIFIED = "_unverified"


@dataclass(frozen=True)
class Provenance:
    """Where a number came from (`verified`) or why it is not verified yet."""

    verified: bool
    text: str


@dataclass(frozen=True)
class Drive:
    """The drive of one revolute joint, with the provenance of each number."""

    joint: str
    drive_address: int
    gear_ratio: float
    encoder_counts_per_rev: int
    direction: int
    motor_rated_torque_nm: float
    provenance: Mapping[str, Provenance]

    def counts_per_rad(self) -> float:
        """Signed encoder counts per radian of joint motion."""
        return self.direction * self.encoder_counts_per_rev * self.gear_ratio / math.tau


@dataclass(frozen=True)
class RtcoreDefinition:
    """A valid rtcore_definition.json: every revolute joint mapped to its drive."""

    model_id: str
    joints: Mapping[str, Drive]

    def unverified(self) -> list[tuple[str, str, str]]:
        """(joint, field, reason) of every number not verified yet, in document order."""
        return [
            (name, key, origin.text)
            for name, drive in self.joints.items()
            for key, origin in drive.provenance.items()
            if not origin.verified
        ]


def load_rtcore(robot_folder: Path, robot: Robot, repo_root: Path) -> RtcoreDefinition | None:
    """Read and check `robot_folder/rtcore_definition.json`; None when the robot has none."""
    path = robot_folder / DEFINITION_FILE
    if not os.path.lexists(path):
        return None
    display = display_path(path, repo_root)
    return definition_from_bytes(read_bytes(path, display, JSON_LIMIT), robot, display)


def definition_from_bytes(data: bytes, robot: Robot, display: str) -> RtcoreDefinition:
    """Parse and check rtcore_definition.json bytes; raise ContractError with every finding."""
    document = parse_json(data, display)
    raise_if_errors(check_definition(document, robot.name, robot, display))
    return parse_definition(document)


def definition_findings(
    data: bytes, model_id: str, robot: Robot | None, display: str
) -> list[Finding]:
    """The findings of rtcore_definition.json bytes; without `robot`, only the rules that need
    no URDF."""
    return check_definition(parse_json(data, display), model_id, robot, display)


def check_definition(
    data: Mapping[str, Any], model_id: str, robot: Robot | None, display: str
) -> list[Finding]:
    """Every rtcore_definition.json rule: schema, provenance, drive addresses and (given the
    URDF's model, `robot`) its joints; one finding per value, in the file's order."""
    findings = check_schema(data, DEFINITION_SCHEMA, display)
    findings += lone_surrogates(data, display)
    unexpected = {f.place for f in findings if f.code == "unexpected_field"}
    findings += check_model_id(data, model_id, display)
    findings += check_provenance(data, display, unexpected)
    findings += check_unique(
        data, display, "joints", "drive_address", "duplicate_drive_address", "drive address"
    )
    if robot is not None:
        findings += _joint_rules(data, robot, display)
    return one_per_value(data, template_notes(data, findings, display, "robot"))


def _joint_rules(data: Mapping[str, Any], robot: Robot, display: str) -> list[Finding]:
    """Each mapped joint is a revolute joint of the URDF; each revolute joint is mapped."""
    findings: list[Finding] = []
    joints = data.get("joints")
    if not isinstance(joints, dict):
        return findings
    names = JointNames(robot)
    for name in joints:
        findings += check_revolute(robot, name, display, ["joints", name], names)
    for joint in robot.joints:
        if joint.type == "revolute" and joint.mimic is None and joint.name not in joints:
            findings.append(
                Finding(
                    "joint_not_mapped",
                    display,
                    "/joints",
                    f"revolute joint {joint.name!r} has no drive",
                    f"add an entry for {joint.name!r} under joints",
                )
            )
    return findings


def check_provenance(data: object, display: str, skip: set[str]) -> list[Finding]:
    """Each number has exactly one `<field>_source` / `<field>_unverified` sibling."""
    out = []
    for path, obj in _objects(data, []):
        for key, value in obj.items():
            place = json_pointer([*path, key])
            if any(place == s or place.startswith(s + "/") for s in skip):
                continue
            if not is_number(value):
                continue
            siblings = [key + suffix for suffix in (SOURCE, UNVERIFIED) if key + suffix in obj]
            if not siblings:
                out.append(
                    Finding(
                        "missing_source",
                        display,
                        place,
                        f"number {key!r} says nowhere where it came from",
                        f"add {key + SOURCE!r} (document and page, drive parameter) or "
                        f"{key + UNVERIFIED!r} (why it is not verified yet)",
                    )
                )
            elif len(siblings) == 2:
                out.append(
                    Finding(
                        "source_and_unverified",
                        display,
                        place,
                        f"number {key!r} has both {siblings[0]!r} and {siblings[1]!r}",
                        "keep exactly one: the source when it is verified, else the reason",
                    )
                )
    return out


def parse_definition(data: Mapping[str, Any]) -> RtcoreDefinition:
    """The model of an rtcore_definition.json that passed check_definition."""
    drives = {}
    for name, entry in data["joints"].items():
        provenance = {}
        for key, value in entry.items():
            if is_number(value):
                verified = key + SOURCE in entry
                provenance[key] = Provenance(
                    verified, entry[key + SOURCE] if verified else entry[key + UNVERIFIED]
                )
        drives[name] = Drive(
            joint=name,
            drive_address=int(entry["drive_address"]),
            gear_ratio=float(entry["gear_ratio"]),
            encoder_counts_per_rev=int(entry["encoder_counts_per_rev"]),
            direction=int(entry["direction"]),
            motor_rated_torque_nm=float(entry["motor_rated_torque_nm"]),
            provenance=MappingProxyType(provenance),
        )
    return RtcoreDefinition(str(data["model_id"]), MappingProxyType(drives))


def _objects(
    value: object, path: list[str | int]
) -> Iterator[tuple[list[str | int], dict[str, Any]]]:
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _objects(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _objects(item, [*path, index])
