"""The fitter (`fit.py`) on degenerate and extreme links: its memory stays bounded."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from pipeline.spheres.fit import FitParams, fit_link
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
