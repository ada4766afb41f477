"""Links whose collision geometry overlaps at one joint configuration, as a planner collides it.

Tesseract's contact managers (0.5, Bullet) collide each collision mesh as its convex hull (one
per part its reader, assimp, reads apart: an OBJ's objects, groups and materials, an ASCII STL's
solids, a COLLADA file's blocks of triangles: meshsplit.py), so a link inside a mesh's notch
touches it. Each collision element here is that convex solid, as
half-spaces: a mesh's hull, a box; a cylinder and a sphere by tangent planes close enough to
miss no contact (they stand at most 0.12 % and 0.46 % of the radius out). Two elements touch
when a linear programme finds a point inside both.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, QhullError

from pipeline.homepose import home_positions
from pipeline.kinematics import joint_motion, transform
from pipeline.meshsplit import hull_parts
from pipeline.spheres.geometry import Array, Frame, Solid, collision_links
from pipeline.urdf import Box, Cylinder, Joint, Mesh, Robot, Sphere

# The work one check may do, in constraints of its linear programmes (HiGHS takes about 10 us
# each: 2,000,000 are some 20 s): 10,000 group states of an arm whose pairs all touch asked
# for 70,000 programmes of ~500 (8 minutes), two links of a 964,000-triangle mesh for one of
# 1,936,000 at every state (20 s each).
PROGRAMME_BUDGET = 2_000_000
# A programme's own cost, in constraints: HiGHS takes some 3 ms to set up even two boxes' 12
# (300 links overlapping, all boxes, asked for 45,000: without it the budget let through 8 min).
PROGRAMME_COST = 500
CYLINDER_SIDES = 64  # tangent planes around a cylinder: 1 / cos(pi / 64) - 1 = 0.12 %
SPHERE_SUBDIVISIONS = 3  # an icosphere's 642 vertex directions: corners 0.455 % out


@dataclass(frozen=True)
class Convex:
    """One collision element as a convex solid in its link's frame: `normals @ x <= offsets`,
    with its corners' bounds."""

    normals: Array  # (n, 3), unit
    offsets: Array  # (n,)
    bounds: Array  # (2, 3)


class BudgetSpent(Exception):
    """The check needed more work than its `Budget` had left."""


class Budget:
    """The constraints a check's linear programmes may still have, shared by its calls of
    `contacts`."""

    def __init__(self) -> None:
        self.left = PROGRAMME_BUDGET

    def spend(self, rows: int) -> None:
        """Take a programme of `rows` constraints; raise `BudgetSpent` when too few are left."""
        if rows > self.left:
            raise BudgetSpent
        self.left -= rows


@dataclass(frozen=True)
class Contact:
    """Two links whose collision geometry overlaps, with a point inside both (root frame) and
    the radius of the largest ball there inside both (0: they touch)."""

    link1: str
    link2: str
    point: tuple[float, float, float]
    depth: float = 0.0


def link_poses(robot: Robot, positions: Mapping[str, float]) -> dict[str, Array]:
    """Each link's pose (4 x 4) in the root link's frame, with joints at `positions` (0 where
    absent, clamped into their limits; mimic joints follow, as `home_positions` sets them)."""
    values = home_positions(robot, robot.joints, positions)
    below = _joints_below(robot)
    poses = {robot.root(): np.eye(4)}
    stack = [robot.root()]
    while stack:  # not recursive: a chain of thousands of links is a valid URDF
        parent = stack.pop()
        for joint in below.get(parent, []):
            motion = joint_motion(joint.type, joint.axis, values.get(joint.name, 0.0))
            origin = np.array(transform(joint.origin.xyz, joint.origin.rpy))
            poses[joint.child] = poses[parent] @ origin @ np.array(motion)
            stack.append(joint.child)
    return poses


def static_links(robot: Robot) -> frozenset[str]:
    """The links no joint moves (only fixed joints above them): the planner collides no two of
    them with each other (Tesseract's active links are the others)."""
    moved: set[str] = set()
    below = _joints_below(robot)
    stack = [(robot.root(), False)]
    while stack:
        link, moving = stack.pop()
        if moving:
            moved.add(link)
        stack += [(j.child, moving or j.type != "fixed") for j in below.get(link, [])]
    return frozenset(link.name for link in robot.links) - moved


