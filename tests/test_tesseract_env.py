"""The committed descriptions in a Tesseract Environment, as a planner initialises one: forward
kinematics, a cell's calibrated tip, joint groups and self-contact at every group state."""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import sys
import warnings
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
from tesseract_robotics.tesseract_geometry import createConvexMeshFromResource

from pipeline.contacts import contacts, link_poses, link_solids, static_links
from pipeline.findings import ContractError
from pipeline.homepose import home_positions
from pipeline.kinematics import (
    Mat4,
    forward_kinematics,
    quaternion_matrix,
    rpy_matrix,
    transform,
)
from pipeline.meshsplit import hull_parts
from pipeline.srdf import load_srdf
from pipeline.srdf.model import (
    ChainMember,
    Group,
    JointMember,
    LinkMember,
)
from pipeline.urdf import Mesh, Robot
from tests.cellrepo import PAIR_CELL
from tests.conftest import REPO
from tests.meshfiles import LONE_POINT, PARTED, WITH_LIBRARY
from tests.tesseract_support import DESCRIPTIONS, load

TOUCH = 1e-9  # m: a contact of ours this deep is a touch, which Tesseract may not report
# m: a contact of ours this deep between mesh hulls that mate (CAD parts exported face to face) is a
# touch too: Tesseract's hull of a mesh stands up to micrometres off the mesh's own (alicia_m of
# synriard 1.2.4: three pairs ours at 7e-9 to 4.3e-8 m deep, Tesseract's 2.0, 2.2 and 7.2 um apart)
MESH_TOUCH = 1e-5
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
    solvers = "".join(  # a KDL chain solver solves one chain: a group of several gets none
        f"    {group}:\n      default: KDL\n      plugins:\n        KDL:\n"
        f"          class: KDLInvKinChainLMAFactory\n"
        f"          config: {{base_link: {chains[0][0]}, tip_link: {chains[0][1]}}}\n"
        for group, chains in srdf.kinematics_information.chain_groups.items()
        if len(chains) == 1
    )
    config = f'<contact_managers_plugin_config filename="{contact.as_uri()}"/>'
    if not solvers:  # Tesseract refuses a kinematics config that names no group
        return config
    kinematics = folder / "kinematics.yaml"
    kinematics.write_text(
        f"kinematic_plugins:\n  search_paths: [{LIBS}]\n"
        f"  search_libraries: [{_plugin('tesseract_kinematics_kdl_factories')}]\n"
        f"  inv_kin_plugins:\n{solvers}"
    )
    return config + f'<kinematics_plugin_config filename="{kinematics.as_uri()}"/>'


def _environment(folder: Path, scratch: Path, allowed: bool = True) -> Any:
    """A Tesseract Environment of a description directory, as a planner initialises one."""
    robot, _, srdf = load(folder)
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
    return folder, load(folder)[0], _environment(folder, tmp_path_factory.mktemp("plugins"))


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
    _tip_agrees(cell, tmp_path)


def test_cell_tip_pose_off_zero_in_tesseract(
    off_zero: tuple[Path, dict[str, float]], tmp_path: Path
) -> None:
    """A cell reviewed at its SRDF's home state, within the limits: Tesseract at joint_positions."""
    cell = off_zero[0] / "build/cells/weld_cell_a"
    assert json.loads((cell / "cell.json").read_text())["kinematics"]["joint_positions"]
    _tip_agrees(cell, tmp_path)


def test_two_arm_cell_tip_poses_in_tesseract(two_arms: Path, tmp_path: Path) -> None:
    """A two-arm cell's review (`tips`, one per arm) in Tesseract: each arm's tip, nominal and
    calibrated, as a cell whose `manipulator` has two chains compiles it."""
    cell = two_arms / "build/cells" / PAIR_CELL
    assert len(json.loads((cell / "cell.json").read_text())["kinematics"]["tips"]) == 2
    _tip_agrees(cell, tmp_path)


