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
