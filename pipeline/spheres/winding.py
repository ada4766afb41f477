"""Inside or outside a triangle mesh: winding numbers, exact for closed meshes, robust for open."""

from __future__ import annotations

import numpy as np

from pipeline.spheres.winding_tree import build_tree, settle

Array = np.ndarray
# The fan is summed at every point (`mesh_winding`) unless it has more triangles than the mesh
# (a soup, whose every edge is open) or more than LARGE_FAN: a tree's bounds cost each point
# some thousands of triangles' solid angles near it on a detailed mesh, summing a fan of
# hundreds or a few thousand costs less (example-robot-data's anymal_base, 124 882 triangles,
# fan 3 108: 0.7 s summed, 9.9 s bounded for 8 000 points; a soup of 20 480: 21 s, 1.3 s).
SMALL_FAN = 200
LARGE_FAN = 20_000


def winding_number(triangles: Array, points: Array, chunk: int = 50_000) -> Array:
    """Generalised winding number of a triangle soup at each point (robust when not closed)."""
    out = np.zeros(len(points))
    index = np.flatnonzero(_in_bounds(triangles, points))
    out[index] = _solid_angles(triangles, points[index], chunk)
    return out


def _solid_angles(triangles: Array, points: Array, chunk: int = 50_000) -> Array:
    """Sum of the triangles' signed solid angles seen from each point, over 4 pi."""
    return _angles(triangles, points, chunk)[0]


def _angles(triangles: Array, points: Array, chunk: int = 50_000) -> tuple[Array, Array]:
    """`_solid_angles`, and which points lie within rounding of a triangle's plane over it.

    Van Oosterom and Strackee's formula, one coordinate at a time on (points, triangles)
    arrays of about `chunk` entries: they stay in cache, several times faster than (points,
    triangles, 3, 3) arrays with einsum and cross.
    """
    out = np.zeros(len(points))
    on = np.zeros(len(points), dtype=bool)
    corner = np.ascontiguousarray(triangles.transpose(1, 2, 0))  # (corner, axis, triangle)
    step = max(1, chunk // max(1, len(triangles)))
    for start in range(0, len(points), step):
        p = points[start : start + step]
        a, b, c = ([corner[i, k][None, :] - p[:, k, None] for k in range(3)] for i in range(3))
        la, lb, lc = np.sqrt(_dot(a, a)), np.sqrt(_dot(b, b)), np.sqrt(_dot(c, c))
        b_c = [b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]]
        det = _dot(a, b_c)
        dot = la * lb * lc + _dot(a, b) * lc + _dot(b, c) * la + _dot(c, a) * lb
        out[start : start + step] = np.arctan2(det, dot).sum(axis=1) / (2 * np.pi)
        # as `winding_tree._leaf_angles`: such a point's side of the plane is a guess; the
        # ray's crossing is a guess within some ulps of the coordinates (`ray_winding` turns
        # them), a mesh 1e6 m out: 1e-10 m, over a part in 1e9 of a 5 cm triangle
        reach = np.abs(p).max(axis=1)[:, None] * (la + lb + lc) ** 2
        scale = 1e-9 * la * lb * lc + 1e-14 * reach
        on[start : start + step] = ((np.abs(det) <= scale) & (dot <= scale)).any(axis=1)
    return out, on


def _dot(x: list[Array], y: list[Array]) -> Array:
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]


