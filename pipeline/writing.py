"""Atomic writes: each output staged as a temporary file beside it and renamed into place, a set
of them all or none; a write the system refuses is a finding."""

from __future__ import annotations

import errno
import functools
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from pipeline.findings import ContractError, Finding
from pipeline.strict_io import EXECUTE_BITS

# the bytes a file name may hold (Linux's NAME_MAX; macOS's and Windows' are as long or longer)
NAME_MAX = 255
_TEMP_TAIL = len("12345678.tmp")  # what follows a temporary name's prefix


def temp_prefix(name: str) -> str:
    """`.<name>.`, the prefix of a temporary name beside a file `name`: cut so that the whole
    (8 random characters and `.tmp` after it) is a name the file system holds."""
    while len(os.fsencode(f".{name}.")) + _TEMP_TAIL > NAME_MAX:
        name = name[:-1]
    return f".{name}."


@functools.cache
def file_mode() -> int:
    """The mode of a written file: 0644 as the user's umask allows (0600 under `umask 077`)."""
    try:  # Linux: read, not set and set back, which another thread's file could catch
        with open("/proc/self/status", encoding="ascii") as status:
            umask = next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o644 & ~umask


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
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path.name), suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, file_mode())  # mkstemp's is 0600 whatever the umask
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
        aside = os.path.join(path.parent, f"{temp_prefix(path.name)}{secrets.token_hex(4)}.tmp")
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
    finally:  # what is still staged (a renamed file's temporary name is gone)
        for _, tmp in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return [path for path, _ in staged]
