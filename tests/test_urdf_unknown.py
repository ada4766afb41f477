"""Misspelt and misplaced URDF tags and attributes: unknown_element, unknown_attribute."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.description import read_urdf_sources
from pipeline.findings import ContractError, Finding, Severity
from tests.test_urdf import break_urdf

ABB = "robots/abb_irb2400"
L1_ORIGIN = '<collision>\n      <origin rpy="0 0 0" xyz="0 0 0"/>'
L1_MESH = '<mesh filename="package://abb_irb2400/meshes/link_1.stl"/>'
BASE_COLLISION = (
    "<collision>\n      <geometry>\n        "
    '<mesh filename="package://abb_irb2400/meshes/base_link.stl"/>'
)
BASE_END = '</collision>\n  </link>\n  <link name="link_1">'
J2_ORIGIN = '<origin rpy="0 0 0" xyz="0.1 0 0.615"/>'
J1_AXIS = '<child link="link_1"/>\n    <axis xyz="0 0 1"/>'

# (case, edits, the warnings' codes, the text on the line each names, a part of each hint)
CASES = [
    (
        "unknown_element-misspelt-origin",
        [(L1_ORIGIN, L1_ORIGIN.replace("<origin", "<orgin"))],
        ["unknown_element"],
        ["<orgin"],
        ["did you mean <origin>?"],
    ),
    (
        "unknown_element-origin-in-link",
        [('<link name="link_1">', '<link name="link_1">\n    <origin xyz="0 0 0.1"/>')],
        ["unknown_element"],
        ['<origin xyz="0 0 0.1"/>'],
        ["move it into the <joint>, <visual>, <collision> or <inertial> it places"],
    ),
    # airo-models' Robotiq 2F-85 (xacro output): an identity <origin> in its root link, which
    # places nothing wherever it stands; moving it was the fix
    (
        "unknown_element-identity-origin-in-link",
        [('<link name="link_1">', '<link name="link_1">\n    <origin rpy="0 0 0" xyz="0 0 0"/>')],
        ["unknown_element"],
        ['<origin rpy="0 0 0" xyz="0 0 0"/>'],
        ["remove it: it is the identity (xyz and rpy 0), which places nothing"],
    ),
    (
        "unknown_element-misspelt-collision",
        [
            (BASE_COLLISION, BASE_COLLISION.replace("<collision>", "<colision>")),
            (BASE_END, BASE_END.replace("</collision>", "</colision>")),
        ],
        # the link keeps a <visual> and now has no <collision>: warned of too
        ["unknown_element", "visual_without_collision"],
        ["<colision>", '<link name="base_link">'],
        ["did you mean <collision>?", "add a <collision>"],
    ),
    (
        "unknown_element-mass-in-joint",
        [(J1_AXIS, J1_AXIS + '\n    <mass value="3"/>')],
        ["unknown_element"],
        ['<mass value="3"/>'],
        ["move it into the link's <inertial>"],
    ),
    (
        "unknown_attribute-misspelt-rpy",
        [(L1_ORIGIN, L1_ORIGIN.replace('rpy="0 0 0"', 'ryp="0 0 1.57"'))],
        ["unknown_attribute"],
        ['ryp="0 0 1.57"'],
        ["did you mean rpy?"],
    ),
    (
        "unknown_attribute-upper-case",
        [(J2_ORIGIN, J2_ORIGIN.replace("xyz=", "XYZ="))],
        ["unknown_attribute"],
        ['XYZ="0.1 0 0.615"'],
        ["did you mean xyz?"],
    ),
    (
        "unknown_attribute-mesh-units",
        [(L1_MESH, L1_MESH.replace("/>", ' units="mm"/>'))],
        ["unknown_attribute"],
        ['units="mm"'],
        ["a <mesh> reads filename and scale only"],
    ),
    (
        "unknown_attribute-origin-quaternion",
        [(L1_ORIGIN, L1_ORIGIN.replace("/>", ' quat_xyzw="0 0 0 1"/>'))],
        ["unknown_attribute"],
        ['quat_xyzw="0 0 0 1"'],
        ["an <origin> reads xyz and rpy only"],
    ),
    (
        "unknown_element-collision-in-robot",
        [
            (
                "</robot>",
                '  <collision><geometry><box size="1 1 1"/></geometry></collision>\n</robot>',
            )
        ],
        ["unknown_element"],
        ["<collision>"],
        ["move it into a <link>"],
    ),
    # pybullet_data's racecar.urdf: a <material> after the <mesh> of a visual's <geometry>,
    # which every URDF reader (Tesseract, urdfdom: the first element alone) reads past; the
    # material named is none of the robot's, and nothing reads it to say so
    (
        "unknown_element-material-after-visual-mesh",
        [
            (
                '<link name="link_1">',
                '<link name="link_1">\n    <visual><geometry>'
                + L1_MESH
                + '\n      <material name="grey"/></geometry></visual>',
            )
        ],
        ["unknown_element"],
        ['<material name="grey"/>'],
        ["move it into the <visual>"],
    ),
    (
        "unknown_element-material-after-collision-mesh",
        [(L1_MESH, L1_MESH + '\n        <material name="grey"/>')],
        ["unknown_element"],
        ['<material name="grey"/>'],
        ["remove it"],
    ),
    (
        "unknown_element-other-after-box",
        [(L1_MESH, '<box size="0.1 0.1 0.1"/><colour/>')],
        ["unknown_element"],
        ["<colour/>"],
        ["a <geometry>'s first element alone"],
    ),
    # simulator extensions, as pybullet_data and gym-ignition's URDFs hold them: no slip of a
    # URDF name and no URDF tag out of place (the shipped base_link already holds a <material>
    # in its <collision>)
    (
        "none-extensions",
        [
            (
                '<link name="link_1">',
                '<link name="link_1">\n    <contact><lateral_friction/></contact>',
            ),
            (L1_ORIGIN, L1_ORIGIN + "\n      <surface><friction/></surface>"),
            (J1_AXIS, J1_AXIS.replace("/>", ' rpy="0 0 0"/>')),
            (L1_MESH, L1_MESH.replace("/>", ' xmlns:x="urn:x" x:units="mm"/>')),
        ],
        [],
        [],
        [],
    ),
    ("none-shipped", [], [], [], []),
]


@pytest.mark.parametrize(
    ("case", "edits", "codes", "lines", "hints"), CASES, ids=[c[0] for c in CASES]
)
def test_a_slip_in_a_urdf_name_is_a_warning_at_its_line(
    repo: Path,
    case: str,
    edits: list[tuple[str, str]],
    codes: list[str],
    lines: list[str],
    hints: list[str],
) -> None:
    break_urdf(repo, edits)
    text = (repo / ABB / "robot.urdf").read_text().splitlines()
    warnings = read_urdf_sources(repo, "abb_irb2400").warnings
    assert sorted(w.code for w in warnings) == codes
    for warning, line, hint in zip(
        sorted(warnings, key=lambda w: w.code), lines, hints, strict=True
    ):
        assert warning.severity is Severity.WARNING
        assert warning.file == f"{ABB}/robot.urdf"
        assert line in text[int(warning.place) - 1]
        assert hint in warning.hint


@pytest.mark.parametrize("model_id", ["abb_irb2400", "lbr_iiwa_14_r820"])
def test_the_shipped_robots_have_no_slips(repo: Path, model_id: str) -> None:
    codes = {w.code for w in read_urdf_sources(repo, model_id).warnings}
    assert not codes & {"unknown_element", "unknown_attribute"}


def test_a_shape_outside_its_geometry_is_one_error_not_also_a_warning(repo: Path) -> None:
    """`<collision><mesh/></collision>`: invalid_geometry says it, once."""
    unwrapped = '<collision>\n      <mesh filename="package://abb_irb2400/meshes/base_link.stl"/>'
    break_urdf(repo, [(BASE_COLLISION + "\n      </geometry>", unwrapped)])
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    codes = [f.code for f in exc.value.findings]
    assert "invalid_geometry" in codes and "unknown_element" not in codes


def test_validate_prints_the_slip_and_passes(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    break_urdf(repo, [(L1_ORIGIN, L1_ORIGIN.replace("<origin", "<orgin"))])
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 0
    out, err = capsys.readouterr()
    assert out == "validate: abb_irb2400 ok, 1 warning(s)\n"
    assert err == (
        f"{ABB}/robot.urdf:61: unknown_element: <collision> holds <orgin>, which URDF readers "
        "ignore; did you mean <origin>? rename it (warning)\n"
    )


def test_a_misspelt_joint_is_named_beside_the_tree_it_breaks(repo: Path) -> None:
    """`<jiont>`: tool0 then hangs from nothing, an error; the warning says why."""
    tool0 = '<joint name="joint_6-tool0" type="fixed">'
    break_urdf(
        repo,
        [
            (tool0, tool0.replace("<joint", "<jiont")),
            ("  </joint>\n  <!-- end", "  </jiont>\n  <!-- end"),
        ],
    )
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    found = {f.code: f for f in exc.value.findings}
    assert "not_single_rooted" in found
    assert found["unknown_element"].hint == "did you mean <joint>? rename it"


INERTIA = 'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"'


def _findings(repo: Path, edits: list[tuple[str, str]]) -> list[Finding]:
    break_urdf(repo, edits)
    try:
        return list(read_urdf_sources(repo, "abb_irb2400").warnings)
    except ContractError as exc:
        return list(exc.findings)


@pytest.mark.parametrize(
    ("inner", "hint"),
    [
        # one slip from <inertial>, but a URDF tag out of place first: renaming it would not do
        (f"<inertia {INERTIA}/>", "move it into the link's <inertial>"),
        # iyx= beside ixx=: ixx is there already, so ixy is the one meant
        (
            f'<inertial><mass value="1"/><inertia {INERTIA.replace("ixy", "iyx")}/></inertial>',
            "did you mean ixy? rename it",
        ),
    ],
    ids=["inertia-in-link", "iyx-beside-ixx"],
)
def test_the_fix_names_what_was_meant(repo: Path, inner: str, hint: str) -> None:
    found = _findings(repo, [('<link name="link_1">', f'<link name="link_1">\n    {inner}')])
    assert [f.hint for f in found if f.code.startswith("unknown_")] == [hint]


def test_a_name_thousands_of_letters_long_is_cut_short_in_the_message(repo: Path) -> None:
    """A hostile URDF's 5,000-letter attribute: named by its first 40 letters and its length,
    and compared with the URDF's names without filling a 5,000-row table."""
    name = "x" * 5000
    origin = '<origin rpy="0 0 0" xyz="0.1 0 0.615"/>'
    found = _findings(repo, [(origin, origin.replace("/>", f' {name}="1"/>'))])
    (warning,) = [f for f in found if f.code == "unknown_attribute"]
    assert warning.message.startswith(f"<origin> has {'x' * 40}... (5000 characters)='1'")


def test_an_element_of_hundreds_of_unknown_attributes_is_named_without_values(repo: Path) -> None:
    """lxml finds a value by its name, so showing all of 2,000 long-named attributes' values
    took seconds; past 64 attributes an element's unknown ones are named alone."""
    origin = '<origin rpy="0 0 0" xyz="0.1 0 0.615"/>'
    extra = " ".join(f'q{i}="1"' for i in range(100))
    found = _findings(repo, [(origin, origin.replace("/>", f" {extra}/>"))])
    warnings = [f for f in found if f.code == "unknown_attribute"]
    assert len(warnings) == 100
    assert warnings[0].message == "<origin> has q0, which URDF readers ignore"
