"""Mesh URIs: `package://<model_id>/meshes/<path>`, and the URI to write for one that is not."""

from __future__ import annotations

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


def _meshes_tail(filename: str, in_meshes: Callable[[str], bool] | None) -> str:
    """The path a mesh URI of another package likely has under meshes/: what follows its
    `meshes/` folder, else its file name; the longest end of that path where meshes/ holds a
    file (`in_meshes`), if any; "" when it names no mesh file."""
    _, found, after = filename.partition("/meshes/")
    if not found and filename.startswith("meshes/"):
        after = filename[len("meshes/") :]
    tail = after or filename.rsplit("/", 1)[-1]
    parts = tail.split("/")
    if (
        not tail.lower().endswith(_MESH_SUFFIXES)
        or "\\" in tail
        or any(p in ("", ".", "..") for p in parts)
    ):
        return ""
    ends = ["/".join(parts[i:]) for i in range(len(parts))]
    return next((end for end in ends if in_meshes is not None and in_meshes(end)), tail)