def _joints_below(robot: Robot) -> dict[str, list[Joint]]:
    """Each link's joints to its children, in the URDF's order."""
    below: dict[str, list[Joint]] = {}
    for joint in robot.joints:
        below.setdefault(joint.parent, []).append(joint)
    return below


def link_solids(robot: Robot, robot_folder: Path, display: str) -> dict[str, list[Convex]]:
    """The convex solids of every link that has collision geometry, from the robot's folder
    (`display`: that folder as findings name it); each mesh file read once."""
    solids: dict[str, list[Convex]] = {}
    for link in collision_links(robot):
        found: list[Convex | None] = []
        for collision in link.collisions:
            frame, geometry = Frame.of(collision.origin), collision.geometry
            if isinstance(geometry, Mesh):
                parts = hull_parts(robot_folder, geometry, display)
                found += [_hull(frame.apply(points)) for points in parts]
            else:
                found.append(convex(_primitive(geometry, frame)))
        solids[link.name] = [c for c in found if c is not None]
    return solids


def _primitive(geometry: Box | Cylinder | Sphere, frame: Frame) -> Solid:
    """A box's, cylinder's or sphere's solid (as the spheres step reads it)."""
    none = np.zeros((0, 3, 3))
    if isinstance(geometry, Box):
        return Solid("box", frame, np.array(geometry.size, dtype=float) / 2, none)
    if isinstance(geometry, Cylinder):
        return Solid("cylinder", frame, np.array([geometry.radius, geometry.length / 2]), none)
    return Solid("sphere", frame, np.array([geometry.radius]), none)


def convex(solid: Solid) -> Convex | None:
    """A collision element's convex solid, as the planner collides it (None: it has none)."""
    if solid.kind == "mesh":
        return _hull(solid.triangles.reshape(-1, 3))
    rotation, centre = solid.frame.rotation, solid.frame.translation
    if solid.kind == "box":
        local = np.vstack([np.eye(3), -np.eye(3)])
        offsets = np.concatenate([solid.size, solid.size])
    elif solid.kind == "cylinder":
        radius, half = float(solid.size[0]), float(solid.size[1])
        angle = np.linspace(0.0, 2 * np.pi, CYLINDER_SIDES, endpoint=False)
        around = np.stack([np.cos(angle), np.sin(angle), np.zeros_like(angle)], axis=1)
        local = np.vstack([around, [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]])
        offsets = np.concatenate([np.full(CYLINDER_SIDES, radius), [half, half]])
    else:
        local = np.asarray(trimesh.creation.icosphere(SPHERE_SUBDIVISIONS).vertices, dtype=float)
        local /= np.linalg.norm(local, axis=1, keepdims=True)
        offsets = np.full(len(local), float(solid.size[0]))
    normals = local @ rotation.T
    return Convex(normals, offsets + normals @ centre, solid.bounds())


def _hull(points: Array) -> Convex | None:
    """The convex hull of a mesh's corners; a flat one's joggled into a sliver, and one of
    fewer than four corners (a lone triangle) grown by a micrometre; None for no corner."""
    if not len(points):
        return None  # a mesh of lines and points alone: no solid to collide
    try:
        hull = ConvexHull(points)
    except QhullError:  # every corner in one plane (or on one line): joggled, as thin as qhull can
        try:
            hull = ConvexHull(points, qhull_options="QJ")
        except QhullError:
            grown = points[:, None, :] + 1e-6 * np.array(list(itertools.product((-1, 1), repeat=3)))
            hull = ConvexHull(grown.reshape(-1, 3))
    normals, offsets = hull.equations[:, :3], -hull.equations[:, 3]
    return Convex(normals, offsets, np.stack([points.min(axis=0), points.max(axis=0)]))


