"""Every committed description loads in the real Tesseract and reads as our model says.

Also the crafted inputs on which the compiler and Tesseract's parsers once disagreed: each is
now refused by both (the rule's own table-driven test lives with the rule).
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

pytest.importorskip("tesseract_robotics")

import tesseract_robotics
from tesseract_robotics.tesseract_collision import (
    ContactRequest,
    ContactResultMap,
    ContactResultVector,
    ContactTestType_CLOSEST,
)
from tesseract_robotics.tesseract_common import GeneralResourceLocator, Isometry3d
from tesseract_robotics.tesseract_environment import ChangeJointOriginCommand, Environment
from tesseract_robotics.tesseract_srdf import SRDFModel
from tesseract_robotics.tesseract_urdf import parseURDFString

from pipeline.findings import ContractError
from pipeline.kinematics import (
    Mat4,
    forward_kinematics,
    quaternion_matrix,
    rpy_matrix,
    transform,
)
from pipeline.srdf import load_srdf
from pipeline.srdf.groups import expand
from pipeline.srdf.model import (
    ChainMember,
    DisableCollisions,
    JointMember,
    LinkMember,
)
from pipeline.urdf import Robot, load_robot, parse_urdf
from tests.conftest import REPO

DESCRIPTIONS = sorted(
    [p for p in (REPO / "build" / "robots").iterdir() if (p / "robot.srdf").is_file()]
    + [p for p in (REPO / "build" / "cells").glob("*/description") if p.is_dir()]
)
# Tesseract's JointType enum: FIXED, REVOLUTE, CONTINUOUS, PRISMATIC, ... (scene_graph/joint.h)
JOINT_TYPES = {"fixed": 6, "revolute": 1, "continuous": 2, "prismatic": 3}


def _tesseract_urdf(folder: Path, text: str, model_id: str) -> Any:
    """Parse URDF text, with package://<model_id>/ pointing at `folder`."""
    mapped = text.replace(f"package://{model_id}/", folder.resolve().as_uri() + "/")
    return parseURDFString(mapped, GeneralResourceLocator()).release()


def _load(folder: Path) -> tuple[Robot, Any, Any]:
    """Our URDF model, Tesseract's scene graph and SRDF model of one description directory."""
    urdf = (folder / "robot.urdf").read_bytes()
    name = parse_urdf(urdf, "robot.urdf", "")[0].name
    robot, findings = parse_urdf(urdf, "robot.urdf", name)
    assert not [f for f in findings if f.code != "robot_name_mismatch"]
    graph = _tesseract_urdf(folder, urdf.decode("utf-8"), name)
    srdf = SRDFModel()
    srdf.initString(graph, (folder / "robot.srdf").read_text(), GeneralResourceLocator())
    return robot, graph, srdf


@pytest.fixture(scope="module", params=DESCRIPTIONS, ids=lambda p: str(p.relative_to(REPO)))
def loaded(request: pytest.FixtureRequest) -> tuple[Path, Robot, Any, Any]:
    folder: Path = request.param
    return (folder, *_load(folder))


def test_there_are_descriptions_to_check() -> None:
    assert any("cells" in p.parts for p in DESCRIPTIONS)
    assert any("robots" in p.parts for p in DESCRIPTIONS)


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
    folder, _, _, srdf = loaded
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
    assert expected  # both shipped robots allow some pairs


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
]


@pytest.mark.parametrize(
    ("code", "old", "new"), URDF_DISAGREEMENTS, ids=[c for c, _, _ in URDF_DISAGREEMENTS]
)
def test_crafted_urdf_refused_by_both(tmp_path: Path, code: str, old: str, new: str) -> None:
    folder = tmp_path / "robots" / "abb_irb2400"
    shutil.copytree(REPO / ABB, folder)
    text = (folder / "robot.urdf").read_text()
    assert old in text
    text = text.replace(old, new, 1)
    (folder / "robot.urdf").write_text(text)
    with pytest.raises(ContractError) as exc:
        load_robot(folder, tmp_path)
    assert code in [f.code for f in exc.value.findings]
    with pytest.raises(RuntimeError):
        _tesseract_urdf(folder, text, "abb_irb2400")


def test_crafted_urdf_without_joints_refused_by_both(tmp_path: Path) -> None:
    folder = tmp_path / "robots" / "abb_irb2400"
    folder.mkdir(parents=True)
    text = '<?xml version="1.0"?>\n<robot name="abb_irb2400">\n  <link name="base"/>\n</robot>\n'
    (folder / "robot.urdf").write_text(text)
    with pytest.raises(ContractError) as exc:
        load_robot(folder, tmp_path)
    assert [f.code for f in exc.value.findings] == ["no_joints"]
    with pytest.raises(RuntimeError):
        _tesseract_urdf(folder, text, "abb_irb2400")


def test_subgroups_are_not_read_by_tesseract() -> None:
    """Why `tesseract_group_kind` refuses a subgroup: Tesseract keeps only the group's joints."""
    folder = REPO / "build" / "robots" / "abb_irb2400"
    graph = _tesseract_urdf(folder, (folder / "robot.urdf").read_text(), "abb_irb2400")
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
    graph = _tesseract_urdf(folder, (folder / "robot.urdf").read_text(), "abb_irb2400")
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
LIBS = Path(tesseract_robotics.__file__).resolve().parent.parent / "tesseract_robotics.libs"


