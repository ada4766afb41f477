"""Strict XML refuses DTDs and entities, and places findings where an element starts."""

from __future__ import annotations

import pytest

from pipeline.findings import ContractError
from pipeline.strict_xml import parse_xml, source_line

BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
<robot name="x">&lol2;</robot>"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<robot name="x">&xxe;</robot>"""


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (BOMB, "doctype_refused"),
        (EXTERNAL, "doctype_refused"),
        (b'<robot name="x"><link name="a">', "invalid_xml"),
        (b"", "invalid_xml"),
        (b"<a>" * 10000 + b"</a>" * 10000, "invalid_xml"),
        (b'<robot name="x">&amp;&unknown;</robot>', "invalid_xml"),
    ],
)
def test_xml_refusals(data: bytes, code: str) -> None:
    with pytest.raises(ContractError) as exc:
        parse_xml(data, "robot.urdf")
    assert [f.code for f in exc.value.findings] == [code]


@pytest.mark.parametrize(
    ("data", "line", "hint"),
    [
        # how pybullet_data's minitaur, laikago and many more URDFs open
        (b'<?xml version="0.0" ?>\n<robot name="x"/>\n', "1", 'write <?xml version="1.0"?>'),
        (b'\n\n<?xml version="1.0"?>\n<robot name="x"/>\n', "3", "blank lines too"),
        (b'<robot name="x">\n<link name="a">\n</robot>', "3", "fix the XML syntax"),
    ],
    ids=["invalid_xml-version-0.0", "invalid_xml-declaration-not-first", "invalid_xml-other"],
)
def test_xml_declaration_refusals_name_their_fix(data: bytes, line: str, hint: str) -> None:
    with pytest.raises(ContractError) as exc:
        parse_xml(data, "robot.urdf")
    [finding] = exc.value.findings
    assert (finding.code, finding.place) == ("invalid_xml", line)
    assert hint in finding.hint


GAZEBO_SENSOR = "http://playerstage.sourceforge.net/gazebo/xmlschema/#sensor"


@pytest.mark.parametrize(
    ("data", "line", "what", "declaration"),
    [
        # roboschool's fetch.urdf: a Gazebo camera in a <gazebo> block, sensor: undeclared
        (
            b'<!-- <a> -->\n<robot name="x">\n<gazebo>\n'
            b'<sensor:camera name="c"/>\n</gazebo>\n</robot>',
            "4",
            "the <sensor:camera> element",
            f'<robot xmlns:sensor="{GAZEBO_SENSOR}" ...>',
        ),
        (
            b'<robot name="x">\n<gazebo my:flag="1"/>\n</robot>',
            "2",
            "the attribute my:flag of <gazebo>",
            '<robot xmlns:my="urn:my" ...>',
        ),
    ],
    ids=["element", "attribute"],
)
def test_invalid_xml_undeclared_prefix_says_the_declaration_to_add(
    data: bytes, line: str, what: str, declaration: str
) -> None:
    """libxml2 said `Namespace prefix sensor on camera is not defined; fix the XML syntax`."""
    with pytest.raises(ContractError) as exc:
        parse_xml(data, "robot.urdf")
    [finding] = exc.value.findings
    assert (finding.code, finding.place) == ("invalid_xml", line)
    prefix = declaration.split(":")[1].split("=")[0]
    assert finding.message.startswith(f"the namespace prefix {prefix}: of {what} ")
    assert finding.hint == (
        f"declare it on the root element, {declaration} (any absolute URI), or remove {what}"
    )
    # followed, either fix parses
    declared = declaration.removeprefix("<robot").removesuffix(" ...>")
    parse_xml(data.replace(b"<robot", b"<robot" + declared.encode()), "robot.urdf")


@pytest.mark.parametrize(
    ("data", "line", "what"),
    [
        # how pybullet_data's humanoid.urdf ends: invisible in an editor
        (b'<robot name="x">\r\n</robot>\r\n\0', "3", "a NUL byte"),
        (b'<robot name="x"/>\n\0\0\0\n', "2", "3 NUL bytes"),
        (b'<robot name="x"/>\n<robot name="y"/>\n', "2", 'a second element, <robot name="y"/>'),
        (b'<robot name="x"/>\x01', "1", "the control byte 0x01"),
        ('<robot name="\u00e9\u00e9"/>left over'.encode(), "1", "'left over'"),
    ],
    ids=["nul", "nuls", "second-root", "control-byte", "text-after-non-ascii"],
)
def test_invalid_xml_extra_content_says_what_follows_the_root(
    data: bytes, line: str, what: str
) -> None:
    with pytest.raises(ContractError) as exc:
        parse_xml(data, "robot.urdf")
    [finding] = exc.value.findings
    assert (finding.code, finding.place) == ("invalid_xml", line)
    assert finding.message == (
        f"Extra content at the end of the document: {what} after the root element's end tag"
    )
    assert finding.hint.startswith("delete everything after the root element's end tag")


