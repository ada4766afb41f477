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
from pipeline.spheres.geometry import Frame, Patches, rpy_matrix
from pipeline.spheres.polygons import MAX_CORNERS
from pipeline.spheres.prove import prove_patches
from pipeline.spheres.triangles import mesh_parts
from pipeline.strict_json import dump_json
from pipeline.urdf import Mesh, load_robot
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


def ngon_obj(n: int, lift: float, radius: float = 1.0) -> bytes:
    """An OBJ face of n corners on a circle, its first corner lifted by `lift`."""
    angles = np.arange(n) * 2 * np.pi / n
    lines = [
        f"v {radius * float(np.cos(a))!r} {radius * float(np.sin(a))!r} {lift if i == 0 else 0.0!r}"
        for i, a in enumerate(angles)
    ]
    return ("\n".join(lines) + "\nf " + " ".join(str(i + 1) for i in range(n)) + "\n").encode()


REFUSED = [
    ("obj-face-over-the-cap", "x.obj", ngon_obj(MAX_CORNERS + 1, 0.01), str(MAX_CORNERS + 2)),
    ("dae-polylist-quad", "x.dae", _dae(POLYLIST % "0 1 2 3"), "10"),
    (
        "dae-polygons-quad",
        "x.dae",
        _dae('<polygons count="1">{head}<p>0 1 2 3</p></polygons>'),
        "10",
    ),
    # Tesseract's reader reads a fan's <p> as one polygon (pycollada as its fan's triangles)
    ("dae-trifans-quad", "x.dae", _dae('<trifans count="1">{head}<p>0 1 2 3</p></trifans>'), "10"),
]


@pytest.mark.parametrize(
    ("name", "data", "place"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_polygon_not_planar_refused(name: str, data: bytes, place: str) -> None:
    """More corners than the cap, or a COLLADA polygon (placed by the reader's own transform)."""
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


def test_polygon_not_planar_kept_spheres_the_proof_now_refuses_are_refitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spheres fitted before the proof covered every triangulation keep their geometry digest
    (same mesh bytes): the build refits that link rather than stopping on its own output."""
    folder = tmp_path / "robots" / "r"
    (folder / "meshes").mkdir(parents=True)
    (folder / "meshes" / "x.obj").write_bytes(TENT_OBJ)
    plain = URDF.format(name="x.obj").replace(' scale="0.01 0.01 0.01"', "")
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
