"""build/ digested by a forked child while a check plans: what one process alone finds."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

import pipeline.buildahead as buildahead
import pipeline.digestread as digestread
import pipeline.digests as digests_module
import pipeline.readahead as readahead
from pipeline.digestcache import BUILT_CACHE_HEADER, BUILT_CACHE_NAME
from pipeline.digests import READ_WHOLE, Digests
from pipeline.filesig import stat_signature
from pipeline.records import read_columns
from tests.conftest import clock_ahead
from tests.test_gitindex import (
    FILES,
    MESH,
    cloned,
    committed,
    git,
    no_user_git_config,  # noqa: F401  (the fixture, used below)
)
from tests.test_readahead import spy_fork

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command"),
    pytest.mark.usefixtures("no_user_git_config"),
]

EXTRA = {
    "build/robots/r/tool.sh": b"#!/bin/sh\n",
    "build/robots/r/edited.stl": MESH,
    "build/robots/r/linked.stl": MESH,
    "build/robots/r/removed.stl": MESH,
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def forkable() -> None:
    if not readahead.may_fork():
        pytest.skip("no second core, or not Linux: nothing is forked")


def hand_edits(clone: Path) -> None:
    """An executable, a same-size edit with its mtime put back, a link, a removed file."""
    (clone / "build/robots/r/tool.sh").chmod(0o755)
    edited = clone / "build/robots/r/edited.stl"
    before = os.stat(edited)
    edited.write_bytes(MESH[:-1] + b"X")
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.remove(clone / "build/robots/r/linked.stl")
    os.symlink("../../../robots/r/meshes/a.stl", clone / "build/robots/r/linked.stl")
    os.remove(clone / "build/robots/r/removed.stl")


def test_the_child_vouches_only_for_what_git_s_index_vouches_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files unchanged since checkout get their SHA-256; an edited, executable, linked or
    removed one, and anything outside the folder asked for, are left to the usual path."""
    forkable()
    clone = committed(tmp_path, {**FILES, **EXTRA})
    hand_edits(clone)
    monkeypatch.setattr(buildahead, "FOLDERS_MIN", 0)
    child = buildahead.start(clone, "build/", None, "", 2.0, READ_WHOLE)
    assert child is not None
    found = buildahead.answers(child)
    untouched = {rel: sha(data) for rel, data in FILES.items() if rel.startswith("build/")}
    assert found == untouched


@pytest.mark.parametrize("racy_s", [0.0, 1e9])
def test_what_the_child_found_is_remembered_unless_racily_clean(
    tmp_path: Path, racy_s: float
) -> None:
    """build/'s cache file holds each answered file with its stat signature, except those
    changed within the racy window of their reading (here: everything, or nothing)."""
    clone = committed(tmp_path, FILES)
    cache = clone / BUILT_CACHE_NAME
    buildahead.answer(clone, "build/", cache, BUILT_CACHE_HEADER, racy_s, READ_WHOLE)
    rels, signatures, digests = read_columns(cache, BUILT_CACHE_HEADER, 3)
    if racy_s:
        assert rels == []
        return
    built = sorted(rel for rel in FILES if rel.startswith("build/"))
    assert sorted(rels) == built
    for rel, signature, digest in zip(rels, signatures, digests, strict=True):
        assert (signature, digest) == (stat_signature(os.stat(clone / rel)), sha(FILES[rel]))


def test_a_check_stopped_early_leaves_no_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that fails before it takes the child's answers (bad sources) kills and reaps it."""
    forkable()
    clone = committed(tmp_path, FILES)
    monkeypatch.setattr(buildahead, "FOLDERS_MIN", 0)
    known = Digests(clone, settled=True)
    known.answer_build_elsewhere()
    assert known.answering is not None
    pid = known.answering.pid
    known.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert known.answering is None


