"""contacts.py: links whose collision geometry overlaps at a joint configuration, as a planner
(Tesseract, each mesh as its convex hull) collides them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import trimesh

from pipeline.contacts import (
    PROGRAMME_BUDGET,
    Budget,
    contacts,
    link_poses,
    link_solids,
    static_links,
)
from pipeline.findings import ContractError
from pipeline.meshsplit import hull_parts
from pipeline.urdf import Mesh, Robot, load_robot
from tests.meshfiles import LONE_POINT, PARTED, WITH_LIBRARY

REPO = Path(__file__).resolve().parents[1]
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def _robot(
    tmp_path: Path, body: str, meshes: dict[str, trimesh.Trimesh | str] | None = None
) -> Robot:
    """A robot `pair` of a base_link with a box and link_1 (under joint_1, revolute about z)
    holding `body`'s collision geometry, with `meshes` (or their text) in its meshes/."""
    folder = tmp_path / "robots" / "pair"
    (folder / "meshes").mkdir(parents=True)
    for name, mesh in (meshes or {}).items():
        if isinstance(mesh, str):
            (folder / "meshes" / name).write_text(mesh)
        else:
            mesh.export(folder / "meshes" / name)
    (folder / "robot.urdf").write_text(
        '<?xml version="1.0"?>\n<robot name="pair">\n'
        '  <link name="base_link"><collision><geometry><box size="0.2 0.2 0.2"/></geometry>'
        "</collision></link>\n"
        f'  <link name="link_1">{body}</link>\n'
        '  <joint name="joint_1" type="revolute"><parent link="base_link"/>'
        f'<child link="link_1"/><axis xyz="0 0 1"/>{LIMIT}</joint>\n</robot>\n'
    )
    return load_robot(folder, tmp_path)


def _pairs(
    robot: Robot, folder: Path, values: dict[str, float] | None = None
) -> list[tuple[str, str]]:
    found = contacts(link_solids(robot, folder, "robot"), link_poses(robot, values or {}))
    return [(c.link1, c.link2) for c in found]


def _collision(geometry: str, xyz: tuple[float, float, float]) -> str:
    x, y, z = xyz
    return (
        f'<collision><origin xyz="{x!r} {y!r} {z!r}"/><geometry>{geometry}</geometry></collision>'
    )


@pytest.mark.parametrize(
    ("geometry", "distance", "touching"),
    [
        # base_link's box reaches 0.1 along x: a box of half size 0.05 centred at 0.15 touches it
        ('<box size="0.1 0.1 0.1"/>', 0.16, False),
        ('<box size="0.1 0.1 0.1"/>', 0.15, True),  # face to face: a touch is a contact
        ('<box size="0.1 0.1 0.1"/>', 0.12, True),
        # a sphere's and a cylinder's tangent planes stand at most 0.46 % out (a gap of 1 %)
        ('<sphere radius="0.1"/>', 0.201, False),
        ('<sphere radius="0.1"/>', 0.199, True),
        ('<cylinder radius="0.1" length="0.1"/>', 0.201, False),
        ('<cylinder radius="0.1" length="0.1"/>', 0.199, True),
    ],
)
def test_primitives_touch_when_they_meet(
    tmp_path: Path, geometry: str, distance: float, touching: bool
) -> None:
    robot = _robot(tmp_path, _collision(geometry, (distance, 0.0, 0.0)))
    pairs = _pairs(robot, tmp_path / "robots" / "pair")
    assert pairs == ([("base_link", "link_1")] if touching else [])


def test_a_sphere_off_a_box_corner_touches_only_within_its_radius(tmp_path: Path) -> None:
    """Diagonally off the corner (0.1, 0.1, 0.1), where the box's faces do not reach."""
    away = 0.1 + 0.1 / math.sqrt(3)
    for scale, touching in ((1.01, False), (0.99, True)):
        centre = 0.1 + (away - 0.1) * scale
        robot = _robot(tmp_path / str(scale), _collision('<sphere radius="0.1"/>', (centre,) * 3))
        assert _pairs(robot, tmp_path / str(scale) / "robots" / "pair") == (
            [("base_link", "link_1")] if touching else []
        )


def _u_shape() -> trimesh.Trimesh:
    """Two posts and a bridge over them: a notch 0.2 wide and 0.3 high between the posts."""
    posts = [
        trimesh.creation.box(extents=[0.1, 0.1, 0.3]).apply_translation([x, 0.0, 0.15])
        for x in (-0.15, 0.15)
    ]
    bridge = trimesh.creation.box(extents=[0.4, 0.1, 0.1]).apply_translation([0.0, 0.0, 0.35])
    return trimesh.util.concatenate([*posts, bridge])


