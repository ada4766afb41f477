"""A collision mesh's lines and points: geometry Tesseract collides with and trimesh skips.

Tesseract reads a collision mesh with assimp, which keeps an OBJ `l` or `p` element, a face of
one or two corners, a COLLADA `<lines>` or `<linestrips>` and a PLY face of fewer than three
corners as collision geometry (a segment, a point; its contact manager collides a mesh of them,
measured: tests/test_tesseract_env.py). trimesh reads triangles only, so OBJ, PLY and COLLADA
lines and points are read here, as segments (a point is a segment of two equal ends), for the
spheres to cover them too. What cannot be read as exactly as the triangles is refused
(`mesh_lines_or_points`): a COLLADA `<linestrips>`, a `<lines>` pycollada reads otherwise than
Tesseract's reader, polygons and `<trifans>` fans of fewer than three corners (Tesseract's reader
reads a fan's `<p>` as one polygon: of two corners, a line; see _dae_unreadable), and a line or
point naming no vertex.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.findings import ContractError, Finding
from pipeline.urdf.dae_blocks import atoi, words
from pipeline.urdf.dae_nodes import local_name

if TYPE_CHECKING:
    from lxml import etree

    from pipeline.spheres.dae_scene import DaeScene

Array = np.ndarray
NONE = np.zeros((0, 2, 3))
# an OBJ line, point, or face of at most two corners (a comment may follow); its words taken
# whole, without backtracking: giving one back lets nothing match (on a face of three words it
# tried each fewer, 0.28 s of a 14 MB OBJ of 150 k faces, 0.10 s now)
OBJ_LOOSE = re.compile(rb"(?m)^[ \t]*+(?:[lp][ \t]|f(?>(?:[ \t]+[^\s#]+){0,2})[ \t]*+(?:#|\r?$))")


def loose_segments(
    data: bytes,
    suffix: str,
    loaded: object,
    display: str,
    root: etree._Element | None,
    scene: Callable[[], DaeScene],
) -> list[Array]:
    """Segments (N, 2, 3) of a mesh file's lines and points, in the file's coordinates (a
    COLLADA node's transform applied, not its unit): the corners the file states, in blocks (a
    COLLADA file's each `<lines>`, the planner's part; another file's all in one), none empty
    (`root`: a COLLADA file parsed, or None to parse it here; `scene`: its walk, dae_scene.py)."""
    if suffix == "dae":
        return _dae_segments(data, display, root, scene)
    if suffix == "obj":
        found = _obj_segments(data, display)
    elif suffix == "ply":
        found = _ply_segments(loaded, display)
    else:
        found = NONE
    return [found] if len(found) else []


def _refuse(display: str, place: str, what: str, fix: str) -> ContractError:
    return ContractError([Finding("mesh_lines_or_points", display, place, what, fix)])


def _obj_segments(data: bytes, display: str) -> Array:
    """OBJ `l` (a polyline: its consecutive pairs), `p`, and faces of one or two corners."""
    if OBJ_LOOSE.search(data) is None:
        return NONE  # the fast path: nearly every mesh
    vertices: list[list[bytes]] = []
    wanted: list[tuple[int, bytes, list[bytes], int]] = []  # line, kind, corners, vertices read
    for number, line in enumerate(data.split(b"\n"), start=1):
        words = line.split(b"#")[0].split()
        if words[:1] == [b"v"]:
            vertices.append(words[1:4])
        elif words[:1] in ([b"l"], [b"p"]) or (words[:1] == [b"f"] and len(words) <= 3):
            wanted.append((number, words[0], words[1:], len(vertices)))
    ends: list[tuple[int, int]] = []
    for number, kind, corners, seen in wanted:
        index = [obj_index(word, seen, len(vertices)) for word in corners]
        if any(i < 0 for i in index):
            bad = corners[index.index(-1)][:40].decode("ascii", "replace")
            raise _refuse(
                display,
                str(number),
                f"its {kind.decode()} corner {bad} names no vertex (OBJ counts them from 1, "
                f"a negative index back from the last read; {len(vertices)} in all)",
                "export the collision mesh again",
            )
        if kind == b"p" or len(index) == 1:
            ends += [(i, i) for i in index]
        else:
            ends += list(itertools.pairwise(index))
    coords = np.array([obj_xyz(vertices[i]) for pair in ends for i in pair], dtype=np.float64)
    return coords.reshape(-1, 2, 3)


def obj_index(word: bytes, seen: int, count: int) -> int:
    """The 0-based vertex a corner (`v`, `v/vt`, `v//vn`, `v/vt/vn`) names; -1 if none."""
    text = word.split(b"/")[0]
    if not text.lstrip(b"+-").isdigit():
        return -1
    value = int(text)
    if 0 < value <= count:
        return value - 1
    return seen + value if 0 < -value <= seen else -1


def obj_xyz(words: list[bytes]) -> list[float]:
    """A vertex's x y z as trimesh reads them (the nearest doubles); NaN where unreadable."""
    out = []
    for word in [*words, b"nan", b"nan"][:3]:
        try:
            out.append(float(word))
        except ValueError:
            out.append(float("nan"))
    return out


def _dae_segments(
    data: bytes, display: str, root: etree._Element | None, scene: Callable[[], DaeScene]
) -> list[Array]:
    """The segments of each of a COLLADA mesh's `<lines>`, placed as trimesh places the
    triangles; a `<linestrips>`, a `<lines>` read otherwise, or a polygon of fewer than 3
    corners refused."""
    place, kind = _dae_unreadable(data, display, root)
    if kind:
        raise _refuse(
            display,
            place,
            f"holds {kind}, which the COLLADA reader drops or reads otherwise than Tesseract, "
            "so the spheres could not be proven to cover it",
            "export the collision mesh again with triangles only",
        )
    if b"lines" not in data:
        return []  # the fast path: nearly every mesh
    return scene().line_blocks


def _dae_unreadable(data: bytes, display: str, root: etree._Element | None) -> tuple[str, str]:
    """The line and kind of a COLLADA mesh's first `<linestrips>`, `<lines>` pycollada reads
    otherwise than Tesseract's reader, or polygon of fewer than 3 corners."""
    if b"lines" not in data and b"poly" not in data and b"trifans" not in data:
        return "", ""
    from pipeline.strict_xml import parse_xml, source_line

    if root is None:  # not parsed (no strict XML): parsed here, for its findings
        root = parse_xml(data, display, huge_text=True)  # as mesh_findings reads a mesh
    for mesh in root.iter("{*}mesh"):
        for element in mesh:
            name = local_name(element)
            if name == "linestrips":  # pycollada drops the geometry holding it
                return str(source_line(element)), f"<{name}>"
            if name == "lines" and _lines_otherwise(element):
                return str(source_line(element)), _lines_otherwise(element)
            if name in ("polylist", "polygons", "trifans") and _short_polygon(element, name):
                # Tesseract's reader reads a fan's <p> as one polygon: of two corners, a line
                what = "fan" if name == "trifans" else "polygon"
                return str(source_line(element)), f"a <{name}> {what} of fewer than 3 corners"
    return "", ""


def _lines_otherwise(element: Any) -> str:
    """What of a `<lines>` pycollada reads otherwise than Tesseract's reader ('' for none)."""
    lists = [p for p in element if local_name(p) == "p"]
    said = f"<lines count={element.get('count', '')!r}>"
    if len(lists) != 1:  # pycollada reads the first alone, and drops a geometry without one
        why = "Tesseract's reader reads each" if lists else "pycollada drops its geometry"
        return f"a {said} of {len(lists)} <p>s ({why})"
    if atoi(element.get("count")) <= 0 and words(lists[0].text):
        return f"a {said} of lines (Tesseract's reader reads none of a block of no count above 0)"
    return ""


def _short_polygon(element: object, name: str) -> bool:
    """Whether a <polylist>, <polygons> or <trifans> holds a polygon (a fan) of fewer than three
    corners."""
    children = list(element)  # type: ignore[call-overload]
    if name == "polylist":
        counts = [c for c in children if c.tag.rsplit("}", 1)[-1] == "vcount"]
        words = " ".join(c.text or "" for c in counts).split()
        return any(word.lstrip("+").isdigit() and int(word) < 3 for word in words)
    offsets = [
        int(c.get("offset", "0"))
        for c in children
        if c.tag.rsplit("}", 1)[-1] == "input" and c.get("offset", "0").isdigit()
    ]
    stride = max(offsets, default=0) + 1
    return any(
        len((c.text or "").split()) < 3 * stride
        for c in children
        if c.tag.rsplit("}", 1)[-1] == "p"
    )


def ply_face_lists(loaded: object, display: str) -> object:
    """A PLY's faces' vertex lists as the file states them (None when trimesh kept none).

    An ASCII PLY's come as a dict of arrays, a binary PLY's as records (count, indices) all as
    long as the first face: trimesh reads every face at that length, so a binary PLY whose
    faces differ in length (a quad among triangles) would be misread, and is refused.
    """
    raw = getattr(loaded, "metadata", {}).get("_ply_raw", {}).get("face", {}).get("data", {})
    names = (raw.dtype.names or ()) if isinstance(raw, np.ndarray) else tuple(raw)
    key = next((k for k in ("vertex_indices", "vertex_index") if k in names), None)
    if key is None:
        return None
    lists = raw[key]
    if not isinstance(lists, np.ndarray) or lists.dtype.names != ("f0", "f1"):
        return lists
    corners = lists["f1"].reshape(len(lists), -1)
    if (lists["f0"] != corners.shape[1]).any():
        raise ContractError(
            [
                Finding(
                    "mesh_unreadable",
                    display,
                    "",
                    "is a binary PLY whose faces differ in corner count, which the PLY reader "
                    "(trimesh) misreads as all as long as the first",
                    "export the collision mesh as binary STL, or as a PLY of triangles only",
                )
            ]
        )
    return corners


def _ply_segments(loaded: object, display: str) -> Array:
    """PLY faces of one or two corners, and every vertex no triangle uses, as a point.

    assimp drops a vertex no face uses unless the file has no faces (a point cloud); it is
    covered either way, which is sound. trimesh keeps the faces as read in its metadata.
    """
    vertices = np.asarray(getattr(loaded, "vertices", np.zeros((0, 3))), dtype=np.float64)
    faces = np.asarray(getattr(loaded, "faces", np.zeros((0, 3))), dtype=np.int64)
    lists = ply_face_lists(loaded, display)
    if lists is None and len(faces):
        # trimesh's record of the faces as read is not public API: without it, a face of two
        # corners between vertices triangles use would go unseen, so the mesh is refused
        raise _refuse(
            display,
            "",
            "its faces could not be read as the file states them (the PLY reader kept no face "
            "list), so its lines and points could not be told apart",
            "export the collision mesh as STL or OBJ",
        )
    pairs: list[tuple[int, int]] = []
    faces_read = np.asarray([] if lists is None else lists)
    # faces of several lengths are kept one array each; faces all of one or two corners too
    if faces_read.dtype == object or (faces_read.ndim == 2 and faces_read.shape[1] < 3):
        for number, corners in enumerate(faces_read):
            index = [int(i) for i in corners]
            if len(index) < 3 and any(not 0 <= i < len(vertices) for i in index):
                raise _refuse(
                    display,
                    "",
                    f"face {number} names a vertex the file does not hold ({len(vertices)})",
                    "export the collision mesh again",
                )
            if len(index) == 2:
                pairs.append((index[0], index[1]))
            elif len(index) == 1:
                pairs.append((index[0], index[0]))
    used = np.zeros(len(vertices), dtype=bool)
    used[faces.ravel()] = True
    pairs += [(i, i) for i in np.flatnonzero(~used).tolist()]
    if not pairs:
        return NONE
    return vertices[np.array(pairs, dtype=np.int64)]
