"""Likely mistakes warned of, not refused: collision_scale_mismatch, geometry_out_of_proportion,
visual_without_collision, frame_name_leading_slash, rpy_likely_degrees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.cli import main
from pipeline.description import make_urdf_copies, read_urdf_sources
from pipeline.findings import Severity
from pipeline.spheres.extent import SPAN_CAP, SPAN_FLOOR, extent_findings, span_bound
from pipeline.urdf import Box, Collision, Joint, Link, Origin, Robot
from tests.conftest import REPO
from tests.test_urdf import break_urdf

ABB = "robots/abb_irb2400"
L1_STL = "package://abb_irb2400/meshes/link_1.stl"
MM = "package://abb_irb2400/meshes/link_1_mm.stl"


def _mesh(uri: str, scale: str | None = None) -> str:
    return f'<mesh filename="{uri}"' + ("" if scale is None else f' scale="{scale}"') + "/>"


L1_VISUAL = _mesh("package://abb_irb2400/meshes/link_1.dae")
L1_COLLISION = _mesh(L1_STL)
BASE_COLLISION = _mesh("package://abb_irb2400/meshes/base_link.stl")


def _box(length: float) -> str:
    return f'<box size="{length} 0.2 0.2"/>'


def _millimetre_link_1(repo: Path) -> None:
    """meshes/link_1_mm.stl: the shipped binary STL of link_1 exported in millimetres."""
    data = bytearray((repo / ABB / "meshes" / "link_1.stl").read_bytes())
    count = int.from_bytes(data[80:84], "little")
    triangle = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])
    triangles = np.frombuffer(bytes(data), dtype=triangle, count=count, offset=84).copy()
    triangles["corners"] *= 1000
    (repo / ABB / "meshes" / "link_1_mm.stl").write_bytes(bytes(data[:84]) + triangles.tobytes())


def _element(tag: str, inner: str) -> str:
    """The shipped URDF's whole `<tag>` element holding `inner`, with its indent and line end."""
    text = (REPO / ABB / "robot.urdf").read_text()
    at = text.index(inner)
    start = text.rindex("\n", 0, text.rindex(f"<{tag}>", 0, at)) + 1
    end = text.index(f"</{tag}>\n", at) + len(f"</{tag}>\n")
    return text[start:end]


L1_COLLISION_ELEMENT = _element("collision", L1_COLLISION)
L1_VISUAL_ELEMENT = _element("visual", L1_VISUAL)
NO_L1_COLLISION = (L1_COLLISION_ELEMENT, "")
MM_VISUAL = (L1_VISUAL, _mesh(MM, "0.001 0.001 0.001"))
MM_COLLISION = (L1_COLLISION, _mesh(MM))
J2_ORIGIN = '<origin rpy="0 0 0" xyz="0.1 0 0.615"/>'
ORANGE = '<color rgba="0.7372549 0.3490196 0.1607843 1"/>'
L1_VISUAL_ORIGIN = '<origin rpy="0 0 0" xyz="0 0 0"/>\n      <geometry>\n        ' + L1_VISUAL


def _j2_rpy(rpy: str) -> str:
    """joint_2's <origin> with that rpy."""
    return J2_ORIGIN.replace('rpy="0 0 0"', f'rpy="{rpy}"')


