"""The stat-keyed digest cache: a shortcut that is never wrong about content."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

import pipeline.digestread as digestread
import pipeline.digests as digests_module
from pipeline.digestcache import BUILT_CACHE_NAME, CACHE_NAME
from pipeline.digests import Digests
from pipeline.outputs import RECORD_NAME
from pipeline.stamps import hash_inputs
from tests.conftest import REPO, clock_ahead


@pytest.fixture(autouse=True)
def minute_later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's clock a minute ahead: files written here are out of the racy window (their
    ctime, which decides it, cannot be set back)."""
    clock_ahead(monkeypatch, 60, digests_module, digestread)


def old(path: Path, data: bytes, age: float = 60.0) -> None:
    """Write a file whose mtime is `age` seconds in the past (not racily clean)."""
    path.write_bytes(data)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))


def test_digest_is_sha256_and_missing_is_named(tmp_path: Path) -> None:
    old(tmp_path / "a.bin", b"abc")
    known = Digests(tmp_path)
    assert known.of("a.bin") == hashlib.sha256(b"abc").hexdigest()
    assert known.of("nope.bin") == "missing"


def test_remembered_digest_survives_a_new_process(tmp_path: Path) -> None:
    old(tmp_path / "a.bin", b"abc")
    first = Digests(tmp_path)
    first.of("a.bin")
    first.save()
    assert (tmp_path / CACHE_NAME).is_file()
    second = Digests(tmp_path)
    assert "a.bin" in second.entries
    assert second.of("a.bin") == hashlib.sha256(b"abc").hexdigest()


def test_changed_content_is_rehashed_even_with_the_old_mtime(tmp_path: Path) -> None:
    path = tmp_path / "a.bin"
    old(path, b"abc")
    first = Digests(tmp_path)
    first.of("a.bin")
    first.save()
    info = path.stat()
    path.write_bytes(b"abd")  # same size; put the mtime back as a careless tool might
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert Digests(tmp_path).of("a.bin") == hashlib.sha256(b"abd").hexdigest()


@pytest.mark.parametrize("mtime_set_back", [False, True], ids=["written", "mtime_set_back"])
def test_racily_clean_files_are_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mtime_set_back: bool
) -> None:
    """A file written within RACY_SECONDS is not remembered, even with its mtime set back (cp -p,
    tar, rsync -t): its ctime says when it was written."""
    for module in (digests_module, digestread):
        monkeypatch.setattr(module, "time", time)  # the real clock
    (tmp_path / "new.bin").write_bytes(b"x")
    if mtime_set_back:
        os.utime(tmp_path / "new.bin", (time.time() - 60, time.time() - 60))
    known = Digests(tmp_path)
    known.of("new.bin")
    known.save()
    assert "new.bin" not in Digests(tmp_path).entries


@pytest.mark.parametrize(
    "content",
    [
        "{not a cache",  # foreign
        '{"version": 1, "entries": {"a.bin": [1, 2, 3, 4, "ff"]}}',  # the old JSON cache
        "pipeline digests 2\0a.bin\0",  # torn mid-record
        "pipeline digests 2\0a.bin\01 2 3 4\0ff\0",  # a stale signature
    ],
)
def test_foreign_torn_or_stale_cache_is_never_trusted(tmp_path: Path, content: str) -> None:
    old(tmp_path / "a.bin", b"abc")
    (tmp_path / CACHE_NAME).write_text(content)
    assert Digests(tmp_path).of("a.bin") == hashlib.sha256(b"abc").hexdigest()


def test_cache_round_trips_odd_paths(tmp_path: Path) -> None:
    """Spaces, tabs, newlines and non-UTF-8 bytes in a name survive the cache file."""
    names = ["a b.bin", "tab\there.bin", "new\nline.bin", os.fsdecode(b"latin\xe9.bin")]
    for name in names:
        old(tmp_path / name, name.encode("utf-8", "surrogateescape"))
    first = Digests(tmp_path)
    digests = {name: first.of(name) for name in names}
    first.save()
    second = Digests(tmp_path)
    assert set(second.entries) == set(names)
    assert {name: second.of(name) for name in names} == digests


