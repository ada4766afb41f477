"""The rules of one joint: its type, axis, origin and limits, and what its <mimic> follows."""

from __future__ import annotations

import math
from collections.abc import Callable

from pipeline.findings import Closest
from pipeline.urdf.model import BOUNDED_TYPES, JOINT_TYPES, UNBOUNDED_TYPES, Joint, Limit, Robot

# a finding's code, line, message and hint
Add = Callable[[str, int, str, str], None]

# metres: larger than any robot cell (the collision geometry's bound too); forward kinematics
# adds one origin per joint, so a chain of such origins stays far from float64's overflow.
# A prismatic joint's travel (m) and speed (m/s) are held to it too.
LENGTH_LIMIT = 1e6
# What no revolute joint reaches: 1e3 rad is 159 turns, 1e4 rad/s 95,000 rpm. With the effort's
# (N or N m, beyond the largest press), a <limit> past these is a unit or exponent mistake.
ANGLE_LIMIT = 1e3
ANGULAR_SPEED_LIMIT = 1e4
EFFORT_LIMIT = 1e7
# per joint type: each <limit> attribute's unit and largest magnitude
_LIMIT_CAPS = {
    "prismatic": {
        "lower": ("m", LENGTH_LIMIT),
        "upper": ("m", LENGTH_LIMIT),
        "velocity": ("m/s", LENGTH_LIMIT),
        "effort": ("N", EFFORT_LIMIT),
    },
    "revolute": {
        "lower": ("rad", ANGLE_LIMIT),
        "upper": ("rad", ANGLE_LIMIT),
        "velocity": ("rad/s", ANGULAR_SPEED_LIMIT),
        "effort": ("N m", EFFORT_LIMIT),
    },
}


# a continuous joint is one revolute coordinate; a planar (x, y, yaw) or floating (6) joint is
# several, each a joint of its own between links that carry no geometry
_UNBOUNDED_FIXES = {
    "continuous": "model it as revolute with <limit lower upper> (the range the controller "
    'allows; a wheel, which turns without end, takes every pose within lower="-3.14159" '
    'upper="3.14159")',
    # made fixed, not left out: left out, its parent link (a base_footprint) is a second root;
    # an SRDF's virtual_joint gives the motion back in MoveIt, in Tesseract not (it ignores one,
    # measured: tests/test_tesseract_joints.py), where a base it moves is the chain
    "planar": "model it as a chain of three joints through two links without geometry: "
    "prismatic x, prismatic y and revolute about z, each with <limit lower upper effort "
    'velocity>; or, for a mobile base the planner need not move, make it type="fixed" (an SRDF '
    "planar virtual_joint to the root link moves it in MoveIt, not in Tesseract, which ignores "
    "virtual joints)",
    "floating": "model it as a chain of six joints (three prismatic, three revolute) through "
    "links without geometry, each with <limit lower upper effort velocity>; or, for a mobile "
    'base the planner need not move, make it type="fixed" (an SRDF floating virtual_joint to '
    "the root link moves it in MoveIt, not in Tesseract, which ignores virtual joints)",
}

# a type of another format, whose joint URDF writes as several: pybullet's spherical (its
# humanoid.urdf), SDF's and MuJoCo's ball; Tesseract's URDF parser refuses it (measured). A
# new joint's <limit> has effort and velocity too: without one Tesseract refuses it (measured,
# tests/test_tesseract_joints.py)
_BALL = (
    "model it as a chain of three revolute joints (about x, y and z) through two links without "
    "geometry, each with <limit lower upper effort velocity>"
)
_UNKNOWN_FIXES = {"spherical": _BALL, "ball": _BALL}


def _unbounded_fix(joint: Joint) -> str:
    """The fix of a joint of an unbounded type: a continuous joint whose <limit> already
    bounds it (pybullet_data's racecar's steering hinge) needs only its type changed."""
    limit = joint.limit
    if (
        joint.type == "continuous"
        and limit is not None
        and limit.lower is not None
        and limit.upper is not None
        and -ANGLE_LIMIT <= limit.lower < limit.upper <= ANGLE_LIMIT
    ):
        return (
            f'its <limit> already gives lower="{limit.lower!r}" upper="{limit.upper!r}": make it '
            'type="revolute" (the type, not the <limit>, says whether a joint turns without end)'
        )
    return _UNBOUNDED_FIXES[joint.type]


