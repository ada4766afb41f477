"""The starter tells a wheel from a leg by its shape: a joint laid out as a wheel (a full turn,
nothing moving below, at most two moving joints below where the robot branches) is one only if
its link, with what is fixed below it, is round about the joint's axis where its collision
geometry is known. Before, the legs of example-robot-data's ANYmal, Solo, Solo12 and Bolt, whose
knees turn a full turn, were taken for wheels: no chain, and a comment calling them wheels."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh

from pipeline.cli import main
from pipeline.srdf.starter import starter, starter_source
from pipeline.srdf.wheels import ROUND, across, is_round
from pipeline.urdf import Mesh, parse_urdf
from tests.test_srdf_starter_chains import ENDLESS, _joint, _link, _robot_text

LEGS = ("fl", "fr", "hl", "hr")


def _collision(geometry: str, origin: str = "") -> str:
    return f"<collision>{origin}<geometry>{geometry}</geometry></collision>"


# the knee's axis is y, as a leg's pitch is; the shank hangs from its origin
SHANK = _collision('<box size="0.03 0.03 0.2"/>', '<origin xyz="0 0 -0.1"/>')
TYRE = _collision('<cylinder radius="0.1" length="0.04"/>', '<origin rpy="1.5708 0 0"/>')
ACROSS = _collision('<cylinder radius="0.1" length="0.04"/>')
BALL = _collision('<sphere radius="0.05"/>')
CUBE = _collision('<box size="0.1 0.1 0.1"/>')
HUB = _collision('<box size="0.1 0.04 0.1"/>')
MESH = _collision('<mesh filename="package://crafted/meshes/{}.stl"/>')


def _tyre_off(share: float) -> str:
    """A tyre of radius 0.1 whose centre is `share` of its radius off the axis."""
    return TYRE.replace("<origin ", f'<origin xyz="{0.1 * share} 0 0" ')


def _legs(shape: str, foot: str = "") -> str:
    """Four legs from base_link: a hip (+-1 rad), a knee of a full turn (axis y) whose link has
    `shape`, and a foot fixed below it with `foot`."""
    parts = []
    for leg in LEGS:
        hip, shank = f"{leg}_hip", f"{leg}_shank"
        parts += [_link(hip), _joint(f"{leg}_haa", "base_link", hip)]
        knee = _joint(f"{leg}_kfe", hip, shank, limits=ENDLESS).replace("0 0 1", "0 1 0")
        parts += [_link(shank, shape), knee]
        if foot:
            parts += [
                _link(f"{leg}_foot", foot),
                _joint(f"{leg}_ankle", shank, f"{leg}_foot", "fixed").replace(
                    "</joint>", '<origin xyz="0 0 -0.2"/></joint>'
                ),
            ]
    return "".join(parts)


def _prism(sides: int, radius: float = 0.1, offset: float = 0.0) -> np.ndarray:
    """The corners of a prism of `sides` sides around the y axis (a mesh wheel), `offset` off
    it along x."""
    angle = np.linspace(0.0, 2 * math.pi, sides, endpoint=False)
    ring = np.stack([radius * np.cos(angle) + offset, np.zeros(sides), radius * np.sin(angle)], 1)
    return np.concatenate([ring + np.array([0, -0.02, 0]), ring + np.array([0, 0.02, 0])])


SHANK_CORNERS = np.array(trimesh.creation.box((0.03, 0.03, 0.2)).vertices) + np.array([0, 0, -0.1])
WHEELS = [f"{leg}_{j}" for leg in LEGS for j in ("haa", "kfe")]
LEG = ("fl_shank", ["fl_haa", "fl_kfe"])  # before: tip None, every hip and knee a wheel
NONE = (None, [])
# (case, the knee link's collision, a foot's, the mesh's corners by name, the tip and home
# joints the starter gives; NONE: no chain, the legs left out as wheels)
CASES = [
    ("cylinder_wheel", TYRE, "", {}, NONE),
    ("sphere_caster", BALL, "", {}, NONE),
    ("box_shank", SHANK, "", {}, LEG),
    ("shank_to_a_ball_foot", "", BALL, {}, ("fl_foot", ["fl_haa", "fl_kfe"])),
    ("shank_and_foot", SHANK, BALL, {}, ("fl_foot", ["fl_haa", "fl_kfe"])),
    # a cylinder centred on the axis but across it (ANYmal C's shank, as long as a wheel is
    # wide, is one): its ends reach farther than its side
    ("cylinder_across_the_axis", ACROSS, "", {}, LEG),
    # a cube's corners reach 1.41 times as far as its sides' middles: a block, not a wheel
    ("cube_on_the_axis", CUBE, "", {}, LEG),
    ("box_hub_inside_a_tyre", TYRE + HUB, "", {}, NONE),
    ("tyre_5_percent_off_the_axis", _tyre_off(0.05), "", {}, NONE),
    ("tyre_20_percent_off_the_axis", _tyre_off(0.2), "", {}, LEG),
    # no collision geometry: the joints' layout alone tells (a wheel)
    ("no_collision_geometry", "", "", {}, NONE),
    ("mesh_wheel_of_12_sides", MESH.format("m"), "", {"m": _prism(12)}, NONE),
    ("mesh_wheel_of_6_sides", MESH.format("m"), "", {"m": _prism(6)}, NONE),
    ("mesh_square_prism", MESH.format("m"), "", {"m": _prism(4)}, LEG),
    ("mesh_shank", MESH.format("m"), "", {"m": SHANK_CORNERS}, LEG),
    ("mesh_off_the_axis", MESH.format("m"), "", {"m": _prism(12, offset=0.05)}, LEG),
    # a mesh the caller did not read: the layout tells, as without geometry
    ("mesh_not_read", MESH.format("m"), "", {}, NONE),
]


@pytest.mark.parametrize(
    ("case", "shape", "foot", "corners", "chain"), CASES, ids=[c[0] for c in CASES]
)
def test_a_wheel_is_round_about_its_axis_a_leg_is_not(
    case: str,
    shape: str,
    foot: str,
    corners: dict[str, np.ndarray],
    chain: tuple[str | None, list[str]],
) -> None:
    robot, findings = parse_urdf(
        _robot_text(_legs(shape, foot)).encode(), "crafted.urdf", "crafted"
    )
    assert not findings, findings
    meshes = {
        c.geometry: [corners[Path(c.geometry.path).stem]]
        for link in robot.links
        for c in link.collisions
        if isinstance(c.geometry, Mesh) and Path(c.geometry.path).stem in corners
    }
    plan = starter(robot, meshes)
    tip, home = chain
    assert (plan.tip, list(plan.home)) == (tip, home)
    assert plan.wheels == ([] if tip else WHEELS)
    text = starter_source(robot, "crafted", (), meshes)
    assert ("# Wheels" in text) == (tip is None)


@pytest.mark.parametrize(
    ("sides", "expected"), [(4, False), (5, False), (6, True), (8, True), (64, True)]
)
def test_round_is_a_polygon_of_six_sides_or_more(sides: int, expected: bool) -> None:
    """A regular polygon's reach from its centre is 1 / cos(pi / sides) times farther at its
    corners than at its sides' middles: 1.41 for a square, 1.24 for 5 sides, 1.15 for 6."""
    directions = across((0.0, 1.0, 0.0))
    reach = (_prism(sides) @ directions.T).max(axis=0)
    assert is_round(reach) == expected
    assert (1 / math.cos(math.pi / sides) <= ROUND) == expected


