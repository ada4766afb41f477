"""Is a mesh file what its name says? A cheap check of its bytes before it is copied into build/.

Binary STL is 84 bytes of header and count, then 50 bytes per triangle (at least one, with
finite corners); ASCII STL starts with `solid` and holds facets, no vertex at NaN or infinity;
COLLADA (.dae) is XML, read as strictly as every other XML input (no DOCTYPE, no entities), with a
<COLLADA> root and finite vertex positions and at least one <mesh>, blocks of faces and lines
that Tesseract's reader neither refuses nor crashes on (`dae_blocks.py`), and <instance_node>s
that neither loop nor expand the scene past 100,000 geometry instances (`dae_nodes.py`); an OBJ has
a vertex, none at NaN or infinity, no face corner naming a vertex it does not have, and each
corner index a whole number as Tesseract's reader reads it; a PLY declares a vertex, and its
body holds the records its header declares (`ply_counts.py`).
Other formats are copied as they are.
"""

from __future__ import annotations

import math
import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from pipeline.findings import ContractError, Finding
from pipeline.strict_xml import parse_xml, source_line
from pipeline.urdf.dae_blocks import dae_block_findings
from pipeline.urdf.dae_nodes import dae_instancing
from pipeline.urdf.ply_counts import ply_count_findings

if TYPE_CHECKING:
    from lxml import etree

_HINT = "export the mesh again (binary STL or COLLADA), or name the file after its format"
_FINITE_HINT = "export the mesh again: every corner needs three finite coordinates"


def _binary_stl_problem(data: bytes, count: int) -> str:
    import numpy as np

    triangle = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])
    corners = np.frombuffer(data, dtype=triangle, count=count, offset=84)["corners"]
    if not np.isfinite(corners).all():
        return "is a binary STL with a corner that is not a finite number"
    return ""


def _binary_count(data: bytes) -> int | None:
    """The triangle count of a binary STL (84 + 50 bytes per triangle), None for other bytes."""
    count = int.from_bytes(data[80:84], "little") if len(data) >= 84 else -1
    return count if count >= 0 and len(data) == 84 + 50 * count else None


def _stl_problem(data: bytes) -> tuple[str, str, str]:
    """What is wrong with an STL's bytes, the line (ASCII) where, and the fix: ("", "", "") when
    nothing."""
    count = _binary_count(data)
    if count is not None:
        problem = _binary_stl_problem(data, count)
        return problem, "", _FINITE_HINT if problem else ""
    # Tesseract 0.5.1 and trimesh read an ASCII STL behind a UTF-8 byte order mark as without
    text = data.removeprefix(b"\xef\xbb\xbf")
    if text.lstrip()[:5].lower() == b"solid" and b"facet" in text and b"endsolid" in text:
        line = _not_finite(_STL_NOT_FINITE, data)
        return (
            ("is an ASCII STL with a vertex that is not a finite number", line, _FINITE_HINT)
            if line
            else ("", "", "")
        )
    return "is neither a binary STL (84 + 50 bytes per triangle) nor an ASCII STL", "", _HINT


def _empty_stl(data: bytes) -> str:
    """What an STL without a triangle is ("" for any other bytes): assimp refuses both forms."""
    count = _binary_count(data)
    if count is not None:
        return "" if count else "a binary STL without a triangle"
    text = data.removeprefix(b"\xef\xbb\xbf").lstrip()
    # by words, not bytes: a solid may be named facet_part, or open and close on one line
    if _STL_SOLID.match(text) and not _STL_VERTEX.search(text) and _STL_ENDSOLID.search(text):
        return "an ASCII STL without a triangle"
    return ""


_STL_SOLID = re.compile(rb"(?i)solid(\s|$)")
_STL_ENDSOLID = re.compile(rb"(?i)(^|\s)endsolid(\s|$)")
_STL_VERTEX = re.compile(rb"(?i)(^|\s)vertex\s")


# A vertex line naming NaN or infinity (float() reads "nan", "inf", "-Infinity"...): OBJ, STL.
_OBJ_NOT_FINITE = re.compile(rb"(?im)^[ \t]*v[ \t][^\n]*?(nan|inf)")
_STL_NOT_FINITE = re.compile(rb"(?im)^[ \t]*vertex[ \t][^\n]*?(nan|inf)")


