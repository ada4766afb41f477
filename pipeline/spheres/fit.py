"""The conservative sphere fitter: seed, optimise a smooth excess, then finish (finish.py:
harden, polish, fill holes, grow until proven)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from pipeline.spheres.adam import Problem, adam
from pipeline.spheres.ball import enclosing_ball, extremes, farthest
from pipeline.spheres.finish import finish, grow_until_proven, harden, on_grid, rounded_up, shrink
from pipeline.spheres.finish import outside_count as _outside_count
from pipeline.spheres.geometry import Array, LinkGeometry, thin
from pipeline.spheres.plate import kmeans, lloyd, nearest, plate_axis, plate_starts
from pipeline.spheres.primitives import cells_start

FITTER_NAME = "pipeline.spheres.fit"
FITTER_VERSION = "19"
# More surface samples than this come from a mesh finer than the fit needs (the optimisation's
# cost grows with them): they are thinned to one per cube of diagonal / (3 sample_divisions).
SURFACE_CAP = 12_000
# surface samples nearer than this many sample spacings on every axis belong to one piece of the
# surface (refined patches put neighbours within one spacing; thinning spreads them a little)
PIECE_GAP = 1.5


@dataclass(frozen=True)
class FitParams:
    """What a fit depends on besides the geometry."""

    max_spheres: int = 16
    seed: int = 0
    sample_divisions: int = 20  # surface samples every bounds-diagonal / this
    grid_points: int = 24_000  # outside-volume evaluation points
    iterations: int = 36
    rounds: int = 20
    learning_rate: float = 0.003
    reach: float = 0.03
    sharpen: float = 0.02  # the soft union ends at this share of its starting width
    harden_divisions: int = 40
    polish_step: float = 0.01  # first move of the hard polish, share of the bounds diagonal
    polish_passes: int = 8
    # the polished cover's holes: fine surface points (every bounds-diagonal / hole_divisions)
    # it misses join the samples, and it is hardened and polished again, hole_rounds times
    hole_divisions: int = 80
    hole_rounds: int = 2
    # then the corners of the pieces the growth to proof had to cover (thinned to one per cube
    # of bounds-diagonal / growth_divisions) join the samples, and it is polished again,
    # growth_rounds times (a setting: tighter, and slower); of the last hole round's, these
    # and round 0's covers grown, the fewest outside points is kept
    growth_divisions: int = 320
    growth_rounds: int = 0
    # a plate (thinnest extent at most plate_ratio of the next) starts on its mid-plane, held
    # there for plate_share of the rounds
    plate_ratio: float = 0.55
    plate_share: float = 0.3

    def schedule(self) -> list[float]:
        """Penalty weights of the optimisation rounds, rising to enforce coverage."""
        return [10.0 ** (2 + 3 * i / max(1, self.rounds - 1)) for i in range(self.rounds)]

    def as_json(self) -> dict[str, float]:
        """The parameters as recorded in provenance."""
        return {
            "grid_points": self.grid_points,
            "learning_rate": self.learning_rate,
            "iterations": self.iterations,
            "max_spheres": self.max_spheres,
            "reach": self.reach,
            "rounds": self.rounds,
            "sample_divisions": self.sample_divisions,
            "seed": self.seed,
            "sharpen": self.sharpen,
            "harden_divisions": self.harden_divisions,
            "polish_passes": self.polish_passes,
            "polish_step": self.polish_step,
            "hole_divisions": self.hole_divisions,
            "hole_rounds": self.hole_rounds,
            "growth_divisions": self.growth_divisions,
            "growth_rounds": self.growth_rounds,
            "plate_ratio": self.plate_ratio,
            "plate_share": self.plate_share,
        }


def sample_problem(geometry: LinkGeometry, params: FitParams) -> Problem:
    """Surface samples and an outside-volume grid around the link."""
    lo, hi = geometry.bounds()
    scale = float(np.linalg.norm(hi - lo))
    surface = geometry.surface_points(scale / params.sample_divisions)
    if len(surface) > SURFACE_CAP:
        surface = thin(surface, scale / (3 * params.sample_divisions))
    pad = 0.15 * scale
    lo, hi = lo - pad, hi + pad
    step = float(np.prod(hi - lo) / params.grid_points) ** (1 / 3)
    # an irrational offset keeps grid points off the mesh's planes
    axes = [np.arange(a + step * 0.4142, b, step) for a, b in zip(lo, hi, strict=True)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    inside = geometry.inside(grid)
    cell = step**3
    # a surface that encloses nothing (a flat mesh) still has a surface to cover: the
    # objective is normalised by at least one grid cell
    volume = max(float(inside.sum()), 1.0) * cell
    return Problem(surface, grid[~inside], cell, volume, scale, grid[inside])


def start_centers(
    geometry: LinkGeometry, problem: Problem, k: int, params: FitParams
) -> tuple[Array, tuple[int, int] | None]:
    """The optimisation's start: k-means centres and what the optimisation holds fixed.

    A plate's spheres belong on its mid-plane, where each covers both faces: of the plate
    starts there (k-means of its solid moved onto that plane, and the rim layouts), the one
    whose covering leaves the fewest outside grid points, held on the plane while the union
    first settles (surface k-means puts them on the faces, and the optimisation alone seldom
    brings them back). Any other link, or a plate the grid holds too few points of, starts
    from k-means of its surface.
    """
    rng = np.random.default_rng(params.seed)
    axis = plate_axis(geometry, params.plate_ratio)
    if axis is None or len(problem.solid) < 4 * k:
        centers, pinned = kmeans(problem.surface, k, rng), None
    else:
        starts = plate_starts(geometry, problem.solid, problem.surface, k, axis, rng)
        counts = [_outside_count(problem, (c, _start_radii(problem.surface, c))) for c in starts]
        centers = starts[int(np.argmin(counts))]
        pinned = (axis, round(params.plate_share * params.rounds))
    pieces = surface_pieces(problem.surface, PIECE_GAP * problem.scale / params.sample_divisions)
    return _serve_pieces(problem.surface, centers, pieces), pinned


def _start_radii(surface: Array, centers: Array) -> Array:
    """A start's covering: nearest-centre radii, hardened and shrunk."""
    return shrink(surface, centers, harden(surface, centers, _cover_radii(surface, centers)))


