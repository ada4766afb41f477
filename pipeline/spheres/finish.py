"""The fitter's finish: harden a start on dense samples, polish it, fill its holes, and grow it
until proven."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pipeline.spheres.adam import Problem, distances
from pipeline.spheres.geometry import Array, LinkGeometry, Patches
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
    radii = radii.copy()
    proof = prove(geometry, centers, radii, max_depth=GROW_DEPTH)
    left, gaps = list(proof.unproven), proof.gaps
    for _ in range(8):
        if not left:
            return radii
        radii += _allot_growth(gaps, radii)
        still, still_gaps = [], [np.zeros((0, len(radii)))]
        for pieces in left:
            _, _, open_, open_gaps = prove_patches(pieces, centers, radii, max_depth=0)
            if open_ is not None:
                still.append(open_)
                still_gaps.append(open_gaps)
        left, gaps = still, np.concatenate(still_gaps)
    return radii


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
    """Harden, polish, fill holes, round and grow a start (centres then radii in `x`) until
    proven."""
    centers, radii = polished(geometry, problem, params, x)
    centers = on_grid(centers)
    radii = grow_until_proven(geometry, centers, radii)
    return centers, rounded_up(radii)


def polished(
    geometry: LinkGeometry, problem: Problem, params: FitParams, x: Array
) -> tuple[Array, Array]:
    """A start hardened and polished, then its holes filled: the surface points every bounds
    diagonal / hole_divisions it misses join the samples, it is hardened and polished again
    (hole_rounds times, while any is missed)."""
    centers, radii = _hard(problem, x)
    samples = problem.surface
    step = params.polish_step * problem.scale
    for round_ in range(params.hole_rounds + 1):
        if round_:
            # the fine points the polished cover misses join the samples: the proof would
            # otherwise grow a sphere over each hole, which costs more than a polish around it
            missed = missed_points(geometry, problem.scale / params.hole_divisions, centers, radii)
            if not len(missed):
                break
            samples = np.concatenate([samples, missed])
            radii = shrink(samples, centers, harden(samples, centers, radii))
        used = radii > 0
        centers, radii = polish(
            samples,
            problem.outside,
            centers[used],
            radii[used],
            step,
            params.max_spheres,
            params.polish_passes,
        )
    return centers, radii


def missed_points(geometry: LinkGeometry, size: float, centers: Array, radii: Array) -> Array:
    """The points of geometry.surface_points(size), in its order, that no sphere holds.

    A flat patch proven inside one sphere (as the proof proves a piece, rounding allowed for)
    is not refined: its points lie between its corners, inside that sphere too. On a mesh most
    of the surface is, and refining all of it to the fine size cost more than the polish.
    """

    def held(patches: Patches) -> Array:
        if patches.kind != "flat" or not len(patches):
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
