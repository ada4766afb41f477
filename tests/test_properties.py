"""Property tests: any input to the readers gives a result or ContractError, never another error.

Inputs are arbitrary bytes, text over each format's own alphabet, and the real robots' files
mutated (bytes cut, repeated or flipped; attribute values and JSON scalars replaced by hostile
strings). Example counts stay modest so the default suite stays fast.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipeline.calibration import check_calibration, parse_calibration
from pipeline.config import config_from_bytes, load_config
from pipeline.findings import ContractError, Finding
from pipeline.identity import identity_of
from pipeline.machine import parse_machine
from pipeline.manifest import MANIFEST_NAME, path_findings, read_manifest
from pipeline.rtcore import definition_from_bytes
from pipeline.srdf.read import parse_srdf
from pipeline.srdf.validate import check_srdf
from pipeline.strict_io import is_utf8
from pipeline.strict_json import parse_json
from pipeline.strict_xml import parse_xml
from pipeline.urdf import check_rules, load_robot, parse_urdf
from tests.conftest import REPO

ABB = REPO / "robots" / "abb_irb2400"
URDF_BYTES = (ABB / "robot.urdf").read_bytes()
SRDF_BYTES = (REPO / "build" / "robots" / "abb_irb2400" / "robot.srdf").read_bytes()
CONFIG_BYTES = (ABB / "config.json").read_bytes()
RTCORE_BYTES = (ABB / "rtcore_definition.json").read_bytes()
CALIBRATION_BYTES = (
    REPO / "cells" / "weld_cell_a" / "machine_planning_calibration.json"
).read_bytes()
MACHINE_BYTES = (REPO / "cells" / "weld_cell_a" / "machine.json").read_bytes()
ROBOT = load_robot(ABB, REPO)
CONFIG = load_config(ABB, ROBOT, REPO)
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Strings a hostile or careless author might put where a name, number or path belongs.
HOSTILE_TEXT = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "nan",
            "inf",
            "-inf",
            "1e309",
            "-0",
            "0x10",
            "1 2",
            "1 2 3 4",
            "1,2,3",
            "../../etc/passwd",
            "/etc/passwd",
            "file:///etc/passwd",
            "package://abb_irb2400/meshes/../robot.urdf",
            "C:\\x",
            "\x00",
            "\ud800",
            "&amp;",
            "é",
            "9" * 400,
        ]
    ),
    st.text(max_size=20),
)


def _mutate_bytes(data: bytes, draw: Any) -> bytes:
    """Cut, repeat, flip or insert at a drawn place."""
    kind = draw(st.sampled_from(["cut", "repeat", "flip", "insert", "drop"]))
    start = draw(st.integers(0, len(data)))
    end = draw(st.integers(start, min(len(data), start + 200)))
    if kind == "cut":
        return data[:start]
    if kind == "repeat":
        return data[:end] + data[start:end] + data[end:]
    if kind == "flip" and start < len(data):
        return data[:start] + bytes([data[start] ^ draw(st.integers(1, 255))]) + data[start + 1 :]
    if kind == "insert":
        return data[:start] + draw(st.binary(max_size=20)) + data[start:]
    return data[:start] + data[end:]


@st.composite
def mutated(draw: Any, data: bytes) -> bytes:
    """The bytes with one to three random byte-level mutations."""
    for _ in range(draw(st.integers(1, 3))):
        data = _mutate_bytes(data, draw)
    return data


ATTRIBUTE = re.compile(rb'="[^"]*"')


@st.composite
def xml_with_hostile_attribute(draw: Any, data: bytes) -> bytes:
    """The XML with one attribute value replaced by a hostile string (escaped as XML needs)."""
    spans = [m.span() for m in ATTRIBUTE.finditer(data)]
    start, end = draw(st.sampled_from(spans))
    value = draw(HOSTILE_TEXT)
    escaped = value.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    return data[:start] + b'="' + escaped.encode("utf-8", "surrogatepass") + b'"' + data[end:]


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    HOSTILE_TEXT,
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(HOSTILE_TEXT, inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def json_with_hostile_value(draw: Any, data: bytes) -> bytes:
    """The JSON document with one value somewhere in it replaced by a drawn JSON value."""
    document = json.loads(data)
    path: list[Any] = []
    node: Any = document
    while isinstance(node, (dict, list)) and node and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
        path.append(key)
        node = node[key]
    if not path:
        return json.dumps(draw(JSON_VALUES)).encode("utf-8")
    parent: Any = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = draw(JSON_VALUES)
    return json.dumps(document, indent=2).encode("utf-8", "surrogatepass")


def _findings_only(call: Any, *args: Any) -> Any:
    """Call; a ContractError is an allowed outcome (with well-formed findings)."""
    try:
        return call(*args)
    except ContractError as exc:
        assert exc.findings
        assert all(isinstance(f, Finding) and f.code and f.file for f in exc.findings)
        return None


XML_ALPHABET = st.text(alphabet="<>/=\"' !?-[]&;#xabcdefgrobtnmlk:\n0123456789.", max_size=300)
JSON_ALPHABET = st.text(alphabet='{}[]":,. -+0123456789eEtrufalsnNIiy\\u\n', max_size=200)


@SETTINGS
@given(st.one_of(st.binary(max_size=300), JSON_ALPHABET.map(str.encode), mutated(CONFIG_BYTES)))
@example(b'{"a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}")
@example(b'{"a": ' + b"[" * 900 + b"]" * 900 + b"}")  # was a RecursionError traceback
@example(b'{"a": 1e999}')
@example(b'"\\ud800"')
def test_parse_json_gives_object_or_contract_error(data: bytes) -> None:
    result = _findings_only(parse_json, data, "x.json")
    assert result is None or isinstance(result, dict)


@SETTINGS
@given(st.one_of(st.binary(max_size=300), XML_ALPHABET.map(str.encode), mutated(URDF_BYTES)))
@example(b"<a>" * 10_000 + b"</a>" * 10_000)
@example(b'<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><a>&e;</a>')
def test_parse_xml_gives_element_or_contract_error(data: bytes) -> None:
    _findings_only(parse_xml, data, "x.xml")


@SETTINGS
@given(st.one_of(mutated(URDF_BYTES), xml_with_hostile_attribute(URDF_BYTES)))
def test_urdf_reader_and_rules_give_model_or_contract_error(data: bytes) -> None:
    parsed = _findings_only(parse_urdf, data, "robot.urdf", "abb_irb2400")
    if parsed is not None:
        robot, findings = parsed
        assert all(isinstance(f, Finding) for f in [*findings, *check_rules(robot)])


@SETTINGS
@given(st.one_of(mutated(SRDF_BYTES), xml_with_hostile_attribute(SRDF_BYTES)))
def test_srdf_reader_and_rules_give_model_or_contract_error(data: bytes) -> None:
    root = _findings_only(parse_xml, data, "robot.srdf")
    if root is not None:
        srdf, findings = parse_srdf(root, "robot.srdf", use_lines=True)
        assert all(isinstance(f, Finding) for f in findings)
        if not findings:
            assert all(isinstance(f, Finding) for f in check_srdf(srdf, ROBOT, "robot.srdf"))


@SETTINGS
@given(st.one_of(mutated(CONFIG_BYTES), json_with_hostile_value(CONFIG_BYTES)))
def test_config_reader_gives_model_or_contract_error(data: bytes) -> None:
    _findings_only(config_from_bytes, data, ROBOT, "config.json")


@SETTINGS
@given(st.one_of(mutated(RTCORE_BYTES), json_with_hostile_value(RTCORE_BYTES)))
def test_rtcore_reader_gives_model_or_contract_error(data: bytes) -> None:
    _findings_only(definition_from_bytes, data, ROBOT, "rtcore_definition.json")


@SETTINGS
@given(st.one_of(mutated(CALIBRATION_BYTES), json_with_hostile_value(CALIBRATION_BYTES)))
def test_calibration_reader_and_rules_give_model_or_contract_error(data: bytes) -> None:
    calibration = _findings_only(parse_calibration, data, "c.json")
    if calibration is not None:
        findings = check_calibration(calibration, "abb_irb2400", ROBOT, CONFIG, "c.json")
        assert all(isinstance(f, Finding) for f in findings)


@SETTINGS
@given(st.one_of(mutated(MACHINE_BYTES), json_with_hostile_value(MACHINE_BYTES)))
def test_machine_config_reader_gives_model_or_contract_error(data: bytes) -> None:
    _findings_only(parse_machine, data, "machine.json")


PATH_TEXT = st.one_of(
    HOSTILE_TEXT,
    st.lists(
        st.sampled_from(["", ".", "..", "meshes", "a.stl", "\\", "C:", "/", "robot.urdf"]),
        max_size=5,
    ).map("/".join),
)


@SETTINGS
@given(st.one_of(PATH_TEXT, JSON_SCALARS, st.lists(st.integers(), max_size=2)))
@example("meshes/../../x")
@example("C:/x")
@example("\\\\server\\share")
@example("meshes/\ud800.stl")
@example("meshes/a\x00.stl")
def test_manifest_path_rules_accept_only_paths_that_stay_inside(path: object) -> None:
    findings = path_findings(path, 0, set(), "m.json")
    assert all(isinstance(f, Finding) for f in findings)
    if not findings:
        assert isinstance(path, str)
        inside = PurePosixPath("/description") / path
        assert not PurePosixPath(path).is_absolute()
        assert "\\" not in path and "\x00" not in path
        assert ".." not in PurePosixPath(path).parts
        assert str(inside).startswith("/description/")
        path.encode("utf-8")


@SETTINGS
@given(files=st.lists(st.one_of(PATH_TEXT, JSON_SCALARS), max_size=5), extra=JSON_VALUES)
@example(files=["meshes/\ud800.stl"], extra=None)
@example(files=["meshes/a\x00.stl"], extra=None)
def test_read_manifest_gives_manifest_or_contract_error(
    tmp_path_factory: Any, files: list[Any], extra: Any
) -> None:
    folder = tmp_path_factory.mktemp("d") / "abb_irb2400"
    folder.mkdir()
    (folder / "meshes").mkdir()
    (folder / "meshes" / "a.stl").write_bytes(b"solid")
    (folder / "robot.urdf").write_bytes(b"<robot/>")
    data = {"schema": "rosie.robot-manifest.v1", "model_id": "abb_irb2400", "files": files}
    if isinstance(extra, dict):
        data.update(extra)
    text = json.dumps(data).encode("utf-8")
    (folder / MANIFEST_NAME).write_bytes(text)
    manifest = _findings_only(read_manifest, folder, "d")
    if manifest is not None:
        for name in manifest.files:
            assert (folder / name).resolve().is_relative_to(folder.resolve())


# Paths are unique in a checked manifest (duplicate_path) and valid UTF-8 (invalid_path_character).
ENTRIES = st.lists(
    st.tuples(PATH_TEXT.filter(is_utf8), st.binary(min_size=32, max_size=32)),
    max_size=6,
    unique_by=lambda entry: entry[0],
)


@SETTINGS
@given(entries=ENTRIES, seed=st.randoms())
def test_identity_of_is_well_formed_and_order_free(
    entries: list[tuple[str, bytes]], seed: Any
) -> None:
    identity = identity_of(entries)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", identity)
    shuffled = list(entries)
    seed.shuffle(shuffled)
    assert identity_of(shuffled) == identity
