"""The fitter's starts for plates, and the k-means they and the surface start share.

A plate (thinnest bounds extent at most `plate_ratio` of the next) is best held by spheres
centred on its mid-plane, each reaching both faces. Where those spheres go on the plane decides
most of the excess: k-means of the solid flattened onto the plane packs them evenly, but the
spheres at the outline then reach far past the rim. The rim layouts put a ring of centres along
the footprint's outline, inset, and the rest inside by k-means; the fitter keeps whichever
candidate's covering leaves the fewest outside grid points (fitter version 16: abb_irb2400
link_5, a disc, 0.675 → 0.613, base_link 0.687 → 0.642).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from pipeline.spheres.geometry import Array, LinkGeometry

# share of the budget on the rim, and how far the rim's centres stand in from the outline
# (share of the footprint's bounds diagonal, towards the footprint's centroid)
RIM_SHARES = (0.5, 0.625, 0.75, 0.875)
RIM_INSETS = (0.06, 0.10, 0.14, 0.18)


def nearest(points: Array, centers: Array) -> Array:
    """Per point, the index of its nearest centre."""
    d = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d, axis=1)


def lloyd(points: Array, centers: Array, rounds: int, held: int = 0) -> Array:
    """Lloyd's rounds of k-means from `centers` (changed in place and returned); the first
    `held` centres take part in the assignment but stay where they are."""
    for _ in range(rounds):
        label = nearest(points, centers)
        for j in range(held, len(centers)):
            mine = points[label == j]
            if len(mine):
                centers[j] = mine.mean(axis=0)
    return centers


def kmeans(points: Array, k: int, rng: np.random.Generator, rounds: int = 12) -> Array:
    """k-means of `points` from k of them drawn by `rng`."""
    return lloyd(points, points[rng.choice(len(points), size=k, replace=False)], rounds)


def plate_axis(geometry: LinkGeometry, ratio: float) -> int | None:
    """The link-frame axis a plate is thin along: its bounds extent is at most `ratio` of the
    next smallest; None for a link that is no plate."""
    lo, hi = geometry.bounds()
    extent = hi - lo
    thin_, next_ = (int(i) for i in np.argsort(extent, kind="stable")[:2])
    return thin_ if extent[thin_] <= ratio * extent[next_] else None


def plate_starts(
    geometry: LinkGeometry,
    solid: Array,
    surface: Array,
    k: int,
    axis: int,
    rng: np.random.Generator,
) -> list[Array]:
    """Start centres on the mid-plane: k-means of the flattened solid, then the rim layouts."""
    lo, hi = geometry.bounds()
    mid = 0.5 * (lo[axis] + hi[axis])
    flat = solid.copy()
    flat[:, axis] = mid
    starts = [kmeans(flat, k, rng)]
    other = [a for a in range(3) if a != axis]
    footprint = np.concatenate([solid, surface])[:, other]
    for layout in rim_layouts(footprint, k, rng):
        centers = np.full((k, 3), mid)
        centers[:, other] = layout
        starts.append(centers)
    return starts


def rim_layouts(footprint: Array, k: int, rng: np.random.Generator) -> list[Array]:
    """2-D layouts of k centres: n evenly spaced along the footprint's convex outline, moved
    in towards its centroid, the other k - n by k-means of the footprint around them; one per
    share and inset. None when the footprint has no outline (all on one line)."""
    try:
        outline = footprint[ConvexHull(footprint).vertices]
    except (QhullError, ValueError):
        return []
    edges = np.roll(outline, -1, axis=0) - outline
    length = np.linalg.norm(edges, axis=1)
    along = np.r_[0.0, np.cumsum(length)]
    centroid = footprint.mean(axis=0)
    diagonal = float(np.linalg.norm(footprint.max(axis=0) - footprint.min(axis=0)))
    counts = sorted({min(k, max(1, round(share * k))) for share in RIM_SHARES})
    layouts = []
    for count, inset in itertools.product(counts, RIM_INSETS):
        at = np.arange(count) / count * along[-1]
        edge = np.minimum(np.searchsorted(along, at, side="right") - 1, len(edges) - 1)
        rim = outline[edge] + ((at - along[edge]) / length[edge])[:, None] * edges[edge]
        inward = centroid - rim
        norm = np.maximum(np.linalg.norm(inward, axis=1), 1e-300)
        rim += inset * diagonal * inward / norm[:, None]
        inner = footprint[rng.choice(len(footprint), size=k - count, replace=False)]
        layouts.append(lloyd(footprint, np.concatenate([rim, inner]), 8, held=count))
    return layouts
