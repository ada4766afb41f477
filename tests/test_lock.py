"""The checkout's build lock: a second holder waits for the first."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from pipeline.lock import LOCK_NAME, MARK, hold_build_lock

WAITER = """
import sys
from pathlib import Path
from pipeline.lock import hold_build_lock
with hold_build_lock(Path(sys.argv[1])):
    print("held")
"""


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
