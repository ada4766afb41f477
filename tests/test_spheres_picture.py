"""`pipeline spheres show` (picture.py): each link's drawing fills its panel and stays in it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from pipeline.spheres.picture import FILL, figure
from pipeline.urdf import load_robot

# a rod along each axis and each diagonal of its bounding cube: matplotlib's view draws a
# diagonal longest, and a fixed zoom that fills the panel with an axis-aligned rod cut it off
DIRECTIONS = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1), (1, -1, 1), (-1, 1, 1), (1, 1, -1)]
LENGTH, RADIUS = 1.0, 0.06


def _rod_robot(root: Path, direction: tuple[int, int, int]) -> tuple[Path, bytes]:
    """A one-link robot: a thin box along `direction`, and ten spheres along it."""
    axis = np.array(direction, dtype=float) / np.linalg.norm(direction)
    yaw, pitch = math.atan2(axis[1], axis[0]), -math.asin(axis[2])
    folder = root / "robots" / "rod"
    folder.mkdir(parents=True)
    (folder / "robot.urdf").write_text(
        f'<robot name="rod"><link name="a"><collision><origin rpy="0 {pitch} {yaw}"/>'
        f'<geometry><box size="{LENGTH} 0.04 0.04"/></geometry></collision></link>'
        '<link name="b"/><joint name="j" type="fixed"><parent link="a"/><child link="b"/>'
        "</joint></robot>"
    )
    centers = [list(t * axis) for t in np.linspace(-0.45, 0.45, 10) * LENGTH]
    return folder, _document("rod", [{"center": c, "radius": RADIUS} for c in centers])


def _document(model_id: str, spheres: list[dict[str, object]]) -> bytes:
    """spheres.json bytes holding `spheres` for link a, fitted by hand."""
    digest = "sha256:" + "0" * 64
    fitter = {"name": "hand", "version": "1"}
    document = {
        "schema": "rosie.robot-spheres.v1",
        "model_id": model_id,
        "made_from": {"files": {"robot.urdf": digest}, "fitter": fitter},
        "links": {
            "a": {
                "spheres": spheres,
                "provenance": {"geometry_sha256": digest, "fitter": fitter | {"parameters": {}}},
            }
        },
    }
    return json.dumps(document).encode()


@pytest.mark.parametrize("direction", DIRECTIONS, ids=[str(d) for d in DIRECTIONS])
def test_a_links_drawing_fills_its_panel_and_stays_in_it(
    tmp_path: Path, direction: tuple[int, int, int]
) -> None:
    folder, spheres = _rod_robot(tmp_path, direction)
    fig = figure(load_robot(folder, tmp_path), folder, spheres, "spheres.json")
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        pixels = np.asarray(fig.canvas.buffer_rgba())  # type: ignore[attr-defined]
        height = pixels.shape[0]
        ink = (pixels[..., :3] < 200).any(axis=-1)
        ax = fig.axes[0]
        for text in (ax.title, fig._suptitle):  # type: ignore[union-attr]
            box = text.get_window_extent(renderer)
            ink[height - math.ceil(box.y1) : height - math.floor(box.y0), :] = False
        panel = ax.get_window_extent(renderer)
        rows, cols = np.nonzero(ink)
        y = height - rows  # display y grows upward
        assert len(rows), "nothing drawn"
        assert cols.min() >= panel.x0 and cols.max() <= panel.x1, "drawn past the panel's side"
        assert y.min() >= panel.y0 and y.max() <= panel.y1, "drawn past the panel's top or bottom"
        spans = ((cols.max() - cols.min()) / panel.width, (y.max() - y.min()) / panel.height)
        assert max(spans) >= 0.8 * FILL, spans  # the default view left it at about half
    finally:
        plt.close(fig)


def _ball_robot(root: Path, count: int) -> tuple[Path, bytes]:
    """A one-link robot whose collision is one <sphere>, and `count` spheres fitted to it."""
    folder = root / "robots" / "ball"
    folder.mkdir(parents=True)
    (folder / "robot.urdf").write_text(
        '<robot name="ball"><link name="a"><collision><geometry><sphere radius="0.1"/>'
        '</geometry></collision></link><link name="b"/><joint name="j" type="fixed">'
        '<parent link="a"/><child link="b"/></joint></robot>'
    )
    return folder, _document("ball", [{"center": [0.0, 0.0, 0.0], "radius": 0.100002}] * count)


def _blue(fig: Figure) -> int:
    """How many pixels are drawn in the spheres' colour (tab:blue, blended or not)."""
    fig.canvas.draw()
    rgb = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)  # type: ignore[attr-defined]
    return int(((rgb[..., 2] - rgb[..., 0] > 30) & (rgb[..., 2] > rgb[..., 1])).sum())


def test_a_sphere_on_the_surface_it_covers_is_drawn_over_it(tmp_path: Path) -> None:
    """A <sphere> link's one fitted sphere lies on its surface (2 µm out): the wireframe is
    drawn over the grey surface, not hidden behind it, so the panel shows the fit."""
    folder, spheres = _ball_robot(tmp_path, 1)
    fig = figure(load_robot(folder, tmp_path), folder, spheres, "spheres.json")
    try:
        assert _blue(fig) > 1000  # 8 when sorted by depth, behind the surface
        assert fig.axes[0].get_title().startswith("a: 1 sphere\n")
    finally:
        plt.close(fig)
