"""The files a mesh refers to beside itself, copied with it so that a visual keeps its look.

An OBJ names its material libraries (`mtllib`), a material library its texture maps (`map_Kd`,
`bump`, ...), a COLLADA file its images (`<image><init_from>`), a glTF file its buffers and
images (`uri`), and a URDF, besides its meshes, the textures of its materials
(`<material><texture filename>`, as the Interbotix arms do).
Without these the compiled description serves an OBJ whose `mtllib` names a missing file.
A reference that is absolute, a URL, leaves meshes/, names no regular file or one the build
does not list as a source (sourcenames.py: `.DS_Store`, `x~`) is not followed:
the mesh is still served, as a viewer that cannot find the file still draws it, and a warning
(`companion_missing`) names the referring file's line (a glTF file's: the file) and the fix.
An embedded `data:` URI is no reference to a file.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import unquote

from lxml import etree

from pipeline.findings import Finding, Severity
from pipeline.sourcenames import ignored_part
from pipeline.strict_io import MESH_LIMIT, read_bytes
from pipeline.urdf.meshuri import MeshesFolder

# Material-library statements whose last word is a file (options such as `-s 1 1 1` come first).
_MAP_STATEMENTS = frozenset(
    {
        "map_ka",
        "map_kd",
        "map_ks",
        "map_ke",
        "map_ns",
        "map_d",
        "map_bump",
        "bump",
        "disp",
        "decal",
        "refl",
        "norm",
        "map_pr",
        "map_pm",
        "map_ps",
        "map_refl",
    }
)


# A file a mesh names: the line naming it (0 when the format has none), the statement, the name.
Reference = tuple[int, str, str]


def _lines(data: bytes) -> list[tuple[int, list[str]]]:
    # numbered as mesh_bytes numbers an OBJ's lines (at each \n), as an editor shows them
    text = data.decode("utf-8", "replace")
    return [(number, line.split()) for number, line in enumerate(text.split("\n"), start=1)]


def _obj_references(data: bytes) -> list[Reference]:
    return [
        (number, "mtllib", name)
        for number, words in _lines(data)
        if words[:1] == ["mtllib"]
        for name in words[1:]
    ]


def _mtl_references(data: bytes) -> list[Reference]:
    return [
        (number, w[0], w[-1])
        for number, w in _lines(data)
        if len(w) > 1 and w[0].lower() in _MAP_STATEMENTS
    ]


def _local(node: etree._Element) -> str:
    return etree.QName(node).localname


def _dae_references(data: bytes) -> list[Reference]:
    from pipeline.findings import ContractError
    from pipeline.strict_xml import parse_xml, source_line

    try:
        root = parse_xml(data, "", huge_text=True)  # as mesh_findings reads it
    except ContractError:
        return []  # refused as a mesh by mesh_findings, with its place
    out = []
    for node in root.iter():
        if not isinstance(node.tag, str) or _local(node) != "init_from":
            continue
        parent = node.getparent()
        if parent is None or _local(parent) != "image":
            continue
        # COLLADA 1.4 holds the URI as text; 1.5 in a <ref> child.
        refs = [
            c.text for c in node if isinstance(c.tag, str) and etree.QName(c).localname == "ref"
        ]
        texts = [text.strip() for text in [node.text, *refs] if text and text.strip()]
        out += [(source_line(node), "<init_from>", text) for text in texts]
    return [(line, what, unquote(ref.removeprefix("./"))) for line, what, ref in out]


def _gltf_references(data: bytes) -> list[Reference]:
    try:
        # a visual may be any format: a .gltf that is not JSON is served as it is
        document = json.loads(data)
    except (ValueError, RecursionError):
        return []
    if not isinstance(document, dict):
        return []
    # buffers (the geometry itself, in a .bin) and images; a data: URI is not followed (_followed)
    entries = [
        entry
        for key in ("buffers", "images")
        if isinstance(document.get(key), list)
        for entry in document[key]
    ]
    uris = [entry.get("uri") for entry in entries if isinstance(entry, dict)]
    return [(0, '"uri"', unquote(uri)) for uri in uris if isinstance(uri, str) and uri]


_READERS: dict[str, Callable[[bytes], list[Reference]]] = {
    ".obj": _obj_references,
    ".mtl": _mtl_references,
    ".dae": _dae_references,
    ".gltf": _gltf_references,
}


# why a reference is not followed, and the fix; {path} is the robot-relative path it means
_HINT_INSIDE = (
    "copy the file into meshes/ and name it by its path from {folder}/, or remove the reference"
)
_NOT_RELATIVE = ("is an absolute path or a URL, not a file in meshes/", _HINT_INSIDE)
_OUTSIDE = ("is outside meshes/", _HINT_INSIDE)
_MISSING = ("does not exist", "add the file at {path}, or remove the reference")
_IGNORED = (
    "is a name the build never reads as a source (a hidden file, an editor's backup, OS metadata)",
    "rename the file to a plain name and name that, or remove the reference",
)
_NOT_REGULAR = (
    "is not a regular file inside meshes/ (a symbolic link or a folder)",
    "put the file itself at {path}, or remove the reference",
)


def _followed(folder: Path, referrer: str, name: str) -> tuple[str | None, tuple[str, str] | None]:
    """The robot-relative path `name` means beside `referrer` when it is a file in meshes/, or
    None; and why it is not followed (None when it is, or is no file's name:
    an embedded data: URI)."""
    if name.startswith("data:"):
        return None, None
    if "\\" in name or ":" in name or name.startswith("/"):
        return None, _NOT_RELATIVE
    path = posixpath.normpath(posixpath.join(posixpath.dirname(referrer), name))
    if not path.startswith("meshes/") or ".." in PurePosixPath(path).parts:
        return None, _OUTSIDE
    if ignored_part(path) is not None:  # not listed as an input: its changes would go unseen
        return None, _IGNORED
    try:
        info = os.lstat(folder / path)
    except OSError:
        return path, _MISSING
    meshes = folder.resolve() / "meshes"
    if not stat.S_ISREG(info.st_mode) or not (folder / path).resolve().is_relative_to(meshes):
        return path, _NOT_REGULAR
    return path, None


def urdf_texture_files(
    folder: Path, urdf: bytes, model_id: str, display_folder: str
) -> tuple[dict[str, bytes], list[Finding]]:
    """The textures the URDF's materials name as package://<model_id>/meshes/..., by path, and
    a warning per texture the description cannot serve (missing, another package's)."""
    from pipeline.strict_xml import parse_xml

    prefix = f"package://{model_id}/"
    found: dict[str, bytes] = {}
    warnings: list[Finding] = []
    listing = MeshesFolder(folder / "meshes")  # walked once, when a texture is another's
    for node in parse_xml(urdf, "").iter("texture"):
        parent = node.getparent()
        name = node.get("filename", "")
        if parent is None or parent.tag != "material" or not name:
            continue  # a <texture> naming no file is the URDF rules' finding (error or warning)
        line = node.sourceline
        where = (display_folder, "robot.urdf", line if isinstance(line, int) else 0)
        if not name.startswith(prefix):
            why = (
                f"is not package://{model_id}/meshes/<file>",
                _package_hint(listing, model_id, name),
            )
            warnings.append(_not_followed(where, "<texture filename>", name, None, why))
            continue
        path, problem = _followed(folder, "robot.urdf", name.removeprefix(prefix))
        if problem is not None:
            warnings.append(_not_followed(where, "<texture filename>", name, path, problem))
        elif path is not None and path not in found:
            found[path] = read_bytes(folder / path, f"{display_folder}/{path}", MESH_LIMIT)
    return dict(sorted(found.items())), warnings


def _package_hint(listing: MeshesFolder, model_id: str, name: str) -> str:
    """The fix of a texture another package's URI names: the URI of the one file of its name
    meshes/ holds, when it holds one (the file copied in, the URI left as it was)."""
    prefix = f"package://{model_id}/meshes/"
    only = listing.only(PurePosixPath(name).name)
    example = f" ({prefix}{only[0].removeprefix('meshes/')} for {only[0]})" if only else ""
    hint = (
        f"copy the file into meshes/ and name it {prefix}<file>{example}, or remove the <texture>"
    )
    return hint.replace("{", "{{").replace("}", "}}")  # _not_followed formats it


def companion_files(
    folder: Path, meshes: dict[str, bytes], display_folder: str
) -> tuple[dict[str, bytes], list[Finding]]:
    """Every file the meshes refer to, transitively, by robot-relative path (meshes excluded),
    and a warning per reference that is not followed (a missing .mtl, a texture out of meshes/)."""
    found: dict[str, bytes] = {}
    unserved: dict[str, list[Finding]] = {}  # by the file meant: one warning per file
    listing = MeshesFolder(folder / "meshes")  # walked once, when a name leads out of meshes/
    todo = list(meshes.items())
    while todo:
        referrer, data = todo.pop()
        reader = _READERS.get(PurePosixPath(referrer).suffix.lower())
        if reader is None:
            continue
        for line, statement, name in reader(data):
            path, problem = _followed(folder, referrer, name)
            if problem is not None:
                where = (display_folder, referrer, line)
                meant = posixpath.normpath(posixpath.join(posixpath.dirname(referrer), name))
                finding = _not_followed(where, statement, name, path, problem)
                if problem in (_NOT_RELATIVE, _OUTSIDE):
                    finding = _named_in_meshes(finding, listing, referrer, name)
                unserved.setdefault(meant, []).append(finding)
            if path is None or problem is not None or path in meshes or path in found:
                continue
            found[path] = read_bytes(folder / path, f"{display_folder}/{path}", MESH_LIMIT)
            todo.append((path, found[path]))
    warnings = sorted((_first(named) for named in unserved.values()), key=_place)
    return dict(sorted(found.items())), warnings


def _named_in_meshes(finding: Finding, listing: MeshesFolder, referrer: str, name: str) -> Finding:
    """A reference out of meshes/ (an absolute path, Windows's too, or a ../ too many) whose
    file name is that of one file in meshes/, as the file copied in: the fix names its path
    from the referring file's folder (pybullet_data's Panda's D:\\dev\\...\\colors.png)."""
    only = listing.only(PureWindowsPath(name).name)
    if only is None:
        return finding
    relative = posixpath.relpath(only[0], posixpath.dirname(referrer))
    return finding._replace(
        hint=f"name it {relative!r}, the one file of that name in meshes/ ({only[0]}), or "
        "remove the reference"
    )


def _place(finding: Finding) -> tuple[str, int]:
    return finding.file, int(finding.place or 0)


def _first(findings: list[Finding]) -> Finding:
    """The first of the warnings about one file, saying how many other references name it
    (Atlas's COLLADA meshes name each of their textures outside meshes/ up to 16 times)."""
    first, *others = sorted(findings, key=_place)
    if not others:
        return first
    more = " (as is 1 other reference to it)" if len(others) == 1 else ""
    more = more or f" (as are {len(others)} other references to it)"
    return first._replace(message=first.message + more)


def _not_followed(
    where: tuple[str, str, int], statement: str, name: str, path: str | None, why: tuple[str, str]
) -> Finding:
    """The warning that `statement` (at the robot folder's file and line `where`) names a file
    the description cannot serve."""
    display_folder, referrer, line = where
    message, hint = why
    return Finding(
        "companion_missing",
        f"{display_folder}/{referrer}",
        str(line) if line else "",
        f"{statement} names {name!r}, which {message}: the description is served without it",
        hint.format(path=f"{display_folder}/{path}", folder=posixpath.dirname(referrer)),
        Severity.WARNING,
    )
