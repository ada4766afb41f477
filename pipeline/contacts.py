"""Links whose collision geometry overlaps at one joint configuration, as a planner collides it.

Tesseract's contact managers (0.5, Bullet) collide each collision mesh as its convex hull (one
per part its reader, assimp, reads apart: an OBJ's objects, groups and materials, an ASCII STL's
solids, a COLLADA file's blocks of faces, the lines and points beside faces: meshsplit.py), so a
link inside a mesh's notch touches it. Each collision element here is that convex solid, as
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
from pipeline.spheres.frame import Frame
from pipeline.spheres.geometry import Array, Solid, collision_links
from pipeline.spheres.rows import sorted_rows
from pipeline.urdf import Box, Cylinder, Joint, Mesh, Origin, Robot, Sphere

# The work one check may do, in constraints of its linear programmes (HiGHS takes about 10 us
# each: 2,000,000 are some 20 s): 10,000 group states of an arm whose pairs all touch asked
# for 70,000 programmes of ~500 (8 minutes). A programme holds only the faces that cut the box
# where the two solids' bounds meet, a thousand at a time (a 987,712-face hull beside a box:
# one of 1,006 constraints, not 991,762, at 0.3 s a state, not 11 s), and the faces sifted for
# it count too (SIFT_SHARE).
PROGRAMME_BUDGET = 2_000_000
# A programme's own cost, in constraints: HiGHS takes some 3 ms to set up even two boxes' 12
# (300 links overlapping, all boxes, asked for 45,000: without it the budget let through 8 min).
PROGRAMME_COST = 500
CYLINDER_SIDES = 64  # tangent planes around a cylinder: 1 / cos(pi / 64) - 1 = 0.12 %
SPHERE_SUBDIVISIONS = 3  # an icosphere's 642 vertex directions: corners 0.455 % out
# A face kept in a programme though the box where two solids' bounds meet lies a hair inside
# it (m): keeping one more face changes no programme's answer
SLACK = 1e-9
# Faces sifted for a programme (tested against the box where two solids' bounds meet, those
# cutting it moved to the pose) per constraint of the budget: 991,756 took some 0.2 s
SIFT_SHARE = 50
# Half-spaces a programme starts from, and adds at most each time it is solved again
ROUND_ROWS = 1000


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
    them with each other (Tesseract's active links are the others). None when no joint moves
    at all: Tesseract's contact manager, given no active link, collides every pair (airo-models'
    KELO wheel brick, every joint fixed: 5 pairs, measured by tests/test_tesseract_env.py)."""
    moved: set[str] = set()
    below = _joints_below(robot)
    stack = [(robot.root(), False)]
    while stack:
        link, moving = stack.pop()
        if moving:
            moved.add(link)
        stack += [(j.child, moving or j.type != "fixed") for j in below.get(link, [])]
    if not moved:
        return frozenset()
    return frozenset(link.name for link in robot.links) - moved


def _joints_below(robot: Robot) -> dict[str, list[Joint]]:
    """Each link's joints to its children, in the URDF's order."""
    below: dict[str, list[Joint]] = {}
    for joint in robot.joints:
        below.setdefault(joint.parent, []).append(joint)
    return below


def link_solids(
    robot: Robot,
    robot_folder: Path,
    display: str,
    read: Mapping[Mesh, list[Array]] | None = None,
) -> dict[str, list[Convex]]:
    """The convex solids of every link that has collision geometry, from the robot's folder
    (`display`: that folder as findings name it); each mesh file read once (`read`: the parts
    `hull_parts` gave of the meshes a caller read already), and hulled once per placement."""
    solids: dict[str, list[Convex]] = {}
    parts_of: dict[Mesh, list[Array]] = dict(read or {})
    hulls: dict[tuple[Mesh, Origin], list[Convex | None]] = {}
    for link in collision_links(robot):
        found: list[Convex | None] = []
        for collision in link.collisions:
            frame, geometry = Frame.of(collision.origin), collision.geometry
            if isinstance(geometry, Mesh):
                if geometry not in parts_of:
                    parts_of[geometry] = hull_parts(robot_folder, geometry, display)
                key = (geometry, collision.origin)
                if key not in hulls:  # the same mesh at the same place on several links
                    # each corner once (a mesh's, each repeated by every triangle that has
                    # it): qhull took 15.8 s over a 987,712-triangle sphere's 2,963,136
                    # corners, 7 s over its 495,880
                    hulls[key] = [
                        _hull(frame.apply(sorted_rows(points))) for points in parts_of[geometry]
                    ]
                found += hulls[key]
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


def convex(solid: Solid) -> Convex:
    """A box's, cylinder's or sphere's convex solid, as the planner collides it (a mesh's are
    its parts' hulls: link_solids)."""
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
    normals, offsets = np.ascontiguousarray(hull.equations[:, :3]), -hull.equations[:, 3]
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
        name: [_Placed(c, poses[name]) for c in convexes]
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


