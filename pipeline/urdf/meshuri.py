"""Mesh URIs: `package://<model_id>/meshes/<path>`, and the URI to write for one that is not."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from pipeline.sourcenames import ignored_part

Problem = tuple[str, str, str]  # code, message, hint


class MeshesFolder:
    """What a robot's meshes/ holds, for the fix of a mesh URI or of a missing mesh."""

    def __init__(self, meshes: Path) -> None:
        """`meshes`: the robot's meshes/ folder, walked once, when a name is first looked up."""
        self.meshes = meshes
        self._names: dict[str, list[str]] | None = None

    def holds(self, path: str) -> bool:
        """Whether meshes/ holds a file at a relative path (a name too long for the system is
        not)."""
        try:
            return (self.meshes / path).is_file()
        except (OSError, ValueError):
            return False

    def only(self, name: str) -> tuple[str, bool] | None:
        """The one file below meshes/ (as `meshes/<path>`) of that name, else the one of that
        name in another case (then True); None when there is none or more than one."""
        if self._names is None:
            self._names = _names_below(self.meshes)
        alike = self._names.get(name.casefold(), [])
        same = [path for path in alike if PurePosixPath(path).name == name]
        if len(same or alike) != 1:
            return None
        return (same or alike)[0], not same

    def end_of(self, path: str) -> str | None:
        """The longest end of `path` (`meshes/<path>`, which meshes/ does not hold) that
        meshes/ holds, as `meshes/<end>` (ROS-Industrial's meshes/irb140/collision/link_1.stl,
        its meshes/irb140/* copied into meshes/: meshes/collision/link_1.stl); None when none is.
        """
        tail = path.removeprefix("meshes/")
        ends = [held for held in self._named(path) if tail.endswith("/" + held[len("meshes/") :])]
        return max(ends, key=len, default=None)

    def below(self, path: str) -> str | None:
        """The shortest path that meshes/ holds `path` (`meshes/<folder>/<name>`, which it does
        not hold) at, in folders of its own (meshes/meshes/collision/link_1.stl, the source's
        meshes/ copied into meshes/ made first); None when there is none, or two as short."""
        tail = path.removeprefix("meshes/")
        if "/" not in tail:  # a bare name below a folder is `only`'s: one file of that name
            return None
        deeper = sorted((held for held in self._named(path) if held.endswith("/" + tail)), key=len)
        if not deeper or (len(deeper) > 1 and len(deeper[1]) == len(deeper[0])):
            return None  # none, or two as deep: which one is meant is not told
        return deeper[0]

    def _named(self, path: str) -> list[str]:
        """The files below meshes/ (as `meshes/<path>`) of the name `path` ends in, exactly."""
        if self._names is None:
            self._names = _names_below(self.meshes)
        name = PurePosixPath(path).name
        return [held for held in self._names.get(name.casefold(), []) if held.endswith("/" + name)]


def _names_below(meshes: Path) -> dict[str, list[str]]:
    """The regular files below meshes/ (as meshes/<path>) by their name in lower case; links
    and names the build does not read are left out."""
    found: dict[str, list[str]] = {}
    if meshes.is_symlink():  # refused as such (linked_folder): nothing below it is looked at
        return found
    for top, folders, files in os.walk(meshes):
        below = PurePosixPath("meshes", Path(top).relative_to(meshes).as_posix())
        folders[:] = sorted(f for f in folders if ignored_part(f) is None)
        for name in sorted(files):
            path = str(below / name)
            full = os.path.join(top, name)
            if ignored_part(path) is None and os.path.isfile(full) and not os.path.islink(full):
                found.setdefault(name.casefold(), []).append(path)
    return found


def mesh_uri_path(
    filename: str, model_id: str, meshes: MeshesFolder | None
) -> tuple[str | None, Problem | None]:
    """The path below the robot's folder a mesh URI names, or the problem with it."""
    prefix = f"package://{model_id}/meshes/"
    if not filename.startswith(prefix):
        tail = _meshes_tail(filename, meshes)
        example = f" ({prefix}{tail} for meshes/{tail})" if tail else ""
        alike = next((c for c in filename if c in _SLASH_ALIKES), None)
        unseen = f" (it holds U+{ord(alike):04X}, which looks like '/' but is not)" if alike else ""
        return None, (
            "mesh_uri_not_package",
            f"mesh URI {filename!r} is not package://{model_id}/meshes/<file>{unseen}",
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
# characters drawn as '/': fullwidth solidus, division slash, fraction slash, big solidus
_SLASH_ALIKES = "\uff0f\u2215\u2044\u29f8"
_AS_SLASH = str.maketrans(dict.fromkeys(_SLASH_ALIKES, "/"))


def _meshes_tail(filename: str, meshes: MeshesFolder | None) -> str:
    """The path a mesh URI of another package likely has under meshes/: the longest end of its
    path (after a `package://<pkg>/` or other scheme prefix, and after its last `..`) at which
    meshes/ holds a file, else the one file of its name meshes/ holds, else what follows its own
    `meshes/` folder, else its file name; "" when it names no mesh file."""
    # a slash look-alike (a fullwidth solidus typed for '/') separates folders: the file named
    # is the one beyond it, never a name holding it that meshes/ does not hold
    filename = filename.translate(_AS_SLASH)
    scheme = _SCHEME.match(filename)
    path = filename[scheme.end() :] if scheme else filename
    if scheme and scheme.group(1).lower() in _PACKAGE_SCHEMES:
        path = path.partition("/")[2]  # the package's name is no folder of meshes/
    parts = path.split("/")
    if not path.lower().endswith(_MESH_SUFFIXES) or "\\" in path:
        return ""
    # ../meshes/a.obj, the file copied into meshes/: the tails after the last `..` only
    after = len(parts) - parts[::-1].index("..") if ".." in parts else 0
    parts = [p for p in parts[after:] if p not in ("", ".")]
    if meshes is None:
        held = None
    else:
        # a PartNet URDF's textured_objs/a.obj, Atlas's meshes_v3/r_farm.dae copied into meshes/
        ends = ["/".join(parts[i:]) for i in range(len(parts))]
        held = next((end for end in ends if meshes.holds(end)), None)
        only = meshes.only(parts[-1])
        held = held or (only[0].removeprefix("meshes/") if only else None)
    below = len(parts) - 1 - parts[::-1].index("meshes") if "meshes" in parts[:-1] else -1
    return held or ("/".join(parts[below + 1 :]) if below >= 0 else parts[-1])
