"""Polygons of more than three corners not in one plane: every triangle of three corners is
covered (any consumer's triangulation), or the face is refused (polygon_not_planar)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from pipeline.findings import ContractError
from pipeline.spheres.build import build_spheres, verify
from pipeline.spheres.frame import Frame, rpy_matrix
from pipeline.spheres.patches import Patches
from pipeline.spheres.polygons import (
    MAX_CORNERS,
    PLANAR_ABSOLUTE,
    PLANAR_RELATIVE,
    PLANAR_SINGLE,
)
from pipeline.spheres.prove import prove_patches
from pipeline.spheres.triangles import mesh_parts
from pipeline.strict_json import dump_json
from pipeline.urdf import Mesh, load_robot
from tests.conftest import peak_memory
from tests.test_spheres_triangles import FAST, TETRA_PLY, URDF, _dae, fit_one_mesh

# A non-planar OBJ quad: trimesh splits it at its 1-3 diagonal, Tesseract's reader (assimp's
# triangulation) at 2-4, since corner 2 is concave by its angle test. Four spheres the fitter
# made and the proof passed against trimesh's triangles alone:
TENT_OBJ = b"v 0 0 0\nv 0.1 0.08 0.02\nv 0.2 0 0\nv 0.1 0.2 0\nf 1 2 3 4\n"
TENT = np.array([[0, 0, 0], [0.1, 0.08, 0.02], [0.2, 0, 0], [0.1, 0.2, 0]])
TENT_CENTERS = [
    [0.054194, 0.036836, -0.017407],
    [0.09221, 0.145287, -0.010845],
    [0.156241, 0.017191, -0.003715],
    [0.129706, 0.078127, -0.001611],
]
TENT_RADII = [0.070075, 0.057926, 0.048599, 0.040809]
ASSIMP_POINT = 0.76 * TENT[1] + 0.15 * TENT[3] + 0.09 * TENT[0]  # on assimp's (2, 4, 1)


def _parts(name: str, data: bytes) -> tuple[np.ndarray, np.ndarray]:
    parts = mesh_parts(data, Mesh(name, f"meshes/{name}"), f"robots/r/meshes/{name}")
    return parts.triangles, parts.polygons


def test_polygon_not_planar_spheres_proven_for_one_triangulation_fail_the_proof() -> None:
    """Spheres proven against trimesh's split of the tent left assimp's 2.5 mm outside: the
    proof now covers every triangle of the quad's corners and finds them short."""
    tri, extra = _parts("x.obj", TENT_OBJ)
    centers, radii = np.array(TENT_CENTERS), np.array(TENT_RADII)
    frame = Frame(np.eye(3), np.zeros(3))
    assert prove_patches(Patches("flat", tri, frame), centers, radii)[2] is None
    outside = float((np.linalg.norm(centers - ASSIMP_POINT, axis=1) - radii).min())
    assert outside > 0.002
    assert prove_patches(Patches("flat", extra, frame), centers, radii)[2] is not None


def _rotated_square() -> bytes:
    """A planar unit square turned by an awkward rotation, corners written to the last digit."""
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    turned = square @ rpy_matrix((0.3, 0.7, 1.1)).T
    lines = [f"v {float(x)!r} {float(y)!r} {float(z)!r}" for x, y, z in turned]
    return ("\n".join(lines) + "\nf 1 2 3 4\n").encode()