def _tip_agrees(cell: Path, tmp_path: Path) -> None:
    """Each tip of cell.json's review in a Tesseract Environment at its pose, without and with
    the calibration's corrections applied as ChangeJointOriginCommands."""
    review = json.loads((cell / "cell.json").read_text())["kinematics"]
    env = _environment(cell / "description", tmp_path)
    base = review["base_link"]
    # one tip (`tip_link`, `tip`), or several (`tips`: a two-arm cell), each with its poses
    tips = review.get("tips") or [{"tip_link": review["tip_link"], **review["tip"]}]
    pose = {**dict.fromkeys(env.getActiveJointNames(), 0.0), **review.get("joint_positions", {})}
    _set(env, pose)
    for tip in tips:
        _agrees(env.getRelativeLinkTransform(base, tip["tip_link"]).matrix(), tip["nominal"])
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
    _set(env, pose)
    for tip in tips:
        _agrees(env.getRelativeLinkTransform(base, tip["tip_link"]).matrix(), tip["calibrated"])


def _not_built(group: Group) -> str | None:
    """Why Tesseract's Environment builds no joint group of a group (0.5.1: `getJointGroup`
    raises), or None when it builds one: of one chain, or of joints."""
    if all(isinstance(m, LinkMember) for m in group.members):
        return "a group of links"
    chains = sum(isinstance(m, ChainMember) for m in group.members)
    return f"a group of {chains} chains" if chains > 1 else None


def test_joint_groups_as_a_planner_gets_them(planner: tuple[Path, Robot, Any]) -> None:
    """Each group's joints in order with the URDF's limits, its group states within them; of a
    group of several chains or of links, Tesseract builds none (said as a warning)."""
    _check_joint_groups(*planner)


def _check_joint_groups(folder: Path, robot: Robot, env: Any) -> None:
    """test_joint_groups_as_a_planner_gets_them of one description directory."""
    ours = load_srdf(folder / "robot.srdf", "robot.srdf")
    for group in ours.groups():
        shape = _not_built(group)
        if shape is not None:
            with pytest.raises(RuntimeError, match="not supported"):
                env.getJointGroup(group.name)
            warnings.warn(
                f"{robot.name}: group {group.name!r} is {shape}, of which "
                "Tesseract's Environment builds no joint group (getJointGroup: not supported); "
                "a planner using Tesseract needs it as a group of joints, or one group per chain",
                stacklevel=1,
            )
            continue
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


def test_manipulator_solver_as_a_planner_gets_it(planner: tuple[Path, Robot, Any]) -> None:
    """A `manipulator` of one chain solves from its base to its tip with a chain solver (KDL)."""
    folder, robot, env = planner
    ours = load_srdf(folder / "robot.srdf", "robot.srdf")
    members = [m for g in ours.groups() if g.name == "manipulator" for m in g.members]
    if len(members) != 1 or not isinstance(members[0], ChainMember):
        pytest.skip(
            "manipulator is not one chain: a chain solver (KDL) solves one chain, and the SRDF "
            "configures no solver (a planner brings its own)"
        )
    _check_manipulator_solver(folder, robot, env)


def _check_manipulator_solver(folder: Path, robot: Robot, env: Any) -> None:
    """The `manipulator` group solves from its chain's base to its tip, as a planner gets it."""
    ours = load_srdf(folder / "robot.srdf", "robot.srdf")
    (chain,) = [m for g in ours.groups() if g.name == "manipulator" for m in g.members]
    assert isinstance(chain, ChainMember)
    solver = env.getKinematicGroup("manipulator")
    # the chain's base, or a link it is rigidly fixed to (a mobile base: Tesseract names the
    # root when only fixed joints lie between, as for TIAGo's base_footprint)
    base = solver.getBaseLinkName()
    between = robot.chain(base, chain.base)
    assert between is not None and all(joint.type == "fixed" for joint in between), base
    # the chain's tip, any link rigidly joined to it (TIAGo's wrist_ft_link, ...), and any
    # link below it: Tesseract offers every descendant of the tip (a gripper's fingers too,
    # moved by joints outside the group) at its transform in the current state
    tips = list(solver.getAllPossibleTipLinkNames())
    assert chain.tip in tips
    assert all(
        _rigidly_joined(robot, tip, chain.tip) or robot.chain(chain.tip, tip) is not None
        for tip in tips
    ), tips