@pytest.mark.parametrize(("xyz", "touching"), [((0.0, 0.0, 0.5), True), ((0.0, 0.2, 0.5), False)])
def test_a_part_in_a_mesh_notch_touches_it_as_the_planner_collides_it(
    tmp_path: Path, xyz: tuple[float, float, float], touching: bool
) -> None:
    """link_1's U lies above the base (0.2 up); a box in the notch touches no triangle of it,
    but lies inside its convex hull, which is what Tesseract collides; beside it, nothing."""
    mesh = '<mesh filename="package://pair/meshes/u.stl"/>'
    body = _collision(mesh, (0.0, 0.0, 0.2)) + _collision('<box size="0.05 0.05 0.05"/>', xyz)
    robot = _robot(tmp_path, body, {"u.stl": _u_shape()})
    # link_1 holds both: the box touches the U only as another link would; split them
    folder = tmp_path / "robots" / "pair"
    solids = link_solids(robot, folder, "robot")
    u, box = solids["link_1"]
    placed = link_poses(robot, {})
    found = contacts({"u": [u], "box": [box]}, {"u": placed["link_1"], "box": placed["link_1"]})
    assert [(c.link1, c.link2) for c in found] == ([("u", "box")] if touching else [])


def test_allowed_pairs_are_skipped_in_either_order(tmp_path: Path) -> None:
    robot = _robot(tmp_path, _collision('<box size="0.1 0.1 0.1"/>', (0.12, 0.0, 0.0)))
    folder = tmp_path / "robots" / "pair"
    solids, poses = link_solids(robot, folder, "robot"), link_poses(robot, {})
    for allowed in ([("base_link", "link_1")], [("link_1", "base_link")]):
        assert contacts(solids, poses, allowed) == []


def test_the_point_found_lies_in_both_links(tmp_path: Path) -> None:
    robot = _robot(tmp_path, _collision('<box size="0.1 0.1 0.1"/>', (0.12, 0.0, 0.0)))
    (found,) = contacts(
        link_solids(robot, tmp_path / "robots" / "pair", "robot"), link_poses(robot, {})
    )
    x, y, z = found.point
    assert 0.07 - 1e-9 <= x <= 0.1 + 1e-9 and abs(y) <= 0.05 and abs(z) <= 0.05


MIMIC = """<?xml version="1.0"?>
<robot name="slide">
  <link name="base_link"/>
  <link name="carriage"/>
  <link name="finger"/>
  <joint name="track" type="prismatic"><parent link="base_link"/><child link="carriage"/>
    <origin xyz="1 0 0"/><axis xyz="0 0 -1"/>
    <limit lower="0.2" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="finger_joint" type="revolute"><parent link="carriage"/><child link="finger"/>
    <origin xyz="0 0.5 0"/><axis xyz="0 0 1"/>{limit}
    <mimic joint="track" multiplier="2" offset="0.1"/></joint>
</robot>
"""


def test_poses_follow_limits_and_mimic_joints(tmp_path: Path) -> None:
    """A prismatic joint whose limits exclude 0 stands at its nearest limit; a mimic joint
    follows it (2 * 0.2 + 0.1 = 0.5 rad)."""
    folder = tmp_path / "robots" / "slide"
    folder.mkdir(parents=True)
    (folder / "robot.urdf").write_text(MIMIC.format(limit=LIMIT))
    poses = link_poses(load_robot(folder, tmp_path), {})
    assert np.allclose(poses["carriage"][:3, 3], [1.0, 0.0, -0.2])
    finger = poses["finger"]
    assert np.allclose(finger[:3, 3], [1.0, 0.5, -0.2])
    assert np.isclose(math.atan2(finger[1, 0], finger[0, 0]), 0.5)
    # set within its limits, the joint is where it was set
    assert np.allclose(
        link_poses(load_robot(folder, tmp_path), {"track": 0.3})["carriage"][:3, 3],
        [1.0, 0.0, -0.3],
    )


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        # every pair joined by a joint touches at zero, as collision meshes of arms do, and
        # link_6's hull reaches into link_4's (ROS-Industrial allows that pair as "Default")
        (
            "abb_irb2400",
            [
                ("base_link", "link_1"),
                ("link_1", "link_2"),
                ("link_2", "link_3"),
                ("link_3", "link_4"),
                ("link_4", "link_5"),
                ("link_4", "link_6"),
                ("link_5", "link_6"),
            ],
        ),
        (
            "lbr_iiwa_14_r820",
            [("base_link", "link_1"), *((f"link_{i}", f"link_{i + 1}") for i in range(1, 7))],
        ),
    ],
)
def test_the_shipped_robots_at_zero(model_id: str, expected: list[tuple[str, str]]) -> None:
    folder = REPO / "robots" / model_id
    robot = load_robot(folder, REPO)
    assert sorted(_pairs(robot, folder)) == sorted(expected)