def checked(clone: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """`pipeline check` in `clone` with no digest cache: exit status and output lines."""
    from pipeline.cli import main

    for name in (".pipeline-digests", BUILT_CACHE_NAME):
        (clone / name).unlink(missing_ok=True)
    capsys.readouterr()
    status = main(["check"])
    return status, capsys.readouterr().out.splitlines()


@pytest.fixture()
def clone(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped checkout, committed and cloned as CI clones it."""
    return cloned(project, tmp_path_factory.mktemp("ci") / "clone")


@pytest.mark.parametrize("child", ["answers", "fails"])
def test_a_fresh_clone_s_check_finds_with_the_child_what_it_finds_alone(
    clone: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    child: str,
) -> None:
    """CI's case, with build/ stated by a child: current, then every hand edit named as one
    process alone names it; a child that fails leaves build/ to that process."""
    forkable()
    monkeypatch.chdir(clone)
    monkeypatch.setattr(buildahead, "FOLDERS_MIN", 0)  # the shipped build/ is small
    if child == "fails":
        parent = os.getpid()
        real = buildahead.answer

        def failing_in_child(*args: object) -> bytes:
            if os.getpid() != parent:
                raise MemoryError
            return real(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(buildahead, "answer", failing_in_child)
    forked = spy_fork(monkeypatch)
    assert checked(clone, capsys) == (0, ["build/ is current: 20 steps"])
    assert len(forked) == 1
    description = clone / "build" / "cells" / "weld_cell_a" / "description"
    mesh = description / "meshes" / "link_3.stl"
    before = os.stat(mesh)
    mesh.write_bytes(mesh.read_bytes()[:-1] + b"X")
    os.utime(mesh, ns=(before.st_atime_ns, before.st_mtime_ns))
    (description / "robot.srdf").chmod(0o755)
    os.remove(description / "meshes" / "link_1.stl")
    os.remove(description / "robot.urdf")
    os.symlink("../../../robots/abb_irb2400/robot.urdf", description / "robot.urdf")
    (clone / "build" / "robots" / "stray.txt").write_bytes(b"x")
    with_child = checked(clone, capsys)
    assert len(forked) == 2
    monkeypatch.setattr(buildahead, "may_fork", lambda: False)
    alone = checked(clone, capsys)
    assert len(forked) == 2
    assert with_child == alone
    status, lines = alone
    assert status == 1
    for path in ("meshes/link_3.stl", "robot.srdf", "meshes/link_1.stl", "robot.urdf"):
        assert any(f"weld_cell_a/description/{path} " in line for line in lines), path
    assert any("build/robots/stray.txt" in line for line in lines)


def test_the_next_check_takes_build_s_digests_from_the_cache_the_child_wrote(
    clone: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The child's cache file, with what this process learnt of build/ added (an edited copy
    it read itself), answers the next check without git's index."""
    forkable()
    monkeypatch.chdir(clone)
    monkeypatch.setattr(buildahead, "FOLDERS_MIN", 0)
    mesh = clone / "build" / "cells" / "weld_cell_a" / "description" / "meshes" / "link_3.stl"
    edited = mesh.read_bytes()[:-1] + b"X"
    mesh.write_bytes(edited)
    clock_ahead(monkeypatch, 60, buildahead, digests_module, digestread)  # nothing is racily clean
    status, _ = checked(clone, capsys)
    assert status == 1
    rels, _, digests = read_columns(clone / BUILT_CACHE_NAME, BUILT_CACHE_HEADER, 3)
    remembered = dict(zip(rels, digests, strict=True))
    tracked = git(clone, "ls-files", "build").splitlines()
    assert set(remembered) == set(tracked)
    assert remembered[mesh.relative_to(clone).as_posix()] == sha(edited)
    asked: list[str] = []
    real = digestread.read_checkout
    monkeypatch.setattr(
        digestread, "read_checkout", lambda *args: asked.append("index") or real(*args)
    )
    from pipeline.cli import main

    capsys.readouterr()
    assert main(["check"]) == 1
    assert asked == []


def test_no_child_for_a_small_build_or_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build/ of fewer robot and cell folders than FOLDERS_MIN is stated here; so is any
    build/ without git's index (an export), which the check reads ahead once planned."""
    forked = spy_fork(monkeypatch)
    clone = committed(tmp_path, FILES)  # build/robots/r and build/cells/c
    for n in range(buildahead.FOLDERS_MIN - 3):
        (clone / "build" / "cells" / f"c{n}").mkdir(parents=True)
    assert buildahead.start(clone, "build/", None, "", 2.0, READ_WHOLE) is None
    export = tmp_path / "export"
    for n in range(buildahead.FOLDERS_MIN):
        (export / "build" / "cells" / f"c{n}").mkdir(parents=True)
    assert buildahead.start(export, "build/", None, "", 2.0, READ_WHOLE) is None
    (clone / "build" / "cells" / "one_more").mkdir()
    child = buildahead.start(clone, "build/", None, "", 2.0, READ_WHOLE)
    if readahead.may_fork():
        assert child is not None and buildahead.answers(child) is not None
    assert forked == ([] if child is None else [child.pid])