def _plugin(stem: str) -> str:
    return next(LIBS.glob(f"lib{stem}-*.so")).name[len("lib") : -len(".so")]


def _plugin_configs(folder: Path, srdf: Any) -> str:
    """SRDF elements naming a Bullet contact manager and a KDL solver per chain group."""
    contact = folder / "contact.yaml"
    contact.write_text(
        f"contact_manager_plugins:\n  search_paths: [{LIBS}]\n"
        f"  search_libraries: [{_plugin('tesseract_collision_bullet_factories')}]\n"
        "  discrete_plugins:\n    default: Bullet\n    plugins:\n"
        "      Bullet: {class: BulletDiscreteBVHManagerFactory}\n"
    )
    solvers = "".join(
        f"    {group}:\n      default: KDL\n      plugins:\n        KDL:\n"
        f"          class: KDLInvKinChainLMAFactory\n"
        f"          config: {{base_link: {chain[0][0]}, tip_link: {chain[0][1]}}}\n"
        for group, chain in srdf.kinematics_information.chain_groups.items()
    )
    kinematics = folder / "kinematics.yaml"
    kinematics.write_text(
        f"kinematic_plugins:\n  search_paths: [{LIBS}]\n"
        f"  search_libraries: [{_plugin('tesseract_kinematics_kdl_factories')}]\n"
        f"  inv_kin_plugins:\n{solvers}"
    )
    return (
        f'<contact_managers_plugin_config filename="{contact.as_uri()}"/>'
        f'<kinematics_plugin_config filename="{kinematics.as_uri()}"/>'
    )


def _environment(folder: Path, scratch: Path, allowed: bool = True) -> Any:
    """A Tesseract Environment of a description directory, as a planner initialises one."""
    robot, _, srdf = _load(folder)
    urdf = (folder / "robot.urdf").read_text()
    urdf = urdf.replace(f"package://{robot.name}/", folder.resolve().as_uri() + "/")
    text = (folder / "robot.srdf").read_text()
    if not allowed:
        text = re.sub(r"\s*<disable_collisions [^>]*/>", "", text)
    text = text.replace("</robot>", _plugin_configs(scratch, srdf) + "</robot>")
    env = Environment()
    assert env.init(urdf, text, GeneralResourceLocator())
    return env


@pytest.fixture(scope="module", params=DESCRIPTIONS, ids=lambda p: str(p.relative_to(REPO)))
def planner(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Robot, Any]:
    folder: Path = request.param
    return folder, _load(folder)[0], _environment(folder, tmp_path_factory.mktemp("plugins"))


def _ours(robot: Robot, values: dict[str, float], origins: dict[str, Mat4]) -> dict[str, Mat4]:
    """Every link's pose in the root frame by pipeline.kinematics.forward_kinematics."""
    out: dict[str, Mat4] = {}
    for link in robot.links:
        steps = []
        for joint in robot.chain(robot.root(), link.name) or []:
            origin = origins.get(joint.name, transform(joint.origin.xyz, joint.origin.rpy))
            steps.append((origin, joint.type, joint.axis, values.get(joint.name, 0.0)))
        out[link.name] = forward_kinematics(steps)
    return out


def _set(env: Any, values: dict[str, float]) -> Any:
    env.setState(list(values), np.array(list(values.values())))
    return env.getState()  # keep the state alive while its transforms are used


def test_forward_kinematics_of_every_link(planner: tuple[Path, Robot, Any]) -> None:
    """Ours and Tesseract's at seeded random joint values within the limits, every link."""
    _, robot, env = planner
    rng = random.Random(20261130)
    active = list(env.getActiveJointNames())
    assert sorted(active) == sorted(j.name for j in robot.joints if j.type != "fixed")
    for _ in range(25):
        values = {}
        for name in active:
            limit = robot.joint(name).limit  # type: ignore[union-attr]
            assert limit is not None and limit.lower is not None and limit.upper is not None
            values[name] = rng.uniform(limit.lower, limit.upper)
        state = _set(env, values)
        for link, pose in _ours(robot, values, {}).items():
            theirs = state.link_transforms[link].matrix()
            assert np.max(np.abs(np.array(pose) - theirs)) < 1e-12, link


