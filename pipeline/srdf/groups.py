"""What a group contains once chains, links and subgroups are expanded against the URDF."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.srdf.model import (
    ChainMember,
    Group,
    JointMember,
    LinkMember,
    Srdf,
    SubgroupMember,
)
from pipeline.urdf import Robot


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


def subgroup_cycles(srdf: Srdf) -> list[list[str]]:
    """Each cycle of subgroup references once, as the list of group names around it."""
    edges = {
        g.name: [m.name for m in g.members if isinstance(m, SubgroupMember)] for g in srdf.groups()
    }
    cycles: list[list[str]] = []
    seen_in_cycle: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycle = path[path.index(name) :]
            if not seen_in_cycle.intersection(cycle):
                seen_in_cycle.update(cycle)
                cycles.append(cycle)
            return
        for child in edges.get(name, []):
            visit(child, [*path, name])

    for name in edges:
        visit(name, [])
    return cycles


def expand(srdf: Srdf, robot: Robot) -> dict[str, Contents]:
    """Contents of every group by name; subgroup cycles and unknown names are skipped."""
    groups = {g.name: g for g in reversed(srdf.groups())}  # the first of a duplicate name wins
    out: dict[str, Contents] = {}

    def contents(name: str, stack: tuple[str, ...]) -> Contents:
        if name in out:
            return out[name]
        group = groups[name]
        result = _direct(group, robot)
        joints, links = set(result.joints), set(result.links)
        for member in group.members:
            if (
                isinstance(member, SubgroupMember)
                and member.name in groups
                and member.name not in stack
            ):
                sub = contents(member.name, (*stack, name))
                joints |= sub.joints
                links |= sub.links
        result = Contents(frozenset(joints), frozenset(links))
        out[name] = result
        return result

    for name in groups:
        contents(name, ())
    return out