def _not_finite(pattern: re.Pattern[bytes], data: bytes) -> str:
    """The line of the first vertex `pattern` finds with a coordinate that is not finite ("" when
    none)."""
    for match in pattern.finditer(data):
        end = data.find(b"\n", match.start())
        words = data[match.start() : None if end < 0 else end].split()[1:4]
        try:
            if not all(math.isfinite(float(word)) for word in words):
                return str(data.count(b"\n", 0, match.start()) + 1)
        except ValueError:
            continue  # not a number at all: left to the mesh reader
    return ""


# a byte order mark, then a line that is not blank or a comment (assimp reads the mark into it)
_OBJ_BOM_STATEMENT = re.compile(rb"\xef\xbb\xbf[ \t\r]*[^#\s]")
_OBJ_VERTEX = re.compile(rb"(?m)^[ \t]*v[ \t]")
# a vertex line of exactly three words: what nearly every exporter writes (the fast path)
_OBJ_XYZ = re.compile(rb"(?m)^[ \t]*v[ \t]+[^\s#]+[ \t]+[^\s#]+[ \t]+[^\s#]+[ \t]*\r?$")
_OBJ_INDEX = re.compile(rb"(?:^|\s)([+-]?\d+)")  # a corner's vertex index, before any '/'
# a face, line or point statement's corners
_OBJ_CORNERS = re.compile(rb"(?m)^[ \t]*[flp][ \t]([^\n#]*)")
# the start of a corner's index (vertex, texture or normal, between '/') that is not a whole
# number written as assimp, Tesseract's reader, reads it: it refuses one that atoi() reads as 0
# ("x", "0", "1.5" at its ".5") and steps over the rest by its digits ("01", "+1": two corners)
_OBJ_ODD_INDEX = re.compile(rb"(?<![^\s/])(?!-?[1-9][0-9]*(?![^\s/]))[^\s/]")
# a line (`l`) of one corner, which Tesseract's reader refuses ("OBJ: bad vertex index")
_OBJ_SHORT_LINE = re.compile(rb"(?m)^[ \t]*l[ \t]+[^\s#]+[ \t]*(?:#[^\n]*)?\r?$")


def _obj_bad_vertex(data: bytes) -> tuple[str, str]:
    """The line of an OBJ's first vertex mesh readers place differently, and what is wrong.

    A vertex is `v x y z`, `v x y z 1` or `v x y z r g b` (a colour). Readers part ways on
    anything else: assimp (Tesseract's loader) divides x y z by a weight `w`, trimesh ignores
    it, so a weight of 0.5 gives the planner a mesh twice as large as the one the spheres cover;
    trimesh drops every z when one vertex has two numbers, and assimp refuses such a file.
    """
    count = len(_OBJ_VERTEX.findall(data))
    if count == 0 or len(_OBJ_XYZ.findall(data)) == count:
        return "", ""
    for number, line in enumerate(data.split(b"\n"), start=1):
        words = line.split(b"#")[0].split()
        if words[:1] != [b"v"] or len(words) in (4, 7):
            continue
        if len(words) == 5:
            try:
                if float(words[4]) == 1.0:
                    continue
            except ValueError:
                pass  # not a number: a weight that is not 1 either
            weight = words[4][:40].decode("ascii", "replace")
            return str(number), (
                f"a vertex weight w = {weight}: Tesseract's mesh reader divides x y z by it, "
                "trimesh ignores it, so the spheres would cover another mesh than the planner's"
            )
        return str(number), (
            f"a vertex of {len(words) - 1} numbers (not x y z, x y z 1 or x y z r g b): mesh "
            "readers place it differently or refuse the file"
        )
    return "", ""


