"""A soup's inside test by proven bounds decides every point as the exact winding number does."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable

import numpy as np
import pytest
import trimesh

from pipeline.spheres import winding_tree
from pipeline.spheres.winding import (
    _in_bounds,
    closing_fan,
    mesh_inside,
    mesh_winding,
    winding_number,
)

Array = np.ndarray


def _unwelded(triangles: Array, seed: int = 0) -> Array:
    """Every corner moved by up to 1e-7: no edge is shared, every edge is open."""
    jitter = np.random.default_rng(seed).uniform(-1e-7, 1e-7, size=triangles.shape)
    return triangles + jitter


def _sphere(subdivisions: int = 3) -> Array:
    ico = trimesh.creation.icosphere(subdivisions=subdivisions, radius=0.05)
    return np.asarray(ico.triangles, dtype=float)


def _dust() -> Array:
    rng = np.random.default_rng(1)
    centers = rng.uniform(-0.05, 0.05, size=(1500, 3))
    return centers[:, None, :] + rng.normal(size=(1500, 3, 3)) * 5e-5


def _bowl() -> Array:
    # an open hemisphere: its winding number runs from 0 to 1 across its opening
    tri = _sphere()
    return _unwelded(tri[tri.mean(axis=1)[:, 2] > 0])


def _sheet() -> Array:
    # a flat square of unwelded triangles: |w| < 1/2 off it, tending to 1/2 close to it
    grid = np.linspace(-0.05, 0.05, 21)
    x, y = np.meshgrid(grid[:-1], grid[:-1], indexing="ij")
    x, y, h = x.ravel(), y.ravel(), grid[1] - grid[0]
    zero = np.zeros_like(x)
    a = np.stack([x, y, zero], axis=1)
    b = np.stack([x + h, y, zero], axis=1)
    c = np.stack([x + h, y + h, zero], axis=1)
    d = np.stack([x, y + h, zero], axis=1)
    tri = np.concatenate([np.stack([a, b, c], axis=1), np.stack([a, c, d], axis=1)])
    # tilted a little, so the grid's points are not all on its plane's side by construction
    turn = trimesh.transformations.rotation_matrix(0.3, [1, 0.5, 0])[:3, :3]
    return _unwelded(tri @ turn.T)


SOUPS: list[tuple[str, Callable[[], Array]]] = [
    ("dust of tiny triangles", _dust),
    ("unwelded closed sphere", lambda: _unwelded(_sphere())),
    ("unwelded open bowl", _bowl),
    ("unwelded flat sheet", _sheet),
    (
        "sphere twice, one inside out",
        lambda: _unwelded(np.concatenate([_sphere(), _sphere()[:, ::-1]])),
    ),
    ("sphere twice (winding 2)", lambda: _unwelded(np.concatenate([_sphere(), _sphere()]))),
]


def _points(triangles: Array) -> Array:
    """Random points, a grid, and points on the soup itself: its corners and centroids."""
    lo, hi = triangles.reshape(-1, 3).min(axis=0), triangles.reshape(-1, 3).max(axis=0)
    rng = np.random.default_rng(2)
    random = rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), size=(1500, 3))
    axes = [np.linspace(a, b, 13) for a, b in zip(lo, hi, strict=True)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    on = np.concatenate([triangles[:200, 0], triangles[:200].mean(axis=1)])
    return np.concatenate([random, grid, on])


@pytest.mark.parametrize("make", [s[1] for s in SOUPS], ids=[s[0] for s in SOUPS])
def test_soup_inside_decisions_are_the_exact_winding_numbers(make: Callable[[], Array]) -> None:
    triangles = make()
    fan = closing_fan(triangles)
    assert len(fan) >= len(triangles)  # a soup: the tree decides
    points = _points(triangles)
    exact = np.abs(mesh_winding(triangles, points, fan)) >= 0.5
    assert np.array_equal(mesh_inside(triangles, points, fan), exact)


def _on(triangles: Array) -> Array:
    return _points(triangles)[-400:]


def _off(triangles: Array) -> Array:
    return _points(triangles)[:-400]


def _hovering(triangles: Array) -> Array:
    # 0.1 um over a sheet's triangles: |w| is 1/2 less about 1e-6, inside the margin
    normal = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    return np.concatenate([_off(triangles), triangles.mean(axis=1)[:200] + 1e-7 * normal[:200]])


@pytest.mark.parametrize(
    ("make", "where", "left_open"),
    [
        (_dust, _off, False),
        (lambda: _unwelded(_sphere()), _off, False),
        (_sheet, _hovering, True),
        (_dust, _on, True),
    ],
    ids=["dust", "closed sphere", "a sheet, hovering over it", "on the soup's triangles"],
)
def test_soup_points_near_one_half_or_on_a_triangle_are_left_to_the_exact_computation(
    make: Callable[[], Array], where: Callable[[Array], Array], left_open: bool
) -> None:
    triangles = make()
    points = where(triangles)
    points = points[_in_bounds(triangles, points)]
    inside, open_ = winding_tree.settle(winding_tree.build_tree(triangles), points)
    exact = np.abs(mesh_winding(triangles, points)) >= 0.5
    assert np.array_equal(inside[~open_], exact[~open_])
    assert open_.any() == left_open


@pytest.mark.parametrize(("share", "theta"), winding_tree.PASSES)
@pytest.mark.parametrize("make", [s[1] for s in SOUPS], ids=[s[0] for s in SOUPS])
def test_soup_bounds_contain_the_exact_winding_number(
    make: Callable[[], Array], share: float, theta: float
) -> None:
    triangles = make()
    points = _off(triangles)  # its solid angles are continuous off the soup
    value, error, _ = winding_tree._bounds(winding_tree.build_tree(triangles), points, share, theta)
    exact = mesh_winding(triangles, points)
    inside_bounds = _in_bounds(triangles, points)
    # points outside the bounds count as outside in the exact computation, not by their angles
    gap = np.abs(value / (4 * np.pi) - exact)[inside_bounds]
    # the exact computation's rounding (its fan's angles cancel) reaches 1e-9 here: far below
    # the margin the decisions keep from 1/2
    assert (gap <= error[inside_bounds] / (4 * np.pi) + 1e-7).all()
    assert winding_tree.MARGIN >= 100 * 1e-7


def _tube(unwelded: bool) -> Array:
    """An open tube around the z axis (no caps), 64 sides by 20 rings, symmetric about x = 0.

    Its closing fan's apex lies on the axis, so the fan's triangles stand on planes through
    the axis, such as x = 0, where a grid has points.
    """
    theta = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    rings = [
        np.stack([np.cos(theta) * 0.01, np.sin(theta) * 0.01, np.full(64, z)], axis=1)
        for z in np.linspace(0, 0.1, 21)
    ]
    quads = []
    for p0, p1 in itertools.pairwise(rings):
        q0, q1 = np.roll(p0, -1, axis=0), np.roll(p1, -1, axis=0)
        quads += [np.stack([p0, q0, q1], axis=1), np.stack([p0, q1, p1], axis=1)]
    tube = np.concatenate(quads)
    return _unwelded(tube) if unwelded else tube


@pytest.mark.parametrize("unwelded", [False, True], ids=["welded, fan summed", "soup, bounded"])
def test_points_on_closing_fan_triangles_are_decided_by_the_mesh_winding_number(
    unwelded: bool,
) -> None:
    # the exact computation counted such a point's ray crossing of the fan triangle and its
    # solid angle, both guesses on its plane: (0, 0.009, 0.005) came out 0.41, not 0.83
    triangles = _tube(unwelded)
    fan = closing_fan(triangles)
    y, z = np.meshgrid(np.linspace(-0.009, 0.009, 19), np.linspace(0.001, 0.099, 99))
    points = np.stack([np.zeros(y.size), y.ravel(), z.ravel()], axis=1)
    assert (len(fan) >= len(triangles)) == unwelded
    winding = mesh_winding(triangles, points, fan)
    assert np.allclose(winding, winding_number(triangles, points), atol=1e-7)
    assert mesh_inside(triangles, points, fan).all()


@pytest.mark.parametrize(
    ("make", "offset"),
    [(lambda: _unwelded(_sphere()), 1e5), (_bowl, 1e6)],
    ids=["closed sphere 1e5 m out", "open bowl 1e6 m out"],
)
def test_soup_far_from_the_origin_leaves_points_on_its_triangles_to_the_exact_computation(
    make: Callable[[], Array], offset: float
) -> None:
    # 1e5 m out, a centroid or corner is on its triangle's plane only within 1e-11 m: both
    # computations' sides were guesses (the exact one's: its rays', in turned coordinates), and
    # 244 of a sphere's points on or beside its triangles were decided the other way
    triangles = make() + offset
    points = _points(triangles)
    exact = np.abs(mesh_winding(triangles, points)) >= 0.5
    assert np.array_equal(mesh_inside(triangles, points), exact)


def test_soup_of_zero_area_triangles_is_decided_without_warnings() -> None:
    # a leaf of degenerate triangles (points and segments) near a point gave 0 / 0, which
    # numpy reported as a RuntimeWarning on every build of such a mesh
    sphere = _unwelded(_sphere())
    points_only = np.repeat(sphere[:300, :1], 3, axis=1)
    middle = (sphere[300:600, 0] + sphere[300:600, 1]) / 2
    segments = np.stack([sphere[300:600, 0], sphere[300:600, 1], middle], axis=1)
    triangles = np.concatenate([points_only, segments])
    points = _points(triangles)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inside = mesh_inside(triangles, points)
    assert np.array_equal(inside, np.abs(mesh_winding(triangles, points)) >= 0.5)


@pytest.mark.parametrize("make", [s[1] for s in SOUPS], ids=[s[0] for s in SOUPS])
def test_soup_bounds_hold_a_bounded_number_of_pairs_whatever_the_points(
    make: Callable[[], Array], monkeypatch: pytest.MonkeyPatch
) -> None:
    # every pair of a level was held at once: 2.7 GB for 100 000 points of a 250 000-triangle
    # soup, past 14 GB at 1 000 000; in chunks of 300 pairs, the same sums
    triangles = make()
    points = _points(triangles)
    tree = winding_tree.build_tree(triangles)
    share, theta = winding_tree.PASSES[0]
    whole = winding_tree._bounds(tree, points, share, theta)
    monkeypatch.setattr(winding_tree, "CHUNK", 300)
    pending = winding_tree.Pending(len(tree.levels))
    value, error, doubt = winding_tree._bounds(tree, points, share, theta, pending)
    assert pending.peak <= len(points) + 3 * 300 * len(tree.levels)
    assert np.allclose(value, whole[0], rtol=0, atol=1e-9)
    assert np.allclose(error, whole[1], rtol=1e-12, atol=0)
    assert np.array_equal(doubt, whole[2])
