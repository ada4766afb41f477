"""A collision mesh file's triangles, lines and points: empty, non-finite or unreadable meshes
are refused; lines and points are read exactly and covered by the spheres."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.findings import ContractError
from pipeline.spheres import build_spheres
from pipeline.spheres.geometry import LinkGeometry, load_link_geometry
from pipeline.spheres.prove import prove_patches
from pipeline.spheres.triangles import mesh_parts
from pipeline.urdf import Mesh, load_robot
from tests.conftest import REPO

Array = np.ndarray


def mesh_triangles(data: bytes, mesh: Mesh, display: str) -> np.ndarray:
    """The triangles mesh_parts reads."""
    return mesh_parts(data, mesh, display).triangles


@pytest.mark.parametrize(
    ("data", "code", "message"),
    [
        (b"# no faces\nv 0 0 0\n", "mesh_empty", "holds no triangles"),
        (
            b"",
            "mesh_empty",
            "is empty (0 bytes): no mesh reader can load it, Tesseract's refuses it (on a visual "
            "too), and with it the URDF",
        ),
        (
            b"v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n",
            "mesh_not_a_mesh",
            "has a triangle whose corner is not a finite number (NaN, inf)",
        ),
        (b"v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2 3\n", "mesh_empty", "holds no triangles"),
        (
            b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv inf 0 0\nf 1 2 3\nl 1 4\n",
            "mesh_not_a_mesh",
            "has a line or point whose corner is not a finite number (NaN, inf)",
        ),
    ],
    ids=["no-faces", "0-bytes", "nan", "lines-only", "line-to-inf"],
)
def test_mesh_empty_or_mesh_not_a_mesh_says_whether_a_mesh_is_empty_or_not_finite(
    data: bytes, code: str, message: str
) -> None:
    """It said 'holds no finite triangles' of a mesh of thousands with one NaN corner; a corner
    at NaN is mesh_not_a_mesh, as the urdf step calls it (it was mesh_empty here)."""
    with pytest.raises(ContractError) as caught:
        mesh_triangles(data, Mesh("x.obj", "meshes/x.obj"), "robots/r/meshes/x.obj")
    [finding] = caught.value.findings
    assert (finding.code, finding.message) == (code, message)


def test_obj_with_a_byte_order_mark_is_not_mesh_unreadable() -> None:
    """A UTF-8 BOM before the first vertex made trimesh fail (IndexError): mesh_unreadable."""
    obj = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
    plain = mesh_triangles(obj, Mesh("x.obj", "meshes/x.obj"), "x.obj")
    marked = mesh_triangles(b"\xef\xbb\xbf" + obj, Mesh("x.obj", "meshes/x.obj"), "x.obj")
    assert np.array_equal(plain, marked)


TETRA_OBJ = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 50 0 0\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"
TETRA_PLY = (
    b"ply\nformat ascii 1.0\nelement vertex 5\nproperty float x\nproperty float y\n"
    b"property float z\nelement face %d\nproperty list uchar int vertex_indices\nend_header\n"
    b"0 0 0\n1 0 0\n0 1 0\n0 0 1\n50 0 0\n3 0 1 2\n3 0 1 3\n3 0 2 3\n3 1 2 3\n"
)


def _dae(extra: str) -> bytes:
    """A COLLADA tetrahedron (vertex 4 at x = 50 used by no triangle) with `extra` beside it."""
    head = '<input offset="0" semantic="VERTEX" source="#v"/>'
    return f"""<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
