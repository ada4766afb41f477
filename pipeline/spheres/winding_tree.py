"""Which points a mesh's winding number puts inside, settled by proven bounds where it can be.

The generalised winding number of a mesh at p is the sum of its triangles' solid angles over
4 pi. Triangles are grouped in a tree of clusters; a cluster far enough from p (`_bounds`)
contributes its second-order expansion, whose error is proven below (or, where smaller, 0 within
A / (|u| - r)^2: no point of it is nearer), and a near leaf its triangles' exact solid angles
(Van Oosterom and Strackee, as the exact computation). That gives an interval
for the winding number; where the interval lies clear of |w| = 1/2 (by `MARGIN`, far above the
rounding of either computation), the decision is the exact computation's. The points it leaves
open are returned for the exact computation.

The error bound: a triangle T of vector area a contributes the flux of g(y) = y / |y|^3 (y = x - p)
through it. Around the cluster centre c (u = c - p), g(u + h) = g(u) + J(u) h + R with
|R| <= M |h|^2 / 2 / (|u| - r)^4, where M = 6 bounds the second derivative of g on the unit
sphere (for unit a, h: |3 (a.y)(3 (h.y)^2 - 1) - 6 (h.y)(a_perp.h_perp)| <= sqrt(45 b^4 - 18 b^2
+ 9) <= 6, b = h.y). The constant and linear terms are exact over a triangle (its centroid m):
a.g(u) + a.J(u)(m - c). So a cluster of total area A and radius r (every point within r of c)
is within 3 A r^2 / (|u| - r)^4 of its expansion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Array = np.ndarray

LEAF = 8  # triangles per leaf, about
# The decision is taken only when the interval clears |w| = 1/2 by this much: the exact
# computation's rounding (every fan triangle's solid angle, summed, cancelling) differed from a
# direct sum of the mesh's angles by at most 1.2e-9 (a sphere soup and its inside-out copy, fan
# 7 680) and 3e-11 (a soup of 200 000 triangles, fan 600 000).
MARGIN = 1e-5
# (share, theta) of each pass, each for the points the ones before left open: a cluster is
# taken whole when its error bound is within its area's share of `share` (in winding number),
# or when its radius is below `theta` times its distance. A soup of many overlapping triangles
# (250 000 triangles 2 mm across on a 0.2 m sphere, `benchmarks/soups.py`) leaves 92 % of its
# points open at 0.2, where their errors add up over its area: 0.15 settles them with half the
# pairs 0.1 takes; a soup of a surface (a robot link's) is settled at 0.2.
PASSES = ((0.45, 0.2), (0.2, 0.15), (0.05, 0.08), (0.02, 0.05))
CHUNK = 200_000  # (point, cluster) pairs handled at once
EXACT = 40_000  # (pair, triangle) entries of the exact solid angles handled at once


@dataclass(frozen=True)
class Level:
    """The clusters of one tree level: centre, radius, area, vector area, first moment."""

    start: Array  # first triangle (in tree order) of each cluster; one more entry: the end
    center: Array
    radius: Array
    area: Array
    vector: Array  # (n, 3): sum of the triangles' vector areas
    moment: Array  # (n, 9): sum of (centroid - centre) outer vector area, row-major


@dataclass(frozen=True)
class Tree:
    """Clusters of a mesh's triangles, halved level by level along their longest axis."""

    leaves: Array  # (leaves, 9, K): each leaf's corners, coordinate by coordinate
    levels: tuple[Level, ...]


