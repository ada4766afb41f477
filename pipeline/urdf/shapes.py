"""The <geometry> of a URDF <visual> or <collision> read into its one shape: a <mesh>, <box>,
<cylinder> or <sphere>, collecting findings on the way."""

from __future__ import annotations

import math

from lxml import etree

from pipeline.strict_xml import source_line
from pipeline.urdf.attributes import AttributeReader, vec3
from pipeline.urdf.meshuri import mesh_uri_path
from pipeline.urdf.model import Box, Cylinder, Geometry, Mesh, Sphere
from pipeline.urdf.scales import unscalable
from pipeline.urdf.unknown import lone_shape_first


class ShapeReader(AttributeReader):
    """Collects findings while reading a <geometry> into its shape."""

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
            return None if path is None else Mesh(filename, path, vec3(scale), source_line(shape))
        if shape.tag == "box":
            size = self.floats(shape, "size", 3, None)
            return None if size is None else self.sized(shape, Box(vec3(size)), size)
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


# Tesseract reads <capsule> (pybullet's humanoid has them) but it is not URDF
_CAPSULE = (
    ": a capsule is a <cylinder> of its radius and length and a <sphere> of its radius at each "
    "end of the cylinder's axis, three <collision> elements"
)
