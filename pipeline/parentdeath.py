"""Forked worker processes that die with the process that forked them (Linux's parent death
signal), so that none outlives a killed run and writes into build/ without its lock: doit -n's
workers (doitext.doit_workers_die_with_the_run) and the fitting pool's (spheres/pool.py)."""

from __future__ import annotations

import os
import signal
import sys

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