def surface_pieces(points: Array, size: float) -> Array:
    """Per surface sample, the number of its piece: samples in one cube of `size` or in two
    cubes that touch (at a face, edge or corner) share one, so samples nearer than `size` on
    every axis always do."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    cell = np.floor((points - points.min(axis=0)) / size).astype(np.int64) + 1
    cubes, of_point = np.unique(cell, axis=0, return_inverse=True)
    dims = cubes.max(axis=0) + 2
    key = (cubes[:, 0] * dims[1] + cubes[:, 1]) * dims[2] + cubes[:, 2]  # sorted, as cubes
    rows, cols = [], []
    for dx, dy, dz in _HALF_NEIGHBOURHOOD:
        target = key + (dx * dims[1] + dy) * dims[2] + dz
        at = np.minimum(np.searchsorted(key, target), len(key) - 1)
        hit = np.flatnonzero(key[at] == target)
        rows.append(hit)
        cols.append(at[hit])
    edges = (np.concatenate(rows), np.concatenate(cols))
    ones = np.ones(len(edges[0]), dtype=np.int8)
    graph = coo_matrix((ones, edges), shape=(len(key), len(key)))
    return np.asarray(connected_components(graph, directed=False)[1])[of_point.ravel()]


# one of each pair of opposite neighbour offsets of a cube: 13 of the 26
_HALF_NEIGHBOURHOOD = [
    (dx, dy, dz)
    for dx in (-1, 0, 1)
    for dy in (-1, 0, 1)
    for dz in (-1, 0, 1)
    if (dx, dy, dz) > (0, 0, 0)
]


def _serve_pieces(points: Array, centers: Array, piece: Array) -> Array:
    """Start centres with one in each separate piece of the surface, as far as the budget goes.

    k-means seldom seeds a piece of a few samples far from the rest (a stray speck of a mesh):
    its samples then join a cluster of the main body, whose covering sphere spans both, and the
    optimisation keeps that one sphere and drops every other. A centre is moved from the piece
    with most centres (one with fewest samples first) to the mean of the largest unserved piece.
    """
    count = int(piece.max()) + 1
    if count == 1:
        return centers
    centers = centers.copy()
    largest_first = np.argsort(-np.bincount(piece, minlength=count), kind="stable")
    for _ in range(len(centers)):
        label = nearest(points, centers)
        held = np.zeros((len(centers), count), dtype=np.int64)
        np.add.at(held, (label, piece), 1)
        busy = held.sum(axis=1) > 0
        main = np.where(busy, held.argmax(axis=1), -1)  # the piece each centre mostly serves
        unserved = largest_first[~np.isin(largest_first, main)]
        per_piece = np.bincount(main[busy], minlength=count)
        idle = np.flatnonzero(~busy)
        if not len(unserved):
            break
        if len(idle):
            donor = int(idle[0])
        else:
            rich = int(np.argmax(per_piece))
            if per_piece[rich] < 2:
                break  # more pieces than spheres: the rest share
            mine = np.flatnonzero(main == rich)
            donor = int(mine[np.argmin(held[mine].sum(axis=1))])
        centers[donor] = points[piece == unserved[0]].mean(axis=0)
    return lloyd(points, centers, 4)


def _cover_radii(points: Array, centers: Array) -> Array:
    label = nearest(points, centers)
    dist = np.linalg.norm(points - centers[label], axis=1)
    radii = np.zeros(len(centers))
    np.maximum.at(radii, label, dist)
    return radii


def exact_spheres(geometry: LinkGeometry, params: FitParams) -> tuple[Array, Array] | None:
    """A link made only of sphere primitives, within the budget, is its own exact cover."""
    solids = geometry.solids
    if not solids or len(solids) > params.max_spheres or any(s.kind != "sphere" for s in solids):
        return None
    centers = np.array([s.frame.translation for s in solids], dtype=float)
    return centers, np.array([float(s.size[0]) for s in solids])


def one_ball(geometry: LinkGeometry) -> tuple[Array, Array]:
    """The link's minimum enclosing ball: centre on the grid, radius grown until proven."""
    ext = extremes(geometry)
    centre, _ = enclosing_ball(ext)
    centers = on_grid(np.array([centre]))
    reach, _ = farthest(ext, (float(centers[0, 0]), float(centers[0, 1]), float(centers[0, 2])))
    # curved pieces touching the ball poke out of it until split deep: they grow it a little
    radii = grow_until_proven(geometry, centers, np.array([reach]))
    return centers, rounded_up(radii)


