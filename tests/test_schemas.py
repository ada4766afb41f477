"""Packaged JSON Schemas, the findings check_schema makes, and the templates that mirror them."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pipeline.annotated_templates import bare_template_bytes, template_bytes, template_names
from pipeline.cli import main
from pipeline.config import config_findings
from pipeline.findings import unshowable
from pipeline.rtcore import definition_findings
from pipeline.schemas import FORMS, check_schema, load_schema, schema_names
from pipeline.urdf import load_robot
from tests.conftest import REPO

# template name -> (schema it annotates, doc page that describes every field)
TEMPLATES = {
    "robot": ("robot-definition", "docs/rtcore.md"),
    "config": ("robot-config", "docs/config.md"),
}
DOC = "_doc"


def resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref`s to `#/$defs/...`."""
    while "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        node = {**root["$defs"][name], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def drift(template: Any, node: dict[str, Any], root: dict[str, Any], where: str) -> list[str]:
    """Every place where the template's fields and the schema's differ, or a doc is missing."""
    node = resolve(node, root)
    problems: list[str] = []
    if "properties" in node or node.get("additionalProperties") is False:
        expected = set(node.get("properties", {}))
    elif isinstance(node.get("additionalProperties"), dict):
        expected = (
            {k for k in template if not k.endswith(DOC)} if isinstance(template, dict) else set()
        )
        if len(expected) != 1:
            problems.append(f"{where}: a map needs exactly one placeholder entry")
    elif node.get("type") == "array" and isinstance(node.get("items"), dict):
        items = resolve(node["items"], root)
        if items.get("type") == "object" and isinstance(template, list) and template:
            problems += drift(template[0], items, root, where + "/0")
        return problems
    else:
        return problems
    if not isinstance(template, dict):
        return [f"{where}: template has {template!r} where the schema has an object"]
    fields = {k for k in template if not k.endswith(DOC)}
    docs = {k[: -len(DOC)] for k in template if k.endswith(DOC)}
    problems += [f"{where}/{k}: in the schema, not in the template" for k in expected - fields]
    problems += [f"{where}/{k}: in the template, not in the schema" for k in fields - expected]
    problems += [f"{where}/{k}: no {k}{DOC}" for k in fields - docs]
    problems += [f"{where}/{k}{DOC}: documents nothing" for k in docs - fields]
    for key in sorted(fields & expected):
        child = node["properties"][key] if "properties" in node else node["additionalProperties"]
        problems += drift(template[key], child, root, f"{where}/{key}")
    return problems


def without_docs(value: Any) -> Any:
    """The template with every `_doc` field removed."""
    if isinstance(value, dict):
        return {k: without_docs(v) for k, v in value.items() if not k.endswith(DOC)}
    if isinstance(value, list):
        return [without_docs(v) for v in value]
    return value


def docs_of(value: Any) -> list[str]:
    """Every `_doc` text of the template."""
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out += [item] if key.endswith(DOC) else docs_of(item)
    elif isinstance(value, list):
        for item in value:
            out += docs_of(item)
    return out


def property_names(node: Any) -> set[str]:
    """Every property name a schema defines, at any depth."""
    names: set[str] = set()
    if isinstance(node, dict):
        names |= set(node.get("properties", {}))
        for value in node.values():
            names |= property_names(value)
    elif isinstance(node, list):
        for value in node:
            names |= property_names(value)
    return names


def object_schemas(node: Any) -> list[dict[str, Any]]:
    """Every subschema that describes an object."""
    out: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            out.append(node)
        for value in node.values():
            out += object_schemas(value)
    elif isinstance(node, list):
        for value in node:
            out += object_schemas(value)
    return out


