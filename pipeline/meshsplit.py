"""The parts of a collision mesh file that the planner's reader reads apart, each collided as
its own convex hull.

Tesseract 0.5 reads a mesh file with assimp (5.2) and collides each mesh assimp gives as its
own convex hull. Measured with Tesseract's reader as its URDF parser calls it, on the mesh's
resource (`tests/meshfiles.py`, checked by `tests/test_tesseract_env.py`):
- an OBJ: a new mesh at each object (`o`, named by its first word; a name met before goes on
  in the mesh being filled), at each change of group (`g`, named by the rest of its line) and at
  each change of material (`usemtl`) once the mesh has faces and a material of its own;
- an ASCII STL: a mesh per `solid`;
- a COLLADA file: a mesh per block of faces (`<triangles>`, `<polylist>`, `<polygons>`,
  `<trifans>`, `<tristrips>`, however many `<p>`s it holds) and per `<lines>` (a mesh without
  faces, which its contact manager collides as its ends' hull) of each instance of a geometry
  in the scene, placed by its nodes' transforms;
- a binary STL, a PLY: one mesh.
A mesh holding elements of several kinds is then cut by them (assimp's SortByPType), each part
collided as its corners' hull, measured alike: an OBJ mesh holding an `l` or a `p` gives its
lines (each `l`, a face of two corners) and its points (each `p`, a face of one corner) a mesh
each beside its faces' (a mesh of faces alone keeps the corners of one of one or two in its
hull); a PLY gives its faces of two corners a mesh, and of one another (a vertex no face uses
is none). An OBJ's or PLY's part of one point (a lone `p`, a line of two equal ends) crashes
Tesseract's contact manager (SIGSEGV, "The mesh is empty!") as the environment is built: it is
`mesh_not_a_mesh`, at its first line (an OBJ's) or naming its face (a PLY's). So does a part
whose corners are one point as assimp reads them, in single precision (an object, a solid, a
block of faces, a COLLADA `<lines>`, a whole file; corners a nanometre apart near 0.5 m): it
is `mesh_not_a_mesh`, naming that point.
An OBJ's material library changes none of it: the reader looks for it relative to the
planner's working folder, not the OBJ's (were it read, its last material would be the one of
faces before the first `usemtl`, and a `usemtl` of another would start a mesh).
"""

from __future__ import annotations

import gc
import io
import itertools
import re
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from pipeline.findings import ContractError, Finding
from pipeline.objparts import LonePart, obj_parts, one_mesh, one_point, one_point_parts
from pipeline.spheres.loose import OBJ_LOOSE, ply_face_lists
from pipeline.spheres.meshlib import trimesh
from pipeline.spheres.triangles import MeshParts, mesh_parts
from pipeline.strict_io import MESH_LIMIT, read_bytes
from pipeline.urdf import Mesh

Array = np.ndarray
# a statement that can start another mesh: without one, an OBJ is one mesh (the fast path)
_OBJ_SPLITS = re.compile(rb"(?m)^[ \t]*(?:o|g|usemtl)(?:[ \t\r]|$)")
_STL_SOLIDS = re.compile(rb"(?m)^[ \t]*solid(?:[ \t\r]|$)")
# what can make a COLLADA file several meshes: blocks of faces, instances of geometries
_DAE_BLOCKS = re.compile(
    rb"<(?:[\w.-]+:)?(triangles|polylist|polygons|trifans|tristrips|instance_(?:geometry|node))"
    rb"[\s/>]"
)
COLLECT_AFTER = 100_000  # triangles of a mesh whose read is followed by a garbage collection


def hull_parts(folder: Path, mesh: Mesh, display_folder: str) -> list[Array]:
    """The corners (K, 3) of each part of a collision mesh file, URDF scale applied, in the
    mesh's frame; the file is read once and checked as the spheres step checks it."""
    display = (PurePosixPath(display_folder) / mesh.path).as_posix()
    data = read_bytes(folder / mesh.path, display, MESH_LIMIT)
    read = mesh_parts(data, mesh, display)  # refuses what the spheres step does
    # trimesh's scene and mesh hold reference cycles: of a 987,712-triangle STL, 467 MB waited
    # for the collector while the hull was taken (peak RSS 1,009 MB; collected now, 831 MB). A
    # collection costs 10-25 ms whatever the mesh, most of a small robot's check: large ones only
    if len(read.triangles) > COLLECT_AFTER:
        gc.collect()
    return collided_parts(data, mesh, read, display)


