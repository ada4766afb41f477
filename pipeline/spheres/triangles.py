"""A collision mesh file's triangles (read with trimesh), its lines and points (loose.py) and
the triangles of its non-planar polygons (polygons.py): URDF scale and COLLADA unit applied."""

from __future__ import annotations

import functools
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.findings import ContractError, Finding
from pipeline.spheres.dae_scene import dae_scene
from pipeline.spheres.loose import loose_segments
from pipeline.spheres.meshlib import trimesh
from pipeline.spheres.polygons import mesh_polygons, polygon_triangles
from pipeline.strict_io import MESH_LIMIT, read_bytes
from pipeline.urdf import Mesh
from pipeline.urdf.dae_blocks import read_otherwise, suspect
from pipeline.urdf.mesh_bytes import empty_file

if TYPE_CHECKING:
    from lxml import etree

# The most triangles a collision mesh may hold. A link's geometry takes about 1 KB per triangle
# while it is read and fitted (measured, docs/spheres.md: 1.31 M triangles peaked at 1.3 GB in
# one fit, 5.24 M at 10 GB in `doit`); a collision mesh needs thousands, not millions.
COLLISION_TRIANGLE_LIMIT = 1_000_000
_OBJ_FACE = re.compile(rb"(?m)^[ \t]*f[ \t]")
_PLY_FACES = re.compile(rb"(?m)^element[ \t]+face[ \t]+([0-9]{1,18})[ \t\r]*$")


@dataclass(frozen=True)
class MeshParts:
    """A collision mesh in its local frame, URDF scale applied: triangles (N, 3, 3), the
    segments (M, 2, 3) of its lines and points (a point: two equal ends), and every triangle of
    three corners of each non-planar polygon (K, 3, 3): surface to cover, not solid."""

    triangles: np.ndarray
    segments: np.ndarray
    polygons: np.ndarray = field(default_factory=lambda: np.zeros((0, 3, 3)))
    # a COLLADA file's segments of each <lines> in its coordinates (no unit, no scale): the
    # planner collides each as a part of its own
    line_blocks: tuple[np.ndarray, ...] = ()
    # what trimesh read, for meshsplit.py's parts: a COLLADA file's scene (its blocks of faces;
    # read again, a 9.7 MB file of 3 blocks took 0.43 s more), a PLY's mesh when it holds lines
    # or points (their faces; read again, a 17.6 MB PLY took 2.2 s and 100 MB more)
    source: Any = None

    def points(self) -> np.ndarray:
        """Every corner and end (K, 3)."""
        return np.concatenate([self.triangles.reshape(-1, 3), self.segments.reshape(-1, 3)])


def load_mesh_parts(folder: Path, mesh: Mesh, display_folder: str) -> MeshParts:
    """The triangles, lines and points of a mesh file, in its local frame."""
    display = (PurePosixPath(display_folder) / mesh.path).as_posix()
    return mesh_parts(read_bytes(folder / mesh.path, display, MESH_LIMIT), mesh, display)