@pytest.mark.parametrize(
    ("triangles", "touching"),
    [
        # a flat square through the base's box, and beside it: qhull's hull of a plane, joggled
        (
            [
                [[0.05, -0.1, -0.1], [0.05, 0.1, -0.1], [0.05, 0.1, 0.1]],
                [[0.05, -0.1, -0.1], [0.05, 0.1, 0.1], [0.05, -0.1, 0.1]],
            ],
            True,
        ),
        (
            [
                [[0.3, -0.1, -0.1], [0.3, 0.1, -0.1], [0.3, 0.1, 0.1]],
                [[0.3, -0.1, -0.1], [0.3, 0.1, 0.1], [0.3, -0.1, 0.1]],
            ],
            False,
        ),
        # one triangle: too few corners for a hull, grown by a micrometre
        ([[[0.05, 0.0, 0.0], [0.3, 0.0, 0.0], [0.3, 0.05, 0.0]]], True),
        ([[[0.15, 0.0, 0.0], [0.3, 0.0, 0.0], [0.3, 0.05, 0.0]]], False),
    ],
)
def test_flat_meshes_touch_what_they_cross(
    tmp_path: Path, triangles: list[list[list[float]]], touching: bool
) -> None:
    mesh = trimesh.Trimesh(**trimesh.triangles.to_kwargs(np.array(triangles)))
    body = _collision('<mesh filename="package://pair/meshes/flat.stl"/>', (0.0, 0.0, 0.0))
    robot = _robot(tmp_path, body, {"flat.stl": mesh})
    pairs = _pairs(robot, tmp_path / "robots" / "pair")
    assert pairs == ([("base_link", "link_1")] if touching else [])


STATIC = """<?xml version="1.0"?>
<robot name="bench">
  <link name="table"><collision><geometry><box size="1 1 0.1"/></geometry></collision></link>
  <link name="fixture"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="arm"><collision><geometry><box size="0.1 0.1 0.4"/></geometry></collision></link>
  <link name="camera"><collision><geometry><box size="0.05 0.05 0.05"/></geometry></collision>
  </link>
  <joint name="table-fixture" type="fixed"><parent link="table"/><child link="fixture"/></joint>
  <joint name="shoulder" type="revolute"><parent link="table"/><child link="arm"/>
    <axis xyz="0 0 1"/>{limit}</joint>
  <joint name="arm-camera" type="fixed"><parent link="arm"/><child link="camera"/></joint>
</robot>
"""


def test_two_links_no_joint_moves_are_not_collided_with_each_other(tmp_path: Path) -> None:
    """The table and the fixture bolted to it never move: Tesseract collides no two such
    (inactive) links. The arm moves, and so does the camera fixed to it: they are collided
    with everything, the table and the fixture too."""
    folder = tmp_path / "robots" / "bench"
    folder.mkdir(parents=True)
    (folder / "robot.urdf").write_text(STATIC.format(limit=LIMIT))
    robot = load_robot(folder, tmp_path)
    static = static_links(robot)
    assert static == {"table", "fixture"}
    solids, poses = link_solids(robot, folder, "robot"), link_poses(robot, {})
    every = {(c.link1, c.link2) for c in contacts(solids, poses)}
    assert every == {
        ("table", "fixture"),
        ("table", "arm"),
        ("table", "camera"),
        ("fixture", "arm"),
        ("fixture", "camera"),
        ("arm", "camera"),
    }
    assert {(c.link1, c.link2) for c in contacts(solids, poses, static=static)} == every - {
        ("table", "fixture")
    }


