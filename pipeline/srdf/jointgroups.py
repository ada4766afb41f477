"""Groups Tesseract's Environment builds no joint group from, so a planner cannot plan for them.

Tesseract 0.5.1 reads a group of several chains, or of links, from the SRDF, but
`getJointGroup` raises "not supported" for it. An end effector's group of links needs no joint
group; a `manipulator` of links, or any group of several chains (two arms), is planned for.
"""

from __future__ import annotations

from pipeline.findings import Finding, Severity
from pipeline.srdf.model import ChainMember, LinkMember, Srdf


def joint_group_findings(srdf: Srdf, display: str) -> list[Finding]:
    """A warning per group of several chains, and for a `manipulator` of links only."""
    findings = []
    for group in srdf.groups():
        chains = [m for m in group.members if isinstance(m, ChainMember)]
        links = bool(group.members) and all(isinstance(m, LinkMember) for m in group.members)
        if len(chains) > 1:
            shape = f"a group of {len(chains)} chains"
            hint = "make it a group of its chains' joints, or one chain group per arm"
        elif links and group.name == "manipulator":
            shape = "a group of links"
            hint = "make it a chain from the base link to the tip, or a group of its joints"
        else:
            continue
        findings.append(
            Finding(
                "tesseract_no_joint_group",
                display,
                group.place,
                f"group {group.name!r} is {shape}: Tesseract's Environment (0.5.1) builds no "
                "joint group from it (getJointGroup: not supported), so a planner cannot plan "
                "for it",
                hint,
                Severity.WARNING,
            )
        )
    return findings
