"""Strict JSON refuses what a robot description never needs; canonical dumps."""

from __future__ import annotations

import pytest

from pipeline.findings import ContractError
from pipeline.strict_json import dump_json, lone_surrogates, parse_json


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


def test_invalid_json_control_character_says_which() -> None:
    """Python's message ends 'Invalid control character at', the rest cut off by the place."""
    with pytest.raises(ContractError) as exc:
        parse_json(b'{"axis": "rax\x01_1"}', "x.json")
    [finding] = exc.value.findings
    assert (finding.code, finding.place) == ("invalid_json", "1:14")
    assert finding.message == "Invalid control character '\\x01'"


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


def test_dump_json_is_canonical() -> None:
    assert (
        dump_json({"b": 0.1, "a": [1, "é"]})
        == '{\n  "a": [\n    1,\n    "é"\n  ],\n  "b": 0.1\n}\n'.encode()
    )


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
    document = parse_json(
        b'{"a": ["ok", "x\\udc00"], "\\ud800": {"b": "\\ud83d\\ude00"}}', "x.json"
    )
    found = lone_surrogates(document, "x.json")
    assert [(f.code, f.place) for f in found] == [
        ("lone_surrogate", "/a/1"),
        ("lone_surrogate", "/\ud800"),
    ]