def test_when_no_joint_moves_every_link_is_collided(tmp_path: Path) -> None:
    """A robot of fixed joints only (airo-models' KELO wheel brick) has no active link, and
    Tesseract's contact manager, given no active link, collides every pair (measured by
    tests/test_tesseract_env.py): its links are not static to the contact check."""
    folder = tmp_path / "robots" / "bench"
    folder.mkdir(parents=True)
    fixed = STATIC.format(limit="").replace('type="revolute"', 'type="fixed"')
    (folder / "robot.urdf").write_text(fixed.replace('<axis xyz="0 0 1"/>', ""))
    robot = load_robot(folder, tmp_path)
    assert static_links(robot) == frozenset()
    solids, poses = link_solids(robot, folder, "robot"), link_poses(robot, {})
    found = contacts(solids, poses, static=static_links(robot))
    assert len(found) == 6  # every pair of the four links, as with no static link


def _two_cubes(name: str, tag: str) -> str:
    """Two cubes of 0.2 m at x = -0.3 and 0.3, as one mesh file: an OBJ whose `tag` (`o`, `g`
    or nothing) starts each, or an ASCII STL of two solids."""
    lines, base = [], 0
    for k, x in enumerate((-0.3, 0.3)):
        cube = trimesh.creation.box((0.2, 0.2, 0.2))
        cube.apply_translation((x, 0.0, 0.0))
        if name.endswith(".stl"):
            lines.append(trimesh.exchange.stl.export_stl_ascii(cube))
            continue
        lines += [f"{tag} part_{k}"] if tag else []
        lines += [f"v {a!r} {b!r} {c!r}" for a, b, c in cube.vertices.tolist()]
        lines += [f"f {a + base + 1} {b + base + 1} {c + base + 1}" for a, b, c in cube.faces]
        base += len(cube.vertices)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("name", "tag", "touching"),
    [
        ("parts.obj", "o", False),
        ("parts.obj", "g", False),
        ("parts.stl", "", False),
        ("one.obj", "", True),
    ],
)
def test_each_part_of_a_mesh_file_is_its_own_hull(
    tmp_path: Path, name: str, tag: str, touching: bool
) -> None:
    """A V-HACD OBJ (pybullet's xArm's link2_vhacd2.obj: `o convex_0` ... `o convex_2`), as
    Tesseract reads it (assimp: a mesh per object, group or ASCII STL solid), is collided as
    one hull per part: base_link's box between two cubes touches neither (the xArm's link2 was
    found in contact with link4 and link6, 14 mm deep, where Tesseract found none)."""
    mesh = f'<mesh filename="package://pair/meshes/{name}"/>'
    robot = _robot(tmp_path, _collision(mesh, (0.0, 0.0, 0.0)), {name: _two_cubes(name, tag)})
    pairs = _pairs(robot, tmp_path / "robots" / "pair")
    assert pairs == ([("base_link", "link_1")] if touching else [])


@pytest.mark.parametrize(
    ("geometry", "bound"),
    [
        ('<sphere radius="0.1"/>', 0.0046),  # 642 tangent planes: corners 0.455 % out
        ('<cylinder radius="0.1" length="0.1"/>', 0.0013),  # 64 around: 1 / cos(pi / 64) - 1
    ],
)
def test_a_curved_primitive_stands_out_of_its_surface_by_at_most_the_documented_share(
    tmp_path: Path, geometry: str, bound: float
) -> None:
    """docs/srdf.md: the tangent planes' corners stand at most 0.12 % (cylinder) and 0.46 %
    (sphere) of the radius out, so a gap wider than that is never taken for a contact."""
    from scipy.spatial import HalfspaceIntersection

    centre = np.array([0.3, 0.0, 0.0])
    robot = _robot(tmp_path, _collision(geometry, (0.3, 0.0, 0.0)))
    (solid,) = link_solids(robot, tmp_path / "robots" / "pair", "robot")["link_1"]
    corners = HalfspaceIntersection(
        np.hstack([solid.normals, -solid.offsets[:, None]]), centre
    ).intersections
    # the farthest corner from the axis (cylinder) or the centre (sphere), over the radius
    reach = np.linalg.norm(
        (corners - centre)[:, :2] if "cylinder" in geometry else corners - centre, axis=1
    )
    assert 1.0 < reach.max() / 0.1 <= 1.0 + bound


def _extents(parts: list[np.ndarray]) -> list[float]:
    """Each part's x extent, in order, as one list (float32 files: within 1e-6 of the text)."""
    return [v for lo_hi in sorted((p[:, 0].min(), p[:, 0].max()) for p in parts) for v in lo_hi]