# (case id naming the rule, edits of the shipped abb_irb2400 URDF, the warnings expected)
CASES = [
    # the new user's AL5D: the visual scaled to metres, the collision naming the file not
    (
        "collision_scale_mismatch-millimetres",
        [MM_VISUAL, MM_COLLISION],
        ["collision_scale_mismatch", "geometry_out_of_proportion"],
    ),
    # the other way round: a mesh in metres, the collision scaled to 1/1000 of it
    (
        "collision_scale_mismatch-shrunk",
        [(L1_VISUAL, L1_COLLISION), (L1_COLLISION, _mesh(L1_STL, "0.001 1 1"))],
        ["collision_scale_mismatch"],
    ),
    # a collision mesh padded by scaling it: meant, not a units mistake
    ("none-padded", [(L1_VISUAL, L1_COLLISION), (L1_COLLISION, _mesh(L1_STL, "1.1 1.1 1.1"))], []),
    # both in millimetres, both scaled
    ("none-both-scaled", [MM_VISUAL, (L1_COLLISION, _mesh(MM, "0.001 0.001 0.001"))], []),
    # a millimetre collision mesh beside a visual of another file: out of proportion only
    ("geometry_out_of_proportion-millimetres", [MM_COLLISION], ["geometry_out_of_proportion"]),
    # a 50 m track under the base: within 100 times joint_3's 0.705 m offset
    ("none-long-track", [(BASE_COLLISION, _box(50))], []),
    # an 80 m one: beyond it
    (
        "geometry_out_of_proportion-box",
        [(BASE_COLLISION, _box(80))],
        ["geometry_out_of_proportion"],
    ),
    # minitaur's motor_front_leftR_link: drawn, never collided with
    ("visual_without_collision-mesh", [NO_L1_COLLISION], ["visual_without_collision"]),
    # a visual box and no collision: the same
    (
        "visual_without_collision-box",
        [NO_L1_COLLISION, (L1_VISUAL, _box(0.3))],
        ["visual_without_collision"],
    ),
    # neither visual nor collision (as tool0): a frame, not a forgotten collision
    (
        "none-no-visual",
        [NO_L1_COLLISION, (L1_VISUAL_ELEMENT, "")],
        [],
    ),
    # a collision and no visual: collided with, just not drawn
    ("none-collision-only", [(L1_VISUAL, L1_COLLISION)], []),
    # xacro's empty robot_name prefix: tf2 refuses '/link_6' as a frame id
    (
        "frame_name_leading_slash",
        [
            ('<link name="link_6">', '<link name="/link_6">'),
            ('<child link="link_6"/>', '<child link="/link_6"/>'),
            ('<parent link="link_6"/>', '<parent link="/link_6"/>'),
        ],
        ["frame_name_leading_slash"],
    ),
    # an angle past a full turn, as one in degrees is: on a joint's <origin>, a visual's
    ("rpy_likely_degrees-joint", [(J2_ORIGIN, _j2_rpy("0 90 0"))], ["rpy_likely_degrees"]),
    (
        "rpy_likely_degrees-visual",
        [(L1_VISUAL_ORIGIN, L1_VISUAL_ORIGIN.replace('rpy="0 0 0"', 'rpy="-180 0 0"'))],
        ["rpy_likely_degrees"],
    ),
    # a colour in 8-bit values (0 to 255), as image editors give them: Tesseract reads it as
    # written, and a viewer clamps it to white
    (
        "color_out_of_range-8-bit",
        [(ORANGE, '<color rgba="188 89 41 255"/>')],
        ["color_out_of_range"],
    ),
    (
        "color_out_of_range-negative",
        [(ORANGE, '<color rgba="1 0.5 -0.2 1"/>')],
        ["color_out_of_range"],
    ),
    # a <texture filename=""> names no file: Tesseract loads it (measured by
    # tests/test_tesseract_materials.py), so it is ignored, not refused as <texture/> is
    (
        "empty_texture_filename",
        [(ORANGE, ORANGE + '<texture filename=""/>')],
        ["empty_texture_filename"],
    ),
    # 0 and 1 themselves are fractions
    ("none-color-ends", [(ORANGE, '<color rgba="0 1 0 0"/>')], []),
    # a full turn as written to four places, and half a turn: radians
    ("none-full-turn", [(J2_ORIGIN, _j2_rpy("6.2832 -3.1416 0"))], []),
    # a slash inside a name is a ROS namespace, read by tf2
    (
        "none-slash-inside",
        [
            ('<link name="link_6">', '<link name="arm/link_6">'),
            ('<child link="link_6"/>', '<child link="arm/link_6"/>'),
            ('<parent link="link_6"/>', '<parent link="arm/link_6"/>'),
        ],
        [],
    ),
]


@pytest.mark.parametrize(("case", "edits", "codes"), CASES, ids=[c[0] for c in CASES])
def test_units_mistake_is_a_warning(
    repo: Path, case: str, edits: list[tuple[str, str]], codes: list[str]
) -> None:
    _millimetre_link_1(repo)
    break_urdf(repo, edits)
    sources = read_urdf_sources(repo, "abb_irb2400")
    assert sorted(f.code for f in sources.warnings) == codes, sources.warnings
    assert all(f.severity is Severity.WARNING for f in sources.warnings)
    assert all(f.line().endswith("(warning)") for f in sources.warnings)


