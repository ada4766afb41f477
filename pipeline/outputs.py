"""What each step left in build/, by inode and ctime, so a build notices hand-edited outputs.

doit only checks that a task's targets exist, and its database is a cache that must not hide an
edited, replaced or deleted output from the build. After a step runs, the paths of its stamp and
of every output the stamp records are remembered with one digest of their inodes and ctimes (no
edit, rename or removal keeps both), and each folder holding them (build/ too) by its inode as
lstat finds it: a folder moved aside and replaced by a symbolic link to it keeps its files'
inodes and ctimes, not its own (its ctime is not taken: every write in it changes it). A step
whose outputs no longer match is run: it finds its inputs current and writes back the bytes its
stamp records. The record is local (git-ignored), like the digest cache; without it (a fresh
clone) every step runs once and checks its outputs.

The stats taken for that comparison, when doit loads the tasks, also answer doit's own questions
about the same files (does a target exist, what is an output's stat as a later step's input)
until a step of this run is reported run: no step writes another's outputs, so until then only
someone else could have changed them, and that is a change the next run sees, as it sees an edit
made after the comparison.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Container, Mapping
from pathlib import Path
from stat import S_ISDIR

from pipeline.records import read_columns, write_records

RECORD_NAME = ".pipeline-outputs"
# 2: the folders too (a record of 1 is not read: each step checks its outputs once more)
RECORD_HEADER = "pipeline outputs 2\0"


def seen(
    prefix: str,
    paths: list[str],
    stats: dict[str, os.stat_result] | None = None,
    wanted: Container[str] = (),
    folders: list[str] | None = None,
    marked: dict[str, str] | None = None,
) -> str:
    """One digest of the inode and ctime of each path (`prefix` + path) and the inode of each of
    `folders`; the stat of each `wanted` path is also put in `stats`, and each folder's mark in
    `marked` (which spares a folder of many steps its second lstat), when given."""
    marks = []
    for folder in folders or ():
        mark = None if marked is None else marked.get(folder)
        if mark is None:
            mark = _folder_mark(prefix + folder)
            if marked is not None:
                marked[folder] = mark
        marks.append(mark)
    for path in paths:
        try:
            info = os.stat(prefix + path)
        except OSError:
            marks.append("missing")
            continue
        marks.append(f"{info.st_ino}.{info.st_ctime_ns}")
        if stats is not None and path in wanted:
            stats[path] = info
    return hashlib.sha256(" ".join(marks).encode()).hexdigest()


def _folder_mark(path: str) -> str:
    """A folder's inode as lstat finds it; `linked` for a symbolic link (or a file) in its place."""
    try:
        info = os.lstat(path)
    except OSError:
        return "missing"
    return f"{info.st_ino}" if S_ISDIR(info.st_mode) else "linked"


def folders_of(paths: list[str]) -> list[str]:
    """The folders holding `paths` (build/ included), each once."""
    found: dict[str, None] = {}
    for path in paths:
        end = path.find("/")
        while end > 0:
            found[path[:end]] = None
            end = path.find("/", end + 1)
    return list(found)


class OutputRecord:
    """The remembered outputs of each step: step name -> (digest, paths, their folders)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.prefix = os.path.join(root, "")
        if self.prefix == os.path.join(os.getcwd(), ""):
            # as doit runs: 12,293 stats of relative paths at 100 robots and 500 cells took
            # 27 ms against 31 ms with the folder's three components before each (in process).
            # Were the folder changed later, a step's record would read as missing, and it would
            # run again: never the other way round.
            self.prefix = ""
        self.steps = _load(root / RECORD_NAME)
        self.dirty = False
        # path (as the record has it) -> its stat when `unchanged` looked; emptied for good
        # once a step of this run is reported run, since that step may have rewritten it
        self.stats: dict[str, os.stat_result] = {}
        # folder -> its mark when `unchanged` looked (a robot's steps share its folder, every
        # step build/); emptied with `stats`
        self.marked: dict[str, str] = {}
        self.settled = True
        # set by the reporter that calls step_ran (doitext.FindingsReporter); doit's checks use
        # `stats` only then: with another --reporter no step would ever be reported run
        self.reported = False
        # the paths doit asks about (targets, outputs read by later steps); keeping the stat of
        # every output too (12,293 at 100 robots, 500 cells) made the no-op no faster, in process
        self.wanted: Container[str] = ()

    def unchanged(self, step: str) -> bool:
        """Whether the step's stamp and outputs are as the step left them."""
        entry = self.steps.get(step)
        if entry is None:
            return False
        stats, marked = (self.stats, self.marked) if self.settled else (None, None)
        return entry[0] == seen(self.prefix, entry[1], stats, self.wanted, entry[2], marked)

    def step_ran(self) -> None:
        """A step of this run ran (or failed midway): the stats taken before no longer hold."""
        self.settled = False
        self.stats.clear()
        self.marked.clear()

    def note(self, step: str, stamp: str, saved: Mapping[str, str] | None = None) -> None:
        """Remember what a step just left: its stamp and the outputs the stamp records.

        `saved`: the input digests doit saved for the step after it ran. One that differs from
        what the stamp records changed while the step ran (an editor saving a source): doit
        would take the step as current, so it is not remembered and the next run runs it.
        """
        try:
            with open(self.prefix + stamp, "rb") as handle:
                found = json.loads(handle.read())
            recorded, inputs = found["outputs"], found["inputs"]
            paths = [stamp, *sorted(recorded)]
            if any(inputs.get(path) != digest for path, digest in (saved or {}).items()):
                raise ValueError(stamp)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.steps.pop(step, None)
        else:
            folders = folders_of(paths)
            self.steps[step] = (seen(self.prefix, paths, folders=folders), paths, folders)
        self.dirty = True

    def save(self) -> None:
        """Write the record back when anything was noted."""
        if not self.dirty:
            return
        records = (
            (step, digest, "\n".join(paths), "\n".join(folders))
            for step, (digest, paths, folders) in sorted(self.steps.items())
        )
        if write_records(self.root / RECORD_NAME, RECORD_HEADER, records):
            self.dirty = False


def _load(path: Path) -> dict[str, tuple[str, list[str], list[str]]]:
    """The record; empty when it is missing, foreign or torn."""
    steps, digests, paths, folders = read_columns(path, RECORD_HEADER, 4)
    records = zip(steps, digests, paths, folders, strict=True)
    return {
        step: (digest, made.split("\n"), held.split("\n") if held else [])
        for step, digest, made, held in records
    }
