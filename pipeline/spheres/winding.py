"""Inside or outside a triangle mesh: winding numbers, exact for closed meshes, robust for open."""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def winding_number(triangles: Array, points: Array, chunk: int = 2_000_000) -> Array:
    """Generalised winding number of a triangle soup at each point (robust when not closed)."""
    out = np.zeros(len(points))
    index = np.flatnonzero(_in_bounds(triangles, points))
    step = max(1, chunk // max(1, len(triangles)))
    for start in range(0, len(index), step):
        sel = index[start : start + step]
        d = triangles[None, :, :, :] - points[sel, None, None, :]
        a, b, c = d[:, :, 0], d[:, :, 1], d[:, :, 2]
        la, lb, lc = (np.sqrt(np.einsum("ptk,ptk->pt", v, v)) for v in (a, b, c))
        det = np.einsum("ptk,ptk->pt", a, np.cross(b, c))
        dot = (
            la * lb * lc
            + np.einsum("ptk,ptk->pt", a, b) * lc
            + np.einsum("ptk,ptk->pt", b, c) * la
            + np.einsum("ptk,ptk->pt", c, a) * lb
        )
        out[sel] = np.arctan2(det, dot).sum(axis=1) / (2 * np.pi)
    return out


def _in_bounds(triangles: Array, points: Array) -> Array:
    flat = triangles.reshape(-1, 3)
    return np.all((points >= flat.min(axis=0)) & (points <= flat.max(axis=0)), axis=1)


def is_closed(triangles: Array) -> bool:
    """Every directed edge has exactly one opposite: a closed, consistently oriented surface."""
    _, ids = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    f = ids.reshape(-1, 3)
    edges = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    edges = edges[edges[:, 0] != edges[:, 1]]
    forward, count = np.unique(edges, axis=0, return_counts=True)
    if (count != 1).any():
        return False
    backward = np.unique(edges[:, ::-1], axis=0)
    return forward.shape == backward.shape and bool((forward == backward).all())


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
    pcell = cell(pts[:, :2])
    pkey = pcell[:, 0] * bins + pcell[:, 1]
    order = np.argsort(pkey, kind="stable")
    keys, starts = np.unique(pkey[order], return_index=True)
    ends = np.append(starts[1:], len(order))
    for key, s, e in zip(keys, starts, ends, strict=True):
        i, j = divmod(int(key), bins)
        hit = (tlo[:, 0] <= i) & (thi[:, 0] >= i) & (tlo[:, 1] <= j) & (thi[:, 1] >= j)
        t = tri[hit]
        sel = order[s:e]
        q = pts[sel]
        out[index[sel]] = _crossings(t, q)
    return out


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
