"""A first `srdf.py` for a robot, written from its URDF: `pipeline template srdf MODEL_ID`.

It holds what the URDF alone tells: the chain from the root link to the link reached through
the most joints, a home pose of that chain's joints, the pairs of links joined by a joint
(their collision geometry touches where they meet), and the pairs the command found in contact
at home (contacts.py). Which pairs can never touch, named TCPs and
other groups need the robot's engineer, and the file says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.urdf import Joint, Robot


@dataclass(frozen=True)
class Starter:
    """What a first srdf.py holds: the arm's chain, its home pose and the pairs it allows."""

    base: str
    tip: str
    home: dict[str, float]
    adjacent: list[tuple[str, str]]


def starter(robot: Robot) -> Starter:
    """The chain, home pose and adjacent pairs the URDF alone tells."""
    root = robot.root()
    tree = _Tree(robot, root)
    tip, chain = _arm(tree, root)
    home = {j.name: _home_value(j) for j in chain if _movable(j)}
    return Starter(root, tip, home, _adjacent_pairs(robot, tree))


def starter_source(robot: Robot, model_id: str, touching: Sequence[tuple[str, str]] = ()) -> str:
    """The text of a `srdf.py` whose `gen_srdf()` passes the SRDF rules against `robot`;
    `touching`: the pairs whose collision geometry overlaps at the home pose (contacts.py)."""
    plan = starter(robot)
    root, tip, home, adjacent = plan.base, plan.tip, plan.home, plan.adjacent
    virtual = root != "world"  # a URDF rooted at a link named world needs no joint to it
    return "".join(
        [
            f'"""Semantic description of {model_id}: a first version, written from its URDF by\n'
            f"`pipeline template srdf {model_id}`.\n\n"
            "Check each part against the robot before a planner uses it: the chain's tip (the\n"
            "flange, a hand or a TCP frame), the home pose, and the allowed collisions.\n"
            '"""\n\n'
            "import xml.etree.ElementTree as ET\n\n"
            f"ROBOT = {_text(robot.name)}\n\n"
            "# The manipulator group: the chain from the root link to the link reached through\n"
            "# the most movable joints, or to where the way there forks into moving branches\n"
            "# shorter than it (a hand, whose fingers are another group).\n"
            f"BASE_LINK = {_text(root)}\n"
            f"TIP_LINK = {_text(tip)}\n\n"
            "# The chain's joints in the home pose, in radians (metres for a prismatic joint):\n"
            "# 0, or the limit nearest 0 where 0 is outside the limits. Mimic joints follow.\n"
            "HOME = {\n",
            "".join(f"    {_text(name)}: {value!r},\n" for name, value in home.items()),
            "}\n\n"
            "# Links joined by a joint (through links without collision geometry) touch where\n"
            "# they meet; links fixed to each other are one rigid body, whether they touch never\n"
            '# changes. Add the pairs that can never touch (reason "Never") once measured, and a\n'
            "# part fixed to a link (a cover, a sensor) that touches the next link across its\n"
            "# joint: the planner checks every pair not listed here.\n"
            "ADJACENT = [\n",
            "".join(f"    ({_text(a)}, {_text(b)}),\n" for a, b in adjacent),
            "]\n",
            _default_block(touching),
            '\n\ndef gen_srdf():\n    robot = ET.Element("robot", {"name": ROBOT})\n',
            (
                "    fixed_base = {\n"
                '        "name": "fixed_base",\n'
                '        "type": "fixed",\n'
                '        "parent_frame": "world",\n'
                '        "child_link": BASE_LINK,\n'
                "    }\n"
                '    ET.SubElement(robot, "virtual_joint", fixed_base)\n'
                if virtual
                else ""
            ),
            '    group = ET.SubElement(robot, "group", {"name": "manipulator"})\n'
            '    ET.SubElement(group, "chain", {"base_link": BASE_LINK, "tip_link": TIP_LINK})\n',
            (
                '    home = ET.SubElement(robot, "group_state", {"name": "home", '
                '"group": "manipulator"})\n'
                "    for joint, value in HOME.items():\n"
                '        ET.SubElement(home, "joint", {"name": joint, "value": repr(value)})\n'
                if home
                else ""
            ),
            "    for link1, link2 in ADJACENT:\n"
            '        pair = {"link1": link1, "link2": link2, "reason": "Adjacent"}\n'
            '        ET.SubElement(robot, "disable_collisions", pair)\n',
            (
                "    for link1, link2 in DEFAULT:\n"
                '        pair = {"link1": link1, "link2": link2, "reason": "Default"}\n'
                '        ET.SubElement(robot, "disable_collisions", pair)\n'
                if touching
                else ""
            ),
            '    return {"xml": robot, "urdf": "robot.urdf"}\n',
        ]
    )


# A branch of at most this many moving joints is a finger; a longer one an arm or a leg, unless
# there are at least FINGERS of them (a hand of four or five long fingers).
HAND_DEPTH = 3
FINGERS = 4


