"""A first `srdf.py` for a robot, written from its URDF: `pipeline template srdf MODEL_ID`.

It holds what the URDF alone tells: the chain from the root link to the link reached through
the most actuated joints, wheels aside (none on a robot of wheels alone; wheels.py tells a wheel
by its joints' layout and its collision geometry's shape), a home pose of that
chain's joints, the pairs of links joined by a joint (their collision geometry touches where
they meet), and the pairs the command found in contact at home (contacts.py). Which pairs can
never touch, named TCPs and other groups need the robot's engineer, and the file says so.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.srdf.jointtree import Tree
from pipeline.srdf.wheels import MeshCorners, wheels
from pipeline.urdf import Joint, Robot


@dataclass(frozen=True)
class Starter:
    """What a first srdf.py holds: the arm's chain, its home pose and the pairs it allows."""

    base: str
    tip: str | None  # None: no chain but wheels, no manipulator group
    home: dict[str, float]
    adjacent: list[tuple[str, str]]
    # the tips of other chains as long as this one, in the URDF's order (a second arm)
    others: list[str] = field(default_factory=list)
    # the wheels and the joints that steer or carry them, left out of the chain
    wheels: list[str] = field(default_factory=list)


def starter(robot: Robot, meshes: MeshCorners | None = None) -> Starter:
    """The chain, home pose and adjacent pairs the URDF tells; `meshes`: the corners of the
    collision meshes of the links that wheels.shape_links names, which tell a wheel's shape
    (a wheel whose mesh is not given is told by the joints' layout alone)."""
    root = robot.root()
    tree = Tree(robot.joints, root)
    left = wheels(tree, robot, meshes or {})
    arm_tree = Tree([j for j in robot.joints if j.name not in left], root)
    tip, chain, others = _arm(arm_tree, root)
    home = {j.name: _home_value(j) for j in chain if _movable(j)}
    left_out = [j.name for j in robot.joints if j.name in left]
    return Starter(root, tip, home, _adjacent_pairs(robot, tree), others, left_out)


def starter_source(
    robot: Robot,
    model_id: str,
    touching: Sequence[tuple[str, str]] = (),
    meshes: MeshCorners | None = None,
    plan: Starter | None = None,
) -> str:
    """The text of a `srdf.py` whose `gen_srdf()` passes the SRDF rules against `robot`;
    `touching`: the pairs whose collision geometry overlaps at the home pose (contacts.py);
    `meshes`: as `starter` takes them; `plan`: the starter already worked out of them."""
    plan = starter(robot, meshes) if plan is None else plan
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
            "# shorter than it (a hand, whose fingers are another group).\n",
            _wheels_note(plan.wheels),
            _no_chain_note(bool(plan.wheels)) if tip is None else _others_note(plan.others),
            f"BASE_LINK = {_text(root)}\n"
            f"TIP_LINK = {'None' if tip is None else _text(tip)}\n\n"
            "# The chain's joints in the home pose, in radians (metres for a prismatic joint):\n"
            "# 0, or the limit nearest 0 where 0 is outside the limits. Mimic joints follow.\n",
            _block("HOME", "{}", [f"{_text(name)}: {value!r}" for name, value in home.items()]),
            "\n"
            "# Links joined by a joint (through links without collision geometry) touch where\n"
            "# they meet; links fixed to each other are one rigid body, whether they touch never\n"
            '# changes. Add the pairs that can never touch (reason "Never") once measured, and a\n'
            "# part fixed to a link (a cover, a sensor) that touches the next link across its\n"
            "# joint: the planner checks every pair not listed here.\n",
            _block("ADJACENT", "[]", [_pair(a, b) for a, b in adjacent]),
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
            _group_block(tip is not None, bool(home)),
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


_GROUP = (
    'group = ET.SubElement(robot, "group", {"name": "manipulator"})\n'
    'ET.SubElement(group, "chain", {"base_link": BASE_LINK, "tip_link": TIP_LINK})\n'
)
_HOME = (
    'home = ET.SubElement(robot, "group_state", {"name": "home", "group": "manipulator"})\n'
    "for joint, value in HOME.items():\n"
    '    ET.SubElement(home, "joint", {"name": joint, "value": repr(value)})\n'
)


def _group_block(chain: bool, home: bool) -> str:
    """gen_srdf()'s lines of the manipulator group and its home state; without a chain, both
    under a test of TIP_LINK, for the engineer to fill in."""
    if chain:
        return textwrap.indent(_GROUP + (_HOME if home else ""), "    ")
    return "    if TIP_LINK is not None:\n" + textwrap.indent(_GROUP + _HOME, " " * 8)


def _wheels_note(left_out: list[str]) -> str:
    """The comment naming the wheels and what steers or carries them, if any."""
    if not left_out:
        return ""
    names = textwrap.wrap(", ".join(left_out), 88, initial_indent="#   ", subsequent_indent="#   ")
    return (
        "# Wheels (a full turn, nothing moving below, at most two moving joints below where the\n"
        "# robot branches, round about the axis where collision geometry shows its shape) and\n"
        "# the joints moving wheels alone are no arm, left out of it:\n"
        + "".join(f"{line}\n" for line in names)
    )


def _no_chain_note(wheels: bool) -> str:
    """The comment of a starter without a manipulator group: what to fill in."""
    but = " but its wheels" if wheels else ""
    return (
        textwrap.fill(
            f"This robot has no chain of actuated joints{but}: no manipulator group is written, "
            "and pipeline srdf says missing_manipulator_group until there is one. Set TIP_LINK "
            "to the link a planner moves (a tool flange) and HOME to its chain's joints.",
            88,
            initial_indent="# ",
            subsequent_indent="# ",
        )
        + "\n"
    )