def test_a_run_meeting_only_sources_leaves_builds_cache_unread_and_unwritten(
    tmp_path: Path,
) -> None:
    """The cache is two files, so that a touch of every source (2,300 files at 100 robots) does
    not load and write build/'s 11,800 digests too."""
    (tmp_path / "robots").mkdir()
    (tmp_path / "build").mkdir()
    old(tmp_path / "robots" / "a.stl", b"abc")
    old(tmp_path / "build" / "a.stl", b"abc")
    first = Digests(tmp_path)
    first.of("robots/a.stl")
    assert first.holds("build/a.stl", hashlib.sha256(b"abc").hexdigest())
    first.save()
    built = tmp_path / BUILT_CACHE_NAME
    saved = (built.read_bytes(), built.stat().st_ino)
    assert saved[0].count(b"build/a.stl") == 1
    assert b"build/" not in (tmp_path / CACHE_NAME).read_bytes()
    old(tmp_path / "robots" / "a.stl", b"abd")  # touched: read again and remembered
    second = Digests(tmp_path)
    assert second.of("robots/a.stl") == hashlib.sha256(b"abd").hexdigest()
    second.save()
    assert not second.built_loaded
    assert (built.read_bytes(), built.stat().st_ino) == saved
    third = Digests(tmp_path)
    assert set(third.entries) == {"robots/a.stl"}
    assert third.of("build/a.stl") == hashlib.sha256(b"abc").hexdigest()  # loaded when asked
    assert set(third.entries) == {"robots/a.stl", "build/a.stl"}


def test_remember_false_writes_nothing(tmp_path: Path) -> None:
    old(tmp_path / "a.bin", b"abc")
    known = Digests(tmp_path, remember=False)
    known.of("a.bin")
    known.save()
    assert not (tmp_path / CACHE_NAME).exists()


def test_copies_are_checked_against_kept_bytes_without_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An output recorded with a source's digest is compared with the source's bytes."""
    mesh = b"solid link\n" * 1000
    old(tmp_path / "src.stl", mesh)
    old(tmp_path / "copy.stl", mesh)
    old(tmp_path / "edited.stl", mesh[:-1] + b"X")  # same size, one byte off
    known = Digests(tmp_path, keep_bytes=1 << 20)
    digest = known.of("src.stl")
    hashed: list[int] = []
    real = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda data=b"": hashed.append(len(data)) or real(data))
    assert known.holds("copy.stl", digest)
    assert hashed == []  # compared, not hashed
    assert not known.holds("edited.stl", digest)
    assert known.of("edited.stl") == real(mesh[:-1] + b"X").hexdigest()  # learnt when compared
    assert not known.holds("gone.stl", digest)


@pytest.mark.parametrize(
    ("second", "hashes"),
    [
        (b"solid link\n" * 1000, 0),  # a robot copied from another: compared with kept bytes
        (b"solid link\n" * 999 + b"solid linX\n", 1),  # same size, one byte off: hashed
        (b"solid link\n", 1),  # another size: hashed
    ],
    ids=["copy", "edited", "resized"],
)
def test_an_input_recorded_with_a_kept_digest_is_compared_not_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: bytes, hashes: int
) -> None:
    """A source holding the bytes of one hashed before is compared with them; any other byte is
    still seen, and the digest returned is always that of the file's own bytes."""
    mesh = b"solid link\n" * 1000
    for robot in ("a", "b"):
        (tmp_path / "robots" / robot).mkdir(parents=True)
    old(tmp_path / "robots/a/link.stl", mesh)
    old(tmp_path / "robots/b/link.stl", second)
    known = Digests(tmp_path, keep_bytes=1 << 20, settled=True)
    recorded = {"robots/a/link.stl": hashlib.sha256(mesh).hexdigest()}
    assert hash_inputs(tmp_path, ["robots/a/link.stl"], known, recorded) == recorded
    hashed: list[int] = []
    real = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda data=b"": hashed.append(len(data)) or real(data))
    found = hash_inputs(
        tmp_path, ["robots/b/link.stl"], known, {"robots/b/link.stl": recorded["robots/a/link.stl"]}
    )
    assert found == {"robots/b/link.stl": real(second).hexdigest()}
    assert len(hashed) == hashes


