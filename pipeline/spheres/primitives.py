"""A second start for links made only of boxes, cylinders and spheres: each box and cylinder
cut into cells, one sphere round each cell; each sphere its own.

The fitter's k-means start puts centres on the surface, and the descent from there keeps
spheres that reach across a box's edges or a cylinder's rims; the circumscribed spheres of a
box's equal cells, or of a cylinder's slices along its axis, leave less outside. The budget is
shared between the elements greedily, by the outside grid points each extra sphere removes
from the union.
"""

from __future__ import annotations

import itertools

import numpy as np

from pipeline.spheres.geometry import Array, LinkGeometry

# An option of one box: (sphere count, centres in the link frame, radius).
_Option = tuple[int, Array, float]


def _cuts(half: Array, frame_apply: object, budget: int) -> list[_Option]:
    """For each sphere count up to `budget`, the a x b x c cut with the smallest cells."""
    size = 2 * half
    best: dict[int, tuple[float, tuple[int, int, int]]] = {}
    for a, b, c in itertools.product(range(1, budget + 1), repeat=3):
        count = a * b * c
        if count > budget:
            continue
        radius = float(np.linalg.norm(size / (a, b, c))) / 2
        if count not in best or radius < best[count][0]:
            best[count] = (radius, (a, b, c))
    options = []
    for count in sorted(best):
        radius, shape = best[count]
        cell = size / np.array(shape)
        index = np.array(list(itertools.product(*(range(n) for n in shape))), dtype=float)
        local = -half + cell * (index + 0.5)
        options.append((count, frame_apply(local), radius))  # type: ignore[operator]
    return options


def cells_start(geometry: LinkGeometry, outside: Array, budget: int) -> tuple[Array, Array] | None:
    """Spheres round cells of each box and cylinder, and each sphere's own; None unless the
    link is only those, at least one box or cylinder.

    Every element starts as one cell; then, while the budget allows, the box or cylinder whose
    next cut removes the most outside grid points per extra sphere is cut finer. A sphere is
    never cut: its own sphere holds it with nothing outside (a capsule's end caps: on 30 of the
    35 links of dual_panda and frankie the excess fell 67-92 % from fitter version 17's).
    """
    solids = geometry.solids
    kinds = {s.kind for s in solids}
    boxes_and_cylinders = {"box", "cylinder"}
    if len(solids) > budget or not kinds & boxes_and_cylinders:
        return None  # spheres alone are their own exact cover (`fit.exact_spheres`)
    if not kinds <= boxes_and_cylinders | {"sphere"}:
        return None
    per_box = [
        [(1, s.frame.apply(np.zeros((1, 3))), float(s.size[0]))]
        if s.kind == "sphere"
        else (_cuts if s.kind == "box" else _slices)(s.size, s.frame.apply, budget)
        for s in solids
    ]
    masks = [
        [_holds(outside, centers, radius) for _, centers, radius in options] for options in per_box
    ]
    choice = [0] * len(solids)

    def cost(chosen: list[int]) -> int:
        union = np.zeros(len(outside), dtype=bool)
        for box, option in enumerate(chosen):
            union |= masks[box][option]
        return int(np.count_nonzero(union))

    current, used = cost(choice), len(solids)
    while True:
        best: tuple[float, list[int], int, int] | None = None
        for box, options in enumerate(per_box):
            for option in range(choice[box] + 1, len(options)):
                extra = options[option][0] - options[choice[box]][0]
                if used + extra > budget:
                    break
                trial = [*choice[:box], option, *choice[box + 1 :]]
                trial_cost = cost(trial)
                gain = (current - trial_cost) / extra
                if gain > 0 and (best is None or gain > best[0]):
                    best = (gain, trial, trial_cost, extra)
        if best is None:
            break
        _, choice, current, extra = best
        used += extra
    centers = np.concatenate([per_box[b][o][1] for b, o in enumerate(choice)])
    radii = np.concatenate(
        [np.full(per_box[b][o][0], per_box[b][o][2]) for b, o in enumerate(choice)]
    )
    return centers, radii


def _holds(points: Array, centers: Array, radius: float) -> Array:
    """Which points lie in any of the spheres of one radius about the centres."""
    inside = np.zeros(len(points), dtype=bool)
    for center in centers:
        d = points - center
        inside |= np.einsum("ij,ij->i", d, d) <= radius * radius
    return inside


def _slices(size: Array, frame_apply: object, budget: int) -> list[_Option]:
    """A cylinder cut into n slices along its axis, one sphere round each slice."""
    radius, half = float(size[0]), float(size[1])
    options = []
    for count in range(1, budget + 1):
        step = 2 * half / count
        z = -half + step * (np.arange(count) + 0.5)
        local = np.stack([np.zeros(count), np.zeros(count), z], axis=1)
        sphere = float(np.hypot(radius, step / 2))
        options.append((count, frame_apply(local), sphere))  # type: ignore[operator]
    return options
