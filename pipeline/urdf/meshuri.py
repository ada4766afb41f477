"""Mesh URIs: `package://<model_id>/meshes/<path>`, and the URI to write for one that is not."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from pipeline.sourcenames import ignored_part

Problem = tuple[str, str, str]  # code, message, hint


def mesh_uri_path(
    filename: str, model_id: str, in_meshes: Callable[[str], bool] | None
) -> tuple[str | None, Problem | None]:
    """The path below the robot's folder a mesh URI names, or the problem with it."""
    prefix = f"package://{model_id}/meshes/"
    if not filename.startswith(prefix):
        tail = _meshes_tail(filename, in_meshes)
        example = f" ({prefix}{tail} for meshes/{tail})" if tail else ""
        return None, (
            "mesh_uri_not_package",
            f"mesh URI {filename!r} is not package://{model_id}/meshes/<file>",
            f"put the mesh in meshes/ and name it {prefix}<file>{example}",
        )
    rest = filename[len(prefix) :]
    parts = rest.split("/")
    if "\\" in rest or any(part in ("", ".", "..") for part in parts):
        return None, (
            "mesh_uri_outside_meshes",
            f"mesh URI {filename!r} can leave meshes/ or has an empty segment",
            "name a file inside meshes/ without '..', '.', '\\' or '//'",
        )
    odd = ignored_part(rest)
    if odd is not None:
        return None, (
            "ignored_file_name",
            f"mesh URI {filename!r} names {odd!r}, which the build never reads as a source "
            "(a hidden file, an editor's backup or lock, or OS metadata)",
            "rename the mesh file to a plain name and name that",
        )
    return str(PurePosixPath("meshes", *parts)), None


# Suffixes of the mesh files a description serves, for the example in a URI's fix.
_MESH_SUFFIXES = (".stl", ".obj", ".dae", ".ply", ".gltf", ".glb")
# `scheme://`, and the schemes whose first segment is a package's (or model's) name
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_PACKAGE_SCHEMES = frozenset({"package", "model"})


def _meshes_tail(filename: str, in_meshes: Callable[[str], bool] | None) -> str:
    """The path a mesh URI of another package likely has under meshes/: the longest end of its
    path (after a `package://<pkg>/` or other scheme prefix) at which meshes/ holds a file
    (`in_meshes`), else what follows its own `meshes/` folder, else its file name; "" when it
    names no mesh file."""
    scheme = _SCHEME.match(filename)
    path = filename[scheme.end() :] if scheme else filename
    if scheme and scheme.group(1).lower() in _PACKAGE_SCHEMES:
        path = path.partition("/")[2]  # the package's name is no folder of meshes/
    parts = path.lstrip("/").split("/")
    if (
        not path.lower().endswith(_MESH_SUFFIXES)
        or "\\" in path
        or any(p in ("", ".", "..") for p in parts)
    ):
        return ""
    # a PartNet URDF's textured_objs/a.obj, Atlas's meshes_v3/r_farm.dae copied into meshes/
    ends = ["/".join(parts[i:]) for i in range(len(parts))]
    below = len(parts) - 1 - parts[::-1].index("meshes") if "meshes" in parts[:-1] else -1
    default = "/".join(parts[below + 1 :]) if below >= 0 else parts[-1]
    return next((end for end in ends if in_meshes is not None and in_meshes(end)), default)
