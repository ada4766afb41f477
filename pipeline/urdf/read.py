"""Reading URDF XML into the model, collecting findings on the way."""

from __future__ import annotations

import math

from lxml import etree

from pipeline.findings import ContractError, Finding
from pipeline.strict_xml import NUMBER, parse_xml, source_line
from pipeline.urdf.attributes import vec3
from pipeline.urdf.extras import extra_findings
from pipeline.urdf.meshuri import MeshesFolder
from pipeline.urdf.model import (
    Collision,
    Inertial,
    Joint,
    Limit,
    Link,
    Mimic,
    Robot,
    Visual,
)
from pipeline.urdf.shapes import ShapeReader
from pipeline.urdf.unknown import URDF_CHILDREN, unknown_findings
from pipeline.urdf.xacro import undeclared_xacro, xacro_findings

_INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")

# Children an element holds at most once: every URDF reader (this one, urdfdom, Tesseract's)
# takes the first and ignores the rest, so a second one is a mistake that silently does nothing.
# A link may hold several <visual> and <collision>; a joint, visual, collision or inertial holds
# each of its children once.
_SINGLE = {
    "link": ("inertial",),
    **{tag: URDF_CHILDREN[tag] for tag in ("joint", "visual", "collision", "inertial")},
}
_UNDER = {"link": "robot", "joint": "robot", "visual": "link", "collision": "link"}


class _Reader(ShapeReader):
    """Collects findings while turning URDF XML into the model."""

    def single_children(self, root: etree._Element) -> None:
        """A finding for each second child of a kind its URDF element holds at most once."""
        for parent in root.iter("link", "joint", "visual", "collision", "inertial"):
            above = parent.getparent()
            if _UNDER.get(str(parent.tag), "link") != (None if above is None else above.tag):
                continue
            for tag in _SINGLE[str(parent.tag)]:
                for extra in parent.findall(tag)[1:]:
                    self.add(
                        "duplicate_element",
                        source_line(extra),
                        f"<{parent.tag}> holds a second <{tag}>: URDF readers take the first "
                        "and ignore this one",
                        f"keep one <{tag}> in the <{parent.tag}> (merge the two)",
                    )

    def link(self, node: etree._Element) -> Link:
        before = len(self.findings)
        collisions = []
        for element in node.findall("collision"):
            geometry = self.geometry(element)
            if geometry is not None:
                collisions.append(Collision(self.origin(element), geometry, source_line(element)))
        refused = len(self.findings) > before
        visuals = []
        elements = node.findall("visual")
        for element in elements:
            geometry = self.geometry(element)
            if geometry is not None:
                visuals.append(Visual(self.origin(element), geometry, source_line(element)))
        inertial = node.find("inertial")
        return Link(
            self.name(node),
            tuple(collisions),
            tuple(visuals),
            source_line(node),
            None if inertial is None else self.inertial(inertial),
            refused,
            len(elements) - len(visuals),
        )

    def inertial(self, node: etree._Element) -> Inertial | None:
        # Tesseract's URDF parser refuses a link whose <inertial> lacks any of these numbers,
        # though the compiler itself never uses them
        origin = self.origin(node)
        values: list[float] = []
        for tag, attrs, unit in (("mass", ("value",), "kg"), ("inertia", _INERTIA, "kg m^2")):
            child = node.find(tag)
            if child is None:
                sample = " ".join(f'{a}="..."' for a in attrs)
                self.add(
                    "missing_attribute",
                    source_line(node),
                    f"<inertial> has no <{tag}>",
                    f"add <{tag} {sample}/> in {unit}, or remove the <inertial>",
                )
                continue
            for attr in attrs:
                value = self.floats(child, attr, 1, None)
                if value is not None:
                    values.extend(value)
        if len(values) != 1 + len(_INERTIA):
            return None
        mass, *tensor = values
        ixx, ixy, ixz, iyy, iyz, izz = tensor
        return Inertial(origin, mass, (ixx, ixy, ixz, iyy, iyz, izz), source_line(node))

    def joint(self, node: etree._Element) -> Joint:
        ends = []
        for tag in ("parent", "child"):
            end = node.find(tag)
            if end is None or not end.get("link"):
                self.add(
                    "missing_attribute",
                    source_line(node),
                    f"joint {node.get('name')!r} has no <{tag} link=...>",
                    f'add <{tag} link="..."/>',
                )
                ends.append("")
            else:
                ends.append(end.get("link", ""))
        axis_node = node.find("axis")
        axis = (1.0, 0.0, 0.0)
        if axis_node is not None:
            axis = vec3(self.floats(axis_node, "xyz", 3, (1.0, 0.0, 0.0)))
        limit_node = node.find("limit")
        limit = None
        if limit_node is not None:
            limit = Limit(
                self.scalar(limit_node, "lower"),
                self.scalar(limit_node, "upper"),
                self.scalar(limit_node, "velocity"),
                _quiet_number(limit_node.get("effort")),
                source_line(limit_node),
            )
        mimic_node = node.find("mimic")
        mimic = None
        if mimic_node is not None:
            multiplier = self.scalar(mimic_node, "multiplier")
            offset = self.scalar(mimic_node, "offset")
            mimic = Mimic(
                mimic_node.get("joint", ""),
                1.0 if multiplier is None else multiplier,
                0.0 if offset is None else offset,
                source_line(mimic_node),
            )
        return Joint(
            self.name(node),
            node.get("type", ""),
            ends[0],
            ends[1],
            self.origin(node),
            axis,
            limit,
            mimic,
            source_line(node),
        )


def _quiet_number(text: str | None) -> float | None:
    """The finite number `text` holds, or None (no finding: extras.py makes those)."""
    if text is None or not NUMBER.fullmatch(text.strip()):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def parse_urdf(
    data: bytes, display: str, model_id: str, meshes: MeshesFolder | None = None
) -> tuple[Robot, list[Finding]]:
    """Parse URDF bytes into the model, with the findings met while reading; `meshes` tells
    what the robot's meshes/ holds, for the fix of a mesh URI of another package."""
    try:
        root = parse_xml(data, display)
    except ContractError as exc:
        raise ContractError(undeclared_xacro(list(exc.findings), display, model_id)) from None
    reader = _Reader(display, model_id, meshes)
    if root.tag != "robot":
        raise ContractError(
            [
                Finding(
                    "not_a_urdf",
                    display,
                    str(source_line(root)),
                    f"the root element is <{root.tag}>, not <robot>",
                    "a URDF's root element is <robot name=...>",
                )
            ]
        )
    # alone: the links in its macros and the numbers in its ${...} are not yet there to judge
    unexpanded = xacro_findings(root, display, model_id, data)
    if unexpanded:
        raise ContractError(unexpanded)
    reader.single_children(root)
    links = tuple(reader.link(n) for n in root.findall("link"))
    joints = tuple(reader.joint(n) for n in root.findall("joint"))
    robot = Robot(root.get("name", ""), links, joints, display)
    if robot.name != model_id:
        reader.add(
            "robot_name_mismatch",
            source_line(root),
            f"<robot name={robot.name!r}> differs from the model id {model_id!r}",
            f'set <robot name="{model_id}"> or rename the folder',
        )
    extras = extra_findings(root, display, data) + unknown_findings(root, display)
    return robot, reader.findings + extras
