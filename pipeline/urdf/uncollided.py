"""A link drawn but never collided with: `<visual>` geometry and no `<collision>`.

Such a link gets no collision spheres and the planner never checks it (pybullet_data's
minitaur has one); a link that truly cannot collide is meant, so this is a warning.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pipeline.findings import Finding, Severity
from pipeline.urdf.model import Link, Mesh, Robot
from pipeline.urdf.rules import COLLISION_MESH_SUFFIXES


def uncollided_findings(robot: Robot) -> list[Finding]:
    """A warning per link with a `<visual>` and no `<collision>`, at its `<link>` line."""
    return [
        Finding(
            "visual_without_collision",
            robot.file,
            str(link.line),
            f"link {link.name!r} has {_visuals(link)} and no <collision>: it gets no collision "
            "spheres and the planner never checks it for collisions",
            f"add a <collision> to the link ({_example(link)}), or remove its <visual> if "
            "the link truly cannot collide",
            Severity.WARNING,
        )
        for link in robot.links
        # a refused <collision> is an error of its own: the link is not judged without it; a
        # refused <visual> is drawn once mended, so the link is judged with it, in the same run
        if (link.visuals or link.visuals_refused)
        and not link.collisions
        and not link.collisions_refused
    ]


def _visuals(link: Link) -> str:
    count = len(link.visuals) + link.visuals_refused
    return "a <visual>" if count == 1 else f"{count} <visual> elements"


def _example(link: Link) -> str:
    meshes = [v.geometry for v in link.visuals if isinstance(v.geometry, Mesh)]
    usable = [m for m in meshes if PurePosixPath(m.path).suffix.lower() in COLLISION_MESH_SUFFIXES]
    if usable:
        return f"e.g. the visual's mesh {usable[0].filename!r}"
    if meshes:  # a .glb is drawn, never collided with (mesh_format_unsupported)
        return (
            f"e.g. the visual's mesh {meshes[0].filename!r} exported as binary STL, or a box "
            "or cylinder around it"
        )
    return "e.g. the visual's geometry"