def mesh_parts(data: bytes, mesh: Mesh, display: str) -> MeshParts:
    """The triangles, lines and points of a mesh file's bytes with its URDF scale applied."""
    if not data:
        raise ContractError(empty_file(data, display))
    suffix = PurePosixPath(mesh.path).suffix.lower().lstrip(".")
    root = _collada_root(data) if suffix == "dae" else None  # parsed once, for every check
    _refuse_if_too_many(_declared_triangles(data, suffix, root), display)  # before reading it
    if not _parsed_again(data):  # no check below parses it: its tree (about the file's size
        root = None  # again) is let go before trimesh reads the file
    if suffix == "obj":  # a UTF-8 byte order mark (Windows exporters) hid the first line
        data = obj_absolute(data.removeprefix(b"\xef\xbb\xbf"))
    kind = suffix.upper() if suffix else "a mesh (its name has no extension)"
    try:
        # numpy's overflow warnings on absurd corners would print lines naming its own files
        with np.errstate(all="ignore"):
            # a COLLADA file's scene, its blocks the planner's parts, kept for meshsplit.py;
            # its mesh, as force="mesh" makes it (load_scene(...).to_mesh())
            whole = _load(data, suffix, "scene") if suffix == "dae" else None
            loaded = _load(data, suffix, "mesh") if whole is None else whole.to_mesh()
            tri = np.array(getattr(loaded, "triangles", None), dtype=np.float64)
    except MemoryError:
        raise  # the machine, not the file: the step says out_of_memory
    except Exception as exc:  # trimesh raises many types for unreadable files
        raise ContractError(
            [
                Finding(
                    "mesh_unreadable",
                    display,
                    "",
                    f"cannot be read as {kind} ({type(exc).__name__})",
                    "export the mesh again as binary STL, OBJ or DAE",
                )
            ]
        ) from None
    _refuse_if_too_many(len(tri) if tri.ndim == 3 else 0, display)
    # Each check of the file's parts runs and reports (a <unit> finding does not hide a
    # <lines> one); a check stops only those of the same parts: a refused line or polygon list
    # (pycollada drops a <linestrips> with its geometry) leaves no triangles to judge.
    unit, findings = _collada_unit(loaded, data, display) if suffix == "dae" else (1.0, [])
    tri = tri * unit
    segments, polygons, parts_read = np.zeros((0, 2, 3)), [], True
    blocks: list[np.ndarray] = []
    scene = functools.cache(functools.partial(dae_scene, data))  # parsed once, if at all
    with np.errstate(all="ignore"):  # read first: a <linestrips> also empties its geometry
        try:
            blocks = loose_segments(data, suffix, loaded, display, root, scene)
            segments = (np.concatenate(blocks) if blocks else segments) * unit
        except ContractError as exc:
            findings, parts_read = [*findings, *exc.findings], False
        try:
            polygons = mesh_polygons(data, suffix, loaded, display, scene)
        except ContractError as exc:
            findings, parts_read = [*findings, *exc.findings], False
        if suffix == "dae":  # a block Tesseract's reader reads otherwise than pycollada
            otherwise = read_otherwise(data, display, root)
            findings, parts_read = [*findings, *otherwise], parts_read and not otherwise
    if parts_read:
        findings += _triangle_findings(tri, segments, display)
    if findings:
        raise ContractError(findings)
    with np.errstate(all="ignore"):  # a huge corner is refused by its extent, not here
        read = tri
        tri = tri * np.array(mesh.scale, dtype=float)
        segments = segments * np.array(mesh.scale, dtype=float)
        flat = not np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]).any()
        # only for a flat mesh: was the file flat, or did the scale underflow every area?
        unscaled = flat and np.cross(read[:, 1] - read[:, 0], read[:, 2] - read[:, 0]).any()
    if unscaled:  # the URDF's scale made every area underflow to 0, not the file
        urdf = display.removesuffix(f"/{mesh.path}") + "/robot.urdf"
        scale = " ".join(f"{v:g}" for v in mesh.scale)
        raise ContractError(
            [
                Finding(
                    "geometry_out_of_range",
                    urdf,
                    str(mesh.line),
                    f'<mesh scale="{scale}"> of {mesh.path} leaves no triangle with an area '
                    "(their areas underflow to 0 in float64)",
                    "give the scale in metres per mesh unit (a mesh in millimetres needs "
                    'scale="0.001 0.001 0.001")',
                )
            ]
        )
    if flat:
        raise ContractError(
            [
                Finding(
                    "mesh_empty",
                    display,
                    "",
                    "has no triangle with an area: every corner lies on one line",
                    "export the collision mesh again from the CAD model",
                )
            ]
        )
    factor = unit * np.array(mesh.scale, dtype=float)
    lines = tuple(blocks) if suffix == "dae" else ()
    # the triangles covering its bent polygons are fitted and proven as its own are
    count = functools.partial(_refuse_if_too_many, len(tri), display)
    polygon_tris = polygon_triangles(polygons, factor, display, count)
    source = loaded if suffix == "ply" and len(segments) else whole
    return MeshParts(tri, segments, polygon_tris, lines, source)


