"""The checkout's build lock: two builds in one checkout take turns."""

from __future__ import annotations

import fcntl
import sys
from pathlib import Path
from typing import IO


def hold_build_lock(root: Path) -> IO[str]:
    """Take the checkout's build lock, waiting for another run to finish; keep it open."""
    handle = (root / ".doit.lock").open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            "doit: another build is running in this checkout; waiting for it to finish",
            file=sys.stderr,
            flush=True,
        )
        fcntl.flock(handle, fcntl.LOCK_EX)
    return handle
