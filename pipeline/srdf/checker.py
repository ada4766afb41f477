"""The finding collector shared by the SRDF rule modules."""

from __future__ import annotations

from pipeline.findings import Closest, Finding, unshowable_name
from pipeline.srdf.groups import Contents, expand
from pipeline.srdf.model import Srdf
from pipeline.urdf import Robot


class Checker:
    """Collects findings for one SRDF checked against one URDF."""

    def __init__(self, srdf: Srdf, robot: Robot, display: str) -> None:
        self.srdf = srdf
        self.robot = robot
        self.display = display
        self.findings: list[Finding] = []
        self.contents: dict[str, Contents] = expand(srdf, robot)
        # once: a group state's each joint value asks (10,000 states: a scan of every element
        # per value took minutes)
        self.passive: set[str] = srdf.passive_joints()
        # groups a member of which names nothing of the URDF (a chain's misspelt tip): their
        # contents are not what was meant, so no state is judged against them
        self.unresolved: set[str] = set()
        # the URDF name an unknown one most likely meant, for the hint
        self.near_link = Closest([link.name for link in robot.links])
        self.near_joint = Closest([joint.name for joint in robot.joints])

    def add(self, code: str, place: str, message: str, hint: str) -> None:
        """Record one error finding."""
        self.findings.append(Finding(code, self.display, place, message, hint))

    def link(self, name: str, place: str, what: str) -> bool:
        """Report `unknown_link` unless the URDF has that link."""
        if self.robot.link(name) is not None:
            return True
        hint = self.near_link.hint(name, "name a URDF link")
        self.add("unknown_link", place, f"{what} {name!r} is not a URDF link", hint)
        return False

    def unknown_joint(self, name: str, place: str, message: str, fix: str) -> None:
        """Report `unknown_joint` for `name`, the hint naming the joint most likely meant."""
        self.add("unknown_joint", place, message, self.near_joint.hint(name, fix))

    def group(self, name: str, place: str, what: str) -> bool:
        """Report `unknown_group` unless the SRDF defines that group."""
        if name in self.contents:
            return True
        self.add("unknown_group", place, f"{what} {name!r} is not a group", "name a defined group")
        return False

    def shown(self, kind: str, name: str, place: str) -> None:
        """Report `invalid_text_character` for a name holding a line break, control or
        bidirectional control, which splits or reorders a line that prints it (as a URDF
        link's name)."""
        found = unshowable_name(kind, name)
        if found is not None:
            self.add("invalid_text_character", place, *found)

    def unique(self, seen: set[str], name: str, place: str, what: str) -> None:
        """Report `duplicate_name` when `name` was seen before; remember it."""
        if name in seen:
            self.add("duplicate_name", place, f"{what} {name!r} is defined twice", "rename one")
        seen.add(name)