def test_collision_scale_mismatch_names_the_collision_mesh_line_and_both_scales(
    repo: Path,
) -> None:
    _millimetre_link_1(repo)
    break_urdf(repo, [MM_VISUAL, MM_COLLISION])
    warning = next(
        f
        for f in read_urdf_sources(repo, "abb_irb2400").warnings
        if f.code == "collision_scale_mismatch"
    )
    line = (repo / ABB / "robot.urdf").read_text().splitlines()[int(warning.place) - 1]
    assert "<mesh" in line and "link_1_mm.stl" in line and "scale" not in line
    assert '"1 1 1"' in warning.message and '"0.001 0.001 0.001"' in warning.message
    assert "1000 times" in warning.message
    assert 'scale="0.001 0.001 0.001"' in warning.hint


def test_collision_scale_mismatch_hint_offers_either_scale_when_the_visual_is_wrong(
    repo: Path,
) -> None:
    """The trial's millimetre mesh scaled right on its <collision> and not on its <visual>: the
    fix said to give the collision the visual's "1 1 1", a collision model 1000 times too large."""
    _millimetre_link_1(repo)
    break_urdf(repo, [(L1_VISUAL, _mesh(MM)), (L1_COLLISION, _mesh(MM, "0.001 0.001 0.001"))])
    [warning] = [
        f
        for f in read_urdf_sources(repo, "abb_irb2400").warnings
        if f.code == "collision_scale_mismatch"
    ]
    assert "1/1000 of the size" in warning.message
    assert '"1 1 1"' in warning.hint and '"0.001 0.001 0.001"' in warning.hint
    assert 'the <collision>\'s "0.001 0.001 0.001"' in warning.hint


def test_color_out_of_range_gives_the_fractions_of_8_bit_values(repo: Path) -> None:
    """An image editor's 188 89 41 255 is the shipped orange: the fix writes it in fractions."""
    break_urdf(repo, [(ORANGE, '<color rgba="188 89 41 255"/>')])
    [warning] = read_urdf_sources(repo, "abb_irb2400").warnings
    assert (warning.code, warning.place) == ("color_out_of_range", "38")
    assert "188 is outside 0 to 1" in warning.message
    assert warning.hint == 'divide 8-bit values by 255: rgba="0.7373 0.349 0.1608 1"'


def test_shipped_robots_have_no_warning() -> None:
    for model_id in ("abb_irb2400", "lbr_iiwa_14_r820"):
        assert read_urdf_sources(REPO, model_id).warnings == ()