_GRIPPER_URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base_link"/>
  <link name="link_1"><collision><geometry><box size="0.1 0.1 0.4"/></geometry></collision></link>
  <link name="tool0"/>
  <link name="finger"><collision><origin xyz="0 0 0.05"/>
    <geometry><box size="0.01 0.02 0.04"/></geometry></collision></link>
  <joint name="joint_1" type="revolute"><parent link="base_link"/><child link="link_1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="flange" type="fixed"><parent link="link_1"/><child link="tool0"/>
    <origin xyz="0 0 0.5"/></joint>
  <joint name="finger_joint" type="prismatic"><parent link="tool0"/><child link="finger"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.04" effort="1" velocity="0.1"/></joint>
</robot>
"""
_GRIPPER_SRDF = """<?xml version="1.0"?>
<robot name="arm">
  <group name="manipulator"><chain base_link="base_link" tip_link="tool0"/></group>
  <group name="gripper"><joint name="finger_joint"/></group>
</robot>
"""


def test_a_gripper_below_the_manipulator_tip_is_a_possible_tip(tmp_path: Path) -> None:
    """An arm with its gripper (pybullet's Panda, the xArm with its gripper): Tesseract names
    the fingers, which the group's chain does not reach, among the tips it can solve for."""
    folder = tmp_path / "arm"
    folder.mkdir()
    (folder / "robot.urdf").write_text(_GRIPPER_URDF)
    (folder / "robot.srdf").write_text(_GRIPPER_SRDF)
    env = _environment(folder, tmp_path)
    robot = load(folder)[0]
    assert "finger" in env.getKinematicGroup("manipulator").getAllPossibleTipLinkNames()
    _check_manipulator_solver(folder, robot, env)


_TWO_ARMS_URDF = """<?xml version="1.0"?>
<robot name="two_arms">
  <link name="base_link"/>
  <link name="left_link"><collision><origin xyz="0 0 0.2"/>
    <geometry><box size="0.05 0.05 0.3"/></geometry></collision></link>
  <link name="left_tool0"/>
  <joint name="left_joint" type="revolute"><parent link="base_link"/><child link="left_link"/>
    <origin xyz="0 0.5 0"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="left_flange" type="fixed"><parent link="left_link"/><child link="left_tool0"/>
    <origin xyz="0 0 0.4"/></joint>
  <link name="right_link"><collision><origin xyz="0 0 0.2"/>
    <geometry><box size="0.05 0.05 0.3"/></geometry></collision></link>
  <link name="right_tool0"/>
  <joint name="right_joint" type="revolute"><parent link="base_link"/><child link="right_link"/>
    <origin xyz="0 -0.5 0"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="right_flange" type="fixed"><parent link="right_link"/><child link="right_tool0"/>
    <origin xyz="0 0 0.4"/></joint>
</robot>
"""


@pytest.mark.parametrize(
    "groups",
    [
        '<group name="manipulator"><joint name="left_joint"/><joint name="right_joint"/></group>',
        '<group name="manipulator"><chain base_link="base_link" tip_link="left_tool0"/>'
        '<chain base_link="base_link" tip_link="right_tool0"/></group>'
        '<group name="left"><chain base_link="base_link" tip_link="left_tool0"/></group>'
        '<group name="hands"><link name="left_tool0"/><link name="right_tool0"/></group>',
    ],
    ids=["joints", "two-chains"],
)
def test_a_two_arm_manipulator_is_checked_as_tesseract_builds_it(
    tmp_path: Path, groups: str
) -> None:
    """Two arms on one base, their `manipulator` a group of joints (Tesseract builds its joint
    group, no chain solver solves it) or of two chains (Tesseract builds no joint group)."""
    folder = tmp_path / "two_arms"
    folder.mkdir()
    (folder / "robot.urdf").write_text(_TWO_ARMS_URDF)
    (folder / "robot.srdf").write_text(
        f'<?xml version="1.0"?><robot name="two_arms">{groups}</robot>'
    )
    env = _environment(folder, tmp_path)
    robot = load(folder)[0]
    if "<chain" in groups:
        with pytest.warns(UserWarning) as caught:
            _check_joint_groups(folder, robot, env)
        assert [str(w.message).split(", of which")[0] for w in caught] == [
            "two_arms: group 'manipulator' is a group of 2 chains",
            "two_arms: group 'hands' is a group of links",
        ]
    else:
        _check_joint_groups(folder, robot, env)
        assert list(env.getJointGroup("manipulator").getJointNames()) == [
            "left_joint",
            "right_joint",
        ]
    assert _unallowed_contacts(folder, env, tmp_path) == []  # no group state: nothing to check


def _rigidly_joined(robot: Robot, a: str, b: str) -> bool:
    """Whether only fixed joints lie on the tree path between two links."""
    up = {a: robot.chain(robot.root(), a) or [], b: robot.chain(robot.root(), b) or []}
    shared = len([1 for x, y in zip(up[a], up[b], strict=False) if x.name == y.name])
    return all(joint.type == "fixed" for joint in up[a][shared:] + up[b][shared:])


def _contacts(env: Any, robot: Robot, values: dict[str, float]) -> dict[tuple[str, ...], float]:
    """Link pairs in contact at a group state's `values`, every other joint where the cell
    review puts it (homepose.py): at 0, or at its limit nearest 0 when its limits exclude 0 (a
    new Environment holds it at 0, a pose the robot cannot take), a mimic joint following the
    joint it mimics (Tesseract 0.5.1 leaves it where it was)."""
    return _contacts_at(env, home_positions(robot, robot.joints, values))


def _contacts_at(env: Any, pose: dict[str, float]) -> dict[tuple[str, ...], float]:
    """Link pairs in contact (distance <= 0) by the environment's discrete contact manager,
    each with its deepest distance, at `pose` and every other joint at 0."""
    state = _set(env, {**dict.fromkeys(env.getActiveJointNames(), 0.0), **pose})
    manager = env.getDiscreteContactManager()
    manager.setActiveCollisionObjects(env.getActiveLinkNames())
    manager.setCollisionObjectsTransform(state.link_transforms)
    results = ContactResultMap()
    manager.contactTest(results, ContactRequest(ContactTestType_CLOSEST))
    flat = ContactResultVector()
    results.flattenMoveResults(flat)
    found: dict[tuple[str, ...], float] = {}
    for contact in flat:
        pair = tuple(sorted(contact.link_names))
        found[pair] = min(found.get(pair, 0.0), contact.distance)
    return found


def _unallowed_contacts(folder: Path, env: Any, scratch: Path) -> list[str]:
    """One line per group state and link pair in contact that the SRDF does not allow, saying
    what to add to it: the compiler does not collide links, a planner's environment does."""
    bare = _environment(folder, scratch, allowed=False)
    robot = load(folder)[0]
    acm, info = env.getAllowedCollisionMatrix(), env.getKinematicsInformation()
    allowed = {tuple(sorted(p)) for p in acm.getAllAllowedCollisions()}
    lines = []
    for group, by_name in sorted(info.group_states.items()):
        for name, values in sorted(by_name.items()):
            found = _contacts(env, robot, dict(values))
            # Tesseract skips exactly the SRDF's allowed pairs: the rest of the bare contacts
            assert set(found) == set(_contacts(bare, robot, dict(values))) - allowed, (group, name)
            lines += [
                f"group state {name!r} of group {group!r}: links {a} and {b} touch (distance "
                f"{distance:.4g} m) and the SRDF allows no collision between them, so a planner "
                f"finds this state in collision; if they may touch (adjacent links, links that "
                f'never reach each other), add <disable_collisions link1="{a}" link2="{b}" '
                f'reason="Adjacent"/> (the reason says why: Adjacent, Never, Default) to the '
                f"SRDF that gen_srdf() returns; otherwise change the state's joint values or the "
                f"links' collision geometry"
                for (a, b), distance in sorted(found.items())
            ]
    return lines


def test_no_unallowed_self_contact_at_group_states(
    planner: tuple[Path, Robot, Any], tmp_path: Path
) -> None:
    """At every group state, links touch only where the SRDF allows it (the compiler only warns
    of it, group_state_in_contact; docs/srdf.md)."""
    folder, robot, env = planner
    info = env.getKinematicsInformation()  # kept: its group_states is empty once it is gone
    if not info.group_states:
        pytest.skip("the SRDF has no group state")
    lines = _unallowed_contacts(folder, env, tmp_path)
    if lines:
        where = f"{folder.relative_to(REPO)}/robot.srdf (from robots/{robot.name}/srdf.py)"
        pytest.fail(f"{where}:\n" + "\n".join(lines), pytrace=False)


# two boxes, base_link's and link_1's (centred {z} above it), joined by joint_1
_PAIR_URDF = """<?xml version="1.0"?>
<robot name="pair">
  <link name="base_link"><collision><geometry><box size="{base}"/></geometry></collision>
  </link>
  <link name="link_1"><collision><origin xyz="0 0 {z!r}"/>
    <geometry><box size="{size}"/></geometry></collision></link>
  <joint name="joint_1" type="revolute"><parent link="base_link"/><child link="link_1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""
_TOUCHING_URDF = _PAIR_URDF.format(base="0.2 0.2 0.2", z=0.15, size="0.1 0.1 0.2")
_TOUCHING_SRDF = """<?xml version="1.0"?>
<robot name="pair">
  <group name="manipulator"><chain base_link="base_link" tip_link="link_1"/></group>
  <group_state name="home" group="manipulator"><joint name="joint_1" value="0.5"/></group_state>
  {allowed}
</robot>
"""


@pytest.mark.parametrize("allowed", [False, True])
def test_touching_links_are_named_with_the_entry_to_add(tmp_path: Path, allowed: bool) -> None:
    """Two links that overlap at the home state: seen by the contact check, and a line that
    names the state, the pair and the SRDF entry that allows it, unless the SRDF has it."""
    folder = tmp_path / "pair"
    folder.mkdir()
    entry = '<disable_collisions link1="base_link" link2="link_1" reason="Adjacent"/>'
    (folder / "robot.urdf").write_text(_TOUCHING_URDF)
    (folder / "robot.srdf").write_text(_TOUCHING_SRDF.format(allowed=entry if allowed else ""))
    env = _environment(folder, tmp_path)
    bare = _environment(folder, tmp_path, allowed=False)
    assert list(_contacts_at(bare, {"joint_1": 0.5})) == [("base_link", "link_1")]
    lines = _unallowed_contacts(folder, env, tmp_path)
    if allowed:
        assert lines == []
    else:
        (line,) = lines
        assert line.startswith(
            "group state 'home' of group 'manipulator': links base_link and link_1 touch "
            "(distance -0.05 m) and the SRDF allows no collision between them"
        )
        assert entry in line


# a gripper whose fingers' limits exclude 0 (wx250s: [0.015, 0.037] m), the second finger
# following the first: at 0 both overlap, at any position they can take they are apart
_FINGERS_URDF = """<?xml version="1.0"?>
<robot name="fingers">
  <link name="base_link"/>
  <link name="palm"/>
  <link name="left"><collision><geometry><box size="0.02 0.02 0.02"/></geometry></collision>
  </link>
  <link name="right"><collision><geometry><box size="0.02 0.02 0.02"/></geometry></collision>
  </link>
  <joint name="wrist" type="revolute"><parent link="base_link"/><child link="palm"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="left_finger" type="prismatic"><parent link="palm"/><child link="left"/>
    <axis xyz="0 1 0"/><limit lower="0.015" upper="0.037" effort="1" velocity="1"/></joint>
  <joint name="right_finger" type="prismatic"><parent link="palm"/><child link="right"/>
    <axis xyz="0 1 0"/><limit lower="-0.037" upper="-0.015" effort="1" velocity="1"/>
    <mimic joint="left_finger" multiplier="-1"/></joint>
</robot>
"""
_FINGERS_SRDF = """<?xml version="1.0"?>
<robot name="fingers">
  <group name="manipulator"><chain base_link="base_link" tip_link="palm"/></group>
  <group name="gripper"><joint name="left_finger"/></group>
  <group_state name="home" group="manipulator"><joint name="wrist" value="0"/></group_state>
  <group_state name="open" group="gripper"><joint name="left_finger" value="0.02"/>
  </group_state>
</robot>
"""


def test_joints_a_state_does_not_set_are_within_their_limits(tmp_path: Path) -> None:
    """A state's other joints at 0 outside their limits (the wx250s's fingers, 9.7 mm into each
    other there) and a mimic joint left at 0 while the joint it follows moves: contacts the robot
    can never have, and the fix said to allow the pair. Now at the pose the cell review takes."""
    folder = tmp_path / "fingers"
    folder.mkdir()
    (folder / "robot.urdf").write_text(_FINGERS_URDF)
    (folder / "robot.srdf").write_text(_FINGERS_SRDF)
    env = _environment(folder, tmp_path)
    bare = _environment(folder, tmp_path, allowed=False)
    assert list(_contacts_at(bare, {"left_finger": 0.0})) == [("left", "right")]
    assert _unallowed_contacts(folder, env, tmp_path) == []


_FIXED_BENCH = """<?xml version="1.0"?>
<robot name="bench">
  <link name="table"><collision><geometry><box size="1 1 0.1"/></geometry></collision></link>
  <link name="fixture"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="camera"><collision><geometry><box size="0.05 0.05 0.3"/></geometry></collision>
  </link>
  <joint name="table-fixture" type="fixed"><parent link="table"/><child link="fixture"/></joint>
  <joint name="fixture-camera" type="fixed"><parent link="fixture"/><child link="camera"/></joint>
