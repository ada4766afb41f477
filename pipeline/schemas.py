"""JSON Schema (Draft 2020-12) checks of parsed documents, reported as findings."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import best_match

from pipeline.findings import UNSHOWABLE, Finding, breaking, json_pointer

SCHEMA_SUFFIX = ".schema.json"

# jsonschema keyword -> (finding code, hint). Codes are stable; messages come from the check.
_CODES: dict[str, tuple[str, str]] = {
    "type": ("wrong_type", "write a value of the type the schema names"),
    "const": ("invalid_value", "write exactly the value the schema names"),
    "enum": ("invalid_value", "write one of the values the schema lists"),
    "minimum": ("out_of_range", "write a value inside the documented range"),
    "maximum": ("out_of_range", "write a value inside the documented range"),
    "exclusiveMinimum": ("out_of_range", "write a value inside the documented range"),
    "exclusiveMaximum": ("out_of_range", "write a value inside the documented range"),
    "minItems": ("wrong_length", "write the number of items the schema names"),
    "maxItems": ("wrong_length", "write the number of items the schema names"),
    "uniqueItems": ("duplicate_item", "name each item once"),
    "minLength": ("invalid_value", "write a non-empty text"),
    "maxLength": ("invalid_value", "write a shorter text"),
    "pattern": ("invalid_value", "write a text of the documented form"),
    "minProperties": ("invalid_value", "give at least one entry"),
}
# The `pattern` of every free text (a calibration's source, a provenance note, a controller's
# axis name): not blank, and none of the characters a finding's line escapes (UNSHOWABLE): a
# control character, C0 (tab and line break too), DEL or C1, a line or paragraph separator, a
# bidirectional control. The JSON reader refuses controls raw; escaped (`\u0000`), they passed,
# and a text copied into cell.json or a description served a NUL to a C string reader, a line
# break into a log line, or U+202E a text shown reversed.
TEXT = f"^(?=.*\\S)[^{UNSHOWABLE}]*(?!\\n)$"
# Each `pattern` of the packaged schemas in words, for the finding (a regex is no message);
# tests/test_schemas.py checks that every pattern has one.
NAME = "^[A-Za-z0-9][A-Za-z0-9._-]*(?!\\n)$"
FORMS: dict[str, str] = {
    NAME: (
        "a name of letters, digits, '.', '_' and '-' that starts with a letter or digit "
        "(no space, no other character)"
    ),
    "^[0-9a-f]{64}(?!\\n)$": "64 lowercase hex digits and nothing else",
    "^sha256:[0-9a-f]{64}(?!\\n)$": "'sha256:' and 64 lowercase hex digits",
    TEXT: "a text that is not blank",
}


def _schema_text(schema_name: str) -> str:
    """The text of `<schema_name>.schema.json` (or, failing that, `<schema_name>.json`)."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", schema_name):
        raise ValueError(f"not a schema name: {schema_name!r}")
    folder = resources.files("pipeline").joinpath("schemas")
    for suffix in (SCHEMA_SUFFIX, ".json"):
        candidate = folder.joinpath(schema_name + suffix)
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise FileNotFoundError(f"no packaged schema {schema_name!r} in pipeline/schemas/")


def load_schema(schema_name: str) -> dict[str, Any]:
    """The packaged schema `pipeline/schemas/<schema_name>.schema.json`, parsed."""
    schema: dict[str, Any] = json.loads(_schema_text(schema_name))
    return schema


def schema_names() -> list[str]:
    """Every packaged schema's name, sorted."""
    folder = resources.files("pipeline").joinpath("schemas")
    names = {entry.name.removesuffix(".json").removesuffix(".schema") for entry in folder.iterdir()}
    return sorted(name for name in names if not name.startswith((".", "_")))


