"""Collision geometry of a link and the coverage proof: meshes, primitives, several elements."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline.findings import ContractError, Finding
from pipeline.spheres.checks import excess_ratio
from pipeline.spheres.fit import FitParams, fit_link
from pipeline.spheres.frame import Frame, rpy_matrix
from pipeline.spheres.geometry import LinkGeometry, load_link_geometry
from pipeline.spheres.patches import Patches
from pipeline.spheres.prove import prove
from pipeline.spheres.winding import closing_fan, mesh_winding, ray_winding, winding_number
from pipeline.urdf import Origin, load_robot
from tests.conftest import REPO, peak_memory

IIWA = "lbr_iiwa_14_r820"
FAST = FitParams(max_spheres=4, rounds=2, sample_divisions=10, grid_points=4000)


def _link(folder: Path, name: str):  # type: ignore[no-untyped-def]
    robot = load_robot(folder, folder.parent.parent)
    link = robot.link(name)
    assert link is not None
    return load_link_geometry(link, folder, f"robots/{IIWA}")


def _craft(tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / "robots" / IIWA
    shutil.copytree(REPO / "robots" / IIWA, folder)
    urdf = folder / "robot.urdf"
    text = urdf.read_text()
    assert old in text
    urdf.write_text(text.replace(old, new, 1))
    return folder


LINK7_MESH = '<mesh filename="package://lbr_iiwa_14_r820/meshes/link_7.stl"/>'


@pytest.mark.parametrize(
    ("shape", "volume"),
    [
        ('<box size="0.1 0.2 0.05"/>', 0.1 * 0.2 * 0.05),
        ('<cylinder radius="0.05" length="0.2"/>', math.pi * 0.05**2 * 0.2),
        ('<sphere radius="0.06"/>', 4 / 3 * math.pi * 0.06**3),
    ],
)
def test_primitive_only_link_is_fitted_and_proven(
    tmp_path: Path, shape: str, volume: float
) -> None:
    folder = _craft(tmp_path, LINK7_MESH, shape)
    geometry = _link(folder, "link_7")
    points = np.random.default_rng(0).uniform(-0.2, 0.2, size=(40000, 3))
    assert geometry.inside(points).mean() * 0.4**3 == pytest.approx(volume, rel=0.08)
    centers, radii = fit_link(geometry, FAST)
    assert len(radii) <= 4
    assert prove(geometry, centers, radii).proven


def test_sphere_primitives_are_their_own_exact_cover(tmp_path: Path) -> None:
    two = (
        '<sphere radius="0.06"/></geometry></collision><collision>'
        '<origin xyz="0.01 0.02 0.1"/><geometry><sphere radius="0.03"/>'
    )
    folder = _craft(tmp_path, LINK7_MESH, two)
    centers, radii = fit_link(_link(folder, "link_7"), FAST)
    assert np.allclose(centers, [[0.0, 0.0, 0.0], [0.01, 0.02, 0.1]], atol=1e-9)
    # never smaller; the proof bounds each curved patch by its hull, a hair outside the sphere,
    # so the radius may grow by a few parts in 10^4 (11 µm on 60 mm), not by a fitted margin
    assert np.all(radii >= [0.06, 0.03]) and np.all(radii <= np.array([0.06, 0.03]) * 1.0005)


def test_curved_primitive_proof_is_exact_enough_and_refuses_a_smaller_sphere(
    tmp_path: Path,
) -> None:
    folder = _craft(tmp_path, LINK7_MESH, '<sphere radius="0.06"/>')
    geometry = _link(folder, "link_7")
    center = np.zeros((1, 3))
    assert prove(geometry, center, np.array([0.06 * 1.0001])).proven
    shrunk = prove(geometry, center, np.array([0.0599]))
    assert not shrunk.proven
    assert 0.0001 - 1e-8 <= shrunk.gap <= 0.0002  # an upper bound, not far above the truth


def test_link_with_several_collision_elements_covers_all_of_them(tmp_path: Path) -> None:
    extra = (
        "</collision>\n    <collision>\n"
        '      <origin xyz="0 0 0.12" rpy="0.3 0 0"/>\n'
        '      <geometry><cylinder radius="0.02" length="0.1"/></geometry>\n'
        "    </collision>\n"
        "    <collision>\n"
        '      <origin xyz="0.05 0 0.1" rpy="0 0 0.5"/>\n'
        '      <geometry><box size="0.03 0.03 0.03"/></geometry>\n'
        "    </collision>"
    )
    text = (REPO / "robots" / IIWA / "robot.urdf").read_text()
    start = text.index('<link name="link_7">')
    end = text.index("</collision>", start)
    folder = _craft(tmp_path, text[start:end] + "</collision>", text[start:end] + extra)
    geometry = _link(folder, "link_7")
    assert len(geometry.solids) == 3
    centers, radii = fit_link(geometry, FAST)
    assert prove(geometry, centers, radii).proven
    # the cylinder's far end is part of what must be covered
    tip = rpy_matrix((0.3, 0.0, 0.0)) @ np.array([0.0, 0.0, 0.05]) + [0, 0, 0.12]
    assert (np.linalg.norm(centers - tip, axis=1) <= radii).any()


def test_open_mesh_uses_the_generalised_winding_number(tmp_path: Path) -> None:
    geometry = _link(REPO / "robots" / IIWA, "link_4")
    closed = geometry.solids[0].triangles
    assert len(closing_fan(closed)) == 0
    opened = closed[3:]  # a few triangles missing: not watertight any more
    assert len(closing_fan(opened)) > 0
    points = np.random.default_rng(1).uniform(*geometry.bounds(), size=(3000, 3))
    exact = np.abs(ray_winding(closed, points)) >= 0.5
    robust = np.abs(winding_number(opened, points)) >= 0.5
    assert (exact == (np.abs(winding_number(closed, points)) >= 0.5)).all()
    assert (exact != robust).mean() < 0.02


def _flipped(triangles: np.ndarray, index: int) -> np.ndarray:
    out = triangles.copy()
    out[index] = out[index, ::-1]
    return out


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda t: t[3:], id="holes"),
        pytest.param(lambda t: _flipped(t, 7), id="one_face_flipped"),
        pytest.param(lambda t: np.concatenate([t[3:], t[10:12]]), id="holes_and_doubled_faces"),
        pytest.param(lambda t: t[:40], id="a_small_open_sheet"),
        pytest.param(lambda t: np.concatenate([t, t[:5] + 0.3]), id="closed_plus_stray_faces"),
    ],
)
def test_mesh_winding_of_a_damaged_mesh_is_its_generalised_winding_number(damage) -> None:  # type: ignore[no-untyped-def]
    # the fast number (the mesh closed by a fan, less the fan) is the slow sum of solid angles
    geometry = _link(REPO / "robots" / IIWA, "link_4")
    triangles = damage(geometry.solids[0].triangles)
    lo, hi = triangles.reshape(-1, 3).min(axis=0), triangles.reshape(-1, 3).max(axis=0)
    points = np.random.default_rng(2).uniform(lo - 0.05, hi + 0.05, size=(3000, 3))
    slow = winding_number(triangles, points)
    fast = mesh_winding(triangles, points)
    assert np.abs(fast - slow).max() < 1e-9


def test_non_manifold_closed_surface_needs_no_fan() -> None:
    # two copies of a closed surface: every edge used twice each way, still a closed surface
    geometry = _link(REPO / "robots" / IIWA, "link_4")
    twice = np.concatenate([geometry.solids[0].triangles] * 2)
    assert len(closing_fan(twice)) == 0
    points = np.random.default_rng(3).uniform(*geometry.bounds(), size=(2000, 3))
    assert np.allclose(mesh_winding(twice, points), winding_number(twice, points), atol=1e-9)


def test_mesh_scale_and_origin_are_applied(tmp_path: Path) -> None:
    scaled = LINK7_MESH.replace('.stl"/>', '.stl" scale="2 2 2"/>')
    folder = _craft(tmp_path, LINK7_MESH, scaled)
    plain = _link(REPO / "robots" / IIWA, "link_7")
    big = _link(folder, "link_7")
    assert np.allclose(big.bounds(), plain.bounds() * 2)


def test_shrunken_radius_leaves_a_gap_bound_and_excess_has_a_standard_error() -> None:
    geometry = _link(REPO / "robots" / IIWA, "link_7")
    centers, radii = fit_link(geometry, FAST)
    ratio, se = excess_ratio(geometry, centers, radii, 20000)
    assert ratio > 0 and 0 < se < ratio
    radii[0] *= 0.9
    proof = prove(geometry, centers, radii)
    assert not proof.proven
    assert 0 < proof.gap <= radii[0] * 0.1 / 0.9 + 1e-6


def test_dae_collision_mesh_is_read_fitted_and_proven(tmp_path: Path) -> None:
    abb = tmp_path / "robots" / "abb_irb2400"
    shutil.copytree(REPO / "robots" / "abb_irb2400", abb)
    urdf = abb / "robot.urdf"
    old = '<mesh filename="package://abb_irb2400/meshes/link_6.stl"/>'
    urdf.write_text(urdf.read_text().replace(old, old.replace(".stl", ".dae"), 1))
    robot = load_robot(abb, tmp_path)
    link = robot.link("link_6")
    assert link is not None
    geometry = load_link_geometry(link, abb, "robots/abb_irb2400")
    assert len(geometry.solids[0].triangles) == 2646  # the DAE, not the 308-triangle STL
    centers, radii = fit_link(geometry, FAST)
    assert prove(geometry, centers, radii).proven


def test_mesh_with_a_hole_is_fitted_and_proven(tmp_path: Path) -> None:
    import trimesh

    folder = _craft(tmp_path, LINK7_MESH, LINK7_MESH)
    mesh = trimesh.load(folder / "meshes" / "link_7.stl")
    mesh.update_faces(np.arange(5, len(mesh.faces)))
    mesh.export(folder / "meshes" / "link_7.stl")
    geometry = _link(folder, "link_7")
    assert not geometry.solids[0].closed
    centers, radii = fit_link(geometry, FAST)
    assert prove(geometry, centers, radii).proven
    ratio, _ = excess_ratio(geometry, centers, radii, 20000)
    assert 0 < ratio < 10


def test_a_finer_mesh_than_the_fit_needs_is_thinned_and_still_proven(tmp_path: Path) -> None:
    # link_7 subdivided until its vertices outnumber the cap: the optimisation gets at most
    # one sample per cube of diagonal / 60, the proof still holds for every triangle
    import trimesh

    from pipeline.spheres.fit import SURFACE_CAP, sample_problem
    from pipeline.spheres.geometry import thin

    folder = _craft(tmp_path, LINK7_MESH, LINK7_MESH)
    mesh = trimesh.load(folder / "meshes" / "link_7.stl")
    while len(mesh.vertices) <= 2 * SURFACE_CAP:
        mesh = mesh.subdivide()
    mesh.export(folder / "meshes" / "link_7.stl")
    geometry = _link(folder, "link_7")
    params = FitParams(max_spheres=4, rounds=2, grid_points=4000)
    problem = sample_problem(geometry, params)
    assert len(problem.surface) < SURFACE_CAP
    cube = np.floor(problem.surface / (problem.scale / 60)).astype(np.int64)
    assert len(np.unique(cube, axis=0)) == len(problem.surface)
    assert len(thin(problem.surface, problem.scale / 60)) == len(problem.surface)
    centers, radii = fit_link(geometry, params)
    assert prove(geometry, centers, radii).proven


def _outline_area(outline: np.ndarray) -> float:
    a, b, c, d = (outline[:, i] for i in range(4))
    cross = np.cross(c - a, d - b)  # a planar quad's (or a triangle's, d = c) area vector x 2
    return float(np.linalg.norm(cross, axis=1).sum() / 2)


@pytest.mark.parametrize(
    ("shape", "area"),
    [
        ('<box size="0.1 0.2 0.05"/>', 2 * (0.1 * 0.2 + 0.2 * 0.05 + 0.1 * 0.05)),
        ('<cylinder radius="0.05" length="0.2"/>', 2 * math.pi * 0.05 * (0.05 + 0.2)),
        ('<sphere radius="0.06"/>', 4 * math.pi * 0.06**2),
    ],
)
def test_show_outlines_cover_the_primitive_surface(tmp_path: Path, shape: str, area: float) -> None:
    # what `spheres show` draws: every piece as a polygon on its surface, not a sliver
    geometry = _link(_craft(tmp_path, LINK7_MESH, shape), "link_7")
    refined = [p if p.kind == "flat" else p.refine(0.01) for p in geometry.patches]
    drawn = sum(_outline_area(p.outline()) for p in refined)
    assert drawn == pytest.approx(area, rel=0.03)


def test_curved_pieces_split_across_their_longer_side(tmp_path: Path) -> None:
    # a thin long cylinder (baxter's finger tip: radius 8 mm, 37 mm long): a side strip
    # (3.1 mm of arc) is halved 4 times along its length, then once across: 32 pieces of at
    # most 3.5 mm, where splitting in four at every level made 256 (and the fit's samples)
    shape = '<cylinder radius="0.008" length="0.037"/>'
    geometry = _link(_craft(tmp_path, LINK7_MESH, shape), "link_7")
    side = next(p for p in geometry.patches if p.kind == "side")
    refined = side.refine(0.0035)
    assert len(refined) == 16 * 32
    hull = refined.hull()
    assert (np.linalg.norm(hull.max(axis=1) - hull.min(axis=1), axis=1) <= 0.0035).all()
    centers, radii = fit_link(geometry, FAST)
    assert prove(geometry, centers, radii).proven


def _refused_link_6(abb: Path, tmp_path: Path) -> Finding:
    """The one finding that loading link_6's collision geometry gives: mesh_unreadable."""
    link = load_robot(abb, tmp_path).link("link_6")
    assert link is not None
    with pytest.raises(ContractError) as caught:
        load_link_geometry(link, abb, "robots/abb_irb2400")
    [finding] = caught.value.findings
    assert finding.code == "mesh_unreadable"
    return finding


