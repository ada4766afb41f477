"""Digesting many files on two cores: a forked child finds what one reader alone finds."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import pipeline.readahead as readahead
from pipeline.digests import COPY_BUDGET, READ_WHOLE, Digests
from pipeline.filesig import stat_signature
from pipeline.readahead import Read, digest_files, digest_on_two_cores
from tests.conftest import REPO

MESHES = sorted((REPO / "robots").glob("*/meshes/*"))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copies(folder: Path, times: int) -> list[tuple[str, str]]:
    """`times` copies of every shipped mesh below `folder`, each with its true digest, and
    one copy of each with a byte flipped (recorded with the original's digest)."""
    todo: list[tuple[str, str]] = []
    for mesh in MESHES:
        data = mesh.read_bytes()
        for n in range(times):
            rel = f"c{n}/{mesh.parent.parent.name}/{mesh.name}"
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
            todo.append((rel, sha(data)))
        edited = f"edited/{mesh.parent.parent.name}/{mesh.name}"
        (folder / edited).parent.mkdir(parents=True, exist_ok=True)
        (folder / edited).write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
        todo.append((edited, sha(data)))
    return todo


def keeper(kept: dict[str, bytes]) -> Callable[[bytes, str], object]:
    return lambda data, digest: kept.setdefault(digest, data)


def test_digest_files_finds_each_plain_file_and_leaves_the_rest(tmp_path: Path) -> None:
    """Regular files get their SHA-256 and stat signature; anything else is left out."""
    todo = copies(tmp_path, 1)
    (tmp_path / "tool.sh").write_bytes(b"#!/bin/sh\n")
    (tmp_path / "tool.sh").chmod(0o755)
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    limit = max(mesh.stat().st_size for mesh in MESHES)
    (tmp_path / "large.bin").write_bytes(b"x" * (limit + 1))
    odd = [("tool.sh", ""), ("folder", ""), ("fifo", ""), ("large.bin", ""), ("gone", "")]
    found = digest_files(str(tmp_path) + "/", [*todo, *odd, ("a\0b", "")], {}, keeper({}), limit)
    assert sorted(found) == sorted(rel for rel, _ in todo)
    for rel, (signature, digest, mtime) in found.items():
        info = os.stat(tmp_path / rel)
        assert digest == sha((tmp_path / rel).read_bytes())
        assert (signature, mtime) == (stat_signature(info), info.st_mtime_ns)


def test_copies_are_compared_with_kept_bytes_not_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file holding the kept bytes of its recorded digest is compared; an edited one is
    hashed and found with its own digest."""
    todo = copies(tmp_path, 2)
    kept = {digest: (tmp_path / rel).read_bytes() for rel, digest in todo if rel.startswith("c0/")}
    hashed: list[int] = []
    real = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda data=b"": hashed.append(len(data)) or real(data))
    found = digest_files(str(tmp_path) + "/", todo, kept, keeper(kept), READ_WHOLE)
    assert len(hashed) == len(MESHES)  # the edited ones only
    for rel, digest in todo:
        held = found[rel][1] == digest
        assert held == (not rel.startswith("edited/"))


def test_two_cores_find_what_one_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a child forked to share the files, every file is found as one reader finds it."""
    if not readahead.may_fork():
        pytest.skip("no second core, or not Linux: nothing is forked")
    todo = copies(tmp_path, 12)
    assert len(todo) > readahead.FORK_MIN
    forked = spy_fork(monkeypatch)
    prefix = str(tmp_path) + "/"
    alone = digest_files(prefix, todo, {}, keeper({}), READ_WHOLE)
    both = digest_on_two_cores(prefix, todo, {}, keeper({}), READ_WHOLE)
    assert len(forked) == 1
    assert both == alone and len(alone) == len(todo)


@pytest.mark.parametrize(
    ("runs", "size", "expected"),
    [
        ([1, 1, 1], 2, [[0, 1], [2]]),  # runs of one content fill a batch in order
        ([2, 2, 1], 3, [[0, 0], [1, 1, 2]]),  # a run that does not fit starts the next batch
        ([7], 3, [[0, 0, 0], [0, 0, 0], [0]]),  # a run longer than a batch is cut
        ([1, 5, 1], 2, [[0], [1, 1], [1, 1], [1, 2]]),  # its rest is joined by the next run
        ([], 4, []),
    ],
)
def test_batches_keep_copies_of_one_content_together(
    runs: list[int], size: int, expected: list[list[int]]
) -> None:
    """Each file is in one batch, in order, and the files of a recorded digest share one
    where they fit, so that a content is hashed by one side only."""
    todo = [(f"f{run}-{n}", f"digest{run}") for run, count in enumerate(runs) for n in range(count)]
    batches = readahead.batched(todo, size)
    assert [[int(digest[6:]) for _, digest in batch] for batch in batches] == expected
    assert [item for batch in batches for item in batch] == todo


def test_each_batch_is_read_once_by_one_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both processes take batches from one pipe: every batch is read, and none twice."""
    if not readahead.may_fork():
        pytest.skip("no second core, or not Linux: nothing is forked")
    folder, log = tmp_path / "files", tmp_path / "batches.log"
    todo = copies(folder, 12)
    real = readahead.digest_files

    def logged(prefix: str, batch: list[tuple[str, str]], *args: object) -> dict[str, Read]:
        line = f"{os.getpid()} {batch[0][0]}\n".encode()
        descriptor = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
        return real(prefix, batch, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(readahead, "digest_files", logged)
    both = digest_on_two_cores(str(folder) + "/", todo, {}, keeper({}), READ_WHOLE)
    firsts = sorted(line.split(" ", 1)[1] for line in log.read_text().splitlines())
    assert firsts == sorted(batch[0][0] for batch in readahead.batched(todo, readahead.BATCH))
    assert real(str(folder) + "/", todo, {}, keeper({}), READ_WHOLE) == both


def test_numbers_that_do_not_fit_in_a_pipe_leave_the_files_to_one_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A queue larger than its pipe holds is not made (its write would block): one reader
    alone then finds every file, and no child is forked."""
    assert readahead._queue(1 << 20) is None
    reader = readahead._queue(3)
    assert reader is not None
    try:
        assert os.read(reader, 64) == b"".join(i.to_bytes(4, "little") for i in range(3))
        assert os.read(reader, 64) == b""  # its writing end is closed
    finally:
        os.close(reader)
    todo = copies(tmp_path, 12)
    forked = spy_fork(monkeypatch)
    monkeypatch.setattr(readahead, "_queue", lambda count: None)  # as for 1 << 20 numbers
    found = digest_on_two_cores(str(tmp_path) + "/", todo, {}, keeper({}), READ_WHOLE)
    assert forked == [] and found == digest_files(
        str(tmp_path) + "/", todo, {}, keeper({}), READ_WHOLE
    )


def test_a_failed_child_leaves_its_half_to_the_usual_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child that fails sends nothing: its files are then read one by one, as they are met,
    and still found holding what they hold."""
    if not readahead.may_fork():
        pytest.skip("no second core, or not Linux: nothing is forked")
    todo = copies(tmp_path, 12)
    parent = os.getpid()
    real = readahead.digest_files

    def failing_in_child(*args: object) -> dict[str, Read]:
        if os.getpid() != parent:
            raise MemoryError
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(readahead, "digest_files", failing_in_child)
    known = Digests(tmp_path, remember=False, keep_bytes=COPY_BUDGET, settled=True)
    known.read_ahead(dict(todo))
    assert 0 < len(known.ahead) < len(todo)  # the parent's half only
    edited = sorted(rel for rel, _ in todo if rel.startswith("edited/"))
    assert known.unheld(dict(todo)) == edited


def test_no_child_is_forked_while_another_thread_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock another thread holds would stay held in a forked child: read here instead."""
    todo = copies(tmp_path, 12)
    forked = spy_fork(monkeypatch)
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        found = digest_on_two_cores(str(tmp_path) + "/", todo, {}, keeper({}), READ_WHOLE)
    finally:
        release.set()
        thread.join()
    assert forked == [] and len(found) == len(todo)


def test_a_check_without_cache_or_git_reads_ahead_and_finds_every_problem(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pipeline check` of an export (no .git, no digest cache) reads build/ ahead on two cores
    and names the same edited, executable and missing outputs as one reader does."""
    from pipeline.freshness import check
    from pipeline.plan import plan

    if not readahead.may_fork():
        pytest.skip("no second core, or not Linux: nothing is forked")
    description = project / "build" / "cells" / "weld_cell_a" / "description"
    mesh = description / "meshes" / "link_3.stl"
    mesh.write_bytes(mesh.read_bytes()[:-1] + b"X")
    (description / "robot.srdf").chmod(0o755)
    os.remove(description / "meshes" / "link_1.stl")
    shutil.rmtree(project / "build" / "robots" / "abb_irb2400" / "meshes")

    def problems() -> list[str]:
        known = Digests(project, remember=False, keep_bytes=COPY_BUDGET, settled=True)
        return [problem.line() for problem in check(project, plan(project), known)]

    monkeypatch.setattr(readahead, "may_fork", lambda: False)
    alone = problems()
    monkeypatch.undo()
    monkeypatch.setattr(readahead, "FORK_MIN", 1)  # the shipped build/ is small
    forked = spy_fork(monkeypatch)
    assert problems() == alone and len(forked) == 1
    assert any("weld_cell_a/description/meshes/link_3.stl" in line for line in alone)
    assert any("weld_cell_a/description/robot.srdf" in line for line in alone)
    assert any("weld_cell_a/description/meshes/link_1.stl" in line for line in alone)


def spy_fork(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the pid of each child forked (in the parent)."""
    forked: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return forked


# The child of the script below is signalled (SIGINT, its whole process group) the moment it is
# forked: the parent records it, the child raises KeyboardInterrupt as Ctrl-C does.
_SIGNALLED_AT_FORK = """
import functools, os, signal, sys
import pipeline.readahead as readahead

readahead.FORK_MIN = 1
signal.signal(signal.SIGINT, lambda *_: None)
os.register_at_fork(after_in_child=lambda: signal.signal(signal.SIGINT, signal.default_int_handler))
os.register_at_fork(after_in_child=functools.partial(os.kill, 0, signal.SIGINT))
print("before")  # buffered: stdout is a pipe
todo = [(name, "") for name in sys.argv[2:]]
try:
    found = readahead.digest_on_two_cores(sys.argv[1], todo, {}, lambda *_: None, 1 << 20)
except KeyboardInterrupt:
    print("interrupted")
else:
    print("found", len(found) <= len(todo))
"""


def test_a_signal_met_as_the_child_is_forked_never_runs_the_parents_code_in_it(
    tmp_path: Path,
) -> None:
    """Signals are blocked across the fork until the child's exit is assured: one met before
    would raise in the parent's code in the child (its handlers, its exit handlers, its
    buffered output printed a second time)."""
    import subprocess
    import sys

    if not readahead.may_fork():
        pytest.skip("no second core, or not Linux: nothing is forked")
    names = [f"f{n}" for n in range(8)]
    for name in names:
        (tmp_path / name).write_bytes(name.encode())
    result = subprocess.run(
        [sys.executable, "-c", _SIGNALLED_AT_FORK, str(tmp_path) + "/", *names],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,  # the script signals its own process group, not pytest's
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "before\nfound True\n", "")


@pytest.mark.parametrize("taken_by", ["unheld", "holds"])
def test_a_file_read_ahead_within_the_racy_window_is_not_remembered_when_taken_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, taken_by: str
) -> None:
    """The racily-clean rule is judged at the time a file is read, not when what was read ahead
    is taken: a file modified within RACY_SECONDS of its reading could change again without
    its stat changing, however long the check then takes to reach it."""
    import time

    import pipeline.digestread as digestread
    import pipeline.digests as digests

    (tmp_path / "out.txt").write_bytes(b"x")
    digest = sha(b"x")
    known = Digests(tmp_path, remember=True, keep_bytes=COPY_BUDGET, settled=True)
    known.read_ahead({"out.txt": digest})
    assert "out.txt" in known.ahead
    real = time.time
    later = type("Clock", (), {"time": staticmethod(lambda: real() + 60)})
    for module in (digests, digestread):
        monkeypatch.setattr(module, "time", later)  # the check reaches it a minute later
    if taken_by == "unheld":
        assert known.unheld({"out.txt": digest}) == []
    else:
        assert known.holds("out.txt", digest)
    assert "out.txt" not in known.entries and "out.txt" in known.fresh
