"""The checkout's build lock: two builds in one checkout take turns.

The lock file also says whether the last holder finished: a holder writes a mark into it and
replaces the mark when it lets go. A mark found on taking the lock means the previous holder was
killed, so only then is it worth looking for what it left half-done (git's index.lock works the
same way). A no-op build then costs no walk over build/. A finishing holder also records the stat
signature of a file it watches (doit's database), so the next holder can tell whether anything
touched that file in between.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
from pathlib import Path
from types import TracebackType
from typing import TextIO

from pipeline.filesig import stat_signature

LOCK_NAME = ".doit.lock"
MARK = "a build holds or held this lock without finishing\n"
FINISHED = "finished "


def searches_build(found: str) -> bool:
    """Whether a run finding `found` in the lock searches build/ for temporary files: unless
    the last holder recorded that it finished."""
    return not found.startswith(FINISHED)


def next_run_searches_build(root: Path) -> bool:
    """Whether the next doit in this checkout searches build/ for temporary files."""
    try:
        with open(root / LOCK_NAME, encoding="utf-8", errors="replace") as handle:
            return searches_build(handle.read(4096))
    except OSError:
        return True  # no lock yet: a new checkout


def unopenable_fix(exc: OSError) -> str:
    """What to do when the lock cannot be opened, by its cause."""
    if exc.errno == errno.EROFS:
        return (
            "the checkout's file system is read-only, so doit cannot build here (`doit list` "
            "and `doit info` still run); `pipeline check` checks build/ without writing"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):  # another user's checkout
        return "run as the user who owns the checkout, or make the checkout writable"
    return f"remove {LOCK_NAME} (a local file, never committed) and run again"


class BuildLock:
    """A held build lock; `interrupted` is whether the previous holder stopped without finishing."""

    def __init__(self, root: Path, watch: str | None = None, required: bool = True) -> None:
        """Take the lock, waiting for another holder; one that cannot be opened stops the run
        (exit 2), unless not `required` (a command that writes nothing): then none is `held`."""
        self.root = root
        self.watch = watch
        self.handle: TextIO | None = None
        # nothing to clear or repair when not held (and nothing that may be done without it)
        self.interrupted = self.searches_build = False
        self.left = ""
        # errors="replace": any bytes found there (junk included) read as a mark, never an error;
        # O_NOFOLLOW: the lock is truncated, so a link in its place must not reach another file
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(root / LOCK_NAME, flags, 0o644)
        except OSError as exc:  # a folder or a link in its place: a message, not a traceback
            if not required:
                return
            print(
                f"doit: the build lock {LOCK_NAME} cannot be opened ({exc.strerror}); "
                + unopenable_fix(exc),
                file=sys.stderr,
            )
            raise SystemExit(2) from None
        self.handle = os.fdopen(fd, "a+", encoding="utf-8", errors="replace")
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(
                "doit: another build is running in this checkout; waiting for it to finish",
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(self.handle, fcntl.LOCK_EX)
        # A forked child (doit -n's workers, the spheres process pool) shares this lock, and when
        # the build is killed it waits forever for its dead parent: it must not keep the checkout
        # locked. Closing the child's copy leaves the parent's lock (and the mark) as they are.
        os.register_at_fork(after_in_child=self.handle.close)
        self._read_mark(self.handle)

    @property
    def held(self) -> bool:
        """Whether this run holds the lock (one it could not open is not held)."""
        return self.handle is not None

    def _read_mark(self, handle: TextIO) -> None:
        """Read what the last holder left, and mark the lock as held by an unfinished run."""
        handle.seek(0)
        found = handle.read()
        self.interrupted = found != "" and not found.startswith(FINISHED)
        # also when no run recorded how it ended: a new checkout, or a lock an older version
        # left empty (a killed run of that version left its temporary files without a mark)
        self.searches_build = searches_build(found)
        # the watched file's signature when the last holder finished ("" when not recorded)
        self.left = found[len(FINISHED) :].strip() if found.startswith(FINISHED) else ""
        if not self.interrupted:
            handle.truncate(0)
            handle.write(MARK)
            handle.flush()

    def watched(self) -> str:
        """The stat signature of the watched file now (`-` when there is none)."""
        try:
            return stat_signature(os.stat(self.root / (self.watch or "")))
        except OSError:
            return "-"

    def finish(self) -> None:
        """Replace the mark (this holder finished) and let the next holder in."""
        if self.handle is None or self.handle.closed:
            return
        self.handle.truncate(0)
        if self.watch is not None:
            self.handle.write(f"{FINISHED}{self.watched()}\n")
        self.handle.close()

    def __enter__(self) -> BuildLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.finish()


def hold_build_lock(root: Path) -> BuildLock:
    """Take the checkout's build lock, waiting for another run to finish."""
    return BuildLock(root)
