"""Does a PLY's body hold the records its header declares? Tesseract's mesh reader (assimp)
trusts the header's counts: a binary PLY declaring 5 vertices and holding 3 crashed Tesseract's
process (SIGSEGV), one with a face of no corner aborted it (SIGABRT), and an ASCII one
declaring 2,000,000,000 vertices failed with std::bad_alloc."""

from __future__ import annotations

import re
import struct

from pipeline.findings import Finding

# the byte size of each PLY scalar type, by both of its names
_SIZES = {
    **dict.fromkeys(("char", "int8", "uchar", "uint8"), 1),
    **dict.fromkeys(("short", "int16", "ushort", "uint16"), 2),
    **dict.fromkeys(("int", "int32", "uint", "uint32", "float", "float32"), 4),
    **dict.fromkeys(("double", "float64"), 8),
}
_UNSIGNED = {1: "B", 2: "H", 4: "I"}
_END = re.compile(rb"^end_header[ \t]*\r?\n", re.MULTILINE)
# an element's properties: a scalar's size, or a list's (count size, item size)
_Property = int | tuple[int, int]
# an element: its name, record count, header line and properties
_Element = tuple[str, int, int, list[_Property]]


def _header(head: bytes) -> tuple[str, list[_Element]] | None:
    """The format and the elements (name, count, line, properties) of a PLY header; None when
    it holds a line this check does not know (the file's other readers judge it)."""
    form: str = ""
    elements: list[_Element] = []
    for number, raw in enumerate(head.decode("ascii", "replace").splitlines(), 1):
        words = raw.split()
        if words[:1] == ["format"] and len(words) >= 2:
            form = words[1]
        elif words[:1] == ["element"] and len(words) == 3 and words[2].isdigit():
            elements.append((words[1], int(words[2]), number, []))
        elif words[:2] == ["property", "list"] and len(words) == 5 and elements:
            if words[2] not in _SIZES or words[3] not in _SIZES:
                return None
            elements[-1][3].append((_SIZES[words[2]], _SIZES[words[3]]))
        elif words[:1] == ["property"] and len(words) == 3 and elements:
            if words[1] not in _SIZES:
                return None
            elements[-1][3].append(_SIZES[words[1]])
    return (form, elements) if form else None


def _binary_walk(body: bytes, order: str, elements: list[_Element]) -> tuple[int, str]:
    """Where the records the header declares end in a binary body (past its length when they
    do not fit), reading each list's count, and the first face of no corner ('face 2'); stops
    once past the end, so at most len(body) records are walked."""
    at = 0
    for name, count, _, properties in elements:
        if all(isinstance(p, int) for p in properties):
            at += count * sum(p for p in properties if isinstance(p, int))
            continue
        for record in range(count):
            for prop in properties:
                if isinstance(prop, int):
                    at += prop
                    continue
                size, item = prop
                if at + size > len(body):
                    return at + size, ""
                (items,) = struct.unpack_from(order + _UNSIGNED.get(size, "Q"), body, at)
                if items == 0 and name == "face":
                    return at, f"face {record + 1}"
                at += size + items * item
            if at > len(body):
                return at, ""
    return at, ""


def _ascii_cornerless(lines: list[bytes], elements: list[_Element]) -> str:
    """The first face of no corner in an ASCII body ('face 2'), one record a line; '' when
    there is none, or its corner count is not the first list after scalars."""
    first = 0
    for name, count, _, properties in elements:
        if name == "face":
            lists = [i for i, p in enumerate(properties) if not isinstance(p, int)]
            if not lists:
                return ""
            for record, line in enumerate(lines[first : first + count]):
                words = line.split()
                if len(words) > lists[0] and words[lists[0]] == b"0":
                    return f"face {record + 1}"
            return ""
        first += count
    return ""


def ply_count_findings(data: bytes, display: str) -> list[Finding]:
    """The finding on a PLY whose body is shorter than the records its header declares."""
    end = _END.search(data)
    parsed = _header(data[: end.start()]) if end else None
    if end is None or parsed is None or not parsed[1]:
        return []
    form, elements = parsed
    body = data[end.end() :]
    counts = ", ".join(f"{name} {count}" for name, count, _, _ in elements)
    if form == "ascii":
        lines = [line for line in body.splitlines() if line.strip()]
        declared = sum(count for _, count, _, _ in elements)
        cornerless = _ascii_cornerless(lines, elements)
        if cornerless:
            what = f"is an ASCII PLY whose {cornerless} has no corner"
        elif len(lines) < declared:
            what = (
                f"is an ASCII PLY whose header declares {declared:,} records ({counts}), but "
                f"its body holds {len(lines):,} lines"
            )
        else:
            return []
    elif form in ("binary_little_endian", "binary_big_endian"):
        order = "<" if form == "binary_little_endian" else ">"
        ends, cornerless = _binary_walk(body, order, elements)
        if cornerless:
            what = f"is a binary PLY whose {cornerless} has no corner"
        elif ends > len(body):
            what = (
                f"is a binary PLY whose body ({len(body):,} bytes) ends before the records its "
                f"header declares ({counts})"
            )
        else:
            return []
    else:
        return []
    message = (
        f"{what}: Tesseract's mesh reader (assimp) trusts the header, and crashes the planner "
        "on a short binary PLY or a face of no corner, or runs out of memory allocating a "
        "large count the file does not hold"
    )
    hint = "export the mesh again (its header counts each vertex and face its body holds)"
    return [Finding("mesh_not_a_mesh", display, str(elements[0][2]), message, hint)]
