"""Which joints are wheels, or move wheels alone, and so are no arm (the SRDF starter's rule):
a wheel turns a full turn, has nothing moving below it, and hangs at most WHEEL_DEPTH moving
joints below where the robot branches."""

from __future__ import annotations

import math

from pipeline.srdf.jointtree import Tree
from pipeline.urdf import Joint

# A wheel turns at least this far (a continuous joint, modelled as revolute from -3.14159 to
# 3.14159), and hangs at most WHEEL_DEPTH moving joints (a steering hinge, a caster's swivel, a
# suspension) below where the robot branches (a robot that never branches has no wheel).
FULL_TURN = 2 * math.pi - 1e-3
WHEEL_DEPTH = 2


def wheels(tree: Tree) -> set[str]:
    """The wheels, and the joints that move wheels alone (a steering hinge, a caster's swivel,
    a differential, a planar base's x, y and yaw): a wheel turns a full turn, has nothing moving
    below it, and hangs at most WHEEL_DEPTH moving joints below where the robot branches (an
    arm's last joint, a full turn on some, hangs below the whole arm)."""
    branches, moves = _branches(tree)
    out = {joint.name for joint in _candidates(tree, branches, moves)}
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