def test_validate_prints_the_warning_and_says_ok(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _millimetre_link_1(repo)
    break_urdf(repo, [MM_VISUAL, MM_COLLISION])
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 0
    out, err = capsys.readouterr()
    assert out == "validate: abb_irb2400 ok, 2 warning(s)\n"
    lines = err.splitlines()
    assert [line.split(": ")[1] for line in lines] == [
        "geometry_out_of_proportion",
        "collision_scale_mismatch",
    ]
    assert all(line.startswith(f"{ABB}/robot.urdf:") for line in lines)
    assert main(["--json", "validate", "abb_irb2400"]) == 0
    assert '"severity": "warning"' in capsys.readouterr().err


def test_validate_prints_warnings_with_the_errors(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _millimetre_link_1(repo)
    break_urdf(repo, [MM_VISUAL, MM_COLLISION])
    (repo / ABB / "config.json").write_text("{")
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "collision_scale_mismatch" in err and "invalid_json" in err


def test_urdf_step_prints_the_warning_and_copies_the_same_bytes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The step's stderr is what doit shows; its outputs are the sources' bytes as ever."""
    _millimetre_link_1(repo)
    break_urdf(repo, [MM_VISUAL, MM_COLLISION])
    copies = make_urdf_copies(repo, "abb_irb2400")
    urdf = (repo / ABB / "robot.urdf").read_bytes()
    assert copies["build/robots/abb_irb2400/robot.urdf"] == urdf
    assert "collision_scale_mismatch" in capsys.readouterr().err


def _robot(*offsets: float, length: float = 0.0) -> Robot:
    """A robot of one link, a box `length` m long (no collision when 0), and fixed joints."""
    joints = tuple(
        Joint(f"j{i}", "fixed", "a", "b", Origin((x, 0.0, 0.0)), (0, 0, 1), None, None, 1)
        for i, x in enumerate(offsets)
    )
    box = (Collision(Origin(), Box((length, 0.05, 0.05)), 2),) if length else ()
    return Robot("r", (Link("a", box, (), 1),), joints)


@pytest.mark.parametrize(
    ("offsets", "bound"),
    [
        ((), SPAN_FLOOR),  # no joint offset: the floor
        ((0.0, 0.05), SPAN_FLOOR),  # a small robot: the floor
        ((0.705, 0.3), 70.5),  # as the IRB 2400: 100 times its longest offset
        ((615.0,), SPAN_CAP),  # a URDF in millimetres throughout: the cap
    ],
    ids=["no-joints", "floor", "proportion", "cap"],
)
def test_geometry_out_of_proportion_bound(offsets: tuple[float, ...], bound: float) -> None:
    assert span_bound(_robot(*offsets)) == pytest.approx(bound)


@pytest.mark.parametrize(
    ("offsets", "length", "why"),
    [
        # pybullet's cartpole: a 30 m slide bar, every joint offset 0
        ((0.0,), 30.0, "the least bound: 100 times the robot's longest joint offset, 0 m, is less"),
        ((0.705, 0.3), 80.0, "100 times the robot's longest joint offset, 0.705 m"),
        ((615.0,), 2000.0, "the largest bound, whatever the joints"),
    ],
    ids=["floor", "proportion", "cap"],
)
def test_geometry_out_of_proportion_says_where_its_bound_comes_from(
    offsets: tuple[float, ...], length: float, why: str
) -> None:
    [finding] = extent_findings(_robot(*offsets, length=length), {})
    assert finding.code == "geometry_out_of_proportion"
    assert f"({why}): it is likely in other units" in finding.message


@pytest.mark.parametrize("scale", ["0 0 0", "-1 1 1", "nan 1 1"])
def test_a_refused_scale_is_its_own_finding_not_a_mismatch(repo: Path, scale: str) -> None:
    """A zero, mirroring or NaN collision scale beside its visual is refused by its own rule;
    the mismatch warning neither divides by it nor adds a line."""
    from pipeline.findings import ContractError

    break_urdf(repo, [(L1_VISUAL, L1_COLLISION), (L1_COLLISION, _mesh(L1_STL, scale))])
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    codes = [f.code for f in exc.value.findings]
    assert codes and "collision_scale_mismatch" not in codes


def test_visual_without_collision_names_the_link_line_and_its_visual_mesh(repo: Path) -> None:
    break_urdf(repo, [NO_L1_COLLISION])
    (warning,) = read_urdf_sources(repo, "abb_irb2400").warnings
    line = (repo / ABB / "robot.urdf").read_text().splitlines()[int(warning.place) - 1]
    assert line.strip() == '<link name="link_1">'
    assert warning.file == f"{ABB}/robot.urdf"
    assert "'link_1'" in warning.message and "no <collision>" in warning.message
    assert "package://abb_irb2400/meshes/link_1.dae" in warning.hint
    assert "remove its <visual>" in warning.hint


def test_visual_without_collision_offers_no_glb_as_the_collision_mesh(repo: Path) -> None:
    """dexmate-urdf's vega: wheels drawn from .glb files, no <collision>. The fix offered the
    .glb as the collision mesh, which mesh_format_unsupported then refuses: it now says to
    export it, and a visual mesh of a collision format beside it is offered first."""
    (repo / ABB / "meshes" / "link_1.glb").write_bytes(b"glTF\x02\x00\x00\x00")
    glb = _mesh("package://abb_irb2400/meshes/link_1.glb")
    break_urdf(repo, [NO_L1_COLLISION, (L1_VISUAL, glb)])
    (warning,) = read_urdf_sources(repo, "abb_irb2400").warnings
    assert "'package://abb_irb2400/meshes/link_1.glb' exported as binary STL" in warning.hint
    assert "a box or cylinder around it" in warning.hint
    second = L1_VISUAL_ELEMENT.replace(glb, L1_VISUAL)
    break_urdf(repo, [(L1_VISUAL_ELEMENT.replace(L1_VISUAL, glb), L1_VISUAL_ELEMENT + second)])
    (warning,) = read_urdf_sources(repo, "abb_irb2400").warnings
    assert "e.g. the visual's mesh 'package://abb_irb2400/meshes/link_1.dae'" in warning.hint


def test_a_refused_collision_is_its_own_finding_not_visual_without_collision(
    repo: Path,
) -> None:
    """link_1's only <collision> dropped for a bad size: the error says so, and no warning
    adds that the link has none."""
    from pipeline.findings import ContractError

    break_urdf(repo, [(L1_COLLISION, '<box size="0 1 1"/>')])
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    codes = [f.code for f in exc.value.findings]
    assert "invalid_geometry" in codes and "visual_without_collision" not in codes


@pytest.mark.parametrize(
    "visual",
    [
        _mesh("../meshes/link_1.dae"),  # mesh_uri_not_package
        _mesh("package://abb_irb2400/meshes/link_1.dae", "0.001 -0.001 0.001"),  # mirroring
        '<box size="0.3 0 0.2"/>',  # a box sized 0 on one axis
    ],
)
def test_a_refused_visual_is_still_a_visual_without_collision(repo: Path, visual: str) -> None:
    """fourier-robot-descriptions' GR1T2: 22 links drawn from '../meshes/gr1t2/...' and never
    collided with. Their visuals refused (mesh_uri_not_package), the links were not warned of,
    and the 22 warnings came only once the URIs were fixed: the link has its <visual> whatever
    that visual's own finding, so the warning comes in the same run, naming one <visual>."""
    from pipeline.findings import ContractError

    break_urdf(repo, [NO_L1_COLLISION, (L1_VISUAL, visual)])
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    warnings = [f for f in exc.value.findings if f.code == "visual_without_collision"]
    assert len(exc.value.findings) == 2 and len(warnings) == 1, exc.value.findings
    assert "link 'link_1' has a <visual> and no <collision>" in warnings[0].message


def test_validate_and_the_urdf_step_print_visual_without_collision(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    break_urdf(repo, [NO_L1_COLLISION])
    urdf = (repo / ABB / "robot.urdf").read_bytes()
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 0
    out, err = capsys.readouterr()
    assert out == "validate: abb_irb2400 ok, 1 warning(s)\n"
    assert err.startswith(f"{ABB}/robot.urdf:") and ": visual_without_collision: " in err
    assert err.rstrip("\n").endswith("(warning)")
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert copies["build/robots/abb_irb2400/robot.urdf"] == urdf
    assert "visual_without_collision" in capsys.readouterr().err


@pytest.mark.parametrize("scale", ["1e-200 1e-200 1e-200", "1e-300 1e-300 1e-300"])
def test_geometry_out_of_range_a_scale_whose_areas_underflow_names_the_mesh_element(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scale: str
) -> None:
    """It was mesh_empty on the mesh file, with no place, and asked to export the mesh again."""
    path = break_urdf(repo, [(L1_COLLISION, _mesh(L1_STL, scale))])
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    place, code = line.split(": ")[:2]
    assert code == "geometry_out_of_range" and place.startswith(f"{ABB}/robot.urdf:")
    assert "<mesh" in path.read_text().splitlines()[int(place.rsplit(":", 1)[1]) - 1]
    assert f'<mesh scale="{scale}"> of meshes/link_1.stl leaves no triangle' in line


@pytest.mark.parametrize(
    ("size", "says"),
    [
        # a float32 STL's 1e-5 is 9.99999975e-06: it was told "spans 1e-05 m, under 1e-05 m"
        (9.99999974738e-06, "spans 9.9999997e-06 m, under 1e-05 m"),
        (4e-6, "spans 4e-06 m, under 1e-05 m"),
    ],
)
def test_geometry_out_of_range_shows_a_span_just_under_the_bound_as_under_it(
    size: float, says: str
) -> None:
    robot = Robot("r", (Link("a", (Collision(Origin(), Box((size,) * 3), 2),), (), 1),), ())
    [finding] = extent_findings(robot, {})
    assert finding.code == "geometry_out_of_range"
    assert says in finding.message