@pytest.mark.parametrize("name", ["robot-config", "robot-definition"])
def test_schema_is_draft_2020_12_and_closed_at_every_level(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    for node in object_schemas(schema):
        # Closed objects refuse unknown fields; maps (joint name -> value) constrain each value.
        assert node.get("additionalProperties") is False or (
            "properties" not in node and isinstance(node.get("additionalProperties"), dict)
        ), node.get("description")


def patterns(node: Any) -> set[str]:
    """Every `pattern` of a schema."""
    if isinstance(node, dict):
        found = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return found.union(*(patterns(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(patterns(value) for value in node))
    return set()


def test_every_pattern_of_the_packaged_schemas_is_said_in_words() -> None:
    """A cell_id with a space was refused with the raw regex and "write a text of the
    documented form"."""
    used = set().union(*(patterns(load_schema(name)) for name in schema_names()))
    assert used == set(FORMS)


@pytest.mark.parametrize(
    ("cell_id", "says", "hint"),
    [
        (
            "weld cell",
            "'weld cell' is not a name of letters, digits, '.', '_' and '-'",
            "write it in that form, e.g. 'weld_cell'",
        ),
        (
            "_cell",
            "'_cell' is not a name of letters, digits, '.', '_' and '-'",
            "write it in that form, e.g. 'cell'",
        ),
        ("cell\n", "'cell\\n' is not a name of letters", "write it in that form, e.g. 'cell'"),
        # an accent, as a hostile-input trial's cells/cé: the letter without it
        ("cé", "'cé' is not a name of letters", "write it in that form, e.g. 'ce'"),
        # nothing of a name in it: the form alone
        ("***", "'***' is not a name of letters", "write it in that form"),
    ],
)
def test_invalid_value_a_pattern_is_said_in_words(cell_id: str, says: str, hint: str) -> None:
    """The fix of a name of another form gives the name in that form (it said only 'write it in
    that form', leaving the user to guess what a space or an accent becomes)."""
    doc = {"schema": "rosie.machine-config.v1", "cell_id": cell_id}
    [finding] = [
        f for f in check_schema(doc, "machine-config", "machine.json") if f.place == "/cell_id"
    ]
    assert finding.code == "invalid_value"
    assert finding.message.startswith(says)
    assert "^" not in finding.message and finding.hint == hint


def test_invalid_value_a_text_over_its_max_length_says_so() -> None:
    """A 5000-character cell_id was `schema_violation: 'aaaa...` with the verdict cut off its
    end and "see the schema for what is allowed" (hostile sweep)."""
    doc = {"schema": "rosie.machine-config.v1", "cell_id": "a" * 5000}
    [finding] = [
        f for f in check_schema(doc, "machine-config", "machine.json") if f.place == "/cell_id"
    ]
    assert (finding.code, finding.hint) == ("invalid_value", "write at most 128 characters")
    assert finding.message == f"{'a' * 5000!r}"[:57] + "... is 5000 characters long, over 128"


# each free text of the schemas: (schema, a document holding `text` there, its place)
FREE_TEXTS: list[tuple[str, Callable[[str], dict[str, Any]], str]] = [
    (
        "machine-config",
        lambda text: {"robot": {"machine_planning_calibration": {"source": text}}},
        "/robot/machine_planning_calibration/source",
    ),
    ("robot-config", lambda text: {"provenance": {"planning": text}}, "/provenance/planning"),
    (
        "robot-config",
        lambda text: {"axes": {"joint_1": {"controller_axis": text}}},
        "/axes/joint_1/controller_axis",
    ),
    (
        "robot-definition",
        lambda text: {"joints": {"joint_1": {"gear_ratio_source": text}}},
        "/joints/joint_1/gear_ratio_source",
    ),
]
# a text -> the code of its finding (None: accepted)
CONTROL_TEXTS: list[tuple[str, str | None]] = [
    ("datasheet p. 12", None),
    ("r\u00e9glage \u2192 \u00b5m", None),  # any printable character, of any script
    ("a\x00b", "invalid_text_character"),  # NUL: a C reader of cell.json stops there
    ("a\tb", "invalid_text_character"),
    ("a\nb", "invalid_text_character"),
    ("a\rb", "invalid_text_character"),
    ("a\x1b[2Jb", "invalid_text_character"),  # a terminal's escape sequence
    ("a\x7fb", "invalid_text_character"),  # DEL
    ("a\x85b", "invalid_text_character"),  # C1: NEL, a line break to some readers
    ("a\x9fb", "invalid_text_character"),
    ("ab\n", "invalid_text_character"),  # a final line break, which `$` matches before
    (" \t ", "invalid_text_character"),  # blank, and a tab: the character is the fix
    ("   ", "invalid_value"),  # blank
    # what a finding's line escapes (a name of a URDF link refuses these too): a line or
    # paragraph separator splits a line, a bidirectional control shows the text reordered
    ("a\u2028b", "invalid_text_character"),
    ("a\u2029b", "invalid_text_character"),
    ("tracker \u202erun 7", "invalid_text_character"),
    ("a\u2066b\u2069", "invalid_text_character"),
    ("a\u200fb", "invalid_text_character"),
    ("a\u061cb", "invalid_text_character"),
    ("a\u200bb \u00a0c", None),  # a note is read, not matched: invisible characters pass
]


@pytest.mark.parametrize(
    ("schema", "document", "place"), FREE_TEXTS, ids=[f"{s}{p}" for s, _, p in FREE_TEXTS]
)
@pytest.mark.parametrize(("text", "code"), CONTROL_TEXTS)
def test_invalid_text_character_in_a_free_text_is_refused(
    schema: str, document: Callable[[str], dict[str, Any]], place: str, text: str, code: str | None
) -> None:
    """A free text escaping a control character ("\\u0000") passed as non-blank, and
    machine.json's calibration source reached cell.json holding it."""
    found = [f for f in check_schema(document(text), schema, "x.json") if f.place == place]
    assert [f.code for f in found] == ([code] if code else [])
    if code == "invalid_value":  # it said "'   ' is not a text that is not blank"
        assert found[0].message.endswith("is blank: empty, or spaces only")
    if code == "invalid_text_character":
        assert "control character" in found[0].message and "printable" in found[0].hint
        first = unshowable(text)
        assert first is not None and f"(U+{ord(first):04X})" in found[0].message


def test_packaged_schemas_are_found() -> None:
    assert {"robot-config", "robot-definition"} <= set(schema_names())
    assert {"robot", "config"} <= set(template_names())


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_template_fields_are_exactly_the_schemas(template: str) -> None:
    schema = load_schema(TEMPLATES[template][0])
    annotated = json.loads(template_bytes(template))
    assert drift(annotated, schema, schema, "") == []


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_template_values_fit_the_schema(template: str) -> None:
    annotated = json.loads(template_bytes(template))
    assert check_schema(without_docs(annotated), TEMPLATES[template][0], "t.json") == []


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_every_template_doc_gives_unit_range_and_default(template: str) -> None:
    for text in docs_of(json.loads(template_bytes(template))):
        assert re.search(r"Unit: .+\. Range: .+\. Default: .+\.$", text), text


def test_drift_is_caught() -> None:
    schema = load_schema("robot-definition")
    annotated = json.loads(template_bytes("robot"))
    drive = annotated["joints"]["<joint name>"]
    del drive["gear_ratio"], drive["gear_ratio_doc"]
    drive["brake_voltage"] = 24
    del drive["direction_doc"]
    assert sorted(drift(annotated, schema, schema, "")) == [
        "/joints/<joint name>/brake_voltage: in the template, not in the schema",
        "/joints/<joint name>/brake_voltage: no brake_voltage_doc",
        "/joints/<joint name>/direction: no direction_doc",
        "/joints/<joint name>/gear_ratio: in the schema, not in the template",
    ]


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_docs_describe_every_field(template: str) -> None:
    schema_name, page = TEMPLATES[template]
    text = (REPO / page).read_text()
    missing = [name for name in property_names(load_schema(schema_name)) if f"`{name}`" not in text]
    assert missing == []


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_cli_prints_the_template_byte_for_byte(
    template: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["template", template]) == 0
    assert capsysbinary.readouterr().out == template_bytes(template)
    assert (
        template_bytes(template) == (REPO / "pipeline/templates" / f"{template}.json").read_bytes()
    )


# template name -> the findings of a file of that template's schema, given the model's URDF
FINDINGS = {"robot": definition_findings, "config": config_findings}


def note_places(value: Any, parts: str = "") -> list[str]:
    """The JSON pointer of every `_doc` note of the template."""
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            place = f"{parts}/{key.replace('~', '~0').replace('/', '~1')}"
            out += [place] if key.endswith(DOC) else note_places(item, place)
    return out


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_template_used_as_written_gives_one_finding_per_note(template: str) -> None:
    """The new-user trial: `pipeline template config > robots/X/config.json` gave a note of a
    joint's entry wrong_type and unknown_joint too, and no word of the notes being notes."""
    robot = load_robot(REPO / "robots" / "abb_irb2400", REPO)
    data = template_bytes(template).replace(b"<model_id>", b"abb_irb2400")
    found = FINDINGS[template](data, "abb_irb2400", robot, "f.json")
    places = note_places(json.loads(data))
    at_notes = [f for f in found if any(f.place.startswith(p) for p in places)]
    assert sorted(f.place for f in at_notes) == sorted(places)
    for finding in at_notes:
        assert finding.code == "unexpected_field"
        key = finding.place.rsplit("/", 1)[-1]
        note = f"{key!r} is a note of `pipeline template {template}`, not a field"
        assert finding.message == note
        assert finding.hint == (
            f"delete it and every other *_doc key ({len(places)} in this file): they are the "
            f"template's notes, to read, not fields (`pipeline template {template} --bare` "
            "prints the template without them)"
        )


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_cli_bare_template_is_the_template_without_its_notes(
    template: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["template", template, "--bare"]) == 0
    out = capsysbinary.readouterr().out
    assert json.loads(out) == without_docs(json.loads(template_bytes(template)))
    assert out == bare_template_bytes(template) and out.endswith(b"}\n") and b"_doc" not in out
    robot = load_robot(REPO / "robots" / "abb_irb2400", REPO)
    data = out.replace(b"<model_id>", b"abb_irb2400")
    codes = {f.code for f in FINDINGS[template](data, "abb_irb2400", robot, "f.json")}
    assert codes <= {"unknown_joint", "joint_not_mapped", "source_and_unverified"}  # to fill in


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_bare_template_placeholder_joint_is_told_a_placeholder_with_the_joints(
    template: str,
) -> None:
    """A new-user trial: `pipeline template config --bare` saved for a KUKA KR3 as it is had
    each `<joint name>` told "not in the URDF; name a joint of robot.urdf (check the
    spelling)": not that it is the template's placeholder, nor which joints there are."""
    robot = load_robot(REPO / "robots" / "abb_irb2400", REPO)
    data = bare_template_bytes(template).replace(b"<model_id>", b"abb_irb2400")
    found = [f for f in FINDINGS[template](data, "abb_irb2400", robot, "f.json")]
    unknown = [f for f in found if f.code == "unknown_joint"]
    assert unknown
    for finding in unknown:
        assert finding.message == "'<joint name>' is the template's placeholder, not a joint"
        assert finding.hint == (
            "replace it with a joint of robot.urdf: joint_1, joint_2, joint_3, joint_4, "
            "joint_5, joint_6"
        ), finding.hint


def test_cli_bare_srdf_template_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["template", "srdf", "abb_irb2400", "--bare"]) == 2
    assert "usage_error: the srdf template has no notes to leave out" in capsys.readouterr().err


def test_cli_unknown_template_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["template", "cell"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_each_unexpected_field_is_its_own_finding_naming_the_field() -> None:
    instance = {"schema": "rosie.robot-config.v1", "model_id": "m", "planning": {"joints": ["j"]}}
    instance |= {"zeta": 1, "alpha/beta": 2}
    findings = check_schema(instance, "robot-config", "c.json")
    assert [(f.code, f.place, f.message) for f in findings] == [  # in the document's order
        ("unexpected_field", "/zeta", "unexpected field 'zeta'"),
        ("unexpected_field", "/alpha~1beta", "unexpected field 'alpha/beta'"),
    ]
    assert all(f.file == "c.json" for f in findings)


def test_each_missing_field_is_its_own_finding() -> None:
    findings = check_schema({}, "robot-definition", "d.json")
    assert [(f.code, f.place, f.message) for f in findings] == [  # in the schema's order
        ("missing_field", "/", "required field 'schema' is missing"),
        ("missing_field", "/", "required field 'model_id' is missing"),
        ("missing_field", "/", "required field 'joints' is missing"),
    ]


def test_type_union_reports_one_finding() -> None:
    instance = {
        "schema": "rosie.robot-config.v1",
        "model_id": "m",
        "planning": {"joints": ["j"]},
        "axes": {"j": {"controller_axis": True, "sign": 1}},
    }
    findings = check_schema(instance, "robot-config", "c.json")
    assert [(f.code, f.place) for f in findings] == [("wrong_type", "/axes/j/controller_axis")]


def test_valid_document_has_no_findings() -> None:
    data = json.loads((REPO / "robots/abb_irb2400/rtcore_definition.json").read_text())
    assert check_schema(data, "robot-definition", "x") == []


def test_unknown_schema_name_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        load_schema("../robot-config")
    with pytest.raises(FileNotFoundError):
        load_schema("no-such-schema")


def test_a_schema_is_checked_against_the_meta_schema_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Checking the schema itself on every document cost 11 ms a call (202 cells: 2.9 s)."""
    from pipeline import schemas

    checked: list[str] = []
    real = Draft202012Validator.check_schema
    monkeypatch.setattr(
        Draft202012Validator,
        "check_schema",
        classmethod(lambda cls, schema: checked.append(schema["$id"]) or real(schema)),
    )
    schemas._validator.cache_clear()
    monkeypatch.setattr(schemas, "_validator", functools.cache(schemas._validator.__wrapped__))
    data = json.loads((REPO / "robots/abb_irb2400/rtcore_definition.json").read_text())
    for _ in range(3):
        assert check_schema(data, "robot-definition", "x") == []
        assert check_schema({}, "robot-definition", "d.json") != []
    assert len(checked) == 1


def test_a_digest_pattern_refuses_a_trailing_line_break() -> None:
    """jsonschema matches `pattern` with Python's re, whose `$` also matches before a final
    line break: every anchored pattern of the packaged schemas ends `(?!\\n)$` so it does not."""
    digest = "sha256:" + "0" * 64
    pattern = load_schema("spheres")["$defs"]["digest"]["pattern"]
    assert re.search(pattern, digest) and not re.search(pattern, digest + "\n")
    for name in schema_names():
        patterns = re.findall(r'"pattern": "([^"]*)"', json.dumps(load_schema(name)))
        assert all(p.endswith("(?!\\\\n)$") for p in patterns if p.endswith("$")), name


def _edit(path: Path, change: Callable[[Any], None]) -> None:
    """Apply `change` to a JSON file's document, keeping its keys' order."""
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=2))


def _settings(doc: Any) -> None:
    doc.clear()
    doc |= {"defaults": {"seed": -1, "rounds": 1e9}}


def _config(doc: Any) -> None:
    doc["axes"]["joint_1"]["controller_axis"] = -1.5  # neither text nor integer, and below 0
    doc["axes"]["joint_9"] = {"controller_axis": "rax_9", "sign": 1}  # a rule's: no such joint
    doc["reset_pose"]["joint_1"] = "zero"


def _definition(doc: Any) -> None:
    doc["joints"]["joint_1"]["drive_address"] = 70000.5  # above 65535, and not an integer
    del doc["joints"]["joint_1"]["gear_ratio_unverified"]  # a rule's: missing_source
    doc["joints"]["joint_2"]["direction"] = 2


# (file of robots/abb_irb2400, its edit, the findings `pipeline validate` prints: place, code)
ONE_PER_VALUE = [
    (
        "spheres.settings.json",
        _settings,
        [("/defaults/seed", "out_of_range"), ("/defaults/rounds", "out_of_range")],
    ),
    (
        "config.json",
        _config,
        [
            ("/axes/joint_1/controller_axis", "out_of_range"),
            ("/axes/joint_9", "unknown_joint"),
            ("/reset_pose/joint_1", "wrong_type"),
        ],
    ),
    (
        "rtcore_definition.json",
        _definition,
        [
            ("/joints/joint_1/drive_address", "out_of_range"),
            ("/joints/joint_1/gear_ratio", "missing_source"),
            ("/joints/joint_2/direction", "invalid_value"),
        ],
    ),
]


@pytest.mark.parametrize(
    ("name", "edit", "expected"), ONE_PER_VALUE, ids=[c[0] for c in ONE_PER_VALUE]
)
def test_one_finding_per_value_in_document_order(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    edit: Callable[[Any], None],
    expected: list[tuple[str, str]],
) -> None:
    """A new-user trial's {"defaults": {"seed": -1, "rounds": 1e9}} printed rounds out_of_range,
    then seed, then rounds again (wrong_type, its fraction): a value breaking several checks
    was reported once per check, apart, the schema's in its keywords' order and a document's
    own rules' after them. Now one finding per value, in the file's order."""
    folder = repo / "robots" / "abb_irb2400"
    path = folder / name
    if not path.exists():
        path.write_text("{}")
    _edit(path, edit)
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 2
    lines = capsys.readouterr().err.splitlines()
    shown = f"robots/abb_irb2400/{name}:"
    assert all(line.startswith(shown) for line in lines), lines
    assert [tuple(line[len(shown) :].split(": ")[:2]) for line in lines] == expected


def test_an_out_of_range_value_is_told_its_range() -> None:
    """The one finding of 1e9 for a count of 1 to 40 says what to write, integer and range."""
    [finding] = check_schema({"defaults": {"rounds": 1e9}}, "spheres-settings", "s.json")
    assert finding.hint == "write an integer from 1 to 40"


def test_machine_config_findings_are_in_document_order() -> None:
    """check_schema sorted its findings by JSON pointer: /cell_id before the /zz above it."""
    document = {"zz": 1, "schema": "rosie.machine-config.v1", "cell_id": "a b", "robot": {}}
    findings = check_schema(document, "machine-config", "m.json")
    assert [(f.place, f.code) for f in findings] == [
        ("/zz", "unexpected_field"),
        ("/cell_id", "invalid_value"),
        ("/robot", "missing_field"),
    ]


@pytest.mark.parametrize(
    ("schema", "path", "value"),
    [
        ("robot-config", ["axes", "joint_1", "sign"], 1.0),
        ("robot-config", ["axes", "joint_1", "controller_axis"], 3.0),
        ("spheres-settings", ["defaults", "seed"], 7.0),
    ],
    ids=["sign-enum", "controller_axis-string-or-integer", "seed"],
)
def test_wrong_type_an_integer_written_with_a_fraction(
    schema: str, path: list[str], value: float
) -> None:
    """JSON Schema's "integer" takes 1.0 (and an enum of 1 and -1 does too): every packaged
    schema's integers are written without a fraction, as the compiler's readers take them."""
    document: dict[str, Any] = (
        json.loads((REPO / "robots" / "abb_irb2400" / "config.json").read_text())
        if schema == "robot-config"
        else {"defaults": {}}
    )
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    [finding] = check_schema(document, schema, "x.json")
    assert (finding.code, finding.place) == ("wrong_type", "/" + "/".join(path))
    assert (finding.message, finding.hint) == (
        f"{value!r} is not an integer",
        f"write {int(value)} without a fraction",
    )


def test_an_array_over_its_max_items_is_one_finding_its_items_unchecked() -> None:
    """A hand-made spheres.json of 558 904 spheres (16 MB) took 32 s and 890 MB to be told it
    holds more than 64: each sphere was checked first (25 s). Its length is the one finding."""
    spheres = [{"center": [0, 0, 0], "radius": -1, "colour": "red"}] * 20_000
    digest = "sha256:" + "0" * 64
    fitter = {"name": "f", "version": "1"}
    link = {"spheres": spheres, "provenance": {"geometry_sha256": digest, "fitter": fitter}}
    link["provenance"]["fitter"] = {**fitter, "parameters": {}}
    document = {
        "schema": "rosie.robot-spheres.v1",
        "model_id": "m",
        "made_from": {"files": {}, "fitter": fitter},
        "links": {"l": link},
    }
    findings = check_schema(document, "spheres", "s.json")
    assert [(f.code, f.place, f.message) for f in findings] == [
        ("wrong_length", "/links/l/spheres", "holds 20000 items, not at most 64")
    ]


SPHERE_LENGTHS = [
    ("center-of-2", [0, 0], "holds 2 items, not 3", "write exactly 3 items"),
    ("center-of-4", [0, 0, 0, 0], "holds 4 items, not 3", "write exactly 3 items"),
]


@pytest.mark.parametrize(
    ("center", "message", "hint"),
    [r[1:] for r in SPHERE_LENGTHS],
    ids=[r[0] for r in SPHERE_LENGTHS],
)
def test_wrong_length_says_exactly_or_a_bound_in_words(
    center: list[int], message: str, hint: str
) -> None:
    """A sphere's centre of two numbers was told 'not at least 3; write at least 3 items', and
    a link of no sphere 'write at least 1 items'."""
    fitter = {"name": "f", "version": "1"}
    provenance = {"geometry_sha256": "sha256:" + "0" * 64, "fitter": {**fitter, "parameters": {}}}
    links = {
        "l": {"spheres": [{"center": center, "radius": 1}], "provenance": provenance},
        "m": {"spheres": [], "provenance": provenance},
    }
    document = {
        "schema": "rosie.robot-spheres.v1",
        "model_id": "m",
        "made_from": {"files": {}, "fitter": fitter},
        "links": links,
    }
    findings = check_schema(document, "spheres", "s.json")
    assert [(f.place, f.message, f.hint) for f in findings] == [
        ("/links/l/spheres/0/center", message, hint),
        ("/links/m/spheres", "holds 0 items, not at least 1", "write at least 1 item"),
    ]
