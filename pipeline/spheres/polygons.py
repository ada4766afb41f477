"""A collision mesh's polygons of more than three corners that do not lie in one plane.

Such a polygon has several triangulations: trimesh fans it from its first corner, Tesseract's
reader (assimp) clips ears, another consumer may split it otherwise, and the surfaces differ
(a quad 2 cm out of plane: by millimetres). Every triangulation that adds no point uses only
triangles of three of its corners, so every such triangle (C(n, 3) of them) is surface the
spheres cover; it is not part of the solid. A polygon of more than MAX_CORNERS corners, and a
COLLADA polygon (trimesh places a node's triangles otherwise than a float64 product, see
loose.py), is refused instead (`polygon_not_planar`); so is a COLLADA `<trifans>` fan of four or
more corners not in one plane, which Tesseract's reader reads as one polygon (pycollada as its
fan's triangles). A planar polygon needs nothing: every
triangulation of it lies in it, and trimesh's fan covers at least it.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pipeline.findings import ContractError, Finding
from pipeline.spheres.loose import obj_index, obj_xyz, ply_face_lists

if TYPE_CHECKING:
    from lxml import etree

Array = np.ndarray
NONE = np.zeros((0, 3, 3))
# C(16, 3) = 560 triangles for one face; a 32-gon would take 4 960
MAX_CORNERS = 16
# a corner this far from the polygon's best plane counts as out of it: far below the proof's
# 1 nm allowance, above the rounding of a planar polygon's corners (a few ulps of the largest)
PLANAR_ABSOLUTE = 1e-12
PLANAR_RELATIVE = 2.0**-48
# an OBJ face of four or more corners
_OBJ_POLYGON = re.compile(rb"(?m)^[ \t]*f(?:[ \t]+[^\s#]+){4}")
_FIX = "triangulate the mesh when exporting it, so its triangles are the file's own"


@dataclass(frozen=True)
class Polygon:
    """A face of more than three corners: where the file states it, and its corners (n, 3)."""

    place: str
    name: str
    corners: Array
    placed: bool = True  # False: its corners are not where trimesh puts its triangles


def mesh_polygons(
    data: bytes, suffix: str, loaded: object, display: str, root: etree._Element | None
) -> list[Polygon]:
    """The faces of more than three corners of a mesh file, in the file's coordinates (`root`:
    a COLLADA file parsed, or None to parse it here)."""
    if suffix == "obj":
        return _obj_polygons(data, display)
    if suffix == "ply":
        return _ply_polygons(loaded, display)
    if suffix == "dae":
        return _dae_polygons(data, display, root)
    return []


def polygon_triangles(polygons: list[Polygon], factor: Array, display: str) -> Array:
    """Every triangle of three corners of each non-planar polygon (corners times `factor`)."""
    out: list[Array] = []
    for polygon in polygons:
        with np.errstate(all="ignore"):
            corners = polygon.corners * factor
        off = _off_plane(corners)
        if not off > PLANAR_ABSOLUTE + PLANAR_RELATIVE * float(np.abs(corners).max()):
            continue  # planar (or not finite: mesh_parts refuses that)
        n = len(corners)
        if n > MAX_CORNERS or not polygon.placed:
            why = (
                f"more than {MAX_CORNERS}, the most whose every triangle is covered"
                if polygon.placed
                else "its corners cannot be placed exactly as the COLLADA reader places triangles"
            )
            raise ContractError(
                [
                    Finding(
                        "polygon_not_planar",
                        display,
                        polygon.place,
                        f"{polygon.name} has {n} corners not in one plane (one {off:.3g} m off "
                        f"it), which a consumer may triangulate otherwise than this reader; {why}",
                        _FIX,
                    )
                ]
            )
        trios = np.array(list(itertools.combinations(range(n), 3)), dtype=np.int64)
        out.append(corners[trios])
    return np.concatenate(out) if out else NONE


def _off_plane(corners: Array) -> float:
    """The largest distance of a corner from the polygon's least-squares plane."""
    if not np.isfinite(corners).all():
        return 0.0
    centred = corners - corners.mean(axis=0)
    normal = np.linalg.svd(centred)[2][-1]
    return float(np.abs(centred @ normal).max())