def joint_findings(joint: Joint, links: set[str], add: Add, near: Closest | None = None) -> None:
    """The rules of one joint: its links (an unknown one told the link `near` finds it most
    likely meant), type, axis, origin and limits."""
    for end in (joint.parent, joint.child):
        if end and end not in links:
            fix = "name a link defined in this URDF"
            add(
                "unknown_link",
                joint.line,
                f"joint {joint.name!r} names unknown link {end!r}",
                near.hint(end, fix) if near else fix,
            )
    if joint.type in UNBOUNDED_TYPES:
        add(
            "unbounded_joint_type",
            joint.line,
            f"joint {joint.name!r} is {joint.type}, which cannot be bounded",
            _unbounded_fix(joint),
        )
    elif joint.type not in JOINT_TYPES:
        add(
            "unknown_joint_type",
            joint.line,
            f"joint {joint.name!r} has type {joint.type!r}, which URDF does not define: "
            "Tesseract's URDF parser refuses it",
            _UNKNOWN_FIXES.get(joint.type, "use fixed, revolute or prismatic"),
        )
    # the length as pipeline.kinematics normalises the axis: 1e-320 squares to 0, 1e200 to inf
    length = math.sqrt(sum(a * a for a in joint.axis))
    if joint.type != "fixed" and not (math.isfinite(length) and length > 0.0):
        axis = " ".join(repr(a) for a in joint.axis)
        add(
            "zero_axis",
            joint.line,
            f"joint {joint.name!r} has axis {axis}, whose length is 0 or overflows in float64",
            "give a non-zero <axis xyz> of ordinary size, such as 0 0 1",
        )
    if any(abs(v) > LENGTH_LIMIT for v in joint.origin.xyz):
        xyz = " ".join(repr(v) for v in joint.origin.xyz)
        add(
            "origin_out_of_range",
            joint.line,
            f"joint {joint.name!r} has origin xyz {xyz}, beyond {LENGTH_LIMIT:.0e} m of its "
            "parent link's frame",
            "give the origin in metres (a CAD export in millimetres needs dividing by 1000)",
        )
    if joint.type in BOUNDED_TYPES:
        _limit_rules(joint, add)


def _limit_rules(joint: Joint, add: Add) -> None:
    """Findings on a bounded joint's <limit>, naming its line (the joint's when it has none)."""
    unit = "rad" if joint.type == "revolute" else "m"
    limit = joint.limit
    if limit is None:
        add(
            "missing_joint_limit",
            joint.line,
            f"{joint.type} joint {joint.name!r} has no <limit>",
            f"add <limit lower=... upper=... effort=... velocity=.../> to it, lower and upper "
            f"in {unit}",
        )
        return
    line = limit.line or joint.line
    if limit.lower is None or limit.upper is None:
        absent = " and ".join(a for a in ("lower", "upper") if getattr(limit, a) is None)
        add(
            "missing_joint_limit",
            line,
            f"{joint.type} joint {joint.name!r} has a <limit> without {absent}: "
            + (
                "Tesseract and urdfdom read each as 0 (a joint that cannot move), pybullet as "
                "no limit"
                if limit.lower is None and limit.upper is None
                else "Tesseract and urdfdom read it as 0"
            ),
            f"give that <limit> {absent} in {unit} (a joint that turns without end cannot be "
            "bounded: give it the range it may use"
            + (
                '; a wheel takes every pose within lower="-3.14159" upper="3.14159")'
                if joint.type == "revolute"
                else ")"
            ),
        )
    # nan: a number the reader refused (invalid_number); it is not reported again as nan
    elif not (math.isnan(limit.lower) or math.isnan(limit.upper) or limit.lower < limit.upper):
        equal = limit.lower == limit.upper
        add(
            "invalid_joint_limit",
            line,
            f"joint {joint.name!r} limit lower={limit.lower} upper={limit.upper} has "
            + ("lower = upper: the joint cannot move" if equal else "lower > upper"),
            f"give bounds in {unit} with lower < upper: "
            + (
                'the range the joint has, or make it type="fixed"'
                if equal
                # swapped, the two would bound a joint its author meant unbounded
                else "the range the joint may use (pybullet reads lower > upper, as its URDFs "
                'write lower="1" upper="-1", as a joint without limits'
                + (
                    "; a joint that turns without end cannot be bounded: a wheel takes every "
                    'pose within lower="-3.14159" upper="3.14159")'
                    if joint.type == "revolute"
                    else ")"
                )
            ),
        )
    if limit.velocity is None or limit.velocity <= 0:
        given = "no velocity" if limit.velocity is None else f"velocity {limit.velocity}"
        add(
            "invalid_joint_velocity",
            line,
            f"joint {joint.name!r} has {given}, not a finite number > 0",
            f"set velocity in {unit}/s, greater than 0",
        )
    if limit.effort is not None and limit.effort < 0:
        force = "N m" if joint.type == "revolute" else "N"
        add(
            "invalid_joint_effort",
            line,
            f"joint {joint.name!r} has effort {limit.effort:g}, a negative number: the largest "
            "effort the joint may apply is a magnitude",
            f"set effort in {force}, 0 or greater",
        )
    _limit_magnitudes(joint, limit, line, add)


