"""A COLLADA collision mesh's `<lines>` and polygons, placed as trimesh places its triangles.

pycollada reads the file as trimesh's COLLADA reader does (the same errors ignored), in one parse
for both, and its scene's nodes are walked as trimesh walks them (trimesh.exchange.dae's
_parse_node: each child under the product of its parents' matrices). A `<lines>` block's ends are
placed by that product (`trimesh.transform_points`, as trimesh places a block's triangles). A
polygon's corners are taken from the very triangles trimesh makes of its block: pycollada fans a
`<polylist>` or `<polygons>` polygon, and reads a `<trifans>` `<p>`, as the triangles (c0, ck,
ck+1), so a polygon of n corners is n - 2 triangles in a row holding all its corners; the block's
triangles are placed by the same call on the same array as trimesh's, so each corner is where
trimesh puts it, to the bit. (A point placed in an array of its own may not be: numpy multiplies
one point as a vector, by another routine, which rounded otherwise in 2 458 of 3 000 random
trials; arrays of 2 to 40 rows taken from larger ones agreed with them in 3 000 of 3 000.)
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

Array = np.ndarray
_FANNED = ("polylist", "polygons", "trifans")  # blocks whose <p>s are polygons or fans


@dataclass(frozen=True)
class PlacedPolygon:
    """A polygon (a fan) of more than three corners: its block's line, name and corners (n, 3)."""

    line: int
    name: str
    corners: Array


@dataclass(frozen=True)
class DaeScene:
    """Each `<lines>` block's segments (N, 2, 3), none empty, and each polygon of more than three
    corners, per geometry instance, in the file's coordinates."""

    line_blocks: list[Array]
    polygons: list[PlacedPolygon]


def dae_scene(data: bytes) -> DaeScene:
    """The placed `<lines>` and polygons of a COLLADA file's scene (one pycollada parse)."""
    import collada  # trimesh's COLLADA reader, which imported it already (mesh_parts)

    from pipeline.spheres.meshlib import trimesh

    errors = collada.common
    ignored = [errors.DaeError, errors.DaeIncompleteError, errors.DaeMalformedError]
    ignored += [errors.DaeBrokenRefError, errors.DaeUnsupportedError]
    scene = collada.Collada(io.BytesIO(data), ignore=ignored).scene
    blocks: list[Array] = []
    polygons: list[PlacedPolygon] = []

    def walk(node: Any, matrix: Array) -> None:  # trimesh.exchange.dae._parse_node's walk
        if isinstance(node, collada.scene.GeometryNode):
            for block in node.geometry.primitives:
                if isinstance(block, collada.lineset.LineSet) and block.vertex is not None:
                    ends = np.asarray(block.vertex[block.vertex_index], dtype=np.float64)
                    placed = trimesh.transform_points(ends.reshape(-1, 3), matrix)
                    blocks.append(placed.reshape(-1, 2, 3))
                else:
                    polygons.extend(_block_polygons(block, matrix, trimesh))
        elif isinstance(node, collada.scene.Node):
            for child in node.children or []:
                walk(child, np.dot(matrix, node.matrix))

    for node in [] if scene is None else scene.nodes:
        walk(node, np.eye(4))
    return DaeScene([ends for ends in blocks if len(ends)], polygons)


def _block_polygons(block: Any, matrix: Array, trimesh: Any) -> list[PlacedPolygon]:
    """The polygons (fans) of more than three corners of a `<polylist>`, `<polygons>` or
    `<trifans>` block, each corner taken from the triangles trimesh places."""
    xml = getattr(block, "xmlnode", None)
    tag = str(getattr(xml, "tag", "")).rsplit("}", 1)[-1]
    if tag not in _FANNED:
        return []
    counts = _corner_counts(block, xml, tag)
    if counts is None or not (counts > 3).any() or (counts < 3).any():
        return []  # triangles alone; a polygon of fewer corners is refused (loose.py)
    triangles = block.triangleset() if tag != "trifans" else block  # as trimesh reads it
    if triangles.vertex is None or len(triangles.vertex_index) != int((counts - 2).sum()):
        return []
    corners = triangles.vertex[triangles.vertex_index].reshape(len(triangles.vertex_index) * 3, 3)
    placed = trimesh.transform_points(corners, matrix).reshape(-1, 3, 3)
    line = getattr(xml, "sourceline", None)
    line = line if isinstance(line, int) else 1
    kind = "fan" if tag == "trifans" else "polygon"
    out = []
    firsts = np.cumsum(counts - 2) - (counts - 2)  # each polygon's first triangle
    for number in np.flatnonzero(counts > 3).tolist():
        fan = placed[firsts[number] : firsts[number] + counts[number] - 2]
        polygon = np.concatenate([fan[:1, 0], fan[:, 1], fan[-1:, 2]])
        out.append(PlacedPolygon(line, f"<{tag}> {kind} {number}", polygon))
    return out


def _corner_counts(block: Any, xml: Any, tag: str) -> Array | None:
    """How many corners each polygon (fan) of a block has (None when unknown)."""
    if tag != "trifans":
        return np.asarray(block.vcounts, dtype=np.int64)
    stride = int(getattr(block, "nindices", 0))
    if stride <= 0:
        return None
    lists = [len((p.text or "").split()) for p in xml if str(p.tag).rsplit("}", 1)[-1] == "p"]
    if any(words % stride for words in lists):
        return None
    return np.array([words // stride for words in lists], dtype=np.int64)