<asset><unit meter="1"/></asset>
<library_geometries><geometry id="g"><mesh>
<source id="p"><float_array id="a" count="15">0 0 0 1 0 0 0 1 0 0 0 1 50 0 0</float_array>
<technique_common><accessor source="#a" count="5" stride="3"><param name="X" type="float"/>
<param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common>
</source>
<vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
<triangles count="4">{head}<p>0 1 2 0 1 3 0 2 3 1 2 3</p></triangles>
{extra.format(head=head)}
</mesh></geometry></library_geometries>
<library_visual_scenes><visual_scene id="s"><node id="n"><instance_geometry url="#g"/></node>
</visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene>
</COLLADA>""".encode()


LINE = [[0.0, 0.0, 0.0], [50.0, 0.0, 0.0]]
POINT = [[50.0, 0.0, 0.0], [50.0, 0.0, 0.0]]
READ = [
    ("obj-line", "x.obj", TETRA_OBJ + b"l 1 5\n", [LINE]),
    ("obj-point", "x.obj", TETRA_OBJ + b"p 5\n", [POINT]),
    ("obj-face-of-two", "x.obj", TETRA_OBJ + b"f 1 5\n", [LINE]),
    ("obj-face-of-one", "x.obj", TETRA_OBJ + b"f 5\n", [POINT]),
    ("obj-negative", "x.obj", TETRA_OBJ + b"l -5/1 -1/1\n", [LINE]),
    ("obj-polyline", "x.obj", TETRA_OBJ + b"l 2 1 5\n", [[[1.0, 0, 0], [0, 0, 0]], LINE]),
    ("ply-face-of-two", "x.ply", TETRA_PLY % 5 + b"2 0 4\n", [LINE, POINT]),
    ("ply-face-of-one", "x.ply", TETRA_PLY % 5 + b"1 4\n", [POINT, POINT]),
    ("ply-unused-vertex", "x.ply", TETRA_PLY % 4, [POINT]),
    ("dae-lines", "x.dae", _dae('<lines count="1">{head}<p>0 4</p></lines>'), [LINE]),
    (
        "dae-lines-two",
        "x.dae",
        _dae('<lines count="2">{head}<p>0 4 4 1</p></lines>'),
        [LINE, [[50.0, 0, 0], [1.0, 0, 0]]],
    ),
]


@pytest.mark.parametrize(
    ("name", "data", "segments"), [r[1:] for r in READ], ids=[r[0] for r in READ]
)
def test_mesh_lines_or_points_are_read_exactly(name: str, data: bytes, segments: list) -> None:
    """Tesseract (assimp) collides with these; trimesh skipped them: the spheres missed x = 50.
    They are read as segments (a point: two equal ends), OBJ indices counted as OBJ does."""
    parts = mesh_parts(data, Mesh(name, f"meshes/{name}"), f"robots/r/meshes/{name}")
    assert parts.segments.tolist() == segments and len(parts.triangles) == 4


URDF = """<robot name="r"><link name="a"><collision><origin xyz="0.1 0.2 0" rpy="0 0.3 0.5"/>
<geometry><mesh filename="package://r/meshes/{name}" scale="0.01 0.01 0.01"/></geometry>
</collision></link><link name="b"/>
<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>"""
FAST = {"defaults": {"max_spheres": 4, "rounds": 2, "sample_divisions": 10, "grid_points": 4000}}


def fit_one_mesh(tmp_path: Path, name: str, data: bytes) -> tuple[LinkGeometry, Array, Array]:
    """Link `a`'s geometry (one mesh, placed and scaled) and the centres and radii the build
    writes for it, built twice to the same bytes."""
    folder = tmp_path / "robots" / "r"
    (folder / "meshes").mkdir(parents=True)
    (folder / "meshes" / name).write_bytes(data)
    (folder / "robot.urdf").write_text(URDF.format(name=name))
    (folder / "spheres.settings.json").write_text(json.dumps(FAST))
    robot = load_robot(folder, tmp_path)
    written, _ = build_spheres(robot, folder, tmp_path, None)
    assert build_spheres(robot, folder, tmp_path, None)[0] == written  # deterministic
    spheres = json.loads(written)["links"]["a"]["spheres"]
    centers = np.array([s["center"] for s in spheres])
    radii = np.array([s["radius"] for s in spheres])
    return load_link_geometry(robot.links[0], folder, "robots/r"), centers, radii


@pytest.mark.parametrize(("name", "data"), [r[1:3] for r in READ], ids=[r[0] for r in READ])
def test_mesh_lines_or_points_are_covered_by_the_written_spheres(
    tmp_path: Path, name: str, data: bytes
) -> None:
    """The spheres the build writes hold each segment's ends and midpoint, and prove it whole."""
    geometry, centers, radii = fit_one_mesh(tmp_path, name, data)
    [segments] = [p for p in geometry.patches if p.kind == "segment"]
    ends = segments.params
    for point in (ends[:, 0], ends[:, 1], ends.mean(axis=1)):
        gap = np.linalg.norm(point[:, None] - centers[None], axis=2) - radii[None]
        assert (gap.min(axis=1) <= 0).all()
    assert prove_patches(segments, centers, radii)[2] is None  # no piece left unproven