def _limit_magnitudes(joint: Joint, limit: Limit, line: int, add: Add) -> None:
    """A finding naming each <limit> number beyond what any joint of its type reaches."""
    caps = _LIMIT_CAPS[joint.type]
    # a velocity not > 0 and a negative effort are their own findings, not reported again here
    given = {
        "lower": limit.lower,
        "upper": limit.upper,
        "velocity": limit.velocity if limit.velocity is not None and limit.velocity > 0 else None,
        "effort": limit.effort if limit.effort is not None and limit.effort >= 0 else None,
    }
    over = {
        attr: value
        for attr, (unit, cap) in caps.items()
        if (value := given[attr]) is not None and abs(value) > cap  # nan: invalid_number
    }
    if over:
        numbers = [f"{a}={v:g} (beyond {caps[a][1]:.0e} {caps[a][0]})" for a, v in over.items()]
        add(
            "limit_out_of_range",
            line,
            f"{joint.type} joint {joint.name!r} has <limit> {', '.join(numbers)}",
            _limit_fix(joint, over, caps),
        )


def _limit_fix(joint: Joint, over: dict[str, float], caps: dict[str, tuple[str, float]]) -> str:
    """The fix of limit_out_of_range, naming only the numbers out of range."""
    bounds = "lower" in over or "upper" in over
    asked = [f"lower and upper in {caps['lower'][0]}"] if bounds else []
    asked += [f"{attr} in {caps[attr][0]}" for attr in ("velocity", "effort") if attr in over]
    fix = "give " + (", ".join(asked[:-1]) + " and " if len(asked) > 1 else "") + asked[-1]
    worst = f"{max(abs(v) for v in over.values()):g}"
    if bounds:  # a number in other units is the likelier cause than a placeholder
        return (
            f"{fix} (millimetres or degrees need converting; {worst} is no limit: give the "
            "range the joint has)"
        )
    force = "torque" if joint.type == "revolute" else "force"
    rated = " and ".join(n for a, n in (("velocity", "speed"), ("effort", force)) if a in over)
    return f"{fix}, the joint's rated {rated} ({worst} is no limit: give the number the joint has)"


def mimic_findings(robot: Robot, add: Add) -> None:
    """Each <mimic> is on a joint with one coordinate and follows a movable joint of the URDF,
    within reach of its own limits, and following mimics never comes back to a joint; findings
    name the <mimic> line."""
    by_name = {joint.name: joint for joint in robot.joints}
    near = Closest(by_name)  # the joint a mimic most likely meant (xacro's prefix left off)
    on_cycles: set[str] = set()
    for joint in robot.joints:
        if joint.mimic is None:
            continue
        _drives(joint, add)
        if joint.mimic.joint not in by_name:
            add(
                "unknown_mimic_joint",
                joint.mimic.line,
                f"joint {joint.name!r} mimics unknown joint {joint.mimic.joint!r}",
                near.hint(joint.mimic.joint, "name an existing joint in <mimic joint=...>"),
            )
            continue
        _follows(joint, by_name[joint.mimic.joint], add)
        seen = {joint.name: None}  # a dict: ordered, and a constant-time membership test
        target: Joint | None = by_name[joint.mimic.joint]
        while target is not None and target.mimic is not None and target.name not in seen:
            seen[target.name] = None
            target = by_name.get(target.mimic.joint)
        # reported once, by the cycle's first joint: a joint leading into it is not on it
        if target is not None and target.name == joint.name and joint.name not in on_cycles:
            on_cycles.update(seen)
            add(
                "mimic_cycle",
                joint.mimic.line,
                f"mimic joints {' -> '.join(seen)} form a cycle",
                "make every mimic chain end at a joint that mimics nothing",
            )


# what a mimic can follow, and be on: one coordinate that moves (continuous:
# unbounded_joint_type)
_MOVABLE = ("revolute", "continuous", "prismatic")
_UNIT = {"revolute": "rad", "prismatic": "m"}
# how many coordinates each joint type a mimic cannot be on has
_COORDINATES = {"fixed": "none", "planar": "three", "floating": "six"}


def _drives(joint: Joint, add: Add) -> None:
    """The joint a <mimic> is on has the one coordinate the mimic drives."""
    assert joint.mimic is not None
    if joint.type in _COORDINATES:  # an unknown type is unknown_joint_type alone
        add(
            "mimic_on_unmovable_joint",
            joint.mimic.line,
            f"{joint.type} joint {joint.name!r} has a <mimic>, but a mimic drives one "
            f"coordinate as multiplier * q + offset and a {joint.type} joint has "
            f"{_COORDINATES[joint.type]} (Tesseract's parser keeps the <mimic> without a word)",
            "remove the <mimic>, or make the joint revolute or prismatic with its "
            "<limit lower upper>",
        )


