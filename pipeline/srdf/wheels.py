"""Which joints are wheels, or move wheels alone, and so are no arm (the SRDF starter's rule).

First by the joints' layout: a wheel turns a full turn about a level axis, has nothing moving
below it, and hangs at most WHEEL_DEPTH moving joints below where the robot branches. A leg
whose knee turns a full turn has that layout too (example-robot-data's ANYmal, Solo, Bolt), so
then by the wheel's shape,
where its collision geometry (the child link's and that of the links fixed below it) is known:
a wheel is round about its joint's axis, a shank reaches away from its knee. The geometry is
passed in (a mesh's corners, as the caller read them); nothing here reads a file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from pipeline.kinematics import rpy_matrix, transform
from pipeline.spheres.frame import Frame
from pipeline.srdf.jointtree import Tree
from pipeline.urdf import Box, Cylinder, Joint, Mesh, Robot, Sphere

Array = np.ndarray
# Each collision mesh's corners (K, 3) per part, URDF scale applied, in the mesh's frame, as
# pipeline.meshsplit.hull_parts reads them
MeshCorners = Mapping[Mesh, Sequence[Array]]

# A wheel turns at least this far (a continuous joint, modelled as revolute from -3.14159 to
# 3.14159), and hangs at most WHEEL_DEPTH moving joints (a steering hinge, a caster's swivel, a
# suspension) below where the robot branches (a robot that never branches has no wheel).
FULL_TURN = 2 * math.pi - 1e-3
WHEEL_DEPTH = 2
# Round about the axis: the geometry's reach from the axis (its convex hull's support) in each
# of DIRECTIONS directions across it, the farthest at most ROUND times the nearest. A cylinder
# or sphere centred on the axis (a cylinder along it) reaches alike everywhere: 1; a mesh
# wheel of N sides 1 / cos(pi / N) (1.155 for 6, 1.082 for 8); a wheel whose centre is off the
# axis by a share s of its radius (1 + s) / (1 - s), 1.2 at s = 0.09. A box across whose
# square section the axis runs is no wheel: its corners reach 1.414 times as far as its
# sides' middles, the shape of a block, a link or a shank; it is part of one only inside other
# geometry that is round (a hub, a spoke within a tyre). Measured (docs/robots.md): real wheels
# 1.000 to 1.002; legs 5.96 (ANYmal C) to 16.2 (Bolt), ANYmal B's shank not round the axis.
DIRECTIONS = 72
BLOCK = 1 << 15  # corners measured at once (each against every direction: 19 MB)
ROUND = 1.2
# A wheel rolls on the floor: with every joint at 0, its axis lies within LEVEL of the root
# link's horizontal plane (URDF's z is up, REP 103). A positioner's table or a turntable turns
# about an upright axis, as a drone's rotor does: none of them is a wheel.
LEVEL = math.radians(30)


def wheels(tree: Tree, robot: Robot, meshes: MeshCorners) -> set[str]:
    """The wheels, and the joints that move wheels alone (a steering hinge, a caster's swivel,
    a differential, a planar base's x, y and yaw): a wheel turns a full turn, has nothing moving
    below it, hangs at most WHEEL_DEPTH moving joints below where the robot branches (an arm's
    last joint, a full turn on some, hangs below the whole arm), and is round about its axis
    where its collision geometry is known (`meshes`: the corners of its collision meshes)."""
    branches, moves = _branches(tree)
    out = {
        joint.name
        for joint in _candidates(tree, branches, moves)
        if _round_body(tree, robot, joint, meshes) is not False
    }
    only: dict[str, bool] = {}  # whether all that moves below the link is wheels and their carriers
    for link in reversed(tree.order):
        for joint in branches[link]:
            if joint.type != "fixed" and joint.name not in out and only[joint.child]:
                out.add(joint.name)
        only[link] = bool(branches[link]) and all(
            joint.name in out or (joint.type == "fixed" and only[joint.child])
            for joint in branches[link]
        )
    return out


def shape_links(tree: Tree) -> list[str]:
    """The links whose collision geometry tells a wheel by its shape: each wheel's by layout,
    with the links fixed below it (the caller reads their meshes for `wheels`)."""
    branches, moves = _branches(tree)
    return [link for j in _candidates(tree, branches, moves) for link in tree.subtree(j.child)]


def _branches(tree: Tree) -> tuple[dict[str, list[Joint]], dict[str, bool]]:
    """Each link's joints below it that move something, and whether anything below it moves."""
    moves: dict[str, bool] = {}
    branches: dict[str, list[Joint]] = {}
    for link in reversed(tree.order):
        below = tree.below.get(link, [])
        branches[link] = [j for j in below if j.type != "fixed" or moves[j.child]]
        moves[link] = bool(branches[link])
    return branches, moves


def _candidates(
    tree: Tree, branches: dict[str, list[Joint]], moves: dict[str, bool]
) -> list[Joint]:
    """The joints laid out as wheels: a full turn, nothing moving below, at most WHEEL_DEPTH
    moving joints below where the robot branches."""
    return [
        joint
        for link in tree.order
        for joint in branches[link]
        if joint.type != "fixed"
        and not moves[joint.child]
        and _full_turn(joint)
        and _unbranched_above(tree, branches, link) <= WHEEL_DEPTH
        and _level(tree, joint)
    ]


def _unbranched_above(tree: Tree, branches: dict[str, list[Joint]], link: str) -> int:
    """The moving joints above `link` up to where the robot branches (more than WHEEL_DEPTH:
    WHEEL_DEPTH + 1; a robot that never branches, a turntable or a positioner, has no wheel)."""
    count = 0
    while count <= WHEEL_DEPTH and len(branches[link]) == 1:
        if link not in tree.above:
            return WHEEL_DEPTH + 1
        joint = tree.above[link]
        count += joint.type != "fixed"
        link = joint.parent
    return count


def _full_turn(joint: Joint) -> bool:
    """A continuous joint, or a revolute one of a full turn's range (-3.14159 to 3.14159 is
    unbounded_joint_type's fix for a wheel)."""
    if joint.type == "continuous":
        return True
    limit = joint.limit
    if joint.type != "revolute" or limit is None or limit.lower is None or limit.upper is None:
        return False
    return limit.upper - limit.lower >= FULL_TURN


def _level(tree: Tree, joint: Joint) -> bool:
    """Whether the joint's axis, every joint at 0, lies within LEVEL of the root's horizontal
    plane, as a wheel's on a floor."""
    rotation = np.eye(3)
    for above in tree.path(joint.child):
        rotation = rotation @ np.array(rpy_matrix(above.origin.rpy))
    axis = rotation @ np.array(joint.axis, dtype=float)
    return abs(float(axis[2])) <= math.sin(LEVEL) * float(np.linalg.norm(axis))


def _round_body(tree: Tree, robot: Robot, joint: Joint, meshes: MeshCorners) -> bool | None:
    """Whether the joint's child link, with the links fixed below it, is round about the joint's
    axis (in the joint's frame, the child's); None when it has no collision geometry, or a mesh
    of it is not in `meshes`."""
    pose = {joint.child: np.eye(4)}
    reach: list[Array] = []
    directions = across(joint.axis)
    for link_name in tree.subtree(joint.child):
        above = tree.above[link_name]
        if link_name != joint.child:
            origin = np.array(transform(above.origin.xyz, above.origin.rpy))
            pose[link_name] = pose[above.parent] @ origin
        link = robot.link(link_name)
        for collision in link.collisions if link is not None else ():
            place = pose[link_name] @ _matrix(Frame.of(collision.origin))
            found = _reach(collision.geometry, place, directions, meshes)
            if found is None:
                return None
            reach.append(found)
    if not reach:
        return None
    return is_round(np.max(reach, axis=0))


def across(axis: tuple[float, float, float]) -> Array:
    """DIRECTIONS unit vectors across `axis`, evenly around it."""
    a = np.array(axis, dtype=float)
    a /= np.linalg.norm(a)
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    first = np.cross(a, helper)
    first /= np.linalg.norm(first)
    second = np.cross(a, first)
    angle = np.linspace(0.0, 2 * np.pi, DIRECTIONS, endpoint=False)
    return np.asarray(np.cos(angle)[:, None] * first + np.sin(angle)[:, None] * second)


def is_round(reach: Array) -> bool:
    """Whether a reach from the axis in each direction across it (`across`) is round: the axis
    inside the shape, and the farthest reach at most ROUND times the nearest."""
    nearest = float(reach.min())
    return nearest > 0 and float(reach.max()) <= ROUND * nearest


def _reach(
    geometry: Mesh | Box | Cylinder | Sphere, place: Array, directions: Array, meshes: MeshCorners
) -> Array | None:
    """How far the geometry, placed by `place` (4 x 4) in the joint's frame, reaches along each
    direction (its convex hull's support): primitives exactly, a mesh by its corners; None for
    a mesh not in `meshes`."""
    rotation, centre = place[:3, :3], place[:3, 3]
    along = directions @ centre
    if isinstance(geometry, Mesh):
        parts = meshes.get(geometry)
        if parts is None:
            return None
        corners = [p for p in parts if len(p)]
        if not corners:
            return None
        # a block of corners at a time: all 3 million of a mesh at the triangle limit, each
        # against every direction, were 1.7 GB
        points = np.concatenate(corners)
        out = np.full(len(directions), -np.inf)
        for start in range(0, len(points), BLOCK):
            block = points[start : start + BLOCK] @ rotation.T + centre
            out = np.maximum(out, (block @ directions.T).max(axis=0))
        return out
    local = directions @ rotation  # each direction in the geometry's frame
    if isinstance(geometry, Sphere):
        return np.asarray(along + geometry.radius)
    if isinstance(geometry, Cylinder):
        cos = np.abs(local[:, 2])
        side = geometry.radius * np.sqrt(np.clip(1 - cos**2, 0.0, 1.0))
        return np.asarray(along + side + geometry.length / 2 * cos)
    half = np.array(geometry.size, dtype=float) / 2
    return np.asarray(along + np.abs(local) @ half)


def _matrix(frame: Frame) -> Array:
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = frame.rotation, frame.translation
    return out