def _matrix(pose: dict[str, list[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """cell.json's pose: its translation, its rpy's and its quaternion's rotation matrices."""
    xyz, rpy, q = pose["xyz_m"], pose["rpy_rad"], pose["quaternion_wxyz"]
    by_rpy = np.array(rpy_matrix((rpy[0], rpy[1], rpy[2])))
    return np.array(xyz), by_rpy, np.array(quaternion_matrix((q[0], q[1], q[2], q[3])))


def _agrees(theirs: np.ndarray, pose: dict[str, list[float]]) -> None:
    xyz, by_rpy, by_quaternion = _matrix(pose)
    assert np.max(np.abs(theirs[:3, 3] - xyz)) < 1e-9
    assert np.max(np.abs(theirs[:3, :3] - by_rpy)) < 1e-9
    assert np.max(np.abs(theirs[:3, :3] - by_quaternion)) < 1e-9


@pytest.mark.parametrize("cell", sorted((REPO / "build" / "cells").iterdir()), ids=lambda p: p.name)
def test_cell_tip_pose_in_tesseract(cell: Path, tmp_path: Path) -> None:
    """cell.json's home tip pose, nominal and calibrated (T' = T_origin · Trans(xyz) · R(rpy))."""
    review = json.loads((cell / "cell.json").read_text())["kinematics"]
    env = _environment(cell / "description", tmp_path)
    base, tip = review["base_link"], review["tip_link"]
    _set(env, dict.fromkeys(env.getActiveJointNames(), 0.0))
    _agrees(env.getRelativeLinkTransform(base, tip).matrix(), review["tip"]["nominal"])
    calibration = json.loads((cell / "machine_planning_calibration.json").read_text())
    for name, correction in calibration.get("kinematics", {}).items():
        roll, pitch, yaw = correction["rpy_rad"]
        step = np.eye(4)  # Trans(xyz) · Rz(yaw) · Ry(pitch) · Rx(roll), written out with numpy
        step[:3, :3] = Rotation.from_euler("ZYX", [yaw, pitch, roll]).as_matrix()
        step[:3, 3] = correction["xyz_m"]
        origin = env.getJoint(name).parent_to_joint_origin_transform.matrix()
        assert env.applyCommand(ChangeJointOriginCommand(name, Isometry3d(origin @ step)))
        changed = env.getJoint(name).parent_to_joint_origin_transform.matrix()
        _agrees(changed, review["joints"][name]["calibrated_origin"])
    _set(env, dict.fromkeys(env.getActiveJointNames(), 0.0))
    _agrees(env.getRelativeLinkTransform(base, tip).matrix(), review["tip"]["calibrated"])


def test_joint_groups_as_a_planner_gets_them(planner: tuple[Path, Robot, Any]) -> None:
    """Each group's joints in order with the URDF's limits; `manipulator` solves base to tip."""
    folder, robot, env = planner
    ours = load_srdf(folder / "robot.srdf", "robot.srdf")
    for group in ours.groups():
        expected = [
            joint.name
            for m in group.members
            for joint in (robot.chain(m.base, m.tip) or [] if isinstance(m, ChainMember) else [])
            if joint.type != "fixed"
        ] + [m.name for m in group.members if isinstance(m, JointMember)]
        joints = env.getJointGroup(group.name)
        assert list(joints.getJointNames()) == expected
        limits = joints.getLimits()
        for i, name in enumerate(expected):
            limit = robot.joint(name).limit  # type: ignore[union-attr]
            assert limit is not None and limit.velocity is not None
            assert tuple(limits.joint_limits[i]) == (limit.lower, limit.upper)
            assert tuple(limits.velocity_limits[i]) == (-limit.velocity, limit.velocity)
        for state in ours.group_states():
            if state.group == group.name:
                values = {v.name: v.value for v in state.values}
                assert set(values) <= set(expected)
                full = [values.get(n, 0.0) for n in expected]
                assert joints.checkJoints(np.array(full)), state.name
    (chain,) = [m for g in ours.groups() if g.name == "manipulator" for m in g.members]
    assert isinstance(chain, ChainMember)
    solver = env.getKinematicGroup("manipulator")
    assert solver.getBaseLinkName() == chain.base
    assert list(solver.getAllPossibleTipLinkNames()) == [chain.tip]


def _contacts(env: Any, values: dict[str, float]) -> set[tuple[str, ...]]:
    """Link pairs in contact (distance <= 0) by the environment's discrete contact manager."""
    state = _set(env, values)
    manager = env.getDiscreteContactManager()
    manager.setActiveCollisionObjects(env.getActiveLinkNames())
    manager.setCollisionObjectsTransform(state.link_transforms)
    results = ContactResultMap()
    manager.contactTest(results, ContactRequest(ContactTestType_CLOSEST))
    flat = ContactResultVector()
    results.flattenMoveResults(flat)
    return {tuple(sorted(c.link_names)) for c in flat}


def test_no_unallowed_self_contact_at_group_states(
    planner: tuple[Path, Robot, Any], tmp_path: Path
) -> None:
    """At every group state, links touch only where the SRDF allows it, and there they do."""
    folder, _, env = planner
    bare = _environment(folder, tmp_path, allowed=False)
    acm, info = env.getAllowedCollisionMatrix(), env.getKinematicsInformation()
    allowed = {tuple(sorted(p)) for p in acm.getAllAllowedCollisions()}
    states = {g: {n: dict(v) for n, v in s.items()} for g, s in info.group_states.items()}
    assert states
    for group, by_name in states.items():
        for name, values in by_name.items():
            assert _contacts(env, values) == set(), (group, name)
            touching = _contacts(bare, values)
            assert touching  # the check sees contacts: adjacent links overlap at home
            assert touching <= allowed, (group, name, touching - allowed)
