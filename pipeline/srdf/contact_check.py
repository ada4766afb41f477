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
    from pipeline.contacts import contacts, link_poses, link_solids, static_links  # numpy, scipy

    allowed = [(e.link1, e.link2) for e in srdf.elements if isinstance(e, DisableCollisions)]
    solids = link_solids(robot, robot_folder, folder_display)
    static = static_links(robot)
    findings = []
    for state in states:
        values = {v.name: v.value for v in state.values}
        for contact in contacts(solids, link_poses(robot, values), allowed, static):
            a, b = contact.link1, contact.link2
            findings.append(
                Finding(
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
            )
    return findings