@pytest.mark.parametrize(
    ("name", "data", "place"),
    [
        ("x.obj", TETRA_OBJ + b"l 1 9\n", "10"),
        ("x.obj", TETRA_OBJ + b"p -6\n", "10"),
        ("x.obj", TETRA_OBJ + b"f 0 1\n", "10"),
        ("x.dae", _dae('<lines count="0">{head}<p>0 4</p></lines>'), "10"),
        ("x.dae", _dae('<linestrips count="1">{head}<p>0 4 1</p></linestrips>'), "10"),
        ("x.dae", _dae('<polylist count="1">{head}<vcount>2</vcount><p>0 4</p></polylist>'), "10"),
        ("x.dae", _dae('<polygons count="1">{head}<p>0 4</p></polygons>'), "10"),
        ("x.dae", _dae('<trifans count="1">{head}<p>0 4</p></trifans>'), "10"),
        ("x.dae", _dae('<trifans count="1">{head}<p>4</p></trifans>'), "10"),
        ("x.ply", TETRA_PLY % 5 + b"2 0 7\n", ""),
    ],
    ids=[
        "obj-line-past-the-end",
        "obj-point-before-the-first",
        "obj-face-of-two-with-0",
        "dae-lines-count-0",
        "dae-linestrips",
        "dae-polylist-of-two",
        "dae-polygons-of-two",
        "dae-trifans-fan-of-two",
        "dae-trifans-fan-of-one",
        "ply-face-of-two-past-the-end",
    ],
)
def test_mesh_lines_or_points_still_refused(name: str, data: bytes, place: str) -> None:
    """What cannot be read as exactly as the triangles: pycollada drops a <linestrips> with its
    whole geometry and triangulates short polygons its own way; trimesh places a node's triangles
    otherwise than a float64 product places its lines; an index naming no vertex."""
    with pytest.raises(ContractError) as caught:
        mesh_parts(data, Mesh(name, f"meshes/{name}"), f"robots/r/meshes/{name}")
    [finding] = caught.value.findings
    assert (finding.code, finding.place) == ("mesh_lines_or_points", place)
    # the fix does not name what is refused (it said "with triangles and <lines> only")
    assert not any(kind in finding.hint for kind in ("<lines>", "<linestrips>", "<poly", "point"))
    if name.endswith(".dae"):
        assert finding.hint == "export the collision mesh again with triangles only"