def _obj_bad_face(data: bytes) -> tuple[str, str, str]:
    """The line, index and statement of an OBJ's first face, line or point corner naming no
    vertex ("" for each when none).

    OBJ counts vertices from 1, and a negative index counts back from the last vertex read;
    trimesh silently takes index 0 as the last vertex and fails on one past the end.
    """
    import numpy as np

    faces = _OBJ_CORNERS.findall(data)  # lines and points too: Tesseract loads visuals
    if not faces:
        return "", "", ""
    count = len(_OBJ_VERTEX.findall(data))
    words = _OBJ_INDEX.findall(b" ".join(faces))
    # 19 digits or more overflow int64: the slow path reads them as Python ints
    if count and max(map(len, words), default=0) <= 18:
        index = np.array(words).astype(np.int64)
        if ((index > 0) & (index <= count)).all():  # counting back needs the slow path
            return "", "", ""
    seen = 0  # vertices read so far: what a negative index counts back from
    for number, line in enumerate(data.split(b"\n"), start=1):
        words = line.split(b"#")[0].split()
        if words[:1] == [b"v"]:
            seen += 1
        elif words[:1] in ([b"f"], [b"l"], [b"p"]):
            for word in words[1:]:
                text = word.split(b"/")[0]
                value = int(text) if text.lstrip(b"+-").isdigit() else 1
                if value == 0 or value > count or -value > seen:
                    return str(number), text.decode("ascii"), _STATEMENTS[words[0]]
    return "", "", ""


_STATEMENTS = {b"f": "a face", b"l": "a line (l)", b"p": "a point (p)"}


def _obj_odd_index(data: bytes) -> tuple[str, str, str, str]:
    """The line, statement, corner and index of an OBJ's first corner index that Tesseract's
    reader refuses or reads otherwise ("" for each when none)."""
    if not _OBJ_ODD_INDEX.search(b"\n".join(_OBJ_CORNERS.findall(data))):
        return "", "", "", ""
    for number, line in enumerate(data.split(b"\n"), start=1):
        words = line.split(b"#")[0].split()
        for word in words[1:] if words[:1] in ([b"f"], [b"l"], [b"p"]) else ():
            if _OBJ_ODD_INDEX.search(word):
                part = next(p for p in word.split(b"/") if _OBJ_ODD_INDEX.match(p))
                return str(number), words[0].decode(), _text(word), _text(part)
    return "", "", "", ""


def _text(word: bytes) -> str:
    return word[:40].decode("ascii", "replace")


def empty_file(data: bytes, display: str) -> list[Finding]:
    """The finding on a mesh file of 0 bytes, whatever its format (none for other bytes)."""
    if data:
        return []
    return [
        Finding(
            "mesh_empty",
            display,
            "",
            "is empty (0 bytes): no mesh reader can load it, Tesseract's refuses it (on a "
            "visual too), and with it the URDF",
            "export the mesh again (an interrupted export or copy leaves an empty file), or "
            "remove the <visual> or <collision> that names it",
        )
    ]


