"""Reading untrusted files: regular files only, within a size limit (atomic writes: writing.py).

Strict parsing of what is read lives beside this module: JSON in strict_json.py, XML in
strict_xml.py.
"""

from __future__ import annotations

import fnmatch
import os
import stat
import unicodedata
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from pipeline.findings import ContractError, Finding, as_read, folded

MiB = 1024 * 1024
JSON_LIMIT = 16 * MiB
XML_LIMIT = 32 * MiB
MESH_LIMIT = 256 * MiB
SOURCE_LIMIT = 4 * MiB


def refusal(code: str, display: str, place: str, message: str, hint: str) -> ContractError:
    """The error of one finding, which strict reading raises at the first problem."""
    return ContractError([Finding(code, display, place, message, hint)])


def _unreadable(display: str, exc: OSError) -> ContractError:
    return refusal(
        "file_unreadable",
        display,
        "",
        f"cannot be read ({exc.strerror})",
        "check the file's permissions",
    )


def folder_refused(display: str, exc: OSError) -> ContractError:
    """A folder this user may not list or search, so what it holds cannot be known."""
    return refusal(
        "file_unreadable",
        display,
        "",
        f"folder cannot be listed or searched ({exc.strerror})",
        f"give the user who builds read and search permission on {display}/ (chmod a+rx) "
        "and run again",
    )


def is_utf8(text: str) -> bool:
    """Whether a str can be written as UTF-8 (a name not in UTF-8 decodes to lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_regular(
    path: str | Path, limit: int, follow: bool = True
) -> tuple[bytes, os.stat_result] | None:
    """A regular file's bytes and stat, or None for anything else, unreadable or over `limit`
    (or, unless `follow`, a symbolic link).

    Opened before its stat is taken, without waiting for a writer: a FIFO is refused, not
    waited on. Read sized by the file, not by the limit (which a read would allocate).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags if follow else flags | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        data = read_fd(fd, info.st_size, limit)
        return None if data is None else (data, info)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_fd(fd: int, size: int, limit: int) -> bytes | None:
    """The rest of an open file whose stat said `size` bytes; None when it grew past `limit`."""
    data = os.read(fd, size + 1)  # one byte more tells whether it grew
    if len(data) <= size and len(data) <= limit:  # the usual case: it did not grow
        return data
    chunks = [data]
    total = len(data)
    while size < total <= limit and chunks[-1]:  # the file grew since its stat
        chunks.append(os.read(fd, 1 << 20))
        total += len(chunks[-1])
    return None if total > limit else data if len(chunks) == 1 else b"".join(chunks)


def require_source(folder: Path, name: str, display: str, hint: str = "", like: str = "") -> None:
    """Refuse a robot or cell folder that lacks a file it must hold (`robot.urdf`).

    Files matching the pattern `like` (by default, any with `name`'s extension; any case) are
    offered as the misnamed file to rename. `hint` says how to write the file when none is.
    """
    try:
        os.lstat(folder / name)  # a dangling link counts: reading it refuses it
        return
    except PermissionError as exc:  # it may well exist: not `file_missing`
        raise folder_refused(display.rpartition("/")[0] or ".", exc) from None
    except OSError:
        pass
    like = (like or f"*{os.path.splitext(name)[1]}").lower()
    top = folder.parent.name
    try:
        names = [entry.name for entry in os.scandir(folder)]
        near = sorted(n for n in names if fnmatch.fnmatchcase(n.lower(), like))
    except OSError:  # no such folder: a path given on the command line
        hint = "create it or correct the path that names it"
    else:
        if near:
            hint = f"rename {' or '.join(near)} to {name}: each folder in {top}/ holds its {name}"
        elif not hint:
            hint = f"add {name}, or move the folder out of {top}/: each folder there holds one"
    raise refusal("file_missing", display, "", "file does not exist", hint)


# how the refusal of each kind of source folder that is a symbolic link says to fix it
_LINKED_FOLDER_HINTS = {
    # a copy of another robot's or cell's folder is a new one: its id must follow the folder
    "robot": "replace the link with a real folder holding the robot's sources (copy what it "
    "points to into {display}/; a copy of another robot's folder is a new model: give its "
    "<robot name> and package:// mesh URIs the folder's name)",
    "cell": "replace the link with a real folder holding the cell's sources (copy what it "
    "points to into {display}/; a copy of another cell's folder is a new cell: give its "
    "machine.json the folder's name as cell_id)",
    "meshes": "replace the link with a real meshes/ folder holding the mesh files",
    # a folder beside srdf.py, which gen_srdf() can import from
    "helper": "replace the link with a real folder holding the modules it points to (copy "
    "them into {display}/): the build reads nothing through a linked folder, so a change "
    "behind it would leave robot.srdf as it was",
}


def linked_folder(folder: str | os.PathLike[str], display: str, kind: str) -> list[Finding]:
    """A robot or cell folder (`robots/<id>`, `cells/<id>`), a robot's `meshes/` or a folder
    beside its srdf.py that is a symbolic link, to anything: refused alone, before anything in
    it is read.

    Every path below it would be read through the link: from outside the repository, or as a
    second robot or cell made of another folder's files.
    """
    if not os.path.islink(folder):
        return []
    hint = _LINKED_FOLDER_HINTS[kind].format(display=display)
    message = f"the {kind} folder is a symbolic link"
    return [Finding("symlink_refused", display, "", message, hint)]


