"""Rows of points sorted and each kept once, as np.unique(axis=0) sorts them, several times
faster: a link's surface points, its corners for the enclosing ball, a mesh part's corners for
its hull."""

from __future__ import annotations

import numpy as np

Array = np.ndarray


def sorted_rows(points: Array) -> Array:
    """The rows (n, k) sorted by their first column, then the next, each once: of rows equal as
    numbers (0.0 and -0.0 are), the first in the points' order (the sort is stable)."""
    if not len(points):
        return points
    points = points.take(np.lexsort(points.T[::-1]), axis=0)
    # column by column: the same rows as np.any(... , axis=1), several times faster
    new = points[1:, 0] != points[:-1, 0]
    for column in range(1, points.shape[1]):
        new |= points[1:, column] != points[:-1, column]
    return points.compress(np.r_[True, new], axis=0)


def negative_zero(points: Array) -> bool:
    """Whether any number of `points` is -0.0: then which of a row given with 0.0 and with -0.0
    sorted_rows keeps depends on the points' order."""
    return bool((np.signbit(points) & (points == 0)).any())