def _stl(path: Path, mesh: trimesh.Trimesh) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(mesh.export(file_type="stl"))


@pytest.mark.parametrize(
    ("case", "mesh", "tip"),
    [
        ("wheel", trimesh.creation.cylinder(0.1, 0.04, sections=32), None),
        ("shank", trimesh.creation.box((0.03, 0.03, 0.2)), "fl_shank"),
    ],
)
def test_pipeline_template_srdf_reads_the_knee_links_mesh(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: str,
    mesh: trimesh.Trimesh,
    tip: str | None,
) -> None:
    """The command reads the collision meshes of the joints laid out as wheels from the
    robot's meshes/ and passes their corners to the starter: a cylinder about the knee's axis
    is a wheel, a box hanging from it a shank."""
    if case == "wheel":
        mesh.apply_transform(trimesh.transformations.rotation_matrix(math.pi / 2, [1, 0, 0]))
    else:
        mesh.apply_translation([0, 0, -0.1])
    folder = repo / "robots" / "crafted"
    _stl(folder / "meshes" / "m.stl", mesh)
    (folder / "robot.urdf").write_text(_robot_text(_legs(MESH.format("m"))))
    monkeypatch.chdir(repo)
    assert main(["template", "srdf", "crafted"]) == 0
    out = capsys.readouterr().out
    assert f"TIP_LINK = {'None' if tip is None else repr(tip).replace(chr(39), chr(34))}\n" in out
    assert ("# Wheels" in out) == (tip is None)


@pytest.mark.parametrize(
    "shape",
    [
        '<box size="1e300 1e300 1e300"/>',
        '<cylinder radius="1e300" length="1e300"/>',
        '<mesh filename="package://crafted/meshes/m.stl" scale="1e300 1e300 1e300"/>',
    ],
    ids=["box", "cylinder", "mesh_scale"],
)
def test_pipeline_template_srdf_refuses_geometry_out_of_range_in_one_line(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], shape: str
) -> None:
    """A wheel of 1e300 m passes the URDF reader; the home pose's contact check overflowed on it
    and the command ended in scipy's traceback ('b_ub must not contain values inf'). It is told
    geometry_out_of_range, as pipeline validate tells it, exit status 2."""
    folder = repo / "robots" / "crafted"
    _stl(folder / "meshes" / "m.stl", trimesh.creation.box((0.1, 0.1, 0.1)))
    (folder / "robot.urdf").write_text(_robot_text(_legs(_collision(shape))))
    monkeypatch.chdir(repo)
    assert main(["template", "srdf", "crafted"]) == 2
    err = capsys.readouterr().err
    assert "geometry_out_of_range" in err and "Traceback" not in err, err


def test_a_mesh_wheels_reach_is_measured_in_bounded_memory() -> None:
    """Each corner's reach in every direction across the axis was one array: an 800,000-triangle
    wheel's 2.4 million corners, 1.4 GB (`pipeline template srdf`'s peak RSS 1.57 GB, 4.4 s for
    four such wheels); taken a block of corners at a time, a few megabytes."""
    import tracemalloc

    robot, findings = parse_urdf(
        _robot_text(_legs(MESH.format("m"))).encode(), "crafted.urdf", "crafted"
    )
    assert not findings, findings
    ring = _prism(12)
    corners = np.tile(ring, (40_000, 1))  # 960,000 corners, a wheel's
    meshes = {c.geometry: [corners] for link in robot.links for c in link.collisions}
    tracemalloc.start()
    try:
        plan = starter(robot, meshes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert plan.wheels == WHEELS
    assert peak < 100e6, f"{peak / 1e6:.0f} MB"
