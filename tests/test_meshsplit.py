"""The parts of a collision mesh file as the planner's reader cuts it (pipeline/meshsplit.py)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline import meshsplit, objparts
from pipeline.meshsplit import hull_parts, part_points
from pipeline.objlines import plain_faces
from pipeline.spheres.loose import OBJ_LOOSE
from pipeline.spheres.meshlib import trimesh
from pipeline.urdf import Mesh
from tests.conftest import peak_memory
from tests.meshfiles import PARTED, cube_obj

_V = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 1 1 0.5\nv 1e-3 2.5E+2 -.5\n"
# name: (OBJ, each part's triangles and vertex numbers, or None: read whole), as the reader
# before objparts.py (a Python list per mesh and per `v` line) read them
OBJ_PARTS: dict[str, tuple[str, list[tuple[int, list[int]]] | None]] = {
    "objects_groups_materials": (
        _V + "o a\nf 1 2 3\ng b\nf 2 3 4\nusemtl m\nf 4 5 6\nusemtl n\nf 1 5 6\n",
        [(1, [1, 2, 3]), (2, [2, 3, 4, 5, 6]), (1, [1, 5, 6])],
    ),
    "a_mesh_per_material": (
        "usemtl A\n" + _V + "f 1 2 3\nusemtl B\nf 4 5 6\n",
        [(1, [1, 2, 3]), (1, [4, 5, 6])],
    ),
    "lines_and_points_beside_faces": (
        _V + "o a\nf 1 2 3\nl 4 5\np 6 1\n",
        [(1, [1, 2, 3]), (0, [4, 5]), (0, [1, 6])],
    ),
    "short_faces_among_faces": (
        _V + "g a\nf 1 2 3\nf 4 5\nf 6\ng b\nf 1 2 4\n",
        [(1, [1, 2, 3, 4, 5, 6]), (1, [1, 2, 4])],
    ),
    "short_faces_beside_a_line": (
        _V + "g a\nf 1 2 3\nf 4 5\nl 1 6\nf 6 4\np 2 3\n",
        [(1, [1, 2, 3]), (0, [1, 4, 5, 6]), (0, [2, 3])],
    ),
    "negative_indices": (
        _V + "o a\nf -6 -5 -4\no b\nv 2 2 2\nf -1 -2 -3\n",
        [(1, [1, 2, 3]), (1, [5, 6, 7])],
    ),
    "slashes_comments_crlf": (
        _V.replace("\n", "\r\n") + "o a\r\nf 1/1/1 2//2 3/3 # c\r\n o b\r\nf 4 5 6 6\r\n",
        [(1, [1, 2, 3]), (2, [4, 5, 6])],
    ),
    "vertex_colours": (
        _V.replace("\n", " 0.5 0.25 1\n") + "o a\nf 1 2 3\no b\nf 4 5 6\n",
        [(1, [1, 2, 3]), (1, [4, 5, 6])],
    ),
    "vertex_lines_indented": (
        _V.replace("v ", " v\t") + "o a\nf 1 2 3\no b\nf 4 5 6\n",
        [(1, [1, 2, 3]), (1, [4, 5, 6])],
    ),
    "a_number_only_float_reads": (
        _V + "v 1_0 0 2\no a\nf 1 2 7\no b\nf 4 5 6\n",
        [(1, [1, 2, 7]), (1, [4, 5, 6])],
    ),
    "byte_order_mark": (
        "\ufeff" + _V + "f 1 2 3\no b\nf 4 5 6\n",
        [(1, [1, 2, 3]), (1, [4, 5, 6])],
    ),
    "splits_before_the_faces": ("o a\ng b\nusemtl m\n" + _V + "f 1 2 3\nf 4 5 6\n", None),
    "a_corner_no_number": (_V + "o a\nf 1 2 x\no b\nf 4 5 6\n", None),
    "a_corner_past_the_vertices": (_V + "o a\nf 1 2 7\no b\nf 4 5 6\n", None),
    "a_vertex_no_number": (_V + "v 1 2 z\no a\nf 1 2 3\no b\nf 4 5 6\n", None),
}


def _table(data: bytes) -> np.ndarray:
    """The OBJ's `v` lines' first three numbers, as float() reads them."""
    lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
    rows = [line.split()[1:4] for line in lines if line.split()[:1] == [b"v"]]
    return np.array([[float(x) for x in row] for row in rows])


@pytest.mark.parametrize("name", sorted(OBJ_PARTS))
def test_an_objs_parts_are_its_vertices_by_number(name: str) -> None:
    """Each part's corners are the vertices its elements name, once each, in their order, to
    the bit (numpy parses the `v` lines it can, float() the others)."""
    text, expected = OBJ_PARTS[name]
    data = text.encode()
    parts = part_points(data, "obj")
    if expected is None:
        assert parts is None
        return
    assert parts is not None
    table = _table(data)
    found = [(count, points.shape, points.tobytes()) for count, points in parts]
    wanted = [(n, (len(v), 3), table[[i - 1 for i in v]].tobytes()) for n, v in expected]
    assert found == wanted


def test_an_objs_group_changes_without_faces_make_no_mesh_each() -> None:
    """A `g` line between no faces starts no part: an 8 MB OBJ of 2 million such lines beside
    two triangles made 2 million meshes, 11 s and 1.6 GB in `pipeline validate` and the urdf
    step (trimesh read it in 0.2 s), so the 256 MiB a mesh may hold asked some 50 GB."""
    text = cube_obj(["o first", 0.0, *["g a", "g b"] * 5_000, "usemtl m", "g c", 0.4])
    parts = part_points(text.encode(), "obj")
    assert parts is not None
    assert sorted((count, len(points)) for count, points in parts) == [(12, 8), (12, 8)]


def _peak(data: bytes) -> int:
    """The most memory (bytes) part_points held while reading an OBJ."""
    parts, peak = peak_memory(lambda: part_points(data, "obj"))
    assert parts is not None
    return peak


def test_an_objs_vertices_are_read_without_a_python_object_each() -> None:
    """A review: a 30 MB OBJ with an `o` line cost 300 MB more (trimesh: 40 MB), its `v` lines
    kept as bytes, then as lists of floats; here 100,000 vertices (2.3 MB) of three objects
    peaked at 12.3 times the file's bytes, 6.9 times with numpy parsing them."""
    rows = "".join(f"v {i * 1e-3!r} {i * 2e-3!r} {(i % 7) * 0.5!r}\n" for i in range(100_000))
    data = (rows + "o a\nf 1 2 3\no b\nf 4 5 6\no c\nf 7 8 9\n").encode()
    assert _peak(data) < 9 * len(data)


