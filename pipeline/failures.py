"""When the machine fails under a build (a full disk, a limit, memory, Ctrl-C): one line each.

Bad input is a ContractError raised where the rule lives; what the system refuses while a step
runs (EMFILE on opening a source, MemoryError in a sphere fit, ENOSPC on doit's own database) is
caught at the edge, here, and said in one line naming the file, what failed and what to do.
A terminal whose encoding cannot show a character of a finding or path gets it escaped.
"""

from __future__ import annotations

import atexit
import errno
import io
import os
import signal
import sys
from pathlib import Path
from types import FrameType, TracebackType
from typing import TextIO, cast

from pipeline.findings import Finding
from pipeline.writing import write_fix

# exit status of a run stopped by SIGTERM, as the shell reports a process killed by it
TERMINATED_STATUS = 128 + signal.SIGTERM
INTERRUPTED = "interrupted"


def escape_unencodable(*streams: object) -> None:
    """Make text streams escape what their encoding cannot hold (`\\xe9`), as stderr does."""
    # stdout's errors are strict (PYTHONIOENCODING=ascii, a C locale): a finding or a path
    # holding an é ended the command with a traceback, after its outputs were written
    for stream in streams:
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def open_standard_streams() -> bool:
    """Put /dev/null on a closed standard stream (fd 0, 1 or 2); True when stdout was closed.

    A closed fd's number goes to the next file opened (a lock, doit's database), where a child
    process's output would then land; and Python's print() to a closed stdout (None) silently
    prints nothing, so `pipeline identity DIR >&-` said nothing and exited 0.
    """
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    return 1 in closed


def reader_left(stream: object) -> None:
    """After a BrokenPipeError writing `stream` (`doit | head -1`: the reader is gone), point its
    file descriptor at /dev/null: the run goes on unreported and exits without a traceback."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # a StringIO, a closed stream: nothing to do
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


class _ReaderMayLeave:
    """A text stream whose reader may leave (`| head -1`): what follows goes to /dev/null."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write as the stream does; once its reader is gone, to /dev/null."""
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            reader_left(self._stream)
            return len(text)

    def flush(self) -> None:
        """Flush as the stream does; a reader gone is no error."""
        try:
            self._stream.flush()
        except BrokenPipeError:
            reader_left(self._stream)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def reader_may_leave(stream: TextIO) -> TextIO:
    """`stream`, which goes on unheard once its reader is gone, so that a command piped into
    `head -1` finishes and exits as it would have (`spheres status` exits 1 for a link to refit
    only), rather than stopping at its next line."""
    return cast(TextIO, _ReaderMayLeave(stream))


def flush_stdout() -> None:
    """At exit, flush stdout as Python would, but a reader gone is no error (exit status 120)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        reader_left(sys.stdout)


def system_fix(exc: OSError) -> str:
    """What to do when the system refused an operation a step needed."""
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "check the permissions of the file and its folders and run again"
    return write_fix(exc, "the file and its folders")


def repo_relative(root: Path, name: object) -> str | None:
    """A path an OSError names, relative to the checkout; None when it is outside or none."""
    if not isinstance(name, str):
        return None
    full = os.path.abspath(os.path.join(root, name))
    base = os.path.join(os.path.abspath(root), "")
    return Path(full[len(base) :]).as_posix() if full.startswith(base) else None


class WorkerDied(RuntimeError):
    """A worker process of a step was killed (the out-of-memory killer, a signal)."""


def system_finding(
    root: Path, step: str, where: str, exc: OSError | MemoryError | WorkerDied
) -> Finding:
    """The one line of a step the system stopped; `where` is its output when no file is named."""
    if isinstance(exc, WorkerDied):
        return Finding(
            "worker_died",
            where,
            "",
            f"{step} stopped: one of its worker processes was killed (out of memory, a signal)",
            "free memory (the kernel's log names what killed it) and run again",
        )
    if isinstance(exc, MemoryError):
        return Finding(
            "out_of_memory",
            where,
            "",
            f"{step} ran out of memory",
            "free memory or raise the memory limit (`ulimit -v`) and run again",
        )
    return Finding(
        "system_refused",
        repo_relative(root, exc.filename) or where,
        "",
        f"{step} stopped: the system refused an operation ({exc.strerror or exc})",
        system_fix(exc),
    )


def terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM handler: stop the run as Ctrl-C does (a temporary file is removed, not left)."""
    print(f"doit: terminated; {_RESUME}", file=sys.stderr, flush=True)
    raise SystemExit(TERMINATED_STATUS)


_RESUME = "each output is whole (as it was or as it will be); run `doit` again to finish"


def quiet_interrupt(
    kind: type[BaseException], value: BaseException, trace: TracebackType | None
) -> None:
    """sys.excepthook of a doit run: Ctrl-C is one line, not doit's stack (exit status 130)."""
    if issubclass(kind, KeyboardInterrupt):
        print(f"doit: {INTERRUPTED}; {_RESUME}", file=sys.stderr, flush=True)
        return
    sys.__excepthook__(kind, value, trace)


def install_handlers() -> None:
    """Ctrl-C and SIGTERM end this doit run with one line (only in its main thread)."""
    sys.excepthook = quiet_interrupt
    atexit.register(flush_stdout)  # registered first of the run's: it runs last
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, terminate)
        # a forked worker (the spheres pool, doit -n) dies of SIGTERM quietly; its parent speaks
        os.register_at_fork(after_in_child=_default_sigterm)


def _default_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
