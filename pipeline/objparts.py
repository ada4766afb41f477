"""An OBJ's parts as assimp 5.2's OBJ reader fills its meshes (meshsplit.py says how it cuts
them), read without a Python object per vertex, face or mesh: the `v` lines parsed by numpy, each
element's corners kept in arrays, and each part's corners taken in one sort of them all.

A review measured the reader this replaces (a list of a mesh object, its lists and dicts per
mesh, the `v` lines kept as bytes and then as floats): an OBJ of 1 million groups of a face each
took 12.6 s and 1.2 GB (trimesh read it in 1.9 s and 0.4 GB), and a 30 MB OBJ with an `o` line
300 MB more than its bytes. The parts are the same arrays, bit for bit, in the same order
(tests/test_meshsplit.py).
"""

from __future__ import annotations

import re
from array import array
from typing import NamedTuple

import numpy as np

from pipeline.objlines import plain_faces, vertex_table

Array = np.ndarray
_WS = rb"[ \t\r\x0b\x0c]"  # what bytes.split() splits at, in a line
_STATEMENT = re.compile(rb"(?m)^" + _WS + rb"*(f|l|p|o|g|usemtl)(?:" + _WS + rb"([^\n]*))?$")
_ELEMENT = re.compile(rb"(?m)^" + _WS + rb"*[flp](?:" + _WS + rb"|$)")
_SPLIT = re.compile(rb"(?m)^" + _WS + rb"*(?:o|g|usemtl)(?:" + _WS + rb"|$)")
_VERTEX = re.compile(rb"(?m)^" + _WS + rb"*v(?:" + _WS + rb"([^\n]*))?$")
# a `v` line not starting `v` and a space or a tab: the vertices are read line by line
_ODD_VERTEX = re.compile(rb"(?m)^(?:" + _WS + rb"+v(?:" + _WS + rb"|$)|v(?:[\r\x0b\x0c]|$))")
_DEFAULT_OBJECT = b"defaultobject"  # assimp's name of the object faces before any `o` go to
# an element's kind: a face of 3 corners or more, of 2, of 1, a line (`l`), points (`p`)
_FACE, _FACE2, _FACE1, _LINE, _POINT = range(5)
# its part in its mesh: the mesh's only one, or, in a mesh holding an `l` or a `p` (assimp's
# SortByPType), the triangles', the lines' or the points'
_SLOT = np.array([0, 1, 2, 1, 2])
_FACE_KINDS = (_FACE, _FACE1, _FACE2, _FACE)  # of a face by its corners (0: no element kept)
_FAR = 1 << 62  # an index past int64's range: out of every table, as it was
Parts = list[tuple[int, Array]]
_Firsts = dict[tuple[int, str], int]  # (mesh, "lines" | "points"): its first element's byte


class LonePart(Exception):
    """A part of one point, at a place of the file: Tesseract's contact manager crashes on it."""

    def __init__(self, place: str, what: str) -> None:
        super().__init__(place, what)
        self.place, self.what = place, what


def one_point(points: Array) -> bool:
    """Whether corners (K, 3), at least one, are one point in the single precision assimp
    reads (a PLY's double vertices 1 nm apart at 0.5 m are one)."""
    if not len(points):
        return False
    with np.errstate(all="ignore"):  # rounding keeps order: the least and most tell it
        low, high = (ends.astype(np.float32) for ends in (points.min(0), points.max(0)))
    return bool((low == high).all())


def one_point_parts(points: Array, starts: Array) -> Array:
    """one_point of each part (points[starts[i]:starts[i + 1]], none empty), as an array."""
    if not len(starts) - 1:
        return np.zeros(0, dtype=bool)
    with np.errstate(all="ignore"):
        low = np.minimum.reduceat(points, starts[:-1], axis=0).astype(np.float32)
        high = np.maximum.reduceat(points, starts[:-1], axis=0).astype(np.float32)
    return np.asarray((low == high).all(axis=1))