def _follows(joint: Joint, target: Joint, add: Add) -> None:
    """The joint `joint` mimics moves, and maps some of its range into `joint`'s limits."""
    assert joint.mimic is not None
    mimic = joint.mimic
    if target.type not in _MOVABLE:
        if target.type in JOINT_TYPES:  # an unknown type is unknown_joint_type alone
            add(
                "mimic_of_unmovable_joint",
                mimic.line,
                f"joint {joint.name!r} mimics {target.name!r}, a {target.type} joint: a mimic "
                "follows the one coordinate of a revolute or prismatic joint (MoveIt and KDL "
                "refuse this one)",
                "name a revolute or prismatic joint in <mimic joint=...>, or remove the <mimic>",
            )
        return
    own, followed = _bounds(joint), _bounds(target)
    if math.isnan(mimic.multiplier + mimic.offset):
        return  # a number another finding (invalid_number) reports
    if _beyond_reach(joint, target, followed, add):
        return  # its size is the problem, not also that it misses the joint's limits
    if own is None or followed is None:
        return  # unbounded, or a limit another finding reports
    ends = [mimic.multiplier * end + mimic.offset for end in followed]
    low, high = min(ends), max(ends)
    if high < own[0] or low > own[1]:
        unit, its = _UNIT[joint.type], _UNIT.get(target.type, "rad")
        add(
            "mimic_outside_limits",
            mimic.line,
            f"joint {joint.name!r} follows {target.name!r} as {mimic.multiplier:g} * q + "
            f"{mimic.offset:g}: its range [{followed[0]:g}, {followed[1]:g}] {its} maps to "
            f"[{low:g}, {high:g}] {unit}, all outside the joint's own limits "
            f"[{own[0]:g}, {own[1]:g}] {unit}",
            "correct <mimic multiplier offset> (or either joint's limits) so that the "
            "followed joint's range reaches into this joint's limits",
        )


def _beyond_reach(
    joint: Joint, target: Joint, followed: tuple[float, float] | None, add: Add
) -> bool:
    """Whether `joint`'s <mimic> drives it beyond what any joint of its type reaches (the cap of
    its <limit lower upper>: 1e3 rad, 1e6 m) over the followed joint's range (its offset alone
    when that range is another finding's), with a finding when it does."""
    assert joint.mimic is not None
    mimic = joint.mimic
    unit, cap = _LIMIT_CAPS.get(joint.type, _LIMIT_CAPS["revolute"])["lower"]
    # the followed joint's limits are within their own caps (limit_out_of_range), so a
    # multiplier and offset of ordinary size never overflow: past the cap is a unit or exponent
    # mistake, and a position of -3e303 rad (multiplier -1e303) no check downstream can use
    its_unit, its_cap = _LIMIT_CAPS.get(target.type, _LIMIT_CAPS["revolute"])["lower"]
    if followed is not None and max(abs(end) for end in followed) > its_cap:
        followed = None  # its own limit_out_of_range, not this joint's again
    ends = [mimic.multiplier * end + mimic.offset for end in followed or (0.0, 0.0)]
    if all(math.isfinite(end) and abs(end) <= cap for end in ends):
        return False
    reach = (
        f"its range [{followed[0]:g}, {followed[1]:g}] {its_unit} maps to "
        f"[{min(ends):g}, {max(ends):g}] {unit}"
        if followed is not None
        else f"its offset alone is {mimic.offset:g} {unit}"
    )
    add(
        "mimic_out_of_range",
        mimic.line,
        f"joint {joint.name!r} follows {target.name!r} as {mimic.multiplier:g} * q + "
        f"{mimic.offset:g}: {reach}, beyond {cap:.0e} {unit}, what no {joint.type} joint reaches",
        f"give <mimic multiplier offset> that keep the joint within its own limits "
        f"(offset in {unit}, multiplier in {unit} per {its_unit}; millimetres or degrees need "
        "converting)",
    )
    return True


def _bounds(joint: Joint) -> tuple[float, float] | None:
    """A bounded joint's (lower, upper) when they are finite and ordered, else None."""
    limit = joint.limit
    if joint.type not in BOUNDED_TYPES or limit is None:
        return None
    lower, upper = limit.lower, limit.upper
    if lower is None or upper is None or not (math.isfinite(lower) and math.isfinite(upper)):
        return None
    return (lower, upper) if lower < upper else None