def collided_parts(data: bytes, mesh: Mesh, read: MeshParts, display: str) -> list[Array]:
    """The corners (K, 3) of each part of a collision mesh file's bytes `data` (`read`: as
    mesh_parts read them), URDF scale applied; mesh_not_a_mesh when a part is one point.

    The urdf step (and so `pipeline validate`) calls it on every collision mesh, as well as
    the contact check: a file it refuses crashes the planner, and is refused before the build
    copies anything.
    """
    triangles = read.triangles
    suffix = PurePosixPath(mesh.path).suffix.lower().lstrip(".")
    try:
        parts = part_points(data, suffix, read.source)
        # a PLY's faces of one or two corners (or its unused vertices: none)
        loose = _ply_loose(read.source, display) if suffix == "ply" and len(read.segments) else []
    except LonePart as lone:
        raise ContractError([_lone_finding(lone, display)]) from None
    scale = np.array(mesh.scale, dtype=float)
    # each <lines> a part of its own (a mesh of them is collided too), as mesh_parts read them
    blocks = [ends.reshape(-1, 3) for ends in read.line_blocks]
    _refuse_one_point(blocks, display)  # a <lines> of one point
    lines = [ends * scale for ends in blocks] + [ends.reshape(-1, 3) * scale for ends in loose]
    # a part read otherwise than trimesh read the whole: collided whole, as before this reader
    if parts is None or sum(count for count, _ in parts) != len(triangles):
        whole = triangles.reshape(-1, 3)
        _refuse_one_point([whole / scale], display)
        return [whole, *lines]
    # one array of them all: a million parts each checked and scaled alone took seconds
    points = np.concatenate([corners for _, corners in parts])
    starts = np.cumsum([0, *(len(corners) for _, corners in parts)])
    single = np.flatnonzero(one_point_parts(points, starts))
    if len(single):
        _refuse_one_point([points[starts[single[0]] : starts[single[0] + 1]]], display)
    points = points * scale
    return [points[start:stop] for start, stop in itertools.pairwise(starts)] + lines


def _refuse_one_point(parts: list[Array], display: str) -> None:
    """mesh_not_a_mesh when a part's corners (in the file's units) are one point as assimp reads
    them, in single precision: its hull is empty, and Tesseract's contact manager crashes."""
    for points in parts:
        if not one_point(points):
            continue
        where = ", ".join(str(x) for x in points[0].astype(np.float32))
        raise ContractError(
            [
                Finding(
                    "mesh_not_a_mesh",
                    display,
                    "",
                    f"a part of it has every corner at ({where}), one point in the single "
                    "precision Tesseract's reader reads (it cuts the file by its objects, groups, "
                    "solids, blocks of faces and <lines>): Tesseract's contact manager crashes on "
                    "it (SIGSEGV, 'The mesh is empty!') as the planning environment is built",
                    "remove those triangles or lines, or export the collision mesh again from the "
                    "CAD model",
                )
            ]
        )


def part_points(data: bytes, suffix: str, scene: Any = None) -> list[tuple[int, Array]] | None:
    """Each part's triangles and corners (in the file's units) of a mesh file's bytes that the
    planner reads as several meshes; None for one read as one (`scene`: a COLLADA file's, as
    mesh_parts read it, or None to read it here)."""
    try:
        # a line, a point or a face of one or two corners is a part or in one: kept alone (its
        # search, 0.26 s of a 30 MB OBJ, made once)
        loose = suffix == "obj" and OBJ_LOOSE.search(data) is not None
        if suffix == "obj" and (loose or _OBJ_SPLITS.search(data)):
            text = data.removeprefix(b"\xef\xbb\xbf")
            if not loose and one_mesh(text):  # as read, a part: the whole (a 30 MB OBJ, 1.8 s)
                return None
            return _several(obj_parts(text), loose)
        ascii_stl = suffix == "stl" and data.lstrip().startswith(b"solid")
        if ascii_stl and len(_STL_SOLIDS.findall(data)) > 1:  # a binary STL is one mesh
            return _several(_stl_parts(data))
        if suffix == "dae":
            found = _DAE_BLOCKS.findall(data)
            blocks = sum(1 for tag in found if not tag.startswith(b"instance"))
            if blocks > 1 or len(found) - blocks > 1 or b"instance_node" in found:
                return _several(_dae_parts(data, scene))
    except (ValueError, IndexError):  # a statement this reader cannot follow: collided whole
        return None
    return None