class _Vertices:
    """An OBJ's `v` lines: where each starts, and the table (V, 3) of their first three
    numbers as float() reads them (ValueError when one is no number, or a row is short)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts: Array | None = None

    def before(self, at: int) -> int:
        """How many `v` lines start before byte `at`."""
        if self.starts is None:
            self.starts = np.array([found.start() for found in _VERTEX.finditer(self.data)])
        return int(np.searchsorted(self.starts, at))

    def table(self) -> Array:
        fast = vertex_table(self.data) if _ODD_VERTEX.search(self.data) is None else None
        if fast is not None:
            return fast
        rows = [found[1] or b"" for found in _VERTEX.finditer(self.data)]
        return np.array([[float(x) for x in row.split()[:3]] for row in rows], dtype=float)


def one_mesh(data: bytes) -> bool:
    """Whether an OBJ without lines or points (OBJ_LOOSE) is one mesh as obj_parts reads it: no
    object, group or material statement after its first face."""
    face = _ELEMENT.search(data)
    return face is None or _SPLIT.search(data, face.start()) is None


def obj_parts(data: bytes) -> Parts:
    """An OBJ's meshes as assimp 5.2's OBJ reader fills them: triangles and corners of each; a
    mesh holding an `l` or a `p` cut by its elements' kinds (assimp's SortByPType), its lines
    (`l`, `f` of two corners) and its points (`p`, `f` of one) parts of no triangles.
    ValueError or IndexError for a statement it cannot follow; LonePart for lines or points
    that are one point."""
    ends, sizes, kinds, owners = array("q"), array("q"), array("b"), array("q")
    first: _Firsts = {}
    vertices = _Vertices(data)
    meshes, elements = 0, 0  # meshes started, the last one's elements
    material: bytes | None = None  # the last `usemtl`'s
    mesh_material: bytes | None = None  # the material of the mesh being filled
    objects: set[bytes] = set()
    in_object, group = False, b""

    def new_mesh() -> None:
        nonlocal meshes, elements, mesh_material
        # one without elements makes no part: kept, not another per `g` line between no faces
        if not meshes or elements:
            meshes, elements = meshes + 1, 0
        mesh_material = material

    def new_object(name: bytes) -> None:
        nonlocal in_object
        objects.add(name)
        in_object = True
        new_mesh()

    plain = plain_faces(data)  # most faces: read by numpy, their meshes told here
    plain_owners, starts = array("q"), map(int, plain.starts)  # one at a time
    following = next(starts, -1)
    for found in _STATEMENT.finditer(data):
        if found.start() == following:  # a plain face's line
            following = next(starts, -1)
            if not in_object:
                new_object(_DEFAULT_OBJECT)
            elements += 1
            plain_owners.append(meshes - 1)
            continue
        key, rest = found[1], (found[2] or b"").lstrip()
        if key in (b"f", b"l", b"p"):
            if not in_object:
                new_object(_DEFAULT_OBJECT)
            said = [int(word.split(b"/")[0]) for word in rest.split(b"#")[0].split()]
            if said and min(said) <= 0:
                seen = vertices.before(found.start())
                said = [e - 1 if e > 0 else seen + e for e in said]
            else:
                said = [e - 1 for e in said]
            elements += 1
            count = len(said)
            kind = _LINE if key == b"l" else _POINT if key == b"p" else _FACE_KINDS[min(count, 3)]
            if key != b"f" or count in (1, 2):
                where = "points" if key == b"p" or count == 1 else "lines"
                first.setdefault((meshes - 1, where), found.start())
            if count:
                try:
                    ends.extend(said)
                except OverflowError:  # out of every table: as far, an IndexError below
                    ends.extend(max(-_FAR, min(e, _FAR)) for e in said)
                sizes.append(count)
                kinds.append(kind)
                owners.append(meshes - 1)
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
            if not meshes or (mesh_material not in (None, name) and elements > 0):
                new_mesh()
            mesh_material = name
    read = _Elements(
        np.concatenate((_int64(ends), plain.corners)),
        np.concatenate((_int64(sizes), plain.sizes)),
        np.concatenate((np.frombuffer(kinds, np.int8), np.full(len(plain.sizes), _FACE, np.int8))),
        np.concatenate((_int64(owners), _int64(plain_owners))),
        meshes,
    )
    return _parts(data, vertices, read, first)


def _int64(values: array[int]) -> Array:
    """An array('q')'s numbers, as numpy's (no copy)."""
    return np.frombuffer(values, dtype=np.int64)


class _Elements(NamedTuple):
    """Every element's corners (0-based, as said) and each one's count, kind and mesh, as
    arrays (in no order: a part's corners are sorted)."""

    ends: Array
    sizes: Array
    kinds: Array
    owners: Array
    meshes: int


def _parts(data: bytes, vertices: _Vertices, found: _Elements, first: _Firsts) -> Parts:
    """Each part's triangles and corners, in order of the meshes (triangles, lines, points):
    its corners those of the table, once each, in the order of their index."""
    kinds, owners, sizes = found.kinds.astype(np.int64), found.owners, found.sizes
    faces = kinds == _FACE
    triangles = np.bincount(owners[faces], weights=sizes[faces] - 2, minlength=found.meshes)
    if not triangles.any():
        return []
    triangles = triangles.astype(np.int64)
    table = vertices.table()
    if not len(table):
        raise IndexError("a corner and no vertex")
    loose = np.zeros(found.meshes, dtype=bool)  # a mesh holding an `l` or a `p`: cut
    loose[owners[kinds >= _LINE]] = True
    part = owners * 3 + np.where(loose[owners], _SLOT[kinds], 0)  # mesh, slot
    corner_part = np.repeat(part, sizes)
    ends = found.ends
    inside = (ends >= -len(table)) & (ends < len(table))
    _refuse_lone(data, table, ends, inside, corner_part, first)
    if not inside.all():
        raise IndexError("a corner past the last vertex")
    span = 2 * len(table)  # each part's corners, once each, in order of their index
    keys = np.sort(corner_part * span + (ends + len(table)))  # np.unique's hash took 3 s of 3 M
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
    ids, index = keys // span, keys % span - len(table)
    points = table[index]
    cut = np.flatnonzero(np.diff(ids)) + 1
    bounds = np.concatenate(([0], cut, [len(ids)]))
    counts = np.where(ids[bounds[:-1]] % 3 == 0, triangles[ids[bounds[:-1]] // 3], 0)
    return [
        (int(count), points[start:stop])
        for count, start, stop in zip(counts.tolist(), bounds[:-1], bounds[1:], strict=True)
    ]


def _refuse_lone(
    data: bytes, table: Array, ends: Array, inside: Array, corner_part: Array, first: _Firsts
) -> None:
    """LonePart at the first of the meshes' lines or points (in order) that are one point;
    IndexError when a corner before it is past the table."""
    cut = corner_part % 3 > 0  # the corners of lines and points, in meshes holding them
    if not cut.any():
        return
    order = np.argsort(corner_part[cut], kind="stable")
    ids = corner_part[cut][order]
    rows = table[np.where(inside[cut], ends[cut], 0)[order]]
    starts = np.concatenate(([0], np.flatnonzero(np.diff(ids)) + 1, [len(ids)]))
    outside = np.add.reduceat(~inside[cut][order], starts[:-1]) > 0
    lone = one_point_parts(rows, starts) & ~outside
    at = np.flatnonzero(outside | lone)
    if not len(at):
        return
    if outside[at[0]]:
        raise IndexError("a corner past the last vertex")
    mesh, slot = divmod(int(ids[starts[at[0]]]), 3)
    kind = ("lines", "points")[slot - 1]
    place = first[(mesh, kind)]
    raise LonePart(str(data.count(b"\n", 0, place) + 1), f"its {kind[:-1]} at this line")
