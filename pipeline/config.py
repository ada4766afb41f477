"""config.json (rosie.robot-config.v1): its model, its rules beyond the schema, and its loader."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pipeline.annotated_templates import template_notes
from pipeline.findings import (
    Closest,
    Finding,
    as_read,
    breaking,
    json_pointer,
    listed_names,
    raise_if_errors,
)
from pipeline.schemas import check_schema, one_per_value
from pipeline.strict_io import JSON_LIMIT, read_bytes
from pipeline.strict_json import lone_surrogates, parse_json
from pipeline.urdf import Robot, display_path

CONFIG_FILE = "config.json"
CONFIG_SCHEMA = "robot-config"
JointRef = tuple[str, list[str | int]]

# Words that name a number the URDF already holds (<limit>, <origin>, <axis>, <inertial>,
# <dynamics>, <mimic>, <safety_controller>). An unexpected field made of one of them is a
# restatement, reported as such instead of as a plain unknown field.
_URDF_WORDS = frozenset(
    {
        "lower",
        "upper",
        "limit",
        "limits",
        "velocity",
        "velocities",
        "speed",
        "effort",
        "torque",
        "origin",
        "xyz",
        "rpy",
        "inertia",
        "inertial",
        "mass",
        "ixx",
        "ixy",
        "ixz",
        "iyy",
        "iyz",
        "izz",
        "damping",
        "friction",
        "mimic",
        "multiplier",
    }
)


# a key holding none of the words anywhere, in any case, names none of them
_ANY_URDF_WORD = re.compile("|".join(sorted(_URDF_WORDS)), re.IGNORECASE)


@dataclass(frozen=True)
class CorrectionCap:
    """Largest accepted |correction| per axis: translation in m, rotation in rad."""

    xyz_m: tuple[float, float, float]
    rpy_rad: tuple[float, float, float]


ZERO_CAP = CorrectionCap((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


@dataclass(frozen=True)
class ControllerAxis:
    """The controller axis driving a joint: its name or zero-based index, and its sign."""

    axis: str | int
    sign: int


@dataclass(frozen=True)
class RobotConfig:
    """A valid config.json: what the URDF cannot say about a robot model."""

    planning_joints: tuple[str, ...]
    axes: Mapping[str, ControllerAxis] = field(default_factory=lambda: MappingProxyType({}))
    reset_pose: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    caps: Mapping[str, CorrectionCap] = field(default_factory=lambda: MappingProxyType({}))

    def cap(self, joint: str) -> CorrectionCap:
        """The correction cap of `joint`; ZERO_CAP when it is not listed."""
        return self.caps.get(joint, ZERO_CAP)


def caps_for(config: RobotConfig | None, joint: str) -> CorrectionCap:
    """The correction cap of `joint`; ZERO_CAP when there is no config.json."""
    return ZERO_CAP if config is None else config.cap(joint)


def load_config(robot_folder: Path, robot: Robot, repo_root: Path) -> RobotConfig | None:
    """Read and check `robot_folder/config.json`; None when the robot has none."""
    path = robot_folder / CONFIG_FILE
    if not os.path.lexists(path):
        return None
    display = display_path(path, repo_root)
    return config_from_bytes(read_bytes(path, display, JSON_LIMIT), robot, display)


def config_from_bytes(data: bytes, robot: Robot, display: str) -> RobotConfig:
    """Parse and check config.json bytes; raise ContractError with every finding."""
    document = parse_json(data, display)
    raise_if_errors(check_config(document, robot.name, robot, display))
    return parse_config(document)


def config_findings(data: bytes, model_id: str, robot: Robot | None, display: str) -> list[Finding]:
    """The findings of config.json bytes; without `robot`, only the rules that need no URDF."""
    return check_config(parse_json(data, display), model_id, robot, display)


def check_config(
    data: Mapping[str, Any], model_id: str, robot: Robot | None, display: str
) -> list[Finding]:
    """Every config.json rule: the schema and the file's own, then (given the URDF's model,
    `robot`) the rules that name its joints."""
    findings = [restated_urdf(f) for f in check_schema(data, CONFIG_SCHEMA, display)]
    findings += lone_surrogates(data, display)
    findings += check_model_id(data, model_id, display)
    findings += axis_names(data, display)
    findings += check_unique(
        data, display, "axes", "controller_axis", "duplicate_axis", "controller axis"
    )
    if robot is not None:
        findings += _joint_rules(data, robot, display)
    return one_per_value(data, template_notes(data, findings, display, "config"))


def _joint_rules(data: Mapping[str, Any], robot: Robot, display: str) -> list[Finding]:
    """The rules that name the URDF's joints: each exists, is revolute, its reset in limits."""
    findings: list[Finding] = []
    planning = data.get("planning")
    planned = planning.get("joints") if isinstance(planning, dict) else None
    refs: list[JointRef] = []
    if isinstance(planned, list):
        refs += [(n, ["planning", "joints", i]) for i, n in enumerate(planned) if _text(n)]
    for section in ("axes", "reset_pose"):
        refs += [(name, [section, name]) for name in _entries(data, section)]
    names = JointNames(robot)
    for name, place in refs:
        findings += check_revolute(robot, name, display, place, names)
    for name in _entries(data, "calibration_caps"):
        if robot.joint(name) is None:
            findings.append(_unknown_joint(name, display, ["calibration_caps", name], names))
    return findings + _reset_pose_rules(_entries(data, "reset_pose"), robot, display)


