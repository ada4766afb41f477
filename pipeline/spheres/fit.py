"""The conservative sphere fitter: seed, optimise a smooth excess, harden, polish, grow until
proven."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pipeline.spheres.geometry import Array, LinkGeometry
from pipeline.spheres.polish import polish
from pipeline.spheres.primitives import cells_start
from pipeline.spheres.prove import prove, prove_patches

FITTER_NAME = "pipeline.spheres.fit"
FITTER_VERSION = "5"
GROW_DEPTH = 14  # pieces not proven at this depth make their best sphere grow
QUANTUM = 1e-6  # centres are rounded to it, radii rounded up to it (metres)
# More surface samples than this come from a mesh finer than the fit needs (the optimisation's
# cost grows with them): they are thinned to one per cube of diagonal / (3 sample_divisions).
SURFACE_CAP = 12_000


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
        }


@dataclass(frozen=True)
class Problem:
    """The sampled fitting problem of one link."""

    surface: Array  # points that must be covered
    outside: Array  # evaluation points outside the solid
    weight: float  # volume each outside point stands for
    volume: float  # estimated solid volume
    scale: float  # bounds diagonal


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
    return Problem(surface, grid[~inside], cell, volume, scale)


def thin(points: Array, size: float) -> Array:
    """One point per cube of `size` (the first in the points' order), in the points' order."""
    cube = np.floor(points / size).astype(np.int64)
    _, first = np.unique(cube, axis=0, return_index=True)
    return points[np.sort(first)]


def _kmeans(points: Array, k: int, rng: np.random.Generator, rounds: int = 12) -> Array:
    centers = points[rng.choice(len(points), size=k, replace=False)]
    for _ in range(rounds):
        label = _nearest(points, centers)
        for j in range(k):
            mine = points[label == j]
            if len(mine):
                centers[j] = mine.mean(axis=0)
    return centers


def _nearest(points: Array, centers: Array) -> Array:
    d = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d, axis=1)


def _cover_radii(points: Array, centers: Array) -> Array:
    label = _nearest(points, centers)
    dist = np.linalg.norm(points - centers[label], axis=1)
    radii = np.zeros(len(centers))
    np.maximum.at(radii, label, dist)
    return radii


class _Objective:
    """Smooth excess of the union plus a penalty for uncovered surface samples.

    Only point-sphere pairs near each other are evaluated; a round fixes those pairs and
    bounds how far spheres may move, so the pairs left out stay irrelevant.
    """

    def __init__(self, problem: Problem, k: int, reach: float) -> None:
        self.p = problem
        self.k = k
        self.tau = problem.weight ** (1 / 3) * 0.5
        self.tau_s = problem.scale * 0.002
        self.reach = reach
        self.mu = 1.0
        self.o_pt = self.o_k = self.s_k = self.s_start = self.s_len = np.zeros(0, dtype=np.intp)
        self.o_xyz = self.s_xyz = np.zeros((3, 0))
        self.o_count = 0
        self.margin: Array | None = None
        self.ref_c = self.ref_r = np.zeros(0)

    def select(self, centers: Array, radii: Array) -> None:
        """Fix the pairs that can matter while spheres move at most `reach`."""
        p = self.p
        gap = _distances(p.outside, centers) - radii[None, :]
        o_pt, self.o_k = np.nonzero(gap < 2 * self.reach + 8 * self.tau)
        used, self.o_pt = np.unique(o_pt, return_inverse=True)
        self.o_count = len(used)
        self.o_xyz = p.outside[o_pt].T.copy()
        sgap = _distances(p.surface, centers) - radii[None, :]
        # samples deep inside a sphere cannot come out while spheres move at most `reach`
        best = sgap.min(axis=1, keepdims=True)
        near = (sgap < best + 2 * self.reach + 30 * self.tau_s) & (best > -3 * self.reach)
        s_pt, self.s_k = np.nonzero(near)
        self.s_xyz = p.surface[s_pt].T.copy()
        self.s_start = np.flatnonzero(np.r_[True, s_pt[1:] != s_pt[:-1]])
        self.s_len = np.diff(np.r_[self.s_start, len(s_pt)])
        self.margin = None  # the coverage reference is taken at the next step

    def gradient(self, x: Array) -> Array:
        """Gradient of the objective at `x` (centres then radii); Adam needs no value.

        A surface sample whose soft maximum of (r - d) is not negative has no penalty and adds
        only zeros to the gradient, so only the others are summed (the same sums: adding a
        zero changes no sum).
        """
        k, p = self.k, self.p
        c, r = x[: 3 * k].reshape(k, 3), x[3 * k :]
        rows = c.T.copy()  # gathered from contiguous rows: c[self.o_k, i]'s numbers, faster
        grad_c = np.zeros((k, 3))
        # excess: soft indicator of the union at the outside points
        diff = [self.o_xyz[i] - rows[i].take(self.o_k) for i in range(3)]
        dist = np.sqrt(diff[0] ** 2 + diff[1] ** 2 + diff[2] ** 2) + 1e-12
        z = np.clip((r[self.o_k] - dist) / self.tau, -40, 40)
        e = np.exp(-z)
        sig = 1 / (1 + e)
        keep = np.exp(np.bincount(self.o_pt, -z - np.log1p(e), self.o_count))
        scale = p.weight / p.volume
        g = scale * keep[self.o_pt] * sig / self.tau  # d excess / d r per pair
        grad_r = np.bincount(self.o_k, g, k)
        gd = g / dist
        for axis in range(3):
            grad_c[:, axis] = np.bincount(self.o_k, gd * diff[axis], k)
        self._coverage(c, r, rows, grad_c, grad_r)
        return np.concatenate([grad_c.ravel(), grad_r])

    def _coverage(self, c: Array, r: Array, rows: Array, grad_c: Array, grad_r: Array) -> None:
        """Add the gradient of the coverage penalty: the soft max of (r - distance) over
        nearby spheres must be >= 0.

        Only samples that may fall short are evaluated. A sample whose margin r - d was u at
        the reference stays held by that sphere while its centre and radius together move
        less than u (triangle inequality); the reference is taken again when half the
        samples may fall short.
        """
        k, p = self.k, self.p
        starts, lens, s_k, xyz = self.s_start, self.s_len, self.s_k, self.s_xyz
        refresh = self.margin is None
        if self.margin is not None:
            move = np.sqrt(((c - self.ref_c) ** 2).sum(axis=1)) + np.abs(r - self.ref_r)
            bound = np.maximum.reduceat(self.margin - move.take(s_k), starts)
            maybe = bound <= 1e-9 * p.scale  # far above the rounding of these distances
            refresh = 2 * np.count_nonzero(maybe) > len(maybe)
            if not refresh:
                if not maybe.any():
                    return
                pairs = np.repeat(maybe, lens)
                lens = lens[maybe]
                starts = np.r_[0, np.cumsum(lens)[:-1]]
                s_k, xyz = s_k[pairs], xyz[:, pairs]
        sd = [xyz[i] - rows[i].take(s_k) for i in range(3)]
        sdist = np.sqrt(sd[0] ** 2 + sd[1] ** 2 + sd[2] ** 2) + 1e-12
        held = r.take(s_k) - sdist
        if refresh:
            self.ref_c, self.ref_r, self.margin = c.copy(), r.copy(), held
        a = held / self.tau_s
        amax = np.maximum.reduceat(a, starts)
        # soft >= tau_s * amax (the largest term of the sum is exp(0) = 1): only samples
        # whose largest (r - d) is negative can be short of coverage
        open_ = np.flatnonzero(amax < 0)
        if len(open_) == 0:
            return
        pairs = np.repeat(amax < 0, lens)
        lens = lens[open_]
        starts = np.r_[0, np.cumsum(lens)[:-1]]
        a, sdist, s_k = a[pairs], sdist[pairs], s_k[pairs]
        sd = [v[pairs] for v in sd]
        amax = amax[open_]
        ea = np.exp(a - np.repeat(amax, lens))
        total = np.add.reduceat(ea, starts)
        soft = self.tau_s * (amax + np.log(total))
        short = np.maximum(0.0, -soft) / p.scale
        dpen = -2 * self.mu * short / p.scale  # d pen / d soft per sample
        w = ea * np.repeat(dpen / total, lens)
        grad_r += np.bincount(s_k, w, k)
        wd = w / sdist
        for axis in range(3):
            grad_c[:, axis] += np.bincount(s_k, wd * sd[axis], k)


def _distances(points: Array, centers: Array) -> Array:
    squared = (points[:, 0, None] - centers[None, :, 0]) ** 2
    squared += (points[:, 1, None] - centers[None, :, 1]) ** 2
    squared += (points[:, 2, None] - centers[None, :, 2]) ** 2
    return np.sqrt(squared)


def _adam(
    problem: Problem,
    x: Array,
    mus: list[float],
    iterations: int,
    rate: float,
    reach: float,
    taus: tuple[float, float] = (1.0, 1.0),
) -> Array:
    """Adam steps on the smooth objective, one round per penalty weight; pairs re-selected
    each round and moves bounded by `reach` so the pairs left out stay irrelevant."""
    k = len(x) // 4
    objective = _Objective(problem, k, reach)
    base_tau = objective.tau
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    step = 0
    total = len(mus) * iterations
    for index, mu in enumerate(mus):
        objective.mu = mu
        share = index / max(1, len(mus) - 1)
        objective.tau = base_tau * taus[0] ** (1 - share) * taus[1] ** share
        objective.select(x[: 3 * k].reshape(k, 3), x[3 * k :])
        start = x.copy()
        for _ in range(iterations):
            step += 1
            grad = objective.gradient(x)
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad**2
            lr = rate * (1 - 0.9 * step / total)
            x = x - lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-12)
            x = np.clip(x, start - reach, start + reach)
    return x


def _harden(surface: Array, centers: Array, radii: Array) -> Array:
    """Radii that cover every sample: each sample goes to the sphere that reaches it best."""
    dist = _distances(surface, centers)
    label = np.argmax(radii[None, :] - dist, axis=1)
    need = np.zeros(len(centers))
    np.maximum.at(need, label, dist[np.arange(len(surface)), label])
    return need


def _shrink(surface: Array, centers: Array, radii: Array) -> Array:
    """Shrink each sphere to what no other sphere already covers, largest first."""
    dist = _distances(surface, centers).T.copy()  # a sphere's distances contiguous
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


def exact_spheres(geometry: LinkGeometry, params: FitParams) -> tuple[Array, Array] | None:
    """A link made only of sphere primitives, within the budget, is its own exact cover."""
    solids = geometry.solids
    if not solids or len(solids) > params.max_spheres or any(s.kind != "sphere" for s in solids):
        return None
    centers = np.array([s.frame.translation for s in solids], dtype=float)
    return centers, np.array([float(s.size[0]) for s in solids])


def fit_link(geometry: LinkGeometry, params: FitParams) -> tuple[Array, Array]:
    """Fit spheres to one link; returns centres (k, 3) and radii (k) that cover it, proven."""
    exact = exact_spheres(geometry, params)
    if exact is not None:
        centers = np.round(exact[0] / QUANTUM) * QUANTUM
        radii = grow_until_proven(geometry, centers, exact[1])
        return centers, np.ceil(radii / QUANTUM + 1) * QUANTUM
    problem = sample_problem(geometry, params)
    rng = np.random.default_rng(params.seed)
    k = min(params.max_spheres, len(problem.surface))
    centers = _kmeans(problem.surface, k, rng)
    radii = _cover_radii(problem.surface, centers)
    x = np.concatenate([centers.ravel(), radii])
    scale = problem.scale
    mus = params.schedule()
    rate, reach = params.learning_rate * scale, params.reach * scale
    x = _adam(problem, x, mus, params.iterations, rate, reach, (1.0, params.sharpen))
    if params.harden_divisions > params.sample_divisions:
        # radii fitted to dense samples leave less to grow between them
        dense = geometry.surface_points(scale / params.harden_divisions)
        problem = replace(problem, surface=dense)
    best = _finish(geometry, problem, params, x)
    start = cells_start(geometry, problem.outside, params.max_spheres)
    if start is not None:
        # primitives only: the cells' spheres, finished alike, win if they hold less outside
        other = _finish(geometry, problem, params, np.concatenate([start[0].ravel(), start[1]]))
        if _outside_count(problem, other) < _outside_count(problem, best):
            best = other
    return best


def _finish(
    geometry: LinkGeometry, problem: Problem, params: FitParams, x: Array
) -> tuple[Array, Array]:
    """Harden, polish, round and grow a start (centres then radii in `x`) until proven."""
    centers, radii = _hard(problem, x)
    used = radii > 0
    centers, radii = polish(
        problem.surface,
        problem.outside,
        centers[used],
        radii[used],
        params.polish_step * problem.scale,
        params.max_spheres,
        params.polish_passes,
    )
    centers = np.round(centers / QUANTUM) * QUANTUM
    radii = grow_until_proven(geometry, centers, radii)
    return centers, np.ceil(radii / QUANTUM + 1) * QUANTUM


def _outside_count(problem: Problem, spheres: tuple[Array, Array]) -> int:
    centers, radii = spheres
    return int(np.count_nonzero((_distances(problem.outside, centers) <= radii).any(axis=1)))


def _hard(problem: Problem, x: Array) -> tuple[Array, Array]:
    k = len(x) // 4
    centers = x[: 3 * k].reshape(k, 3)
    radii = _harden(problem.surface, centers, x[3 * k :])
    return centers, _shrink(problem.surface, centers, radii)