class _Tree:
    """The URDF's joints as a tree: each link's joints below it, the joint above it, and the
    links in depth-first order from the root (children in the URDF's order)."""

    def __init__(self, robot: Robot, root: str) -> None:
        self.below: dict[str, list[Joint]] = {}
        self.above: dict[str, Joint] = {}
        for joint in robot.joints:
            self.below.setdefault(joint.parent, []).append(joint)
            self.above[joint.child] = joint
        self.order: list[str] = []
        stack = [root]
        while stack:  # not recursive: a chain of thousands of links is a valid URDF
            link = stack.pop()
            self.order.append(link)
            stack.extend(j.child for j in reversed(self.below.get(link, [])))

    def path(self, link: str) -> list[Joint]:
        """The joints from the root down to `link`."""
        out = []
        while link in self.above:
            out.append(self.above[link])
            link = self.above[link].parent
        return out[::-1]


def _arm(tree: _Tree, root: str) -> tuple[str, list[Joint]]:
    """The arm's tip and the joints from the root to it: the leaf reached through the most
    movable joints (then the most joints; the first in the URDF on a tie), or where the way to
    it first forks into two or more moving branches, each shorter than the way there, of at
    most HAND_DEPTH joints or FINGERS or more of them (a hand)."""
    score = {root: (0, 0)}
    for link in tree.order[1:]:
        joint = tree.above[link]
        movable, count = score[joint.parent]
        score[link] = (movable + _movable(joint), count + 1)
    leaf = max((link for link in tree.order if not tree.below.get(link)), key=score.__getitem__)
    # the most joints that move (a mimic joint too: a finger that follows another is a
    # finger) from each link down to a leaf
    depth: dict[str, int] = {}
    for link in reversed(tree.order):
        depth[link] = max((_branch(j, depth) for j in tree.below.get(link, [])), default=0)
    path = tree.path(leaf)
    for at, joint in enumerate(path):
        moving = [d for d in (_branch(j, depth) for j in tree.below[joint.parent]) if d > 0]
        before = sum(_movable(j) for j in path[:at])
        # each branch shorter than the arm before it: a torso's arms are not fingers
        short = bool(moving) and max(moving) < before
        if len(moving) >= 2 and short and (max(moving) <= HAND_DEPTH or len(moving) >= FINGERS):
            return joint.parent, path[:at]
    return leaf, path


def _branch(joint: Joint, depth: dict[str, int]) -> int:
    return (joint.type != "fixed") + depth[joint.child]


def _movable(joint: Joint) -> bool:
    return joint.type != "fixed" and joint.mimic is None


def _home_value(joint: Joint) -> float:
    """0, or the limit nearest it where the limits exclude 0."""
    lower = joint.limit.lower if joint.limit is not None else None
    upper = joint.limit.upper if joint.limit is not None else None
    value = 0.0
    if lower is not None and math.isfinite(lower):
        value = max(value, lower)
    if upper is not None and math.isfinite(upper):
        value = min(value, upper)
    return value


def _adjacent_pairs(robot: Robot, tree: _Tree) -> list[tuple[str, str]]:
    """Each link with collision geometry and the nearest link above it that has some; then the
    other pairs of links fixed to each other (one rigid body: whether they touch never changes)."""
    collided = {link.name for link in robot.links if link.collisions}
    nearest: dict[str, str | None] = {}  # the nearest link above with collision geometry
    for link in tree.order:
        joint = tree.above.get(link)
        parent = None if joint is None else joint.parent
        nearest[link] = parent if parent is None or parent in collided else nearest[parent]
    pairs = [
        (up, link.name)
        for link in robot.links
        if link.name in collided and (up := nearest.get(link.name)) is not None
    ]
    body: dict[str, str] = {}  # each link's rigid body: the topmost link fixed to it
    for link in tree.order:
        joint = tree.above.get(link)
        body[link] = body[joint.parent] if joint is not None and joint.type == "fixed" else link
    members: dict[str, list[str]] = {}
    for link in tree.order:
        if link in collided:
            members.setdefault(body[link], []).append(link)
    listed = set(pairs) | {(b, a) for a, b in pairs}
    for group in members.values():
        pairs += [
            (a, b) for i, a in enumerate(group) for b in group[i + 1 :] if (a, b) not in listed
        ]
    return pairs


def _default_block(touching: Sequence[tuple[str, str]]) -> str:
    """The DEFAULT list of pairs in contact at home, or nothing when there is none."""
    if not touching:
        return ""
    return "".join(
        [
            "\n# Links whose collision geometry overlaps in the home pose, though no joint joins\n"
            "# them (the links of a linkage, a part reaching over the next link): a planner would\n"
            '# find home in collision. Check each pair: "Default" lets it touch everywhere; when\n'
            "# the two must not touch, change the home pose or their collision geometry instead.\n"
            "DEFAULT = [\n",
            "".join(f"    ({_text(a)}, {_text(b)}),\n" for a, b in touching),
            "]\n",
        ]
    )


def _text(value: str) -> str:
    """A Python string literal of `value` (JSON's escapes are Python's)."""
    return json.dumps(value)
