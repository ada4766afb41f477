"""The fitter's fast paths compute exactly what the plain computations they replace compute."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pipeline.spheres import portable
from pipeline.spheres.adam import Objective, distances
from pipeline.spheres.ball import unique_rows
from pipeline.spheres.finish import shrink
from pipeline.spheres.fit import FitParams, _cover_radii, sample_problem
from pipeline.spheres.frame import Frame
from pipeline.spheres.geometry import (
    THIN_ABOVE,
    Array,
    LinkGeometry,
    Skip,
    load_link_geometry,
    thin,
)
from pipeline.spheres.patches import Patches
from pipeline.spheres.plate import kmeans
from pipeline.spheres.rows import negative_zero, sorted_rows
from pipeline.spheres.winding import _solid_angles, closing_fan, ray_winding
from pipeline.urdf import Origin, load_robot
from tests.conftest import REPO

IIWA = "lbr_iiwa_14_r820"


def _geometry(name: str) -> LinkGeometry:
    folder = REPO / "robots" / IIWA
    link = load_robot(folder, REPO).link(name)
    assert link is not None
    return load_link_geometry(link, folder, f"robots/{IIWA}")


def _closed_soup_and_points() -> tuple[Array, Array]:
    """link_4's triangles less 40 of them, closed by closing_fan, and 4000 points in and around
    them."""
    triangles = _geometry("link_4").solids[0].triangles
    opened = triangles[np.random.default_rng(0).permutation(len(triangles))[40:]]
    closed = np.concatenate([opened, closing_fan(opened)])
    lo, hi = closed.reshape(-1, 3).min(axis=0), closed.reshape(-1, 3).max(axis=0)
    points = np.random.default_rng(1).uniform(lo - 0.02, hi + 0.02, size=(4000, 3))
    return closed, points


def test_ray_winding_per_cell_lists_count_every_crossing() -> None:
    # one cell holds every triangle: the plain count; the fan's long triangles cross many cells
    closed, points = _closed_soup_and_points()
    binned = ray_winding(closed, points)
    assert np.array_equal(binned, ray_winding(closed, points, bins=1))
    assert (binned != 0).any() and (binned == 0).any()


def test_ray_winding_counts_a_crowded_cell_in_parts_of_bounded_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cell's crossings were one (points, triangles) array of each quantity: a 250 000-
    triangle soup's closing fan (750 000 long triangles to its apex) put 34.5 M pairs in one
    cell, 3.7 GB for 24 000 points, and `verify` of a 1 M-triangle soup passed 14 GB. Counted
    some points and triangles at a time, each point's count is the same sum of the same whole
    numbers."""
    import pipeline.spheres.winding as winding

    closed, points = _closed_soup_and_points()
    # the plain count: every point against every triangle at once, in the ray's frame
    basis = np.stack([winding._RAY_U, winding._RAY_V, winding._RAY])
    near = np.flatnonzero(winding._in_bounds(closed, points))
    whole = np.zeros(len(points))
    whole[near] = winding._crossings(closed @ basis.T, points[near] @ basis.T)
    sizes = []
    plain = winding._crossings

    def counted(t: Array, q: Array) -> Array:
        sizes.append(len(t) * len(q))
        return plain(t, q)

    monkeypatch.setattr(winding, "_crossings", counted)
    monkeypatch.setattr(winding, "CROSSING_PAIRS", 50_000)
    assert np.array_equal(ray_winding(closed, points, bins=1), whole)
    assert len(sizes) > 1 and max(sizes) <= max(50_000, len(closed))
    # the triangles listed some at a time too (the fan's, under every cell they cross)
    monkeypatch.setattr(winding, "LISTED", 2_000)
    sizes.clear()
    assert np.array_equal(ray_winding(closed, points), ray_winding(closed, points, bins=1))
    assert np.array_equal(ray_winding(closed, points), whole)
    assert max(sizes) <= 50_000


def _fan_by_unique_rows(triangles: Array) -> Array:
    """closing_fan as first written: the edge pairs made unique as rows (np.unique axis=0)."""
    verts, ids = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    ids = ids.reshape(-1, 3)
    edges = np.concatenate([ids[:, [0, 1]], ids[:, [1, 2]], ids[:, [2, 0]]])
    edges = edges[edges[:, 0] != edges[:, 1]]
    sign = np.where(edges[:, 0] < edges[:, 1], 1, -1)
    pairs, inverse = np.unique(np.sort(edges, axis=1), axis=0, return_inverse=True)
    net = np.zeros(len(pairs), dtype=np.int64)
    np.add.at(net, inverse.ravel(), sign)
    pairs, net = pairs[net != 0], net[net != 0]
    heads = np.repeat(np.where(net[:, None] > 0, pairs, pairs[:, ::-1]), np.abs(net), axis=0)
    a, b = verts[heads[:, 0]], verts[heads[:, 1]]
    apex = np.broadcast_to(np.concatenate([a, b]).mean(axis=0), a.shape)
    return np.stack([b, a, apex], axis=1)


