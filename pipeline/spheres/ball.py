"""The minimum enclosing ball of a link's collision geometry: the best cover by one sphere.

The smallest ball holding every corner of a mesh holds their convex hull, so every triangle;
a box is its corners, a cylinder its two rim circles, a sphere primitive its own ball. The
ball of the points is found exactly (Welzl's move-to-front recursion on a small support set);
circles and balls are met by adding, round by round, the point of the geometry farthest from
the current centre (Badoiu-Clarkson), until none lies farther than the radius allows. The
arithmetic is Python floats and numpy's elementwise operations, which are correctly rounded on
every CPU and numpy version: the same geometry gives the same ball, bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.spheres.geometry import Array, LinkGeometry
from pipeline.spheres.rows import negative_zero, sorted_rows

Point = tuple[float, float, float]
ROUNDS = 200  # support points added at most (a curved link converges in a few dozen)
# A point this much (relative, in squared distance) outside a ball counts as in it: the ball
# found is then at most ~1e-12 of its radius short of the exact one, far below a micrometre.
SLACK = 2.0**-40
# Gram determinants below this share of their diagonal's product are flat (no circumball).
FLAT = 1e-14


@dataclass(frozen=True)
class Extremes:
    """What of a link's surface can lie farthest from a point: corners, balls, circles."""

    points: Array  # (n, 3) corners of flat pieces and segments, deduplicated, sorted
    balls: Array  # (m, 4) sphere primitives: centre and radius
    circles: Array  # (k, 10) cylinder rims: centre, unit axis, unit in-plane direction, radius


def extremes(geometry: LinkGeometry) -> Extremes:
    """The corners, balls and rim circles whose enclosing balls hold the link's surface."""
    corners = [p.params.reshape(-1, 3) for p in geometry.patches if p.kind in ("flat", "segment")]
    points = unique_rows(np.concatenate([np.zeros((0, 3)), *corners]))
    balls, circles = [], []
    for p in geometry.patches:
        frame = p.frame
        if p.kind == "sphere":
            balls.append([*frame.translation, p.radius])
        elif p.kind == "cap":  # a cylinder's rims are its caps' edges; its side lies between
            centre = frame.apply(np.array([[0.0, 0.0, p.height]]))[0]
            rot = frame.rotation
            circles.append([*centre, *rot[:, 2], *rot[:, 0], p.radius])
    return Extremes(
        points,
        np.unique(np.array(balls, dtype=float).reshape(-1, 4), axis=0),
        np.unique(np.array(circles, dtype=float).reshape(-1, 10), axis=0),
    )


def unique_rows(points: Array) -> Array:
    """np.unique(points, axis=0): the rows sorted, without repeats (a stable sort of each
    coordinate, several times faster: 112 000 corners of a 37 000-triangle mesh, 54 -> 8 ms).

    Where a row is given both with 0.0 and with -0.0, np.unique's unstable sort picks which one
    is kept: np.unique itself then.
    """
    return np.unique(points, axis=0) if negative_zero(points) else sorted_rows(points)


def farthest(ext: Extremes, centre: Point) -> tuple[float, Point]:
    """The largest distance from `centre` to the link's surface, and a point at it."""
    c = np.array(centre)
    best, where = -1.0, centre
    if len(ext.points):
        d2 = _squares(ext.points - c)
        i = int(np.argmax(d2))
        best, where = math.sqrt(float(d2[i])), _point(ext.points[i])
    if len(ext.balls):
        off = ext.balls[:, :3] - c
        length = np.sqrt(_squares(off))
        reach = length + ext.balls[:, 3]
        i = int(np.argmax(reach))
        if float(reach[i]) > best:
            ball, n = ext.balls[i], float(length[i])
            out = off[i] / n if n > 0 else np.array([1.0, 0.0, 0.0])
            best, where = float(reach[i]), _point(ball[:3] + ball[3] * out)
    if len(ext.circles):
        o, axis, ref, rho = (ext.circles[:, s] for s in (slice(0, 3), slice(3, 6), slice(6, 9), 9))
        v = c - o
        h = v[:, 0] * axis[:, 0] + v[:, 1] * axis[:, 1] + v[:, 2] * axis[:, 2]
        w = v - h[:, None] * axis  # the centre's offset in the circle's plane
        q = np.sqrt(_squares(w))
        reach = np.sqrt(h * h + (q + rho) * (q + rho))
        i = int(np.argmax(reach))
        if float(reach[i]) > best:
            # the rim point opposite the centre's offset (any point when it lies on the axis)
            out = -w[i] / q[i] if q[i] > 0 else ref[i]
            best, where = float(reach[i]), _point(o[i] + rho[i] * out)
    return best, where


