"""Strict reading of untrusted JSON and XML, size-limited reads, and atomic writes."""

from __future__ import annotations

import fnmatch
import json
import math
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lxml import etree

from pipeline.findings import ContractError, Finding, json_pointer

MiB = 1024 * 1024
JSON_LIMIT = 16 * MiB
XML_LIMIT = 32 * MiB
MESH_LIMIT = 256 * MiB
SOURCE_LIMIT = 4 * MiB
# Objects and arrays nested deeper than this are refused (the checks below recurse per level).
JSON_DEPTH_LIMIT = 100
# A number as C++ URDF/SRDF readers parse it: ASCII digits, an optional exponent. Python's
# float() also takes "1_0", "\u0661" (an Arabic-Indic one), "infinity" and surrounding spaces.
DECIMAL = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
# More digits than a double's largest finite value has (about 1.8e308): never a usable number.
_INT_DIGITS = 309
# How many lines up a start tag that closes on one line may have opened.
_START_TAG_LINES = 200


def _fail(code: str, display: str, place: str, message: str, hint: str) -> ContractError:
    return ContractError([Finding(code, display, place, message, hint)])


def _unreadable(display: str, exc: OSError) -> ContractError:
    return _fail(
        "file_unreadable",
        display,
        "",
        f"cannot be read ({exc.strerror})",
        "check the file's permissions",
    )


def is_utf8(text: str) -> bool:
    """Whether a str can be written as UTF-8 (a name not in UTF-8 decodes to lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_regular(path: str | Path, limit: int) -> tuple[bytes, os.stat_result] | None:
    """A regular file's bytes and stat, or None for anything else, unreadable or over `limit`.

    Opened before its stat is taken, without waiting for a writer: a FIFO is refused, not
    waited on. Read sized by the file, not by the limit (which a read would allocate).
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = read_fd(fd, info.st_size, limit)
        return None if data is None else (data, info)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_fd(fd: int, size: int, limit: int) -> bytes | None:
    """The rest of an open file whose stat said `size` bytes; None when it grew past `limit`."""
    data = os.read(fd, size + 1)  # one byte more tells whether it grew
    chunks = [data]
    total = len(data)
    while size < total <= limit and chunks[-1]:  # the file grew since its stat
        chunks.append(os.read(fd, 1 << 20))
        total += len(chunks[-1])
    return None if total > limit else data if len(chunks) == 1 else b"".join(chunks)


def require_source(folder: Path, name: str, display: str, hint: str = "", like: str = "") -> None:
    """Refuse a robot or cell folder that lacks a file it must hold (`robot.urdf`).

    Files matching the pattern `like` (by default, any with `name`'s extension; any case) are
    offered as the misnamed file to rename. `hint` says how to write the file when none is.
    """
    if os.path.lexists(folder / name):
        return
    like = (like or f"*{os.path.splitext(name)[1]}").lower()
    top = folder.parent.name
    try:
        names = [entry.name for entry in os.scandir(folder)]
        near = sorted(n for n in names if fnmatch.fnmatchcase(n.lower(), like))
    except OSError:  # no such folder: a path given on the command line
        hint = "create it or correct the path that names it"
    else:
        if near:
            hint = f"rename {' or '.join(near)} to {name}: each folder in {top}/ holds its {name}"
        elif not hint:
            hint = f"add {name}, or move the folder out of {top}/: each folder there holds one"
    raise _fail("file_missing", display, "", "file does not exist", hint)