@pytest.mark.parametrize("name", sorted(PARTED))
def test_a_mesh_file_is_read_apart_as_the_planners_reader_reads_it(
    tmp_path: Path, name: str
) -> None:
    """Each part Tesseract's reader (assimp) reads of a crafted file (tests/meshfiles.py: an
    OBJ's objects, groups and materials, a COLLADA file's blocks and instances, a PLY) is one
    hull here, each of its corners (x extent) where Tesseract puts them."""
    text, extents = PARTED[name]
    (tmp_path / name).write_text(text)
    parts = hull_parts(tmp_path, Mesh(name, name), "robot")
    assert _extents(parts) == pytest.approx([v for e in sorted(extents) for v in e], abs=1e-6)


@pytest.mark.parametrize("name", sorted(LONE_POINT))
def test_mesh_not_a_mesh_a_part_of_one_point_crashes_the_planner(tmp_path: Path, name: str) -> None:
    text, element = LONE_POINT[name]
    (tmp_path / name).write_text(text)
    with pytest.raises(ContractError) as raised:
        hull_parts(tmp_path, Mesh(name, name), "robot")
    [found] = raised.value.findings
    lines = text.splitlines()
    place = str(lines.index(element) + 1) if element in lines else ""  # a PLY's: its face
    assert (found.code, found.file, found.place) == ("mesh_not_a_mesh", f"robot/{name}", place)
    assert "Tesseract's contact manager crashes" in found.message, found.message
    assert place or element in found.message, found.message


@pytest.mark.parametrize("name", sorted(PARTED))
def test_a_link_between_a_mesh_files_parts_touches_them_as_the_planner_reads_them(
    tmp_path: Path, name: str
) -> None:
    """base_link's box (x within 0.1 of 0) touches the mesh where one of the parts Tesseract
    reads spans it: not between two cubes of an OBJ's two materials or a COLLADA file's two
    geometries, blocks or instances (they were one hull), nor a repeated group or object name
    (they were two)."""
    text, extents = PARTED[name]
    mesh = f'<mesh filename="package://pair/meshes/{name}"/>'
    robot = _robot(tmp_path, _collision(mesh, (0.0, 0.0, 0.0)), {name: text})
    touching = any(lo <= 0.1 and hi >= -0.1 for lo, hi in extents)
    pairs = _pairs(robot, tmp_path / "robots" / "pair")
    assert pairs == ([("base_link", "link_1")] if touching else [])


@pytest.mark.parametrize(("xy", "touching"), [(0.18, False), (0.17, True)])
def test_a_large_hull_beside_a_box_is_collided_by_the_faces_near_it(
    tmp_path: Path, xy: float, touching: bool
) -> None:
    """A sphere of 81,920 faces beside base_link's box, 0.113 m (apart) or 0.099 m (in
    contact) from its edge: its programmes hold the faces that cut the box where their bounds
    meet, not all of them (one programme of all a 987,712-face hull's faces took the srdf step
    11 s at each state, docs/performance.md), and find what a programme of all finds."""
    mesh = '<mesh filename="package://pair/meshes/ball.stl"/>'
    ball = trimesh.creation.icosphere(6, radius=0.1)
    robot = _robot(tmp_path, _collision(mesh, (xy, xy, 0.0)), {"ball.stl": ball})
    solids = link_solids(robot, tmp_path / "robots" / "pair", "robot")
    assert [len(c.offsets) for c in solids["link_1"]] == [81_920]
    budget = Budget()
    found = contacts(solids, link_poses(robot, {}), budget=budget)
    assert [(c.link1, c.link2) for c in found] == ([("base_link", "link_1")] if touching else [])
    assert PROGRAMME_BUDGET - budget.left < 81_920 / 4


@pytest.mark.parametrize("name", sorted(WITH_LIBRARY))
def test_an_objs_material_library_changes_none_of_its_parts(tmp_path: Path, name: str) -> None:
    """An OBJ whose faces come before its first `usemtl`, its material library beside it: one
    part, as the planner reads it (its reader opens no library beside the OBJ)."""
    text, libraries, extents = WITH_LIBRARY[name]
    (tmp_path / "meshes").mkdir()
    for file, library in {name: text, **libraries}.items():
        (tmp_path / "meshes" / file).write_text(library)
    parts = hull_parts(tmp_path, Mesh(name, f"meshes/{name}"), "robot")
    assert _extents(parts) == pytest.approx([v for e in sorted(extents) for v in e], abs=1e-6)
