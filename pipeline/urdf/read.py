"""Reading URDF XML into the model, collecting findings on the way."""

from __future__ import annotations

import math

from lxml import etree

from pipeline.findings import ContractError, Finding, Severity
from pipeline.strict_xml import NUMBER, parse_xml, source_line
from pipeline.urdf.angles import rpy_finding
from pipeline.urdf.extras import comma_spaced, extra_findings
from pipeline.urdf.meshuri import MeshesFolder, mesh_uri_path
from pipeline.urdf.model import (
    Box,
    Collision,
    Cylinder,
    Geometry,
    Inertial,
    Joint,
    Limit,
    Link,
    Mesh,
    Mimic,
    Origin,
    Robot,
    Sphere,
    Vec3,
    Visual,
)
from pipeline.urdf.scales import unscalable
from pipeline.urdf.unknown import URDF_CHILDREN, lone_shape_first, unknown_findings
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


class _Reader:
    """Collects findings while turning URDF XML into the model."""

    def __init__(self, display: str, model_id: str, meshes: MeshesFolder | None) -> None:
        self.display = display
        self.model_id = model_id
        self.meshes = meshes
        self.findings: list[Finding] = []

    def add(self, code: str, line: int | None, message: str, hint: str) -> None:
        self.findings.append(Finding(code, self.display, str(line or 1), message, hint))

    def floats(
        self, node: etree._Element, attr: str, count: int, default: tuple[float, ...] | None
    ) -> tuple[float, ...] | None:
        text = node.get(attr)
        if text is None:
            if default is None:
                self.add(
                    "missing_attribute",
                    source_line(node),
                    f"<{node.tag}> has no {attr!r} attribute",
                    f'add {attr}="..."',
                )
            return default
        # split on spaces only: the parser has turned tabs and newlines in attributes into spaces
        parts = [part for part in text.split(" ") if part]
        values = tuple(float(p) for p in parts if NUMBER.fullmatch(p))
        numbers = len(values) == len(parts) and all(math.isfinite(v) for v in values)
        if not numbers or len(values) != count:
            # finite numbers, too many or too few (pybullet's microtaur: rpy="0 1.57079 0 0"):
            # say how many, which a long attribute does not show at a glance
            held = {0: "no number", 1: "1 number"}.get(len(values), f"{len(values)} numbers")
            spaced, comma = comma_spaced(text, count), "separates its numbers with a comma"
            self.add(
                "invalid_number",
                source_line(node),
                f'<{node.tag} {attr}="{text}"> '
                + (f"holds {held}, not {count}" if numbers else f"is not {count} finite number(s)")
                + (f": it {comma}" if spaced else ""),
                f"write {count} finite decimal number(s) (ASCII digits) separated by spaces"
                + (f': {attr}="{spaced}"' if spaced else ""),
            )
            return default
        return values

    def scalar(self, node: etree._Element, attr: str) -> float | None:
        if node.get(attr) is None:
            return None
        values = self.floats(node, attr, 1, (math.nan,))
        return values[0] if values else None

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

    def name(self, node: etree._Element) -> str:
        name = node.get("name")
        if not name:
            self.add(
                "missing_attribute",
                source_line(node),
                f"<{node.tag}> has no name",
                'give it a unique name="..."',
            )
            return ""
        return name

    def origin(self, parent: etree._Element) -> Origin:
        node = parent.find("origin")
        if node is None:
            return Origin()
        xyz = self.floats(node, "xyz", 3, (0.0, 0.0, 0.0))
        rpy = self.floats(node, "rpy", 3, (0.0, 0.0, 0.0))
        if rpy is not None and node.get("rpy") is not None:
            text, line = node.get("rpy", ""), source_line(node) or 1
            found = rpy_finding(rpy, text, str(node.tag), self.display, line)
            if found is not None:
                self.findings.append(found)
                if found.severity is Severity.ERROR:
                    rpy = (0.0, 0.0, 0.0)  # refused: no knock-on finding computes with it
        return Origin(_vec3(xyz), _vec3(rpy))

    def mesh_path(self, node: etree._Element, filename: str) -> str | None:
        path, problem = mesh_uri_path(filename, self.model_id, self.meshes)
        if problem is not None:
            self.add(problem[0], source_line(node), problem[1], problem[2])
        return path

    def geometry(self, parent: etree._Element) -> Geometry | None:
        holder = parent.find("geometry")
        children = [] if holder is None else [n for n in holder if isinstance(n.tag, str)]
        shapes = children[:1] if lone_shape_first(children) else children
        if len(shapes) != 1:
            held = ", ".join(f"<{n.tag}>" for n in shapes) or "nothing"
            stray = f" (a <material> belongs in the <{parent.tag}>)" if "<material>" in held else ""
            self.add(
                "invalid_geometry",
                source_line(parent if holder is None else holder),
                f"<{parent.tag}> has no <geometry>"
                if holder is None
                else f"the <geometry> of a <{parent.tag}> holds {held}, not exactly one shape",
                "keep exactly one of <mesh>, <box>, <cylinder> or <sphere> in <geometry>" + stray,
            )
            return None
        shape = shapes[0]
        if shape.tag == "mesh":
            filename = shape.get("filename", "")
            scale = self.floats(shape, "scale", 3, (1.0, 1.0, 1.0))
            if not filename:
                # as every other missing attribute, not as a URI '' of no package
                self.add(
                    "missing_attribute",
                    source_line(shape),
                    "<mesh> has no 'filename' attribute"
                    if shape.get("filename") is None
                    else "<mesh> has an empty 'filename' attribute",
                    f'add filename="package://{self.model_id}/meshes/<file>"',
                )
                return None
            path = self.mesh_path(shape, filename)
            if scale is not None and not all(s > 0 for s in scale):
                # Tesseract's parser refuses a scale that is not > 0 on any axis, on a visual
                # too; a zero axis would also flatten a collision mesh to no volume
                self.add(
                    "invalid_geometry",
                    source_line(shape),
                    *unscalable(str(shape.get("scale")), scale),
                )
                return None
            return None if path is None else Mesh(filename, path, _vec3(scale), source_line(shape))
        if shape.tag == "box":
            size = self.floats(shape, "size", 3, None)
            return None if size is None else self.sized(shape, Box(_vec3(size)), size)
        if shape.tag == "cylinder":
            radius, length = self.scalar(shape, "radius"), self.scalar(shape, "length")
            if radius is None or length is None:
                self.add(
                    "missing_attribute",
                    source_line(shape),
                    "<cylinder> needs radius and length",
                    "add both, in metres",
                )
                return None
            return self.sized(shape, Cylinder(radius, length), (radius, length))
        if shape.tag == "sphere":
            radius = self.scalar(shape, "radius")
            if radius is None:
                self.add(
                    "missing_attribute",
                    source_line(shape),
                    "<sphere> needs a radius",
                    "add radius in metres",
                )
                return None
            return self.sized(shape, Sphere(radius), (radius,))
        self.add(
            "invalid_geometry",
            source_line(shape),
            f"unknown geometry <{shape.tag}>",
            "use one of <mesh>, <box>, <cylinder> or <sphere>"
            + (_CAPSULE if shape.tag == "capsule" else ""),
        )
        return None

    def sized(
        self, node: etree._Element, shape: Geometry, sizes: tuple[float, ...]
    ) -> Geometry | None:
        # > 0 on a visual too: Tesseract's parser refuses a box, cylinder or sphere sized 0
        if all(math.isfinite(s) and s > 0 for s in sizes):
            return shape
        geometry = node.getparent()
        element = geometry.getparent() if geometry is not None else None
        # sized 0 all round, a placeholder: a visual draws nothing (Upkie's virtual links), a
        # collision collides with nothing (armar's ARMAR-4 ankles and eyes)
        held = "" if element is None or any(sizes) else str(element.tag)
        remove = {
            "visual": "remove the <visual> (a link without geometry is a frame, as tool0), or ",
            "collision": "remove the <collision> (a link without one is never collided with, as "
            "tool0), or ",
        }
        self.add(
            "invalid_geometry",
            source_line(node),
            f"<{node.tag}> has a size that is not > 0",
            remove.get(held, "")
            + "give every dimension a positive size in metres (Tesseract refuses a size of 0, "
            "on a visual too)",
        )
        return None

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
            axis = _vec3(self.floats(axis_node, "xyz", 3, (1.0, 0.0, 0.0)))
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


# Tesseract reads <capsule> (pybullet's humanoid has them) but it is not URDF
_CAPSULE = (
    ": a capsule is a <cylinder> of its radius and length and a <sphere> of its radius at each "
    "end of the cylinder's axis, three <collision> elements"
)


def _vec3(values: tuple[float, ...] | None) -> Vec3:
    assert values is not None and len(values) == 3
    return (values[0], values[1], values[2])


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
