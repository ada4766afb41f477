"""Digesting many files on two cores, for a check of a checkout nothing remembers.

Without a digest cache or git's index (an export of the repository, a folder copied without
.git) `pipeline check` reads every output: about 400 MB in 12,000 files at 100 robots and 500
cells, each cell holding a copy of its robot's description. Threads do not halve that (each file
is a few short system calls, and the GIL passed between two threads at each one costs more than
it saves), so a forked child shares the files with this process and sends back what it found.
The files are cut into batches, each holding whole runs of one recorded content where it can, so
that a content is hashed once and its copies are compared with its bytes; both processes take
the next batch from one pipe until none is left, so neither waits for the other when its files
were the larger ones or its core the slower one. Where no child can be forked safely (not Linux,
one core, threads running), or the child fails, the files are read here, one after the other.
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
# Files a batch holds at most: about a millisecond of reading, so that the two sides end within
# one of each other; copies of one content beyond it go to further batches.
BATCH = 48
# Bytes of one batch number in the pipe both sides take batches from, and the most numbers it
# is given: 4 KiB, the one page a pipe is left with once its user passes pipe-user-pages-soft.
_NUMBER = 4
_BATCHES = 1024
# a symbolic link is left out (not opened): Digests reads it as one (digestread.LINKED)
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
    """As digest_files, with the files shared with a forked child where that is safe and worth
    it."""
    if len(todo) < FORK_MIN or not may_fork():
        return digest_files(prefix, todo, kept, keep, limit)
    batches = batched(todo, max(BATCH, -(-len(todo) // _BATCHES)))
    queue = _queue(len(batches))
    if queue is None:
        return digest_files(prefix, todo, kept, keep, limit)

    def work() -> dict[str, Read]:
        found: dict[str, Read] = {}
        while number := os.read(queue, _NUMBER):
            batch = batches[int.from_bytes(number, "little")]
            found.update(digest_files(prefix, batch, kept, keep, limit))
        return found

    try:
        # no child (EMFILE, EAGAIN under `ulimit -u`): every batch is then read here
        child = fork_work(lambda: _payload(work()))
        try:
            found = work()
        except BaseException:
            if child is not None:
                stop(child)
            raise
    finally:
        os.close(queue)
    if child is not None:
        found.update(_decode(collect(child) or b""))
    return found


def batched(todo: Sequence[tuple[str, str]], size: int) -> list[list[tuple[str, str]]]:
    """`todo` cut into batches of at most `size` files, the files of one recorded digest
    together where they fit in one, in their first file's order."""
    runs: dict[str, list[tuple[str, str]]] = {}
    for item in todo:
        runs.setdefault(item[1], []).append(item)
    batches: list[list[tuple[str, str]]] = []
    batch: list[tuple[str, str]] = []
    for run in runs.values():
        if batch and len(batch) + len(run) > size:
            batches.append(batch)
            batch = []
        for start in range(0, len(run), size):
            batch.extend(run[start : start + size])
            if len(batch) == size:
                batches.append(batch)
                batch = []
    if batch:
        batches.append(batch)
    return batches


def _queue(count: int) -> int | None:
    """The reading end of a pipe holding the numbers 0 to `count - 1`, its writing end closed;
    None when no pipe can be made or the numbers do not fit in it.

    Each number is one read of _NUMBER bytes, written before anyone reads: two processes
    reading the pipe at once each take whole numbers, and each number once."""
    data = b"".join(i.to_bytes(_NUMBER, "little") for i in range(count))
    try:
        reader, writer = os.pipe()
    except OSError:
        return None
    try:
        os.set_blocking(writer, False)  # a pipe too small for the numbers refuses, never blocks
        written = os.write(writer, data)
    except OSError:
        written = -1
    finally:
        os.close(writer)
    if written != len(data):
        os.close(reader)
        return None
    return reader


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