</robot>
"""


def test_a_robot_of_fixed_joints_only_has_every_pair_collided(tmp_path: Path) -> None:
    """No joint moves, so no link is active, and Tesseract's manager then collides every pair
    (airo-models' KELO wheel brick: 5 pairs in contact, ours none, as contacts.py took every
    link for static and collides no two static links)."""
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "robot.urdf").write_text(_FIXED_BENCH)
    (folder / "robot.srdf").write_text(
        '<?xml version="1.0"?>\n<robot name="bench"><group name="manipulator">'
        '<chain base_link="table" tip_link="camera"/></group></robot>\n'
    )
    bare = _environment(folder, tmp_path, allowed=False)
    assert list(bare.getActiveLinkNames()) == []
    theirs = set(_contacts_at(bare, {}))
    robot = load(folder)[0]
    found = contacts(
        link_solids(robot, folder, "robot"), link_poses(robot, {}), static=static_links(robot)
    )
    assert theirs == {("camera", "fixture"), ("fixture", "table"), ("camera", "table")}
    assert {tuple(sorted((c.link1, c.link2))) for c in found} == theirs


def test_contacts_agree_with_the_planners_contact_manager(
    planner: tuple[Path, Robot, Any], tmp_path: Path
) -> None:
    """contacts.py (which `pipeline template srdf` allows as "Default" at home) finds the pairs
    Tesseract's Bullet manager finds, with no pair allowed: at zero and at each group state,
    every joint posed as the cell review poses it (homepose.py), as the starter's home is."""
    folder, robot, env = planner
    bare = _environment(folder, tmp_path, allowed=False)
    solids = link_solids(robot, folder, "robot")
    states = [
        dict(v) for by in env.getKinematicsInformation().group_states.values() for v in by.values()
    ]
    for values in [{}, *states]:
        theirs = set(_contacts(bare, robot, values))
        found = contacts(solids, link_poses(robot, values), static=static_links(robot))
        ours = {tuple(sorted((c.link1, c.link2))): c.depth for c in found}
        # a touch (boxes face to face) is a contact of ours, and Tesseract's as its rounding
        # falls (test_a_touch_is_a_contact_tesseract_finds_as_its_rounding_falls); between mesh
        # hulls, as its hull's rounding falls (MESH_TOUCH)
        assert theirs <= set(ours), values
        missed = {p: ours[p] for p in set(ours) - theirs}
        assert {p for p, depth in missed.items() if depth > _touch(robot, p)} == set(), values


