"""Surface patches of a link's collision geometry: the hull that holds each, and their
refinement into patches at most a size across."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.spheres.frame import Frame

Array = np.ndarray


@dataclass(frozen=True)
class Patches:
    """A batch of surface patches of one kind; each lies in the convex hull of its `hull()`.

    kinds: `flat` (params: triangles N x 3 x 3, link frame), `segment` (params: a mesh's
    lines and points, N x 2 x 3, link frame; a segment is its own hull), `sphere` (triangles
    on a sphere of `radius` about the local origin), `side` (cylinder side: theta0, theta1, z0, z1),
    `cap` (annular sector of a cylinder end: rho0, rho1, theta0, theta1, at z = `height`).
    """

    kind: str
    params: Array
    frame: Frame
    radius: float = 0.0
    height: float = 0.0

    def __len__(self) -> int:
        return int(self.params.shape[0])

    def take(self, index: Array) -> Patches:
        """The patches selected by an index or mask."""
        # compress and take: the rows of indexing, several times faster on (n, m, 3) params
        if index.dtype == bool:
            params = self.params.compress(index, axis=0)
        else:
            params = self.params.take(index, axis=0)
        return Patches(self.kind, params, self.frame, self.radius, self.height)

    def hull(self) -> Array:
        """Points (N, m, 3), m <= 6, in the link frame whose convex hull holds each patch."""
        p, r = self.params, self.radius
        if self.kind in ("flat", "segment"):
            return p
        if self.kind == "sphere":
            normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
            normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-300)
            depth = np.abs(np.einsum("ij,ij->i", normal, p[:, 0]))
            # the spherical triangle lies between its flat triangle and that triangle
            # pushed out by radius / depth (a frustum of the cone from the centre)
            grow = (r / np.maximum(depth, 1e-300))[:, None, None]
            local = np.concatenate([p, p * grow], axis=1)
            return self.frame.apply(local)
        if self.kind == "side":
            t0, t1, z0, z1 = p.T
            tm, out = (t0 + t1) / 2, r / np.cos((t1 - t0) / 2)
            ring = [(r, t0), (r, t1), (out, tm)]
            pts = [_polar(rad, t, z) for z in (z0, z1) for rad, t in ring]
            return self.frame.apply(np.stack(pts, axis=1))
        rho0, rho1, t0, t1 = p.T
        z = np.full_like(rho0, self.height)
        tm, out = (t0 + t1) / 2, rho1 / np.cos((t1 - t0) / 2)
        pts = [
            _polar(rho0, t0, z),
            _polar(rho0, t1, z),
            _polar(rho1, t0, z),
            _polar(rho1, t1, z),
            _polar(out, tm, z),
        ]
        return self.frame.apply(np.stack(pts, axis=1))

    def outline(self) -> Array:
        """Corners (N, 4, 3) of each patch on its surface, in order around it (for drawing)."""
        hull = self.hull()
        if self.kind == "segment":
            return hull[:, [0, 1, 1, 0]]
        if self.kind in ("flat", "sphere"):
            return hull[:, [0, 1, 2, 2]]
        if self.kind == "side":
            return hull[:, [0, 1, 4, 3]]
        return hull[:, [0, 2, 3, 1]]

    def split(self) -> Patches:
        """Two children of each patch: its longest edge (or side) bisected."""
        p = self.params
        if self.kind == "segment":
            mid = (p[:, 0] + p[:, 1]) / 2
            kids = np.stack([np.stack([p[:, 0], mid], 1), np.stack([mid, p[:, 1]], 1)], axis=1)
            return Patches(self.kind, kids.reshape(-1, 2, 3), self.frame)
        if self.kind in ("flat", "sphere"):
            # bisect the longest edge: thin triangles become well shaped
            edge = np.stack(
                [_length(p[:, (i + 1) % 3] - p[:, (i + 2) % 3]) for i in range(3)],
                axis=1,
            )
            k = np.argmax(edge, axis=1)  # the vertex opposite the longest edge
            rows = np.arange(len(p))
            apex, b, c = p[rows, k], p[rows, (k + 1) % 3], p[rows, (k + 2) % 3]
            mid = (b + c) / 2
            if self.kind == "sphere":
                mid = self._onto_sphere(mid)
            kids = np.stack([np.stack([apex, b, mid], 1), np.stack([apex, mid, c], 1)], axis=1)
            return Patches(self.kind, kids.reshape(-1, 3, 3), self.frame, self.radius, self.height)
        # bisect the longer side (arc or straight), as triangles: a long thin strip is not
        # cut across its width at every level
        u0, u1, v0, v1 = p.T
        if self.kind == "side":  # u, v: angle, height
            along_u, along_v = self.radius * (u1 - u0), v1 - v0
        else:  # u, v: radius, angle
            along_u, along_v = u1 - u0, u1 * (v1 - v0)
        cut_u = along_u >= along_v
        um = np.where(cut_u, (u0 + u1) / 2, u1)
        vm = np.where(cut_u, v1, (v0 + v1) / 2)
        first = np.stack([u0, um, v0, vm], axis=1)
        second = np.stack([np.where(cut_u, um, u0), u1, np.where(cut_u, v0, vm), v1], axis=1)
        kids = np.stack([first, second], axis=1)
        return Patches(self.kind, kids.reshape(-1, 4), self.frame, self.radius, self.height)

    def _onto_sphere(self, points: Array) -> Array:
        return points * (self.radius / np.linalg.norm(points, axis=1, keepdims=True))

    def refine(self, size: float) -> Patches:
        """Split until every patch's hull is at most `size` across (at least once per level)."""
        # patches small enough are set aside in the order they become so, and only the big
        # ones are measured again: the same patches in the same order as re-measuring all
        done: list[Patches] = []
        todo = self
        for _ in range(REFINE_LEVELS):
            big = _extent(todo.hull()) > size
            if not big.any():
                break
            done.append(todo.take(~big))
            todo = todo.take(big).split()
        return _concat([*done, todo]) if done else todo

    def refined_points(self, size: float) -> Array:
        """The hull points of refine(size)'s patches, as a set (repeats, in another order).

        A flat patch's or segment's hull is its corners, and a split keeps its patch's
        corners and adds one, the midpoint of the edge it bisects: the leaves' corners are the
        patches' own and the midpoints of every split. Those are a third of the leaves'
        corners, and the leaves themselves are never gathered (an extrusion of 2 060 slivers
        refined to 750 000 triangles, 2.2 million corners).
        """
        if self.kind not in ("flat", "segment"):
            return self.refine(size).hull().reshape(-1, 3)
        found = [self.params.reshape(-1, 3)]
        todo = self
        for _ in range(REFINE_LEVELS):
            big = _extent(todo.params) > size
            if not big.any():
                break
            todo = todo.take(big).split()
            found.append(todo.params[0::2, -1])  # the first child's last corner: the midpoint
        return np.concatenate(found)


# how many times refine splits at most
REFINE_LEVELS = 48


def _extent(hull: Array) -> Array:
    """Per patch, the diagonal of its hull points' bounds."""
    # corner by corner: the same maxima and minima as over axis 1, several times faster
    hi, lo = hull[:, 0], hull[:, 0]
    for i in range(1, hull.shape[1]):
        hi, lo = np.maximum(hi, hull[:, i]), np.minimum(lo, hull[:, i])
    return _length(hi - lo)


def _length(v: Array) -> Array:
    """Length of each row of v (N, 3): np.linalg.norm(v, axis=1)'s numbers, several times faster."""
    return np.sqrt(v[:, 0] ** 2 + v[:, 1] ** 2 + v[:, 2] ** 2)


def _polar(rho: Array, theta: Array, z: Array) -> Array:
    return np.stack([rho * np.cos(theta), rho * np.sin(theta), z], axis=1)


def _concat(batches: list[Patches]) -> Patches:
    first = batches[0]
    params = np.concatenate([b.params for b in batches], axis=0)
    return Patches(first.kind, params, first.frame, first.radius, first.height)