def _dae_in_millimetres(tmp_path: Path, unit: str) -> Path:
    """The abb's link_6 as a DAE in millimetres with `<unit meter=unit>`, as its collision."""
    import trimesh

    abb = tmp_path / "robots" / "abb_irb2400"
    shutil.copytree(REPO / "robots" / "abb_irb2400", abb)
    mesh = trimesh.load(abb / "meshes" / "link_6.stl", process=False)
    mesh.apply_scale(1000.0)
    dae = trimesh.exchange.dae.export_collada(mesh)
    text = dae.decode() if isinstance(dae, bytes) else dae
    text = text.replace("<asset>", f'<asset><unit name="millimeter" meter="{unit}"/>', 1)
    (abb / "meshes" / "link_6_mm.dae").write_text(text)
    urdf = abb / "robot.urdf"
    old = '<mesh filename="package://abb_irb2400/meshes/link_6.stl"/>'
    urdf.write_text(urdf.read_text().replace(old, old.replace(".stl", "_mm.dae"), 1))
    return abb


def test_dae_unit_of_a_metre_is_read_as_is(tmp_path: Path) -> None:
    # <unit meter="1">: every reader agrees; the mesh in millimetres is 1000 times the STL
    abb = _dae_in_millimetres(tmp_path, "1")
    link = load_robot(abb, tmp_path).link("link_6")
    assert link is not None
    dae = load_link_geometry(link, abb, "robots/abb_irb2400")
    plain = load_robot(REPO / "robots" / "abb_irb2400", REPO).link("link_6")
    assert plain is not None
    stl = load_link_geometry(plain, REPO / "robots" / "abb_irb2400", "robots/abb_irb2400")
    assert np.allclose(dae.bounds(), stl.bounds() * 1000, atol=1e-6)