def _touch(robot: Robot, pair: tuple[str, ...]) -> float:
    """How deep a contact of ours between the pair's links may be and still be a touch."""
    meshes = {
        link.name
        for link in robot.links
        if any(isinstance(c.geometry, Mesh) for c in link.collisions)
    }
    return MESH_TOUCH if set(pair) <= meshes else TOUCH


@pytest.mark.parametrize(
    ("base", "size", "z", "theirs"),
    [
        # face to face at z = 0.05: Tesseract finds a contact at distance 0
        ("0.1 0.1 0.1", "0.1 0.1 0.1", 0.1, True),
        # the Allegro hand's link_0.0 and link_1.0 face to face at its joint_1.0: none
        ("0.0196 0.0275 0.0164", "0.0196 0.0275 0.054", 0.0352, False),
        ("0.1 0.1 0.1", "0.1 0.1 0.1", 0.1 - 1e-6, True),  # 1 um in: both
    ],
)
def test_a_touch_is_a_contact_tesseract_finds_as_its_rounding_falls(
    tmp_path: Path, base: str, size: str, z: float, theirs: bool
) -> None:
    """Two boxes face to face: contacts.py finds a contact of depth 0 (a touch), Tesseract's
    manager a contact or none as its rounding falls (the Allegro hand: 5 of its 11 touching
    finger pairs at zero), which the agreement test lets pass; 1 um deeper, both find one."""
    folder = tmp_path / "pair"
    folder.mkdir()
    (folder / "robot.urdf").write_text(_PAIR_URDF.format(base=base, size=size, z=z))
    (folder / "robot.srdf").write_text(_TOUCHING_SRDF.format(allowed=""))
    robot = load(folder)[0]
    bare = _environment(folder, tmp_path, allowed=False)
    (ours,) = contacts(link_solids(robot, folder, "robot"), link_poses(robot, {}))
    assert (ours.link1, ours.link2) == ("base_link", "link_1")
    assert (ours.depth > TOUCH) == (z == 0.1 - 1e-6)
    assert list(_contacts_at(bare, {})) == ([("base_link", "link_1")] if theirs else [])


