"""The fitting pool: workers that ignore Ctrl-C, die with their parent, and are killed when the
run stops; Ctrl-C to a whole build is one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.failures import WorkerDied
from pipeline.spheres.pool import fitting_pool, pool_map
from tests.conftest import REPO, run_python, tree_bytes
from tests.processes import children, kill_left, killed_scripts_pids, wait_gone
from tests.test_spheres_build import FAST, IIWA

LINUX = pytest.mark.skipif(sys.platform != "linux", reason="Linux: /proc, a parent's death signal")


def _script(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a script of this checkout's code in a session of its own (a terminal's job)."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        start_new_session=True,
    )


def test_pool_map_gives_each_result_in_the_order_of_the_jobs() -> None:
    assert pool_map(abs, [-3, 1, -2, 5], 2) == [3, 1, 2, 5]


def test_pool_map_hands_each_result_to_done_in_the_order_of_the_jobs() -> None:
    """The spheres step's progress: a line per link as its fit is taken."""
    seen: list[int] = []
    assert pool_map(abs, [-3, 1, -2, 5], 2, seen.append) == [3, 1, 2, 5]
    assert seen == [3, 1, 2, 5]


def _fails(job: int) -> int:
    if job == 2:
        raise ValueError("no fit")
    return job


def test_a_jobs_error_is_raised_as_it_is() -> None:
    with pytest.raises(ValueError, match="no fit"):
        pool_map(_fails, [1, 2, 3], 2)


def _dies(job: int) -> int:
    if job == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return job


def test_a_worker_killed_is_worker_died() -> None:
    """The out-of-memory killer: said in one line by the step (failures.py), not a stack."""
    with pytest.raises(WorkerDied):
        pool_map(_dies, [1, 2, 3], 2)


# Ctrl-C at a terminal signals its whole process group: the run and the pool's workers, each
# at its own moment. The stack came when a worker died of it first and the pool's thread was
# still failing the pending futures (terminate_broken) when the run, having seen the Ctrl-C,
# cancelled them (pool.map did). Here that order is made sure of, three times over: the first
# of two busy workers signals the other, 20 ms later the group (the run and itself), and the
# pool's thread is 100 ms late.
GROUP_SCRIPT = """
import multiprocessing, os, signal, time
from concurrent.futures import process
from pipeline.spheres.pool import pool_map

broken = process._ExecutorManagerThread.terminate_broken
def late(self, cause):
    time.sleep(0.1)
    broken(self, cause)
process._ExecutorManagerThread.terminate_broken = late

def fit(job):
    PIDS[BUSY.wait()] = os.getpid()
    if BUSY.wait() == 0:  # both workers are fitting, six links are pending
        os.kill(next(pid for pid in PIDS if pid != os.getpid()), signal.SIGINT)
        time.sleep(0.02)
        os.killpg(0, signal.SIGINT)
    time.sleep(600)

for _ in range(3):
    context = multiprocessing.get_context("fork")
    BUSY, PIDS = context.Barrier(2), context.Array("i", 2)
    try:
        pool_map(fit, range(8), 2)
    except KeyboardInterrupt:
        print("interrupted; workers left:", len(multiprocessing.active_children()), flush=True)
"""


@LINUX
def test_ctrl_c_to_the_process_group_while_fitting_stops_the_pool_without_a_word() -> None:
    """Workers that died of the Ctrl-C while pool.map cancelled the pending links made Python
    3.11's pool thread print `Exception in thread ... InvalidStateError: CANCELLED` and a stack
    (about one interrupted build in two), and could leave a worker behind."""
    result = _script(GROUP_SCRIPT)
    assert result.stderr == ""
    assert result.stdout.splitlines() == ["interrupted; workers left: 0"] * 3
    assert result.returncode == 0


# A script that starts the fitting pool, gives both workers something to do (a link being
# fitted: a sleep), prints their process ids, then does what its argument says.
POOL_SCRIPT = """
import os, signal, sys, time
from pipeline.spheres.pool import fitting_pool

pool = fitting_pool(2)
busy = [pool.submit(time.sleep, 600) for _ in range(2)]
while len(pool._processes) < 2:
    time.sleep(0.01)
workers = sorted(pool._processes)
print(*workers, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # doit -n's worker ended by SIGTERM: the pool's parent
"""


