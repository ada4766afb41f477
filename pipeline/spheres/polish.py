"""Hard polish of a covering: single-sphere moves and splits that lower the grid excess.

Every sample stays covered: a sphere's radius is always the distance to the farthest sample
that no other sphere covers, so a move only relocates what that sphere alone must hold. The
cost is the number of outside grid points in the union, counted exactly, so a move is taken
only when it lowers the true (gridded) excess of a covering, not of a soft surrogate.
"""

from __future__ import annotations

import numpy as np

from pipeline.spheres.geometry import Array

_MOVES = np.concatenate([np.zeros((1, 3)), np.eye(3), -np.eye(3)])


def _squared(centers: Array, points: Array) -> Array:
    """Squared distances (centres, points), one axis at a time: the same numbers as summing
    an axis of (centres, points, 3) differences, several times faster."""
    squared = (centers[:, 0, None] - points[None, :, 0]) ** 2
    squared += (centers[:, 1, None] - points[None, :, 1]) ** 2
    squared += (centers[:, 2, None] - points[None, :, 2]) ** 2
    return squared


def _distances(centers: Array, points: Array) -> Array:
    return np.sqrt(_squared(centers, points))


class _Cover:
    """Spheres with which samples and outside points each one holds, updated one at a time."""

    def __init__(self, samples: Array, outside: Array, centers: Array, radii: Array) -> None:
        self.samples, self.outside = samples, outside
        self.centers, self.radii = centers.copy(), radii.copy()
        self.to_outside = _distances(centers, outside)
        self.covers = _distances(centers, samples) <= radii[:, None]
        self.holds = self.to_outside <= radii[:, None]
        self.sample_count = self.covers.sum(axis=0)
        self.outside_count = self.holds.sum(axis=0)
        self.single: Array | None = None  # sample_count == 1, kept until a sphere moves

    def copy(self) -> _Cover:
        """An independent copy."""
        other = _Cover.__new__(_Cover)
        other.samples, other.outside = self.samples, self.outside
        for name in ("centers", "radii", "to_outside", "covers", "holds"):
            setattr(other, name, getattr(self, name).copy())
        other.sample_count = self.sample_count.copy()
        other.outside_count = self.outside_count.copy()
        other.single = self.single  # never written in place: shared until either moves
        return other

    def cost(self) -> int:
        """Outside grid points in the union."""
        return int(np.count_nonzero(self.outside_count))

    def alone(self, j: int) -> Array:
        """The samples only sphere j covers."""
        if self.single is None:
            self.single = self.sample_count == 1
        # compress: the rows of boolean indexing, several times faster on (n, 3) points
        return self.samples.compress(self.covers[j] & self.single, axis=0)

    def place(self, j: int, center: Array, radius: float) -> None:
        """Move sphere j and set its radius, updating the counts."""
        self.single = None
        self.sample_count -= self.covers[j]
        self.outside_count -= self.holds[j]
        self.centers[j], self.radii[j] = center, radius
        self.to_outside[j] = _distances(center[None, :], self.outside)[0]
        # compared as distances: a radius that is the root of a largest squared distance
        # then holds that sample exactly (its square might round below it)
        self.covers[j] = _distances(center[None, :], self.samples)[0] <= radius
        self.holds[j] = self.to_outside[j] <= radius
        if radius <= 0:
            self.covers[j] = self.holds[j] = False
        self.sample_count += self.covers[j]
        self.outside_count += self.holds[j]

    def add(self, center: Array, radius: float) -> None:
        """Append a sphere."""
        k = len(self.radii)
        self.centers = np.vstack([self.centers, center])
        self.radii = np.append(self.radii, 0.0)
        self.to_outside = np.vstack([self.to_outside, np.zeros(len(self.outside))])
        self.covers = np.vstack([self.covers, np.zeros(len(self.samples), dtype=bool)])
        self.holds = np.vstack([self.holds, np.zeros(len(self.outside), dtype=bool)])
        self.place(k, center, radius)

    def used(self) -> _Cover:
        """The same cover without spheres of radius 0."""
        keep = self.radii > 0
        if keep.all():
            return self
        return _Cover(self.samples, self.outside, self.centers[keep], self.radii[keep])


class _Region:
    """Where spheres may go: inside the starting spheres grown by a margin (the outside points
    are only gathered there, so a sphere leaving it would look free)."""

    def __init__(self, centers: Array, radii: Array, margin: float) -> None:
        self.centers, self.radii = centers.copy(), radii + margin

    def holds(self, centers: Array, radii: Array) -> Array:
        """Per candidate sphere: whether it lies inside one of the region's spheres."""
        gap = _distances(centers, self.centers) + radii[:, None]
        return (gap <= self.radii[None, :]).any(axis=1)


