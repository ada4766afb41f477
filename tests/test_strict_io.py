"""The strict input layer refuses what a robot description never needs."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.findings import ContractError
from pipeline.strict_io import (
    atomic_write,
    dump_json,
    parse_json,
    parse_xml,
    read_bytes,
    read_fd,
    read_regular,
    require_source,
    source_line,
)


def codes(exc: pytest.ExceptionInfo[ContractError]) -> list[tuple[str, str]]:
    return [(f.code, f.place) for f in exc.value.findings]


@pytest.mark.parametrize(
    ("text", "code", "place"),
    [
        ('{"a": 1, "a": 2}', "duplicate_key", "/a"),
        ('{"x": {"y": [1, {"k": 0, "k": 0}]}}', "duplicate_key", "/x/y/1/k"),
        ('{"a": NaN}', "non_finite_number", "/a"),
        ('{"a": [Infinity]}', "non_finite_number", "/a/0"),
        ('{"a": -Infinity}', "non_finite_number", "/a"),
        ('{"a": 1e999}', "non_finite_number", "/a"),
        # an integer int() refuses to read (over 4300 digits) crashed the reader
        ('{"a": [1' + "0" * 5000 + "]}", "non_finite_number", "/a/0"),
        # one beyond a double's range crashed the rules that read numbers as floats
        ('{"a": -1' + "0" * 400 + "}", "non_finite_number", "/a"),
        ("[1, 2]", "root_not_object", "/"),
        ('{"a": 1', "invalid_json", "1:8"),
        ("", "invalid_json", "1:1"),
    ],
)
def test_json_refusals(text: str, code: str, place: str) -> None:
    with pytest.raises(ContractError) as exc:
        parse_json(text.encode(), "x.json")
    assert codes(exc) == [(code, place)]
    assert exc.value.findings[0].line().startswith(f"x.json:{place}: {code}: ")


def test_json_not_utf8() -> None:
    with pytest.raises(ContractError) as exc:
        parse_json(b'{"a": "\xff"}', "x.json")
    assert codes(exc) == [("not_utf8", "byte 7")]


def test_json_escaped_pointer() -> None:
    with pytest.raises(ContractError) as exc:
        parse_json(b'{"a/b": {"c~d": 1, "c~d": 2}}', "x.json")
    assert codes(exc) == [("duplicate_key", "/a~1b/c~0d")]


def test_json_accepts_plain_object() -> None:
    assert parse_json(b'{"a": [1, 2.5, "x"]}', "x.json") == {"a": [1, 2.5, "x"]}


def test_json_accepts_integers_a_double_holds() -> None:
    big = int(1.7e308)
    assert parse_json(f'{{"a": {big}, "b": -{big}}}'.encode(), "x.json") == {"a": big, "b": -big}


def test_non_finite_number_names_a_huge_integer_briefly() -> None:
    with pytest.raises(ContractError) as exc:
        parse_json(b'{"a": 1' + b"0" * 5000 + b"}", "x.json")
    assert len(exc.value.findings[0].line()) < 200


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


def test_read_bytes_limits(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101)
    with pytest.raises(ContractError) as exc:
        read_bytes(big, "big.json", 100)
    assert exc.value.findings[0].code == "file_too_large"
    link = tmp_path / "link.json"
    link.symlink_to(big)
    with pytest.raises(ContractError) as exc:
        read_bytes(link, "link.json", 1000)
    assert exc.value.findings[0].code == "symlink_refused"
    with pytest.raises(ContractError) as exc:
        read_bytes(tmp_path / "nope", "nope", 1000)
    assert exc.value.findings[0].code == "file_missing"


@pytest.mark.parametrize(
    ("files", "hint"),
    [
        (["my_arm.urdf"], "rename my_arm.urdf to robot.urdf: each folder in robots/ holds its"),
        (["a.URDF", "b.urdf"], "rename a.URDF or b.urdf to robot.urdf"),
        (["README.md"], "add robot.urdf, or move the folder out of robots/"),
        (None, "create it or correct the path that names it"),
    ],
    ids=["file_missing-misnamed", "file_missing-two-candidates", "file_missing-none", "no-folder"],
)
def test_file_missing_a_source_folder_without_its_defining_file(
    tmp_path: Path, files: list[str] | None, hint: str
) -> None:
    folder = tmp_path / "robots" / "my_arm"
    for name in files or []:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("x")
    with pytest.raises(ContractError) as exc:
        require_source(folder, "robot.urdf", "robots/my_arm/robot.urdf")
    [finding] = exc.value.findings
    assert (finding.code, finding.file, finding.message) == (
        "file_missing",
        "robots/my_arm/robot.urdf",
        "file does not exist",
    )
    assert finding.hint.startswith(hint)


def test_file_missing_a_cell_folder_offers_only_machine_files_to_rename(tmp_path: Path) -> None:
    folder = tmp_path / "cells" / "my_cell"
    folder.mkdir(parents=True)
    (folder / "calibration.json").write_text("{}")
    with pytest.raises(ContractError) as exc:
        require_source(folder, "machine.json", "cells/my_cell/machine.json", like="*machine*.json")
    assert exc.value.findings[0].hint.startswith("add machine.json, or move the folder out of")
    (folder / "Machine_Config.JSON").write_text("{}")
    with pytest.raises(ContractError) as exc:
        require_source(folder, "machine.json", "cells/my_cell/machine.json", like="*machine*.json")
    assert exc.value.findings[0].hint.startswith("rename Machine_Config.JSON to machine.json")


def test_require_source_accepts_a_folder_holding_the_file(tmp_path: Path) -> None:
    (tmp_path / "machine.json").write_text("{}")
    require_source(tmp_path, "machine.json", "cells/x/machine.json")


def test_dump_json_is_canonical() -> None:
    assert (
        dump_json({"b": 0.1, "a": [1, "é"]})
        == '{\n  "a": [\n    1,\n    "é"\n  ],\n  "b": 0.1\n}\n'.encode()
    )


def test_atomic_write_replaces_and_skips_equal(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.json"
    assert atomic_write(target, b"one")
    assert not atomic_write(target, b"one")
    assert atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]


@pytest.mark.parametrize(
    ("make", "limit", "expected"),
    [
        (lambda p: p.write_bytes(b"abc"), 3, b"abc"),
        (lambda p: p.write_bytes(b""), 0, b""),
        (lambda p: p.write_bytes(b"abcd"), 3, None),  # over the limit
        (lambda p: None, 3, None),  # missing
        (lambda p: p.mkdir(), 3, None),
        (lambda p: os.mkfifo(p), 3, None),  # refused at once, not waited on
    ],
    ids=["file", "empty", "over-limit", "missing", "folder", "fifo"],
)
def test_read_regular_reads_only_regular_files_within_the_limit(
    tmp_path: Path, make: Callable[[Path], object], limit: int, expected: bytes | None
) -> None:
    path = tmp_path / "x"
    make(path)
    found = read_regular(path, limit)
    assert (None if found is None else found[0]) == expected
    if found is not None:
        assert found[1].st_size == len(found[0])


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


@pytest.mark.parametrize(("limit", "expected"), [(1 << 30, b"abc" + b"d" * 5_000_000), (4, None)])
def test_read_fd_reads_what_a_file_grew_by_since_its_stat(
    tmp_path: Path, limit: int, expected: bytes | None
) -> None:
    """A file written to while it is read: all of it, or None once past the limit."""
    path = tmp_path / "x"
    path.write_bytes(b"abc")
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        with open(path, "ab") as grow:
            grow.write(b"d" * 5_000_000)
        assert read_fd(fd, size, limit) == expected
    finally:
        os.close(fd)


def test_a_finding_stays_one_printable_line() -> None:
    """A key (or a file name) with a line break or a lone surrogate split or broke the line."""
    with pytest.raises(ContractError) as exc:
        parse_json(b'{"a\\nb": 1, "a\\nb": 2, "\\udcff": 1, "\\udcff": 2}', "x.json")
    lines = [finding.line() for finding in exc.value.findings]
    assert lines == [
        "x.json:/a\\nb: duplicate_key: key 'a\\nb' appears more than once; "
        "keep exactly one entry for each key",
        "x.json:/\\udcff: duplicate_key: key '\\udcff' appears more than once; "
        "keep exactly one entry for each key",
    ]


def test_lone_surrogate_keys_and_strings_are_found_where_they_are() -> None:
    """Config and rt-core files are copied into build/ for UTF-8 readers: a lone surrogate in
    a key or a string is refused there (a manifest path is refused by its own rule)."""
    from pipeline.strict_io import lone_surrogates

    document = parse_json(
        b'{"a": ["ok", "x\\udc00"], "\\ud800": {"b": "\\ud83d\\ude00"}}', "x.json"
    )
    found = lone_surrogates(document, "x.json")
    assert [(f.code, f.place) for f in found] == [
        ("lone_surrogate", "/a/1"),
        ("lone_surrogate", "/\ud800"),
    ]
