"""How many triangles a COLLADA file holds, told before a mesh reader expands it.

trimesh (through pycollada) reads a COLLADA file whole into several arrays per corner, and
repeats a geometry's triangles for each of its instances in the scene: 5 M triangles in 30 MB
of `<p>` indices peaked at 2.7 GB, and a 16 kB file instancing a 2 000-triangle geometry 10 000
times through `<instance_node>`s (20 M triangles) at 5.5 GB, before the collision mesh limit
refused them. This count is what the file states: each block's primitives, from the indices of
its `<p>`s (never fewer triangles than pycollada makes of them), times the instances of its
geometry in the scene `<scene>` names, as trimesh walks it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.urdf.dae_blocks import words
from pipeline.urdf.dae_nodes import expansions, local_name

if TYPE_CHECKING:
    from lxml import etree

_FACES = ("triangles", "polylist", "polygons", "trifans", "tristrips")


def _block_triangles(block: etree._Element) -> int:
    """The fewest triangles a block's indices make: a polygon, fan or strip of n corners is
    n - 2 triangles, a triangle list one per three."""
    inputs = [e for e in block if local_name(e) == "input"]
    offsets = [int(e.get("offset", "0")) for e in inputs if e.get("offset", "0").isdigit()]
    stride = 1 + max(offsets, default=0)
    lists = [e for e in block if local_name(e) == "p"]
    corners = sum(words(p.text) for p in lists) // stride
    tag = local_name(block)
    if tag == "triangles":
        return corners // 3
    if tag == "polylist":
        polygons = sum(words(v.text) for v in block if local_name(v) == "vcount")
    else:  # each <p> one polygon, fan or strip
        polygons = len(lists)
    return max(0, corners - 2 * polygons)


def _scene_triangles(root: etree._Element, scene: etree._Element, geometry: dict[str, int]) -> int:
    """The triangles the nodes of `scene` expand to; a node that instances itself (which the
    urdf step refuses) counted once."""

    def own(node: etree._Element) -> int:
        return sum(
            geometry.get(child.get("url", "")[1:], 0)
            for child in node
            if local_name(child) == "instance_geometry" and child.get("url", "")[:1] == "#"
        )

    count, _ = expansions(root, own)
    return sum(count[node] for node in scene if local_name(node) == "node")


def collada_triangles(root: etree._Element) -> int:
    """The triangles a parsed COLLADA file's scene holds, as stated (0 when it names none)."""
    named = root.find("{*}scene/{*}instance_visual_scene")
    url = "" if named is None else named.get("url", "")
    scene = next((s for s in root.iter("{*}visual_scene") if "#" + str(s.get("id")) == url), None)
    if scene is None:
        return 0  # trimesh reads no scene then, and the file is refused as unreadable
    geometry = {
        str(g.get("id")): sum(
            _block_triangles(block)
            for mesh in g
            if local_name(mesh) == "mesh"
            for block in mesh
            if local_name(block) in _FACES
        )
        for g in root.iter("{*}geometry")
    }
    return _scene_triangles(root, scene, geometry)
