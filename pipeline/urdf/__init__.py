"""The URDF: its model, its reader and its rules."""

from pipeline.urdf.model import (
    BOUNDED_TYPES,
    Box,
    Collision,
    Cylinder,
    Geometry,
    Inertial,
    Joint,
    Limit,
    Link,
    Mesh,
    Mimic,
    Origin,
    Robot,
    Sphere,
    Vec3,
    Visual,
)
from pipeline.urdf.read import parse_urdf
from pipeline.urdf.rules import check_meshes, check_rules, display_path, load_robot

__all__ = [
    "BOUNDED_TYPES",
    "Box",
    "Collision",
    "Cylinder",
    "Geometry",
    "Inertial",
    "Joint",
    "Limit",
    "Link",
    "Mesh",
    "Mimic",
    "Origin",
    "Robot",
    "Sphere",
    "Vec3",
    "Visual",
    "check_meshes",
    "check_rules",
    "display_path",
    "load_robot",
    "parse_urdf",
]