def _is_integer(checker: object, instance: object) -> bool:
    """JSON Schema's "integer" takes 1001.0; the compiler's readers (numpy's counts, a drive
    address) and a person reading the file take it for a fraction: only 1001 is an integer."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _items(
    validator: Any, items: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """Draft 2020-12's `items`, skipped on an array over its `maxItems`: that finding is the
    one to fix first, and checking each of 558 904 spheres in a hand-made spheres.json (16 MB)
    before saying it holds more than 64 took 25 s and 890 MB."""
    if isinstance(instance, list) and len(instance) > schema.get("maxItems", len(instance)):
        return
    yield from Draft202012Validator.VALIDATORS["items"](validator, items, instance, schema)


# Draft 2020-12 with those two changes, for every packaged schema (no rule of its own elsewhere)
_Strict = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={"items": _items},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


@functools.cache
def _validator(schema_name: str) -> Draft202012Validator:
    """The validator of a packaged schema, itself checked against the meta-schema once.

    Checking the schema on every document cost 11 ms a call: 2.9 of the 19 s that 202 cells
    took to compile, each cell's machine.json and calibration read in one process.
    """
    schema = load_schema(schema_name)
    Draft202012Validator.check_schema(schema)
    validator: Draft202012Validator = _Strict(schema)
    return validator


def check_schema(instance: object, schema_name: str, display: str) -> list[Finding]:
    """Validate `instance` against a packaged schema; one finding per value, in document order."""
    findings: list[Finding] = []
    for error in _validator(schema_name).iter_errors(instance):
        findings.extend(_findings(error, display))
    return one_per_value(instance, findings)


# The codes that judge one value's content, most useful first: what to write (a value of the
# list, in the range, of the length) before the type, which the fix then has anyway. A value
# breaking several of these checks (1e9 above a maximum and, written with a fraction, not an
# integer) gets the first one's finding alone.
_VALUE_CODES = (
    "invalid_value",
    "out_of_range",
    "wrong_length",
    "duplicate_item",
    "schema_violation",
    "wrong_type",
)


def one_per_value(document: object, findings: Iterable[Finding]) -> list[Finding]:
    """`findings` about `document` in its order (a place before what it holds, a key's before
    the next key's), one per value of the codes that judge a value's content.

    The schema reports in the order of its keywords, and a document's own rules add theirs
    after it, so a value was reported twice, apart, out of the file's order.
    """
    unique = list(dict.fromkeys(findings))
    rank = {code: number for number, code in enumerate(_VALUE_CODES)}
    best: dict[tuple[str, str], Finding] = {}
    for finding in unique:
        if finding.code in rank:
            kept = best.setdefault((finding.file, finding.place), finding)
            if rank[finding.code] < rank[kept.code]:
                best[(finding.file, finding.place)] = finding
    kept_ones = [f for f in unique if f.code not in rank or best[(f.file, f.place)] is f]
    if not kept_ones:
        return []  # the common case: no walk of a valid document
    keys: dict[int, dict[str, int]] = {}  # id(object) -> its keys' places, made when needed
    return sorted(kept_ones, key=lambda f: _position(document, f.place, keys))


def _position(document: object, place: str, keys: dict[int, dict[str, int]]) -> tuple[int, ...]:
    """Where `place` is in `document`: the index of each key or item on the way down to the
    nearest value it names (a missing field's object). Such tuples sort as a reader meets the
    values, a value before what it holds; numbering every value of the document instead took
    6 s for a spheres.json of 558 904 spheres."""
    steps: list[int] = []
    value = document
    for raw in place.split("/")[1:] if place != "/" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and part in value:
            if id(value) not in keys:
                keys[id(value)] = {key: number for number, key in enumerate(value)}
            steps.append(keys[id(value)][part])
            value = value[part]
        elif (
            isinstance(value, list) and part.isascii() and part.isdigit() and int(part) < len(value)
        ):
            steps.append(int(part))
            value = value[int(part)]
        else:
            break
    return tuple(steps)


def _findings(error: ValidationError, display: str) -> list[Finding]:
    path = list(error.absolute_path)
    keyword = str(error.validator)
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, dict):
        allowed = sorted(schema.get("properties", {}))
        hint = "remove it" + (f"; allowed here: {', '.join(allowed)}" if allowed else "")
        return [
            Finding(
                "unexpected_field",
                display,
                json_pointer([*path, key]),
                f"unexpected field {key!r}",
                hint,
            )
            for key in _extra_keys(instance, schema)
        ]
    if keyword == "required" and isinstance(instance, dict):
        return [
            Finding(
                "missing_field",
                display,
                json_pointer(path),
                f"required field {key!r} is missing",
                f"add {key!r} (see the template and docs for its meaning)",
            )
            for key in _names(error.validator_value)
            if key not in instance
        ]
    if keyword in ("oneOf", "anyOf") and error.context:
        error = best_match(error.context)
        keyword = str(error.validator)
        path = list(error.absolute_path)
    code, hint = _CODES.get(keyword, ("schema_violation", "see the schema for what is allowed"))
    instance = error.instance
    if keyword == "type" and isinstance(instance, float) and instance.is_integer():
        wanted = error.validator_value
        if wanted == "integer" or (isinstance(wanted, list) and "integer" in wanted):
            message = f"{instance!r} is not an integer"
            hint = f"write {int(instance)} without a fraction"
            return [Finding(code, display, json_pointer(path), message, hint)]
    if code == "out_of_range":
        hint = _range_hint(error.schema if isinstance(error.schema, dict) else {}) or hint
    if keyword == "pattern" and error.validator_value == TEXT and isinstance(instance, str):
        control = breaking(instance)
        if control is not None:
            return [_control_character(instance, control, display, json_pointer(path))]
        message = f"{_short(repr(instance), 80)} is blank: empty, or spaces only"
        hint = "write what the field says in words (remove the field if it is optional)"
        return [Finding(code, display, json_pointer(path), message, hint)]
    form = FORMS.get(str(error.validator_value)) if keyword == "pattern" else None
    if form is not None:
        message = f"{_short(repr(error.instance), 80)} is not {form}"
        hint = "write it in that form"
        example = _as_name(instance) if error.validator_value == NAME else ""
        if example:
            hint += f", e.g. {_short(repr(example), 80)}"
        return [Finding(code, display, json_pointer(path), message, hint)]
    if keyword == "maxLength" and isinstance(instance, str):
        message = f"{_short(repr(instance), 60)} is {len(instance)} characters long, over "
        message += str(error.validator_value)
        hint = f"write at most {error.validator_value} characters"
        return [Finding(code, display, json_pointer(path), message, hint)]
    if keyword in ("minItems", "maxItems") and isinstance(error.instance, list):
        bound = "at least" if keyword == "minItems" else "at most"
        wanted = error.validator_value
        exact = schema.get("minItems") == schema.get("maxItems") == wanted
        count = len(error.instance)
        message = f"holds {count} item{'s' * (count != 1)}, not {'' if exact else bound + ' '}"
        hint = f"write {'exactly' if exact else bound} {wanted} item{'s' * (wanted != 1)}"
        return [Finding(code, display, json_pointer(path), f"{message}{wanted}", hint)]
    return [Finding(code, display, json_pointer(path), _short(error.message), hint)]


def _as_name(value: object) -> str:
    """`value` written as a name of NAME's form (accents dropped, other runs as '_'), or ""."""
    if not isinstance(value, str):
        return ""
    plain = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9._-]+", "_", plain).strip("._-")


def _control_character(text: str, character: str, display: str, place: str) -> Finding:
    """The finding of a free text holding a control character (the first one named)."""
    return Finding(
        "invalid_text_character",
        display,
        place,
        f"{_short(ascii(text), 80)} holds {ascii(character)[1:-1]} (U+{ord(character):04X}), "
        "a line break, control or bidirectional control character",
        "write the text in printable characters, on one line (no tab, line break, NUL, other "
        "control character or bidirectional control, escaped or not)"
        + (f", as {_short(ascii(plain), 80)}" if (plain := _printable(text)) else ""),
    )


def _printable(text: str) -> str:
    """`text` without what TEXT refuses: a run holding a line break or tab is one space."""
    runs = re.sub(f"[{UNSHOWABLE}]+", lambda m: " " if _SPACING.search(m.group()) else "", text)
    return runs.strip()


_SPACING = re.compile("[\t\n\v\f\r\x1c-\x1f\x85\u2028\u2029]")


# a range keyword -> how its bound reads in a hint
_BOUNDS = {
    "minimum": "at least",
    "exclusiveMinimum": "above",
    "maximum": "at most",
    "exclusiveMaximum": "below",
}


def _range_hint(schema: dict[str, Any]) -> str:
    """The fix of an out_of_range value, naming the range (and an integer, when it is one):
    the one finding of a value also out of type says what to write ("" without bounds)."""
    bounds = {word: _number(schema[key]) for key, word in _BOUNDS.items() if key in schema}
    kind = "an integer" if schema.get("type") == "integer" else "a number"
    if set(bounds) == {"at least", "at most"}:
        return f"write {kind} from {bounds['at least']} to {bounds['at most']}"
    if not bounds:
        return ""
    return f"write {kind} " + " and ".join(f"{word} {value}" for word, value in bounds.items())


def _number(value: object) -> str:
    """A schema's bound as a person writes it: 10000000 for 1e7, 0.5 for 0.5."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def _extra_keys(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    known = set(schema.get("properties", {}))
    patterns = list(schema.get("patternProperties", {}))
    return sorted(
        key
        for key in instance
        if key not in known and not any(re.search(pattern, key) for pattern in patterns)
    )


def _names(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _short(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."
