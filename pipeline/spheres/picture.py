"""A picture of a robot's spheres: each link's collision surface with its spheres (headless)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d import proj3d
from mpl_toolkits.mplot3d.art3d import Poly3DCollection
from mpl_toolkits.mplot3d.axes3d import Axes3D

from pipeline.findings import ContractError, Finding, raise_if_errors
from pipeline.spheres.document import read_document, spheres_of
from pipeline.spheres.geometry import Array, collision_links, load_link_geometry
from pipeline.spheres.provenance import folder_display
from pipeline.urdf import Robot

FILL = 0.92  # share of its panel a link's drawing spans, in the direction it is widest


def fill_panel(ax: Axes3D, points: Array) -> None:
    """Zoom the panel's view so the drawn `points` span FILL of it and none leaves it.

    matplotlib's default view fits the whole bounding cube, corners and all, so a link spans
    about half its panel's width; a fixed zoom cuts off a rod lying along the cube's diagonal.
    The projection grows with the zoom a little unevenly (perspective): a few rounds settle it.
    """
    box = ax.viewLim
    zoom = 1.0
    for _ in range(4):
        ax.set_box_aspect((1, 1, 1), zoom=zoom)
        x, y, _ = proj3d.proj_transform(points[:, 0], points[:, 1], points[:, 2], ax.get_proj())
        reach = max(x.max() / box.x1, x.min() / box.x0, y.max() / box.y1, y.min() / box.y0)
        if not reach > 0:  # nothing drawn off the panel's centre: nothing to fit
            return
        zoom *= FILL / reach
    ax.set_box_aspect((1, 1, 1), zoom=zoom)


def lay_out(fig: Figure, rows: int, title: str) -> None:
    """Put `title` in its own strip (half an inch) above `rows` 4-inch rows of panels."""
    top = 0.5 / (4 * rows)
    # in the middle of the strip: matplotlib's default place (2 % of the height from the top)
    # falls into the first row's panel titles once a figure has more than five rows
    fig.suptitle(title, y=1.0 - top / 2, va="center")
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - top))


def draw(
    robot: Robot,
    robot_folder: Path,
    spheres_bytes: bytes,
    display: str,
    only: Sequence[str] = (),
) -> bytes:
    """PNG bytes: one panel per collision link (or per link of `only`), surface in grey,
    spheres as wireframes."""
    fig = figure(robot, robot_folder, spheres_bytes, display, only)
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    plt.close(fig)
    return out.getvalue()


def figure(
    robot: Robot, robot_folder: Path, spheres_bytes: bytes, display: str, only: Sequence[str] = ()
) -> Figure:
    """The figure `draw` saves: one 3D panel per collision link (those of `only`, if given), in
    the links' order."""
    document = read_document(spheres_bytes, display, robot.name)
    links = collision_links(robot)
    urdf = f"{folder_display(robot)}/robot.urdf"
    if not links:
        message = "no link has a <collision> element: there is nothing to draw"
        hint = "add <collision> geometry to the links the planner must keep clear"
        raise ContractError([Finding("no_collision_geometry", urdf, "", message, hint)])
    if only:
        named = [link.name for link in links]
        raise_if_errors(_unknown_links(only, named, {link.name for link in robot.links}, urdf))
        links = [link for link in links if link.name in only]
    cols = min(4, len(links))
    rows = math.ceil(len(links) / cols)
    fig = plt.figure(figsize=(4 * cols, 4 * rows), dpi=80)
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 16), np.linspace(0, np.pi, 9))
    unit = np.stack([np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)], axis=-1)
    for index, link in enumerate(links, start=1):
        ax = fig.add_subplot(rows, cols, index, projection="3d")
        # drawn in the order added, spheres last: by depth, a sphere lying on the surface it
        # covers (a <sphere> link's, 2 µm out) sorts behind it and is not seen at all
        ax.computed_zorder = False
        geometry = load_link_geometry(link, robot_folder, folder_display(robot))
        lo, hi = geometry.bounds()
        size = float(np.linalg.norm(hi - lo)) / 12  # curved pieces drawn finer than fitted
        drawn = []
        for patches in geometry.patches:
            outline = (patches if patches.kind == "flat" else patches.refine(size)).outline()
            drawn.append(outline.reshape(-1, 3))
            ax.add_collection3d(
                Poly3DCollection(
                    outline, facecolor="0.6", edgecolor="0.4", linewidth=0.1, alpha=0.5
                )
            )
        entry = document["links"].get(link.name)
        if entry is not None:
            centers, radii = spheres_of(entry)
            for c, r in zip(centers, radii, strict=True):
                s = c + r * unit
                drawn.append(s.reshape(-1, 3))
                ax.plot_wireframe(
                    s[..., 0], s[..., 1], s[..., 2], color="tab:blue", lw=0.3, alpha=0.6, zorder=3
                )
            lo = (centers - radii[:, None]).min(axis=0)
            hi = (centers + radii[:, None]).max(axis=0)
        else:
            lo, hi = geometry.bounds()
        mid, half = (lo + hi) / 2, float((hi - lo).max()) / 2
        ax.set_xlim(mid[0] - half, mid[0] + half)
        ax.set_ylim(mid[1] - half, mid[1] + half)
        ax.set_zlim(mid[2] - half, mid[2] + half)
        fill_panel(ax, np.concatenate(drawn))
        count = 0 if entry is None else len(entry["spheres"])
        # the axes are hidden, so the panel's width in metres stands in for a scale bar
        noun = "sphere" if count == 1 else "spheres"
        ax.set_title(f"{link.name}: {count} {noun}\n{2 * half:.3g} m across", fontsize=9)
        ax.set_axis_off()
    lay_out(fig, rows, f"{robot.name}: collision geometry and spheres")
    return fig


def _unknown_links(
    names: Sequence[str], known: list[str], in_urdf: set[str], urdf: str
) -> list[Finding]:
    """A finding per name that is no link with collision geometry: a link of the URDF without
    any (told so, as the settings file's unknown_link is), or no link, with the closest one."""
    from pipeline.findings import listed_and_closest

    out = []
    for name in dict.fromkeys(names):
        if name in known:
            continue
        listed, close = listed_and_closest(name, known)
        if name in in_urdf:
            message = f"--link {name!r} has no collision geometry in the URDF, so no spheres"
            hint = f"name a link that has: {listed}"
        else:
            message = (
                f"--link {name!r} is not in the URDF (the links with collision geometry: {listed})"
            )
            hint = f"did you mean --link {close}?" if close else "name one of those links"
        out.append(Finding("unknown_link", urdf, "", message, hint))
    return out
