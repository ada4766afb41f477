"""Processes a test started, seen through /proc: which are below a pid, which have ended."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO


def gone(pid: int) -> bool:
    """Whether the process has ended (a zombie no one reaped has ended too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # not a process, or one that has ended
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def wait_gone(pids: list[int], seconds: float) -> bool:
    """Whether every process of `pids` ended within `seconds`."""
    deadline = time.monotonic() + seconds
    while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return all(gone(pid) for pid in pids)


def kill_left(pids: list[int]) -> None:
    """Kill what a failed test left (only the processes it started)."""
    for pid in pids:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


def killed_scripts_pids(tmp_path: Path, script: str, *args: str, timeout: float) -> list[int]:
    """The pids a script printed before it killed itself with SIGKILL (two workers it started)."""
    out = tmp_path / "workers.txt"
    with out.open("w") as handle:  # not a pipe: a worker left alive would hold it open
        died = subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=handle,
            timeout=timeout,
            check=False,
        )
    workers = [int(pid) for pid in out.read_text().split()]
    assert died.returncode == -signal.SIGKILL and len(workers) == 2
    return workers
