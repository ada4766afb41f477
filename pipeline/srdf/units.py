"""Group-state values into URDF-native units: legacy `value_deg` becomes radians by joint type."""

from __future__ import annotations

import math
from dataclasses import replace

from pipeline.srdf.model import GroupState, JointValue, Srdf
from pipeline.urdf import Robot

ANGULAR_TYPES = ("revolute", "continuous")


def native_value(value: JointValue, robot: Robot) -> JointValue:
    """The value in rad for an angular joint given in degrees; anything else unchanged."""
    joint = robot.joint(value.name)
    if value.degrees and joint is not None and joint.type in ANGULAR_TYPES:
        return replace(value, value=math.radians(value.value), degrees=False)
    return value


def to_native(srdf: Srdf, robot: Robot) -> Srdf:
    """The model with every convertible degree value in radians (prismatic ones stay flagged)."""
    elements = tuple(
        replace(e, values=tuple(native_value(v, robot) for v in e.values))
        if isinstance(e, GroupState)
        else e
        for e in srdf.elements
    )
    return replace(srdf, elements=elements)