@pytest.mark.parametrize(
    ("unit", "why"),
    [
        ("0.001", "Tesseract's mesh reader does not"),
        ("2", "Tesseract's mesh reader does not"),
        ("0", "not a positive number"),
        ("-0.001", "not a positive number"),
        ("nan", "not a positive number"),
    ],
)
def test_dae_unit_other_than_a_metre_is_mesh_unreadable(
    tmp_path: Path, unit: str, why: str
) -> None:
    """Tesseract collided with a DAE in millimetres (<unit meter="0.001">) 1000 times as large
    as the mesh the spheres covered: it ignores the unit, rviz applies it."""
    abb = _dae_in_millimetres(tmp_path, unit)
    finding = _refused_link_6(abb, tmp_path)
    assert finding.file == "robots/abb_irb2400/meshes/link_6_mm.dae"
    assert "<unit meter>" in finding.message and why in finding.message
    # the line of the <unit> element (a new-user trial found the finding named no place)
    text = (abb / "meshes" / "link_6_mm.dae").read_text()
    assert finding.place == str(text[: text.index("<unit ")].count("\n") + 1) != ""


def test_dae_unit_hint_of_mesh_unreadable_can_be_followed(tmp_path: Path) -> None:
    """mesh_unreadable (DAE unit): the hint offered a <mesh scale> instead of the unit, but a
    scale gave the same finding again (Tesseract applies the scale alone, rviz scale times
    unit). It names what works: the unit set to 1 and the factor given as the scale."""
    abb = _dae_in_millimetres(tmp_path, "0.0254")
    urdf = abb / "robot.urdf"
    named = '<mesh filename="package://abb_irb2400/meshes/link_6_mm.dae"'
    scaled = f'{named} scale="0.0254 0.0254 0.0254"'
    urdf.write_text(urdf.read_text().replace(named, scaled, 1))
    finding = _refused_link_6(abb, tmp_path)
    assert "whatever the URDF's <mesh scale>" in finding.message
    assert "or give its size" not in finding.hint
    assert finding.hint.startswith('set <unit meter="1"/> in its <asset>')
    assert '<mesh scale="0.0254 0.0254 0.0254">' in finding.hint
    # followed: the unit set to 1, the scale kept; the mesh is read at the scale's size
    dae = abb / "meshes" / "link_6_mm.dae"
    dae.write_text(dae.read_text().replace('meter="0.0254"', 'meter="1"', 1))
    link = load_robot(abb, tmp_path).link("link_6")
    assert link is not None
    bounds = load_link_geometry(link, abb, "robots/abb_irb2400").bounds()
    plain = load_robot(REPO / "robots" / "abb_irb2400", REPO).link("link_6")
    assert plain is not None
    stl = load_link_geometry(plain, REPO / "robots" / "abb_irb2400", "robots/abb_irb2400")
    assert np.allclose(bounds, stl.bounds() * 1000 * 0.0254, atol=1e-6)


