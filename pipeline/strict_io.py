"""Reading untrusted files (regular files only, within a size limit) and atomic writes.

Strict parsing of what is read lives beside this module: JSON in strict_json.py, XML in
strict_xml.py.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from pipeline.findings import ContractError, Finding

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
    through a link (plan._helper_modules), so a change behind one would go unseen. A module
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
            "shrink the file (decimate a mesh, split a document)",
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unreadable(display, exc) from None
    if len(data) > limit:
        raise refusal(
            "file_too_large", display, "", f"is over the limit of {limit} bytes", "shrink the file"
        )
    return data


# Outputs are written mode 0644: an execute bit on one is a hand edit git would commit (it records
# that bit), which a build from nothing would not reproduce.
EXECUTE_BITS = 0o111


def stage_write(path: Path, data: bytes, always: bool = False) -> str | None:
    """A temporary file beside `path` holding `data`, to rename into place; None when equal
    (unless `always`)."""
    try:
        info = os.lstat(path)
        plain = stat.S_ISREG(info.st_mode) and not info.st_mode & EXECUTE_BITS
        if plain and not always and path.read_bytes() == data:
            return None
    except OSError:
        pass
    import tempfile  # here: a check, which writes no output, does without its 3 ms import

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def atomic_write(path: Path, data: bytes) -> bool:
    """Write bytes through a temporary file renamed into place; False when already equal."""
    tmp = stage_write(path, data)
    if tmp is None:
        return False
    try:
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def atomic_write_all(files: dict[Path, bytes]) -> None:
    """Write files that belong together (a bundle and its identity): all of them or none.

    Each is staged as a temporary file in its folder; only when every one is staged are they
    renamed into place (a rename needs no space), so a full disk leaves the old set whole.
    """
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            staged.append((str(stage_write(path, data, always=True)), path))
        replace_all(staged)
    except BaseException:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise


class _Failed(OSError):
    """A rename into place the system refused, naming its target."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(error.errno, error.strerror)
        self.path, self.error = path, error


def replace_all(staged: Sequence[tuple[str, Path]]) -> None:
    """Rename staged files into place, all or none: when a rename fails (an immutable target,
    say), the renames before it are undone, from hard links kept of the files they replaced."""
    done: list[tuple[Path, bool, str | None]] = []  # target, whether it existed, its old file
    try:
        for tmp, path in staged:
            existed = os.path.lexists(path)
            aside = _link_aside(path) if existed else None
            try:
                os.replace(tmp, path)
            except BaseException as exc:
                if aside is not None:
                    os.unlink(aside)
                if isinstance(exc, OSError):
                    raise _Failed(path, exc) from exc
                raise
            done.append((path, existed, aside))
    except BaseException:
        for path, existed, aside in reversed(done):
            if aside is not None:
                os.replace(aside, path)
            elif not existed:
                os.unlink(path)
        raise
    finally:
        for _, _, aside in done:
            if aside is not None and os.path.lexists(aside):
                os.unlink(aside)


def _link_aside(path: Path) -> str | None:
    """A hard link to the file at `path` under a temporary name beside it; None where the file
    system refuses one (then that rename cannot be undone)."""
    import secrets

    for _ in range(8):
        aside = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            os.link(path, aside, follow_symlinks=False)
            return aside
        except FileExistsError:
            continue
        except OSError:
            return None
    return None


# what to do when the system refuses a write, by errno (the default: permissions)
_WRITE_FIXES = {
    errno.ENOSPC: "free space on the disk that holds it and run again",
    errno.EDQUOT: "free space within your disk quota and run again",
    errno.EFBIG: "raise the file-size limit (`ulimit -f`) and run again",
    errno.EMFILE: "raise the open-file limit (`ulimit -n`) and run again",
    errno.ENFILE: "close other programs (the system's open-file table is full) and run again",
    errno.ENOMEM: "free memory or raise the memory limit (`ulimit -v`) and run again",
}


def write_fix(exc: OSError, writable: str, folder: Path | None = None, parent: str = "") -> str:
    """How to fix a refused write: free space, raise a limit, or make `writable` writable (or,
    when `folder`, the one written in, is not there, `parent`, which it is to be made in)."""
    fix = _WRITE_FIXES.get(exc.errno or 0)
    if fix is None and folder is not None and os.path.lexists(folder) and not folder.is_dir():
        return f"move the file {writable.rstrip('/')} away (a folder goes there) and run again"
    if fix is None and folder is not None and not os.path.lexists(folder):
        fix = f"{writable} does not exist and cannot be made in {parent}: make {parent} writable"
        return f"{fix} (or create {writable} there, writable by you) and run again"
    return fix or f"make {writable} writable and run again"


def _unwritable(path: Path, exc: OSError) -> Finding:
    blocker = file_in_the_way(path) if exc.errno in (errno.EEXIST, errno.ENOTDIR) else None
    if blocker is not None:  # the system's "File exists" names neither the file nor the cause
        return Finding(
            "output_unwritable",
            path.as_posix(),
            "",
            f"cannot be written: {blocker.as_posix()} is a file, not a folder",
            "name a path whose folders are folders (or move that file away) and run again",
        )
    return Finding(
        "output_unwritable",
        path.as_posix(),
        "",
        f"cannot be written: {exc.strerror or exc}",
        _WRITE_FIXES.get(exc.errno or 0, "name a file in a folder you can create and write to"),
    )


def file_in_the_way(path: Path) -> Path | None:
    """The nearest folder of `path` that exists but is no folder (a file), or None."""
    for folder in path.parents:
        if os.path.lexists(folder):
            return None if os.path.isdir(folder) else folder
    return None


def write_output(path: Path, data: bytes) -> bool:
    """atomic_write to a path the user named: a refusal by the system is a finding, not a crash."""
    try:
        return atomic_write(path, data)
    except OSError as exc:
        raise ContractError([_unwritable(path, exc)]) from None


def write_outputs(outputs: Sequence[tuple[Path, bytes]]) -> list[Path]:
    """Write paths the user named, all or none where the system allows; the changed ones.

    Every file is staged beside its target before any is renamed into place, so an output
    the system refuses (a file where its folder should be, no permission) leaves the others
    as they were.
    """
    staged: list[tuple[Path, str]] = []
    findings: list[Finding] = []
    for path, data in outputs:
        try:
            if path.is_dir():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
            tmp = stage_write(path, data)
        except OSError as exc:
            findings.append(_unwritable(path, exc))
            continue
        if tmp is not None:
            staged.append((path, tmp))
    try:
        if findings:
            raise ContractError(findings)
        try:
            replace_all([(tmp, path) for path, tmp in staged])
        except _Failed as failed:
            raise ContractError([_unwritable(failed.path, failed.error)]) from None
        staged = [(path, "") for path, _ in staged]
    finally:
        for _, tmp in staged:
            if tmp and os.path.exists(tmp):
                os.unlink(tmp)
    return [path for path, _ in staged]