def test_dae_lines_are_placed_as_the_triangles_are() -> None:
    """Under nested, rotated nodes a line's end is where trimesh puts the triangle corner it
    shares, to the bit: both are placed by the nodes' matrices as trimesh multiplies them."""
    data = _dae('<lines count="1">{head}<p>0 4</p></lines>').replace(
        b'<node id="n">',
        b'<node id="top"><translate>0.1 0.2 0.3</translate><rotate>0.3 0.5 0.8 37</rotate>'
        b'<node id="n"><rotate>1 0 0 21</rotate><scale>1 2 3</scale>',
    )
    data = data.replace(b"</node>", b"</node></node>")
    parts = mesh_parts(data, Mesh("x.dae", "meshes/x.dae"), "robots/r/meshes/x.dae")
    start = parts.segments[0, 0]
    assert start.any() and (parts.triangles == start).all(axis=2).any()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("x.obj", TETRA_OBJ.replace(b"v 50 0 0\n", b"") + b"f 1 2 3 4\n"),
        ("x.dae", _dae('<polygons count="1">{head}<p>0 1 2</p></polygons>')),
        ("x.dae", _dae('<tristrips count="1">{head}<p>0 1 2 3</p></tristrips>')),
        (
            "x.ply",
            (TETRA_PLY % 5)
            .replace(b"5\nproperty float x", b"4\nproperty float x")
            .replace(b"50 0 0\n", b"")
            .replace(b"face 5", b"face 4"),
        ),
    ],
    ids=["obj-quad", "dae-polygons", "dae-tristrips", "ply-triangles"],
)
def test_surfaces_of_polygons_are_not_mesh_lines_or_points(name: str, data: bytes) -> None:
    """Faces of three or more corners are read (an unused COLLADA or OBJ vertex is dropped)."""
    tri = mesh_triangles(data, Mesh(name, f"meshes/{name}"), f"robots/r/meshes/{name}")
    assert tri.shape[1:] == (3, 3) and tri.max() <= 1.0


def test_a_collision_dae_with_a_float_array_over_10_mb_is_read() -> None:
    """The check for lines and points reads a COLLADA mesh as the urdf step does: one text node
    over libxml2's default 10 MB (a real trunk mesh's coordinates) is no invalid_xml."""
    path = REPO / "robots" / "abb_irb2400" / "meshes" / "link_1.dae"
    text = path.read_text()
    start = text.index(">", text.index('<float_array id="Link_1-mesh-positions-array"')) + 1
    padded = (text[:start] + " " * (11 * 2**20) + text[start:]).encode()
    mesh = Mesh("link_1.dae", "meshes/link_1.dae")
    tri = mesh_triangles(padded, mesh, "robots/abb_irb2400/meshes/link_1.dae")
    assert tri.shape[1:] == (3, 3) and len(tri) > 100


TWO_OBJECTS = b"o a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\no b\nv 5 5 5\nv 6 5 5\nv 5 6 5\n"
A, B = [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[5, 5, 5], [6, 5, 5], [5, 6, 5]]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (TWO_OBJECTS + b"f -3 -2 -1\n", [A, B]),
        (TWO_OBJECTS.replace(b"\n", b"\r\n") + b"f -3 -2 -1\r\n", [A, B]),
        (TWO_OBJECTS + b"f 4 -2 -1 # a comment - with a minus\n", [A, B]),
        (TWO_OBJECTS.replace(b"f -3 -2 -1", b"vt 0 0\nf -3/-1 -2/-1 -1/-1") + b"f 1 2 3\n", [A, A]),
        (
            TWO_OBJECTS.replace(b"f -3 -2 -1", b"vn 0 0 1\nf -3//-1 -2//-1 -1//-1")
            + b"f -6 5 -1\n",
            [A, [A[0], B[1], B[2]]],
        ),
    ],
    ids=["two-objects", "crlf", "mixed-and-comment", "texture-index", "normal-index"],
)
def test_obj_negative_index_counts_back_from_the_vertices_read(data: bytes, expected: list) -> None:
    """trimesh counted a negative index back from the file's last vertex, not from the last
    read before the face (as OBJ and Tesseract's reader do): both faces lay on object b."""
    triangles = mesh_triangles(data, Mesh("x.obj", "meshes/x.obj"), "robots/r/meshes/x.obj")
    assert triangles.tolist() == expected


def _binary_ply(order: str, faces: list[list[int]]) -> bytes:
    """A binary PLY of five vertices and `faces`, in byte order '<' or '>'."""
    name = {"<": "little", ">": "big"}[order]
    head = (
        f"ply\nformat binary_{name}_endian 1.0\nelement vertex 5\nproperty float x\n"
        f"property float y\nproperty float z\nelement face {len(faces)}\n"
        "property list uchar int vertex_indices\nend_header\n"
    ).encode()
    xyz = np.array([0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 5, 5, 5], dtype=f"{order}f4")
    body = b"".join(bytes([len(f)]) + np.array(f, dtype=f"{order}i4").tobytes() for f in faces)
    return head + xyz.tobytes() + body