def mesh_findings(data: bytes, display: str) -> list[Finding]:
    """The findings about a mesh file's bytes (empty when they look like their format)."""
    if not data:
        return empty_file(data, display)
    suffix = PurePosixPath(display).suffix.lower()
    if suffix == ".stl":
        empty = _empty_stl(data)
        if empty:
            return [_no_vertex(display, empty)]
        problem, line, hint = _stl_problem(data)
        return [Finding("mesh_not_a_mesh", display, line, problem, hint)] if problem else []
    if suffix == ".obj":
        if _OBJ_BOM_STATEMENT.match(data):
            message = (
                "is an OBJ whose first statement follows a UTF-8 byte order mark: Tesseract's "
                "mesh reader loses that line (a first vertex: every face then names another)"
            )
            hint = "save the OBJ as UTF-8 without a byte order mark"
            return [Finding("mesh_not_a_mesh", display, "1", message, hint)]
        line = _not_finite(_OBJ_NOT_FINITE, data)
        message = "is an OBJ with a vertex coordinate that is not a finite number (NaN, inf)"
        hint = "export the mesh again: every vertex needs three finite coordinates"
        if line:
            return [Finding("mesh_not_a_mesh", display, line, message, hint)]
        line, what = _obj_bad_vertex(data)
        if line:
            message = f"is an OBJ with {what}"
            hint = "export the mesh again: each vertex `v x y z` (or `v x y z r g b`)"
            return [Finding("mesh_not_a_mesh", display, line, message, hint)]
        line, index, kind = _obj_bad_face(data)
        message = f"is an OBJ with {kind} naming vertex {index}, which it does not have"
        hint = "export the mesh again: OBJ numbers vertices from 1 (negative: back from the last)"
        if line:
            return [Finding("mesh_not_a_mesh", display, line, message, hint)]
        line, kind, word, part = _obj_odd_index(data)
        if line:
            message = (
                f"is an OBJ with a corner '{word}' of an `{kind}` statement whose index '{part}' "
                "is not a whole number from 1 or -1: Tesseract's mesh reader refuses it or reads "
                "other corners"
            )
            hint = (
                "export the mesh again: OBJ numbers vertices, texture coordinates and normals "
                "from 1 (negative: back from the last)"
            )
            return [Finding("mesh_not_a_mesh", display, line, message, hint)]
        short = _OBJ_SHORT_LINE.search(data)
        if short:
            line = str(data.count(b"\n", 0, short.start()) + 1)
            message = (
                "is an OBJ with a line (l) of one corner: Tesseract's mesh reader refuses the "
                "file ('bad vertex index'), and with it the URDF"
            )
            hint = "give the line its two ends (l i j), or remove it"
            return [Finding("mesh_not_a_mesh", display, line, message, hint)]
        return [] if _OBJ_VERTEX.search(data) else [_no_vertex(display, "an OBJ without a vertex")]
    if suffix == ".ply":
        header = data[: data.find(b"end_header")]
        counts = [int(n) for n in _PLY_VERTICES.findall(header)] if data[:3] == b"ply" else []
        if not any(counts):
            return [_no_vertex(display, "a PLY without a vertex")]
        return ply_count_findings(data, display)
    if suffix == ".dae":
        from lxml import etree

        try:
            root = parse_xml(data, display, huge_text=True)
        except ContractError as exc:
            return list(exc.findings)
        if etree.QName(root).localname != "COLLADA":
            message = f"the root element is <{etree.QName(root).localname}>, not <COLLADA>"
            return [Finding("mesh_not_a_mesh", display, "1", message, _HINT)]
        if next(root.iter("{*}mesh"), None) is None:
            return [_no_vertex(display, "a COLLADA file without a <mesh> geometry")]
        return (
            _dae_bad_position(root, display)
            or dae_block_findings(root, display)
            or dae_instancing(root, display)
        )
    return []


_PLY_VERTICES = re.compile(rb"^element[ \t]+vertex[ \t]+([0-9]{1,18})[ \t\r]*$", re.MULTILINE)


def _no_vertex(display: str, what: str) -> Finding:
    """Tesseract's mesh reader (assimp) refuses such a file, visual too, and the URDF with it."""
    return Finding(
        "mesh_empty",
        display,
        "",
        f"is {what}: Tesseract's mesh reader refuses it (on a visual too), and with it the URDF",
        "export the mesh again, or remove the <visual> or <collision> that names it",
    )


def _dae_bad_position(root: etree._Element, display: str) -> list[Finding]:
    """A finding on the first COLLADA position array holding a word that is no finite number.

    pycollada reads "nan" as 0.0, so the spheres would cover another mesh than the file holds.
    Only positions are checked: exporters write NaN normals for degenerate triangles, and
    nothing here reads normals.
    """
    wanted = {
        node.get("source", "").removeprefix("#")
        for vertices in root.iter("{*}vertices")
        for node in vertices.iter("{*}input")
        if node.get("semantic") == "POSITION"
    }
    for array in root.iter("{*}float_array"):
        source = array.getparent()
        if source is None or source.get("id") not in wanted:
            continue
        for word in (array.text or "").split():
            try:
                finite = math.isfinite(float(word))
            except ValueError:
                finite = False
            if not finite:
                message = (
                    f"is a COLLADA file whose positions <float_array id={array.get('id')!r}> "
                    f"hold {word[:40]!r}, not a finite number"
                )
                hint = "export the mesh again: every vertex needs three finite coordinates"
                return [Finding("mesh_not_a_mesh", display, str(source_line(array)), message, hint)]
    return []