def _load(data: bytes, suffix: str, force: str) -> Any:
    """trimesh's mesh or scene of a mesh file's bytes, as written (process=False)."""
    return trimesh.load(io.BytesIO(data), file_type=suffix, force=force, process=False)


def _collada_root(data: bytes) -> etree._Element | None:
    """A COLLADA file parsed as the urdf step parses a mesh; None for one that is no such XML
    (refused as trimesh fails on it, or by the first check that parses it again)."""
    from pipeline.strict_xml import parse_xml

    try:
        return parse_xml(data, "", huge_text=True)
    except ContractError:
        return None


def _parsed_again(data: bytes) -> bool:
    """Whether a check after the read parses a COLLADA file (loose.py's, skipping others by
    their bytes, and read_otherwise's): those are handed its tree."""
    return any(word in data for word in (b"lines", b"poly", b"trifans")) or suspect(data)


def _declared_triangles(data: bytes, suffix: str, root: etree._Element | None) -> int:
    """The fewest triangles a mesh file holds, told from its bytes without reading it: a binary
    STL's count, an OBJ's face statements, a PLY header's faces, a COLLADA scene's triangles
    (from its parsed `root`; 0 when not told)."""
    if suffix == "dae":
        from pipeline.spheres.dae_count import collada_triangles

        return 0 if root is None else collada_triangles(root)
    if suffix == "stl" and len(data) >= 84:
        count = int.from_bytes(data[80:84], "little")
        return count if len(data) == 84 + 50 * count else 0
    if suffix == "obj":
        return sum(1 for _ in _OBJ_FACE.finditer(data))
    if suffix == "ply" and data[:3] == b"ply":
        head = data[: data.find(b"end_header")]
        return sum(int(n) for n in _PLY_FACES.findall(head))
    return 0


def _refuse_if_too_many(count: int, display: str, covering: int = 0) -> None:
    """Refuse a collision mesh of more triangles than COLLISION_TRIANGLE_LIMIT, its own and
    those `covering` its polygons not in one plane (polygons.py)."""
    also = (
        f" ({covering:,} of them every triangle of the corners of its faces not in one plane)"
        if covering
        else ""
    )
    count += covering
    if count > COLLISION_TRIANGLE_LIMIT:
        raise ContractError(
            [
                Finding(
                    "collision_mesh_too_large",
                    display,
                    "",
                    f"is a collision mesh of {count:,} triangles{also}, over the limit of "
                    f"{COLLISION_TRIANGLE_LIMIT:,}: fitting its spheres would take gigabytes of "
                    "memory",
                    "decimate the collision mesh (a mesh tool's simplify or decimate: a "
                    "collision mesh needs thousands of triangles), keep the detailed one as "
                    "the <visual>" + (", and triangulate it when exporting it" if covering else ""),
                )
            ]
        )


def _triangle_findings(tri: np.ndarray, segments: np.ndarray, display: str) -> list[Finding]:
    """A mesh without triangles, or with a corner that is not a finite number."""
    # trimesh gives 2-D corners when one OBJ vertex has two numbers (mesh_bytes refuses that
    # file in the urdf step; `pipeline spheres verify` reads the sources without it)
    if tri.ndim != 3 or len(tri) == 0 or tri.shape[2] != 3:
        return [
            Finding(
                "mesh_empty",
                display,
                "",
                "holds no triangles",
                "export the collision mesh again",
            )
        ]
    # the urdf step refuses these by their bytes (mesh_bytes.py) with the same code and the line;
    # `pipeline spheres verify` reads the sources without that step, and a PLY is not read there
    if not (np.isfinite(tri).all() and np.isfinite(segments).all()):
        what = "triangle" if not np.isfinite(tri).all() else "line or point"
        return [
            Finding(
                "mesh_not_a_mesh",
                display,
                "",
                f"has a {what} whose corner is not a finite number (NaN, inf)",
                "export the mesh again: every vertex needs three finite coordinates",
            )
        ]
    return []