def enclosing_ball(ext: Extremes) -> tuple[Point, float]:
    """Centre and radius of the smallest ball holding the surface the extremes describe."""
    _, start = farthest(ext, _point(_first(ext)))
    support = [start]
    centre, r2 = start, 0.0
    for _ in range(ROUNDS):
        reach, far = farthest(ext, centre)
        if not reach * reach > r2 * (1 + SLACK):
            break
        # the ball of the support set and a point outside it has that point on its boundary
        ball = _move_to_front(support, len(support), (far,))
        support.insert(0, far)
        if ball is None:  # the new point is within rounding of the ball: nothing to gain
            break
        centre, r2 = ball
    return centre, farthest(ext, centre)[0]


def _first(ext: Extremes) -> Array:
    if len(ext.points):
        return np.asarray(ext.points[0])
    if len(ext.balls):
        return np.asarray(ext.balls[0, :3])
    return np.asarray(ext.circles[0, :3])


def _squares(v: Array) -> Array:
    return v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2]


def _point(v: Array) -> Point:
    return (float(v[0]), float(v[1]), float(v[2]))


def _outside(p: Point, centre: Point, r2: float) -> bool:
    return _dist2(p, centre) > r2 * (1 + SLACK)


def _dist2(a: Point, b: Point) -> float:
    x, y, z = a[0] - b[0], a[1] - b[1], a[2] - b[2]
    return x * x + y * y + z * z


def _move_to_front(
    points: list[Point], end: int, boundary: tuple[Point, ...]
) -> tuple[Point, float] | None:
    """The smallest ball holding points[:end] with `boundary` on its sphere (Welzl, Gärtner)."""
    ball = _circumball(boundary)
    if ball is None or len(boundary) == 4:
        return ball
    for i in range(end):
        p = points[i]
        if _outside(p, *ball):
            inner = _move_to_front(points, i, (*boundary, p))
            if inner is not None:  # None: p is within rounding of the ball's sphere
                ball = inner
                points.insert(0, points.pop(i))  # the next point stays at i + 1
    return ball


def _circumball(boundary: tuple[Point, ...]) -> tuple[Point, float] | None:
    """The smallest ball with every boundary point on its sphere; None when they are flat."""
    p0 = boundary[0]
    vs = [(p[0] - p0[0], p[1] - p0[1], p[2] - p0[2]) for p in boundary[1:]]
    gram = [[a[0] * b[0] + a[1] * b[1] + a[2] * b[2] for b in vs] for a in vs]
    alpha = _solve(gram, [g[i] / 2 for i, g in enumerate(gram)])
    if alpha is None:
        return None
    x, y, z = p0
    for a, v in zip(alpha, vs, strict=True):  # not sum(): Python 3.12 made it compensated
        x, y, z = x + a * v[0], y + a * v[1], z + a * v[2]
    centre = (x, y, z)
    return centre, max(_dist2(centre, p) for p in boundary)


def _solve(m: list[list[float]], rhs: list[float]) -> list[float] | None:
    """Cramer's rule for a Gram system of size 0 to 3; None when it is (nearly) singular."""
    n = len(rhs)
    det = _det(m)
    scale = 1.0
    for i in range(n):
        scale *= m[i][i]
    if n and not abs(det) > FLAT * scale:
        return None
    return [
        _det([[rhs[r] if c == j else m[r][c] for c in range(n)] for r in range(n)]) / det
        for j in range(n)
    ]


def _det(m: list[list[float]]) -> float:
    n = len(m)
    if n == 0:
        return 1.0
    if n == 1:
        return m[0][0]
    if n == 2:
        return m[0][0] * m[1][1] - m[0][1] * m[1][0]
    return (
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    )
