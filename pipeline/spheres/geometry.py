"""The collision geometry of one link in the link frame: surface patches and the solid."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.spheres.frame import Frame
from pipeline.spheres.meshlib import trimesh
from pipeline.spheres.patches import Patches
from pipeline.spheres.rows import negative_zero, sorted_rows
from pipeline.spheres.triangles import load_mesh_parts
from pipeline.spheres.winding import closing_fan, mesh_inside
from pipeline.urdf import Box, Collision, Cylinder, Link, Mesh, Robot, Sphere

Array = np.ndarray
_CYLINDER_SEGMENTS = 16


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