def read_bytes(path: Path, display: str, limit: int) -> bytes:
    """Read a regular file (no symlink) of at most `limit` bytes."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise _fail(
            "file_missing",
            display,
            "",
            "file does not exist",
            "create it or correct the path that names it",
        ) from None
    except OSError as exc:
        raise _unreadable(display, exc) from None
    if stat.S_ISLNK(info.st_mode):
        raise _fail(
            "symlink_refused",
            display,
            "",
            "is a symbolic link",
            "replace the link with the regular file it points to",
        )
    if not stat.S_ISREG(info.st_mode):
        raise _fail(
            "not_a_regular_file",
            display,
            "",
            "is not a regular file",
            "replace it with a regular file",
        )
    if info.st_size > limit:
        raise _fail(
            "file_too_large",
            display,
            "",
            f"is {info.st_size} bytes, over the limit of {limit} bytes",
            "shrink the file (decimate a mesh, split a document)",
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unreadable(display, exc) from None
    if len(data) > limit:
        raise _fail(
            "file_too_large", display, "", f"is over the limit of {limit} bytes", "shrink the file"
        )
    return data


class _NonFinite:
    """Marks a NaN or infinite number found while parsing."""

    def __init__(self, text: str) -> None:
        self.text = text


_SURROGATE = re.compile("[\ud800-\udfff]")


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
        raise _fail(
            "not_utf8", display, f"byte {exc.start}", "is not UTF-8 text", "save the file as UTF-8"
        ) from None
    if text.startswith("\ufeff"):
        raise _fail(
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
        raise _fail(
            "invalid_json", display, f"{exc.lineno}:{exc.colno}", exc.msg, "fix the JSON syntax"
        ) from None
    except RecursionError:
        raise _fail(
            "nesting_too_deep", display, "", "nests too deeply to read", "flatten the document"
        ) from None
    if _depth(value) > JSON_DEPTH_LIMIT:
        raise _fail(
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
        raise _fail(
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


def source_line(node: etree._Element) -> int:
    """The line an element starts on (1 when lxml does not know it)."""
    line = getattr(node, "sourceline", None)
    return line if isinstance(line, int) else 1


def _xml_parser() -> etree.XMLParser:
    from lxml import etree

    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_pis=True,
    )


def parse_xml(data: bytes, display: str) -> etree._Element:
    """Parse XML resolving no entities, loading no DTD, reading no network."""
    from lxml import etree

    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        index = data.find(b"<!DOCTYPE")
        index = data.find(b"<!ENTITY") if index < 0 else index
        line = data.count(b"\n", 0, index) + 1
        raise _fail(
            "doctype_refused",
            display,
            f"{line}",
            "contains a DOCTYPE or entity declaration",
            "remove the DOCTYPE; robot descriptions need no DTD or entities",
        )
    try:
        root = etree.fromstring(data, _xml_parser())
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or 1
        message = str(exc.msg).split(", line ")[0]
        raise _fail("invalid_xml", display, f"{line}", message, "fix the XML syntax") from None
    if root is None:
        raise _fail("invalid_xml", display, "1", "the document is empty", "write an XML document")
    docinfo = root.getroottree().docinfo
    if getattr(docinfo, "doctype", "") or docinfo.internalDTD is not None:
        # the byte search above misses a DOCTYPE in another encoding (UTF-16, say)
        raise _fail(
            "doctype_refused",
            display,
            "1",
            "contains a DOCTYPE or entity declaration",
            "remove the DOCTYPE; robot descriptions need no DTD or entities",
        )
    _mark_start_lines(root, data)
    for node in root.iter():
        if isinstance(node, etree._Entity):
            raise _fail(
                "entity_refused",
                display,
                f"{source_line(node)}",
                f"uses the entity &{node.name};",
                "write the text out in full",
            )
    return root


def _mark_start_lines(root: etree._Element, data: bytes) -> None:
    """Point each element at the line its start tag opens on: lxml gives the line it closes on.

    A start tag holds no other `<` (XML escapes it in attribute values), so the nearest line at
    or above lxml's that holds `<name` is where it opens. A document not in an ASCII-compatible
    encoding (UTF-16) keeps lxml's lines.
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\0" in data[:4]:
        return
    lines = data.split(b"\n")
    for node in root.iter():
        line = node.sourceline
        if not isinstance(node.tag, str) or not isinstance(line, int) or line > len(lines):
            continue
        local = node.tag.rpartition("}")[2]
        name = f"{node.prefix}:{local}" if node.prefix else local
        opening = re.compile(b"<" + re.escape(name.encode()) + rb"(?=[\s/>]|$)")
        for start in range(line, max(0, line - _START_TAG_LINES), -1):
            if opening.search(lines[start - 1]):
                node.sourceline = start
                break


def load_xml(path: Path, display: str, limit: int = XML_LIMIT) -> etree._Element:
    """Read and strictly parse an XML file."""
    return parse_xml(read_bytes(path, display, limit), display)


def dump_json(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, two-space indent, LF, final newline."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def atomic_write(path: Path, data: bytes) -> bool:
    """Write bytes through a temporary file renamed into place; False when already equal."""
    try:
        if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def write_output(path: Path, data: bytes) -> bool:
    """atomic_write to a path the user named: a refusal by the system is a finding, not a crash."""
    try:
        return atomic_write(path, data)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise _fail(
            "output_unwritable",
            path.as_posix(),
            "",
            f"cannot be written: {reason}",
            "name a file in a folder you can create and write to",
        ) from None