def test_box_only_link_also_starts_from_equal_cells(tmp_path: Path) -> None:
    # panda's finger box (22 x 15 x 20 mm) with 4 spheres: the k-means start alone ends at an
    # excess of 1.60; the box cut in 2 x 1 x 2 cells, one circumscribed sphere each, at 1.07
    from pipeline.spheres.fit import sample_problem
    from pipeline.spheres.primitives import cells_start

    geometry = _link(_craft(tmp_path, LINK7_MESH, '<box size="0.022 0.015 0.020"/>'), "link_7")
    params = FitParams(max_spheres=4)
    start = cells_start(geometry, sample_problem(geometry, params).outside, 4)
    assert start is not None
    centers, radii = start
    assert len(radii) == 4
    assert np.allclose(radii, np.linalg.norm([0.011, 0.015, 0.010]) / 2)
    assert prove(geometry, centers, radii + 1e-7).proven  # cells meet: pieces straddle them
    centers, radii = fit_link(geometry, params)
    assert prove(geometry, centers, radii).proven
    ratio, _ = excess_ratio(geometry, centers, radii, 20000)
    assert ratio < 1.25


def test_cells_start_is_only_for_boxes_and_cylinders_and_spheres_with_them(
    tmp_path: Path,
) -> None:
    from pipeline.spheres.primitives import cells_start

    assert cells_start(_link(REPO / "robots" / IIWA, "link_7"), np.zeros((0, 3)), 16) is None
    ball = _link(_craft(tmp_path, LINK7_MESH, '<sphere radius="0.05"/>'), "link_7")
    assert cells_start(ball, np.zeros((0, 3)), 16) is None  # its own exact cover
    capsule = (
        '<cylinder radius="0.05" length="0.1"/></geometry></collision>'
        '<collision><origin xyz="0 0 0.05"/><geometry><sphere radius="0.05"/>'
    )
    start = cells_start(
        _link(_craft(tmp_path / "capsule", LINK7_MESH, capsule), "link_7"), np.zeros((0, 3)), 16
    )
    assert start is not None and 0.05 in start[1]