def restated_urdf(finding: Finding) -> Finding:
    """An unexpected field named like a URDF number becomes a `restates_urdf` finding."""
    if finding.code != "unexpected_field":
        return finding
    key = finding.place.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
    if key.endswith("_doc"):  # a note of `pipeline template config`, not a number: remove it
        return finding
    if not _ANY_URDF_WORD.search(key):  # most keys: 1.3 M unknown keys took 12 s to split
        return finding
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower()
    if not _URDF_WORDS.intersection(re.split(r"[^a-z0-9]+", words)):
        return finding
    return Finding(
        "restates_urdf",
        finding.file,
        finding.place,
        f"field {key!r} restates a number the URDF already holds",
        "delete it; the number belongs in robot.urdf (<limit>, <origin>, <axis>, <inertial>, "
        "<dynamics>) and config.json states only what the URDF cannot",
        finding.severity,
    )


def check_model_id(data: Mapping[str, Any], model_id: str, display: str) -> list[Finding]:
    """`model_id`, when it is a text, names the robot the folder holds."""
    written = data.get("model_id")
    if not isinstance(written, str) or written == model_id:
        return []
    return [
        Finding(
            "model_id_mismatch",
            display,
            "/model_id",
            f"model_id {written!r} differs from the model id {model_id!r}",
            f'write "model_id": "{model_id}"',
        )
    ]


class JointNames:
    """The URDF's joints as an unknown name's hint names them: the one most likely meant, or,
    for a placeholder of `pipeline template config` or `robot` left in (`<joint name>`), the
    revolute joints there are (mimic joints aside)."""

    def __init__(self, robot: Robot) -> None:
        self.near = Closest([joint.name for joint in robot.joints])
        revolute = [j.name for j in robot.joints if j.type == "revolute" and j.mimic is None]
        self.listed = listed_names(revolute)


def check_revolute(
    robot: Robot, name: str, display: str, place: list[str | int], names: JointNames | None = None
) -> list[Finding]:
    """`name` must be a revolute joint of the URDF (`names`: for an unknown name's hint)."""
    joint = robot.joint(name)
    if joint is None:
        return [_unknown_joint(name, display, place, names)]
    if joint.type != "revolute":
        return [
            Finding(
                "joint_not_revolute",
                display,
                json_pointer(place),
                f"joint {name!r} is {joint.type}, not revolute",
                "name only revolute joints of robot.urdf here"
                + (
                    f" (config.json maps no prismatic axis: leave {name!r} out; a linear track "
                    "is planned from the SRDF's groups and the URDF's <limit>)"
                    if joint.type == "prismatic"
                    else ""
                ),
            )
        ]
    return []


def _unknown_joint(
    name: str, display: str, place: list[str | int], names: JointNames | None = None
) -> Finding:
    pointer = json_pointer(place)
    if names is not None and name.startswith("<") and name.endswith(">"):
        message = f"{name!r} is the template's placeholder, not a joint"
        fix = f"replace it with a joint of robot.urdf: {names.listed or 'it has no revolute one'}"
        return Finding("unknown_joint", display, pointer, message, fix)
    fix = "name a joint of robot.urdf (check the spelling)"
    hint = fix if names is None else names.near.hint(name, fix)
    return Finding("unknown_joint", display, pointer, f"joint {name!r} is not in the URDF", hint)


