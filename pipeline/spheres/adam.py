"""The fitter's smooth optimisation: Adam on a soft excess of the union plus a penalty on
uncovered surface samples."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.spheres import portable
from pipeline.spheres.geometry import Array


@dataclass(frozen=True)
class Problem:
    """The sampled fitting problem of one link."""

    surface: Array  # points that must be covered
    outside: Array  # evaluation points outside the solid
    weight: float  # volume each outside point stands for
    volume: float  # estimated solid volume
    scale: float  # bounds diagonal
    solid: Array  # the grid points inside the solid


class Objective:
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
        none = np.zeros(0, dtype=np.intp)
        self.o_pt = self.o_k = self.o_start = self.s_k = self.s_start = self.s_len = none
        self.o_xyz = self.s_xyz = np.zeros((3, 0))
        self.o_count = 0
        self.margin: Array | None = None  # per sample, its largest r - d at the reference
        self.ref_c = self.ref_r = np.zeros(0)
        self.holder = np.zeros(0, dtype=np.intp)  # per sample, the sphere of that margin

    def select(self, centers: Array, radii: Array) -> None:
        """Fix the pairs that can matter while spheres move at most `reach`."""
        p = self.p
        gap = distances(p.outside, centers) - radii[None, :]
        o_pt, self.o_k = np.nonzero(gap < 2 * self.reach + 8 * self.tau)
        # nonzero lists the pairs point by point: a point's first pair starts its run, and the
        # runs counted are np.unique's inverse (without its sort)
        first = np.ones(len(o_pt), dtype=bool)
        np.not_equal(o_pt[1:], o_pt[:-1], out=first[1:])
        self.o_pt = np.cumsum(first, dtype=np.intp) - 1
        self.o_count = int(np.count_nonzero(first))
        self.o_start = np.flatnonzero(first) if len(o_pt) else np.zeros(1, dtype=np.intp)
        self.o_xyz = p.outside[o_pt].T.copy()
        sgap = distances(p.surface, centers) - radii[None, :]
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
        # excess: soft indicator of the union at the outside points (in place, on buffers of
        # the pairs: the numbers of the expressions in the comments, without their temporaries)
        diff = [self.o_xyz[i] - rows[i].take(self.o_k) for i in range(3)]
        dist = diff[0] * diff[0]  # sqrt(diff[0] ** 2 + diff[1] ** 2 + diff[2] ** 2) + 1e-12
        work = diff[1] * diff[1]
        dist += work
        np.multiply(diff[2], diff[2], out=work)
        dist += work
        np.sqrt(dist, out=dist)
        dist += 1e-12
        # exp(-clip((r - d) / tau)) with the signs folded in: IEEE subtraction and division are
        # sign-symmetric and the clip is too, so these are the same numbers
        np.subtract(dist, r.take(self.o_k), out=work)
        work /= self.tau
        np.clip(work, -40, 40, out=work)
        e = portable.exp(work)
        sig = np.add(e, 1, out=work)  # 1 / (1 + e)
        np.divide(1, sig, out=sig)
        # the soft chance a point is outside every sphere: the product of 1 - sig = e * sig
        # over its pairs (sorted by point; numpy multiplies a reduceat segment in order)
        e *= sig
        keep = np.multiply.reduceat(e, self.o_start) if len(e) else np.zeros(0)
        g = keep.take(self.o_pt)  # scale * keep[o_pt] * sig / tau: d excess / d r per pair
        g *= p.weight / p.volume
        g *= sig
        g /= self.tau
        grad_r = np.bincount(self.o_k, g, k)
        g /= dist  # g / dist
        for axis in range(3):
            diff[axis] *= g
            grad_c[:, axis] = np.bincount(self.o_k, diff[axis], k)
        self._coverage(c, r, rows, grad_c, grad_r)
        return np.concatenate([grad_c.ravel(), grad_r])

    def _coverage(self, c: Array, r: Array, rows: Array, grad_c: Array, grad_r: Array) -> None:
        """Add the gradient of the coverage penalty: the soft max of (r - distance) over
        nearby spheres must be >= 0.

        Only samples that may fall short are evaluated. A sample whose largest margin r - d
        was u, to sphere j, at the reference stays held by j while j's centre and radius
        together move less than u (triangle inequality); the reference is taken again when
        half the samples may fall short.
        """
        k, p = self.k, self.p
        starts, lens, s_k, xyz = self.s_start, self.s_len, self.s_k, self.s_xyz
        refresh = self.margin is None
        if self.margin is not None:
            move = np.sqrt(((c - self.ref_c) ** 2).sum(axis=1)) + np.abs(r - self.ref_r)
            maybe = self.margin - move.take(self.holder) <= 1e-9 * p.scale  # >> rounding
            refresh = 2 * np.count_nonzero(maybe) > len(maybe)
            if not refresh:
                if not maybe.any():
                    return
                lens = lens[maybe]
                ends = np.cumsum(lens)
                # the pairs of those samples, in order
                pairs = np.arange(int(ends[-1])) + np.repeat(starts[maybe] - (ends - lens), lens)
                starts = ends - lens
                s_k, xyz = s_k.take(pairs), xyz.take(pairs, axis=1)  # take: faster
        sd = [xyz[i] - rows[i].take(s_k) for i in range(3)]
        sdist = np.sqrt(sd[0] ** 2 + sd[1] ** 2 + sd[2] ** 2) + 1e-12
        held = r.take(s_k) - sdist
        a = held / self.tau_s
        amax = np.maximum.reduceat(a, starts)
        if refresh:
            self.ref_c, self.ref_r = c.copy(), r.copy()
            self.margin = np.maximum.reduceat(held, starts)
            best = np.flatnonzero(held == np.repeat(self.margin, lens))
            sample = np.repeat(np.arange(len(lens)), lens)[best]
            self.holder = s_k[best[np.r_[True, sample[1:] != sample[:-1]]]]
        # soft >= tau_s * amax (the largest term of the sum is exp(0) = 1): only samples
        # whose largest (r - d) is negative can be short of coverage
        open_ = np.flatnonzero(amax < 0)
        if len(open_) == 0:
            return
        pairs = np.repeat(amax < 0, lens)
        lens = lens[open_]
        starts = np.cumsum(lens) - lens
        a, sdist, s_k = a[pairs], sdist[pairs], s_k[pairs]
        sd = [v[pairs] for v in sd]
        amax = amax[open_]
        ea = portable.exp(a - np.repeat(amax, lens))
        total = np.add.reduceat(ea, starts)
        soft = self.tau_s * (amax + portable.log(total))
        short = np.maximum(0.0, -soft) / p.scale
        dpen = -2 * self.mu * short / p.scale  # d pen / d soft per sample
        w = ea * np.repeat(dpen / total, lens)
        grad_r += np.bincount(s_k, w, k)
        wd = w / sdist
        for axis in range(3):
            grad_c[:, axis] += np.bincount(s_k, wd * sd[axis], k)


def distances(points: Array, centers: Array) -> Array:
    """Distances (points, centres), one axis at a time (np.linalg.norm's numbers, faster)."""
    squared = (points[:, 0, None] - centers[None, :, 0]) ** 2
    squared += (points[:, 1, None] - centers[None, :, 1]) ** 2
    squared += (points[:, 2, None] - centers[None, :, 2]) ** 2
    return np.sqrt(squared)


def adam(
    problem: Problem,
    x: Array,
    mus: list[float],
    iterations: int,
    rate: float,
    reach: float,
    taus: tuple[float, float] = (1.0, 1.0),
    pinned: tuple[int, int] | None = None,
) -> Array:
    """Adam steps on the smooth objective, one round per penalty weight; pairs re-selected
    each round and moves bounded by `reach` so the pairs left out stay irrelevant.

    `pinned` (axis, rounds) holds that coordinate of every centre for the first rounds.
    """
    k = len(x) // 4
    objective = Objective(problem, k, reach)
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
            if pinned is not None and index < pinned[1]:
                grad[pinned[0] : 3 * k : 3] = 0.0  # no gradient, no moment: the centres stay
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad**2
            lr = rate * (1 - 0.9 * step / total)
            x = x - lr * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-12)
            x = np.clip(x, start - reach, start + reach)
    return x
