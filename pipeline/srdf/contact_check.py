"""Group states that put two links in contact the SRDF does not allow: a planner starts from
such a state in collision. A warning: whether the two may touch is the engineer's call."""

from __future__ import annotations

from pathlib import Path

from pipeline.findings import Finding, Severity
from pipeline.srdf.model import DisableCollisions, GroupState, Srdf
from pipeline.urdf import Robot


def state_contact_findings(
    srdf: Srdf, robot: Robot, robot_folder: Path, display: str, folder_display: str
) -> list[Finding]:
    """One warning per group state and pair of links in contact there that no
    `<disable_collisions>` allows (`display`: the generator; `folder_display`: the URDF's
    folder as findings name it)."""
    states = [e for e in srdf.elements if isinstance(e, GroupState)]
    if not states or not any(link.collisions for link in robot.links):
        return []
    from pipeline.contacts import (  # numpy, scipy
        Budget,
        BudgetSpent,
        contacts,
        link_poses,
        link_solids,
        static_links,
    )
    from pipeline.homepose import home_positions

    allowed = [(e.link1, e.link2) for e in srdf.elements if isinstance(e, DisableCollisions)]
    solids = link_solids(robot, robot_folder, folder_display)
    static = static_links(robot)
    budget = Budget()
    spent = budget.left
    seen: dict[tuple[tuple[str, float], ...], list[tuple[str, str]]] = {}
    findings = []
    for at, state in enumerate(states):
        values = {v.name: v.value for v in state.values}
        # states of one pose (the same values, or values clamped to the same limits) collide alike
        pose = tuple(sorted(home_positions(robot, robot.joints, values).items()))
        if pose not in seen:
            try:
                found = contacts(solids, link_poses(robot, values), allowed, static, budget)
            except BudgetSpent:
                findings.append(_unchecked(state, len(states) - at, spent, display))
                break
            seen[pose] = [(c.link1, c.link2) for c in found]
        findings += [_in_contact(state, a, b, display) for a, b in seen[pose]]
    return findings


def _in_contact(state: GroupState, a: str, b: str, display: str) -> Finding:
    """The warning of links `a` and `b` in contact at `state`."""
    return Finding(
        "group_state_in_contact",
        display,
        state.place,
        f"group state {state.name!r} of group {state.group!r} puts links {a} and {b} "
        "in contact (collided as a planner collides them, a mesh as its convex "
        "hull), and no <disable_collisions> allows the pair: a planner finds the "
        "state in collision",
        f'if they may touch, add <disable_collisions link1="{a}" link2="{b}" '
        'reason="Default"/> to what gen_srdf() returns; if not, change the '
        "state's joint values or the links' collision geometry",
        Severity.WARNING,
    )


def _unchecked(state: GroupState, count: int, spent: int, display: str) -> Finding:
    """The warning that the check's budget ran out at `state`, `count` states unchecked."""
    return Finding(
        "group_states_not_collided",
        display,
        state.place,
        f"the contact check stopped at group state {state.name!r} of group {state.group!r}: "
        f"it and the {count - 1} after it were not collided, the check having solved linear "
        f"programmes of the {spent:,} constraints it may (each pair of links whose bounding "
        "boxes meet at a state takes one, of a constraint per face of their hulls)",
        "allow the pairs that touch by design (<disable_collisions>), remove the states a "
        "planner needs no name for, or check them with tests/test_tesseract_env.py",
        Severity.WARNING,
    )
