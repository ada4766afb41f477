"""The collision geometry of one link in the link frame: surface patches and the solid."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.spheres.meshlib import trimesh
from pipeline.spheres.rows import negative_zero, sorted_rows
from pipeline.spheres.triangles import load_mesh_parts
from pipeline.spheres.winding import closing_fan, mesh_inside
from pipeline.urdf import Box, Collision, Cylinder, Link, Mesh, Origin, Robot, Sphere

Array = np.ndarray
_CYLINDER_SEGMENTS = 16


def rpy_matrix(rpy: tuple[float, float, float]) -> Array:
    """Rotation matrix of URDF roll-pitch-yaw (fixed axes X, then Y, then Z)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


@dataclass(frozen=True)
class Frame:
    """A rigid placement: link-frame point = rotation @ local point + translation."""

    rotation: Array
    translation: Array

    @staticmethod
    def of(origin: Origin) -> Frame:
        """The frame a URDF `<origin>` describes."""
        return Frame(rpy_matrix(origin.rpy), np.array(origin.xyz, dtype=float))

    def apply(self, points: Array) -> Array:
        """Local points (..., 3) into the link frame."""
        return points @ self.rotation.T + self.translation

    def local(self, points: Array) -> Array:
        """Link-frame points (..., 3) into the local frame."""
        return (points - self.translation) @ self.rotation


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


@dataclass(frozen=True)
class Solid:
    """One collision element's solid: `inside(points)` says which link-frame points it holds."""

    kind: str
    frame: Frame
    size: Array  # box: half extents; cylinder: (radius, half length); sphere: (radius,)
    triangles: Array  # mesh: triangles (N, 3, 3) in the link frame
    fan: Array = field(default_factory=lambda: np.zeros((0, 3, 3)))  # mesh: closes its holes

    @property
    def closed(self) -> bool:
        """A mesh whose every edge is used as often in one direction as in the other."""
        return len(self.fan) == 0

    def bounds(self) -> Array:
        """Axis-aligned bounds (2, 3) in the link frame."""
        if self.kind == "mesh":
            flat = self.triangles.reshape(-1, 3)
            return np.stack([flat.min(axis=0), flat.max(axis=0)])
        if self.kind == "box":
            corners = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
            pts = self.frame.apply(corners * self.size)
            return np.stack([pts.min(axis=0), pts.max(axis=0)])
        t = self.frame.translation
        if self.kind == "cylinder":  # the end discs' bounds: a disc spans r * sin(angle to axis)
            axis = self.frame.rotation[:, 2]
            half = self.size[0] * np.sqrt(np.maximum(0.0, 1 - axis**2)) + self.size[1] * abs(axis)
            return np.stack([t - half, t + half])
        reach = float(self.size[0])
        return np.stack([t - reach, t + reach])

    def inside(self, points: Array) -> Array:
        """Boolean mask of the points inside this solid."""
        if self.kind == "mesh":
            return mesh_inside(self.triangles, points, self.fan)
        local = self.frame.local(points)
        if self.kind == "box":
            return np.all(np.abs(local) <= self.size, axis=1)
        if self.kind == "cylinder":
            rho2 = local[:, 0] ** 2 + local[:, 1] ** 2
            return (rho2 <= self.size[0] ** 2) & (np.abs(local[:, 2]) <= self.size[1])
        return np.einsum("ij,ij->i", local, local) <= self.size[0] ** 2