@pytest.mark.parametrize(
    ("data", "huge_text", "message"),
    [
        (b'<robot name="' + b"x" * 11_000_000 + b'"/>', False, "longer than 10 MB"),
        (b"<r>" + b"y" * 11_000_000 + b"</r>", False, "longer than 10 MB"),
        (b"<a>" * 300 + b"</a>" * 300, False, "nests elements more than 256 deep"),
        # a COLLADA mesh is read with libxml2's huge option, whose nesting limit is 2048: the
        # message said 256 there, a depth the mesh was read past
        (b"<a>" * 2100 + b"</a>" * 2100, True, "nests elements more than 2048 deep"),
    ],
    ids=["attribute", "text", "depth", "mesh-depth"],
)
def test_invalid_xml_over_libxml2_limits_names_no_parser_option(
    data: bytes, huge_text: bool, message: str
) -> None:
    """The message was libxml2's: 'try XML_PARSE_HUGE' (an option no user can set) and a newline."""
    with pytest.raises(ContractError) as exc:
        parse_xml(data, "robot.urdf", huge_text=huge_text)
    [finding] = exc.value.findings
    assert finding.code == "invalid_xml" and message in finding.message
    assert "XML_PARSE_HUGE" not in finding.message + finding.hint
    assert "\n" not in finding.message


def test_xml_reports_line() -> None:
    with pytest.raises(ContractError) as exc:
        parse_xml(b'<robot name="x">\n<link name="a">\n</robot>', "r.urdf")
    assert exc.value.findings[0].place == "3"


def test_source_line_is_where_a_start_tag_opens() -> None:
    """lxml gives the line a start tag closes on; findings point where it opens."""
    xml = (
        b'<?xml version="1.0"?>\n<robot\n  name="r" xmlns:t="urn:t">\n  <link name="a"/><link\n'
        b'    name="b"/>\n  <t:joint\n    name="j"><parent\n      link="a"/></t:joint>\n</robot>\n'
    )
    root = parse_xml(xml, "x.urdf")
    assert [(el.get("name") or el.get("link"), source_line(el)) for el in root.iter()] == [
        ("r", 2),
        ("a", 4),
        ("b", 4),
        ("j", 6),
        ("a", 7),
    ]


# libxml2 refuses one text node over 10 MB unless told otherwise; a COLLADA exporter writes all
# of a mesh's coordinates into one <float_array>, and real meshes hold more (Unitree B1's trunk).
LONG_TEXT = b"<COLLADA><float_array>" + b"0 " * (6 * 2**20) + b"</float_array></COLLADA>"


@pytest.mark.parametrize(
    ("huge_text", "refused"), [(False, True), (True, False)], ids=["urdf-srdf", "collada-mesh"]
)
def test_text_node_over_10_mb_is_read_only_in_a_mesh(huge_text: bool, refused: bool) -> None:
    if refused:
        with pytest.raises(ContractError) as exc:
            parse_xml(LONG_TEXT, "robot.urdf", huge_text=huge_text)
        assert [f.code for f in exc.value.findings] == ["invalid_xml"]
    else:
        root = parse_xml(LONG_TEXT, "meshes/trunk.dae", huge_text=huge_text)
        assert len(root[0].text or "") == 12 * 2**20


@pytest.mark.parametrize("huge_text", [False, True])
def test_entities_are_refused_with_huge_text_too(huge_text: bool) -> None:
    """huge_text lifts libxml2's size limits, never the refusal of what they guard against."""
    for data in (BOMB, EXTERNAL):
        with pytest.raises(ContractError) as exc:
            parse_xml(data, "meshes/m.dae", huge_text=huge_text)
        assert [f.code for f in exc.value.findings] == ["doctype_refused"]
