"""A units mistake the URDF shows by itself: a link's collision mesh scaled unlike its visual.

A mesh exported in millimetres needs `scale="0.001 0.001 0.001"`; a URDF that gives it to the
`<visual>` but not to the `<collision>` naming the same file draws the right robot and plans
with one 1000 times too large. Scaling a collision mesh up a little to pad it is meant, so only
scales apart by SCALE_RATIO or more on some axis are reported, as warnings: the build goes on.
A scale not > 0 on some axis is refused (`unscalable` says how to mend it).
"""

from __future__ import annotations

import math

from pipeline.findings import Finding, Severity
from pipeline.urdf.model import Mesh, Robot, Vec3

# Other units than metres are 3.28 (feet) to 1000 (millimetres) times off; padding by scaling
# is a few tens of percent at most.
SCALE_RATIO = 2.0


def scale_findings(robot: Robot) -> list[Finding]:
    """A warning per `<collision>` mesh whose link's `<visual>` names its file at another scale."""
    out = []
    for link in robot.links:
        visual: dict[str, list[Vec3]] = {}
        for element in link.visuals:
            if isinstance(element.geometry, Mesh):
                visual.setdefault(element.geometry.path, []).append(element.geometry.scale)
        for collision in link.collisions:
            mesh = collision.geometry
            if not isinstance(mesh, Mesh) or mesh.path not in visual:
                continue
            if not _usable(mesh.scale) or not all(_usable(scale) for scale in visual[mesh.path]):
                continue  # a zero, negative or non-finite scale is refused on its own
            ratios = [_ratio(mesh.scale, scale) for scale in visual[mesh.path]]
            if min(abs(r) for r in ratios) < SCALE_RATIO:
                continue
            ratio, scale = ratios[0], visual[mesh.path][0]
            size = f"{ratio:.4g} times" if ratio > 0 else f"1/{-ratio:.4g} of"
            out.append(
                Finding(
                    "collision_scale_mismatch",
                    robot.file,
                    str(mesh.line),
                    f"link {link.name!r}: its <collision> names {mesh.path!r} at scale "
                    f'"{_shown(mesh.scale)}", its <visual> at scale "{_shown(scale)}": the '
                    f"collision is {size} the size of the visual",
                    # which of the two is wrong the URDF does not say: the one a viewer draws
                    # at the wrong size, or the one off from the mesh's units
                    f"give both the scale of the mesh's units: the <visual>'s \"{_shown(scale)}\" "
                    "if the visual is drawn at its true size, else the <collision>'s "
                    f'"{_shown(mesh.scale)}" (a mesh in millimetres needs scale="0.001 0.001 '
                    '0.001", one in metres none)',
                    Severity.WARNING,
                )
            )
    return out


def _usable(scale: Vec3) -> bool:
    return all(math.isfinite(s) and s > 0 for s in scale)


def _ratio(collision: Vec3, visual: Vec3) -> float:
    """The axis's collision/visual ratio furthest from 1: above 1 as is, below 1 negated inverse."""
    ratios = [c / v for c, v in zip(collision, visual, strict=True)]
    far = max(ratios, key=lambda r: max(r, 1 / r))
    return far if far >= 1 else -1 / far


def _shown(scale: Vec3) -> str:
    return " ".join(f"{s:.6g}" for s in scale)


def unscalable(written: str, scale: tuple[float, ...]) -> tuple[str, str]:
    """The message and fix of a `<mesh scale="{written}">` not > 0 on some axis. A negative one
    mirrors (orca-arm's orcabot, talos and centauro draw an arm's mirrored twin so), which
    Tesseract refuses: the fix names the axes to mirror the file across and the scale to give."""
    if 0 in scale:
        return (
            f'<mesh scale="{written}"> has a component that is not > 0',
            "give every axis a scale > 0 (1 keeps the mesh as it is; mirror the mesh file "
            "itself rather than scaling by a negative number)",
        )
    names = [axis for axis, s in zip("xyz", scale, strict=True) if s < 0]
    axes = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    kept = " ".join(part.removeprefix("-") for part in written.split(" ") if part)
    if len(names) == 2:  # no mirror: a half turn about the third axis
        (about,) = set("xyz") - set(names)
        return (
            f'<mesh scale="{written}"> turns the mesh half a turn about its {about} axis (two '
            "negative scales)",
            f"turn the mesh file itself (negate each vertex's {axes}; the triangles' corners keep "
            f"their order), or turn its <origin rpy> half a turn about {about}, and give it "
            f'scale="{kept}": Tesseract refuses a negative scale, on a visual too',
        )
    return (
        f'<mesh scale="{written}"> mirrors the mesh in its {axes} '
        f"{'axis' if len(names) == 1 else 'axes'} (a negative scale)",
        f"mirror the mesh file itself (negate each vertex's {axes} and reverse the order of each "
        "triangle's corners, which keeps its outside out), and give it "
        f'scale="{kept}": Tesseract refuses a negative scale, on a visual too',
    )