def linked_helper_folders(base: str, paths: Iterable[str]) -> list[Finding]:
    """The refusal of each of `paths` (beside a robot's srdf.py, repo-relative; `base` the
    repository with a final separator) that is a symbolic link to a folder.

    gen_srdf() can import from any folder beside srdf.py, and the srdf step lists nothing
    through a link (sourcefiles.helper_modules), so a change behind one would go unseen. A module
    file may be a link: its digest follows its bytes (digests.LINKED).
    """
    found = (path for path in paths if os.path.isdir(base + path))
    return [f for path in found for f in linked_folder(base + path, path, "helper")]


def case_collisions(folder: Path, display: str) -> list[Finding]:
    """A robot or cell folder whose name a sibling repeats in another case."""
    try:
        names = os.listdir(folder.parent)
    except OSError:
        return []
    own = folder.name.casefold()
    twins = sorted(n for n in names if n != folder.name and n.casefold() == own)
    top = folder.parent.name
    return [
        Finding(
            "case_collision",
            display,
            "",
            f"{top}/{folder.name} and {top}/{twin} differ only in case: a file system that "
            "ignores case (macOS, Windows) checks them out as one folder",
            f"rename one of them (and its id) so that no two folders of {top}/ differ only in case",
        )
        for twin in twins
    ]


def twin_hint(path: Path) -> str:
    """For a missing file: the name its folder holds in another case, or with its accents encoded
    otherwise (NFC, NFD: macOS finds either; file names are bytes here), or that differs only in
    spaces or invisible characters (a pin pasted with a trailing space); "" when none."""
    try:
        listing = os.listdir(path.parent)
    except OSError:
        return ""
    names = sorted(n for n in listing if folded(n) == folded(path.name))
    if not names:
        # printed, the two look alike: both shown escaped, so that the difference is seen
        alike = sorted(n for n in listing if as_read(n) == as_read(path.name))
        if not alike:
            return ""
        return (
            f"the folder holds {alike[0]!a}, a name that differs from this one ({path.name!a}) "
            "only in spaces or invisible characters: write the name as the file has it"
        )
    if unicodedata.normalize("NFC", names[0]) != unicodedata.normalize("NFC", path.name):
        return f"the folder holds {names[0]!r}: write the name as it is cased"
    # the two look alike when printed: shown escaped, so that the difference is seen
    return (
        f"the folder holds {names[0]!a}, the same name with its accents encoded otherwise "
        f"(this one is {path.name!a}): write the name as the file has it"
    )


_MESH_SUFFIXES = (".stl", ".obj", ".dae", ".ply", ".gltf", ".glb", ".mtl")


def _smaller(display: str) -> str:
    """The fix of a file over its limit, by what the file is."""
    suffix = PurePosixPath(display).suffix.lower()
    if suffix in _MESH_SUFFIXES:
        return "decimate the mesh (fewer triangles) with a mesh tool, or split it"
    if suffix == ".json":
        return (
            "a JSON file this large is no configuration, calibration or program: check that it "
            "is the right file, and give data by reference rather than inline"
        )
    if suffix in (".urdf", ".srdf", ".xml", ".xacro"):
        return "an XML file this large is no robot description: check that it is the right file"
    if suffix == ".py":
        return "keep data out of the generator source: compute it, or read it from robot.urdf"
    return "check that it is the right file: it is larger than any the compiler reads"


def read_bytes(path: Path, display: str, limit: int) -> bytes:
    """Read a regular file (no symlink) of at most `limit` bytes."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise refusal(
            "file_missing",
            display,
            "",
            "file does not exist",
            "create it or correct the path that names it",
        ) from None
    except OSError as exc:
        raise _unreadable(display, exc) from None
    if stat.S_ISLNK(info.st_mode):
        raise refusal(
            "symlink_refused",
            display,
            "",
            "is a symbolic link",
            "replace the link with the regular file it points to",
        )
    if not stat.S_ISREG(info.st_mode):
        raise refusal(
            "not_a_regular_file",
            display,
            "",
            "is not a regular file",
            "replace it with a regular file",
        )
    if info.st_size > limit:
        raise refusal(
            "file_too_large",
            display,
            "",
            f"is {info.st_size} bytes, over the limit of {limit} bytes",
            _smaller(display),
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unreadable(display, exc) from None
    if len(data) > limit:
        raise refusal(
            "file_too_large", display, "", f"is over the limit of {limit} bytes", _smaller(display)
        )
    if data.startswith(LFS_POINTER) and len(data) < 1024:
        raise refusal(
            "lfs_pointer",
            display,
            "",
            "is a Git LFS pointer, not the file it stands for (git-lfs did not fetch it)",
            "install git-lfs and run `git lfs pull` in the checkout, then run again",
        )
    return data


# The first line of a Git LFS pointer file: a checkout without git-lfs holds these for the files
# the repository stores in LFS (meshes, often), where a mesh parser said "export the mesh again".
LFS_POINTER = b"version https://git-lfs.github.com/spec/"


# Outputs are written mode 0644: an execute bit on one is a hand edit git would commit (it records
# that bit), which a build from nothing would not reproduce.
EXECUTE_BITS = 0o111
