"""The fitter (`fit.py`) on degenerate and extreme links: its memory stays bounded."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from pipeline.spheres.fit import QUANTUM, FitParams, fit_link, on_grid, rounded_up
from pipeline.spheres.geometry import load_link_geometry
from pipeline.spheres.prove import prove
from pipeline.urdf import load_robot
from tests.conftest import REPO

IIWA = "lbr_iiwa_14_r820"
LINK7_MESH = '<mesh filename="package://lbr_iiwa_14_r820/meshes/link_7.stl"/>'


@pytest.mark.parametrize("count", [16, 40], ids=["default_budget", "40_of_64"])
def test_sphere_primitives_exact_cover_grows_each_sphere_alone(tmp_path: Path, count: int) -> None:
    """A link of sphere primitives within its budget is its own cover; its proof once held
    (pieces x spheres) gaps: 760 MB for 16 spheres, a MemoryError (3.3 GB) for 40 of 64."""
    folder = tmp_path / "robots" / IIWA
    shutil.copytree(REPO / "robots" / IIWA, folder)
    urdf = folder / "robot.urdf"
    elements = "".join(
        f'<collision><origin xyz="{i * 0.01} 0 0"/><geometry><sphere radius="0.001"/>'
        "</geometry></collision>"
        for i in range(count)
    )
    text = urdf.read_text()
    head, tail = text.split('<link name="link_7">', 1)
    _, rest = tail.split("</link>", 1)
    urdf.write_text(f'{head}<link name="link_7">{elements}</link>{rest}')
    robot = load_robot(folder, tmp_path)
    link = robot.link("link_7")
    assert link is not None
    geometry = load_link_geometry(link, folder, f"robots/{IIWA}")
    tracemalloc.start()
    try:
        centers, radii = fit_link(geometry, FitParams(max_spheres=64))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20
    assert np.allclose(centers, [[i * 0.01, 0, 0] for i in range(count)], atol=1e-9)
    assert np.all(radii >= 0.001) and np.all(radii <= 0.001 * 1.0005 + 2e-6)
    assert prove(geometry, centers, radii).proven


def test_radius_rounding_is_upward_so_coverage_survives() -> None:
    """DESIGN.md: a rounding of a radius is upward, so that coverage survives it. Radii are
    rounded once proven (centres before), to whole quanta at least one quantum clear."""
    radii = np.array([1e-9, 0.001, 0.25, 0.1 + 0.2, 0.3, 1.0, 2.5e-6, 123.456789123])
    rounded = rounded_up(radii)
    assert np.all(rounded > radii)
    assert np.all(rounded - radii <= 2 * QUANTUM * (1 + 1e-9) + np.spacing(radii) * 4)
    assert np.allclose(rounded / QUANTUM, np.round(rounded / QUANTUM), rtol=0, atol=1e-6)
    centers = np.array([[0.1 + 0.2, -0.49999949, 1e-7]])
    assert np.array_equal(on_grid(centers), np.round(centers / QUANTUM) * QUANTUM)
