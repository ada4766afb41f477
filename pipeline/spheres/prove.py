"""Proof that spheres cover a link's surface: split patches until one sphere holds each."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.spheres.geometry import Array, LinkGeometry
from pipeline.spheres.patches import Patches

# Distances are computed in float64; 1 nm absorbs their rounding on values of order 1 m. Far
# out the rounding grows with the numbers (a distance of 1e7 m is only resolved to 2 nm), so a
# piece also needs RELATIVE times the size of its coordinates and the sphere's centre and radius:
# that bounds the rounding of the distances, of placing the mesh and of 24 levels of midpoints.
SAFETY = 1e-9
RELATIVE = 2.0**-46
MAX_DEPTH = 24
MAX_PIECES = 400_000


@dataclass(frozen=True)
class Proof:
    """Outcome of the coverage proof of one link."""

    proven: bool
    gap: float  # upper bound on the distance from any surface point to the union (0 if proven)
    pieces: int  # patches that were checked
    unproven: tuple[Patches, ...]  # the pieces left at the depth limit, for radius growth
    gaps: Array  # per unproven piece and sphere, the piece's gap to that sphere

    def uncovered_fraction(self, geometry: LinkGeometry) -> float:
        """Share of the surface area in pieces left unproven (flat triangles of their hulls)."""
        total = sum(_area(p.hull()) for p in geometry.patches)
        left = sum(_area(p.hull()) for p in self.unproven)
        return left / total if total > 0 else 0.0


def _area(hull: Array) -> float:
    if hull.shape[1] < 3:  # segments and points have no area
        return 0.0
    cross = np.cross(hull[:, 1] - hull[:, 0], hull[:, 2] - hull[:, 0])
    return float(np.linalg.norm(cross, axis=1).sum() / 2)


def piece_gaps(hull: Array, centers: Array, radii: Array) -> Array:
    """Per piece and sphere: how far the piece's worst hull point lies outside the sphere."""
    # one hull point at a time and one axis at a time: no (pieces, points, spheres, 3) array
    squared = np.zeros((len(hull), len(centers)))
    for v in range(hull.shape[1]):
        point = (hull[:, v, 0, None] - centers[None, :, 0]) ** 2
        point += (hull[:, v, 1, None] - centers[None, :, 1]) ** 2
        point += (hull[:, v, 2, None] - centers[None, :, 2]) ** 2
        np.maximum(squared, point, out=squared)
    return np.sqrt(squared) - radii[None, :]


def allowance(hull: Array, centers: Array, radii: Array) -> Array:
    """Per piece and sphere: the rounding a gap may hide, SAFETY plus RELATIVE x magnitude."""
    if len(centers) == 0:
        return np.zeros((len(hull), 1))
    size = np.abs(hull).max(axis=(1, 2))
    reach = np.abs(centers).max(axis=1) + radii
    return SAFETY + RELATIVE * (size[:, None] + reach[None, :])


def prove_patches(
    patches: Patches, centers: Array, radii: Array, max_depth: int = MAX_DEPTH
) -> tuple[int, float, Patches | None, Array]:
    """Check one batch; returns (pieces checked, worst gap bound, unproven pieces, their gaps)."""
    todo, checked, worst = patches, 0, 0.0
    left: list[Patches] = []
    left_gaps = np.zeros((0, len(radii)))
    for depth in range(max_depth + 1):
        if len(todo) == 0:
            break
        checked += len(todo)
        hull = todo.hull()
        gaps = _gaps_chunked(hull, centers, radii)
        best = (gaps + allowance(hull, centers, radii)).min(axis=1)
        open_ = ~(best <= 0)  # a NaN is not proven
        if not open_.any():
            todo = todo.take(open_)
            break
        if depth == max_depth or checked + 4 * int(open_.sum()) > MAX_PIECES:
            worst = max(worst, float(best[open_].max()))
            left.append(todo.take(open_))
            left_gaps = gaps.compress(open_, axis=0)
            todo = todo.take(np.zeros(len(todo), dtype=bool))
            break
        todo = todo.take(open_).split()
    unproven = left[0] if left else None
    return checked, worst, unproven, left_gaps


def _gaps_chunked(hull: Array, centers: Array, radii: Array, chunk: int = 20_000) -> Array:
    if len(centers) == 0:
        return np.full((len(hull), 1), np.inf)
    parts = [piece_gaps(hull[i : i + chunk], centers, radii) for i in range(0, len(hull), chunk)]
    return np.concatenate(parts) if parts else np.zeros((0, len(centers)))


def prove(
    geometry: LinkGeometry, centers: Array, radii: Array, max_depth: int = MAX_DEPTH
) -> Proof:
    """Prove every collision patch of the link lies inside the union of the spheres."""
    checked, worst = 0, 0.0
    unproven: list[Patches] = []
    gaps = [np.zeros((0, len(radii)))]
    for patches in geometry.patches:
        n, gap, left, left_gaps = prove_patches(patches, centers, radii, max_depth)
        checked += n
        worst = max(worst, gap)
        if left is not None:
            unproven.append(left)
            gaps.append(left_gaps)
    return Proof(not unproven, worst, checked, tuple(unproven), np.concatenate(gaps))
