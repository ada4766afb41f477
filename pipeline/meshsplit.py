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
import re
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from pipeline.findings import ContractError, Finding
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
_DEFAULT_OBJECT = b"defaultobject"  # assimp's name of the object faces before any `o` go to
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
        parts = part_points(data, suffix)
        # a PLY's faces of one or two corners (or its unused vertices: none)
        loose = _ply_loose(data, display) if suffix == "ply" and len(read.segments) else []
    except LonePart as lone:
        raise ContractError([lone.finding(display)]) from None
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
    _refuse_one_point([points for _, points in parts], display)
    return [points * scale for _, points in parts] + lines


def _refuse_one_point(parts: list[Array], display: str) -> None:
    """mesh_not_a_mesh when a part's corners (in the file's units) are one point as assimp reads
    them, in single precision: its hull is empty, and Tesseract's contact manager crashes."""
    for points in parts:
        if not _one_point(points):
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


def part_points(data: bytes, suffix: str) -> list[tuple[int, Array]] | None:
    """Each part's triangles and corners (in the file's units) of a mesh file's bytes that the
    planner reads as several meshes; None for one read as one."""
    try:
        if suffix == "obj" and (_OBJ_SPLITS.search(data) or OBJ_LOOSE.search(data)):
            # a line, a point or a face of one or two corners is a part or in one: kept alone
            loose = OBJ_LOOSE.search(data) is not None
            return _several(_obj_parts(data.removeprefix(b"\xef\xbb\xbf")), loose)
        ascii_stl = suffix == "stl" and data.lstrip().startswith(b"solid")
        if ascii_stl and len(_STL_SOLIDS.findall(data)) > 1:  # a binary STL is one mesh
            return _several(_stl_parts(data))
        if suffix == "dae":
            found = _DAE_BLOCKS.findall(data)
            blocks = sum(1 for tag in found if not tag.startswith(b"instance"))
            if blocks > 1 or len(found) - blocks > 1 or b"instance_node" in found:
                return _several(_dae_parts(data))
    except (ValueError, IndexError):  # a statement this reader cannot follow: collided whole
        return None
    return None


def _several(parts: list[tuple[int, Array]], loose: bool = False) -> list[tuple[int, Array]] | None:
    """The parts that have corners; None for one that holds no line or point (`loose`): the
    whole mesh as trimesh reads it."""
    kept = [(count, points) for count, points in parts if len(points)]
    return kept if len(kept) > 1 or (kept and loose) else None


def _obj_parts(data: bytes) -> list[tuple[int, Array]]:
    """An OBJ's meshes as assimp 5.2's OBJ reader fills them: triangles and corners of each; a
    mesh holding an `l` or a `p` cut by its elements' kinds (assimp's SortByPType), its lines
    (`l`, `f` of two corners) and its points (`p`, `f` of one) parts of no triangles."""
    corners: list[bytes] = []  # `v` lines
    meshes: list[_ObjMesh] = []
    material: bytes | None = None  # the last `usemtl`'s
    mesh_material: bytes | None = None  # the material of the mesh being filled
    objects: set[bytes] = set()
    in_object, group = False, b""

    def new_mesh() -> None:
        nonlocal mesh_material
        # one without elements makes no part: kept, not another per `g` line between no faces
        # (2 million of them, an 8 MB OBJ, took 1.6 GB)
        if not meshes or meshes[-1].elements:
            meshes.append(_ObjMesh())
        mesh_material = material

    def new_object(name: bytes) -> None:
        nonlocal in_object
        objects.add(name)
        in_object = True
        new_mesh()

    for number, line in enumerate(data.split(b"\n"), start=1):
        words = line.split(None, 1)
        if not words:
            continue
        key, rest = words[0], words[1] if len(words) > 1 else b""
        if key == b"v":
            corners.append(rest)
        elif key in (b"f", b"l", b"p"):
            if not in_object:
                new_object(_DEFAULT_OBJECT)
            ends = [int(word.split(b"/")[0]) for word in rest.split(b"#")[0].split()]
            meshes[-1].add(key, [e - 1 if e > 0 else len(corners) + e for e in ends], number)
        elif key == b"o":
            name = rest.split()[0] if rest.split() else b""
            if name and name not in objects:
                new_object(name)
            elif name:
                in_object = True  # faces go on into the mesh being filled
        elif key == b"g":
            name = rest  # the whole rest of the line, trailing spaces too
            if name != group:
                new_object(name)
                group = name
        elif key == b"usemtl":
            name = rest.strip()
            if not name or name == material:
                continue
            material = name
            filled = bool(meshes) and meshes[-1].elements > 0
            if not meshes or (mesh_material not in (None, name) and filled):
                new_mesh()
            mesh_material = name
    parts = [part for mesh in meshes for part in mesh.parts()]
    if not any(count for count, _ in parts):
        return []
    table = np.array([[float(x) for x in c.split()[:3]] for c in corners], dtype=float)
    for mesh in meshes:
        mesh.refuse_lone(table)
    return [(count, table[np.unique(points)]) for count, points in parts]


