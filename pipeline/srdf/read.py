"""Reading SRDF XML into the model, collecting findings on the way."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from lxml import etree

from pipeline.findings import Finding, raise_if_errors
from pipeline.srdf.model import (
    EXPLORER_NS,
    PLUGIN_CONFIG_TAGS,
    TCAD_NS,
    ChainMember,
    CollisionMargins,
    DisableCollisions,
    Element,
    EndEffector,
    Group,
    GroupState,
    GroupTcps,
    JointMember,
    JointValue,
    LinkMember,
    Member,
    PairMargin,
    PassiveJoint,
    PluginConfig,
    Srdf,
    SubgroupMember,
    Tcp,
    VirtualJoint,
)
from pipeline.strict_io import XML_LIMIT, read_bytes
from pipeline.strict_xml import DECIMAL, parse_xml, source_line

# a decimal, or a word float() reads as NaN or infinity (refused later with its own finding)
_NUMBER = re.compile(rf"{DECIMAL}|[+-]?(?:nan|inf|infinity)", re.I | re.ASCII)
_URDF_TAGS = (f"{{{TCAD_NS}}}urdf", f"{{{EXPLORER_NS}}}urdf")
_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "robot": ("name", "version"),
    "group": ("name",),
    "group/link": ("name",),
    "group/joint": ("name",),
    "group/chain": ("base_link", "tip_link"),
    "group/group": ("name",),
    "group_state": ("name", "group"),
    "group_state/joint": ("name", "value", "value_deg"),
    "group_tcps": ("group",),
    "group_tcps/tcp": ("name", "xyz", "rpy", "wxyz"),
    "end_effector": ("name", "group", "parent_link", "parent_group"),
    "virtual_joint": ("name", "type", "parent_frame", "child_link"),
    "passive_joint": ("name",),
    "disable_collisions": ("link1", "link2", "reason"),
    "collision_margins": ("default_margin",),
    "collision_margins/pair_margin": ("link1", "link2", "margin"),
    "urdf": ("path",),
    **{tag: ("filename",) for tag in PLUGIN_CONFIG_TAGS},
}


class _Reader:
    """Collects findings while turning SRDF XML into the model."""

    def __init__(self, display: str, use_lines: bool) -> None:
        self.display = display
        self.use_lines = use_lines
        self.findings: list[Finding] = []
        self.places: dict[etree._Element, str] = {}

    def place(self, node: etree._Element) -> str:
        if self.use_lines:
            return str(source_line(node))
        return self.places.get(node, "/robot")

    def add(self, code: str, node: etree._Element, message: str, hint: str) -> None:
        self.findings.append(Finding(code, self.display, self.place(node), message, hint))

    def index(self, node: etree._Element, prefix: str) -> list[etree._Element]:
        """Record XPath places of the element children and return them."""
        children = [c for c in node if isinstance(c.tag, str)]
        counts: dict[str, int] = {}
        for child in children:
            name = etree.QName(child).localname
            counts[name] = counts.get(name, 0) + 1
            self.places[child] = f"{prefix}/{name}[{counts[name]}]"
        return children

    def attrs(self, node: etree._Element, key: str, required: tuple[str, ...]) -> dict[str, str]:
        allowed = _ATTRIBUTES[key]
        for name in node.attrib:
            if name not in allowed:
                self.add(
                    "unknown_attribute",
                    node,
                    f"<{key.split('/')[-1]}> has unknown attribute {name!r}",
                    f"use only {', '.join(allowed)}",
                )
        for name in required:
            if not node.get(name):
                self.add(
                    "missing_attribute",
                    node,
                    f"<{key.split('/')[-1]}> has no {name!r} attribute",
                    f'add {name}="..."',
                )
        return {name: str(node.get(name, "")) for name in allowed}

    def numbers(self, node: etree._Element, attr: str, count: int) -> tuple[float, ...] | None:
        text = node.get(attr)
        if text is None:
            return None
        parts = text.split(" ")  # the parser has turned tabs and newlines into spaces
        parts = [p for p in parts if p]
        if len(parts) != count or not all(_NUMBER.fullmatch(p) for p in parts):
            self.add(
                "invalid_number",
                node,
                f"{attr}={text!r} is not {count} decimal number(s)",
                f"write {count} space-separated decimal number(s)",
            )
            return None
        return tuple(float(p) for p in parts)

    def unknown(self, node: etree._Element, where: str) -> None:
        self.add(
            "unknown_element",
            node,
            f"<{etree.QName(node).localname}> is not an element this compiler reads {where}",
            "remove it; see docs/srdf.md for the supported elements",
        )

    def robot(self, root: etree._Element) -> Srdf:
        if root.tag != "robot":
            self.add("root_not_robot", root, f"the root is <{root.tag}>", "make <robot> the root")
        attrs = self.attrs(root, "robot", ("name",))
        elements: list[Element] = []
        urdf_path: str | None = None
        for node in self.index(root, "/robot"):
            if node.tag in _URDF_TAGS:
                path = self.attrs(node, "urdf", ("path",))["path"]
                urdf_path = path if urdf_path is None else urdf_path
                continue
            parse = self.parsers().get(str(node.tag))
            if parse is None:
                self.unknown(node, "in <robot>")
            else:
                element = parse(node)
                if element is not None:
                    elements.append(element)
        return Srdf(attrs["name"], root.get("version"), tuple(elements), urdf_path)

    def parsers(self) -> dict[str, Callable[[etree._Element], Element | None]]:
        table: dict[str, Callable[[etree._Element], Element | None]] = {
            "group": self.group,
            "group_state": self.group_state,
            "group_tcps": self.group_tcps,
            "end_effector": self.end_effector,
            "virtual_joint": self.virtual_joint,
            "passive_joint": self.passive_joint,
            "disable_collisions": self.disable_collisions,
            "collision_margins": self.collision_margins,
        }
        for tag in PLUGIN_CONFIG_TAGS:
            table[tag] = self.plugin_config
        return table

    def group(self, node: etree._Element) -> Group:
        name = self.attrs(node, "group", ("name",))["name"]
        members: list[Member] = []
        for child in self.index(node, self.places.get(node, "")):
            tag = str(child.tag)
            place = self.place(child)
            if tag in ("link", "joint", "group"):
                member_name = self.attrs(child, f"group/{tag}", ("name",))["name"]
                if tag == "link":
                    members.append(LinkMember(member_name, place))
                elif tag == "joint":
                    members.append(JointMember(member_name, place))
                else:
                    members.append(SubgroupMember(member_name, place))
            elif tag == "chain":
                a = self.attrs(child, "group/chain", ("base_link", "tip_link"))
                members.append(ChainMember(a["base_link"], a["tip_link"], place))
            else:
                self.unknown(child, "in <group>")
        return Group(name, tuple(members), self.place(node))

    def group_state(self, node: etree._Element) -> GroupState:
        a = self.attrs(node, "group_state", ("name", "group"))
        values: list[JointValue] = []
        for child in self.index(node, self.places.get(node, "")):
            if child.tag != "joint":
                self.unknown(child, "in <group_state>")
                continue
            name = self.attrs(child, "group_state/joint", ("name",))["name"]
            has_value, has_deg = child.get("value") is not None, child.get("value_deg") is not None
            if has_value and has_deg:
                self.add(
                    "ambiguous_joint_value",
                    child,
                    f"joint {name!r} has both value and value_deg",
                    "keep only value (rad or m)",
                )
                continue
            if not has_value and not has_deg:
                self.add(
                    "missing_attribute",
                    child,
                    f"joint {name!r} has no value",
                    'add value="..." in rad (revolute) or m (prismatic)',
                )
                continue
            number = self.numbers(child, "value" if has_value else "value_deg", 1)
            if number is not None:
                values.append(JointValue(name, number[0], has_deg, self.place(child)))
        return GroupState(a["name"], a["group"], tuple(values), self.place(node))

    def group_tcps(self, node: etree._Element) -> GroupTcps:
        group = self.attrs(node, "group_tcps", ("group",))["group"]
        tcps: list[Tcp] = []
        for child in self.index(node, self.places.get(node, "")):
            if child.tag != "tcp":
                self.unknown(child, "in <group_tcps>")
                continue
            name = self.attrs(child, "group_tcps/tcp", ("name", "xyz"))["name"]
            xyz = self.numbers(child, "xyz", 3)
            rpy = self.numbers(child, "rpy", 3)
            wxyz = self.numbers(child, "wxyz", 4)
            if xyz is not None:
                tcps.append(
                    Tcp(
                        name,
                        (xyz[0], xyz[1], xyz[2]),
                        None if rpy is None else (rpy[0], rpy[1], rpy[2]),
                        None if wxyz is None else (wxyz[0], wxyz[1], wxyz[2], wxyz[3]),
                        self.place(child),
                    )
                )
        return GroupTcps(group, tuple(tcps), self.place(node))

    def end_effector(self, node: etree._Element) -> EndEffector:
        a = self.attrs(node, "end_effector", ("name", "group", "parent_link"))
        parent_group = a["parent_group"] or None
        return EndEffector(a["name"], a["group"], a["parent_link"], parent_group, self.place(node))

    def virtual_joint(self, node: etree._Element) -> VirtualJoint:
        a = self.attrs(node, "virtual_joint", ("name", "type", "parent_frame", "child_link"))
        return VirtualJoint(
            a["name"], a["type"], a["parent_frame"], a["child_link"], self.place(node)
        )

    def passive_joint(self, node: etree._Element) -> PassiveJoint:
        return PassiveJoint(self.attrs(node, "passive_joint", ("name",))["name"], self.place(node))

    def disable_collisions(self, node: etree._Element) -> DisableCollisions:
        a = self.attrs(node, "disable_collisions", ("link1", "link2"))
        reason = node.get("reason")
        return DisableCollisions(a["link1"], a["link2"], reason, self.place(node))

    def collision_margins(self, node: etree._Element) -> CollisionMargins | None:
        self.attrs(node, "collision_margins", ("default_margin",))
        default = self.numbers(node, "default_margin", 1)
        pairs: list[PairMargin] = []
        for child in self.index(node, self.places.get(node, "")):
            if child.tag != "pair_margin":
                self.unknown(child, "in <collision_margins>")
                continue
            a = self.attrs(child, "collision_margins/pair_margin", ("link1", "link2", "margin"))
            margin = self.numbers(child, "margin", 1)
            if margin is not None:
                pairs.append(PairMargin(a["link1"], a["link2"], margin[0], self.place(child)))
        if default is None:
            return None
        return CollisionMargins(default[0], tuple(pairs), self.place(node))

    def plugin_config(self, node: etree._Element) -> PluginConfig:
        filename = self.attrs(node, str(node.tag), ())["filename"]
        return PluginConfig(str(node.tag), filename, self.place(node))


def parse_srdf(
    root: etree._Element, display: str, use_lines: bool = False
) -> tuple[Srdf, list[Finding]]:
    """Turn a parsed `<robot>` element into the model; places are XPaths, or lines for files."""
    reader = _Reader(display, use_lines)
    srdf = reader.robot(root)
    return srdf, reader.findings


def load_srdf(path: Path, display: str) -> Srdf:
    """Read an SRDF file (places are line numbers); raise ContractError on reading problems."""
    return srdf_from_bytes(read_bytes(path, display, XML_LIMIT), display)


def srdf_from_bytes(data: bytes, display: str) -> Srdf:
    """Parse an SRDF's bytes (places are line numbers); raise ContractError on problems."""
    srdf, findings = parse_srdf(parse_xml(data, display), display, use_lines=True)
    raise_if_errors(findings)
    return srdf
