"""Every semantic SRDF rule, checked against the URDF model; all findings at once."""

from __future__ import annotations

import math
import re

from pipeline.findings import Finding
from pipeline.srdf.checker import Checker
from pipeline.srdf.groups import HOME, MANIPULATOR, Contents, home_state, subgroup_cycles
from pipeline.srdf.model import (
    ChainMember,
    CollisionMargins,
    DisableCollisions,
    EndEffector,
    Group,
    GroupState,
    GroupTcps,
    JointMember,
    JointValue,
    LinkMember,
    PassiveJoint,
    PluginConfig,
    Srdf,
    SubgroupMember,
    VirtualJoint,
)
from pipeline.srdf.validate_more import check_collisions, check_end_effectors, check_virtual
from pipeline.urdf import Robot


def check_srdf(srdf: Srdf, robot: Robot, display: str) -> list[Finding]:
    """All semantic findings of an SRDF (values already in native units) against its URDF."""
    c = Checker(srdf, robot, display)
    _check_groups(c)
    _check_states(c)
    _check_tcps(c)
    check_end_effectors(c, [e for e in srdf.elements if isinstance(e, EndEffector)])
    check_virtual(
        c,
        [e for e in srdf.elements if isinstance(e, VirtualJoint)],
        [e for e in srdf.elements if isinstance(e, PassiveJoint)],
    )
    check_collisions(
        c,
        [e for e in srdf.elements if isinstance(e, DisableCollisions)],
        [e for e in srdf.elements if isinstance(e, CollisionMargins)],
    )
    for ref in (e for e in srdf.elements if isinstance(e, PluginConfig)):
        c.add(
            "plugin_config_refused",
            ref.place,
            f"<{ref.tag} filename={ref.filename!r}> names a file the manifest does not "
            "register, so the description identity would not cover it",
            f"remove <{ref.tag}>; configure it outside the robot description",
        )
    if srdf.version is not None and not re.fullmatch(r"\d+\.\d+(\.\d+)?", srdf.version):
        c.add(
            "invalid_version",
            "/robot",
            f"version={srdf.version!r} is not MAJOR.MINOR[.PATCH]",
            'write e.g. version="1.0.0", or leave it out',
        )
    _check_spec(c)
    return c.findings


def _check_groups(c: Checker) -> None:
    names: set[str] = set()
    for group in c.srdf.groups():
        c.unique(names, group.name, group.place, "group")
        c.shown("group", group.name, group.place)
        if not group.members:
            c.add(
                "empty_group",
                group.place,
                f"group {group.name!r} has no members",
                "add a chain, joints or links",
            )
        before = len(c.findings)
        for member in group.members:
            _check_member(c, group, member)
        if len(c.findings) > before:
            c.unresolved.add(group.name)
        _check_tesseract_kind(c, group)
    for cycle in subgroup_cycles(c.srdf):
        first = c.srdf.group(cycle[0])
        c.add(
            "subgroup_cycle",
            first.place if first else "/robot",
            f"groups {' -> '.join([*cycle, cycle[0]])} include each other",
            "remove one subgroup reference to break the cycle",
        )


def _check_member(
    c: Checker, group: Group, member: LinkMember | JointMember | ChainMember | SubgroupMember
) -> None:
    where = f"group {group.name!r}"
    if isinstance(member, LinkMember):
        c.link(member.name, member.place, f"{where} link")
    elif isinstance(member, JointMember):
        if c.robot.joint(member.name) is None:
            c.unknown_joint(
                member.name,
                member.place,
                f"{where} joint {member.name!r} is not a URDF joint",
                "name a URDF joint",
            )
    elif isinstance(member, SubgroupMember):
        c.group(member.name, member.place, f"{where} subgroup")
    else:
        ok = c.link(member.base, member.place, f"{where} chain base_link")
        ok = c.link(member.tip, member.place, f"{where} chain tip_link") and ok
        if ok and not c.robot.chain(member.base, member.tip):
            c.add(
                "chain_not_a_path",
                member.place,
                f"{where} chain {member.base!r} -> {member.tip!r} is not a parent-to-child "
                "path through at least one joint",
                "make tip_link a descendant of base_link in the URDF tree",
            )