def _several(parts: list[tuple[int, Array]], loose: bool = False) -> list[tuple[int, Array]] | None:
    """The parts that have corners; None for one that holds no line or point (`loose`): the
    whole mesh as trimesh reads it."""
    kept = [(count, points) for count, points in parts if len(points)]
    return kept if len(kept) > 1 or (kept and loose) else None


def _lone_finding(lone: LonePart, display: str) -> Finding:
    """The mesh_not_a_mesh line of a part of one point of the file `display`."""
    return Finding(
        "mesh_not_a_mesh",
        display,
        lone.place,
        f"{lone.what} makes a part of one point, as Tesseract's reader cuts the mesh by its "
        "elements' kinds: Tesseract's contact manager crashes on it (SIGSEGV, 'The mesh is "
        "empty!') as the planning environment is built",
        "remove it, give each line two distinct ends and the points at least two, or export "
        "the collision mesh with triangles only",
    )


def _lone(table: Array, index: list[int]) -> bool:
    """Whether corners `index` of `table` are one point (one or more of them)."""
    return one_point(table[index]) if index else False


def _ply_loose(loaded: Any, display: str) -> list[Array]:
    """A PLY's faces of two corners and of one, a part each (assimp's SortByPType: the mesh cut
    by each face's corners), their corners; a vertex no face uses is none (assimp drops it)
    (`loaded`: its trimesh mesh, as mesh_parts read it)."""
    lists = np.asarray([] if (found := ply_face_lists(loaded, display)) is None else found)
    if not (lists.dtype == object or (lists.ndim == 2 and lists.shape[1] < 3)):
        return []  # every face of three corners or more (in one array of them)
    vertices = np.asarray(loaded.vertices, dtype=np.float64)
    short: dict[int, list[int]] = {1: [], 2: []}
    first: dict[int, int] = {}  # the number of the first face of each length
    for number, corners in enumerate(lists):
        if len(corners) in short:
            short[len(corners)] += [int(i) for i in corners]
            first.setdefault(len(corners), number)
    for size, index in short.items():
        if _lone(vertices, index):
            raise LonePart("", f"face {first[size]} (of {size} corner{'s' * (size > 1)})")
    return [vertices[np.unique(index)] for index in short.values() if index]


def _stl_parts(data: bytes) -> list[tuple[int, Array]]:
    """An ASCII STL's solids: facets and corners of each."""
    parts: list[tuple[int, list[list[float]]]] = []
    facets = 0
    corners: list[list[float]] = []
    for line in data.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == b"solid":
            if facets:
                parts.append((facets, corners))
            facets, corners = 0, []
        elif words[0] == b"facet":
            facets += 1
        elif words[0] == b"vertex":
            corners.append([float(x) for x in words[1:4]])
    parts.append((facets, corners))
    return [(count, np.array(points, dtype=float)) for count, points in parts]


def _dae_parts(data: bytes, scene: Any) -> list[tuple[int, Array]]:
    """A COLLADA file's blocks of faces, one per instance, placed by their nodes (pycollada reads
    each `<polylist>`, `<polygons>`, `<trifans>` and `<tristrips>` as triangles, and trimesh
    keeps each block a geometry of its own)."""
    if scene is None:
        with np.errstate(all="ignore"):
            scene = trimesh.load(io.BytesIO(data), file_type="dae", force="scene", process=False)
    parts = []
    for node in scene.graph.nodes_geometry:
        matrix, name = scene.graph[node]
        geometry = scene.geometry[name]
        faces = np.asarray(getattr(geometry, "faces", np.zeros((0, 3), dtype=int)))
        if len(faces):
            points = np.asarray(geometry.vertices, dtype=float)[np.unique(faces)]
            parts.append((len(faces), trimesh.transform_points(points, matrix)))
    return parts
