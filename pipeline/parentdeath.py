"""Forked worker processes that die with the process that forked them (Linux's parent death
signal), so that none outlives a killed run and writes into build/ without its lock: doit -n's
workers and the fitting pool's (spheres/pool.py)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies


def die_with_parent(parent: int) -> None:
    """In a forked child: be killed when `parent` (its pid recorded before the fork) dies.

    A parent that died before the signal was set (the child is then another's) is not noticed
    by the kernel: the child checks its parent right after and exits. Where the signal cannot
    be set (not Linux, a Python without ctypes or a C library without prctl), nothing is done.
    """
    if sys.platform != "linux":
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)


def doit_workers_die_with_the_run() -> None:
    """Have the worker processes `doit -n` forks (its MRunner's) die with the run that forked
    them: killed with SIGKILL, doit cannot stop them, and they went on building without the lock.
    """
    from doit.runner import MRunner, Process

    work = MRunner.execute_task_subprocess
    if getattr(work, "dies_with_the_run", False):
        return

    def execute_task_subprocess(self: Any, *args: Any) -> Any:
        if self.Child is Process:  # a forked process, not one of `doit -P thread`'s threads
            import multiprocessing

            parent = multiprocessing.parent_process()  # the pid recorded before the fork
            if parent is not None and parent.pid is not None:
                die_with_parent(parent.pid)
        return work(self, *args)

    execute_task_subprocess.dies_with_the_run = True  # type: ignore[attr-defined]
    MRunner.execute_task_subprocess = execute_task_subprocess