def _reset_pose_rules(pose: Mapping[str, Any], robot: Robot, display: str) -> list[Finding]:
    out = []
    for name, value in pose.items():
        joint = robot.joint(name)
        limit = None if joint is None else joint.limit
        if limit is None or limit.lower is None or limit.upper is None or not is_number(value):
            continue
        if not limit.lower <= value <= limit.upper:
            out.append(
                Finding(
                    "reset_pose_outside_limits",
                    display,
                    json_pointer(["reset_pose", name]),
                    f"{name} = {value!r} rad is outside the URDF limits "
                    f"[{limit.lower!r}, {limit.upper!r}] rad",
                    "choose a reset position within the joint's URDF limits",
                )
            )
    return out


def check_unique(
    data: Mapping[str, Any], display: str, section: str, field: str, code: str, what: str
) -> list[Finding]:
    """No two entries of `data[section]` share the same `field` value (text or integer)."""
    out = []
    seen: dict[tuple[type, object], tuple[str, object]] = {}
    for name, entry in _entries(data, section).items():
        value = entry.get(field) if isinstance(entry, dict) else None
        if not isinstance(value, str | int) or isinstance(value, bool):
            continue
        # a text as a person reads it: "A1", "a1", "A1 " and "A\u200b1" name one axis
        key = (type(value), as_read(value) if isinstance(value, str) else value)
        if key in seen:
            first, written = seen[key]
            alike = "" if written == value else f" (as {first!r} writes it: {written!a})"
            out.append(
                Finding(
                    code,
                    display,
                    json_pointer([section, name, field]),
                    f"{what} {value!a} is used by both {first!r}{alike} and {name!r}",
                    f"give every joint its own {what}"
                    + (
                        ", names told apart by more than case, spaces or invisible characters"
                        if isinstance(value, str)
                        else ""
                    ),
                )
            )
        seen.setdefault(key, (name, value))
    return out


def axis_names(data: Mapping[str, Any], display: str) -> list[Finding]:
    """invalid_text_character for a controller axis name a person cannot read as a program
    matches it: white space at its ends, a space other than U+0020 (a no-break space), an
    invisible (format) character (U+200B, U+00AD, U+FEFF), an accent not composed (NFC). A
    line break, control or bidirectional control is the schema's (`TEXT`)."""
    out = []
    for name, entry in _entries(data, "axes").items():
        value = entry.get("controller_axis") if isinstance(entry, dict) else None
        if not isinstance(value, str) or breaking(value) is not None or not value.strip():
            continue
        odd = [c for c in value if _invisible(c)]
        if odd:
            what = f"holds {ascii(odd[0])[1:-1]} (U+{ord(odd[0]):04X}), an invisible character"
        elif value != value.strip():
            what = "has white space at its " + ("start" if value[0].isspace() else "end")
        elif unicodedata.normalize("NFC", value) != value:
            what = "holds an accent written as a letter and a combining mark (not NFC)"
        else:
            continue
        plain = "".join(" " if c.isspace() else c for c in value if unicodedata.category(c) != "Cf")
        plain = unicodedata.normalize("NFC", plain.strip())
        out.append(
            Finding(
                "invalid_text_character",
                display,
                json_pointer(["axes", name, "controller_axis"]),
                f"controller axis {value!a} {what}, which a controller matching the name "
                "does not find",
                f"write the controller's name of the axis as {plain!a}, as the controller "
                "spells it",
            )
        )
    return out


def _invisible(char: str) -> bool:
    """A format character (U+200B, U+00AD, U+FEFF) or a space other than U+0020."""
    kind = unicodedata.category(char)
    return kind == "Cf" or (char != " " and (kind == "Zs" or char.isspace()))


def parse_config(data: Mapping[str, Any]) -> RobotConfig:
    """The model of a config.json that passed check_config."""
    axes = {
        name: ControllerAxis(entry["controller_axis"], int(entry["sign"]))
        for name, entry in _entries(data, "axes").items()
    }
    caps = {
        name: CorrectionCap(_vec3(entry["xyz_m"]), _vec3(entry["rpy_rad"]))
        for name, entry in _entries(data, "calibration_caps").items()
    }
    pose = {name: float(value) for name, value in _entries(data, "reset_pose").items()}
    return RobotConfig(
        planning_joints=tuple(data["planning"]["joints"]),
        axes=MappingProxyType(axes),
        reset_pose=MappingProxyType(pose),
        caps=MappingProxyType(caps),
    )


def _entries(data: Mapping[str, Any], section: str) -> dict[str, Any]:
    value = data.get(section)
    return value if isinstance(value, dict) else {}


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def is_number(value: object) -> bool:
    """A JSON number (a bool is not one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _vec3(values: list[Any]) -> tuple[float, float, float]:
    return (float(values[0]), float(values[1]), float(values[2]))
