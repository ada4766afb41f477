"""The fitter's finish: harden a start on dense samples, polish it, fill its holes, and grow it
until proven."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from pipeline.spheres.adam import Problem, distances
from pipeline.spheres.geometry import Array, LinkGeometry
from pipeline.spheres.patches import Patches
from pipeline.spheres.polish import polish
from pipeline.spheres.prove import allowance, piece_gaps, prove, prove_patches

if TYPE_CHECKING:
    from pipeline.spheres.fit import FitParams

GROW_DEPTH = 14  # pieces not proven at this depth make their best sphere grow
QUANTUM = 1e-6  # centres are rounded to it, radii rounded up to it (metres)
# quanta per metre, exact: k / PER_METRE is the double nearest to k micrometres (0.039911, where
# k * QUANTUM, rounded twice, gives 0.039910999999999995)
PER_METRE = 1_000_000


def harden(surface: Array, centers: Array, radii: Array) -> Array:
    """Radii that cover every sample: each sample goes to the sphere that reaches it best."""
    dist = distances(surface, centers)
    label = np.argmax(radii[None, :] - dist, axis=1)
    need = np.zeros(len(centers))
    np.maximum.at(need, label, dist[np.arange(len(surface)), label])
    return need


def shrink(surface: Array, centers: Array, radii: Array) -> Array:
    """Shrink each sphere to what no other sphere already covers, largest first."""
    dist = distances(surface, centers).T.copy()  # a sphere's distances contiguous
    radii = radii.copy()
    inside = dist <= radii[:, None]
    count = inside.sum(axis=0)  # spheres holding each sample, kept as radii shrink
    for j in np.argsort(-radii):
        alone = inside[j] & (count == 1)
        radii[j] = float(dist[j, alone].max()) if alone.any() else 0.0
        count -= inside[j]
        inside[j] = dist[j] <= radii[j]
        count += inside[j]
    return radii


def grow_until_proven(geometry: LinkGeometry, centers: Array, radii: Array) -> Array:
    """Grow radii where pieces are not proven covered, until the proof succeeds.

    Radii only grow, so a piece proven once stays proven: after the first proof only the
    pieces left unproven are checked again (the same pieces a full proof would end with).
    """
    return grown(geometry, centers, radii)[0]


def grown(geometry: LinkGeometry, centers: Array, radii: Array) -> tuple[Array, Array]:
    """grow_until_proven's radii, and the hull points of the pieces its first proof left
    unproven (the surface the growth had to cover)."""
    radii = radii.copy()
    proof = prove(geometry, centers, radii, max_depth=GROW_DEPTH)
    left, gaps = list(proof.unproven), proof.gaps
    corners = [p.hull().reshape(-1, 3) for p in proof.unproven]
    uncovered = np.concatenate(corners) if corners else np.zeros((0, 3))
    for _ in range(8):
        if not left:
            return radii, uncovered
        radii += _allot_growth(gaps, radii)
        still, still_gaps = [], [np.zeros((0, len(radii)))]
        for pieces in left:
            _, _, open_, open_gaps = prove_patches(pieces, centers, radii, max_depth=0)
            if open_ is not None:
                still.append(open_)
                still_gaps.append(open_gaps)
        left, gaps = still, np.concatenate(still_gaps)
    return radii, uncovered


def _allot_growth(gaps: Array, radii: Array, passes: int = 4) -> Array:
    """Growth per sphere so each piece fits in one sphere, preferring growth already paid for.

    A piece goes to the sphere whose extra growth costs least surface (radius squared times
    the growth beyond what that sphere grows anyway); repeated so the choices settle.
    """
    rows = np.arange(len(gaps))
    owner = np.argmin(gaps, axis=1)
    grow = np.zeros(len(radii))
    np.maximum.at(grow, owner, gaps[rows, owner])
    cost = (radii[None, :] + gaps) ** 2  # the same every pass
    tie = 1e-12 * gaps
    extra = np.empty_like(gaps)  # one buffer for every pass: these arrays are large
    for _ in range(passes):
        np.subtract(gaps, grow[None, :], out=extra)
        np.maximum(extra, 0.0, out=extra)
        extra *= cost
        extra += tie
        owner = np.argmin(extra, axis=1)
        grow = np.zeros(len(radii))
        np.maximum.at(grow, owner, gaps[rows, owner])
    return np.where(grow > 0, grow + 1e-7, 0.0)


def on_grid(centers: Array) -> Array:
    """Centres rounded to QUANTUM, before the radii grow around them until proven."""
    return np.round(centers * PER_METRE) / PER_METRE


def rounded_up(radii: Array) -> Array:
    """Proven radii rounded upward to QUANTUM, a quantum clear, so that coverage survives."""
    return np.ceil(radii * PER_METRE + 1) / PER_METRE


def finish(
    geometry: LinkGeometry, problem: Problem, params: FitParams, x: Array
) -> tuple[Array, Array]:
    """Harden, polish and fill holes in a start (centres then radii in `x`), polish again around
    what the growth had to cover (growth_rounds times); of these covers, each rounded and grown
    until proven, and round 0's, the one whose union holds the fewest outside grid points (the
    earliest round on a tie).

    A later round is not always better once grown (stretch's link_mast, a long square tube:
    round 0 grown 3.739, the second hole round grown 4.391). Round 0, the cover before any hole
    samples, is grown too unless its outside count cannot reach the best (`least_outside`); a
    middle hole round is not (on the 15 shipped links none won, and each growth to proof
    costs 0.1-0.3 s of a link's 2 s).
    """
    rounds = list(polished_rounds(geometry, problem, params, x))
    samples, centers, radii, _ = rounds[-1]
    on = on_grid(centers)
    done, uncovered = grown(geometry, on, radii)
    best = on, rounded_up(done)
    fewest = outside_count(problem, best)
    for _ in range(params.growth_rounds):
        # the corners of the pieces the growth had to cover join the samples: polished
        # around them, the cover leaves less to grow there
        extra = _one_per_cube(uncovered, problem.scale / params.growth_divisions)
        if not len(extra):
            break
        samples = np.concatenate([samples, extra])
        radii = shrink(samples, centers, harden(samples, centers, radii))
        centers, radii = _polish(samples, problem, params, centers, radii)
        on = on_grid(centers)
        done, uncovered = grown(geometry, on, radii)
        cover = on, rounded_up(done)
        count = outside_count(problem, cover)
        if count < fewest:
            best, fewest = cover, count
    if len(rounds) > 1:
        _, centers, radii, missed = rounds[0]
        on = on_grid(centers)
        if least_outside(problem, on, radii, missed) <= fewest:
            cover = on, rounded_up(grow_until_proven(geometry, on, radii))
            if outside_count(problem, cover) <= fewest:  # the earlier round on a tie
                best = cover
    return best


def outside_count(problem: Problem, spheres: tuple[Array, Array]) -> int:
    """Outside grid points in the union of the spheres: the covers' common measure."""
    centers, radii = spheres
    return int(np.count_nonzero((distances(problem.outside, centers) <= radii).any(axis=1)))


def least_outside(problem: Problem, centers: Array, radii: Array, points: Array) -> int:
    """A lower bound on the outside grid points of any cover that keeps these centres, grows
    these radii and holds `points` too.

    Each point lies in some sphere grown at least to its distance: the union then holds that
    ball too, so it holds at least the points of the union now plus, for the point that adds
    most, the fewest that any one sphere reaching it adds.
    """
    to_outside = distances(problem.outside, centers)
    inside = (to_outside <= radii).any(axis=1)
    now = int(np.count_nonzero(inside))
    if not len(points):
        return now
    rest = np.sort(to_outside[~inside], axis=0)  # per sphere, the distances of the rest
    reach = distances(points, centers) * (1 - 1e-12)  # a point on a grown radius: rounding
    added = np.stack(
        [np.searchsorted(rest[:, j], reach[:, j], side="right") for j in range(len(centers))],
        axis=1,
    )
    return now + int(added.min(axis=1).max())


def polished(
    geometry: LinkGeometry, problem: Problem, params: FitParams, x: Array
) -> tuple[Array, Array]:
    """The polished cover of the last hole round (see `polished_rounds`)."""
    _, centers, radii, _ = list(polished_rounds(geometry, problem, params, x))[-1]
    return centers, radii


def polished_rounds(
    geometry: LinkGeometry, problem: Problem, params: FitParams, x: Array
) -> Iterator[tuple[Array, Array, Array, Array]]:
    """A start hardened and polished (round 0), then its holes filled: the surface points every
    bounds diagonal / hole_divisions it misses join the samples, it is hardened and polished
    again (hole_rounds times, while any is missed). Per round: its samples, its polished cover
    and the fine points that cover misses (none looked for after the last round)."""
    centers, radii = _hard(problem, x)
    samples, missed = problem.surface, np.zeros((0, 3))
    for round_ in range(params.hole_rounds + 1):
        if round_:
            # the fine points the polished cover misses join the samples: the proof would
            # otherwise grow a sphere over each hole, which costs more than a polish around it
            samples = np.concatenate([samples, missed])
            radii = shrink(samples, centers, harden(samples, centers, radii))
        centers, radii = _polish(samples, problem, params, centers, radii)
        missed = np.zeros((0, 3))  # none looked for after the last round
        if round_ < params.hole_rounds:
            missed = missed_points(geometry, problem.scale / params.hole_divisions, centers, radii)
        yield samples, centers, radii, missed
        if not len(missed):
            return


def _one_per_cube(points: Array, size: float) -> Array:
    """One point per cube of `size` (the first in the points' order), in the points' order.

    The cubes are told apart by one integer each: the growth's pieces give some 200 000 corners
    on a finely meshed link, where unique rows of three took 0.18 s.
    """
    if not len(points):
        return points
    cube = np.floor((points - points.min(axis=0)) / size).astype(np.int64)
    span = cube.max(axis=0) + 1
    key = (cube[:, 0] * span[1] + cube[:, 1]) * span[2] + cube[:, 2]
    _, first = np.unique(key, return_index=True)
    return points[np.sort(first)]


def _polish(
    samples: Array, problem: Problem, params: FitParams, centers: Array, radii: Array
) -> tuple[Array, Array]:
    """A hardened cover polished, its unused spheres dropped."""
    used = radii > 0
    return polish(
        samples,
        problem.outside,
        centers[used],
        radii[used],
        params.polish_step * problem.scale,
        params.max_spheres,
        params.polish_passes,
    )


def missed_points(geometry: LinkGeometry, size: float, centers: Array, radii: Array) -> Array:
    """The points of geometry.surface_points(size), in its order, that no sphere holds.

    A flat patch proven inside one sphere (as the proof proves a piece, rounding allowed for)
    is not refined: its points lie between its corners, inside that sphere too. On a mesh most
    of the surface is, and refining all of it to the fine size cost more than the polish. So is
    a cylinder's side or cap patch: its pieces' hulls lie within its own (an arc's tangents
    close in as it is cut). A sphere's patch is refined whole: a piece's hull reaches out by
    radius / depth of its own triangle, which can exceed its parent's.
    """

    def held(patches: Patches) -> Array:
        if patches.kind not in ("flat", "side", "cap") or not len(patches):
            return np.zeros(len(patches), dtype=bool)
        hull = patches.hull()
        return (piece_gaps(hull, centers, radii) + allowance(hull, centers, radii) <= 0).any(axis=1)

    points = geometry.surface_points(size, held)
    return points.compress(~(distances(points, centers) <= radii[None, :]).any(axis=1), axis=0)


def _hard(problem: Problem, x: Array) -> tuple[Array, Array]:
    k = len(x) // 4
    centers = x[: 3 * k].reshape(k, 3)
    radii = harden(problem.surface, centers, x[3 * k :])
    return centers, shrink(problem.surface, centers, radii)
