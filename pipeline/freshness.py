"""Is build/ exactly what the sources produce? Decided from the stamps, writing nothing."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from stat import S_ISREG
from typing import NamedTuple

from pipeline.digestread import LINKED
from pipeline.digests import Digests
from pipeline.findings import printable
from pipeline.gitindex import tracks_file_mode
from pipeline.lock import next_run_searches_build
from pipeline.outputs import OutputRecord
from pipeline.plan import needed
from pipeline.session import is_temp_name
from pipeline.stamps import (
    STAMP_ROOT,
    Stamp,
    Step,
    behind_links,
    changed_inputs,
    changed_outputs,
    hash_inputs,
    read_stamp,
    sha256_bytes,
    stamp_path,
)
from pipeline.strict_io import EXECUTE_BITS, JSON_LIMIT, MESH_LIMIT, read_regular

BUILD = "build"
# what a stamp holds after git met changes to it on both sides of a merge, rebase or stash pop
CONFLICTED = "has a stamp holding git conflict markers"
# a file git rewrote with CRLF line endings on checkout (core.autocrlf, an eol attribute)
CRLF = "line endings only: CRLF"
# an output or stamp with an execute bit, which git commits and a build from nothing does not make
EXECUTABLE = "execute bit set; a build writes it without one"
# an output or stamp that is a symbolic link (to its very bytes, say), which git commits as one
LINKED_OUTPUT = "a symbolic link; a build writes a regular file"
# a folder of build/ (or build/ itself) replaced by one: git sees every file in it deleted
LINKED_FOLDER = (
    "is a symbolic link; run `doit`: it removes the link (not what it points at) and writes "
    "a real folder"
)
# a source that has become one: its step's reader refuses it (symlink_refused), but for a module
# srdf.py imports, whose changes are then followed through the link
LINKED_SOURCE = "is a symbolic link"
# a step's source (robot.urdf, srdf.py, machine.json) that is not there: no build makes it
ABSENT = "is missing"
# a stamp without a seal: written before stamps were sealed, by an older version of this tool
OLDER = "has a stamp of an older version of this tool (not sealed)"
# an input this user may not read (its mode, or a folder above it), so whether it changed is unknown
UNREADABLE = "cannot be read by this user"
ADVICE = {
    CONFLICTED: "build/ holds git conflicts: resolve the sources, take one side's build/ "
    "(`git checkout HEAD -- build/`), run `doit`, then `git add build/` (docs/git.md)",
    CRLF: "git converted line endings on checkout (core.autocrlf or an eol attribute): set "
    "`git config core.autocrlf false` and check the files out again (docs/git.md)",
    ABSENT: "a robot or cell folder lacks a source its build needs: add it (`doit` names a "
    "misnamed file to rename), or remove the folder (`git clean -n robots/ cells/` lists what "
    "git does not track)",
    UNREADABLE: "a source cannot be read by the user running this (its permissions or its "
    "folder's): give that user read permission on it and search permission on its folders, "
    "and run again (`doit` refuses it until then)",
}


# a step whose outputs (or stamp) are there, but whose stamp is gone or cannot be read
UNSTAMPED = "has no readable stamp"


class Staleness(NamedTuple):
    """One way build/ differs from what the sources produce."""

    kind: str
    path: str
    reason: str

    def line(self) -> str:
        """Render as `kind: path (reason)`, one printable line (a file's name may hold a break)."""
        return printable(f"{self.kind}: {self.path} ({self.reason})")


def _build_files(root: Path) -> tuple[set[str], bool]:
    """Every file (or link) below build/, repo-relative, and whether build/ or any of them is a
    symbolic link."""
    out: set[str] = set()
    base = os.path.join(root, "")
    linked = os.path.islink(base + BUILD)
    folders = [BUILD]
    while folders:  # scandir's entry types save the stat os.walk's bookkeeping adds per folder
        folder = folders.pop()
        prefix = folder + "/"  # repo-relative names are built as they are listed
        try:
            with os.scandir(base + folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(prefix + entry.name)
                    else:
                        out.add(prefix + entry.name)
                        linked = linked or entry.is_symlink()
        except OSError:
            continue
    return out, linked


def check(
    root: Path, steps: Iterable[Step], known: Digests | None = None, extras: bool = True
) -> list[Staleness]:
    """Every stale, missing, modified or (with `extras`) extra file of build/, with what made it
    so."""
    known = known or Digests(root, remember=False)
    steps = list(steps)
    out: list[Staleness] = []
    claimed: set[str] = set()
    stampless: list[Step] = []
    # the first cause of each stale step, by its stamp: a step reading an upstream stamp that
    # will be rewritten is stale too, though that stamp's bytes have not changed yet
    causes: dict[str, str] = {}
    # what each output of a stale step will hold once rebuilt (None: unknown until made), and
    # what every other stamp read so far recorded: a byte copy is stale only if its source is
    will_hold: dict[str, str | None] = {}
    recorded: dict[str, str] = {}
    stamps = [read_stamp(root, step.name) for step in steps]
    # steps whose stamp and outputs are the very files the step left (the build's own record:
    # inodes, ctimes and folders, as a no-op doit takes them): their outputs need no reading
    record = OutputRecord(root)
    vouched = {
        s.name for s, stamp in zip(steps, stamps, strict=True) if stamp and record.unchanged(s.name)
    }
    listed, any_link = _build_files(root) if extras else (set(), True)
    # folder -> the link at or above it, for behind_links (not called when build/ lists none)
    folders: dict[str, str] = {}
    if known.memo is not None:  # settled: nothing changes while checked, so it is read ahead
        wanted: dict[str, str] = {}
        for step, stamp in zip(steps, stamps, strict=True):
            if stamp is not None:  # what the plan reads, not what an old stamp names
                wanted.update((path, stamp.inputs.get(path, "")) for path in step.inputs)
                if step.name not in vouched:
                    wanted.update(stamp.outputs)
        known.read_ahead(wanted)
    for step, stamp in zip(steps, stamps, strict=True):
        claimed.add(step.stamp)
        if stamp is None:
            built = [t for t in step.targets or (step.stamp,) if os.path.lexists(root / t)]
            linked = behind_links(root, [step.stamp], folders) if any_link else {}
            claimed.update(linked.values())
            state = _stampless_state(root, step, bool(built), linked.get(step.stamp))
            causes[step.stamp] = _stampless_cause(root, step, state, causes)
            will_hold.update(dict.fromkeys(step.targets))
            stampless.append(step)
            for target in step.targets or (step.stamp,):
                claimed.add(target)
                kind = "stale" if target in built else "missing"
                out.append(Staleness(kind, target, causes[step.stamp]))
            if step.targets and state == UNSTAMPED:  # deleted or spoilt by hand: named too
                kind = "stale" if os.path.lexists(root / step.stamp) else "missing"
                out.append(Staleness(kind, step.stamp, causes[step.stamp]))
            continue
        claimed.update(stamp.outputs)
        recorded.update(stamp.outputs)
        linked = behind_links(root, [step.stamp, *stamp.outputs], folders) if any_link else {}
        claimed.update(linked.values())  # the links, which the outputs' lines name
        out.extend(
            Staleness("stale", path, f"{link} {LINKED_FOLDER}") for path, link in linked.items()
        )
        current = hash_inputs(root, step.inputs, known, stamp.inputs)
        # an input a stale step upstream makes (a new robot's stamp, not there yet) is named
        # by that step's cause, not as a file of its own
        changed = [path for path in changed_inputs(stamp, current) if path not in causes]
        upstream = [causes[path] for path in step.inputs if path in causes]
        if changed or upstream:
            # downstream steps name the first cause, not the chain that carried it
            described = _describe(root, changed, stamp.inputs, current)
            cause = f"{step.name}: {described}" if changed else upstream[0]
            causes[step.stamp] = cause
            reason = cause if changed else f"{step.name}: after {cause}"
            if changed and step.name.startswith("spheres:"):
                from pipeline.spheres.task import describe_status

                reason += describe_status(root, step.name.partition(":")[2])
            stale, kept = _rebuilt(root, step, stamp, will_hold, recorded, known)
            # a step none of whose outputs changes (code:<stage>, or copies of unchanged files
            # after a code change) is reported by its stamp, which is all that is rewritten
            stale = [path for path in stale or [step.stamp] if path not in linked]
            out.extend(Staleness("stale", path, reason) for path in stale)
            out.extend(_differs(root, step, stamp, [p for p in kept if p not in linked]))
            continue
        vouched_here = step.name in vouched and not linked
        differ = [] if vouched_here else changed_outputs(root, stamp, known, linked)
        differ = [p for p in differ if p not in linked]
        out.extend(_differs(root, step, stamp, differ))
        if stamp.crlf or stamp.executable:  # read for what it records; `doit` writes it again
            note = EXECUTABLE if stamp.executable else CRLF
            out.append(
                Staleness("modified", step.stamp, f"differs from what {step.name} made ({note})")
            )
    extra = listed - claimed
    removed: set[str] = set()
    if extra:
        from pipeline.prune import orphan_outputs, orphan_stamps

        orphans = orphan_stamps(root, steps)
        removed = {*orphans, *orphan_outputs(root, orphans, steps)}
    searched = any(is_temp_name(path.rsplit("/", 1)[-1]) for path in extra) and (
        next_run_searches_build(root)
    )
    for path in sorted(extra):
        maker = _maker(stampless, path)
        reason = _extra_reason(path, path in removed, maker, searched)
        out.append(Staleness("extra", path, reason))
    return out


def chain_problems(
    root: Path, steps: Iterable[Step], name: str, known: Digests | None = None
) -> list[Staleness]:
    """How the outputs of a step, and of the steps it is made from, differ from what the sources
    produce (files no step of the chain makes are not its business)."""
    return check(root, needed(list(steps), name), known, extras=False)


def _rebuilt(
    root: Path,
    step: Step,
    stamp: Stamp,
    will_hold: dict[str, str | None],
    recorded: dict[str, str],
    known: Digests,
) -> tuple[list[str], list[str]]:
    """The outputs of a stale step that a rebuild changes, and its copies it leaves as they are
    but which no longer hold their recorded bytes (edited by hand)."""
    stale: list[str] = []
    kept: list[str] = []
    for path, digest in sorted(stamp.outputs.items()):
        will = _will_hold(step.source_of(path), will_hold, recorded, known)
        will_hold[path] = will
        if will != digest:
            stale.append(path)
        elif not known.holds(path, digest):
            kept.append(path)
    return stale, kept


def _will_hold(
    source: str | None, will_hold: dict[str, str | None], recorded: dict[str, str], known: Digests
) -> str | None:
    """The digest a copy of `source` will have once rebuilt; None when only making it can tell."""
    if source is None:
        return None
    if source in will_hold:  # an output of a stale step upstream
        return will_hold[source]
    if source.startswith(f"{BUILD}/"):  # an output of a current step, or of none (unknown)
        return recorded.get(source)
    return known.of(source)


def _differs(root: Path, step: Step, stamp: Stamp, paths: Iterable[str]) -> list[Staleness]:
    """Outputs that are missing or no longer hold what the step made."""
    out = []
    for path in paths:
        if os.path.islink(root / path):
            note = f" ({LINKED_OUTPUT})"
        elif not (root / path).exists():
            out.append(Staleness("missing", path, f"{step.name} made it; it is gone"))
            continue
        elif _executable(root, path):
            note = f" ({EXECUTABLE})"
        else:
            note = f" ({CRLF})" if _crlf_only(root, path, stamp.outputs[path]) else ""
        kind = "missing" if not (root / path).exists() else "modified"
        out.append(Staleness(kind, path, f"differs from what {step.name} made{note}"))
    return out


def _maker(stampless: list[Step], path: str) -> str | None:
    """The step without a stamp writing its targets in the deepest folder holding `path`.

    A step's folder holds what it writes beside and below its targets (a cell's description/),
    except build/ itself: index:robots writes build/index.json, never what lies in build/robots/.
    """
    best: tuple[int, str] | None = None
    for step in stampless:
        for target in step.targets:
            folder = target.rsplit("/", 1)[0]
            below = path[len(folder) + 1 :] if path.startswith(folder + "/") else None
            if below is None or (folder == BUILD and "/" in below):
                continue
            if best is None or folder.count("/") > best[0]:
                best = (folder.count("/"), step.name)
    return None if best is None else best[1]


def _extra_reason(path: str, orphaned: bool, maker: str | None, searched: bool) -> str:
    if is_temp_name(path.rsplit("/", 1)[-1]):
        # doit searches build/ only after a killed run (the lock says so): else it stays
        fix = "the next `doit` removes it" if searched else "delete it"
        return f"temporary file of an interrupted build; {fix}"
    if maker is not None:
        return f"no stamp records it; {maker}, which has no readable stamp, may make it: run `doit`"
    if orphaned and path.startswith(STAMP_ROOT):
        return "stamp of a step the sources no longer have; the next `doit` removes it"
    if orphaned:
        return "made for a robot or cell the sources no longer have; the next `doit` removes it"
    return "no step makes it; delete it"


def advice(problems: Iterable[Staleness]) -> list[str]:
    """What to do about the causes git leaves in build/ (conflicts, converted line endings)."""
    return [hint for cause, hint in ADVICE.items() if any(cause in p.reason for p in problems)]


def _conflicted(root: Path, stamp: str) -> bool:
    """Whether a stamp holds the markers git writes around the two sides of a conflict."""
    found = read_regular(os.path.join(root, stamp), JSON_LIMIT)
    lines = [] if found is None else found[0].splitlines()
    return any(line.startswith(b"<<<<<<< ") for line in lines) and b"=======" in lines


def _executable(root: Path, path: str) -> bool:
    """Whether a file has an execute bit (which no output is written with); a folder's, which
    lets one enter it, is no such bit."""
    try:
        mode = os.stat(os.path.join(root, path)).st_mode
    except OSError:
        return False
    executable = S_ISREG(mode) and bool(mode & EXECUTE_BITS)
    return executable and tracks_file_mode(root)


def _crlf_only(root: Path, path: str, recorded: str) -> bool:
    """Whether a file is the recorded bytes with its LF line endings turned into CRLF."""
    found = read_regular(os.path.join(root, path), MESH_LIMIT)
    if found is None or b"\r\n" not in found[0]:
        return False
    return sha256_bytes(found[0].replace(b"\r\n", b"\n")) == recorded


def _stampless_state(root: Path, step: Step, built: bool, link: str | None) -> str:
    """Why a step's stamp vouches for nothing: in a folder a (dangling) `link` replaced,
    conflicted, older, unreadable, or never written."""
    if link is not None:
        return f"has its stamp in {link}, which {LINKED_FOLDER}"
    if _conflicted(root, step.stamp):
        return CONFLICTED
    if read_stamp(root, step.name, unsealed_ok=True) is not None:
        return OLDER
    if built or os.path.lexists(root / step.stamp):
        return UNSTAMPED
    return "has never been built"


def _stampless_cause(root: Path, step: Step, state: str, causes: dict[str, str]) -> str:
    """Why a step without a stamp is to be built: a source of its own or upstream that is not
    there (which no build makes), else its state."""
    for path in step.inputs:
        if not path.startswith(f"{BUILD}/") and not os.path.lexists(os.path.join(root, path)):
            return f"{step.name}: {path} {ABSENT}"
    for path in (*step.inputs, *(stamp_path(name) for name in step.after)):
        if ABSENT in causes.get(path, ""):
            return f"{step.name}: after {causes[path]}"
    return f"{step.name} {state}"


def _describe(
    root: Path, changed: list[str], recorded: dict[str, str], current: dict[str, str]
) -> str:
    parts = []
    for path in changed[:3]:
        if _refused(root, path):  # it may not have changed at all: not "changed" nor "removed"
            verb = UNREADABLE
        elif path in recorded and not os.path.lexists(os.path.join(root, path)):
            verb = "removed"
        # an input the step no longer reads (a cell now names another model) did not change
        elif path not in current:
            verb = "no longer an input"
        elif path not in recorded:
            verb = "added"
        elif os.path.islink(os.path.join(root, path)) and not recorded[path].startswith(LINKED):
            verb = LINKED_SOURCE
        else:
            verb = "changed" + (f" ({CRLF})" if _crlf_only(root, path, recorded[path]) else "")
        parts.append(f"{path} {verb}")
    if len(changed) > 3:
        parts.append(f"{len(changed) - 3} more")
    return ", ".join(parts)


def _refused(root: Path, path: str) -> bool:
    """Whether this user may not open the file (or search a folder above it)."""
    try:
        os.close(os.open(os.path.join(root, path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
    except PermissionError:
        return True
    except OSError:
        return False
    return False