class _ObjMesh:
    """The elements of one mesh of an OBJ's, by kind: assimp flags a mesh of `f`s alone as
    triangles (a face of one or two corners too), an `l` as lines and a `p` as points."""

    def __init__(self) -> None:
        self.elements = 0  # `f`, `l` and `p` lines
        self.triangles = 0
        # the corners of faces of 3 or more, of 2 and of 1, of lines and of points
        self.faces: list[int] = []
        self.short: dict[int, list[int]] = {1: [], 2: []}
        self.lines: list[int] = []
        self.points: list[int] = []
        self.first: dict[str, int] = {}  # the line of the first element of its lines, points

    def add(self, key: bytes, ends: list[int], number: int) -> None:
        self.elements += 1
        if key == b"l":
            self.lines += ends
        elif key == b"p":
            self.points += ends
        elif len(ends) >= 3:
            self.triangles += len(ends) - 2
            self.faces += ends
        elif ends:
            self.short[len(ends)] += ends
        if key != b"f" or len(ends) in (1, 2):
            self.first.setdefault("points" if key == b"p" or len(ends) == 1 else "lines", number)

    def refuse_lone(self, table: Array) -> None:
        """LonePart when its lines or its points, cut apart by assimp, are one point."""
        if not self.lines and not self.points:  # faces alone: one mesh, short ones in its hull
            return
        for kind, index in (
            ("lines", self.lines + self.short[2]),
            ("points", self.points + self.short[1]),
        ):
            if _lone(table, index):
                raise LonePart(str(self.first[kind]), f"its {kind[:-1]} at this line")

    def parts(self) -> list[tuple[int, list[int]]]:
        """Its triangles and corners of each mesh assimp makes of it (SortByPType: a mesh of
        several kinds is cut by each face's corners, one, two, or more)."""
        if not self.lines and not self.points:  # one kind: one mesh, a short face's corners too
            found = [(self.triangles, self.faces + self.short[2] + self.short[1])]
        else:
            found = [
                (self.triangles, self.faces),
                (0, self.lines + self.short[2]),
                (0, self.points + self.short[1]),
            ]
        return [(count, points) for count, points in found if points]


class LonePart(Exception):
    """A part of one point, at a place of the file: Tesseract's contact manager crashes on it."""

    def __init__(self, place: str, what: str) -> None:
        super().__init__(place, what)
        self.place, self.what = place, what

    def finding(self, display: str) -> Finding:
        """The mesh_not_a_mesh line of the file `display`."""
        return Finding(
            "mesh_not_a_mesh",
            display,
            self.place,
            f"{self.what} makes a part of one point, as Tesseract's reader cuts the mesh by its "
            "elements' kinds: Tesseract's contact manager crashes on it (SIGSEGV, 'The mesh is "
            "empty!') as the planning environment is built",
            "remove it, give each line two distinct ends and the points at least two, or export "
            "the collision mesh with triangles only",
        )


def _one_point(points: Array) -> bool:
    """Whether corners (K, 3), at least one, are one point in the single precision assimp
    reads (a PLY's double vertices 1 nm apart at 0.5 m are one)."""
    if not len(points):
        return False
    with np.errstate(all="ignore"):  # rounding keeps order: the least and most tell it
        low, high = (ends.astype(np.float32) for ends in (points.min(0), points.max(0)))
    return bool((low == high).all())


def _lone(table: Array, index: list[int]) -> bool:
    """Whether corners `index` of `table` are one point (one or more of them)."""
    return _one_point(table[index]) if index else False


def _ply_loose(data: bytes, display: str) -> list[Array]:
    """A PLY's faces of two corners and of one, a part each (assimp's SortByPType: the mesh cut
    by each face's corners), their corners; a vertex no face uses is none (assimp drops it)."""
    with np.errstate(all="ignore"):
        loaded: Any = trimesh.load(io.BytesIO(data), file_type="ply", force="mesh", process=False)
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


def _dae_parts(data: bytes) -> list[tuple[int, Array]]:
    """A COLLADA file's blocks of faces, one per instance, placed by their nodes (pycollada reads
    each `<polylist>`, `<polygons>`, `<trifans>` and `<tristrips>` as triangles, and trimesh
    keeps each block a geometry of its own)."""
    with np.errstate(all="ignore"):
        scene: Any = trimesh.load(io.BytesIO(data), file_type="dae", force="scene", process=False)
    parts = []
    for node in scene.graph.nodes_geometry:
        matrix, name = scene.graph[node]
        geometry = scene.geometry[name]
        faces = np.asarray(getattr(geometry, "faces", np.zeros((0, 3), dtype=int)))
        if len(faces):
            points = np.asarray(geometry.vertices, dtype=float)[np.unique(faces)]
            parts.append((len(faces), trimesh.transform_points(points, matrix)))
    return parts
