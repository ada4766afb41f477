"""A collision mesh's lines and points: geometry Tesseract collides with and trimesh skips.

Tesseract reads a collision mesh with assimp, which keeps an OBJ `l` or `p` element, a face of
one or two corners, a COLLADA `<lines>` or `<linestrips>` and a PLY face of fewer than three
corners as collision geometry (a segment, a point). trimesh reads triangles only, so the spheres
would be proven over a surface that lacks them: a collision mesh holding one is refused.
"""

from __future__ import annotations

import re

import numpy as np

# an OBJ line, point, or face of at most two corners (a comment may follow)
_OBJ_LOOSE = re.compile(rb"(?m)^[ \t]*(?:[lp][ \t]|f(?:[ \t]+[^\s#]+){0,2}[ \t]*(?:#|\r?$))")


def loose_element(data: bytes, suffix: str, loaded: object, display: str) -> tuple[str, str]:
    """The place (line) and kind of a collision mesh's first line or point; ("", "") if none."""
    if suffix == "obj":
        match = _OBJ_LOOSE.search(data)
        if match is None:
            return "", ""
        return str(
            data.count(b"\n", 0, match.start()) + 1
        ), "a line, a point or a face of fewer than 3 corners"
    if suffix == "dae":
        return _dae_loose(data, display)
    if suffix == "ply":
        # trimesh keeps a PLY's vertices as they are: one no triangle uses belongs to a line or
        # a point (or to nothing; assimp drops those, but they cannot be told apart here)
        vertices = np.asarray(getattr(loaded, "vertices", np.zeros((0, 3))))
        faces = np.asarray(getattr(loaded, "faces", np.zeros((0, 3))), dtype=np.int64)
        used = np.zeros(len(vertices), dtype=bool)
        used[faces.ravel()] = True
        if not used.all():
            return "", f"vertex {int(np.argmin(used))}, a corner of no triangle"
    return "", ""


def _dae_loose(data: bytes, display: str) -> tuple[str, str]:
    from pipeline.strict_xml import parse_xml, source_line

    root = parse_xml(data, display, huge_text=True)  # as mesh_findings reads a mesh
    for mesh in root.iter("{*}mesh"):
        for element in mesh:
            name = element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""
            if name in ("lines", "linestrips"):
                return str(source_line(element)), f"<{name}>"
            if name in ("polylist", "polygons") and _short_polygon(element, name):
                return str(source_line(element)), f"a <{name}> polygon of fewer than 3 corners"
    return "", ""


def _short_polygon(element: object, name: str) -> bool:
    """Whether a <polylist> or <polygons> holds a polygon of fewer than three corners."""
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