def _check_tesseract_kind(c: Checker, group: Group) -> None:
    kinds = {type(m).__name__ for m in group.members if not isinstance(m, SubgroupMember)}
    subgroups = [m.name for m in group.members if isinstance(m, SubgroupMember)]
    if len(kinds) > 1 or (group.members and not kinds):
        c.add(
            "tesseract_group_kind",
            group.place,
            f"group {group.name!r} must hold exactly one kind of chain, joint or link members "
            "for Tesseract (it ignores subgroups and refuses mixed groups)",
            "split the group into one group per kind",
        )
    elif subgroups:
        # Tesseract loads the group without its subgroups: a planner would get fewer joints
        # than the group states and end effectors checked here were checked against
        c.add(
            "tesseract_group_kind",
            group.place,
            f"group {group.name!r} includes subgroup(s) {', '.join(map(repr, subgroups))}, "
            "which Tesseract ignores: it would read the group without their joints and links",
            "list the subgroup's chain, joints or links in the group itself",
        )


def _check_states(c: Checker) -> None:
    names: set[tuple[str, str]] = set()
    for state in c.srdf.group_states():
        key = (state.group, state.name)
        if key in names:
            c.add(
                "duplicate_name",
                state.place,
                f"group state {state.name!r} of group {state.group!r} is defined twice",
                "rename one",
            )
        names.add(key)
        c.shown("group state", state.name, state.place)
        known = c.group(state.group, state.place, f"group state {state.name!r} group")
        if not state.values:
            c.add(
                "empty_group_state",
                state.place,
                f"group state {state.name!r} sets no joint",
                'add <joint name="..." value="..."/>',
            )
        seen: set[str] = set()
        for value in state.values:
            c.unique(seen, value.name, value.place, f"group state {state.name!r} joint")
            # a group whose member was refused has joints no one knows: not judged by them
            judged = known and state.group not in c.unresolved
            _check_value(c, state, value, c.contents[state.group] if judged else None)


def _check_value(c: Checker, state: GroupState, value: JointValue, group: Contents | None) -> None:
    joint = c.robot.joint(value.name)
    where = f"group state {state.name!r} joint {value.name!r}"
    if joint is None:
        c.unknown_joint(
            value.name, value.place, f"{where} is not a URDF joint", "name a URDF joint"
        )
        return
    if group is not None and value.name not in group.joints:
        c.add(
            "joint_not_in_group",
            value.place,
            f"{where} is not in group {state.group!r}",
            "set only joints of the state's group",
        )
    if joint.type == "fixed":
        c.add("group_state_fixed_joint", value.place, f"{where} is fixed", "remove it")
    if joint.mimic is not None:
        followed = joint.mimic.joint
        law = "(multiplier * q + offset)"
        c.add(
            "group_state_mimic_joint",
            value.place,
            f"{where} mimics {followed!r}",
            f"remove it: it follows {followed!r} {law}, which the state sets"
            if any(other.name == followed for other in state.values)
            else f"remove it and set {followed!r}, which it follows {law}",
        )
    if value.name in c.passive:
        c.add("group_state_passive_joint", value.place, f"{where} is passive", "remove it")
    if value.degrees:
        if joint.type == "prismatic":
            c.add(
                "degrees_on_prismatic_joint",
                value.place,
                f"{where} is prismatic but its value is given in degrees (value_deg)",
                "write value=... in metres",
            )
        return
    if not math.isfinite(value.value):
        c.add("non_finite_joint_value", value.place, f"{where} is {value.value}", "write a number")
        return
    limit = joint.limit
    if joint.type not in ("revolute", "prismatic") or limit is None:
        return
    if limit.lower is None or limit.upper is None:
        return
    unit = "rad" if joint.type == "revolute" else "m"
    hint = f"stay within [{limit.lower!r}, {limit.upper!r}] {unit}"
    # only a value no revolute joint turns in radians (over a full turn) is taken for degrees:
    # 0.3 over a limit of 0.19 rad is a value in radians, not 0.005 rad written in degrees
    degrees = abs(value.value) > math.tau
    if (
        joint.type == "revolute"
        and degrees
        and limit.lower <= math.radians(value.value) <= limit.upper
    ):
        hint += f"; {value.value!r} looks like degrees: write {math.radians(value.value)!r} rad"
    if value.value < limit.lower:
        c.add(
            "group_state_below_limit",
            value.place,
            f"{where} value {value.value!r} {unit} is below the lower limit {limit.lower!r}",
            hint,
        )
    elif value.value > limit.upper:
        c.add(
            "group_state_above_limit",
            value.place,
            f"{where} value {value.value!r} {unit} is above the upper limit {limit.upper!r}",
            hint,
        )


