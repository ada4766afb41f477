"""Run doit with its writes counted, and SIGKILL it at a chosen write: `killshim.py N LOG [args]`.

The events, in the order a build meets them: every write into an atomic_write temporary file
(`tmp-write`, killed after half the bytes), every rename into place (`replace`, killed before it;
`replaced`, killed after it), and doit's database dump (`db-dump`, killed after half the bytes
of its temporary file: doit saves it through pipeline.doitdb.save_database). The
shim also logs, without counting, when doit opens its database (`db-open`). Each event is
appended to LOG as `pid index kind path` before it happens, so a test knows where the build
stopped and whether two runs interleaved. N < 0 counts without killing.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from doit import dependency
from doit.doit_cmd import DoitMain

from pipeline import doitdb


class Shim:
    """Counts write events and kills this process at event `target`."""

    def __init__(self, target: int, log: str) -> None:
        self.target = target
        self.log = log
        self.count = 0

    def note(self, kind: str, path: object) -> None:
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} - {kind} {path}\n")

    def event(self, kind: str, path: object) -> bool:
        """Log one event; True when this is the one to die at."""
        index = self.count
        self.count += 1
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {index} {kind} {path}\n")
        return index == self.target

    def die(self) -> None:
        os.kill(os.getpid(), signal.SIGKILL)


class _HalfWriter:
    """A file handle that dies half-way through a write when its event is the target."""

    def __init__(self, shim: Shim, handle: Any) -> None:
        self._shim = shim
        self._handle = handle

    def write(self, data: bytes) -> int:
        if self._shim.event("tmp-write", self._handle.name):
            self._handle.write(data[: len(data) // 2])
            self._handle.flush()
            self._shim.die()
        return int(self._handle.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _HalfWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


def install(shim: Shim) -> None:
    """Patch the write paths a build takes."""
    real_fdopen, real_replace = os.fdopen, os.replace
    real_init = dependency.JsonDB.__init__
    real_save = doitdb.save_database

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = real_fdopen(fd, *args, **kwargs)
        mode = args[0] if args else kwargs.get("mode", "r")
        return _HalfWriter(shim, handle) if "w" in mode else handle

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if shim.event("replace", dst):
            shim.die()
        real_replace(src, dst, *args, **kwargs)
        if shim.event("replaced", dst):
            shim.die()

    def init(self: Any, name: str, *args: Any, **kwargs: Any) -> None:
        shim.note("db-open", name)
        real_init(self, name, *args, **kwargs)

    def save(name: str, text: str) -> None:
        if shim.event("db-dump", name):
            with open(f"{name}.{os.getpid()}.tmp", "w", encoding="utf-8") as handle:
                handle.write(text[: len(text) // 2])
                handle.flush()
            shim.die()
        real_save(name, text)

    os.fdopen = fdopen  # type: ignore[assignment]
    os.replace = replace
    dependency.JsonDB.__init__ = init  # type: ignore[method-assign]
    doitdb.save_database = save


def main(argv: list[str]) -> int:
    """Install the shim and run doit with the remaining arguments."""
    install(Shim(int(argv[0]), argv[1]))
    return int(DoitMain().run(argv[2:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
