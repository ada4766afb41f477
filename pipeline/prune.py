"""Outputs of removed robots and cells: found through the stamps their steps left in build/.

`build/` is entirely generated, so when a robot or cell leaves the sources its compiled files
leave `build/` on the next run; a file no stamp ever recorded is left for a person to judge
(`pipeline check` names it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from pipeline.findings import ContractError, Finding
from pipeline.stamps import STAMP_ROOT, Step, read_stamp


def orphan_stamps(root: Path, steps: Iterable[Step]) -> list[str]:
    """Stamps under build/stamps/ of steps the plan no longer has (a robot or cell removed)."""
    wanted = {step.stamp for step in steps}
    base = os.path.join(root, STAMP_ROOT)
    try:
        groups = sorted(os.listdir(base))
    except OSError:
        return []
    found: list[str] = []
    for group in groups:
        try:
            names = sorted(os.listdir(os.path.join(base, group)))
        except OSError:
            continue  # not a folder
        paths = (f"{STAMP_ROOT}/{group}/{name}" for name in names if name.endswith(".json"))
        found += [path for path in paths if path not in wanted]
    return found


def orphan_outputs(root: Path, orphans: Iterable[str], steps: Iterable[Step]) -> list[str]:
    """What orphan stamps record as outputs, inside build/ and claimed by no current step."""
    claimed: set[str] = set()
    for step in steps:
        stamp = read_stamp(root, step.name)
        claimed.update(stamp.outputs if stamp is not None else ())
    out: set[str] = set()
    for orphan in orphans:
        try:
            with open(os.path.join(root, orphan), "rb") as handle:
                outputs = json.loads(handle.read())["outputs"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
        for path in outputs if isinstance(outputs, dict) else ():
            parts = path.split("/") if isinstance(path, str) else [".."]
            # a stamp is build output, but never trusted to name a file outside build/
            if parts[0] == "build" and not {"", ".", ".."} & set(parts) and "\0" not in path:
                out.add(path)
    return sorted(out - claimed)


def remove_orphans(root: Path, steps: Iterable[Step]) -> list[str]:
    """Delete the outputs and stamps of steps the plan no longer has; the paths removed."""
    steps = list(steps)
    orphans = orphan_stamps(root, steps)
    build = os.path.realpath(os.path.join(root, "build"))
    removed: list[str] = []
    refused: list[Finding] = []
    for path in [*orphan_outputs(root, orphans, steps), *orphans]:
        full = os.path.join(root, path)
        parent = os.path.realpath(os.path.dirname(full))
        if parent != build and not parent.startswith(build + os.sep):
            continue  # a linked folder leads out of build/: nothing there is ours to delete
        try:
            if os.path.islink(full) or os.path.isfile(full):
                os.unlink(full)
                removed.append(path)
            folder = os.path.dirname(full)
            while folder != os.path.join(root, "build") and _is_empty(folder):
                os.rmdir(folder)
                folder = os.path.dirname(folder)
        except OSError as exc:  # a read-only build/: say which file stays, and go on
            refused.append(
                Finding(
                    "output_unwritable",
                    path,
                    "",
                    f"cannot be removed: {exc.strerror or exc}",
                    "make build/ writable (its folders and files) and run again",
                )
            )
    if refused:
        raise ContractError(refused)
    return removed


def _is_empty(folder: str) -> bool:
    try:
        return not os.listdir(folder)
    except OSError:
        return False