def _check_tcps(c: Checker) -> None:
    names: dict[str, set[str]] = {}
    for block in (e for e in c.srdf.elements if isinstance(e, GroupTcps)):
        c.group(block.group, block.place, "group_tcps group")
        if not block.tcps:
            c.add(
                "empty_group_tcps",
                block.place,
                f"group_tcps of {block.group!r} holds no <tcp>",
                "add a <tcp> or remove the element",
            )
        seen = names.setdefault(block.group, set())
        for tcp in block.tcps:
            where = f"tcp {tcp.name!r} of group {block.group!r}"
            c.unique(seen, tcp.name, tcp.place, f"group {block.group!r} tcp")
            c.shown("tcp", tcp.name, tcp.place)
            if (tcp.rpy is None) == (tcp.wxyz is None):
                c.add(
                    "tcp_needs_one_rotation",
                    tcp.place,
                    f"{where} gives {'both' if tcp.rpy else 'neither'} of rpy and wxyz",
                    "give exactly one: rpy (rad, Rz*Ry*Rx) or wxyz (scalar-first)",
                )
            numbers = (*tcp.xyz, *(tcp.rpy or ()), *(tcp.wxyz or ()))
            if not all(math.isfinite(n) for n in numbers):
                c.add(
                    "non_finite_number",
                    tcp.place,
                    f"{where} has a NaN or infinite number",
                    "write finite numbers: xyz in m, rpy in rad or wxyz",
                )
            elif tcp.wxyz is not None and not any(tcp.wxyz):
                c.add(
                    "tcp_zero_quaternion",
                    tcp.place,
                    f"{where} has wxyz 0 0 0 0, which is no rotation",
                    'write a non-zero quaternion, e.g. wxyz="1 0 0 0"',
                )


def _check_spec(c: Checker) -> None:
    manipulator = c.srdf.group(MANIPULATOR)
    if manipulator is None:
        c.add(
            "missing_manipulator_group",
            "/robot",
            f"there is no group named {MANIPULATOR!r}, which Tesseract planners expect",
            f'add <group name="{MANIPULATOR}"> with the arm chain',
        )
    if not c.robot.name.startswith("rosie_"):
        return
    home = home_state(c.srdf)
    if home is None:
        c.add(
            "missing_home_state",
            "/robot",
            f"Rosie model {c.robot.name!r} has no group state {HOME!r} of group {MANIPULATOR!r}",
            f'add <group_state name="{HOME}" group="{MANIPULATOR}"> with every joint at 0',
        )
        return
    if manipulator is None:
        return
    values = {v.name: v.value for v in home.values}
    passive = c.srdf.passive_joints()
    for name in sorted(c.contents[MANIPULATOR].joints):
        joint = c.robot.joint(name)
        if joint is None or joint.type == "fixed" or joint.mimic or name in passive:
            continue
        if values.get(name) != 0.0:
            shown = "is missing" if name not in values else f"is {values[name]!r}"
            c.add(
                "home_state_not_zero",
                home.place,
                f"home state joint {name!r} {shown}",
                f'set <joint name="{name}" value="0"/>',
            )