def closing_fan(triangles: Array) -> Array:
    """Triangles (F, 3, 3) that close the surface: one per boundary edge, to a common apex.

    The boundary is what does not cancel: each edge's uses in one direction less its uses in
    the other. A closed, consistently oriented surface (manifold or not) has none.
    """
    verts, ids = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    ids = ids.reshape(-1, 3)
    edges = np.concatenate([ids[:, [0, 1]], ids[:, [1, 2]], ids[:, [2, 0]]])
    edges = edges[edges[:, 0] != edges[:, 1]]
    sign = np.where(edges[:, 0] < edges[:, 1], 1, -1)
    # the rows (low, high) as one integer each, in the same order: np.unique(axis=0) on the
    # rows gives the same pairs and inverse but sorts them as records, ten times slower
    low_high = np.sort(edges, axis=1).astype(np.int64)
    keys, inverse = np.unique(low_high[:, 0] * len(verts) + low_high[:, 1], return_inverse=True)
    pairs = np.stack([keys // len(verts), keys % len(verts)], axis=1)
    net = np.zeros(len(pairs), dtype=np.int64)
    np.add.at(net, inverse.ravel(), sign)
    keep = net != 0
    pairs, net = pairs[keep], net[keep]
    if len(pairs) == 0:
        return np.zeros((0, 3, 3))
    # an edge used net n times from a to b is closed by n fan triangles (b, a, apex)
    heads = np.where(net[:, None] > 0, pairs, pairs[:, ::-1])
    heads = np.repeat(heads, np.abs(net), axis=0)
    a, b = verts[heads[:, 0]], verts[heads[:, 1]]
    apex = np.broadcast_to(np.concatenate([a, b]).mean(axis=0), a.shape)
    return np.stack([b, a, apex], axis=1)


def mesh_winding(triangles: Array, points: Array, fan: Array | None = None) -> Array:
    """`winding_number` of a mesh, fast: the closed mesh's crossings less the fan's angles.

    The mesh and its closing fan form a closed surface, whose winding number one ray per point
    counts exactly; only the few fan triangles are summed solid angle by solid angle.
    """
    if fan is None:
        fan = closing_fan(triangles)
    if len(fan) == 0:
        return ray_winding(triangles, points)
    # as winding_number: 0 outside the mesh's bounds (the fan's apex lies within them)
    out = ray_winding(np.concatenate([triangles, fan]), points)
    index = np.flatnonzero(_in_bounds(triangles, points))
    angles, on = _angles(fan, points[index])
    out[index] -= angles
    # a point on a fan triangle (a grid point on a symmetric mesh's plane through the apex):
    # its ray's crossing and that triangle's angle are both guesses that need not agree, and
    # the mesh's own angles are continuous there: they are summed for it
    index = index[on]
    out[index] = _solid_angles(triangles, points[index])
    return out


def mesh_inside(triangles: Array, points: Array, fan: Array | None = None) -> Array:
    """Points of |`mesh_winding`| >= 1/2, the same decisions, computed faster for large fans.

    A closed mesh's winding number is its rays' crossings, a mesh with a small fan is summed.
    Otherwise (a soup) a tree of the mesh's
    triangles bounds each point's winding number (`winding_tree`); only the points whose bound
    does not settle the decision get the exact number (every fan triangle's solid angle).
    """
    if fan is None:
        fan = closing_fan(triangles)
    if len(fan) <= SMALL_FAN or len(fan) < min(len(triangles), LARGE_FAN):
        return np.abs(mesh_winding(triangles, points, fan)) >= 0.5
    out = np.zeros(len(points), dtype=bool)
    index = np.flatnonzero(_in_bounds(triangles, points))
    inside, open_ = settle(build_tree(triangles), points[index])
    out[index] = inside
    left = index[open_]
    if len(left):
        out[left] = np.abs(mesh_winding(triangles, points[left], fan)) >= 0.5
    return out


def _in_bounds(triangles: Array, points: Array) -> Array:
    flat = triangles.reshape(-1, 3)
    return np.all((points >= flat.min(axis=0)) & (points <= flat.max(axis=0)), axis=1)


# (point, triangle) pairs whose crossings are counted at once: about 12 arrays of 8 bytes each
CROSSING_PAIRS = 2_000_000
# (triangle, cell) entries listed at once: about 6 arrays of 8 bytes each
LISTED = 4_000_000

# A generic ray direction: no mesh edge of a real part is parallel to it.
_RAY_RAW = np.array([0.2718281828, 0.1414213562, 1.0])
_RAY = _RAY_RAW / np.linalg.norm(_RAY_RAW)
_RAY_U = np.cross(_RAY, [1.0, 0.0, 0.0])
_RAY_U /= np.linalg.norm(_RAY_U)
_RAY_V = np.cross(_RAY, _RAY_U)


def ray_winding(triangles: Array, points: Array, bins: int = 24) -> Array:
    """Winding number of a closed surface by signed crossings of one ray per point."""
    out = np.zeros(len(points))
    index = np.flatnonzero(_in_bounds(triangles, points))
    if len(index) == 0:
        return out
    basis = np.stack([_RAY_U, _RAY_V, _RAY])
    tri = triangles @ basis.T  # (T, 3, 3) in (u, v, along-ray)
    pts = points[index] @ basis.T
    lo = tri[:, :, :2].reshape(-1, 2).min(axis=0)
    span = np.maximum(tri[:, :, :2].reshape(-1, 2).max(axis=0) - lo, 1e-300)

    def cell(xy: Array) -> Array:
        return np.clip(((xy - lo) / span * bins).astype(int), 0, bins - 1)

    tlo, thi = cell(tri[:, :, :2].min(axis=1)), cell(tri[:, :, :2].max(axis=1))
    width = thi - tlo + 1
    count = width[:, 0] * width[:, 1]  # the cells each triangle's shadow's bounds touch
    pcell = cell(pts[:, :2])
    pkey = pcell[:, 0] * bins + pcell[:, 1]
    order = np.argsort(pkey, kind="stable")
    keys, starts = np.unique(pkey[order], return_index=True)
    ends = np.append(starts[1:], len(order))
    # the triangles some at a time, each listed under every cell it touches (a soup's closing
    # fan, long triangles to its apex, listed 32 M times at once: 2 GB); a point's crossings
    # are whole numbers, the same sum in any order
    total = np.cumsum(count)
    start = 0
    while start < len(tri):
        stop = int(np.searchsorted(total, total[start] - count[start] + LISTED, side="right"))
        stop = max(stop, start + 1)
        owner, tkey = _listed(slice(start, stop), tlo, width, count, bins)
        first, last = np.searchsorted(tkey, keys), np.searchsorted(tkey, keys, side="right")
        for s, e, f, g in zip(starts, ends, first, last, strict=True):
            if f == g:
                continue
            listed = tri[owner[f:g]]
            # some points at a time: the fan crowds every cell it crosses (34.5 M pairs in
            # one, 3.7 GB)
            step = max(1, CROSSING_PAIRS // len(listed))
            for part in range(s, e, step):
                sel = order[part : min(part + step, e)]
                out[index[sel]] += _crossings(listed, pts[sel])
        start = stop
    return out


def _listed(part: slice, tlo: Array, width: Array, count: Array, bins: int) -> tuple[Array, Array]:
    """The triangles of `part` listed under every cell their shadows' bounds touch, cell by
    cell, in triangle order (owner, cell key): a cell's triangles are found without testing
    every triangle."""
    c = count[part]
    owner = np.repeat(np.arange(len(count))[part], c)
    local = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
    across = np.repeat(width[part, 1], c)
    tkey = (np.repeat(tlo[part, 0], c) + local // across) * bins + (
        np.repeat(tlo[part, 1], c) + local % across
    )
    by_cell = np.argsort(tkey, kind="stable")
    return owner[by_cell], tkey[by_cell]


def _crossings(t: Array, q: Array) -> Array:
    a, b, c = t[None, :, 0], t[None, :, 1], t[None, :, 2]
    p = q[:, None, :]

    def orient(x: Array, y: Array) -> Array:
        return (x[..., 0] - p[..., 0]) * (y[..., 1] - p[..., 1]) - (x[..., 1] - p[..., 1]) * (
            y[..., 0] - p[..., 0]
        )

    w0, w1, w2 = orient(b, c), orient(c, a), orient(a, b)
    area = w0 + w1 + w2
    inside = ((w0 > 0) & (w1 > 0) & (w2 > 0)) | ((w0 < 0) & (w1 < 0) & (w2 < 0))
    safe = np.where(area == 0, 1.0, area)
    height = (w0 * a[..., 2] + w1 * b[..., 2] + w2 * c[..., 2]) / safe
    ahead = inside & (height > p[..., 2])
    return (ahead * np.sign(area)).sum(axis=1)