def test_without_kept_bytes_holds_hashes(tmp_path: Path) -> None:
    old(tmp_path / "a.bin", b"abc")
    known = Digests(tmp_path)
    assert known.holds("a.bin", hashlib.sha256(b"abc").hexdigest())
    assert not known.holds("a.bin", hashlib.sha256(b"abd").hexdigest())
    assert known.kept == {}


def test_a_touched_file_is_hashed_once_per_process_despite_its_old_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A racily clean file's fresh digest wins over the remembered entry it made stale."""
    old(tmp_path / "a.bin", b"abc")
    first = Digests(tmp_path)
    first.of("a.bin")
    first.save()
    os.utime(tmp_path / "a.bin")  # touched now: racily clean, so not remembered
    known = Digests(tmp_path)
    calls: list[str] = []
    real = Digests._read

    def counted(
        self: Digests, rel: str, path: str, expected: str = "", plain: bool = False
    ) -> str | None:
        calls.append(rel)
        return real(self, rel, path, expected, plain)

    monkeypatch.setattr(Digests, "_read", counted)
    for _ in range(3):
        assert known.of("a.bin") == hashlib.sha256(b"abc").hexdigest()
    assert len(calls) == 1


def looked_up(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths os.stat and os.open are called with from now on."""
    looks: list[str] = []
    for name in ("stat", "open"):
        real = getattr(os, name)
        counted = lambda p, *a, real=real, **k: looks.append(p) or real(p, *a, **k)  # noqa: E731
        monkeypatch.setattr(digests_module.os, name, counted)
    return looks


def test_settled_digests_stat_each_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check, where nothing changes, looks a file up once however many steps read it."""
    old(tmp_path / "a.bin", b"abc")
    known = Digests(tmp_path, settled=True)
    looks = looked_up(monkeypatch)
    assert {known.of("a.bin") for _ in range(5)} == {hashlib.sha256(b"abc").hexdigest()}
    assert [p for p in looks if str(p).endswith("a.bin")] == [str(tmp_path / "a.bin")]
    assert known.of("nope.bin") == known.of("nope.bin") == "missing"


@pytest.mark.parametrize(
    ("settled", "recorded", "looks"),
    [
        (True, b"abc", 1),  # found to hold what its step recorded: known as the next's input
        (True, b"abd", 2),  # found not to: looked up again as an input
        (False, b"abc", 2),  # a build, where the next step may have rewritten it: looked up
    ],
    ids=["held", "not held", "not settled"],
)
def test_an_output_a_check_found_holding_its_digest_is_not_read_again_as_an_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: bool, recorded: bytes, looks: int
) -> None:
    old(tmp_path / "a.bin", b"abc")
    known = Digests(tmp_path, remember=False, settled=settled)
    seen = looked_up(monkeypatch)
    digest = hashlib.sha256(recorded).hexdigest()
    assert known.holds("a.bin", digest) == (recorded == b"abc")
    assert known.of("a.bin") == hashlib.sha256(b"abc").hexdigest()
    assert len(seen) == looks


MESH = b"solid link\n" * 1000


def _as_output(folder: Path, case: str) -> None:
    """Put in folder/out.stl what a hand edit (or nothing) left where a copy of MESH belongs."""
    out = folder / "out.stl"
    if case in ("copy", "executable", "large", "remembered"):
        old(out, MESH)
    elif case == "edited":
        old(out, MESH[:-1] + b"X")  # same size, one byte off
    elif case == "truncated":
        old(out, MESH[:-1])
    elif case == "grown":
        old(out, MESH + b"\n")
    elif case == "folder":
        out.mkdir()
    elif case == "fifo":
        os.mkfifo(out)
    elif case == "link":
        old(folder / "elsewhere.stl", MESH)
        # same bytes, but not what a build writes (git commits the link; manifest and identity
        # refuse it): not held, so the step writes the file again
        out.symlink_to("elsewhere.stl")
    if case == "executable":
        out.chmod(0o755)


