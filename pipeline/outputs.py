"""What each step left in build/ and what it was made from, so a build notices edited files.

doit only checks that a task's targets exist, and its database is a cache that must not hide an
edited, replaced or deleted output from the build. After a step runs, the paths of its stamp and
of every output the stamp records are remembered with one digest of their inodes and ctimes (no
edit, rename or removal keeps both). A step whose outputs no longer match is run: it finds its
inputs current and writes back the bytes its stamp records.

Nor may the database hide a changed input: `doit reset-dep` (or a database copied from another
checkout) records every input as built. So the stat signatures of the inputs the stamp records
are remembered too; when one differs, the inputs are compared by content with the stamp, and
the step runs unless they all still hold the recorded bytes (a touched file runs nothing).
The record is local (git-ignored), like the digest cache; without it (a fresh clone) every step
runs once and checks its outputs.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from pipeline.digests import Digests, stat_signature
from pipeline.records import read_records, write_records
from pipeline.stamps import read_stamp

RECORD_NAME = ".pipeline-outputs"
# version 2 added the inputs' stat signatures: a record of version 1 reads as empty
RECORD_HEADER = "pipeline outputs 2\0"


def seen(prefix: str, paths: list[str]) -> str:
    """One digest of the inode and ctime of each path (`prefix` + path)."""
    marks = []
    for path in paths:
        try:
            info = os.stat(prefix + path)
            marks.append(f"{info.st_ino}.{info.st_ctime_ns}")
        except OSError:
            marks.append("missing")
    return hashlib.sha256(" ".join(marks).encode()).hexdigest()


def signed(prefix: str, paths: Iterable[str]) -> str:
    """One digest of each path with its stat signature (`prefix` + path), in sorted order."""
    marks = []
    for path in sorted(set(paths)):
        try:
            marks.append(f"{path}\0{stat_signature(os.stat(prefix + path))}")
        except OSError:
            marks.append(f"{path}\0missing")
    return hashlib.sha256("\0".join(marks).encode()).hexdigest()


class OutputRecord:
    """The remembered steps: step name -> (outputs digest, inputs digest, paths)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.prefix = os.path.join(root, "")
        self.steps = _load(root / RECORD_NAME)
        self.dirty = False

    def unchanged(
        self, step: str, inputs: Iterable[str], digests: Callable[[], Digests] | None = None
    ) -> bool:
        """Whether the step's stamp and outputs are as the step left them, and its `inputs`
        still hold the bytes the stamp records (by stat, else by content: `digests()`)."""
        entry = self.steps.get(step)
        if entry is None or entry[0] != seen(self.prefix, entry[2]):
            return False
        inputs = set(inputs)
        now = signed(self.prefix, inputs)
        if entry[1] == now:
            return True
        stamp = read_stamp(self.root, step)
        if stamp is None or set(stamp.inputs) != inputs:
            return False
        known = digests() if digests else Digests(self.root, remember=False)
        if any(known.of(path) != digest for path, digest in stamp.inputs.items()):
            return False
        self.steps[step] = (entry[0], now, entry[2])  # touched, not changed: the fast path again
        self.dirty = True
        return True

    def note(self, step: str, stamp: str) -> None:
        """Remember what a step just left: its stamp, the outputs and the inputs it records."""
        try:
            with open(self.prefix + stamp, "rb") as handle:
                recorded = json.loads(handle.read())
            paths = [stamp, *sorted(recorded["outputs"])]
            inputs = signed(self.prefix, [str(path) for path in recorded["inputs"]])
        except (OSError, ValueError, KeyError, TypeError):
            self.steps.pop(step, None)
        else:
            self.steps[step] = (seen(self.prefix, paths), inputs, paths)
        self.dirty = True

    def save(self) -> None:
        """Write the record back when anything was noted."""
        if not self.dirty:
            return
        records = (
            (step, outputs, inputs, "\n".join(paths))
            for step, (outputs, inputs, paths) in sorted(self.steps.items())
        )
        if write_records(self.root / RECORD_NAME, RECORD_HEADER, records):
            self.dirty = False


def _load(path: Path) -> dict[str, tuple[str, str, list[str]]]:
    """The record; empty when it is missing, foreign or torn."""
    records = read_records(path, RECORD_HEADER, 4)
    return {step: (outputs, inputs, paths.split("\n")) for step, outputs, inputs, paths in records}