_PARTS_URDF = """<?xml version="1.0"?>
<robot name="parts">
  <link name="base_link"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
  </link>
  <link name="link_1"><collision><geometry><mesh filename="package://parts/meshes/{name}"/>
    </geometry></collision></link>
  <joint name="joint_1" type="revolute"><parent link="base_link"/><child link="link_1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


def _x_extents(parts: list[np.ndarray]) -> list[float]:
    return [v for lo_hi in sorted((p[:, 0].min(), p[:, 0].max()) for p in parts) for v in lo_hi]


@pytest.mark.parametrize("name", sorted(PARTED) + sorted(WITH_LIBRARY))
def test_mesh_files_are_read_apart_as_the_planners_reader_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A crafted mesh file (tests/meshfiles.py: an OBJ's objects, groups and materials, with its
    material library or none, a COLLADA file's geometries, blocks, instances and node
    transforms, a PLY) is read in the parts Tesseract's reader reads (each collided as its own
    convex hull), their corners where it puts them, and a box between two of them touches them
    or not alike."""
    if name in WITH_LIBRARY:
        text, libraries, extents = WITH_LIBRARY[name]
    else:
        (text, extents), libraries = PARTED[name], {}
    folder = tmp_path / "parts"
    (folder / "meshes").mkdir(parents=True)
    for file, written in {name: text, **libraries}.items():
        (folder / "meshes" / file).write_text(written)
    # as the URDF parser reads it: from its resource (which opens an OBJ's material library
    # relative to the working folder alone: the test's has none; createConvexMeshFromPath
    # opens it beside the OBJ)
    monkeypatch.chdir(tmp_path)
    resource = GeneralResourceLocator().locateResource((folder / "meshes" / name).as_uri())
    read = createConvexMeshFromResource(resource)
    corners = [read[i].getVertices() for i in range(len(read))]
    theirs = [np.array([np.ravel(c[k]) for k in range(len(c))]) for c in corners]
    assert _x_extents(theirs) == pytest.approx([v for e in sorted(extents) for v in e], abs=1e-6)
    ours = hull_parts(folder, Mesh(name, f"meshes/{name}"), "robot")
    assert _x_extents(ours) == pytest.approx(_x_extents(theirs), abs=1e-6)
    (folder / "robot.urdf").write_text(_PARTS_URDF.format(name=name))
    (folder / "robot.srdf").write_text(
        _TOUCHING_SRDF.format(allowed="").replace('"pair"', '"parts"')
    )
    robot = load(folder)[0]
    found = contacts(link_solids(robot, folder, "robot"), link_poses(robot, {}))
    bare = _environment(folder, tmp_path, allowed=False)
    assert [(c.link1, c.link2) for c in found] == list(_contacts_at(bare, {}))