@pytest.mark.parametrize("budget", [0, 1 << 20], ids=["hashed", "kept"])
@pytest.mark.parametrize(
    ("case", "held"),
    [
        ("copy", True),
        ("remembered", True),  # its digest remembered from an earlier run: looked up
        ("large", True),  # over READ_WHOLE: hashed in blocks
        ("link", False),
        ("edited", False),
        ("truncated", False),
        ("grown", False),
        ("missing", False),
        ("folder", False),
        ("fifo", False),
        ("executable", False),  # outside git: a build never sets the bit
    ],
)
def test_unheld_names_each_output_holds_rejects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, held: bool, budget: int
) -> None:
    """A check reads most outputs in unheld's inline loop: it says what holds says of each."""
    old(tmp_path / "src.stl", MESH)
    _as_output(tmp_path, case)
    if case == "large":
        for module in (digests_module, digestread):
            monkeypatch.setattr(module, "READ_WHOLE", len(MESH) - 1)
    if case == "remembered":
        earlier = Digests(tmp_path)
        earlier.of("out.stl")
        earlier.save()
    answers = []
    for inline in (True, False):
        known = Digests(tmp_path, keep_bytes=budget, settled=True)
        digest = known.of("src.stl")
        found = (
            known.unheld({"out.stl": digest})
            if inline
            else [path for path in ["out.stl"] if not known.holds(path, digest)]
        )
        answers.append((found, known.of("out.stl"), known.entries.get("out.stl")))
    assert answers[0] == answers[1]
    assert answers[0][0] == ([] if held else ["out.stl"])


@pytest.mark.parametrize("budget", [0, 1 << 20], ids=["hashed", "kept"])
def test_symlink_refused_a_link_in_a_files_place_has_another_digest_that_follows_its_bytes(
    tmp_path: Path, budget: int
) -> None:
    """Every reader refuses a source that is a symbolic link; taken for the bytes it points to,
    a source replaced by a link to the same bytes left its step current, and a build from
    nothing refused it. The link's digest still follows its bytes (a helper module of srdf.py
    may be a link)."""
    old(tmp_path / "a.bin", b"abc")
    (tmp_path / "b.bin").symlink_to("a.bin")
    known = Digests(tmp_path, keep_bytes=budget)
    plain = known.of("a.bin")
    linked = known.of("b.bin")
    assert linked not in (plain, "missing")
    assert hash_inputs(tmp_path, ["b.bin"], known) == {"b.bin": linked}
    assert not known.holds("b.bin", plain) and known.unheld({"b.bin": plain}) == ["b.bin"]
    old(tmp_path / "a.bin", b"abd")
    assert Digests(tmp_path, keep_bytes=budget).of("b.bin") not in (linked, "missing")
    (tmp_path / "c.bin").symlink_to("nowhere.bin")
    assert known.of("c.bin") == "missing"


@pytest.mark.parametrize("budget", [0, 1 << 20], ids=["hashed", "kept"])
def test_a_fifo_in_place_of_a_file_is_missing_without_blocking(tmp_path: Path, budget: int) -> None:
    """Opening a FIFO for reading waits for a writer: `pipeline check` hung on one in build/."""
    old(tmp_path / "a.bin", b"")  # an empty file hashed first: kept bytes of the FIFO's size
    os.mkfifo(tmp_path / "b.bin")
    known = Digests(tmp_path, remember=False, keep_bytes=budget)
    empty = known.of("a.bin")
    answers: list[object] = []

    def ask() -> None:
        answers.extend([known.of("b.bin"), known.holds("b.bin", empty)])

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(timeout=30)  # a guard against hanging the suite, not a speed assertion
    assert answers == ["missing", False]


@pytest.mark.parametrize(
    "name",
    [
        CACHE_NAME,
        f"{CACHE_NAME}.4242.tmp",
        BUILT_CACHE_NAME,
        f"{BUILT_CACHE_NAME}.4242.tmp",
        RECORD_NAME,
        f"{RECORD_NAME}.4242.tmp",
        ".doit.db",
        ".doit.lock",
        ".pipeline-cache.json",  # versions before the NUL-separated digest cache
        ".pipeline-cache.json.4242.tmp",
    ],
)
def test_local_caches_of_this_and_older_versions_are_git_ignored(tmp_path: Path, name: str) -> None:
    """After an upgrade, an older version's cache stayed in the checkout as an untracked file
    that `git add -A` committed."""
    shutil.copy2(REPO / ".gitignore", tmp_path / ".gitignore")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    ignored = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", "-q", name])
    assert ignored.returncode == 0
