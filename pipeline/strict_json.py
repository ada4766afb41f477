"""Strict JSON reading (no duplicate key, NaN/Infinity or deep nesting) and canonical dumps."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.findings import ContractError, Finding, json_pointer
from pipeline.strict_io import JSON_LIMIT, read_bytes, refusal

# Objects and arrays nested deeper than this are refused (the checks below recurse per level).
JSON_DEPTH_LIMIT = 100
# More digits than a double's largest finite value has (about 1.8e308): never a usable number.
_INT_DIGITS = 309
_SURROGATE = re.compile("[\ud800-\udfff]")


class _NonFinite:
    """Marks a NaN or infinite number found while parsing."""

    def __init__(self, text: str) -> None:
        self.text = text


class _Pairs(dict[str, Any]):
    """A parsed object that remembers which keys it saw twice."""

    duplicates: list[str]


def _object_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = _Pairs()
    obj.duplicates = []
    for key, value in pairs:
        if key in obj:
            obj.duplicates.append(key)
        obj[key] = value
    return obj


def _parse_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _parse_int(text: str) -> int | _NonFinite:
    # An integer beyond a double's range is as unusable as 1e999 (every rule reads numbers as
    # floats), and one of thousands of digits makes int() itself refuse: mark it, never convert.
    digits = len(text.lstrip("-"))
    if digits > _INT_DIGITS or abs(value := int(text)) > sys.float_info.max:
        shown = text if len(text) <= 24 else f"{text[:12]}...({digits} digits)"
        return _NonFinite(shown)
    return value


def _depth(value: Any) -> int:
    """How deeply objects and arrays nest (iteratively, so any depth is measured)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in node)
    return deepest


def _walk(value: Any, path: list[str | int]) -> Iterator[tuple[list[str | int], str, str]]:
    if isinstance(value, _NonFinite):
        yield path, "non_finite_number", value.text
    elif isinstance(value, dict):
        for key in getattr(value, "duplicates", []):
            yield [*path, key], "duplicate_key", key
        for key, item in value.items():
            yield from _walk(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, [*path, index])


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def parse_json(data: bytes, display: str) -> dict[str, Any]:
    """Parse a JSON object, refusing duplicate keys, NaN/Infinity and a non-object root."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refusal(
            "not_utf8", display, f"byte {exc.start}", "is not UTF-8 text", "save the file as UTF-8"
        ) from None
    if text.startswith("\ufeff"):
        raise refusal(
            "byte_order_mark",
            display,
            "line 1",
            "starts with a byte order mark",
            "save the file as UTF-8 without a BOM",
        )
    try:
        value = json.loads(
            text,
            object_pairs_hook=_object_hook,
            parse_constant=_NonFinite,
            parse_float=_parse_float,
            parse_int=_parse_int,
        )
    except json.JSONDecodeError as exc:
        message = exc.msg
        if message.endswith(" at") and exc.pos < len(text):  # "Invalid control character at"
            message = f"{message[:-3]} {text[exc.pos]!r}"
        raise refusal(
            "invalid_json", display, f"{exc.lineno}:{exc.colno}", message, "fix the JSON syntax"
        ) from None
    except RecursionError:
        raise refusal(
            "nesting_too_deep", display, "", "nests too deeply to read", "flatten the document"
        ) from None
    if _depth(value) > JSON_DEPTH_LIMIT:
        raise refusal(
            "nesting_too_deep",
            display,
            "",
            f"nests objects and arrays more than {JSON_DEPTH_LIMIT} deep",
            "flatten the document",
        )
    problems = []
    for path, code, text_value in _walk(value, []):
        if code == "duplicate_key":
            problems.append(
                Finding(
                    code,
                    display,
                    json_pointer(path),
                    f"key {text_value!r} appears more than once",
                    "keep exactly one entry for each key",
                )
            )
        else:
            problems.append(
                Finding(
                    code,
                    display,
                    json_pointer(path),
                    f"{text_value} is not a finite number within a double's range",
                    "write a finite decimal number",
                )
            )
    if problems:
        raise ContractError(problems)
    if not isinstance(value, dict):
        raise refusal(
            "root_not_object",
            display,
            "/",
            f"the document is a JSON {type(value).__name__}, not an object",
            "wrap the content in a JSON object",
        )
    plain: dict[str, Any] = _plain(value)
    return plain


def lone_surrogates(value: Any, display: str) -> list[Finding]:
    """A finding per key or string holding a lone surrogate (a \\uD800 escape without its pair).

    Such text cannot be written as UTF-8, so no UTF-8 reader of a file copied into build/
    (serde_json, for one) can take it.
    """
    out = []
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:  # in document order
        node, path = stack.pop()
        key = path[-1] if path else None
        if (isinstance(key, str) and _SURROGATE.search(key)) or (
            isinstance(node, str) and _SURROGATE.search(node)
        ):
            out.append(path)
        items: list[tuple[str | int, Any]] = []
        if isinstance(node, dict):
            items = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        stack.extend((item, [*path, k]) for k, item in reversed(items))
    return [
        Finding(
            "lone_surrogate",
            display,
            json_pointer(path),
            "holds a \\uD800-\\uDFFF escape that is not half of a pair, a character UTF-8 "
            "cannot encode",
            "write the character itself, or both halves of its surrogate pair",
        )
        for path in out
    ]


def load_json(path: Path, display: str, limit: int = JSON_LIMIT) -> dict[str, Any]:
    """Read and strictly parse a JSON object file."""
    return parse_json(read_bytes(path, display, limit), display)


def dump_json(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, two-space indent, LF, final newline."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")