# builds a planner's environment of a description directory, in a process of its own
_BUILD = """
import sys
from pathlib import Path
from tests.test_tesseract_env import _environment
_environment(Path(sys.argv[1]), Path(sys.argv[2]), allowed=False)
print("built")
"""


@pytest.mark.parametrize("name", [*sorted(LONE_POINT), "l_beside_faces.obj"])
def test_a_part_of_one_point_crashes_the_planners_contact_manager(
    tmp_path: Path, name: str
) -> None:
    """A mesh whose lines or points Tesseract's reader cuts into a part of one point crashes the
    planner's process (SIGSEGV) as its environment is built; the compiler refuses it
    (mesh_not_a_mesh), and builds a line of two distinct ends as Tesseract does."""
    text = LONE_POINT[name][0] if name in LONE_POINT else PARTED[name][0]
    folder = tmp_path / "parts"
    (folder / "meshes").mkdir(parents=True)
    (folder / "meshes" / name).write_text(text)
    (folder / "robot.urdf").write_text(_PARTS_URDF.format(name=name))
    (folder / "robot.srdf").write_text(
        _TOUCHING_SRDF.format(allowed="").replace('"pair"', '"parts"')
    )
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(folder), str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if name not in LONE_POINT:
        assert (done.returncode, done.stdout) == (0, "built\n"), done.stderr[-2000:]
        return
    assert done.returncode == -signal.SIGSEGV, (done.returncode, done.stderr[-2000:])
    with pytest.raises(ContractError) as raised:
        hull_parts(folder, Mesh(name, f"meshes/{name}"), "robot")
    assert [f.code for f in raised.value.findings] == ["mesh_not_a_mesh"]