# an OBJ face with a minus sign before its first comment: maybe a negative index
_OBJ_NEGATIVE = re.compile(rb"(?m)^[ \t]*f[ \t][^\n#]*-")
_OBJ_KINDS = (b"v", b"vt", b"vn")  # the lists a face corner's v/vt/vn indices count in


def obj_absolute(data: bytes) -> bytes:
    """An OBJ's faces with each negative index written as the positive one it means.

    OBJ counts a negative index back from the last vertex (texture, normal) read before the
    face, as Tesseract's reader does; trimesh counts back from the file's last, so a file of
    several objects each indexed `f -3 -2 -1` had every face on the last object's vertices.
    """
    if _OBJ_NEGATIVE.search(data) is None:
        return data  # the fast path: nearly every mesh
    seen = dict.fromkeys(_OBJ_KINDS, 0)
    lines = data.split(b"\n")
    for number, line in enumerate(lines):
        words = line.split(b"#")[0].split()
        if words[:1] and words[0] in seen:
            seen[words[0]] += 1
        elif words[:1] == [b"f"] and b"-" in line.split(b"#")[0]:
            corners = [_absolute(word, seen) for word in words[1:]]
            lines[number] = b" ".join([b"f", *corners])
    return b"\n".join(lines)


def _absolute(corner: bytes, seen: dict[bytes, int]) -> bytes:
    """One face corner `v/vt/vn` with its negative indices made positive (others as they are)."""
    parts = corner.split(b"/")
    for at, (part, kind) in enumerate(zip(parts, _OBJ_KINDS, strict=False)):
        if part.startswith(b"-") and part[1:].isdigit() and 0 < int(part[1:]) <= seen[kind]:
            parts[at] = str(seen[kind] + 1 + int(part)).encode()
    return b"/".join(parts)


# the <unit> element of a COLLADA <asset>, for the line its finding names
_UNIT = re.compile(rb"<(?:[\w.-]+:)?unit[\s/>]")


def _collada_unit(loaded: object, data: bytes, display: str) -> tuple[float, list[Finding]]:
    """Metres per length unit of a COLLADA file: 1, its only `<unit meter>` readers agree on,
    and the finding refusing another (the mesh then read as it is, for its other checks).

    trimesh records the unit but does not apply it; rviz and Gazebo scale the mesh by it;
    Tesseract's reader (assimp, its root transform reset) ignores it, as it ignores the
    `<up_axis>` (so does this reader). A collision mesh in another unit would be collided with
    at one size and drawn and covered at another: it is refused.
    """
    units = str(getattr(loaded, "metadata", {}).get("units", "meters"))
    if units == "meters":
        return 1.0, []
    head = units.removesuffix(" * meters")  # trimesh writes "<meter> * meters"
    try:
        value = float(head)
    except ValueError:
        value = math.nan
    if value == 1.0:
        return value, []
    # A <mesh scale> cannot make up for the unit: Tesseract applies the scale alone, rviz the
    # scale times the unit, so the two sizes differ whatever the scale. The unit must be 1.
    if math.isfinite(value) and value > 0:
        why = (
            "rviz scales the mesh by it, Tesseract's mesh reader does not, so whatever the "
            "URDF's <mesh scale> the planner would collide with a mesh of another size than "
            "the one drawn"
        )
        fix = (
            'set <unit meter="1"/> in its <asset>, keeping its coordinates, and give their '
            f'size in the URDF instead: <mesh scale="{head} {head} {head}">; or export the '
            "collision mesh in metres"
        )
    else:
        why = "not a positive number of metres per unit"
        fix = 'set <unit meter="1"/> in its <asset>, or export the collision mesh in metres'
    found = _UNIT.search(data)
    line = str(data.count(b"\n", 0, found.start()) + 1) if found else ""
    return 1.0, [
        Finding("mesh_unreadable", display, line, f"its <unit meter> is {head}: {why}", fix)
    ]