def build_tree(triangles: Array) -> Tree:
    """The cluster tree of the triangles: each level halves every cluster of the one above."""
    n = len(triangles)
    depth = max(0, int(np.floor(np.log2(max(1, n // LEAF)))))
    order = np.arange(n)
    centroid = triangles.mean(axis=1)
    for level in range(depth):
        start = _starts(n, level)
        node = np.repeat(np.arange(len(start) - 1), np.diff(start))
        c = centroid[order]
        lo = np.minimum.reduceat(c, start[:-1])
        hi = np.maximum.reduceat(c, start[:-1])
        axis = np.argmax(hi - lo, axis=1)
        key = c[np.arange(n), axis[node]]
        order = order[np.lexsort((key, node))]
    tri = triangles[order]
    levels = [_level(tri, _starts(n, depth))]
    for level in range(depth - 1, -1, -1):
        levels.insert(0, _parents(levels[0], _starts(n, level)))
    return Tree(_leaves(tri, levels[-1].start), tuple(levels))


def _parents(children: Level, start: Array) -> Level:
    """The level above `children`: cluster j holds children 2j and 2j + 1."""
    lo = children.center - children.radius[:, None]
    hi = children.center + children.radius[:, None]
    lo, hi = np.minimum(lo[0::2], lo[1::2]), np.maximum(hi[0::2], hi[1::2])
    center = (lo + hi) / 2
    arm = children.center - np.repeat(center, 2, axis=0)
    # every point of a child lies within its radius of its centre
    reach = np.sqrt((arm**2).sum(axis=1)) + children.radius
    radius = np.maximum(reach[0::2], reach[1::2]) * (1 + 1e-12)
    # moments about the new centre: each child's plus its arm times its vector area
    moved = children.moment + (arm[:, :, None] * children.vector[:, None, :]).reshape(-1, 9)
    return Level(
        start,
        center,
        radius,
        children.area[0::2] + children.area[1::2],
        children.vector[0::2] + children.vector[1::2],
        moved[0::2] + moved[1::2],
    )


def _leaves(tri: Array, start: Array) -> Array:
    """Each leaf's triangles as (9, K) corner coordinates; a short leaf is padded with copies
    of a point triangle (its first corner three times), whose solid angle is exactly 0."""
    count = np.diff(start)
    width = int(count.max())
    slot = np.minimum(start[:-1, None] + np.arange(width), start[1:, None] - 1)
    out = tri[slot]  # (leaves, K, 3, 3)
    pad = np.arange(width)[None, :] >= count[:, None]
    out[pad] = out[pad][:, :1, :]
    return np.ascontiguousarray(out.reshape(len(count), width, 9).transpose(0, 2, 1))


def _starts(n: int, level: int) -> Array:
    # cluster j of a level holds triangles [j n / 2^level, (j + 1) n / 2^level), rounded down
    return (np.arange((1 << level) + 1, dtype=np.int64) * n) >> level


def _level(tri: Array, start: Array) -> Level:
    first = start[:-1]
    count = np.diff(start)
    lo = np.minimum.reduceat(tri.min(axis=1), first)
    hi = np.maximum.reduceat(tri.max(axis=1), first)
    center = (lo + hi) / 2
    own = np.repeat(center, count, axis=0)
    reach = np.sqrt(((tri - own[:, None, :]) ** 2).sum(axis=2)).max(axis=1)
    # rounding of the distances: the radius is widened by a part in 1e12 of the cluster's size
    radius = np.maximum.reduceat(reach, first) * (1 + 1e-12) + 1e-12 * np.abs(hi - lo).max(axis=1)
    vec = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]) / 2
    area = np.sqrt((vec**2).sum(axis=1))
    arm = tri.mean(axis=1) - own
    outer = (arm[:, :, None] * vec[:, None, :]).reshape(-1, 9)
    return Level(
        start,
        center,
        radius,
        np.add.reduceat(area, first),
        np.add.reduceat(vec, first),
        np.add.reduceat(outer, first),
    )


def settle(tree: Tree, points: Array) -> tuple[Array, Array]:
    """Inside (|w| >= 1/2) per point, and which points the bounds could not settle."""
    inside = np.zeros(len(points), dtype=bool)
    open_ = np.ones(len(points), dtype=bool)
    for share, theta in PASSES:
        index = np.flatnonzero(open_)
        if len(index) == 0:
            break
        value, error, doubt = _bounds(tree, points[index], share, theta)
        w, e = np.abs(value) / (4 * np.pi), error / (4 * np.pi) + MARGIN
        yes, no = (w - e > 0.5) & ~doubt, (w + e < 0.5) & ~doubt
        inside[index[yes]] = True
        open_[index[yes | no]] = False
    return inside, open_


class Pending:
    """(point, cluster) pairs waiting, level by level, at most `CHUNK` handed out at a time.

    The deepest level holding `CHUNK` pairs goes first, else the shallowest holding any: a
    level is emptied below `CHUNK` before the one above hands it more (at most 2 `CHUNK`), so
    it never holds 3 `CHUNK`, however many points and triangles; the pairs of a level taken
    whole were 2.7 GB for 100 000 points of a 250 000-triangle soup, past 14 GB at 1 000 000.
    """

    def __init__(self, levels: int) -> None:
        self.parts: list[list[tuple[Array, Array]]] = [[] for _ in range(levels)]
        self.counts = [0] * levels
        self.peak = 0  # the most pairs held at once

    def push(self, depth: int, p: Array, n: Array) -> None:
        """Pairs of one level: points p and their clusters n."""
        if len(p):
            self.parts[depth].append((p, n))
            self.counts[depth] += len(p)
            self.peak = max(self.peak, sum(self.counts))

    def pop(self) -> tuple[int, Array, Array] | None:
        """Up to `CHUNK` pairs of one level and its depth; None when none is left."""
        full = [d for d, c in enumerate(self.counts) if c >= CHUNK]
        held = [d for d, c in enumerate(self.counts) if c]
        if not held:
            return None
        depth = full[-1] if full else held[0]
        parts, taken, size = self.parts[depth], [], 0
        while parts and size < CHUNK:
            p, n = parts.pop()
            if size + len(p) > CHUNK:  # the rest of this part waits
                cut = CHUNK - size
                parts.append((p[cut:], n[cut:]))
                p, n = p[:cut], n[:cut]
            taken.append((p, n))
            size += len(p)
        self.counts[depth] -= size
        return depth, np.concatenate([t[0] for t in taken]), np.concatenate([t[1] for t in taken])


def _bounds(
    tree: Tree, points: Array, share: float, theta: float, pending: Pending | None = None
) -> tuple[Array, Array, Array]:
    """Sum of solid angles per point, its error bound, and points too near a triangle's plane.

    A cluster is taken whole when its radius is below `theta` times its distance, or when its
    error bound is within its area's part of `share` (in winding number): those parts add up
    to at most `share`, however many clusters are taken. The pairs a cluster is opened for wait
    in `pending` (a new one unless given), so their count stays bounded.
    """
    m = len(points)
    value, error = np.zeros(m), np.zeros(m)
    doubt = np.zeros(m, dtype=bool)
    last = len(tree.levels) - 1
    share = 4 * np.pi * share / max(float(tree.levels[0].area[0]), 1e-300)
    pending = Pending(len(tree.levels)) if pending is None else pending
    for s in range(0, m, CHUNK):
        p = np.arange(s, min(s + CHUNK, m))
        pending.push(0, p, np.zeros(len(p), dtype=np.int64))
    while (work := pending.pop()) is not None:
        depth, p, n = work
        level = tree.levels[depth]
        u = level.center[n] - points[p]
        d = np.sqrt((u**2).sum(axis=1))
        r = level.radius[n]
        area = level.area[n]
        gap = np.maximum(d - r, 0.0)
        # a near cluster of zero area (degenerate triangles) gives 0 / 0: it is not taken
        with np.errstate(divide="ignore", invalid="ignore"):
            plain = area / gap**2  # |solid angle| <= area / distance^2
            moment = 3 * area * r**2 / gap**4
        far = (d > r) & ((r < theta * d) | (np.minimum(plain, moment) <= share * area))
        fp, fu, fd, fn = p[far], u[far], d[far], n[far]
        plain, moment = plain[far], moment[far]
        # the expansion where its bound is the smaller, else 0 (|angle| <= area / gap^2)
        taken = _expansion(level, fn, fu, fd) * (moment < plain)
        # summed over the chunk's span of points only, not all m per chunk: its pairs are those
        # of neighbouring points (pushed in order; a pair's children follow it)
        lo, size = int(p.min()), int(p.max()) - int(p.min()) + 1
        value[lo : lo + size] += np.bincount(fp - lo, taken, minlength=size)
        error[lo : lo + size] += np.bincount(fp - lo, np.minimum(plain, moment), minlength=size)
        p, n = p[~far], n[~far]
        if depth < last:
            pending.push(depth + 1, np.repeat(p, 2), (2 * n[:, None] + [0, 1]).ravel())
        elif len(p):
            v, shaky = _exact(tree, points, p, n)
            value[lo : lo + size] += np.bincount(p - lo, v, minlength=size)
            doubt[p[shaky]] = True
    return value, error, doubt


def _expansion(level: Level, n: Array, u: Array, d: Array) -> Array:
    """The clusters' solid angles to second order about their centres (u: centre - point)."""
    q = level.moment[n]
    uqu = np.einsum("ij,ij->i", u[:, [0, 0, 0, 1, 1, 1, 2, 2, 2]] * u[:, [0, 1, 2] * 3], q)
    d2 = d * d
    linear = (q[:, 0] + q[:, 4] + q[:, 8] - 3 * uqu / d2) / (d2 * d)
    return np.einsum("ij,ij->i", level.vector[n], u) / (d2 * d) + linear


def _exact(tree: Tree, points: Array, p: Array, n: Array) -> tuple[Array, Array]:
    """Solid angles of each leaf's triangles seen from its point (Van Oosterom and Strackee).

    One coordinate at a time on (pairs, leaf size) arrays of about `EXACT` entries, as
    `winding._solid_angles`: they stay in cache.
    """
    value, shaky = np.zeros(len(p)), np.zeros(len(p), dtype=bool)
    step = max(1, EXACT // tree.leaves.shape[2])
    for s in range(0, len(p), step):
        part = slice(s, s + step)
        value[part], shaky[part] = _leaf_angles(tree.leaves[n[part]], points[p[part]])
    return value, shaky


def _leaf_angles(leaf: Array, q: Array) -> tuple[Array, Array]:
    # leaf (pairs, 9, K): corner coordinates, padded by a point triangle; q (pairs, 3)
    a, b, c = ([leaf[:, 3 * i + k] - q[:, k, None] for k in range(3)] for i in range(3))
    la, lb, lc = np.sqrt(_dot(a, a)), np.sqrt(_dot(b, b)), np.sqrt(_dot(c, c))
    b_c = [b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]]
    det = _dot(a, b_c)
    dot = la * lb * lc + _dot(a, b) * lc + _dot(b, c) * la + _dot(c, a) * lb
    # a point within rounding of a triangle's plane, over the triangle: its side is a guess,
    # in this computation as in the exact one; such points are left to the exact one (its
    # rays' crossings are guesses within some ulps of the coordinates: `winding._angles`)
    reach = np.abs(q).max(axis=1)[:, None] * (la + lb + lc) ** 2
    scale = 1e-9 * la * lb * lc + 1e-14 * reach
    shaky = ((np.abs(det) <= scale) & (dot <= scale)).any(axis=1)
    return 2 * np.arctan2(det, dot).sum(axis=1), shaky


def _dot(x: list[Array], y: list[Array]) -> Array:
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
