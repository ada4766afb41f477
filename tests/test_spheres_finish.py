"""The fitter's finish: the hole samples after the polish."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pipeline.spheres.adam import Problem, adam, distances
from pipeline.spheres.finish import missed_points, polished
from pipeline.spheres.fit import FitParams, _cover_radii, sample_problem, start_centers
from pipeline.spheres.geometry import Array, LinkGeometry
from tests.test_spheres_ball import shipped_link


def _missed(points: Array, spheres: tuple[Array, Array]) -> Array:
    centers, radii = spheres
    return ~(distances(points, centers) <= radii[None, :]).any(axis=1)


def _start() -> tuple[LinkGeometry, Problem, FitParams, Array, Array]:
    """abb's link_6 after a short optimisation, its dense samples and its fine points."""
    geometry = shipped_link("link_6", "abb_irb2400")
    params = FitParams(rounds=4, grid_points=6000)
    problem = sample_problem(geometry, params)
    centers, pinned = start_centers(geometry, problem, params.max_spheres, params)
    x = np.concatenate([centers.ravel(), _cover_radii(problem.surface, centers)])
    scale = problem.scale
    rate, reach = params.learning_rate * scale, params.reach * scale
    x = adam(problem, x, params.schedule(), params.iterations, rate, reach, (1.0, 0.02), pinned)
    dense = geometry.surface_points(scale / params.harden_divisions)
    fine = geometry.surface_points(scale / params.hole_divisions)
    return geometry, replace(problem, surface=dense), params, x, fine


def test_the_hole_samples_cover_the_fine_points_the_first_polish_missed() -> None:
    geometry, problem, params, x, fine = _start()
    first = polished(geometry, problem, replace(params, hole_rounds=0), x)
    holes = _missed(fine, first)
    assert holes.sum() > 0  # the polish alone leaves fine points out (the proof grows over them)
    for rounds in (1, 2):
        spheres = polished(geometry, problem, replace(params, hole_rounds=rounds), x)
        assert not _missed(fine[holes], spheres).any()
        assert not _missed(problem.surface, spheres).any()  # the dense samples stay covered
        assert len(spheres[1]) <= params.max_spheres
    # the points missed, found without refining the flat patches one sphere holds, are those
    # of every fine point, in their order
    size = problem.scale / params.hole_divisions
    assert np.array_equal(missed_points(geometry, size, *first), fine[holes])
    shrunk = first[0], first[1] * 0.9
    assert np.array_equal(missed_points(geometry, size, *shrunk), fine[_missed(fine, shrunk)])
