"""The files a mesh refers to beside itself, copied with it so that a visual keeps its look.

An OBJ names its material libraries (`mtllib`), a material library its texture maps (`map_Kd`,
`bump`, ...), a COLLADA file its images (`<image><init_from>`), a glTF file its buffers and
images (`uri`), and a URDF, besides its meshes, the textures of its materials
(`<material><texture filename>`, as the Interbotix arms do).
Without these the compiled description serves an OBJ whose `mtllib` names a missing file.
A reference that is absolute, a URL, leaves meshes/, names no regular file or one the build
does not list as a source (sourcenames.py: `.DS_Store`, `x~`) is not followed:
the mesh is still served, as a viewer that cannot find the file still draws it.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from lxml import etree

from pipeline.sourcenames import ignored_part
from pipeline.strict_io import MESH_LIMIT, read_bytes

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


def _lines(data: bytes) -> list[list[str]]:
    return [line.split() for line in data.decode("utf-8", "replace").splitlines()]


def _obj_references(data: bytes) -> list[str]:
    return [name for words in _lines(data) if words[:1] == ["mtllib"] for name in words[1:]]


def _mtl_references(data: bytes) -> list[str]:
    return [w[-1] for w in _lines(data) if len(w) > 1 and w[0].lower() in _MAP_STATEMENTS]


def _local(node: etree._Element) -> str:
    return etree.QName(node).localname


def _dae_references(data: bytes) -> list[str]:
    from pipeline.findings import ContractError
    from pipeline.strict_xml import parse_xml

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
        out += [text.strip() for text in [node.text, *refs] if text and text.strip()]
    return [unquote(ref.removeprefix("./")) for ref in out]


def _gltf_references(data: bytes) -> list[str]:
    try:
        # a visual may be any format: a .gltf that is not JSON is served as it is
        document = json.loads(data)
    except (ValueError, RecursionError):
        return []
    if not isinstance(document, dict):
        return []
    # buffers (the geometry itself, in a .bin) and images; a data: URI is refused by _resolve
    entries = [
        entry
        for key in ("buffers", "images")
        if isinstance(document.get(key), list)
        for entry in document[key]
    ]
    uris = [entry.get("uri") for entry in entries if isinstance(entry, dict)]
    return [unquote(uri) for uri in uris if isinstance(uri, str) and uri]


_READERS: dict[str, Callable[[bytes], list[str]]] = {
    ".obj": _obj_references,
    ".mtl": _mtl_references,
    ".dae": _dae_references,
    ".gltf": _gltf_references,
}


def _resolve(folder: Path, referrer: str, name: str) -> str | None:
    """The robot-relative path `name` means beside `referrer`, when it is a file in meshes/."""
    if "\\" in name or ":" in name or name.startswith("/"):
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(referrer), name))
    if not path.startswith("meshes/") or ".." in PurePosixPath(path).parts:
        return None
    if ignored_part(path) is not None:  # not listed as an input: its changes would go unseen
        return None
    try:
        info = os.lstat(folder / path)
    except OSError:
        return None
    meshes = folder.resolve() / "meshes"
    if not stat.S_ISREG(info.st_mode) or not (folder / path).resolve().is_relative_to(meshes):
        return None
    return path


def urdf_texture_files(
    folder: Path, urdf: bytes, model_id: str, display_folder: str
) -> dict[str, bytes]:
    """The textures the URDF's materials name as package://<model_id>/meshes/..., by path."""
    from pipeline.strict_xml import parse_xml

    prefix = f"package://{model_id}/"
    found: dict[str, bytes] = {}
    for node in parse_xml(urdf, "").iter("texture"):
        parent = node.getparent()
        name = node.get("filename", "")
        if parent is None or parent.tag != "material" or not name.startswith(prefix):
            continue
        path = _resolve(folder, "robot.urdf", name.removeprefix(prefix))
        if path is not None and path not in found:
            found[path] = read_bytes(folder / path, f"{display_folder}/{path}", MESH_LIMIT)
    return dict(sorted(found.items()))


def companion_files(
    folder: Path, meshes: dict[str, bytes], display_folder: str
) -> dict[str, bytes]:
    """Every file the meshes refer to, transitively, by robot-relative path (meshes excluded)."""
    found: dict[str, bytes] = {}
    todo = list(meshes.items())
    while todo:
        referrer, data = todo.pop()
        reader = _READERS.get(PurePosixPath(referrer).suffix.lower())
        if reader is None:
            continue
        for name in reader(data):
            path = _resolve(folder, referrer, name)
            if path is None or path in meshes or path in found:
                continue
            found[path] = read_bytes(folder / path, f"{display_folder}/{path}", MESH_LIMIT)
            todo.append((path, found[path]))
    return dict(sorted(found.items()))