def fit_link(geometry: LinkGeometry, params: FitParams) -> tuple[Array, Array]:
    """Fit spheres to one link; returns centres (k, 3) and radii (k) that cover it, proven."""
    exact = exact_spheres(geometry, params)
    if exact is not None:
        centers = on_grid(exact[0])
        # each primitive grows alone in its own sphere: its curved pieces poke out of the sphere
        # they lie on until split ~12 levels deep, and one proof of all of them against all
        # spheres held (pieces x spheres) gaps: 40 primitives, budget 64, took gigabytes
        elements = zip(geometry.patches, geometry.solids, strict=True)
        radii = np.array(
            [
                grow_until_proven(
                    replace(geometry, patches=(patches,), solids=(solid,)),
                    centers[i : i + 1],
                    exact[1][i : i + 1],
                )[0]
                for i, (patches, solid) in enumerate(elements)
            ]
        )
        return centers, rounded_up(radii)
    ball = one_ball(geometry)
    if params.max_spheres == 1:  # for one sphere the smallest enclosing ball is the optimum
        return ball
    problem = sample_problem(geometry, params)
    start = cells_start(geometry, problem.outside, params.max_spheres)
    # primitives only: the cells' spheres, finished alike and as they are (each holds its cell
    # whole, so they need almost no growth, where the finish's hardening on samples then growth
    # can leave more outside: a thin rod, a 30 m bar); the fewest outside wins. The optimised
    # start competes there only on a plate: of 94 box and cylinder links of 10 robots, the 63
    # that are not plates were won by a cells' cover but one (by 2 outside points of 5,411), and
    # the plates' mid-plane start won 22 of 31 (a disc: 2,139 where the cells left 3,840)
    optimised = None
    if start is None or plate_axis(geometry, params.plate_ratio) is not None:
        optimised = _optimised(geometry, problem, params)
    if params.harden_divisions > params.sample_divisions:
        # radii fitted to dense samples leave less to grow between them
        dense = geometry.surface_points(problem.scale / params.harden_divisions)
        problem = replace(problem, surface=dense)
    covers = [] if optimised is None else [finish(geometry, problem, params, optimised)]
    if start is not None:
        covers.append(
            finish(geometry, problem, params, np.concatenate([start[0].ravel(), start[1]]))
        )
        if all(solid.kind != "sphere" for solid in geometry.solids):
            # a sphere's own sphere holds it exactly: its curved pieces need splitting some 12
            # levels deep to be proven inside (dual_panda's hand: 1.7 s of growth); without
            # this cover the excess is a little higher on some links (panda link6 0.0007 ->
            # 0.0025, of 0.0325 by version 17) and every dual_panda and frankie link fits in
            # at most 1.3 s
            centers = on_grid(start[0])
            covers.append((centers, rounded_up(grow_until_proven(geometry, centers, start[1]))))
    best = covers[0]
    for other in covers[1:]:
        if _outside_count(problem, other) < _outside_count(problem, best):
            best = other
    # a compact link (a sphere-like mesh) can leave less outside its one enclosing ball; the
    # ball's excess is exact (it holds the whole solid), the cover's counts only the padded grid
    ball_excess = 4 / 3 * math.pi * float(ball[1][0]) ** 3 - problem.volume
    if ball_excess < _outside_count(problem, best) * problem.weight:
        return ball
    return best


def _optimised(geometry: LinkGeometry, problem: Problem, params: FitParams) -> Array:
    """The optimisation's result from its start: centres then radii."""
    k = min(params.max_spheres, len(problem.surface))
    centers, pinned = start_centers(geometry, problem, k, params)
    radii = _cover_radii(problem.surface, centers)
    x = np.concatenate([centers.ravel(), radii])
    scale = problem.scale
    rate, reach = params.learning_rate * scale, params.reach * scale
    taus = (1.0, params.sharpen)
    return adam(problem, x, params.schedule(), params.iterations, rate, reach, taus, pinned)
