"""A cell's machine_planning_calibration.json: its model, its rules, and its identity."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipeline.config import RobotConfig, caps_for
from pipeline.findings import Closest, ContractError, Finding, json_pointer, raise_if_errors
from pipeline.kinematics import Vec3
from pipeline.schemas import check_schema
from pipeline.strict_json import parse_json
from pipeline.urdf import Joint, Robot

CALIBRATION_SCHEMA = "rosie.machine-planning-calibration.v1"
SCHEMA_NAME = "machine-planning-calibration"
CALIBRATION_NAME = "machine_planning_calibration.json"
_Add = Callable[[str, list[str | int], str, str], None]


@dataclass(frozen=True)
class JointLimit:
    """A joint's limits in this cell: position bounds in rad, velocity in rad/s."""

    lower_rad: float
    upper_rad: float
    velocity_rad_s: float


@dataclass(frozen=True)
class Correction:
    """A joint origin correction: translation in m and roll-pitch-yaw in rad."""

    xyz_m: Vec3
    rpy_rad: Vec3


@dataclass(frozen=True)
class Calibration:
    """A parsed machine_planning_calibration.json (maps keep the document's order)."""

    model_id: str
    speed_ceiling_rad_s: float | None = None
    joints: dict[str, JointLimit] = field(default_factory=dict)
    held: dict[str, float] = field(default_factory=dict)
    kinematics: dict[str, Correction] = field(default_factory=dict)


def empty_document(model_id: str) -> bytes:
    """The exact document a cell without a calibration serves for its model."""
    model = json.dumps(model_id, ensure_ascii=False)
    return f'{{"schema":"{CALIBRATION_SCHEMA}","model_id":{model}}}\n'.encode()


def calibration_identity(data: bytes) -> str:
    """The calibration identity: `sha256:` + SHA-256 of the served bytes, never re-serialised."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _vec3(values: list[Any]) -> Vec3:
    return (float(values[0]), float(values[1]), float(values[2]))


def parse_calibration(data: bytes, display: str) -> Calibration:
    """Strictly parse and schema-check a calibration document into its model."""
    doc = parse_json(data, display)
    raise_if_errors(check_schema(doc, SCHEMA_NAME, display))
    limits = doc.get("limits", {})
    return Calibration(
        model_id=doc["model_id"],
        speed_ceiling_rad_s=limits.get("speed_ceiling_rad_s"),
        joints={
            name: JointLimit(
                float(v["lower_rad"]), float(v["upper_rad"]), float(v["velocity_rad_s"])
            )
            for name, v in limits.get("joints", {}).items()
        },
        held={name: float(v["position_rad"]) for name, v in limits.get("held", {}).items()},
        kinematics={
            name: Correction(_vec3(v["xyz_m"]), _vec3(v["rpy_rad"]))
            for name, v in doc.get("kinematics", {}).items()
        },
    )


def check_calibration(
    cal: Calibration, model_id: str, robot: Robot, config: RobotConfig | None, display: str
) -> list[Finding]:
    """Every calibration rule beyond the schema, against the cell's model, URDF and caps."""
    out: list[Finding] = []

    def add(code: str, parts: list[str | int], message: str, hint: str) -> None:
        out.append(Finding(code, display, json_pointer(parts), message, hint))

    if cal.model_id != model_id:
        add(
            "calibration_model_mismatch",
            ["model_id"],
            f"the calibration is for {cal.model_id!r}, the cell runs {model_id!r}",
            "pin a calibration measured on this cell's robot model",
        )
    near = Closest([joint.name for joint in robot.joints])  # the joint a name meant
    effective = _limit_rules(cal, robot, add, near)
    _held_rules(cal, robot, effective, add, near)
    _correction_rules(cal, model_id, robot, config, add, near)
    return out