@dataclass(frozen=True)
class LinkGeometry:
    """Every collision element of one link: surface patches and solids, in the link frame."""

    link: str
    patches: tuple[Patches, ...]
    solids: tuple[Solid, ...]
    # what surface_points computes once per link (a fit asks it 4 times): not compared, not
    # copied by dataclasses.replace
    memo: dict[str | float, list[Patches]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def bounds(self) -> Array:
        """Axis-aligned bounds (2, 3) of the collision geometry (a mesh's lines and points too)."""
        ends = [p.params.reshape(-1, 3) for p in self.patches if p.kind == "segment"]
        extra = [np.stack([e.min(axis=0), e.max(axis=0)]) for e in ends if len(e)]
        b = np.stack([s.bounds() for s in self.solids] + extra)
        return np.stack([b[:, 0].min(axis=0), b[:, 1].max(axis=0)])

    def inside(self, points: Array) -> Array:
        """Points inside any collision element's solid."""
        mask = np.zeros(len(points), dtype=bool)
        for solid in self.solids:
            mask |= solid.inside(points)
        return mask

    def surface_points(self, size: float, skip: Skip | None = None) -> Array:
        """Hull points of the surface refined to patches at most `size` across, deduplicated;
        without the points of the patches `skip` marks once refined to 4 `size` across."""
        distinct = self._distinct()
        if skip is not None:
            # the leaves below a patch are the same whether it is refined in one go or in two
            distinct = [p.take(~skip(p)) for p in self._refined(4 * size)]
        pts = np.concatenate([p.refined_points(size) for p in distinct])
        if not len(pts):
            return pts
        if negative_zero(pts):
            # of a row given as 0.0 and as -0.0, which one is kept depends on the points'
            # order: the leaves' own, as the sort below has always been given them
            pts = np.concatenate([p.refine(size).hull().reshape(-1, 3) for p in distinct])
        pts = sorted_rows(pts)
        cells = thin(pts, size / 2)
        return cells if len(pts) > THIN_ABOVE * len(cells) else pts

    def _distinct(self) -> list[Patches]:
        """Each batch of patches without repeats (kept for the link's later calls)."""
        # a patch repeated (a mesh of 200 000 copies of one triangle) is refined once: the
        # points are deduplicated anyway, and refining every copy took gigabytes
        if "distinct" not in self.memo:
            self.memo["distinct"] = [
                p.take(np.unique(p.params.reshape(len(p), -1), axis=0, return_index=True)[1])
                for p in self.patches
            ]
        return self.memo["distinct"]

    def _refined(self, size: float) -> list[Patches]:
        """The distinct patches refined to `size`; the last size asked is kept (the hole
        rounds ask one size each time)."""
        if size not in self.memo:
            for key in [key for key in self.memo if key != "distinct"]:
                del self.memo[key]
            self.memo[size] = [p.refine(size) for p in self._distinct()]
        return self.memo[size]


# Hull points per cell of half the sample size above which they are thinned to one per cell.
# A mesh of long slivers (an extrusion's profile swept 0.3 m, a cylinder's sides) is refined
# along its length only: an aluminium extrusion of 2 060 triangles gave 125 000 points in 2 814
# cells, 44 each, and every stage of the fit paid for them (docs/spheres.md: 3.1 s, thinned
# 2.0-2.2 s at the same excess). The shipped links have at most 4.5; thinned at 8, links of
# 8-18 fitted 2-12 % looser as often as tighter (docs/performance.md), so only a crowd this
# dense is thinned.
THIN_ABOVE = 24


def thin(points: Array, size: float) -> Array:
    """One point per cube of `size` (the first in the points' order), in the points' order."""
    cube = np.floor(points / size).astype(np.int64)
    order = np.lexsort(cube.T[::-1])  # stable: in a cube, the points' own order
    cube = cube.take(order, axis=0)
    first = np.r_[True, np.any(cube[1:] != cube[:-1], axis=1)]
    return points.take(np.sort(order.compress(first)), axis=0)


# which patches of a batch to leave out, as a mask
Skip = Callable[[Patches], Array]


def load_link_geometry(link: Link, robot_folder: Path, display_folder: str) -> LinkGeometry:
    """The collision geometry of `link`, read from the robot folder (named `display_folder`)."""
    patches: list[Patches] = []
    solids: list[Solid] = []
    for collision in link.collisions:
        p, s = _element(collision, robot_folder, display_folder)
        patches += p
        solids.append(s)
    return LinkGeometry(link.name, tuple(patches), tuple(solids))


def collision_links(robot: Robot) -> list[Link]:
    """The links that have collision geometry, in document order."""
    return [link for link in robot.links if link.collisions]


def _element(collision: Collision, folder: Path, display: str) -> tuple[list[Patches], Solid]:
    frame = Frame.of(collision.origin)
    g = collision.geometry
    none = np.zeros((0, 3, 3))
    if isinstance(g, Mesh):
        parts = load_mesh_parts(folder, g, display)
        tri = frame.apply(parts.triangles)
        solid = Solid("mesh", frame, np.zeros(0), tri, closing_fan(tri))
        patches = [Patches("flat", tri, frame)]
        if len(parts.segments):  # lines and points: covered, they enclose nothing
            patches.append(Patches("segment", frame.apply(parts.segments), frame))
        if len(parts.polygons):  # a non-planar polygon's every triangle: covered, not solid
            patches.append(Patches("flat", frame.apply(parts.polygons), frame))
        return patches, solid
    if isinstance(g, Box):
        half = np.array(g.size, dtype=float) / 2
        box = trimesh.creation.box(extents=np.array(g.size, dtype=float))
        tri = frame.apply(np.asarray(box.triangles, dtype=float))
        return [Patches("flat", tri, frame)], Solid("box", frame, half, none)
    if isinstance(g, Cylinder):
        return _cylinder(g, frame), Solid(
            "cylinder", frame, np.array([g.radius, g.length / 2]), none
        )
    assert isinstance(g, Sphere)
    ico = trimesh.creation.icosahedron()
    tri = np.asarray(ico.vertices, dtype=float)[np.asarray(ico.faces)] * g.radius
    return [Patches("sphere", tri, frame, g.radius)], Solid(
        "sphere", frame, np.array([g.radius]), none
    )


def _cylinder(g: Cylinder, frame: Frame) -> list[Patches]:
    edges = np.linspace(0.0, 2 * np.pi, _CYLINDER_SEGMENTS + 1)
    t0, t1 = edges[:-1], edges[1:]
    half = g.length / 2
    side = np.stack([t0, t1, np.full_like(t0, -half), np.full_like(t0, half)], axis=1)
    disc = np.stack([np.zeros_like(t0), np.full_like(t0, g.radius), t0, t1], axis=1)
    return [
        Patches("side", side, frame, g.radius),
        Patches("cap", disc, frame, g.radius, -half),
        Patches("cap", disc.copy(), frame, g.radius, half),
    ]