def test_an_objs_meshes_are_held_in_arrays() -> None:
    """A review: an OBJ of a million groups of a face each took 12.6 s and 1.2 GB (trimesh:
    1.9 s, 0.4 GB), a mesh object with its lists and dicts per group; 20,000 of them peaked
    at 1,372 bytes a group, 608 with each element's corners in arrays."""
    rows = "".join(f"v {i * 1e-3!r} 0 {i % 3}\n" for i in range(1000))
    faces = "".join(f"g g{k}\nf {k % 998 + 1} {k % 998 + 2} {k % 998 + 3}\n" for k in range(20_000))
    assert _peak((rows + faces).encode()) < 900 * 20_000


_DAE = sorted(name for name in PARTED if name.endswith(".dae"))


@pytest.mark.parametrize("name", _DAE)
def test_a_collada_files_blocks_are_read_from_the_scene_its_triangles_came_from(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trimesh reads a COLLADA file once (a review: collided_parts loaded a file of several
    blocks a second time, 0.43 s of a 9.7 MB one's 1.1 s), and each block's part is its
    instance's vertices its faces name, placed by its nodes, as a scene read apart places them,
    to the bit; each <lines> after them, as mesh_parts read it."""
    text = PARTED[name][0]
    (tmp_path / name).write_text(text)
    scene: Any = trimesh.load(io.BytesIO(text.encode()), file_type="dae", force="scene")
    expected = []
    for node in scene.graph.nodes_geometry:
        matrix, geometry = scene.graph[node]
        faces = np.asarray(getattr(scene.geometry[geometry], "faces", np.zeros((0, 3), int)))
        if len(faces):
            corners = np.asarray(scene.geometry[geometry].vertices)[np.unique(faces)]
            expected.append(trimesh.transform_points(corners, matrix).tobytes())
    loads = []
    real = trimesh.load
    monkeypatch.setattr(trimesh, "load", lambda *a, **k: loads.append(1) or real(*a, **k))
    parts = hull_parts(tmp_path, Mesh(name, name), "robot")
    assert len(loads) == 1
    if len(expected) > 1:  # several blocks: a part each, then the <lines>
        assert [part.tobytes() for part in parts[: len(expected)]] == expected


# an `f` line: whether numpy reads it (a plain face), and its vertex numbers as said
PLAIN_FACES = {
    "f 1 2 3": True,
    "f 1/2/3 4//5 6/7 8/": True,
    "f\t007 8 9 10 11": True,
    "f 1 2 3\r": True,
    "f 1\r2 3  ": True,
    "f 123456789012345678 1 2": True,
    "f 1234567890123456789 1 2": False,  # 19 digits: read line by line
    "f 0 1 2": False,  # 0: counted back from the vertices read
    "f 1 00 2": False,
    "f 1 2": False,  # two corners: a line (loose.py)
    "f 1 2 3 # c": False,
    "f 1 2\x0b3": False,
    "f 1/a 2 3": False,
    "f /1 2 3": False,
    "f +1 2 3": False,
    "f 1 2 -3": False,
    " f 1 2 3": False,
    "fx 1 2 3": False,
}


def test_plain_faces_are_read_by_numpy_as_int_reads_each_line() -> None:
    """objlines.plain_faces: the lines it reads and their corners, as objparts.py's reading of
    each line (int() of each word's first number) gives them; the rest left to that reading."""
    lines = sorted(PLAIN_FACES)
    data = ("v 0 0 0\n" + "\n".join(lines) + "\n").encode()
    found = plain_faces(data)
    starts = [data.index(b"\n" + line.encode() + b"\n") + 1 for line in lines]
    plain = [line for line in lines if PLAIN_FACES[line]]
    assert found.starts.tolist() == [
        at for at, line in zip(starts, lines, strict=True) if PLAIN_FACES[line]
    ]
    assert found.sizes.tolist() == [len(line.split()) - 1 for line in plain]
    said = [int(word.split("/")[0]) - 1 for line in plain for word in line.split()[1:]]
    assert found.corners.tolist() == said


def test_an_objs_plain_faces_are_not_read_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A review: a 3-object OBJ of 8.7 MB took 0.59 s more to cut into its parts after its
    read; its faces, read line by line, were most of it (a 14 MB one: 0.46 s, 0.40 s now)."""
    said: list[bytes] = []  # the words int() read

    def counted(x: Any) -> int:
        said.extend([x] if isinstance(x, bytes) else [])
        return int(x)

    monkeypatch.setattr(objparts, "int", counted, raising=False)
    rows = "".join(f"v {i} {i % 3} {i % 5}\n" for i in range(300))
    faces = ["o a", *(f"f {k + 1}/1 {k + 2}/2 {k + 3}/3" for k in range(100))]
    faces += ["o b", *(f"f {k + 101} {k + 102} {k + 103} {k + 104}" for k in range(100))]
    parts = part_points((rows + "\n".join(faces) + "\n").encode(), "obj")
    assert parts is not None
    assert [(count, len(points)) for count, points in parts] == [(100, 102), (200, 103)]
    assert said == []


# a line: whether it is an OBJ line, point or face of at most two corners (loose.OBJ_LOOSE)
LOOSE_LINES = {
    "l 1 2": True,
    "p 1": True,
    "\tl 1 2": True,
    "f 1 2": True,
    "f 1/1 2//2\r": True,
    "f 1 #2 3": True,
    "f 1 2 # 3": True,
    "f": True,
    "f  ": True,
    "f 1 2 3": False,
    "f 1/1/1 2/2/2 3/3/3": False,
    "f 1 2 3 # c": False,
    "f 1 2\x0b3": False,
    "lx 1 2": False,
    "v 1 2": False,
}


@pytest.mark.parametrize("line", sorted(LOOSE_LINES))
def test_an_objs_lines_and_points_are_found_as_before(line: str) -> None:
    """OBJ_LOOSE's words are taken without backtracking (a 14 MB OBJ of 150 k faces: 0.28 s
    -> 0.10 s a search, made in mesh_parts and in part_points); the lines it finds, as before."""
    data = f"v 0 0 0\n{line}\nv 1 1 1\n".encode()
    assert (OBJ_LOOSE.search(data) is not None) == LOOSE_LINES[line]


def test_an_obj_is_searched_for_lines_and_points_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """part_points searched an OBJ of no object, group or material twice for a line or a
    point (a 30 MB one: 0.26 s each)."""
    searched: list[int] = []

    class Counted:
        def search(self, data: bytes) -> re.Match[bytes] | None:
            searched.append(len(data))
            return OBJ_LOOSE.search(data)

    monkeypatch.setattr(meshsplit, "OBJ_LOOSE", Counted())
    text = cube_obj([0.0, "v 0 0 0", "l 1 9"])
    assert part_points(text.encode(), "obj") is not None
    assert len(searched) == 1


_PLY = sorted(name for name in PARTED if name.endswith(".ply"))


@pytest.mark.parametrize("name", _PLY)
def test_a_plys_lines_are_read_from_the_mesh_its_triangles_came_from(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trimesh reads a PLY once (a review: collided_parts loaded a PLY holding a line a second
    time, 2.2 s of a 17.6 MB one's 5.2 s), and its parts after the whole are its faces of two
    corners' and of one's vertices, as a mesh read apart gives them, to the bit."""
    text = PARTED[name][0]
    (tmp_path / name).write_text(text)
    apart: Any = trimesh.load(io.BytesIO(text.encode()), file_type="ply", process=False)
    lists = apart.metadata["_ply_raw"]["face"]["data"]["vertex_indices"]
    vertices = np.asarray(apart.vertices, dtype=np.float64)
    expected: list[bytes] = []
    for size in (1, 2):
        index = [int(i) for corners in lists if len(corners) == size for i in corners]
        expected += [vertices[np.unique(index)].tobytes()] if index else []
    loads = []
    real = trimesh.load
    monkeypatch.setattr(trimesh, "load", lambda *a, **k: loads.append(1) or real(*a, **k))
    parts = hull_parts(tmp_path, Mesh(name, name), "robot")
    assert len(loads) == 1
    assert [part.tobytes() for part in parts[1:]] == expected