def _obj_polygons(data: bytes, display: str) -> list[Polygon]:
    """OBJ `f` elements of four or more corners (indices counted as OBJ counts them)."""
    if _OBJ_POLYGON.search(data) is None:
        return []  # the fast path: a triangulated mesh
    vertices: list[list[bytes]] = []
    faces: list[tuple[int, list[bytes], int]] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        words = line.split(b"#")[0].split()
        if words[:1] == [b"v"]:
            vertices.append(words[1:4])
        elif words[:1] == [b"f"] and len(words) > 4:
            faces.append((number, words[1:], len(vertices)))
    out = []
    for number, corners, seen in faces:
        index = [obj_index(word, seen, len(vertices)) for word in corners]
        if any(i < 0 for i in index):
            bad = corners[index.index(-1)][:40].decode("ascii", "replace")
            raise ContractError(
                [
                    Finding(
                        "mesh_unreadable",
                        display,
                        str(number),
                        f"its face corner {bad} names no vertex (OBJ counts them from 1, a "
                        f"negative index back from the last read; {len(vertices)} in all)",
                        "export the collision mesh again",
                    )
                ]
            )
        xyz = np.array([obj_xyz(vertices[i]) for i in index], dtype=np.float64)
        out.append(Polygon(str(number), f"the face of line {number}", xyz))
    return out


def _ply_polygons(loaded: object, display: str) -> list[Polygon]:
    """PLY faces of four or more corners, as the file lists them (trimesh's record of them;
    loose.py refuses a PLY mesh whose faces trimesh kept no record of)."""
    vertices = np.asarray(getattr(loaded, "vertices", np.zeros((0, 3))), dtype=np.float64)
    lists = ply_face_lists(loaded, display)
    faces = np.asarray([] if lists is None else lists)
    if not (faces.dtype == object or (faces.ndim == 2 and faces.shape[1] > 3)):
        return []
    out = []
    for number, corners in enumerate(faces):
        index = np.asarray(corners, dtype=np.int64)
        if len(index) > 3 and ((index >= 0) & (index < len(vertices))).all():
            out.append(Polygon("", f"face {number}", vertices[index]))
    return out


def _dae_polygons(data: bytes, display: str, root: etree._Element | None) -> list[Polygon]:
    """COLLADA `<polylist>` and `<polygons>` polygons of four or more corners, and `<trifans>`
    fans of as many (Tesseract's reader reads each fan's `<p>` as one polygon), unplaced."""
    if b"<polylist" not in data and b"<polygons" not in data and b"<trifans" not in data:
        return []
    from pipeline.strict_xml import parse_xml, source_line

    if root is None:  # not parsed (no strict XML): parsed here, for its findings
        root = parse_xml(data, display, huge_text=True)  # as loose.py reads it
    arrays = {
        source.get("id", ""): array
        for source in root.iter("{*}source")
        for array in source
        if _tag(array) == "float_array"
    }
    positions = {
        v.get("id", ""): next(
            (
                i.get("source", "")
                for i in v
                if _tag(i) == "input" and i.get("semantic") == "POSITION"
            ),
            "",
        )
        for v in root.iter("{*}vertices")
    }
    out = []
    for mesh in root.iter("{*}mesh"):
        for element in mesh:
            if _tag(element) not in ("polylist", "polygons", "trifans"):
                continue
            inputs = [c for c in element if _tag(c) == "input"]
            stride = 1 + max((_int(c.get("offset")) for c in inputs), default=0)
            vertex = next((c for c in inputs if c.get("semantic") == "VERTEX"), None)
            named = "" if vertex is None else (vertex.get("source") or "").removeprefix("#")
            source = arrays.get(positions.get(named, "").removeprefix("#"))
            if vertex is None or source is None:
                continue  # trimesh reads no triangles of it either
            xyz = np.array((source.text or "").split(), dtype=np.float64)
            xyz = xyz[: len(xyz) // 3 * 3].reshape(-1, 3)
            offset = _int(vertex.get("offset"))
            for number, index in enumerate(_dae_corner_lists(element, stride, offset)):
                if len(index) > 3 and all(0 <= i < len(xyz) for i in index):
                    kind = "fan" if _tag(element) == "trifans" else "polygon"
                    name = f"<{_tag(element)}> {kind} {number}"
                    out.append(Polygon(str(source_line(element)), name, xyz[index], placed=False))
    return out


def _dae_corner_lists(element: object, stride: int, offset: int) -> list[list[int]]:
    """The vertex indices of each polygon of a `<polylist>`, `<polygons>` or `<trifans>`."""
    children = list(element)  # type: ignore[call-overload]
    p_texts = [c.text or "" for c in children if _tag(c) == "p"]
    if _tag(element) in ("polygons", "trifans"):
        lists = [[_int(w) for w in text.split()] for text in p_texts]
        return [words[offset::stride] for words in lists]
    words = [_int(w) for w in " ".join(p_texts).split()]
    counts = [_int(w) for c in children if _tag(c) == "vcount" for w in (c.text or "").split()]
    out, start = [], 0
    for count in counts:
        out.append(words[start * stride + offset : (start + count) * stride : stride])
        start += count
    return out


def _tag(element: object) -> str:
    tag = getattr(element, "tag", "")
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _int(word: str | None) -> int:
    text = (word or "0").strip()
    return int(text) if text.lstrip("+-").isdigit() else -1
