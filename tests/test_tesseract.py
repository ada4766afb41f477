"""Every committed description loads in the real Tesseract and reads as our model says.

Also the crafted inputs on which the compiler and Tesseract's parsers once disagreed: each is
now refused by both (the rule's own table-driven test lives with the rule).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tesseract_robotics")

from tesseract_robotics.tesseract_common import GeneralResourceLocator
from tesseract_robotics.tesseract_geometry import GeometryType_MESH
from tesseract_robotics.tesseract_srdf import SRDFModel

from pipeline.description import read_urdf_sources
from pipeline.findings import ContractError
from pipeline.srdf import load_srdf
from pipeline.srdf.groups import expand
from pipeline.srdf.model import (
    ChainMember,
    DisableCollisions,
    JointMember,
    LinkMember,
)
from pipeline.urdf import Robot, load_robot
from tests.conftest import REPO, ROBOTS
from tests.tesseract_support import DESCRIPTIONS, JOINT_TYPES, load, tesseract_urdf


@pytest.fixture(scope="module", params=DESCRIPTIONS, ids=lambda p: str(p.relative_to(REPO)))
def loaded(request: pytest.FixtureRequest) -> tuple[Path, Robot, Any, Any]:
    folder: Path = request.param
    return (folder, *load(folder))


def test_there_are_descriptions_to_check() -> None:
    assert any("cells" in p.parts for p in DESCRIPTIONS)
    assert any("robots" in p.parts for p in DESCRIPTIONS)


def test_a_description_with_a_warning_is_loaded(tmp_path: Path) -> None:
    """A new robot whose URDF holds a <link><origin> (unknown_element, a warning: it builds) made
    every conformance test of it an error at setup: the helper refused any finding at all."""
    folder = tmp_path / "description"
    shutil.copytree(DESCRIPTIONS[0], folder)
    urdf = folder / "robot.urdf"
    text = urdf.read_text()
    at = text.index("<link ") + text[text.index("<link ") :].index(">") + 1
    urdf.write_text(text[:at] + '<origin xyz="0 0 0"/>' + text[at:])
    robot, graph, _ = load(folder)
    assert len(robot.links) == len(graph.getLinks())


def test_links_and_joints_with_limits(loaded: tuple[Path, Robot, Any, Any]) -> None:
    _, robot, graph, _ = loaded
    assert graph.getName() == robot.name
    links = graph.getLinks()
    assert sorted(links[i].getName() for i in range(len(links))) == sorted(
        link.name for link in robot.links
    )
    joints = graph.getJoints()
    assert len(joints) == len(robot.joints)
    for i in range(len(joints)):
        theirs = joints[i]
        ours = robot.joint(theirs.getName())
        assert ours is not None
        assert int(theirs.type) == JOINT_TYPES[ours.type]
        assert (theirs.parent_link_name, theirs.child_link_name) == (ours.parent, ours.child)
        if ours.type in ("revolute", "prismatic"):
            assert ours.limit is not None
            limits = theirs.limits
            assert (limits.lower, limits.upper, limits.velocity) == (
                ours.limit.lower,
                ours.limit.upper,
                ours.limit.velocity,
            )
        if ours.mimic is not None:
            assert theirs.mimic.joint_name == ours.mimic.joint


def test_groups_and_their_members(loaded: tuple[Path, Robot, Any, Any]) -> None:
    folder, robot, _, srdf = loaded
    ours = load_srdf(folder / "robot.srdf", "robot.srdf")
    info = srdf.kinematics_information
    assert sorted(info.group_names) == sorted(g.name for g in ours.groups())
    chains = {k: [(a, b) for a, b in v] for k, v in info.chain_groups.items()}
    joints = {k: list(v) for k, v in info.joint_groups.items()}
    links = {k: list(v) for k, v in info.link_groups.items()}
    contents = expand(ours, robot)
    for group in ours.groups():
        if all(isinstance(m, ChainMember) for m in group.members):
            assert chains[group.name] == [
                (m.base, m.tip) for m in group.members if isinstance(m, ChainMember)
            ]
            # the joints a chain stands for are the URDF path, as in our expansion
            path = {
                joint.name
                for m in group.members
                if isinstance(m, ChainMember)
                for joint in robot.chain(m.base, m.tip) or []
            }
            assert path == set(contents[group.name].joints)
        elif all(isinstance(m, JointMember) for m in group.members):
            assert joints[group.name] == [m.name for m in group.members]
            assert set(joints[group.name]) == set(contents[group.name].joints)
        else:
            assert all(isinstance(m, LinkMember) for m in group.members)
            assert links[group.name] == [m.name for m in group.members]


def test_group_states_with_values(loaded: tuple[Path, Robot, Any, Any]) -> None:
    folder, _, _, srdf = loaded
    ours = load_srdf(folder / "robot.srdf", "robot.srdf")
    expected: dict[str, dict[str, dict[str, float]]] = {}
    for state in ours.group_states():
        values = {v.name: v.value for v in state.values}
        assert not any(v.degrees for v in state.values)  # compiled SRDFs hold radians only
        expected.setdefault(state.group, {})[state.name] = values
    theirs = {
        group: {name: dict(values) for name, values in states.items()}
        for group, states in srdf.kinematics_information.group_states.items()
    }
    assert theirs == expected
    for group, states in expected.items():
        for name in states:
            assert srdf.kinematics_information.hasGroupJointState(group, name)


def test_allowed_collision_pairs(loaded: tuple[Path, Robot, Any, Any]) -> None:
    folder, robot, _, srdf = loaded
    ours = load_srdf(folder / "robot.srdf", "robot.srdf")
    expected = {
        tuple(sorted((e.link1, e.link2))): e.reason or ""
        for e in ours.elements
        if isinstance(e, DisableCollisions)
    }
    theirs = {
        tuple(sorted(pair)): reason for pair, reason in srdf.acm.getAllAllowedCollisions().items()
    }
    assert theirs == expected
    assert expected or robot.name not in ROBOTS  # both shipped robots allow some pairs


def test_named_tcps_are_read(loaded: tuple[Path, Robot, Any, Any]) -> None:
    folder, _, _, srdf = loaded
    text = (folder / "robot.srdf").read_text()
    for name in ("laser", "welder"):
        if f'name="{name}"' in text:
            assert srdf.kinematics_information.hasGroupTCP("manipulator", name)


# Crafted from the shipped abb_irb2400: URDFs the compiler accepted and Tesseract refused.
ABB = "robots/abb_irb2400"
J1_LIMIT = '<limit effort="0" lower="-3.1416" upper="3.1416" velocity="2.618"/>'
ORANGE = '<color rgba="0.7372549 0.3490196 0.1607843 1"/>'
ORIGIN = '<origin rpy="0 0 0" xyz="0 0 0"/>'
VISUAL_DAE = '<mesh filename="package://abb_irb2400/meshes/base_link.dae"/>'
URDF_DISAGREEMENTS = [
    ("missing_attribute", J1_LIMIT, '<limit lower="-1" upper="1" velocity="1"/>'),
    ("invalid_number", J1_LIMIT, J1_LIMIT.replace("/>", ' acceleration="fast"/>')),
    ("missing_attribute", '<axis xyz="0 0 1"/>', "<axis/>"),
    ("missing_attribute", J1_LIMIT, J1_LIMIT + "<calibration/>"),
    ("missing_attribute", J1_LIMIT, J1_LIMIT + "<dynamics/>"),
    ("missing_attribute", J1_LIMIT, J1_LIMIT + '<safety_controller k_position="1"/>'),
    ("unsupported_urdf_version", 'name="abb_irb2400"', 'name="abb_irb2400" version="2"'),
    ("invalid_geometry", VISUAL_DAE, '<box size="0 0.1 0.1"/>'),
    ("invalid_geometry", VISUAL_DAE, VISUAL_DAE.replace("/>", ' scale="1 -1 1"/>')),
    ("missing_attribute", '<material name="">', "<material>"),
    ("invalid_material", ORANGE, "<texture/>"),
    ("invalid_material", ORANGE, '<color rgba="1 1 1"/>'),
    (
        "unknown_material",
        f'<material name="">\n        {ORANGE}\n      </material>',
        '<material name="x"/>',
    ),
    ("unknown_material", "<!-- link list -->", '<material name="grey"/>'),
    # lxml reads a tab or line break in an attribute as a space; tinyxml2 keeps it
    ("invalid_number", ORIGIN, ORIGIN.replace('xyz="0 0 0"', 'xyz="0\t0 0"')),
    ("invalid_number", ORIGIN, ORIGIN.replace('rpy="0 0 0"', "rpy='0 0\n   0'")),
    ("invalid_number", '<axis xyz="0 0 1"/>', '<axis xyz="0 0&#10;1"/>'),
    ("invalid_number", ORANGE, '<color rgba="1\r1 1 1"/>'),
    ("invalid_material", ORANGE, '<color rgba="1&#9;1 1 1"/>'),
    # a <geometry>'s first element is its shape: a <material> before it is no shape to Tesseract
    ("invalid_geometry", VISUAL_DAE, '<material name="x"/>' + VISUAL_DAE),
    ("invalid_number", VISUAL_DAE, VISUAL_DAE.replace("/>", ' scale="1&#x9;1 1"/>')),
    # tinyxml2 takes every <?...?> for a declaration, allowed only at the top, before anything
    ("misplaced_processing_instruction", "<!-- link list -->", "<?editor fold?>"),
    ("misplaced_processing_instruction", "</robot>", "</robot>\n<?editor end?>"),
    ("misplaced_processing_instruction", "<robot ", '<?xml-stylesheet href="a.xsl"?>\n<robot '),
]


def _crafted(tmp_path: Path, old: str, new: str) -> tuple[Path, str]:
    """The shipped ABB in tmp_path with `old` replaced by `new` in its URDF."""
    folder = tmp_path / "robots" / "abb_irb2400"
    shutil.copytree(REPO / ABB, folder)
    text = (folder / "robot.urdf").read_text()
    assert old in text
    text = text.replace(old, new, 1)
    (folder / "robot.urdf").write_text(text)
    return folder, text


@pytest.mark.parametrize(
    ("code", "old", "new"), URDF_DISAGREEMENTS, ids=[c for c, _, _ in URDF_DISAGREEMENTS]
)
def test_crafted_urdf_refused_by_both(tmp_path: Path, code: str, old: str, new: str) -> None:
    folder, text = _crafted(tmp_path, old, new)
    with pytest.raises(ContractError) as exc:
        load_robot(folder, tmp_path)
    assert code in [f.code for f in exc.value.findings]
    with pytest.raises(RuntimeError):
        tesseract_urdf(folder, text, "abb_irb2400")


SEPARATORS_ACCEPTED = [
    ("comment", "<!-- link list -->", '<!-- <origin xyz="0\t0 0"/> -->'),
    ("gazebo", "<!-- link list -->", '<gazebo><origin xyz="0\t0 0" rpy="0\n0 0"/></gazebo>'),
    ("other-attribute", ORIGIN, ORIGIN.replace("/>", ' note="a\tb"/>')),
    ("spaces", ORIGIN, ORIGIN.replace('xyz="0 0 0"', 'xyz="  0  0 0 "')),
]


@pytest.mark.parametrize(
    ("case", "old", "new"), SEPARATORS_ACCEPTED, ids=[c for c, _, _ in SEPARATORS_ACCEPTED]
)
def test_invalid_number_separators_only_where_tesseract_reads_them(
    tmp_path: Path, case: str, old: str, new: str
) -> None:
    folder, text = _crafted(tmp_path, old, new)
    load_robot(folder, tmp_path)
    tesseract_urdf(folder, text, "abb_irb2400")


def test_a_material_after_the_shape_is_read_past_by_both(tmp_path: Path) -> None:
    """pybullet_data's racecar: a <material> after a visual's <mesh>, in its <geometry>; both
    read the mesh, the first element, and ignore the rest (unknown_element, a warning)."""
    folder, text = _crafted(tmp_path, VISUAL_DAE, VISUAL_DAE + '<material name="x"/>')
    load_robot(folder, tmp_path)
    graph = tesseract_urdf(folder, text, "abb_irb2400")
    [visual] = graph.getLink("base_link").visual
    assert visual.geometry.getType() == GeometryType_MESH


def test_processing_instruction_at_the_top_is_read_by_both(tmp_path: Path) -> None:
    decl = '<?xml version="1.0" encoding="UTF-8"?>\n'
    folder, text = _crafted(tmp_path, decl, decl + '<?xml-stylesheet href="a.xsl"?>\n')
    load_robot(folder, tmp_path)
    tesseract_urdf(folder, text, "abb_irb2400")


VISUAL_OBJ = b"v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nvt 0 0\nf 1/1 2/1 3/1\nf 1/1 2/1 4/1\n"


@pytest.mark.parametrize(
    ("case", "face"),
    [
        ("texture-index-0", b"f 1/0 3/0 4/0\n"),
        ("index-not-a-number", b"f 1/x 3/1 4/1\n"),
        ("line-past-the-end", b"l 1 9\n"),
        ("point-past-the-end", b"p 9\n"),
    ],
)
def test_visual_obj_index_refused_by_both(tmp_path: Path, case: str, face: bytes) -> None:
    """Tesseract loads visual meshes too: a corner index its reader refuses loses the URDF."""
    folder, text = _crafted(tmp_path, VISUAL_DAE, VISUAL_DAE.replace("base_link.dae", "odd.obj"))
    (folder / "meshes" / "odd.obj").write_bytes(VISUAL_OBJ + face)
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(tmp_path, "abb_irb2400")
    assert [f.code for f in exc.value.findings] == ["mesh_not_a_mesh"]
    with pytest.raises(RuntimeError):
        tesseract_urdf(folder, text, "abb_irb2400")
    (folder / "meshes" / "odd.obj").write_bytes(VISUAL_OBJ + b"f 1/1 3/1 4/1\n")
    read_urdf_sources(tmp_path, "abb_irb2400")
    tesseract_urdf(folder, text, "abb_irb2400")


def test_crafted_urdf_without_joints_refused_by_both(tmp_path: Path) -> None:
    folder = tmp_path / "robots" / "abb_irb2400"
    folder.mkdir(parents=True)
    text = '<?xml version="1.0"?>\n<robot name="abb_irb2400">\n  <link name="base"/>\n</robot>\n'
    (folder / "robot.urdf").write_text(text)
    with pytest.raises(ContractError) as exc:
        load_robot(folder, tmp_path)
    assert [f.code for f in exc.value.findings] == ["no_joints"]
    with pytest.raises(RuntimeError):
        tesseract_urdf(folder, text, "abb_irb2400")


def test_subgroups_are_not_read_by_tesseract() -> None:
    """Why `tesseract_group_kind` refuses a subgroup: Tesseract keeps only the group's joints."""
    folder = REPO / "build" / "robots" / "abb_irb2400"
    graph = tesseract_urdf(folder, (folder / "robot.urdf").read_text(), "abb_irb2400")
    srdf = SRDFModel()
    srdf.initString(
        graph,
        '<robot name="abb_irb2400"><group name="manipulator">'
        '<chain base_link="base_link" tip_link="tool0"/></group>'
        '<group name="g"><joint name="joint_1"/><group name="manipulator"/></group></robot>',
        GeneralResourceLocator(),
    )
    assert list(srdf.kinematics_information.joint_groups["g"]) == ["joint_1"]


def test_values_read_exactly() -> None:
    """Group-state values written by repr() read back bit for bit in Tesseract."""
    folder = REPO / "build" / "robots" / "abb_irb2400"
    graph = tesseract_urdf(folder, (folder / "robot.urdf").read_text(), "abb_irb2400")
    value = math.radians(33.3)
    srdf = SRDFModel()
    srdf.initString(
        graph,
        '<robot name="abb_irb2400"><group name="manipulator">'
        '<chain base_link="base_link" tip_link="tool0"/></group>'
        f'<group_state name="s" group="manipulator"><joint name="joint_2" value="{value!r}"/>'
        "</group_state></robot>",
        GeneralResourceLocator(),
    )
    assert dict(srdf.kinematics_information.group_states["manipulator"]["s"]) == {"joint_2": value}


# What a planner does with a description: Tesseract's Environment, its joint groups, forward
# kinematics and discrete contact checking. The wheel's plugin libraries carry a hash in their
# file names, so the plugin configs (which our SRDFs refuse: plugin_config_refused) are written
# here and name them as found.
