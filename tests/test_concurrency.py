"""Two doit runs in one checkout serialise on the build lock, doit's database included.

doit opens its database before it asks dodo.py for tasks; the lock is taken when dodo.py is read
(pipeline.tasks.doit_config), so a waiting run reads the database only after the other run has
written it and exited. tests/killshim.py (never killing) logs every database open, rename into
place and database dump with its process id: the two runs' events must not interleave.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_doit, tree_bytes

SHIM = Path(__file__).with_name("killshim.py")
WAITING = "another build is running in this checkout; waiting for it to finish"


def start(project: Path, log: Path, stderr: Path) -> subprocess.Popen[bytes]:
    """Start a traced doit run that writes its stderr to a file."""
    env = {**os.environ, "PYTHONPATH": str(project)}
    with stderr.open("wb") as err:
        return subprocess.Popen(
            [sys.executable, str(SHIM), "-1", str(log)],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


def wait_for_waiting(run: subprocess.Popen[bytes], stderr: Path, limit: float = 120.0) -> None:
    """Poll until a run says it waits for the lock (a liveness bound, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while WAITING not in stderr.read_text(encoding="utf-8"):
        assert run.poll() is None, f"exited {run.returncode}: {stderr.read_text(encoding='utf-8')}"
        assert time.monotonic() < deadline, "gave up waiting for the waiting message"
        time.sleep(0.05)


def pids_in_order(log: Path) -> list[str]:
    """The process id of each logged event, in log order, runs of one id collapsed."""
    order: list[str] = []
    for line in log.read_text(encoding="utf-8").splitlines():
        pid = line.split(" ", 1)[0]
        if not order or order[-1] != pid:
            order.append(pid)
    return order


def test_waiting_run_reads_the_doit_db_only_after_the_lock(project: Path, tmp_path: Path) -> None:
    """While another run holds the lock (db torn mid-dump), a new run waits and reads nothing."""
    assert run_doit(project).returncode == 0
    good_db = (project / ".doit.db").read_bytes()
    before = tree_bytes(project / "build")
    lock = (project / ".doit.lock").open("a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        (project / ".doit.db").write_bytes(good_db[: len(good_db) // 2])
        err = tmp_path / "err.txt"
        log = tmp_path / "events.log"
        waiter = start(project, log, err)
        wait_for_waiting(waiter, err)
        assert waiter.poll() is None
        assert not log.exists() or "db-open" not in log.read_text(encoding="utf-8")
        # The holder finishes its dump, then exits (releasing the lock).
        (project / ".doit.db").write_bytes(good_db)
    finally:
        lock.close()
    assert waiter.wait(timeout=300) == 0, err.read_text(encoding="utf-8")
    stderr = err.read_text(encoding="utf-8")
    assert "could not be read" not in stderr and "Traceback" not in stderr
    assert tree_bytes(project / "build") == before


def test_two_runs_started_together_serialise_and_build_once(
    project: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Both runs queue on the lock; one builds, the other then finds everything current.

    The result is byte for byte what one run alone makes (in a copy of the same checkout).
    """
    # A change with real work downstream (copies, manifest, identities, cells), but no refit.
    config = project / "robots" / "lbr_iiwa_14_r820" / "config.json"
    config.write_bytes(config.read_bytes().replace(b"{\n", b"{ \n", 1))
    single = tmp_path_factory.mktemp("single") / "checkout"
    shutil.copytree(project, single, symlinks=True)
    assert run_doit(single).returncode == 0
    reference = tree_bytes(single / "build")
    assert reference != tree_bytes(project / "build")
    log = tmp_path / "events.log"
    errs = [tmp_path / "err-a.txt", tmp_path / "err-b.txt"]
    lock = (project / ".doit.lock").open("a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        runs = [start(project, log, err) for err in errs]
        for run, err in zip(runs, errs, strict=True):
            wait_for_waiting(run, err)
    finally:
        lock.close()
    assert [run.wait(timeout=300) for run in runs] == [0, 0]
    for err in errs:
        assert "Traceback" not in err.read_text(encoding="utf-8")
    order = pids_in_order(log)
    assert len(order) == 2, order
    first, second = order
    lines = [line.split(" ") for line in log.read_text(encoding="utf-8").splitlines()]
    kinds = {pid: [kind for p, _, kind, _ in lines if p == pid] for pid in order}
    paths = {pid: [path for p, _, _, path in lines if p == pid] for pid in order}
    assert kinds[first][0] == "db-open" and "db-dump" in kinds[first]
    # the second run changed nothing in the database either, so it leaves the file as it was
    assert kinds[second][0] == "db-open" and "db-dump" not in kinds[second]
    # The second run found everything current: it renamed nothing into build/.
    assert not any("/build/" in path for path in paths[second]), paths[second]
    assert tree_bytes(project / "build") == reference
    db = json.loads((project / ".doit.db").read_text(encoding="utf-8"))
    assert set(db) >= {"urdf:abb_irb2400", "manifest:lbr_iiwa_14_r820", "index:robots"}
    again = run_doit(project)
    assert again.returncode == 0 and "\n.  " not in "\n" + again.stdout
