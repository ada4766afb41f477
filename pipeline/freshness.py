"""Is build/ exactly what the sources produce? Decided from the stamps, writing nothing."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pipeline.digests import Digests
from pipeline.session import is_temp_name
from pipeline.stamps import (
    STAMP_ROOT,
    Step,
    changed_inputs,
    changed_outputs,
    hash_inputs,
    read_stamp,
)

BUILD = "build"


@dataclass(frozen=True)
class Staleness:
    """One way build/ differs from what the sources produce."""

    kind: str
    path: str
    reason: str

    def line(self) -> str:
        """Render as `kind: path (reason)`."""
        return f"{self.kind}: {self.path} ({self.reason})"


def _build_files(root: Path) -> set[str]:
    """Every file (or link) below build/, repo-relative."""
    out: set[str] = set()
    skip = len(os.path.join(root, ""))
    folders = [os.path.join(root, BUILD)]
    while folders:  # scandir's entry types save the stat os.walk's bookkeeping adds per folder
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    else:
                        out.add(entry.path[skip:].replace(os.sep, "/"))
        except OSError:
            continue
    return out


def check(root: Path, steps: Iterable[Step], known: Digests | None = None) -> list[Staleness]:
    """Every stale, missing, modified or extra file of build/, with what made it so."""
    known = known or Digests(root, remember=False)
    steps = list(steps)
    out: list[Staleness] = []
    claimed: set[str] = set()
    stampless: list[Step] = []
    # the first cause of each stale step, by its stamp: a step reading an upstream stamp that
    # will be rewritten is stale too, though that stamp's bytes have not changed yet
    causes: dict[str, str] = {}
    for step in steps:
        claimed.add(step.stamp)
        stamp = read_stamp(root, step.name)
        if stamp is None:
            built = [t for t in step.targets if os.path.lexists(root / t)]
            state = "has no readable stamp" if built else "has never been built"
            causes[step.stamp] = f"{step.name} {state}"
            stampless.append(step)
            for target in step.targets or (step.stamp,):
                claimed.add(target)
                kind = "stale" if target in built else "missing"
                out.append(Staleness(kind, target, causes[step.stamp]))
            continue
        claimed.update(stamp.outputs)
        changed = changed_inputs(stamp, hash_inputs(root, step.inputs, known))
        upstream = [causes[path] for path in step.inputs if path in causes]
        if changed or upstream:
            # downstream steps name the first cause, not the chain that carried it
            cause = f"{step.name}: {_describe(changed, stamp.inputs)}" if changed else upstream[0]
            causes[step.stamp] = cause
            reason = cause if changed else f"{step.name}: after {cause}"
            if changed and step.name.startswith("spheres:"):
                from pipeline.spheres.task import describe_status

                reason += describe_status(root, step.name.partition(":")[2])
            # a step with no outputs of its own (code:<stage>) is reported by its stamp
            stale = sorted(stamp.outputs) or [step.stamp]
            out.extend(Staleness("stale", path, reason) for path in stale)
            continue
        for path in changed_outputs(root, stamp, known):
            kind = "missing" if not (root / path).exists() else "modified"
            out.append(Staleness(kind, path, f"differs from what {step.name} made"))
    extra = _build_files(root) - claimed
    removed: set[str] = set()
    if extra:
        from pipeline.prune import orphan_outputs, orphan_stamps

        orphans = orphan_stamps(root, steps)
        removed = {*orphans, *orphan_outputs(root, orphans, steps)}
    for path in sorted(extra):
        maker = next((s.name for s in stampless if _may_make(s, path)), None)
        out.append(Staleness("extra", path, _extra_reason(path, path in removed, maker)))
    return out


def _may_make(step: Step, path: str) -> bool:
    """Whether `path` lies in a folder where `step` writes its targets."""
    return any(path.startswith(target.rsplit("/", 1)[0] + "/") for target in step.targets)


def _extra_reason(path: str, orphaned: bool, maker: str | None = None) -> str:
    if is_temp_name(path.rsplit("/", 1)[-1]):
        return "temporary file of an interrupted build; the next `doit` removes it"
    if maker is not None:
        return f"no stamp records it; {maker}, which has no stamp, may make it: run `doit`"
    if orphaned and path.startswith(STAMP_ROOT):
        return "stamp of a step the sources no longer have; the next `doit` removes it"
    if orphaned:
        return "made for a robot or cell the sources no longer have; the next `doit` removes it"
    return "no step makes it; delete it"


def _describe(changed: list[str], recorded: dict[str, str]) -> str:
    parts = []
    for path in changed[:3]:
        verb = "added" if path not in recorded else "changed"
        parts.append(f"{path} {verb}")
    if len(changed) > 3:
        parts.append(f"{len(changed) - 3} more")
    return ", ".join(parts)