@pytest.mark.parametrize("link", ["base_link", "link_4", "link_7"])
def test_closing_fan_edge_keys_are_the_unique_rows(link: str) -> None:
    # holes of every size: a random third of the triangles dropped, and one copy flipped
    triangles = _geometry(link).solids[0].triangles
    rng = np.random.default_rng(3)
    opened = triangles[rng.permutation(len(triangles))[len(triangles) // 3 :]]
    soup = np.concatenate([opened, opened[:50, ::-1], opened[:20]])
    fan = closing_fan(soup)
    assert len(fan) > 0
    assert np.array_equal(fan, _fan_by_unique_rows(soup))


def test_solid_angles_per_coordinate_are_van_oosterom_strackee() -> None:
    triangles = _geometry("link_7").solids[0].triangles[:300]
    points = np.random.default_rng(2).uniform(-0.1, 0.1, size=(500, 3))
    d = triangles[None, :, :, :] - points[:, None, None, :]
    a, b, c = d[:, :, 0], d[:, :, 1], d[:, :, 2]
    la, lb, lc = (np.linalg.norm(v, axis=2) for v in (a, b, c))
    det = np.einsum("ptk,ptk->pt", a, np.cross(b, c))
    dots = [np.einsum("ptk,ptk->pt", u, v) for u, v in ((a, b), (b, c), (c, a))]
    dot = la * lb * lc + dots[0] * lc + dots[1] * la + dots[2] * lb
    plain = np.arctan2(det, dot).sum(axis=1) / (2 * np.pi)
    assert np.abs(_solid_angles(triangles, points, chunk=7_000) - plain).max() < 1e-12


def _refine_by_remeasuring(patches: Patches, size: float) -> Patches:
    out = patches
    for _ in range(48):
        hull = out.hull()
        big = np.linalg.norm(hull.max(axis=1) - hull.min(axis=1), axis=1) > size
        if not big.any():
            break
        both = [out.take(~big), out.take(big).split()]
        out = Patches(out.kind, np.concatenate([p.params for p in both]), out.frame)
    return out


def test_refine_gives_the_patches_of_remeasuring_all_in_their_order() -> None:
    patches = _geometry("link_7").patches[0]
    for size in (0.2, 0.03, 0.01):
        fast, plain = patches.refine(size), _refine_by_remeasuring(patches, size)
        assert np.array_equal(fast.params, plain.params)


def _surface_points_of_the_leaves(
    geometry: LinkGeometry, size: float, skip: Skip | None = None
) -> Array:
    """surface_points as every leaf's hull points, sorted without repeats, then thinned."""
    distinct = [
        p.take(np.unique(p.params.reshape(len(p), -1), axis=0, return_index=True)[1])
        for p in geometry.patches
    ]
    if skip is not None:
        distinct = [p.take(~skip(p)) for p in (p.refine(4 * size) for p in distinct)]
    pts = np.concatenate([p.refine(size).hull().reshape(-1, 3) for p in distinct])
    pts = pts.take(np.lexsort(pts.T[::-1]), axis=0)
    pts = pts.compress(np.r_[True, np.any(pts[1:] != pts[:-1], axis=1)], axis=0)
    cells = thin(pts, size / 2)
    return cells if len(pts) > THIN_ABOVE * len(cells) else pts


def _slivers() -> LinkGeometry:
    """A CAD cylinder of 128 sides, with a line and a point beside it: crowded, thinned."""
    import trimesh

    mesh = trimesh.creation.cylinder(radius=0.03, height=0.3, sections=128)
    frame = Frame.of(Origin())
    loose = np.array([[[0.05, 0, 0], [0.05, 0, 0.2]], [[0.06, 0, 0], [0.06, 0, 0]]])
    return LinkGeometry(
        "a", (Patches("flat", mesh.triangles, frame), Patches("segment", loose, frame)), ()
    )


def _primitives(tmp: Path) -> LinkGeometry:
    """A box, a cylinder and a sphere: flat, side, cap and sphere patches."""
    shutil.copytree(REPO / "robots" / IIWA, tmp / IIWA)
    urdf = tmp / IIWA / "robot.urdf"
    shapes = (
        '<collision><geometry><box size="0.1 0.2 0.05"/></geometry></collision>'
        '<collision><origin xyz="0 0 0.2" rpy="0.3 0 0"/>'
        '<geometry><cylinder radius="0.04" length="0.3"/></geometry></collision>'
        '<collision><origin xyz="0.1 0 0"/><geometry><sphere radius="0.05"/></geometry></collision>'
    )
    text = urdf.read_text()
    start = text.index("<collision>", text.index('<link name="link_1"'))
    end = text.index("</collision>", start) + len("</collision>")
    urdf.write_text(text[:start] + shapes + text[end:])
    link = load_robot(tmp / IIWA, tmp).link("link_1")
    assert link is not None
    return load_link_geometry(link, tmp / IIWA, f"robots/{IIWA}")


@pytest.mark.parametrize("case", ["link_2", "link_7", "slivers", "primitives", "negative zero"])
def test_surface_points_from_the_midpoints_are_those_of_the_leaves(
    case: str, tmp_path: Path
) -> None:
    """The leaves' corners are the patches' own and their splits' midpoints: the same points
    (an extrusion refined to 2.2 million corners took 0.24 s to sort; of them, a third)."""
    if case == "slivers":
        geometry = _slivers()
    elif case == "primitives":
        geometry = _primitives(tmp_path)
    else:
        geometry = _geometry("link_7" if case == "negative zero" else case)
    if case == "negative zero":  # which of 0.0 and -0.0 is kept follows the leaves' order
        flat = geometry.patches[0]
        params = flat.params.copy()
        params[:, :, 0] -= params[0, 0, 0]
        params[::2, :, 0] *= -1
        geometry = replace(geometry, patches=(Patches("flat", params, flat.frame),))
        assert (np.signbit(params) & (params == 0)).any()
    lo, hi = geometry.bounds()
    scale = float(np.linalg.norm(hi - lo))
    rng = np.random.default_rng(5)
    for divisions in (20, 40, 80):
        size = scale / divisions
        fast = geometry.surface_points(size)
        assert fast.tobytes() == _surface_points_of_the_leaves(geometry, size).tobytes()

        def skip(patches: Patches) -> Array:
            return rng.random(len(patches)) < 0.7

        state = rng.bit_generator.state
        fast = geometry.surface_points(size, skip)
        rng.bit_generator.state = state
        plain = _surface_points_of_the_leaves(geometry, size, skip)
        assert fast.tobytes() == plain.tobytes()


@pytest.mark.parametrize("case", ["link_1", "link_7", "empty", "repeats", "negative zero"])
def test_unique_rows_by_lexsort_are_np_uniques(case: str) -> None:
    if case == "empty":
        points = np.zeros((0, 3))
    elif case in ("repeats", "negative zero"):
        points = np.random.default_rng(4).integers(-2, 3, size=(500, 3)).astype(float) / 4
        if case == "negative zero":
            points[::3] *= -1  # 0.0 and -0.0 in one row of numbers
            assert (np.signbit(points) & (points == 0)).any()
    else:
        points = _geometry(case).patches[0].params.reshape(-1, 3)
    assert unique_rows(points).tobytes() == np.unique(points, axis=0).tobytes()


@pytest.mark.parametrize(
    "case", ["link_1", "link_7", "empty", "repeats", "negative zero", "ten columns"]
)
def test_sorted_rows_are_the_first_of_each_row_in_a_stable_sort(case: str) -> None:
    """The surface points, the ball's corners and a mesh part's corners for its hull are
    deduplicated by one sort: each row once, the first of rows equal as numbers kept."""
    rng = np.random.default_rng(6)
    if case == "empty":
        points = np.zeros((0, 3))
    elif case == "ten columns":
        points = rng.integers(0, 2, size=(300, 10)).astype(float)
    elif case in ("repeats", "negative zero"):
        points = rng.integers(-2, 3, size=(500, 3)).astype(float) / 4
        if case == "negative zero":
            points[::3] *= -1
    else:
        points = _geometry(case).patches[0].params.reshape(-1, 3)
    assert negative_zero(points) is (case == "negative zero")
    # Python's sort is stable and takes -0.0 for 0.0, as the lexsort does
    order = sorted(range(len(points)), key=lambda i: tuple(points[i]))
    kept = [
        i for n, i in enumerate(order) if n == 0 or tuple(points[order[n - 1]]) != tuple(points[i])
    ]
    assert sorted_rows(points).tobytes() == points[kept].tobytes()


def _shrink_by_recounting(surface: Array, centers: Array, radii: Array) -> Array:
    dist = np.linalg.norm(surface[:, None, :] - centers[None, :, :], axis=2)
    radii = radii.copy()
    for j in np.argsort(-radii):
        inside = dist <= radii[None, :]
        alone = inside[:, j] & (inside.sum(axis=1) - inside[:, j] == 0)
        radii[j] = float(dist[alone, j].max()) if alone.any() else 0.0
    return radii


def test_shrink_keeping_counts_gives_the_radii_of_recounting() -> None:
    surface = _geometry("link_2").surface_points(0.02)
    rng = np.random.default_rng(3)
    centers = surface[rng.choice(len(surface), size=12, replace=False)]
    radii = _cover_radii(surface, centers) * 1.5  # overlapping: some spheres shrink to 0
    fast = shrink(surface, centers, radii)
    assert np.array_equal(fast, _shrink_by_recounting(surface, centers, radii))
    assert (fast == 0).any() and (fast > 0).any()


@pytest.mark.parametrize(("move", "shrink"), [(0.3, 0.05), (0.0, 0.001)], ids=["moved", "shrunk"])
def test_gradient_skipping_held_samples_is_the_full_gradient(move: float, shrink: float) -> None:
    params = FitParams(max_spheres=8)
    problem = sample_problem(_geometry("link_3"), params)
    centers = kmeans(problem.surface, 8, np.random.default_rng(0))
    radii = _cover_radii(problem.surface, centers)
    start = np.concatenate([centers.ravel(), radii])
    reach = params.reach * problem.scale
    moved = start + np.random.default_rng(4).uniform(-move, move, size=start.shape) * reach
    moved[24:] -= shrink * reach  # spheres shrink: samples near their boundary come out
    reused = Objective(problem, 8, reach)
    reused.select(centers, radii)
    reused.gradient(start)  # takes the reference here
    fresh = Objective(problem, 8, reach)
    fresh.select(centers, radii)
    for objective in (reused, fresh):
        objective.mu = 1e4
    full = fresh.gradient(moved)
    assert np.array_equal(reused.gradient(moved), full)
    fresh.mu = 0.0  # some samples are short of coverage: their penalty counts
    assert not np.array_equal(fresh.gradient(moved), full)
    # the reference was kept: the samples held since it were skipped, not evaluated again
    assert np.array_equal(reused.ref_c, centers)
    assert np.array_equal(fresh.ref_c, moved[:24].reshape(8, 3))


def _exp_by_ldexp(x: Array) -> Array:
    """portable.exp as first written: the polynomial scaled by np.ldexp."""
    x = np.clip(np.asarray(x, dtype=np.float64), -746.0, 709.0)
    k = np.rint(x * portable._INV_LN2)
    r = (x - k * portable._LN2_HI) - k * portable._LN2_LO
    p = np.full_like(r, portable._EXP_TERMS[13])
    for term in reversed(portable._EXP_TERMS[:13]):
        p *= r
        p += term
    return np.ldexp(p, k.astype(np.int32))


EXP_RANGES = [
    ("soft_union", -40.0, 40.0),  # the clipped arguments of the excess
    ("coverage", -746.0, 0.0),  # the soft maximum's, down into the subnormals
    ("subnormal", -746.0, -708.0),
    ("whole_domain", -800.0, 720.0),
]


@pytest.mark.parametrize(("case", "lo", "hi"), EXP_RANGES, ids=[c[0] for c in EXP_RANGES])
def test_exp_scaled_by_exponent_bits_is_ldexps_numbers(case: str, lo: float, hi: float) -> None:
    x = np.random.default_rng(7).uniform(lo, hi, 200_000)
    edges = [-np.inf, -800.0, -746.0, -745.2, -745.1332191019412, -708.4, -40.0, -0.0, 0.0]
    x = np.concatenate([x, np.nextafter(x, np.inf), edges, [40.0, 709.0, 709.78, np.inf]])
    assert np.array_equal(portable.exp(x).view(np.int64), _exp_by_ldexp(x).view(np.int64))


@pytest.mark.parametrize("empty", [False, True], ids=["pairs", "no_pairs"])
def test_selected_pairs_runs_are_np_uniques_inverse(empty: bool) -> None:
    params = FitParams(max_spheres=8)
    problem = sample_problem(_geometry("link_3"), params)
    if empty:
        problem = replace(problem, outside=problem.outside[:0])
    centers = kmeans(problem.surface, 8, np.random.default_rng(0))
    radii = _cover_radii(problem.surface, centers)
    objective = Objective(problem, 8, params.reach * problem.scale)
    objective.select(centers, radii)
    gap = distances(problem.outside, centers) - radii[None, :]
    o_pt, o_k = np.nonzero(gap < 2 * objective.reach + 8 * objective.tau)
    used, inverse = np.unique(o_pt, return_inverse=True)
    assert np.array_equal(objective.o_k, o_k)
    assert np.array_equal(objective.o_pt, inverse)
    assert np.array_equal(
        objective.o_start, np.flatnonzero(np.r_[True, inverse[1:] != inverse[:-1]])
    )
    assert objective.o_count == len(used)
    assert len(o_pt) == 0 if empty else len(used) < len(o_pt)  # points with several spheres