def _others_note(others: list[str]) -> str:
    """The comment naming the tips of other chains as long as this one (a second arm)."""
    if not others:
        return ""
    names = ", ".join(_text(tip) for tip in others)
    chains = f"The chain to {names} is" if len(others) == 1 else f"The chains to {names} are"
    return (
        textwrap.fill(
            f"{chains} as long: this one is the first in the URDF. Add a group for each other arm"
            " a planner moves, or make it the manipulator.",
            88,
            initial_indent="# ",
            subsequent_indent="# ",
        )
        + "\n"
    )


# A branch of at most this many moving joints is a finger; a longer one an arm or a leg, unless
# there are at least FINGERS of them (a hand of four or five long fingers).
HAND_DEPTH = 3
FINGERS = 4


def _arm(tree: Tree, root: str) -> tuple[str | None, list[Joint], list[str]]:
    """The arm's tip, the joints from the root to it, and the tips of other chains as long:
    the leaf reached through the most actuated joints (then the most joints; the first in the
    URDF on a tie), or where the way to it first forks into two or more moving branches, each
    shorter than the way there, of at most HAND_DEPTH joints or FINGERS or more of them (a
    hand). No tip where no leaf is reached through an actuated joint."""
    score = {root: (0, 0)}
    for link in tree.order[1:]:
        joint = tree.above[link]
        movable, count = score[joint.parent]
        score[link] = (movable + _movable(joint), count + 1)
    leaves = [link for link in tree.order if not tree.below.get(link)]
    best = max(score[leaf] for leaf in leaves)
    if best[0] == 0:
        return None, [], []
    # the most joints that move (a mimic joint too: a finger that follows another is a
    # finger) from each link down to a leaf
    depth: dict[str, int] = {}
    for link in reversed(tree.order):
        depth[link] = max((_branch(j, depth) for j in tree.below.get(link, [])), default=0)
    # where the way to each link first forks into a hand, and its last actuated joint
    fork: dict[str, str | None] = {root: None}  # no hand at the root: no arm before it
    last: dict[str, str | None] = {root: None}
    for link in tree.order[1:]:
        joint = tree.above[link]
        hand = _hand_fork(tree, depth, link, score[link][0])
        fork[link] = fork[joint.parent] or (link if hand else None)
        last[link] = joint.name if _movable(joint) else last[joint.parent]
    # the leaves of the best score, cut, one per last actuated joint (the frames at one arm's
    # end, UR5's ee_link and tool0, are one chain), in the URDF's order
    tips: dict[str | None, str] = {}
    for leaf in leaves:
        if score[leaf] == best:
            tip = fork[leaf] or leaf
            tips.setdefault(last[tip], tip)
    tip, *others = tips.values()
    return tip, tree.path(tip), others


def _hand_fork(tree: Tree, depth: dict[str, int], link: str, before: int) -> bool:
    """Whether the way forks at `link`, `before` actuated joints from the root, into a hand."""
    moving = [d for d in (_branch(j, depth) for j in tree.below.get(link, [])) if d > 0]
    # each branch shorter than the arm before it: a torso's arms are not fingers
    short = bool(moving) and max(moving) < before
    return len(moving) >= 2 and short and (max(moving) <= HAND_DEPTH or len(moving) >= FINGERS)


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


def _adjacent_pairs(robot: Robot, tree: Tree) -> list[tuple[str, str]]:
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


# the repository's ruff line length (pyproject.toml): the starter is committed to robots/
_LINE = 100


def _block(name: str, brackets: str, items: list[str]) -> str:
    """`NAME = [...]` as ruff formats it: one item a line, and `[]` (`{}`) when empty (a robot of
    fixed joints only has no HOME); CI checks robots/*/srdf.py with ruff format."""
    if not items:
        return f"{name} = {brackets}\n"
    return (
        f"{name} = {brackets[0]}\n"
        + "".join(f"    {item},\n" for item in items)
        + f"{brackets[1]}\n"
    )


def _pair(a: str, b: str) -> str:
    """A pair of link names, on one line or, past the line length, as ruff splits it."""
    line = f"({_text(a)}, {_text(b)})"
    if len(line) + len("    ,") <= _LINE:
        return line
    return f"(\n        {_text(a)},\n        {_text(b)},\n    )"


def _default_block(touching: Sequence[tuple[str, str]]) -> str:
    """The DEFAULT list of pairs in contact at home, or nothing when there is none."""
    if not touching:
        return ""
    return "".join(
        [
            "\n# Links whose collision geometry overlaps in the home pose, though no joint joins\n"
            "# them (the links of a linkage, a part reaching over the next link): a planner would\n"
            '# find home in collision. Check each pair: "Default" lets it touch everywhere; when\n'
            "# the two must not touch, change the home pose or their collision geometry instead.\n",
            _block("DEFAULT", "[]", [_pair(a, b) for a, b in touching]),
        ]
    )


def _text(value: str) -> str:
    """A Python string literal of `value`, quoted as `ruff format` quotes it: in double quotes,
    unless `value` holds more double quotes than single ones; printable ASCII as it is, any
    other character as Python escapes it (JSON's escapes are not all Python's: a character past
    U+FFFF is two surrogates in JSON, and one \\U escape in Python)."""
    quote = "'" if value.count('"') > value.count("'") else '"'
    chars = (
        "\\" + c if c in (quote, "\\") else c if " " <= c <= "~" else ascii(c)[1:-1] for c in value
    )
    return quote + "".join(chars) + quote