@pytest.mark.parametrize("order", ["<", ">"], ids=["little-endian", "big-endian"])
def test_binary_ply_is_read_not_a_traceback(order: str) -> None:
    """A binary PLY's face records made `key in raw` raise TypeError: a traceback."""
    data = _binary_ply(order, [[0, 1, 2], [0, 1, 3]])
    parts = mesh_parts(data, Mesh("x.ply", "meshes/x.ply"), "robots/r/meshes/x.ply")
    assert parts.triangles.tolist() == [
        [[0, 0, 0], [2, 0, 0], [0, 3, 0]],
        [[0, 0, 0], [2, 0, 0], [0, 0, 1]],
    ]
    assert parts.segments.tolist() == [[[5, 5, 5], [5, 5, 5]]]  # the vertex no face uses


def test_binary_ply_with_faces_of_several_lengths_is_mesh_unreadable() -> None:
    """trimesh reads every face of a binary PLY as long as the first: the others misread."""
    data = _binary_ply("<", [[0, 1, 2], [0, 1, 2, 3], [0, 4]])
    with pytest.raises(ContractError) as caught:
        mesh_parts(data, Mesh("x.ply", "meshes/x.ply"), "robots/r/meshes/x.ply")
    [finding] = caught.value.findings
    assert (finding.code, finding.file) == ("mesh_unreadable", "robots/r/meshes/x.ply")


@pytest.mark.parametrize(
    ("name", "data", "codes"),
    [
        (
            "x.dae",
            _dae('<lines count="0">{head}<p>0 4</p></lines>').replace(b'meter="1"', b'meter="2"'),
            ["mesh_unreadable", "mesh_lines_or_points"],
        ),
        (
            "x.dae",
            _dae('<polylist count="1">{head}<vcount>2</vcount><p>0 4</p></polylist>').replace(
                b'meter="1"', b'meter="0"'
            ),
            ["mesh_unreadable", "mesh_lines_or_points"],
        ),
    ],
    ids=["dae-unit-and-lines-of-count-0", "dae-unit-and-polylist-of-two"],
)
def test_each_refused_part_of_a_mesh_file_is_reported_at_once(
    name: str, data: bytes, codes: list[str]
) -> None:
    """A DAE's <unit> finding hid its <lines> finding until the unit was fixed (two rounds)."""
    with pytest.raises(ContractError) as caught:
        mesh_parts(data, Mesh(name, f"meshes/{name}"), f"robots/r/meshes/{name}")
    assert [f.code for f in caught.value.findings] == codes


def _binary_stl(count: int) -> bytes:
    """A binary STL of `count` copies of one triangle."""
    import struct

    triangle = struct.pack("<12fH", 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0)
    return bytes(80) + struct.pack("<I", count) + triangle * count


TOO_LARGE = [
    ("stl-binary", "x.stl", _binary_stl(4), True),
    ("obj", "x.obj", TETRA_OBJ, True),
    ("ply", "x.ply", TETRA_PLY % 4, True),
    ("dae", "x.dae", _dae(""), True),  # its blocks' primitives, each geometry's instances
]


@pytest.mark.parametrize(
    ("name", "data", "before_reading"),
    [r[1:] for r in TOO_LARGE],
    ids=[r[0] for r in TOO_LARGE],
)
def test_collision_mesh_too_large_is_refused_before_fitting(
    monkeypatch: pytest.MonkeyPatch, name: str, data: bytes, before_reading: bool
) -> None:
    """A 5.2 M-triangle STL took 10 GB in `doit`; a collision mesh over the limit (set to 3 here
    for a mesh of 4) is refused by its count, which STL, OBJ and PLY tell before trimesh reads
    them, with a hint to decimate it."""
    import pipeline.spheres.triangles as triangles

    monkeypatch.setattr(triangles, "COLLISION_TRIANGLE_LIMIT", 3)
    if before_reading:

        def unread(*args: object, **kwargs: object) -> None:
            raise AssertionError("read by trimesh")

        monkeypatch.setattr(triangles.trimesh, "load", unread)
    with pytest.raises(ContractError) as caught:
        mesh_parts(data, Mesh(name, f"meshes/{name}"), f"robots/r/meshes/{name}")
    [finding] = caught.value.findings
    assert (finding.code, finding.file) == ("collision_mesh_too_large", f"robots/r/meshes/{name}")
    assert finding.message.startswith("is a collision mesh of 4 triangles, over the limit of 3")
    assert "decimate" in finding.hint
    monkeypatch.undo()
    assert len(mesh_parts(data, Mesh(name, f"meshes/{name}"), "x").triangles) == 4


