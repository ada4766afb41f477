"""Is a link's collision geometry of a size the sphere fitter can work at?

The fitter rounds centres and radii to QUANTUM (1 µm) and grids each link's bounding box, so a
link far smaller than that, or placed so far out that float64 no longer resolves a quantum
there (1e300 m, say), cannot be fitted: such geometry is refused with a finding, before
anything is copied into build/, instead of failing inside the fitter.

A link far larger than the robot's own kinematics is fitted, with a warning: its collision mesh
is most likely in other units than its joints (millimetres: 1000 times too large).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from pipeline.findings import Finding, Severity
from pipeline.spheres.frame import Frame
from pipeline.spheres.geometry import Array
from pipeline.urdf import Box, Collision, Cylinder, Link, Mesh, Robot

# metres: larger than any robot cell; float64 still resolves QUANTUM a millionfold there
LENGTH_LIMIT = 1e6
# metres: ten of the fitter's output quanta (pipeline.spheres.finish.QUANTUM, 1 µm) across; not
# imported from there, so that the urdf step, which applies this, does not depend on the fitter
MIN_EXTENT = 1e-5
# metres: a link's collision geometry spanning more than PROPORTION times the robot's longest
# joint offset is warned of, but not one under SPAN_FLOOR (a linear track or gantry beam may be
# tens of joint offsets long) and always one over SPAN_CAP (no robot link is a kilometre long:
# a URDF in millimetres throughout, its joint offsets 1000 times too)
PROPORTION = 100.0
SPAN_FLOOR = 10.0
SPAN_CAP = 1e3


def _corners(collision: Collision, corners: Mapping[Mesh, Array]) -> Array:
    """Points (N, 3) in the link frame whose bounding box holds the element."""
    frame = Frame.of(collision.origin)
    g = collision.geometry
    if isinstance(g, Mesh):
        return frame.apply(corners[g].reshape(-1, 3))
    if isinstance(g, Box):
        half = np.array(g.size, dtype=float) / 2
    elif isinstance(g, Cylinder):
        half = np.array([g.radius, g.radius, g.length / 2])
    else:
        half = np.full(3, g.radius)
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    return frame.apply(signs * half)


def extent_findings(robot: Robot, corners: Mapping[Mesh, Array]) -> list[Finding]:
    """One finding per collision link too large, too far out or too small to fit spheres to
    (an error) or out of proportion with the robot's joints (a warning); `corners`: each mesh's
    triangle corners and line ends, as MeshParts.points gives them.

    A link whose collision geometry is not all known (an element refused when read, a mesh
    missing from `corners`: refused) is not judged: its extent would be another geometry's."""
    out = []
    bound = span_bound(robot)
    for link in robot.links:
        if not link.collisions or link.collisions_refused:
            continue
        if any(isinstance(c.geometry, Mesh) and c.geometry not in corners for c in link.collisions):
            continue
        with np.errstate(all="ignore"):
            points = np.concatenate([_corners(c, corners) for c in link.collisions])
            reach = float(np.abs(points).max())
            span = float((points.max(axis=0) - points.min(axis=0)).max())
        finding = _finding(link, reach, span)
        if finding is not None:
            out.append(Finding("geometry_out_of_range", robot.file, str(link.line), *finding))
        elif span > bound:
            out.append(_out_of_proportion(robot, link, span, bound))
    return out


def span_bound(robot: Robot) -> float:
    """The span (m) above which a link's collision geometry is out of proportion with the robot."""
    return min(SPAN_CAP, max(SPAN_FLOOR, PROPORTION * _longest_offset(robot)))


def _longest_offset(robot: Robot) -> float:
    """The robot's longest joint offset (m), 0 when it has none."""
    # hypot, not a dot product: an origin of 1e308 (origin_out_of_range) must not overflow
    offsets = (math.hypot(*j.origin.xyz) for j in robot.joints)
    return max((o for o in offsets if math.isfinite(o)), default=0.0)


def _out_of_proportion(robot: Robot, link: Link, span: float, bound: float) -> Finding:
    longest = _longest_offset(robot)
    if bound == SPAN_FLOOR:
        why = (
            f"the least bound: {PROPORTION:g} times the robot's longest joint offset, "
            f"{longest:.3g} m, is less"
        )
    elif bound == SPAN_CAP:
        why = "the largest bound, whatever the joints"
    else:
        why = f"{PROPORTION:g} times the robot's longest joint offset, {longest:.3g} m"
    return Finding(
        "geometry_out_of_proportion",
        robot.file,
        str(link.line),
        f"link {link.name!r}: its collision geometry spans {span:.3g} m, beyond {bound:.3g} m "
        f"({why}): it is likely in other units than the joints",
        "give mesh scale, sizes and origins in metres (a mesh in millimetres needs "
        'scale="0.001 0.001 0.001"); a link that long as meant needs no change',
        Severity.WARNING,
    )


def _apart(value: float, bound: float) -> str:
    """`value` to 3 significant digits, or as many more as tell it from `bound` (a float32
    1e-5, 9.99999975e-06, was said to span '1e-05 m, under 1e-05 m')."""
    for digits in range(3, 18):
        if f"{value:.{digits}g}" != f"{bound:.{digits}g}":
            return f"{value:.{digits}g}"
    return f"{value!r}"


def _finding(link: Link, reach: float, span: float) -> tuple[str, str] | None:
    if not np.isfinite(reach) or reach > LENGTH_LIMIT:
        return (
            f"link {link.name!r}: its collision geometry reaches {_apart(reach, LENGTH_LIMIT)} m "
            f"from the link frame, beyond {LENGTH_LIMIT:.0e} m",
            "give origins, sizes and mesh scale in metres (a mesh in millimetres needs "
            'scale="0.001 0.001 0.001")',
        )
    if span < MIN_EXTENT:
        return (
            f"link {link.name!r}: its collision geometry spans {_apart(span, MIN_EXTENT)} m, under "
            f"{MIN_EXTENT:.0e} m (spheres are rounded to micrometres)",
            "give sizes and mesh scale in metres, or remove the collision element",
        )
    return None