def _union_box(convexes: list[_Placed]) -> Array:
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


class _Placed:
    """A convex solid at a pose, with its bounds there (those of its moved bounding box)."""

    def __init__(self, solid: Convex, pose: Array) -> None:
        self.solid, self.rotation, self.shift = solid, pose[:3, :3], pose[:3, 3]
        moved = _corners(solid.bounds) @ self.rotation.T + self.shift
        # widened for the tangent planes of a cylinder or sphere, which stand out of its bounds
        pad = 0.004 * float(np.linalg.norm(solid.bounds[1] - solid.bounds[0]))
        self.bounds = np.stack([moved.min(axis=0) - pad, moved.max(axis=0) + pad])

    def facing(self, lo: Array, hi: Array) -> tuple[Array, Array]:
        """The half-spaces `normals @ x <= offsets` at the pose that may cut the box `lo`..`hi`:
        all but those holding all of the box, told in the solid's own frame (by the bounds
        there of the box's corners, a box holding it) before only the rest are moved."""
        local = (_corners(np.stack([lo, hi])) - self.shift) @ self.rotation
        low, high = local.min(axis=0), local.max(axis=0)
        normals, offsets = self.solid.normals, self.solid.offsets
        reach = normals @ ((low + high) / 2) + np.abs(normals) @ ((high - low) / 2)
        cuts = np.flatnonzero(reach > offsets - SLACK)
        moved = normals[cuts] @ self.rotation.T
        return moved, offsets[cuts] + moved @ self.shift


def _corners(bounds: Array) -> Array:
    """The eight corners (8, 3) of a box's bounds (2, 3)."""
    (x0, y0, z0), (x1, y1, z1) = bounds
    return np.array([[x, y, z] for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)])


def _first_meeting(
    ours: list[_Placed], theirs: list[_Placed], budget: Budget
) -> tuple[tuple[float, float, float], float] | None:
    for a in ours:
        for b in theirs:
            lo, hi = np.maximum(a.bounds[0], b.bounds[0]), np.minimum(a.bounds[1], b.bounds[1])
            if np.any(lo > hi):
                continue
            # Both solids lie in their bounds, so every ball inside both lies in the box where
            # their bounds meet: with that box's six faces, a face of theirs that holds all of
            # the box bounds no such ball more, and is left out
            budget.spend((len(a.solid.offsets) + len(b.solid.offsets)) // SIFT_SHARE)
            (na, oa), (nb, ob) = a.facing(lo, hi), b.facing(lo, hi)
            normals = np.vstack([np.eye(3), -np.eye(3), na, nb])
            point = _meeting_point(normals, np.concatenate([hi, -lo, oa, ob]), budget)
            if point is not None:
                return point
    return None


def _meeting_point(
    normals: Array, offsets: Array, budget: Budget
) -> tuple[tuple[float, float, float], float] | None:
    """The centre and radius of the largest ball inside every half-space `normals @ x <=
    offsets` (unit normals; the first six a box's), when it is a point or more."""
    # maximise the ball's radius s: n . x + s <= offset for every (unit) normal n
    rows = np.hstack([normals, np.ones((len(normals), 1))])
    # Solved over some of the half-spaces (the box's and those the box's centre lies farthest
    # out of), then again with the ones the ball found leaves most, until it leaves none: then
    # it is the ball of all. A radius below 0 already says apart: more half-spaces only shrink
    # it. (A 987,712-face hull beside a box, 505,000 faces cutting the box: one programme of
    # all of them took 5 s.)
    chosen = np.zeros(len(offsets), dtype=bool)
    chosen[:6] = True
    out = normals @ ((offsets[:3] - offsets[3:6]) / 2) - offsets
    chosen[_largest(out, ROUND_ROWS)] = True
    while True:
        budget.spend(PROGRAMME_COST + int(chosen.sum()))
        result = linprog(
            [0.0, 0.0, 0.0, -1.0],
            A_ub=rows[chosen],
            b_ub=offsets[chosen],
            bounds=[(None, None)] * 3 + [(None, 1.0)],
            method="highs",
        )
        # touching (s = 0) is a contact: Tesseract's manager finds one or none there as its
        # rounding falls (the Allegro hand's finger boxes, face to face at each joint), so the
        # starter allows the pair and no state is in collision by a rounding; a hair below 0
        # is the solver's rounding of a touch
        if result.status != 0 or -result.fun < -1e-9:
            return None
        excess = np.where(chosen, -np.inf, rows @ result.x - offsets)
        worst = _largest(excess, ROUND_ROWS)
        left = worst[excess[worst] > 0]
        if not len(left):
            break
        chosen[left] = True
    x, y, z = (float(v) for v in result.x[:3])
    return (x, y, z), max(0.0, float(-result.fun))


def _largest(values: Array, count: int) -> Array:
    """The indices of the `count` largest values (all when there are no more), in no order."""
    if len(values) <= count:
        return np.arange(len(values))
    return np.argpartition(values, len(values) - count)[len(values) - count :]
