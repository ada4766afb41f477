"""What the findings about a URDF's numbers say is wrong with them, and the fix they give."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.findings import ContractError
from pipeline.urdf import load_robot
from tests.test_urdf import ABB, J1_LIMIT, J2_ORIGIN, L1_MESH, break_urdf

# (the joint_2 <origin> written, the message's end expected)
CASES = [
    # pybullet_data's microtaur: a fourth number in a joint's rpy, which Tesseract refuses
    ('<origin rpy="-3.14159 1.57079 0 0" xyz="0.1 0 0.615"/>', "holds 4 numbers, not 3"),
    ('<origin rpy="0 0 0" xyz="0.1 0.615"/>', "holds 2 numbers, not 3"),
    ('<origin rpy="" xyz="0.1 0 0.615"/>', "holds no number, not 3"),
    # not numbers at all, or not finite: the count is not the matter
    ('<origin rpy="0 0 pi" xyz="0.1 0 0.615"/>', "is not 3 finite number(s)"),
    ('<origin rpy="0 0 inf" xyz="0.1 0 0.615"/>', "is not 3 finite number(s)"),
    ('<origin rpy="0 0 nan 0" xyz="0.1 0 0.615"/>', "is not 3 finite number(s)"),
]


@pytest.mark.parametrize(("origin", "end"), CASES, ids=[c[1] for c in CASES])
def test_invalid_number_says_how_many_numbers_were_written(
    repo: Path, origin: str, end: str
) -> None:
    path = break_urdf(repo, [(J2_ORIGIN, origin)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    (finding,) = exc.value.findings
    assert finding.code == "invalid_number"
    assert origin in path.read_text().splitlines()[int(finding.place) - 1]
    assert finding.message.endswith(end), finding.message
    assert finding.hint.startswith("write 3 finite decimal number(s)")


# (the joint_2 <origin> written, the message's end, the hint's end expected)
COMMAS = [
    # armar's ARMAR-6 (arm_t34_joint_r0 and _r1), which Tesseract refuses for the comma alone
    (
        '<origin rpy="1.5707963, 1.3089969 1.5707963" xyz="0.1 0 0.615"/>',
        "separates its numbers with a comma",
        'separated by spaces: rpy="1.5707963 1.3089969 1.5707963"',
    ),
    ('<origin rpy="0,0,0" xyz="0.1 0 0.615"/>', "with a comma", ': rpy="0 0 0"'),
    # commas and too few numbers all the same: the count is said, the fix cannot be written
    ('<origin rpy="0, 0" xyz="0.1 0 0.615"/>', "is not 3 finite number(s)", "by spaces"),
]


@pytest.mark.parametrize(("origin", "end", "fix"), COMMAS, ids=[c[2] for c in COMMAS])
def test_invalid_number_of_commas_gives_the_numbers_spaced(
    repo: Path, origin: str, end: str, fix: str
) -> None:
    break_urdf(repo, [(J2_ORIGIN, origin)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    (finding,) = exc.value.findings
    assert finding.code == "invalid_number"
    assert finding.message.endswith(end), finding.message
    assert finding.hint.endswith(fix), finding.hint


# (the link_1 collision <mesh> scale written, the message's end, the hint's start expected)
SCALES = [
    # orca-arm's orcabot (OpenArm's left arm), talos, centauro: a mirrored copy of a mesh
    (
        "0.001 -0.001 0.001",
        "mirrors the mesh in its y axis (a negative scale)",
        "mirror the mesh file itself (negate each vertex's y and reverse the order of each "
        'triangle\'s corners, which keeps its outside out), and give it scale="0.001 0.001 0.001"',
    ),
    (
        "-1 -1 -1",
        "mirrors the mesh in its x, y and z axes (a negative scale)",
        "mirror the mesh file itself (negate each vertex's x, y and z and reverse",
    ),
    # two negative axes are no mirror but a half turn about the third: the corners keep their
    # order (a mirror's fix would turn the mesh inside out)
    (
        "-1 1 -1",
        "turns the mesh half a turn about its y axis (two negative scales)",
        "turn the mesh file itself (negate each vertex's x and z; the triangles' corners keep "
        'their order), or turn its <origin rpy> half a turn about y, and give it scale="1 1 1"',
    ),
    # a zero flattens the mesh: no mirror to make
    ("1 0 1", "has a component that is not > 0", "give every axis a scale > 0"),
    ("-1 0 1", "has a component that is not > 0", "give every axis a scale > 0"),
]


@pytest.mark.parametrize(("scale", "end", "hint"), SCALES, ids=[s[0] for s in SCALES])
def test_a_mirroring_scale_says_which_axes_and_the_scale_to_give(
    repo: Path, scale: str, end: str, hint: str
) -> None:
    mesh = f'<mesh filename="{L1_MESH}"/>'
    break_urdf(repo, [(mesh, mesh.replace("/>", f' scale="{scale}"/>'))])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    (finding,) = exc.value.findings
    assert finding.code == "invalid_geometry"
    assert finding.message == f'<mesh scale="{scale}"> {end}'
    assert finding.hint.startswith(hint), finding.hint


# (joint_1's <limit> written, the message's end and the fix expected)
LIMITS = [
    # pybullet_data's cube_no_rotation, its prismatic x, y and z: pybullet reads lower > upper
    # as no limit, so swapping the two would bound the joint where the author meant none
    (
        '<limit effort="0" lower="1" upper="-1" velocity="1"/>',
        "limit lower=1.0 upper=-1.0 has lower > upper",
        "give bounds in rad with lower < upper: the range the joint may use (pybullet reads "
        'lower > upper, as its URDFs write lower="1" upper="-1", as a joint without limits; '
        "a joint that turns without end cannot be bounded: a wheel takes every pose within "
        'lower="-3.14159" upper="3.14159")',
    ),
    # a CAD export's lower="0" upper="0": a joint that cannot move
    (
        '<limit effort="0" lower="0" upper="0" velocity="1"/>',
        "limit lower=0.0 upper=0.0 has lower = upper: the joint cannot move",
        'give bounds in rad with lower < upper: the range the joint has, or make it type="fixed"',
    ),
]


@pytest.mark.parametrize(("limit", "end", "hint"), LIMITS, ids=["lower>upper", "lower=upper"])
def test_invalid_joint_limit_says_which_way_the_bounds_are_wrong(
    repo: Path, limit: str, end: str, hint: str
) -> None:
    break_urdf(repo, [(J1_LIMIT, limit)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    (finding,) = exc.value.findings
    assert finding.code == "invalid_joint_limit"
    assert finding.message == f"joint 'joint_1' {end}"
    assert finding.hint == hint
