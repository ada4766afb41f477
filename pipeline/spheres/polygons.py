"""A collision mesh's polygons of more than three corners that do not lie in one plane.

Such a polygon has several triangulations: trimesh fans it from its first corner, Tesseract's
reader (assimp) clips ears, another consumer may split it otherwise, and the surfaces differ
(a quad 2 cm out of plane: by millimetres). Every triangulation that adds no point uses only
triangles of three of its corners, so every such triangle (C(n, 3) of them) is surface the
spheres cover; it is not part of the solid. An OBJ's or PLY's polygon is read from the corner
lists the file states; a COLLADA `<polylist>` or `<polygons>` polygon, and a `<trifans>` fan
(which Tesseract's reader reads as one polygon, pycollada as its fan's triangles), from the
triangles trimesh made of it, per instance of its geometry (dae_scene.py). A polygon of more than
MAX_CORNERS corners, and a COLLADA one a corner of which is not among trimesh's triangles'
corners (which dae_scene.py rules out, checked here all the same), is refused instead
(`polygon_not_planar`). A planar polygon needs nothing: every triangulation of it lies in it, and
trimesh's fan covers at least it.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pipeline.findings import ContractError, Finding
from pipeline.spheres.loose import obj_index, obj_xyz, ply_face_lists

if TYPE_CHECKING:
    from pipeline.spheres.dae_scene import DaeScene

Array = np.ndarray
NONE = np.zeros((0, 3, 3))
# C(16, 3) = 560 triangles for one face; a 32-gon would take 4 960
MAX_CORNERS = 16
# a corner this far from the polygon's best plane counts as out of it: far below the proof's
# 1 nm allowance, above the rounding of a planar polygon's corners (a few ulps of the largest)
PLANAR_ABSOLUTE = 1e-12
PLANAR_RELATIVE = 2.0**-48
# A COLLADA file's coordinates are read in single precision (pycollada, so trimesh; Tesseract's
# reader too): a quad planar as written comes out bent by their rounding, up to about 2^-24 of
# its largest coordinate per corner. Bent no more than this, it is planar as written, and its
# fan alone is covered, as an OBJ's planar quad's is: covering every triangle of all of a mesh's
# rounded quads doubled its triangles and took a 100 000-quad mesh's fit from 4.0 s to 16.6 s.
PLANAR_SINGLE = 2.0**-22
# an OBJ face of four or more corners
_OBJ_POLYGON = re.compile(rb"(?m)^[ \t]*f(?:[ \t]+[^\s#]+){4}")
_FIX = "triangulate the mesh when exporting it, so its triangles are the file's own"


@dataclass(frozen=True)
class Polygon:
    """A face of more than three corners: where the file states it, and its corners (n, 3)."""

    place: str
    name: str
    corners: Array
    placed: bool = True  # False: a corner is not one of trimesh's triangles' corners
    rounding: float = PLANAR_RELATIVE  # out of plane by this much of its largest coordinate: planar


def mesh_polygons(
    data: bytes, suffix: str, loaded: object, display: str, scene: Callable[[], DaeScene]
) -> list[Polygon]:
    """The faces of more than three corners of a mesh file, in the file's coordinates (a
    COLLADA node's transform applied, not its unit; `scene`: the COLLADA file's walk)."""
    if suffix == "obj":
        return _obj_polygons(data, display)
    if suffix == "ply":
        return _ply_polygons(loaded, display)
    if suffix == "dae":
        return _dae_polygons(data, loaded, scene)
    return []


def polygon_triangles(
    polygons: list[Polygon], factor: Array, display: str, count: Callable[[int], None]
) -> Array:
    """Every triangle of three corners of each non-planar polygon (corners times `factor`);
    `count` is told how many there will be before they are made (it may refuse so many)."""
    bent = _bent(polygons, factor)
    for at, off in bent:
        polygon = polygons[at]
        n = len(polygon.corners)
        if n > MAX_CORNERS or not polygon.placed:
            why = (
                f"more than {MAX_CORNERS}, the most whose every triangle is covered"
                if polygon.placed
                else "a corner is not where the COLLADA reader (trimesh) put its triangles' corners"
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
    count(sum(math.comb(len(polygons[at].corners), 3) for at, _ in bent))
    out: list[Array] = []
    for at, _ in bent:
        with np.errstate(all="ignore"):
            corners = polygons[at].corners * factor
        trios = np.array(list(itertools.combinations(range(len(corners)), 3)), dtype=np.int64)
        out.append(corners[trios])
    return np.concatenate(out) if out else NONE


def _bent(polygons: list[Polygon], factor: Array) -> list[tuple[int, float]]:
    """The index of each polygon not in one plane, in order, with its largest distance off its
    least-squares plane; those of a corner count measured together (100 000 quads of a COLLADA
    mesh one at a time: 4.2 s, most of its read)."""
    found: list[tuple[int, float]] = []
    counts = np.array([len(p.corners) for p in polygons], dtype=np.int64)
    for n in np.unique(counts):
        which = np.flatnonzero(counts == n)
        with np.errstate(all="ignore"):
            corners = np.stack([polygons[i].corners for i in which]) * factor
        finite = np.isfinite(corners).all(axis=(1, 2))  # not finite: mesh_parts refuses that
        centred = corners - corners.mean(axis=1, keepdims=True)
        centred[~finite] = 0.0
        # the 3 x 3 right factor alone: a full one's left factor is n x n (12 000 corners: 1.1 GB)
        normals = np.linalg.svd(centred, full_matrices=False)[2][:, -1, :]
        off = np.abs(np.einsum("knj,kj->kn", centred, normals)).max(axis=1)
        rounding = np.array([polygons[i].rounding for i in which])
        with np.errstate(all="ignore"):
            scale = np.abs(corners).max(axis=(1, 2))
        planar = ~(off > PLANAR_ABSOLUTE + rounding * scale)
        found += [(int(i), float(o)) for i, o, p in zip(which, off, planar, strict=True) if not p]
    return sorted(found)


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


def _dae_polygons(data: bytes, loaded: object, scene: Callable[[], DaeScene]) -> list[Polygon]:
    """COLLADA `<polylist>` and `<polygons>` polygons of four or more corners, and `<trifans>`
    fans of as many (Tesseract's reader reads each fan's `<p>` as one polygon), per geometry
    instance, placed as trimesh places its triangles (dae_scene.py); one a corner of which is not
    among trimesh's triangles' corners is unplaced."""
    if b"poly" not in data and b"trifans" not in data:
        return []  # the fast path: a mesh of triangles
    found = scene().polygons
    if not found:
        return []
    known = np.asarray(getattr(loaded, "triangles", NONE), dtype=np.float64).reshape(-1, 3)
    among = _among(np.concatenate([p.corners for p in found]), known)
    out, start = [], 0
    for polygon in found:
        placed = bool(among[start : start + len(polygon.corners)].all())
        start += len(polygon.corners)
        out.append(Polygon(str(polygon.line), polygon.name, polygon.corners, placed, PLANAR_SINGLE))
    return out


def _among(points: Array, rows: Array) -> Array:
    """Whether each point (K, 3) is one of `rows` (M, 3), equal in every coordinate: the rows
    whose x is some point's first, then those compared whole."""
    near = rows[np.isin(rows[:, 0], points[:, 0])]
    if not len(near):
        return np.zeros(len(points), dtype=bool)
    kind = np.dtype([("x", "f8"), ("y", "f8"), ("z", "f8")])
    whole = np.ascontiguousarray(near, dtype=np.float64).view(kind).ravel()
    wanted = np.ascontiguousarray(points, dtype=np.float64).view(kind).ravel()
    return np.isin(wanted, whole)