def _sweep(cover: _Cover, region: _Region, step: float) -> bool:
    """Try the six axis moves of each sphere (and staying put, which may shrink it)."""
    improved = False
    for j in range(len(cover.radii)):
        if cover.radii[j] <= 0:
            continue
        own = cover.alone(j)
        now = int(np.count_nonzero(cover.holds[j] & (cover.outside_count == 1)))
        free = (cover.outside_count == cover.holds[j]) & (
            cover.to_outside[j] <= cover.radii[j] + step
        )
        points = cover.outside.compress(free, axis=0)
        centers = cover.centers[j] + step * _MOVES
        radii2 = _squared(centers, own).max(axis=1) if len(own) else np.zeros(len(centers))
        inside = _squared(centers, points) <= radii2[:, None]
        counts = np.where(radii2 > 0, inside.sum(axis=1), 0)
        radii = np.sqrt(radii2)
        if counts.min() >= now and not (counts[0] <= now and radii[0] < cover.radii[j]):
            continue  # nothing to take, wherever the region ends (it only raises counts)
        counts = np.where(region.holds(centers, radii), counts, np.iinfo(np.int64).max)
        best = int(np.argmin(counts))
        if counts[best] < now:
            improved = True
        elif not (counts[0] <= now and radii[0] < cover.radii[j]):
            continue
        else:
            best = 0
        cover.place(j, centers[best], float(radii[best]))
    return improved


def _descend(cover: _Cover, region: _Region, step: float, passes: int) -> None:
    """Sweeps with a step halved whenever one brings nothing, down to an eighth."""
    size = step
    for _ in range(passes):
        if not _sweep(cover, region, size):
            size /= 2
            if size < step / 8:
                return


# how far a split's sphere is centred from the parent's centre towards its half's mean
SPLIT_DEPTHS = (0.0, 0.15, 0.3, 0.5)


def _split(cover: _Cover, j: int) -> _Cover | None:
    """Sphere j replaced by two, one round each half (2-means) of the samples only it covers.

    A patch of the surface is held most tightly by a sphere centred deep inside the solid: the
    smallest ball round a half, centred near the surface, has much of its volume outside (fitter
    version 12 split that way: on the 7 shipped links with budget to spare, 6 splits paid, on 4
    links; this way, 21 do, on all 7). Each new centre lies on the way from j's centre to its
    half's mean; of the depths tried the one that leaves the fewest outside points in the union
    is kept. None when the samples do not part in two.
    """
    own = cover.alone(j)
    if len(own) < 4:
        return None
    mean = own.mean(axis=0)
    axis = np.linalg.svd(own - mean, full_matrices=False)[2][0]
    # a singular vector's sign is the LAPACK build's choice: fix it, or which half keeps
    # sphere j (and so the fitted bytes) would depend on the machine
    axis = axis if axis[np.argmax(np.abs(axis))] > 0 else -axis
    side = (own - mean) @ axis > 0
    for _ in range(5):
        if side.all() or not side.any():
            return None
        a, b = own.compress(side, axis=0).mean(axis=0), own.compress(~side, axis=0).mean(axis=0)
        side = ((own - a) ** 2).sum(axis=1) < ((own - b) ** 2).sum(axis=1)
    if side.all() or not side.any():
        return None
    parent, halves = (
        cover.centers[j].copy(),
        (own.compress(side, axis=0), own.compress(~side, axis=0)),
    )
    best: _Cover | None = None
    for depth in SPLIT_DEPTHS:
        first, second = (parent + depth * (half.mean(axis=0) - parent) for half in halves)
        trial = cover.copy()
        trial.place(j, first, float(_distances(first[None, :], halves[0]).max()))
        trial.add(second, float(_distances(second[None, :], halves[1]).max()))
        if best is None or trial.cost() < best.cost():
            best = trial
    return best


def polish(
    samples: Array,
    outside: Array,
    centers: Array,
    radii: Array,
    step: float,
    max_spheres: int,
    passes: int = 8,
    tries: int = 3,
) -> tuple[Array, Array]:
    """Move single spheres while the grid excess drops, then spend unused budget on splits.

    `radii` must cover every sample; the result does too. A split replaces one of the `tries`
    spheres holding the most outside points alone by two, and is kept only if, after a short
    descent, the excess is lower.
    """
    region = _Region(centers, radii, 2 * step)
    near = (_distances(centers, outside) <= region.radii[:, None]).any(axis=0)
    cover = _Cover(samples, outside.compress(near, axis=0), centers, radii)
    _descend(cover, region, step, passes)
    cover = cover.used()
    while len(cover.radii) < max_spheres:
        alone = (cover.holds & (cover.outside_count == 1)).sum(axis=1)
        best: _Cover | None = None
        for j in np.argsort(-alone, kind="stable")[:tries]:
            trial = _split(cover, int(j))
            if trial is None:
                continue
            _descend(trial, region, step / 2, passes // 2)
            if trial.cost() < (best or cover).cost():
                best = trial
        if best is None:
            break
        cover = best.used()
    return cover.centers, cover.radii
