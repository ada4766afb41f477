"""What a group contains once chains, links and subgroups are expanded against the URDF."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.srdf.model import (
    ChainMember,
    Group,
    GroupState,
    JointMember,
    LinkMember,
    Srdf,
    SubgroupMember,
)
from pipeline.srdf.units import native_value
from pipeline.urdf import Robot

# the group Tesseract planners plan for (srdf/validate.py asks every SRDF for one)
MANIPULATOR = "manipulator"
# its group state a cell's kinematics review is taken at (required on Rosie models)
HOME = "home"


@dataclass(frozen=True)
class Contents:
    """The URDF joints and links a group covers (subgroups included)."""

    joints: frozenset[str]
    links: frozenset[str]


def _direct(group: Group, robot: Robot) -> Contents:
    joints: set[str] = set()
    links: set[str] = set()
    for member in group.members:
        joint = robot.joint(member.name) if isinstance(member, JointMember) else None
        if joint is not None:
            joints.add(joint.name)
            links.add(joint.child)
        elif isinstance(member, LinkMember) and robot.link(member.name) is not None:
            links.add(member.name)
            parent = robot.parent_joint(member.name)
            if parent is not None:
                joints.add(parent.name)
        elif isinstance(member, ChainMember):
            chain = robot.chain(member.base, member.tip) or []
            joints.update(j.name for j in chain)
            links.update(j.child for j in chain)
    return Contents(frozenset(joints), frozenset(links))


def _subgroups(group: Group) -> list[str]:
    return [m.name for m in group.members if isinstance(m, SubgroupMember)]


def subgroup_cycles(srdf: Srdf) -> list[list[str]]:
    """Each cycle of subgroup references once, as the list of group names around it."""
    # Depth-first with an explicit stack, each group explored once: recursion failed at a
    # thousand nested subgroups, and walking every path took exponential time on a lattice.
    edges = {g.name: _subgroups(g) for g in srdf.groups()}
    cycles: list[list[str]] = []
    seen_in_cycle: set[str] = set()
    done: set[str] = set()
    for start in edges:
        if start in done:
            continue
        path, at = [start], {start: 0}
        todo = [iter(edges[start])]
        while todo:
            child = next(todo[-1], None)
            if child is None:
                todo.pop()
                finished = path.pop()
                del at[finished]
                done.add(finished)
            elif child in at:
                cycle = path[at[child] :]
                if not seen_in_cycle.intersection(cycle):
                    seen_in_cycle.update(cycle)
                    cycles.append(cycle)
            elif child in edges and child not in done:
                at[child] = len(path)
                path.append(child)
                todo.append(iter(edges[child]))
    return cycles


def expand(srdf: Srdf, robot: Robot) -> dict[str, Contents]:
    """Contents of every group by name; subgroup cycles and unknown names are skipped."""
    groups = {g.name: g for g in reversed(srdf.groups())}  # the first of a duplicate name wins
    out: dict[str, Contents] = {}
    for start in groups:
        if start in out:
            continue
        path, on_path = [start], {start}
        todo = [iter(_subgroups(groups[start]))]
        while todo:
            child = next(todo[-1], None)
            if child is None:
                todo.pop()
                name = path.pop()
                on_path.discard(name)
                # a subgroup still on the path (a cycle) is not in `out` yet: skipped
                direct = _direct(groups[name], robot)
                joints, links = set(direct.joints), set(direct.links)
                for sub in _subgroups(groups[name]):
                    if sub in out:
                        joints |= out[sub].joints
                        links |= out[sub].links
                out[name] = Contents(frozenset(joints), frozenset(links))
            elif child in groups and child not in on_path and child not in out:
                path.append(child)
                on_path.add(child)
                todo.append(iter(_subgroups(groups[child])))
    return out


def manipulator_links(srdf: Srdf, robot: Robot) -> frozenset[str]:
    """The links of the SRDF's `manipulator` group; none when it has no such group."""
    contents = expand(srdf, robot).get(MANIPULATOR)
    return frozenset() if contents is None else contents.links


def home_state(srdf: Srdf) -> GroupState | None:
    """The first group state `home` of group `manipulator`, if any (a second: duplicate_name)."""
    return next((s for s in srdf.group_states() if s.name == HOME and s.group == MANIPULATOR), None)


def home_values(srdf: Srdf, robot: Robot) -> dict[str, float]:
    """The joint values (rad or m) of the `home` state of `manipulator`; none without one."""
    state = home_state(srdf)
    values = [] if state is None else [native_value(v, robot) for v in state.values]
    # a prismatic value_deg stays in degrees: degrees_on_prismatic_joint, no position
    return {v.name: v.value for v in values if not v.degrees}