def _limit_rules(
    cal: Calibration, robot: Robot, add: _Add, near: Closest
) -> dict[str, tuple[float, float]]:
    """limits.joints narrow the URDF's; returns each limited joint's (lower, upper)."""
    effective: dict[str, tuple[float, float]] = {}
    for name, limit in cal.joints.items():
        where: list[str | int] = ["limits", "joints", name]
        joint = _revolute(robot, name, where, add, near)
        if joint is None or joint.limit is None:
            continue
        urdf = joint.limit
        if not limit.lower_rad < limit.upper_rad:
            add(
                "limit_order",
                where,
                f"lower_rad {limit.lower_rad!r} is not below upper_rad {limit.upper_rad!r}",
                "write lower_rad < upper_rad",
            )
        if urdf.lower is not None and limit.lower_rad < urdf.lower:
            add(
                "limit_widens",
                [*where, "lower_rad"],
                f"lower_rad {limit.lower_rad!r} is below the URDF's {urdf.lower!r}",
                "a calibration may narrow a limit, never widen it",
            )
        if urdf.upper is not None and limit.upper_rad > urdf.upper:
            add(
                "limit_widens",
                [*where, "upper_rad"],
                f"upper_rad {limit.upper_rad!r} is above the URDF's {urdf.upper!r}",
                "a calibration may narrow a limit, never widen it",
            )
        if urdf.velocity is not None and limit.velocity_rad_s > urdf.velocity:
            add(
                "velocity_widens",
                [*where, "velocity_rad_s"],
                f"velocity_rad_s {limit.velocity_rad_s!r} is above the URDF's {urdf.velocity!r}",
                "a calibration may lower a velocity limit, never raise it",
            )
        effective[name] = (limit.lower_rad, limit.upper_rad)
    return effective


def _held_rules(
    cal: Calibration,
    robot: Robot,
    effective: dict[str, tuple[float, float]],
    add: _Add,
    near: Closest,
) -> None:
    """A held joint is revolute and held within its limits in this cell."""
    for name, position in cal.held.items():
        where: list[str | int] = ["limits", "held", name, "position_rad"]
        joint = _revolute(robot, name, where[:-1], add, near)
        if joint is None or joint.limit is None:
            continue
        lower, upper = effective.get(name, (joint.limit.lower, joint.limit.upper))
        if (lower is not None and position < lower) or (upper is not None and position > upper):
            add(
                "held_outside_limits",
                where,
                f"held position {position!r} is outside the joint's limits [{lower!r}, {upper!r}]",
                "hold the joint at a position within its limits in this cell",
            )


def _correction_rules(
    cal: Calibration,
    model_id: str,
    robot: Robot,
    config: RobotConfig | None,
    add: _Add,
    near: Closest,
) -> None:
    """Each corrected joint exists and each component is within config.json's caps."""
    path = f"robots/{model_id}/config.json"  # the findings are the cell's: name the model's file
    for name, correction in cal.kinematics.items():
        if robot.joint(name) is None:
            add(
                "unknown_joint",
                ["kinematics", name],
                f"joint {name!r} is not in the URDF",
                near.hint(name, "correct only joints the URDF defines"),
            )
            continue
        cap = caps_for(config, name)
        listed = config is not None and name in config.caps
        if config is None:
            reason = f"{path} does not exist, so every cap of {name!r} is 0"
        elif not listed:
            reason = f"{path}'s calibration_caps lists no {name!r}, so every cap of it is 0"
        else:
            reason = f"{path} caps {name!r} at xyz_m {list(cap.xyz_m)}, "
            reason += f"rpy_rad {list(cap.rpy_rad)}"
        fix = f"raise the cap in {path}'s calibration_caps"
        fix = fix if listed else f"give {name!r} a cap in {path}'s calibration_caps"
        if config is None:
            fix += " (`pipeline template config` prints its form)"
        for key, values, caps in (
            ("xyz_m", correction.xyz_m, cap.xyz_m),
            ("rpy_rad", correction.rpy_rad, cap.rpy_rad),
        ):
            for i, (value, limit_value) in enumerate(zip(values, caps, strict=True)):
                if abs(value) > limit_value:
                    add(
                        "correction_over_cap",
                        ["kinematics", name, key, i],
                        f"|{value!r}| is over the cap {limit_value!r}; {reason}",
                        f"re-measure, or {fix}",
                    )


def _revolute(
    robot: Robot, name: str, where: list[str | int], add: _Add, near: Closest
) -> Joint | None:
    joint = robot.joint(name)
    if joint is None:
        add(
            "unknown_joint",
            where,
            f"joint {name!r} is not in the URDF",
            near.hint(name, "name a revolute joint of the URDF"),
        )
        return None
    if joint.type != "revolute":
        add(
            "joint_not_revolute",
            where,
            f"joint {name!r} is {joint.type}, not revolute",
            "limit or hold only revolute joints"
            + (
                f" (a calibration narrows no prismatic axis: the travel of {name!r} is "
                "robot.urdf's <limit>)"
                if joint.type == "prismatic"
                else ""
            ),
        )
        return None
    return joint


def load_calibration(
    data: bytes, model_id: str, robot: Robot, config: RobotConfig | None, display: str
) -> Calibration:
    """Parse a calibration and apply every rule; raise ContractError with all findings."""
    cal = parse_calibration(data, display)
    findings = check_calibration(cal, model_id, robot, config, display)
    if findings:
        raise ContractError(findings)
    return cal
