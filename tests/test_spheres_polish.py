"""The hard polish of a sphere cover: it keeps every sample covered and only lowers the excess."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pipeline.spheres.geometry import Array
from pipeline.spheres.polish import _Cover, _split, polish

HALF = np.array([0.2, 0.05, 0.05])  # a bar 0.4 x 0.1 x 0.1 m about the origin


def _bar_samples(step: float = 0.01) -> Array:
    axes = [np.arange(-h, h + step / 2, step) for h in HALF]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    on_face = (np.abs(np.abs(grid) - HALF) < 1e-12).any(axis=1)
    return grid[on_face]


def _outside(step: float = 0.008) -> Array:
    axes = [np.arange(-h - 0.1 + step * 0.41, h + 0.1, step) for h in HALF]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    return grid[(np.abs(grid) > HALF).any(axis=1)]


def _covered(samples: Array, centers: Array, radii: Array) -> bool:
    dist = np.linalg.norm(samples[:, None, :] - centers[None, :, :], axis=2)
    return bool((dist <= radii[None, :] + 1e-12).any(axis=1).all())


def _excess(outside: Array, centers: Array, radii: Array) -> int:
    dist = np.linalg.norm(outside[:, None, :] - centers[None, :, :], axis=2)
    return int((dist <= radii[None, :]).any(axis=1).sum())


def _loose_cover(samples: Array, k: int) -> tuple[Array, Array]:
    """k centres along the bar, a little off its axis, each radius covering its slice."""
    edges = np.linspace(-HALF[0], HALF[0], k + 1)
    centers = np.stack([(edges[:-1] + edges[1:]) / 2, np.full(k, 0.01), np.full(k, -0.01)], 1)
    label = np.clip(np.searchsorted(edges, samples[:, 0], side="right") - 1, 0, k - 1)
    radii = np.zeros(k)
    np.maximum.at(radii, label, np.linalg.norm(samples - centers[label], axis=1))
    return centers, radii * 1.05


def test_polish_keeps_every_sample_covered_and_lowers_the_excess() -> None:
    samples, outside = _bar_samples(), _outside()
    centers, radii = _loose_cover(samples, 4)
    assert _covered(samples, centers, radii)
    new_centers, new_radii = polish(samples, outside, centers, radii, 0.004, max_spheres=4)
    assert len(new_radii) <= 4
    assert _covered(samples, new_centers, new_radii)
    assert _excess(outside, new_centers, new_radii) < 0.8 * _excess(outside, centers, radii)


def test_polish_spends_unused_budget_on_splits_only_when_they_pay() -> None:
    samples, outside = _bar_samples(), _outside()
    centers, radii = _loose_cover(samples, 2)
    kept = polish(samples, outside, centers, radii, 0.004, max_spheres=2)
    split = polish(samples, outside, centers, radii, 0.004, max_spheres=6)
    assert len(kept[1]) <= 2 < len(split[1]) <= 6
    assert _covered(samples, *split)
    assert _excess(outside, *split) < _excess(outside, *kept)


def test_polish_is_deterministic() -> None:
    samples, outside = _bar_samples(), _outside()
    centers, radii = _loose_cover(samples, 3)
    first = polish(samples, outside, centers, radii, 0.004, max_spheres=5)
    second = polish(samples, outside, centers, radii, 0.004, max_spheres=5)
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])


def test_polish_does_not_depend_on_the_sign_lapack_gives_a_singular_vector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A split's axis comes from an SVD, whose singular vectors have no defined sign: LAPACK
    builds (OpenBLAS, MKL, Accelerate) may return either, and the fitted spheres must not
    change bytes with the machine's linear algebra library."""
    samples, outside = _bar_samples(), _outside()
    centers, radii = _loose_cover(samples, 2)
    first = polish(samples, outside, centers, radii, 0.004, max_spheres=6)
    svd = np.linalg.svd

    def flipped(a: Array, *args: Any, **kwargs: Any) -> Any:
        u, s, vt = svd(a, *args, **kwargs)
        return -u, s, -vt

    monkeypatch.setattr(np.linalg, "svd", flipped)
    second = polish(samples, outside, centers, radii, 0.004, max_spheres=6)
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])


def test_a_split_centres_its_spheres_inside_the_solid_under_a_patch_of_a_face() -> None:
    """The samples one sphere alone holds are often a patch of one face: a half's smallest ball
    is centred on that face with half of it outside (fitter version 12's split); the split
    centres each half's sphere inside the solid, on the way from the parent's centre."""
    # a 0.2 x 0.1 m patch of the face z = 0 of a solid below it, held by one sphere 0.3 m down
    xs, ys = np.meshgrid(np.linspace(-0.1, 0.1, 21), np.linspace(-0.05, 0.05, 11))
    samples = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)], axis=1)
    axes = [np.arange(a, b, 0.01) + 0.0041 for a, b in ((-0.2, 0.2), (-0.15, 0.15), (0.0, 0.2))]
    outside = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    parent = np.array([[0.0, 0.0, -0.3]])
    cover = _Cover(
        samples, outside, parent, np.linalg.norm(samples - parent, axis=1).max(keepdims=True)
    )
    split = _split(cover, 0)
    assert split is not None and len(split.radii) == 2
    assert (split.sample_count >= 1).all()  # every sample still covered
    assert (split.centers[:, 2] < 0).all()  # inside the solid
    # each half's smallest ball: centred on the face, its radius half the half-patch's diagonal
    smallest = _Cover(
        samples, outside, np.array([[-0.05, 0, 0], [0.05, 0, 0]]), np.full(2, 0.05 * 2**0.5)
    )
    assert (smallest.sample_count >= 1).all()
    assert split.cost() < smallest.cost()
