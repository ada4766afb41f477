"""The checkout's build lock: a second holder waits for the first."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.lock import FINISHED, LOCK_NAME, MARK, BuildLock, hold_build_lock

WAITER = """
import sys
from pathlib import Path
from pipeline.lock import hold_build_lock
with hold_build_lock(Path(sys.argv[1])):
    print("held")
"""


def assert_refused_with_a_message(repo: Path) -> None:
    """Taking the lock in `repo` stops with exit 2 and says to remove it, no traceback."""
    result = subprocess.run(
        [sys.executable, "-c", WAITER, str(repo)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"remove {LOCK_NAME}" in result.stderr


def test_second_holder_waits_with_a_message(tmp_path: Path) -> None:
    with hold_build_lock(tmp_path):
        waiter = subprocess.Popen(
            [sys.executable, "-c", WAITER, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)
        assert waiter.poll() is None  # still waiting while the lock is held
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0 and out == "held\n"
    assert "another build is running in this checkout; waiting" in err


KILLED = """
import os, sys
from pathlib import Path
from pipeline.lock import hold_build_lock
hold_build_lock(Path(sys.argv[1]))
os._exit(0)  # dies holding the lock, as a killed build would: no finish()
"""


def test_a_holder_that_finishes_leaves_no_mark(tmp_path: Path) -> None:
    with hold_build_lock(tmp_path) as lock:
        assert not lock.interrupted
        assert (tmp_path / LOCK_NAME).read_text() == MARK
    assert (tmp_path / LOCK_NAME).read_text() == ""
    with hold_build_lock(tmp_path) as again:
        assert not again.interrupted


def test_a_holder_that_dies_leaves_its_mark_for_the_next(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    subprocess.run([sys.executable, "-c", KILLED, str(tmp_path)], env=env, check=True)
    with hold_build_lock(tmp_path) as lock:
        assert lock.interrupted
    with hold_build_lock(tmp_path) as after:
        assert not after.interrupted  # the holder that cleaned up finished


def test_a_lock_file_holding_junk_is_taken_as_a_mark(tmp_path: Path) -> None:
    # bytes that are not UTF-8 (a stray write, a disk error) must not stop every later build
    (tmp_path / LOCK_NAME).write_bytes(b"\xff\xfe junk")
    with hold_build_lock(tmp_path) as lock:
        assert lock.interrupted
    assert (tmp_path / LOCK_NAME).read_bytes() == b""


FORKS_THEN_DIES = """
import os, sys, time
from pathlib import Path
from pipeline.lock import hold_build_lock
lock = hold_build_lock(Path(sys.argv[1]))
child = os.fork()  # as doit -n 2 and the spheres process pool do
if child == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1), os.dup2(null, 2)  # let the test read the parent's output to its end
    time.sleep(120)  # an orphaned worker: doit's and the pool's wait forever for a dead parent
    os._exit(0)
print(child, flush=True)
os._exit(0)  # the build itself is killed
"""


def test_a_killed_builds_forked_workers_do_not_keep_the_lock(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    run = subprocess.run(
        [sys.executable, "-c", FORKS_THEN_DIES, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = int(run.stdout)
    try:
        with (tmp_path / LOCK_NAME).open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError when kept
    finally:
        os.kill(orphan, signal.SIGKILL)
    with hold_build_lock(tmp_path) as lock:
        assert lock.interrupted  # the killed build's mark is still there for the cleanup


def test_a_finished_holder_records_the_watched_files_signature(tmp_path: Path) -> None:
    """The next holder can tell whether anything wrote the watched file (doit's database)."""
    (tmp_path / ".doit.db").write_text("{}")
    with BuildLock(tmp_path, watch=".doit.db"):
        pass
    assert (tmp_path / LOCK_NAME).read_text().startswith(FINISHED)
    with BuildLock(tmp_path, watch=".doit.db") as lock:
        assert not lock.interrupted
        assert lock.left == lock.watched()
        (tmp_path / ".doit.db").write_text("{ }")  # written by something else
        assert lock.left != lock.watched()


def test_a_folder_in_place_of_the_lock_stops_with_a_message(tmp_path: Path) -> None:
    """A folder named .doit.lock stopped doit and `pipeline cell` with a traceback."""
    (tmp_path / LOCK_NAME).mkdir()
    assert_refused_with_a_message(tmp_path)


def test_a_link_in_place_of_the_lock_is_not_followed(tmp_path: Path) -> None:
    """The lock is truncated: a link named .doit.lock emptied the file it pointed at."""
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / LOCK_NAME).symlink_to(precious)
    assert_refused_with_a_message(repo)
    assert precious.read_text() == "keep me\n"


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (errno.EACCES, "run as the user who owns the checkout, or make the checkout writable"),
        (
            errno.EROFS,
            "the checkout's file system is read-only, so doit cannot build here (`doit list` "
            "and `doit info` still run); `pipeline check` checks build/ without writing",
        ),
    ],
    ids=["EACCES", "EROFS"],
)
def test_a_checkout_this_user_cannot_write_says_so_not_remove_the_lock(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    code: int,
    fix: str,
) -> None:
    """Another user's checkout was told to remove a lock that isn't there; a read-only one
    was told to run as its owner, which cannot help: it is told what still works."""

    def refuse(*_: object) -> int:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(SystemExit) as stopped:
        BuildLock(tmp_path)
    assert stopped.value.code == 2
    message = capsys.readouterr().err
    assert message == (
        f"doit: the build lock {LOCK_NAME} cannot be opened ({os.strerror(code)}); {fix}\n"
    )


def test_a_lock_not_required_that_cannot_be_opened_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command that writes nothing (`doit list`) goes on without it, and clears nothing."""

    def refuse(*_: object) -> int:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(os, "open", refuse)
    with BuildLock(tmp_path, watch=".doit.db", required=False) as lock:
        assert not lock.held
        assert not lock.interrupted and not lock.searches_build
    assert capsys.readouterr().err == ""
    monkeypatch.undo()
    assert not (tmp_path / LOCK_NAME).exists()