PENTAGON = b"v 0 0 0\nv 1 0 0\nv 1 1 0.1\nv 0.5 1.5 0\nv 0 1 0.2\nf 1 2 -3 4 5\n"
PLY_QUAD = (
    (TETRA_PLY % 2)
    .replace(b"3 0 1 2\n3 0 1 3\n3 0 2 3\n3 1 2 3\n", b"4 0 1 2 3\n3 0 1 3\n")
    .replace(b"element vertex 5", b"element vertex 4")
    .replace(b"50 0 0\n", b"")
)
POLYLIST = '<polylist count="1">{head}<vcount>4</vcount><p>%s</p></polylist>'
COVERED = [
    ("obj-quad", "x.obj", TENT_OBJ, 4),
    ("obj-pentagon", "x.obj", PENTAGON, 10),
    ("obj-planar-quad", "x.obj", TENT_OBJ.replace(b"0.02", b"0"), 0),
    ("obj-planar-quad-turned", "x.obj", _rotated_square(), 0),
    ("ply-quad", "x.ply", PLY_QUAD, 4),
    ("dae-planar-polylist-quad", "x.dae", _dae(POLYLIST % "0 1 4 2"), 0),
    (
        "dae-planar-trifans-quad",
        "x.dae",
        _dae('<trifans count="1">{head}<p>0 1 4 2</p></trifans>'),
        0,
    ),
    # placed from the triangles trimesh makes of them (icub-models' iCubNancy01 was refused for
    # 26 such quads, 2.88e-09 to 3.07e-05 m out of plane)
    ("dae-polylist-quad", "x.dae", _dae(POLYLIST % "0 1 2 3"), 4),
    ("dae-polygons-quad", "x.dae", _dae('<polygons count="1">{head}<p>0 1 2 3</p></polygons>'), 4),
    # Tesseract's reader reads a fan's <p> as one polygon (pycollada as its fan's triangles)
    ("dae-trifans-quad", "x.dae", _dae('<trifans count="1">{head}<p>0 1 2 3</p></trifans>'), 4),
    (
        "dae-polylist-pentagon-after-a-triangle",
        "x.dae",
        _dae(
            '<polylist count="2">{head}<vcount>3 5</vcount><p>0 1 2 0 1 4 2 3</p></polylist>'
        ).replace(b"50 0 0", b"0.5 0.5 0.1"),
        10,
    ),
]


@pytest.mark.parametrize(
    ("name", "data", "count"), [c[1:] for c in COVERED], ids=[c[0] for c in COVERED]
)
def test_polygon_not_planar_every_triangle_of_its_corners_is_surface(
    name: str, data: bytes, count: int
) -> None:
    """A non-planar face of n corners adds its C(n, 3) triangles; a planar one adds none."""
    tri, extra = _parts(name, data)
    assert len(extra) == count
    if count:
        corners = np.unique(extra.reshape(-1, 3), axis=0)
        assert len(corners) in (4, 5) and count == len(list(itertools.combinations(corners, 3)))
        for trio in itertools.combinations(corners.tolist(), 3):
            assert any(sorted(t.tolist()) == sorted(trio) for t in extra)
        # every corner is one of trimesh's triangles' corners: the bounds do not grow
        assert set(map(tuple, corners.tolist())) <= set(map(tuple, tri.reshape(-1, 3).tolist()))


def test_polygon_not_planar_collada_quad_bent_by_single_precision_alone_is_planar() -> None:
    """The turned square written to the last digit is planar as written; read in single
    precision its corners leave the plane by rounding alone: its fan is covered, as the OBJ's
    is (PLANAR_SINGLE). Lifted by 1e-5 of its size, it is covered by all four triangles."""
    square = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=float)
    turned = square @ rpy_matrix((0.3, 0.7, 1.1)).T
    written = " ".join(f"{float(v)!r}" for v in turned.ravel()) + " 50 0 0"
    data = _dae(POLYLIST % "0 1 2 3").replace(b"0 0 0 1 0 0 0 1 0 0 0 1 50 0 0", written.encode())
    tri, extra = _parts("x.dae", data)
    read = np.unique(tri.reshape(-1, 3), axis=0)
    centred = read - read.mean(axis=0)
    off = float(np.abs(centred @ np.linalg.svd(centred)[2][-1]).max())
    assert off > PLANAR_ABSOLUTE + PLANAR_RELATIVE * float(np.abs(read).max())  # rounded: bent
    assert off <= PLANAR_SINGLE * float(np.abs(read).max())
    assert len(extra) == 0
    assert len(_parts("x.dae", ngon_dae(4, 1e-5))[1]) == 4


def ngon_obj(n: int, lift: float, radius: float = 1.0) -> bytes:
    """An OBJ face of n corners on a circle, its first corner lifted by `lift`."""
    angles = np.arange(n) * 2 * np.pi / n
    lines = [
        f"v {radius * float(np.cos(a))!r} {radius * float(np.sin(a))!r} {lift if i == 0 else 0.0!r}"
        for i, a in enumerate(angles)
    ]
    return ("\n".join(lines) + "\nf " + " ".join(str(i + 1) for i in range(n)) + "\n").encode()