def test_cylinder_only_link_also_starts_from_slices_along_its_axis(tmp_path: Path) -> None:
    # z1's forearm: a rod (radius 22.5 mm, 235 mm) between two squat cylinders; the k-means
    # start ended at an excess of 0.86 using 10 of 16 spheres, slices along the axes at 0.45
    from pipeline.spheres.fit import sample_problem
    from pipeline.spheres.primitives import cells_start

    rod = (
        '<cylinder radius="0.0325" length="0.102"/></geometry></collision>'
        '<collision><origin rpy="0 1.5707963267948966 0" xyz="-0.1625 0 0"/>'
        '<geometry><cylinder radius="0.0225" length="0.235"/></geometry></collision>'
        '<collision><origin rpy="1.5707963267948966 0 0" xyz="-0.35 0 0"/>'
        '<geometry><cylinder radius="0.0325" length="0.051"/>'
    )
    geometry = _link(_craft(tmp_path, LINK7_MESH, rod), "link_7")
    assert [s.kind for s in geometry.solids] == ["cylinder"] * 3
    params = FitParams()
    start = cells_start(geometry, sample_problem(geometry, params).outside, 16)
    assert start is not None
    centers, radii = start
    # the slices' spheres touch the rims exactly: the proof's hulls of curved pieces need a
    # little room (the fit grows them by what the proof asks)
    assert prove(geometry, centers, radii + 1e-5).proven
    centers, radii = fit_link(geometry, params)
    assert prove(geometry, centers, radii).proven
    ratio, _ = excess_ratio(geometry, centers, radii, 20000)
    assert ratio < 0.6


