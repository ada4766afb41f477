"""machine.json: the fields of a refused one that can still be trusted, and its strict model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline.findings import ContractError
from pipeline.machine import MACHINE_SCHEMA, Pin, machine_fields, parse_machine, pin_path_findings
from pipeline.schemas import check_schema
from tests.conftest import REPO

SHIPPED = json.loads((REPO / "cells/weld_cell_a/machine.json").read_bytes())
SHA = SHIPPED["robot"]["machine_planning_calibration"]["sha256"]
PATH = "machine_planning_calibration.json"


def _doc(**robot: Any) -> dict[str, Any]:
    pin = {**SHIPPED["robot"]["machine_planning_calibration"], **robot.pop("pin", {})}
    pin = {k: v for k, v in pin.items() if v is not None}
    return {**SHIPPED, "robot": {"model_id": "abb_irb2400", "machine_planning_calibration": pin}}


# (case, document, the fields trusted: cell_id, model_id, whole pin?, pin path, pin sha256)
CASES: list[tuple[str, Any, tuple[str | None, str | None, bool, str | None, str | None]]] = [
    ("valid", _doc(), ("weld_cell_a", "abb_irb2400", True, PATH, SHA)),
    (
        "invalid_value-cell_id",
        {**_doc(), "cell_id": "weld cell"},
        (None, "abb_irb2400", True, PATH, SHA),
    ),
    (
        "unexpected_field-top",
        {**_doc(), "owner": "line 3"},
        ("weld_cell_a", "abb_irb2400", True, PATH, SHA),
    ),
    (
        "invalid_value-sha256",
        _doc(pin={"sha256": "x"}),
        ("weld_cell_a", "abb_irb2400", False, PATH, None),
    ),
    (
        "missing_field-source",
        _doc(pin={"source": None}),
        ("weld_cell_a", "abb_irb2400", False, PATH, SHA),
    ),
    (
        "missing_field-path",
        _doc(pin={"path": None}),
        ("weld_cell_a", "abb_irb2400", False, None, SHA),
    ),
    ("wrong_type-path", _doc(pin={"path": 7}), ("weld_cell_a", "abb_irb2400", False, None, SHA)),
    (
        "wrong_type-model_id",
        {**_doc(), "robot": {**_doc()["robot"], "model_id": 7}},
        ("weld_cell_a", None, True, PATH, SHA),
    ),
    ("wrong_type-robot", {**SHIPPED, "robot": "abb"}, ("weld_cell_a", None, False, None, None)),
]


@pytest.mark.parametrize(("case", "doc", "trusted"), CASES, ids=[c[0] for c in CASES])
def test_machine_fields_trusts_only_what_no_finding_is_about(
    case: str,
    doc: dict[str, Any],
    trusted: tuple[str | None, str | None, bool, str | None, str | None],
) -> None:
    findings = check_schema(doc, MACHINE_SCHEMA, "machine.json")
    codes = [f.code for f in findings]
    assert codes == [] if case == "valid" else codes == [case.split("-")[0]]
    fields = machine_fields(doc, findings)
    cell_id, model_id, whole, path, sha256 = trusted
    assert (fields.cell_id, fields.model_id, fields.pin_path, fields.pin_sha256) == (
        cell_id,
        model_id,
        path,
        sha256,
    )
    assert (fields.pin is not None) == whole
    assert not fields.unpinned


def test_machine_fields_of_a_cell_without_a_pin_say_it_serves_the_empty_document() -> None:
    doc = {**SHIPPED, "robot": {"model_id": "abb_irb2400"}}
    fields = machine_fields(doc, check_schema(doc, MACHINE_SCHEMA, "machine.json"))
    assert fields.unpinned and fields.pin is None and fields.pin_path is None


def test_parse_machine_gives_the_model_or_every_schema_finding() -> None:
    data = (REPO / "cells/weld_cell_a/machine.json").read_bytes()
    machine = parse_machine(data, "machine.json")
    assert machine.pin == Pin(PATH, SHA, SHIPPED["robot"]["machine_planning_calibration"]["source"])
    with pytest.raises(ContractError) as exc:
        parse_machine(json.dumps({**_doc(pin={"sha256": "x"}), "cell_id": "a b"}).encode(), "m")
    assert [f.code for f in exc.value.findings] == ["invalid_value", "invalid_value"]


@pytest.mark.parametrize(
    ("pinned", "problem"),
    [
        ("/cells/weld_cell_a/cal.json", "is absolute"),
        ("cal\\v2.json", "uses '\\'"),
        # a finding line pasted as the path: its 'a:' read as a drive, said to be a '\'
        ("a:1: fake_code: x.json", "starts as a Windows drive does ('a:')"),
    ],
    ids=["absolute", "backslash", "drive"],
)
def test_pin_path_outside_cell_says_which_form_of_path_it_is(pinned: str, problem: str) -> None:
    [finding] = pin_path_findings(REPO / "cells" / "weld_cell_a", pinned, "machine.json")
    assert finding.code == "pin_path_outside_cell"
    assert finding.message == f"pin path {pinned!r} {problem}"


# a pin of another form than 64 bare lowercase hex digits: "write it in that form", said
# alone, left a new user to guess what was wrong with a digest they had copied (a trial)
PIN_FORMS = [
    ("upper_case", SHA.upper(), f"write the same digits in lower case: {SHA}"),
    ("identity_form", f"sha256:{SHA}", f"leave out 'sha256:' (cell.json's form): {SHA}"),
    ("sha512", "ab" * 64, "128 hex digits, the length of a SHA-512"),
    ("sha512_named", "sha512:" + "ab" * 64, "128 hex digits, the length of a SHA-512"),
    ("md5", "ab" * 16, "32 hex digits, the length of an MD5"),
    ("sha1", "ab" * 20, "40 hex digits, the length of a SHA-1"),
    ("sha256sum_line", f"{SHA}  {PATH}", f"only the digest, not what follows it: {SHA}"),
    ("other", "x", "the SHA-256 of the file's exact bytes"),
]


@pytest.mark.parametrize(
    ("written", "fix"), [c[1:] for c in PIN_FORMS], ids=[c[0] for c in PIN_FORMS]
)
def test_invalid_value_a_pin_of_another_form_says_how_to_write_it(written: str, fix: str) -> None:
    with pytest.raises(ContractError) as exc:
        parse_machine(json.dumps(_doc(pin={"sha256": written})).encode(), "m.json")
    [finding] = exc.value.findings
    assert finding.code == "invalid_value" and finding.place.endswith("/sha256")
    assert fix in finding.hint, finding.line()
    assert "sha256sum" in finding.hint or SHA in finding.hint, finding.line()