def test_collision_mesh_too_large_is_refused_by_the_urdf_step_not_as_a_visual(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The urdf step parses each collision mesh as the spheres step does, so the refusal comes
    before anything is copied or fitted; the same file as a <visual> is copied."""
    import pipeline.spheres.triangles as triangles
    from pipeline.description import make_urdf_copies

    meshes = repo / "robots/abb_irb2400/meshes"
    sizes = {p.name: (p.stat().st_size - 84) // 50 for p in meshes.glob("*.stl")}
    one = (meshes / "link_1.stl").read_bytes()
    count = sizes["link_1.stl"] * 2
    body = one[84:] * 2
    (meshes / "big.stl").write_bytes(one[:80] + count.to_bytes(4, "little") + body)
    monkeypatch.setattr(triangles, "COLLISION_TRIANGLE_LIMIT", max(count - 1, *sizes.values()))
    urdf = repo / "robots/abb_irb2400/robot.urdf"
    text = urdf.read_text()
    urdf.write_text(text.replace("meshes/link_1.dae", "meshes/big.stl", 1))
    make_urdf_copies(repo, "abb_irb2400")  # as a visual: copied
    urdf.write_text(text.replace("meshes/link_1.stl", "meshes/big.stl", 1))
    with pytest.raises(ContractError) as caught:
        make_urdf_copies(repo, "abb_irb2400")
    assert [(f.code, f.file) for f in caught.value.findings] == [
        ("collision_mesh_too_large", "robots/abb_irb2400/meshes/big.stl")
    ]


def _dae_scene(blocks: str, scene: str, nodes: str = "") -> bytes:
    """A COLLADA file of one geometry `g` (5 vertices) holding `blocks`, the scene `s` holding
    `scene`, library nodes `nodes`, and a second scene that <scene> does not name."""
    head = '<input offset="0" semantic="VERTEX" source="#v"/>'
    return f"""<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
<asset><unit meter="1"/></asset>
<library_geometries><geometry id="g"><mesh>
<source id="p"><float_array id="a" count="15">0 0 0 1 0 0 0 1 0 0 0 1 1 1 0</float_array>
<technique_common><accessor source="#a" count="5" stride="3"><param name="X" type="float"/>
<param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common>
</source>
<vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
{blocks.format(head=head)}
</mesh></geometry></library_geometries>
<library_nodes>{nodes}</library_nodes>
<library_visual_scenes><visual_scene id="s">{scene}</visual_scene>
<visual_scene id="t"><node id="m"><instance_geometry url="#g"/><instance_geometry url="#g"/>
</node></visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene>
</COLLADA>""".encode()


TWO = '<triangles count="2">{head}<p>0 1 2\n   0 1 3</p></triangles>'
ONE_NODE = '<node id="n"><instance_geometry url="#g"/></node>'
LIBRARY = '<node id="L"><instance_geometry url="#g"/></node>'
DAE_COUNTS = [
    ("triangles", TWO, ONE_NODE, "", 2),
    (
        "polylist",
        '<polylist count="2">{head}<vcount>4 3</vcount><p>0 1 4 2 0 1 3</p></polylist>',
        ONE_NODE,
        "",
        3,
    ),
    (
        "polygons",
        '<polygons count="2">{head}<p>0 1 4 2</p><p>0 1 3</p></polygons>',
        ONE_NODE,
        "",
        3,
    ),
    ("trifans", '<trifans count="1">{head}<p>0 1 4 2</p></trifans>', ONE_NODE, "", 2),
    ("tristrips", '<tristrips count="1">{head}<p>0 1 2 4</p></tristrips>', ONE_NODE, "", 2),
    ("two-blocks", TWO + TWO, ONE_NODE, "", 4),
    (
        "instanced-twice-in-a-node",
        TWO,
        '<node id="n"><instance_geometry url="#g"/><instance_geometry url="#g"/></node>',
        "",
        4,
    ),
    (
        "instance-nodes",
        TWO,
        '<node id="n"><instance_node url="#L"/><node id="k"><instance_node url="#L"/>'
        '<instance_node url="#L"/></node></node>',
        LIBRARY,
        6,
    ),
    (
        "a-scene-node-instanced",
        TWO,
        ONE_NODE + '<node id="o"><instance_node url="#n"/></node>',
        "",
        4,
    ),
    ("no-instance", TWO, '<node id="n"/>', "", 0),
    (
        "a-geometry-url-naming-none",
        TWO,
        '<node id="n"><instance_geometry url="#zz"/><instance_geometry url="#g"/></node>',
        "",
        2,
    ),
]


@pytest.mark.parametrize(
    ("blocks", "scene", "nodes", "count"),
    [r[1:] for r in DAE_COUNTS],
    ids=[r[0] for r in DAE_COUNTS],
)
def test_a_collada_files_triangles_are_counted_before_it_is_read(
    monkeypatch: pytest.MonkeyPatch, blocks: str, scene: str, nodes: str, count: int
) -> None:
    """The triangles a COLLADA file's blocks state, times the instances of their geometry in
    the scene <scene> names, are those trimesh reads; told before it reads them, a file over the
    limit is refused without the gigabytes trimesh takes: 5 M triangles in 30 MB of <p> took
    2.7 GB to be refused, 10 000 instances of a 2 000-triangle geometry (16 kB) 5.5 GB."""
    import pipeline.spheres.triangles as triangles

    data = _dae_scene(blocks, scene, nodes)
    mesh = Mesh("x.dae", "meshes/x.dae")
    if count:
        assert len(mesh_parts(data, mesh, "x").triangles) == count
    monkeypatch.setattr(triangles, "COLLISION_TRIANGLE_LIMIT", max(count - 1, 0))

    def unread(*args: object, **kwargs: object) -> None:
        raise AssertionError("read by trimesh")

    monkeypatch.setattr(triangles.trimesh, "load", unread)
    if count:
        with pytest.raises(ContractError) as caught:
            mesh_parts(data, mesh, "x")
        [finding] = caught.value.findings
        assert finding.code == "collision_mesh_too_large"
        assert finding.message.startswith(f"is a collision mesh of {count} triangles")
    else:  # nothing told: trimesh reads it
        with pytest.raises(ContractError, match="AssertionError"):
            mesh_parts(data, mesh, "x")


def test_a_mesh_read_out_of_memory_is_out_of_memory_not_unreadable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A MemoryError inside trimesh was mesh_unreadable, 'export the mesh again' (a hostile-input
    trial): the file is fine, the machine short of memory; the step's out_of_memory says so."""
    import pipeline.spheres.triangles as triangles
    from pipeline.cli import main

    def short_of_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    data = (REPO / "robots" / "abb_irb2400" / "meshes" / "link_1.stl").read_bytes()
    monkeypatch.setattr(triangles.trimesh, "load", short_of_memory)
    with pytest.raises(MemoryError):
        mesh_parts(data, Mesh("link_1.stl", "meshes/link_1.stl"), "robots/r/meshes/link_1.stl")
    monkeypatch.chdir(REPO)
    assert main(["spheres", "verify", "abb_irb2400"]) == 2
    err = capsys.readouterr().err
    assert ": out_of_memory: " in err and "mesh_unreadable" not in err, err