@LINUX
def test_fitting_workers_die_with_the_process_that_started_them(tmp_path: Path) -> None:
    """doit -n 2, stopped by Ctrl-C or SIGTERM, ended its workers but not their fitting
    workers: they waited for the next link forever."""
    workers = killed_scripts_pids(tmp_path, POOL_SCRIPT, timeout=600)
    try:
        assert wait_gone(workers, 60)
    finally:
        kill_left(workers)


START_RACE_SCRIPT = """
import os, signal, time
from pipeline.spheres.pool import fitting_pool

for _ in range(20):
    pool = fitting_pool(2)
    busy = [pool.submit(time.sleep, 0.05) for _ in range(2)]
    for pid in sorted(pool._processes):  # at once: before their initializer, maybe
        os.kill(pid, signal.SIGINT)
    assert [job.result() for job in busy] == [None, None]  # fitted, not broken
    pool.shutdown()
os._exit(0)
"""


def test_ctrl_c_to_fitting_workers_as_they_start_is_ignored_without_a_word() -> None:
    """A Ctrl-C met by a worker before its initializer set it aside (the first milliseconds of
    a pool) printed `Process ForkProcess-1:` and a stack: 14 of 30 pools in a row did."""
    result = run_python(REPO, "-c", START_RACE_SCRIPT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == ""


def test_fitting_workers_start_where_the_parent_death_signal_cannot_be_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Python whose ctypes cannot open the C library (a static build) or whose library has
    no prctl: each worker's start raised, and every fit ended as `BrokenProcessPool`, said as
    a worker killed for want of memory. Without the signal a worker still fits."""
    import ctypes

    def refused(*args: object, **kwargs: object) -> object:
        raise OSError("dlopen: no C library")

    monkeypatch.setattr(ctypes, "CDLL", refused)  # the forked workers inherit it
    with fitting_pool(2) as pool:
        assert list(pool.map(abs, [-1, -2, -3])) == [1, 2, 3]


def _ctrl_c_while_fitting(project: Path, delay: float) -> subprocess.CompletedProcess[str]:
    """Run doit as a terminal does, and Ctrl-C it `delay` s after its fitting workers started."""
    env = {**os.environ, "PYTHONPATH": str(project), "PYTHONUNBUFFERED": "1"}
    run = subprocess.Popen(
        [sys.executable, "-m", "doit"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert run.stdout is not None
        for line in run.stdout:  # doit names each step as it starts it
            if line.split() == [".", f"spheres:{IIWA}"]:
                break
        while len(children(run.pid)) < 2 and run.poll() is None:
            time.sleep(0.005)
        time.sleep(delay)
        assert run.poll() is None, "the build ended before the Ctrl-C"
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


@LINUX
def test_ctrl_c_to_a_build_fitting_links_is_one_line_and_each_output_whole(
    project: Path, tmp_path: Path
) -> None:
    """The reproduction of the report: a terminal's Ctrl-C (the whole process group) while a
    build refits the iiwa's links, at several moments of the fit."""
    (project / "robots" / IIWA / "spheres.settings.json").write_text(json.dumps(FAST))
    build, before = project / "build", tmp_path / "before"
    shutil.copytree(build, before)
    snapshots = []
    for delay in (0.0, 0.1, 0.3):
        result = _ctrl_c_while_fitting(project, delay)
        assert "Traceback" not in result.stderr and "Exception" not in result.stderr, result.stderr
        assert result.stderr.splitlines()[-1].startswith("doit: interrupted; ")
        assert result.returncode == -signal.SIGINT  # what a shell reports as exit status 130
        snapshots.append(tree_bytes(build))
        shutil.rmtree(build)  # each time with every link still to fit
        shutil.copytree(before, build)
    finished = run_python(project, "-m", "doit")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    old, new = tree_bytes(before), tree_bytes(build)
    for snapshot in snapshots:  # no temporary file, nothing torn: each file as it was or will be
        assert set(snapshot) <= set(old) | set(new)
        assert all(data in (old.get(name), new.get(name)) for name, data in snapshot.items())
