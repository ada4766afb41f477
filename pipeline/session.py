"""One doit run in one checkout: the build lock, and clearing what an interrupted run left.

doit opens its state database before it asks dodo.py for tasks, so the lock is taken when dodo.py
reads its configuration: a second run then waits before it reads or writes anything, the database
included. doit writes that database in place (not through a rename), so a run killed while
writing it leaves it unreadable; it is only a cache (build/stamps/ decide what is current), so an
unreadable one is removed with a message instead of stopping every later run.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import IO

from pipeline.digests import CACHE_NAME
from pipeline.lock import hold_build_lock

BUILD = "build"
# strict_io.atomic_write's temporary names: "." + final name + "." + mkstemp's 8 characters + ".tmp"
_TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")


def is_temp_name(name: str) -> bool:
    """Whether a file name is one of atomic_write's temporary names."""
    return _TEMP_NAME.fullmatch(name) is not None


def _say(message: str) -> None:
    print(f"doit: {message}", file=sys.stderr, flush=True)


def leftover_temps(root: Path) -> list[Path]:
    """Temporary files an interrupted write left: under build/, and the digest cache's."""
    found = [p for p in root.glob(f"{CACHE_NAME}.*.tmp") if not p.is_dir()]
    for dirpath, _, filenames in os.walk(root / BUILD):
        found += [Path(dirpath, name) for name in filenames if is_temp_name(name)]
    return sorted(found)


def remove_leftover_temps(root: Path) -> int:
    """Delete leftover temporary files (only safe while holding the build lock)."""
    found = leftover_temps(root)
    for path in found:
        path.unlink(missing_ok=True)
    if found:
        _say(f"removed {len(found)} temporary file(s) an interrupted build left")
    return len(found)


def repair_doit_db(root: Path, dep_file: str) -> bool:
    """Remove doit's JSON database when it cannot be read; True when it was removed."""
    path = root / dep_file
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return False
    except OSError:
        data = b""
    try:
        readable = isinstance(json.loads(data.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError):
        readable = False
    if readable:
        return False
    path.unlink(missing_ok=True)
    _say(
        f"{dep_file} could not be read (a run was interrupted while writing it); removed it. "
        "It is only a cache: build/stamps/ decide what is current, "
        "so no output is rewritten needlessly"
    )
    return True


def open_session(root: Path, dep_file: str) -> IO[str]:
    """Take the build lock, then clear leftovers of an interrupted run; keep the handle open."""
    lock = hold_build_lock(root)
    remove_leftover_temps(root)
    repair_doit_db(root, dep_file)
    return lock
