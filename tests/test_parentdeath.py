"""doit -n's worker processes die with the run that forked them, even one killed by SIGKILL."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.lock import LOCK_NAME
from pipeline.parentdeath import die_with_parent
from tests.processes import children, kill_left, killed_scripts_pids, wait_gone

LINUX = pytest.mark.skipif(sys.platform != "linux", reason="Linux: /proc, a parent's death signal")

# doit's MRunner starts its workers as a run does; each waits for its first task (JobHold), as
# a worker does while the other fits a robot's links. Then the run is killed.
WORKERS_SCRIPT = """
import os, signal, sys
from multiprocessing import Queue
from doit.runner import JobHold, MRunner
from pipeline.doitext import doit_workers_die_with_the_run

if sys.argv[1] == "installed":
    doit_workers_die_with_the_run()

class Runner(MRunner):
    def get_next_job(self, completed):
        return JobHold()

runner = Runner.__new__(Runner)
runner.num_process, runner.reporter = 2, object()
workers = runner._run_start_processes(Queue(), Queue())
print(*(worker.pid for worker in workers), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _killed_runs_workers(tmp_path: Path, installed: bool) -> list[int]:
    """The pids of the workers of a run killed with SIGKILL once they started."""
    return killed_scripts_pids(
        tmp_path, WORKERS_SCRIPT, "installed" if installed else "plain", timeout=120
    )


@LINUX
def test_doit_workers_die_with_a_run_killed_by_sigkill(tmp_path: Path) -> None:
    """doit -n 2 killed with SIGKILL left its workers alive for good (ppid 1): they finished
    their steps into build/ without the lock, which a new run could then take."""
    workers = _killed_runs_workers(tmp_path, installed=True)
    try:
        assert wait_gone(workers, 30)
    finally:
        kill_left(workers)


@LINUX
def test_without_the_hook_doits_workers_outlive_the_run(tmp_path: Path) -> None:
    """What the hook is for: doit's own workers wait for their dead parent forever."""
    workers = _killed_runs_workers(tmp_path, installed=False)
    try:
        assert not wait_gone(workers, 1)
    finally:
        kill_left(workers)


@LINUX
def test_a_worker_whose_parent_died_before_the_signal_was_set_exits(tmp_path: Path) -> None:
    """The kernel only signals a death after prctl: a parent gone before it is checked for."""
    child = os.fork()
    if child == 0:  # a pid that is not its parent's: as if that parent died before prctl
        die_with_parent(-1)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 1


def _descendants(pid: int) -> list[int]:
    """The processes below `pid`: doit's workers and their fitting workers."""
    found = children(pid)
    for child in list(found):
        found += _descendants(child)
    return found


@LINUX
@pytest.mark.slow
def test_doit_n2_killed_while_fitting_leaves_no_process_and_frees_the_lock(
    project: Path,
) -> None:
    """The report's reproduction: `doit -n 2` refitting the ABB's links, killed with SIGKILL.
    Its two workers (117 MB each) stayed for good, and 11 s later wrote spheres.json and its
    stamp into build/, while a new doit could take the lock."""
    (project / "robots/abb_irb2400/spheres.settings.json").write_text(
        '{"defaults": {"max_spheres": 15}}'
    )
    env = {**os.environ, "PYTHONPATH": str(project), "PYTHONUNBUFFERED": "1"}
    run = subprocess.Popen(
        [sys.executable, "-m", "doit", "-n", "2"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    below: list[int] = []
    try:
        assert run.stdout is not None
        for line in run.stdout:  # doit names each step as a worker starts it
            if line.split() == [".", "spheres:abb_irb2400"]:
                break
        while len(_descendants(run.pid)) < 4 and run.poll() is None:  # 2 workers, 2 fitting
            time.sleep(0.01)
        below = _descendants(run.pid)
        assert run.poll() is None, "the build ended before the kill"
        run.kill()
        run.wait()
        assert wait_gone(below, 30), "a worker outlived the killed run"
        with (project / LOCK_NAME).open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError when kept
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        kill_left(below)