def contacts(
    solids: Mapping[str, list[Convex]],
    poses: Mapping[str, Array],
    allowed: Iterable[tuple[str, str]] = (),
    static: frozenset[str] = frozenset(),
    budget: Budget | None = None,
) -> list[Contact]:
    """The pairs of links (in `solids`' order) whose solids overlap or touch at `poses`, except
    the `allowed` pairs (in either order) and pairs of two `static` links; `BudgetSpent` when
    they need more linear programmes than `budget` has left."""
    budget = Budget() if budget is None else budget
    skip = {frozenset(pair) for pair in allowed}
    placed = {
        name: [_placed(c, poses[name]) for c in convexes]
        for name, convexes in solids.items()
        if name in poses
    }
    names = [name for name, convexes in placed.items() if convexes]
    found = []
    for i, j in _meeting_boxes([_union_box(placed[name]) for name in names]):
        a, b = names[i], names[j]
        if frozenset((a, b)) in skip or (a in static and b in static):
            continue
        meeting = _first_meeting(placed[a], placed[b], budget)
        if meeting is not None:
            found.append(Contact(a, b, *meeting))
    return found


def _union_box(convexes: list[Convex]) -> Array:
    return np.stack(
        [
            np.min([c.bounds[0] for c in convexes], axis=0),
            np.max([c.bounds[1] for c in convexes], axis=0),
        ]
    )


def _meeting_boxes(boxes: list[Array], rows: int = 512) -> list[tuple[int, int]]:
    """The pairs (i < j) of boxes that overlap or touch, in order, a block of rows at a time
    (a robot of thousands of links has millions of pairs)."""
    if not boxes:
        return []
    lo = np.array([b[0] for b in boxes])
    hi = np.array([b[1] for b in boxes])
    pairs: list[tuple[int, int]] = []
    for start in range(0, len(boxes), rows):
        end = min(start + rows, len(boxes))
        meet = np.all(
            (lo[start:end, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[start:end, None, :]),
            axis=2,
        )
        i, j = np.nonzero(meet)
        i = i + start
        keep = j > i
        pairs += zip(i[keep].tolist(), j[keep].tolist(), strict=True)
    return pairs


def _placed(solid: Convex, pose: Array) -> Convex:
    """A convex solid moved by `pose` (its bounds: those of its moved bounding box)."""
    rotation, shift = pose[:3, :3], pose[:3, 3]
    normals = solid.normals @ rotation.T
    lo, hi = solid.bounds
    corners = np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    )
    moved = corners @ rotation.T + shift
    # widened for the tangent planes of a cylinder or sphere, which stand out of its bounds
    pad = 0.004 * float(np.linalg.norm(hi - lo))
    bounds = np.stack([moved.min(axis=0) - pad, moved.max(axis=0) + pad])
    return Convex(normals, solid.offsets + normals @ shift, bounds)


def _first_meeting(
    ours: list[Convex], theirs: list[Convex], budget: Budget
) -> tuple[tuple[float, float, float], float] | None:
    for a in ours:
        for b in theirs:
            if np.all(a.bounds[0] <= b.bounds[1]) and np.all(b.bounds[0] <= a.bounds[1]):
                budget.spend(PROGRAMME_COST + len(a.offsets) + len(b.offsets))
                point = _meeting_point(a, b)
                if point is not None:
                    return point
    return None


def _meeting_point(a: Convex, b: Convex) -> tuple[tuple[float, float, float], float] | None:
    """The centre and radius of the largest ball inside both solids, when they overlap or
    touch."""
    normals = np.vstack([a.normals, b.normals])
    offsets = np.concatenate([a.offsets, b.offsets])
    # maximise the ball's radius s: n . x + s <= offset for every (unit) normal n
    rows = np.hstack([normals, np.ones((len(normals), 1))])
    result = linprog(
        [0.0, 0.0, 0.0, -1.0],
        A_ub=rows,
        b_ub=offsets,
        bounds=[(None, None)] * 3 + [(None, 1.0)],
        method="highs",
    )
    # touching (s = 0) is a contact: Tesseract's manager finds one or none there as its
    # rounding falls (the Allegro hand's finger boxes, face to face at each joint), so the
    # starter allows the pair and no state is in collision by a rounding; a hair below 0 is
    # the solver's rounding of a touch
    if result.status != 0 or -result.fun < -1e-9:
        return None
    x, y, z = (float(v) for v in result.x[:3])
    return (x, y, z), max(0.0, float(-result.fun))