def test_surface_points_of_a_repeated_triangle_refine_it_once() -> None:
    """A mesh of 200 000 copies of one triangle refined every copy: 6.4 GB for 5 000."""
    one = np.array([[[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0]]])
    frame = Frame.of(Origin())
    geometry = LinkGeometry("a", (Patches("flat", np.repeat(one, 5000, axis=0), frame),), ())
    points, peak = peak_memory(lambda: geometry.surface_points(0.1 / 40))
    assert peak < 50 * 2**20
    alone = LinkGeometry("a", (Patches("flat", one, frame),), ()).surface_points(0.1 / 40)
    assert np.array_equal(points, alone)


def test_surface_points_of_a_mesh_of_slivers_are_thinned_to_one_per_cell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mesh of long slivers is refined along its length alone, so its hull points crowd: a
    CAD cylinder of 128 sides gave 33 per cell of half the sample size (an extrusion's profile
    44), and every stage of the fit paid for them. Thinned, each cell the points reached keeps
    one; a mesh of well-shaped triangles keeps them all."""
    import trimesh

    from pipeline.spheres import geometry as module

    frame = Frame.of(Origin())
    slivers = trimesh.creation.cylinder(radius=0.03, height=0.3, sections=128)
    shaped = trimesh.creation.icosphere(subdivisions=3, radius=0.1)
    for mesh, thinned in ((slivers, True), (shaped, False)):
        geometry = LinkGeometry("a", (Patches("flat", mesh.triangles, frame),), ())
        size = float(np.linalg.norm(mesh.extents)) / 20
        points = geometry.surface_points(size)
        with monkeypatch.context() as patch:
            patch.setattr(module, "THIN_ABOVE", 10**9)
            every = geometry.surface_points(size)
        cells = np.unique(np.floor(points / (size / 2)).astype(np.int64), axis=0)
        reached = np.unique(np.floor(every / (size / 2)).astype(np.int64), axis=0)
        assert np.array_equal(cells, reached)
        if thinned:
            assert len(every) > module.THIN_ABOVE * len(reached)
            assert len(points) == len(cells)  # one point per cell
            assert np.all(np.isin(points.view("f8,f8,f8"), every.view("f8,f8,f8")))
        else:
            assert np.array_equal(points, every)


@pytest.mark.parametrize("rpy", [(0, 0, 0), (0.3, -0.7, 1.1), (math.pi / 2, 0, 0)])
def test_a_cylinders_bounds_are_its_exact_box_at_any_tilt(rpy: tuple[float, float, float]) -> None:
    from pipeline.urdf import Cylinder
    from tests.test_spheres_ball import primitive_link

    geometry = primitive_link(((0.1, -0.2, 0.05), rpy, Cylinder(0.2, 0.03)))
    lo, hi = geometry.bounds()
    points = geometry.surface_points(0.002)
    # within 0.01 mm: the sampled surface's curved pieces lie a hair outside the true circle
    assert np.all(points >= lo - 1e-5) and np.all(points <= hi + 1e-5)
    # tight: the surface reaches each face of the box (the enclosing ball's box would not)
    assert np.allclose(points.min(axis=0), lo, atol=0.002)
    assert np.allclose(points.max(axis=0), hi, atol=0.002)