def ngon_dae(n: int, lift: float) -> bytes:
    """A COLLADA <polylist> of one face of n corners on a circle, its first corner lifted."""
    xyz = [
        (float(np.cos(a)), float(np.sin(a)), lift if i == 0 else 0.0)
        for i, a in enumerate(np.arange(n) * 2 * np.pi / n)
    ]
    flat = " ".join(f"{v!r}" for corner in xyz for v in corner)
    corners = " ".join(map(str, range(n)))
    polylist = f'<polylist count="1">{{head}}<vcount>{n}</vcount><p>{corners}</p></polylist>'
    data = _dae(polylist).replace(b"0 0 0 1 0 0 0 1 0 0 0 1 50 0 0", flat.encode())
    return data.replace(b'count="15"', f'count="{3 * n}"'.encode()).replace(
        b'count="5" stride', f'count="{n}" stride'.encode()
    )


REFUSED = [
    ("obj-face-over-the-cap", "x.obj", ngon_obj(MAX_CORNERS + 1, 0.01), str(MAX_CORNERS + 2)),
    ("dae-face-over-the-cap", "x.dae", ngon_dae(MAX_CORNERS + 1, 0.01), "10"),
]


@pytest.mark.parametrize(
    ("name", "data", "place"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_polygon_not_planar_refused(name: str, data: bytes, place: str) -> None:
    """More corners than the cap."""
    with pytest.raises(ContractError) as caught:
        _parts(name, data)
    [finding] = caught.value.findings
    assert (finding.code, finding.place) == ("polygon_not_planar", place)
    assert "not in one plane" in finding.message and "triangulate" in finding.hint
    # the distance with its unit: icub-models' iCubNancy01 collision quads were told "(one
    # 1.06e-08 off it)", a figure a reader could take for millimetres
    assert re.search(r"\(one [0-9.e+-]+ m off it\)", finding.message), finding.message


def test_polygon_not_planar_over_the_cap_is_read_when_planar() -> None:
    """A planar face of many corners (a cylinder's end) adds nothing and is not refused."""
    tri, extra = _parts("x.obj", ngon_obj(64, 0.0))
    assert len(tri) == 62 and len(extra) == 0


def test_polygon_not_planar_triangles_count_toward_the_triangle_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bent face of 16 corners is 14 triangles to trimesh and 560 to cover: 7 000 of them
    (a 290 KB OBJ) were 98 000 triangles, within the limit, and 3.9 million to cover, 688 MB;
    at the limit, 40 million (a review). They count toward it: here a limit of 10 000."""
    from pipeline.spheres import triangles

    monkeypatch.setattr(triangles, "COLLISION_TRIANGLE_LIMIT", 10_000)
    corners = ngon_obj(16, 0.01).split(b"\nf ")[0]
    faces = b"".join([b"\nf " + b" ".join(b"%d" % (i + 1) for i in range(16))] * 100)
    with pytest.raises(ContractError) as caught:
        _parts("x.obj", corners + faces + b"\n")
    [finding] = caught.value.findings
    assert finding.code == "collision_mesh_too_large"
    assert finding.message.startswith(
        "is a collision mesh of 57,400 triangles (56,000 of them every triangle of the corners "
        "of its faces not in one plane), over the limit of 10,000"
    ), finding.message
    monkeypatch.setattr(triangles, "COLLISION_TRIANGLE_LIMIT", 57_400)
    tri, extra = _parts("x.obj", corners + faces + b"\n")
    assert (len(tri), len(extra)) == (1_400, 56_000)


@pytest.mark.parametrize("lift", [0.0, 0.01], ids=["planar", "bent"])
def test_polygon_not_planar_measured_in_memory_of_its_corners(lift: float) -> None:
    """A face of 12 000 corners (an OBJ's 80 KB line) was measured by a full SVD, whose
    12 000 x 12 000 left factor took 1.1 GB and 4 s (a review: 30 000 corners, 7.2 GB); the
    plane needs only the 3 x 3 right factor."""
    data = ngon_obj(12_000, lift)

    def read() -> None:
        if lift:
            with pytest.raises(ContractError) as caught:
                _parts("x.obj", data)
            assert [f.code for f in caught.value.findings] == ["polygon_not_planar"]
        else:
            assert len(_parts("x.obj", data)[1]) == 0

    _, peak = peak_memory(read)
    assert peak < 200 * 2**20, peak


@pytest.mark.parametrize(
    ("name", "data"), [("x.obj", TENT_OBJ), ("x.ply", PLY_QUAD)], ids=["obj-quad", "ply-quad"]
)
def test_polygon_not_planar_covered_by_the_written_spheres(
    tmp_path: Path, name: str, data: bytes
) -> None:
    """The build's spheres prove every triangle of the quad's corners, placed and scaled."""
    geometry, centers, radii = fit_one_mesh(tmp_path, name, data)
    flat = [p for p in geometry.patches if p.kind == "flat"]
    # trimesh's triangles (the OBJ quad's two; the PLY quad's two and a triangle), the quad's four
    assert [len(p) for p in flat] == [len(geometry.solids[0].triangles), 4]
    assert all(prove_patches(p, centers, radii)[2] is None for p in flat)
    assert len(geometry.solids[0].triangles) == {"x.obj": 2, "x.ply": 3}[name]  # not the four


# the tent as a COLLADA <polylist> quad alone: pycollada fans it at the 1-3 diagonal, as trimesh
# splits the OBJ's
TENT_DAE = (
    _dae(POLYLIST % "0 1 2 3")
    .replace(b"0 0 0 1 0 0 0 1 0 0 0 1 50 0 0", b"0 0 0 0.1 0.08 0.02 0.2 0 0 0.1 0.2 0")
    .replace(b'count="15"', b'count="12"')
    .replace(b'count="5" stride', b'count="4" stride')
    .replace(b'<triangles count="4">', b'<triangles count="0">')
    .replace(b"<p>0 1 2 0 1 3 0 2 3 1 2 3</p>", b"<p/>")
)


@pytest.mark.parametrize(("name", "data"), [("x.obj", TENT_OBJ), ("x.dae", TENT_DAE)])
def test_polygon_not_planar_kept_spheres_the_proof_now_refuses_are_refitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, data: bytes
) -> None:
    """Spheres fitted before the proof covered every triangulation keep their geometry digest
    (same mesh bytes): `verify` refuses them, and the build refits that link rather than
    stopping on its own output (a COLLADA quad as an OBJ's: it was refused before)."""
    folder = tmp_path / "robots" / "r"
    (folder / "meshes").mkdir(parents=True)
    (folder / "meshes" / name).write_bytes(data)
    plain = URDF.format(name=name).replace(' scale="0.01 0.01 0.01"', "")
    (folder / "robot.urdf").write_text(plain.replace('xyz="0.1 0.2 0" rpy="0 0.3 0.5"', ""))
    (folder / "spheres.settings.json").write_text(json.dumps(FAST))
    robot = load_robot(folder, tmp_path)
    built, _ = build_spheres(robot, folder, tmp_path, None)
    document = json.loads(built)
    document["links"]["a"]["spheres"] = [
        {"center": c, "radius": r} for c, r in zip(TENT_CENTERS, TENT_RADII, strict=True)
    ]
    old = dump_json(document)  # the tent's spheres, proven against trimesh's split alone
    with monkeypatch.context() as before:
        before.setattr("pipeline.spheres.triangles.mesh_polygons", lambda *args: [])
        assert verify(robot, folder, old, samples=0).ok
    assert not verify(robot, folder, old, samples=0).ok
    new, report = build_spheres(robot, folder, tmp_path, old)
    assert (report.fitted, report.restamped, report.current) == (("a",), (), ())
    assert verify(robot, folder, new, samples=0).ok


# a non-planar quad and a non-planar fan of five beside the tetrahedron's triangles, instanced
# twice: under a node turned, scaled and moved, and under a node nested in another
PLACED_BLOCKS = (
    '<polylist count="2">{head}<vcount>3 4</vcount><p>0 1 3 0 1 4 2</p></polylist>'
    '<trifans count="1">{head}<p>4 0 1 3 2</p></trifans>'
)
TURNED = "<translate>0.1 -0.2 0.3</translate><rotate>0.3 0.5 0.8 37</rotate><scale>1 2 3</scale>"


def _placed_dae() -> bytes:
    data = _dae(PLACED_BLOCKS).replace(b"50 0 0", b"0.4 0.3 0.7")
    nodes = (
        f'<node id="t">{TURNED}<instance_geometry url="#g"/></node>'
        '<node id="top"><rotate>1 0 0 21</rotate><translate>0.03 0.05 -0.07</translate>'
        f'<node id="n">{TURNED}<scale>0.5 0.25 2</scale><instance_geometry url="#g"/></node>'
        "</node>"
    )
    return data.replace(b'<node id="n"><instance_geometry url="#g"/></node>', nodes.encode())


def test_polygon_not_planar_collada_corners_are_trimesh_triangles_corners_to_the_bit() -> None:
    """Each COLLADA polygon of each instance of its geometry is placed where trimesh places the
    triangles it makes of it, to the bit: its corners are its fan's corners in trimesh's scene."""
    import io

    from pipeline.spheres.dae_scene import dae_scene
    from pipeline.spheres.meshlib import trimesh

    data = _placed_dae()
    scene = trimesh.load(io.BytesIO(data), file_type="dae", process=False, force="scene")
    fans = [  # trimesh's placed triangles of each polygon block, instance by instance
        np.asarray(mesh.triangles)
        for mesh in scene.dump()
        if len(mesh.triangles) == 3  # the polylist's triangle and quad's two, the fan's three
    ]
    assert [len(t) for t in fans] == [3, 3, 3, 3]
    placed = dae_scene(data).polygons
    assert [(p.line, p.name) for p in placed] == [
        (10, "<polylist> polygon 1"),
        (10, "<trifans> fan 0"),
    ] * 2
    for polygon, triangles in zip(placed, fans, strict=True):
        first = triangles[1:] if polygon.name.startswith("<polylist>") else triangles
        expected = np.concatenate([first[:1, 0], first[:, 1], first[-1:, 2]])
        assert polygon.corners.tobytes() == expected.tobytes()
    # the two instances differ, and the quad is out of plane in each
    assert not np.array_equal(placed[0].corners, placed[2].corners)
    tri, extra = _parts("x.dae", data)
    assert len(extra) == 2 * (4 + 10)
    corners = {row.tobytes() for row in tri.reshape(-1, 3)}
    assert {row.tobytes() for row in extra.reshape(-1, 3)} <= corners


def test_polygon_not_planar_collada_corner_not_among_trimesh_corners_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The corners are checked against trimesh's triangles: one found nowhere there (which the
    placement rules out) is refused, not covered where trimesh's mesh is not."""
    import pipeline.spheres.polygons as polygons

    monkeypatch.setattr(polygons, "_among", lambda points, rows: np.zeros(len(points), bool))
    with pytest.raises(ContractError) as caught:
        _parts("x.dae", _dae(POLYLIST % "0 1 2 3"))
    [finding] = caught.value.findings
    assert (finding.code, finding.place) == ("polygon_not_planar", "10")
    assert "is not where the COLLADA reader (trimesh) put" in finding.message


def test_polygon_not_planar_collada_file_is_read_by_pycollada_once_more_at_most(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """trimesh's read parses a COLLADA file with pycollada; its <lines> and its polygons are
    placed from one more parse, shared, and a file of triangles alone is parsed once."""
    import collada

    parse, parsed = collada.Collada, []

    def counted(*args: object, **kwargs: object) -> object:
        parsed.append(1)
        return parse(*args, **kwargs)

    monkeypatch.setattr(collada, "Collada", counted)
    lines = '<lines count="1">{head}<p>0 4</p></lines>'
    quad = POLYLIST % "0 1 2 3"
    for extra, count in [("", 1), (lines, 2), (quad, 2), (lines + quad, 2)]:
        parsed.clear()
        _parts("x.dae", _dae(extra))
        assert len(parsed) == count, extra
