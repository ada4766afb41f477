"""Digesting many files on two cores, for a check of a checkout nothing remembers.

Without a digest cache or git's index (an export of the repository, a folder copied without
.git) `pipeline check` reads every output: about 400 MB in 12,000 files at 100 robots and 500
cells, each cell holding a copy of its robot's description. Threads do not halve that (each file
is a few short system calls, and the GIL passed between two threads at each one costs more than
it saves), so a forked child reads the files of half the distinct contents and sends back what
it found. Files holding one content go to one side, so each content is hashed once and its
copies are compared with its bytes. Where no child can be forked safely (not Linux, one core,
threads running), or the child fails, the files are read here, one after the other.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from stat import S_ISREG
from typing import NamedTuple

from pipeline.strict_io import EXECUTE_BITS

# What is found of a file: its stat signature (see digests.stat_signature), hex SHA-256, and
# the latest time its bytes can have changed (digests.changed_at), in ns.
Read = tuple[str, str, int]
# Fewer files than this are not worth a child.
FORK_MIN = 256
# a symbolic link is left out (not opened): Digests reads it as one (digests.LINKED)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


def digest_files(
    prefix: str,
    todo: Sequence[tuple[str, str]],
    kept: Mapping[str, bytes],
    keep: Callable[[bytes, str], object],
    limit: int,
) -> dict[str, Read]:
    """What each plain file of `todo` (path, digest last recorded) holds, by path.

    A file holding the kept bytes of its recorded digest is compared with them, any other is
    hashed and offered to `keep`. Anything not found here (not a regular file, executable,
    larger than `limit`, growing, unreadable) is left out for the caller's usual path.
    """
    found: dict[str, Read] = {}
    for rel, expected in todo:
        try:
            fd = os.open(prefix + rel, _OPEN_FLAGS)
        except (OSError, ValueError):  # ValueError: a NUL in the path
            continue
        try:
            info = os.fstat(fd)
            mode = info.st_mode
            if not S_ISREG(mode) or mode & EXECUTE_BITS or info.st_size > limit:
                continue
            data = os.read(fd, info.st_size + 1)
        except OSError:
            continue
        finally:
            os.close(fd)
        if len(data) > info.st_size:
            continue  # growing: being written now
        if kept.get(expected) == data:
            digest = expected
        else:
            digest = hashlib.sha256(data).hexdigest()
            keep(data, digest)
        changed = max(info.st_ctime_ns, info.st_mtime_ns)
        found[rel] = (
            f"{info.st_size} {info.st_mtime_ns} {info.st_ctime_ns} {info.st_ino}",
            digest,
            changed,
        )
    return found


def digest_on_two_cores(
    prefix: str,
    todo: Sequence[tuple[str, str]],
    kept: Mapping[str, bytes],
    keep: Callable[[bytes, str], object],
    limit: int,
) -> dict[str, Read]:
    """As digest_files, with the files of half the distinct recorded digests read by a forked
    child where that is safe and worth it."""
    if len(todo) < FORK_MIN or not may_fork():
        return digest_files(prefix, todo, kept, keep, limit)
    mine = [item for item in todo if not hash(item[1]) & 1]
    theirs = [item for item in todo if hash(item[1]) & 1]
    child = fork_work(lambda: _payload(digest_files(prefix, theirs, kept, keep, limit)))
    if child is None:  # no pipe or no child (EMFILE, EAGAIN under `ulimit -u`): read here
        return digest_files(prefix, todo, kept, keep, limit)
    try:
        found = digest_files(prefix, mine, kept, keep, limit)
    except BaseException:
        stop(child)
        raise
    found.update(_decode(collect(child) or b""))
    return found


class Forked(NamedTuple):
    """A forked child at work: its pid and the reading end of the pipe it answers on."""

    pid: int
    reader: int


def may_fork() -> bool:
    """Whether a child may be forked here and has a core of its own to run on."""
    if sys.platform != "linux":  # fork without exec is unsafe on macOS, absent on Windows
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False  # a lock another thread holds would stay held in the child
    return len(os.sched_getaffinity(0)) > 1


def fork_work(work: Callable[[], bytes]) -> Forked | None:
    """A child forked to write what `work` returns to a pipe and exit; None when no pipe or
    child can be made.

    Signals are blocked across the fork, and unblocked in each process only where its handler
    can act: one met in the child before its exit is assured would run the parent's code there
    (its exception and exit handlers, its buffered output a second time).
    """
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())  # as it is; a signal met so far: here
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        try:
            reader, writer = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return None
        if pid == 0:
            _child(reader, writer, work, mask)
        os.close(writer)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return Forked(pid, reader)


def collect(child: Forked) -> bytes | None:
    """What a child wrote, once it has exited; None when it failed."""
    chunks: list[bytes] = []
    try:
        while chunk := os.read(child.reader, 1 << 20):
            chunks.append(chunk)
    except BaseException:
        _reap(child.pid, kill=True)
        raise
    finally:
        os.close(child.reader)
    return b"".join(chunks) if _reap(child.pid) else None


def stop(child: Forked) -> None:
    """Kill and reap a child whose answer is no longer wanted."""
    _reap(child.pid, kill=True)
    os.close(child.reader)


def _child(
    reader: int, writer: int, work: Callable[[], bytes], mask: set[int | signal.Signals]
) -> None:
    """Do `work` and write what it returns to `writer`; never returns (exit status 0 when
    everything was written). Signals, blocked until here, are restored to `mask` once the exit
    is assured."""
    status = 1
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.close(reader)
        view = memoryview(work())
        while view:
            view = view[os.write(writer, view) :]
        status = 0
    finally:
        os._exit(status)  # no atexit handlers, no flushing of the parent's buffers


def _payload(found: Mapping[str, Read]) -> bytes:
    """What digest_files found, as NUL-separated fields."""
    return "".join(
        f"{rel}\0{signature}\0{digest}\0{changed}\0"
        for rel, (signature, digest, changed) in found.items()
        if "\0" not in rel
    ).encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> dict[str, Read]:
    """The inverse of _payload."""
    fields = data.decode("utf-8", "surrogatepass").split("\0")
    return {
        fields[i]: (fields[i + 1], fields[i + 2], int(fields[i + 3]))
        for i in range(0, len(fields) - 1, 4)
    }


def _reap(pid: int, kill: bool = False) -> bool:
    """Wait for the child (killed first with `kill`); whether it exited with status 0."""
    if kill:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return False
        except InterruptedError:
            continue
        return os.waitstatus_to_exitcode(status) == 0
