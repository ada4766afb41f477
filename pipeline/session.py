"""One doit run in one checkout: the build lock, and clearing what an interrupted run left.

doit opens its state database before it asks dodo.py for tasks, so the lock is taken when dodo.py
reads its configuration: a second run then waits before it reads or writes anything, the database
included. doit writes that database in place (not through a rename), so a run killed while
writing it leaves it unreadable; it is only a cache (build/stamps/ decide what is current), so an
unreadable one is removed with a message instead of stopping every later run.

Only a killed run leaves temporary files or a torn database, and the lock says whether the last
run was killed: only then is build/ searched. The database is parsed only then, or when its stat
signature is not the one the last finished run recorded (something else wrote it since).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from pipeline.digestcache import BUILT_CACHE_NAME, CACHE_NAME
from pipeline.findings import ContractError, Finding, render
from pipeline.lock import BuildLock
from pipeline.outputs import RECORD_NAME
from pipeline.stamps import Step

BUILD = "build"
DIST = "dist"  # `doit cell:<cell_id>` writes <cell_id>.tar.gz and <cell_id>.identity there
DEP_FILE = ".doit.db"  # doit's state database (its dep_file)
BACKEND = "json"  # doit's backend for it: written whole, so a torn one is found and removed
# writing.atomic_write's temporary names: "." + final name + "." + mkstemp's 8 characters + ".tmp"
_TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
# those of a bundle and its identity (bundle.py): dist/ is shared with the user's own files
_DIST_TEMP_NAME = re.compile(r"\..+\.(tar\.gz|identity)\.[a-z0-9_]{8}\.tmp")


def is_temp_name(name: str) -> bool:
    """Whether a file name is one of atomic_write's temporary names."""
    return _TEMP_NAME.fullmatch(name) is not None


def refuse_foreign_root(root: Path) -> None:
    """Stop (exit 2) a doit run whose folder does not hold the pipeline/ code it runs.

    doit runs in the folder of its dodo.py: `doit -f /elsewhere/dodo.py` ran there, stamping
    the code of a pipeline/ it did not hold (doit's DependencyError per stage) and writing
    build/stamps/, a lock and a database into that folder.
    """
    code = Path(__file__).resolve().parent
    if (root / "pipeline").resolve() == code:
        return
    finding = Finding(
        "not_repository_root",
        str(root),
        "",
        f"doit runs in this folder (its dodo.py's, or -d's), which does not hold the pipeline/ "
        f"code the run imports ({code})",
        "run the dodo.py of the repository root, beside its pipeline/, robots/ and cells/, "
        "without -d (`doit` there, or `doit -f <root>/dodo.py`)",
    )
    print(render([finding]), file=sys.stderr, flush=True)
    raise SystemExit(2)


def _say(message: str) -> None:
    print(f"doit: {message}", file=sys.stderr, flush=True)


def leftover_temps(root: Path, in_build: bool = True) -> list[Path]:
    """Temporary files an interrupted write left: the local caches' and doit's database's, and
    (`in_build`) build/'s and those of a bundle and its identity in dist/."""
    found = [
        p
        for name in (CACHE_NAME, BUILT_CACHE_NAME, RECORD_NAME, DEP_FILE)
        for p in root.glob(f"{name}.*.tmp")
        if not p.is_dir()
    ]
    for dirpath, _, filenames in os.walk(root / BUILD) if in_build else ():
        found += [Path(dirpath, name) for name in filenames if is_temp_name(name)]
    return sorted(found + (dist_temps(root) if in_build else []))


def dist_temps(root: Path) -> list[Path]:
    """The temporary files of a bundle and its identity in dist/ (regular files; none below)."""
    try:
        entries = list(os.scandir(root / DIST))
    except OSError:  # no dist/: no cell was ever packed
        return []
    return [
        Path(entry.path)
        for entry in entries
        if _DIST_TEMP_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)
    ]


def remove_leftover_temps(root: Path, in_build: bool = True) -> int:
    """Delete leftover temporary files (only safe while holding the build lock)."""
    found = leftover_temps(root, in_build)
    for path in found:
        path.unlink(missing_ok=True)
    if found:
        dist = sum(path.parent == root / DIST for path in found)
        where = f" ({dist} of them in {DIST}/)" if dist else ""
        _say(f"removed {len(found)} temporary file(s) an interrupted build left{where}")
    return len(found)


def _unparsed(path: Path) -> str | None:
    """Why doit's database cannot be read (None when it can): torn by a killed run, or refused."""
    torn = "a run was interrupted while writing it"
    try:
        return None if isinstance(json.loads(path.read_bytes().decode("utf-8")), dict) else torn
    except OSError as exc:  # its mode (chmod 000), another user's file: not a torn write
        return exc.strerror or str(exc)
    except (UnicodeDecodeError, ValueError):
        return torn


def repair_doit_db(root: Path, dep_file: str) -> bool:
    """Remove doit's JSON database when it cannot be read; True when it was removed."""
    path = root / dep_file
    if not path.exists():
        return False
    if path.is_dir():  # nothing doit wrote, and not removed unasked: say what to do
        _say(f"{dep_file} is a folder, not doit's database; remove it and run again")
        raise SystemExit(2)
    why = _unparsed(path)
    if why is None:
        return False
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:  # a read-only checkout, a file mounted there: say it, no traceback
        _say(
            f"{dep_file} could not be read ({why}) and cannot "
            f"be removed ({exc.strerror or exc}); remove it (it is only a cache) and run again"
        )
        raise SystemExit(2) from None
    _say(
        f"{dep_file} could not be read ({why}); removed it. "
        "It is only a cache: build/stamps/ decide what is current, "
        "so no output is rewritten needlessly"
    )
    return True


def command_line_choice(option: str) -> str | None:
    """The value doit's command line gave one of its options in this run; None when not given.

    doit reads dodo.py (which calls this) from within the command that parsed its options, and
    lets the command line override DOIT_CONFIG: its parsed options are a local of that caller.
    """
    frame = sys._getframe(1)
    while frame is not None:
        for name in ("opt_values", "params"):
            params = frame.f_locals.get(name)
            if option in getattr(params, "_non_default_keys", ()):
                return str(params[option])  # type: ignore[index]
        frame = frame.f_back  # type: ignore[assignment]
    return None


# doit's commands that write nothing: not its database (they never save it), not build/
READ_ONLY_COMMANDS = frozenset({"list", "info", "help"})


def doit_command() -> str | None:
    """The doit command (`run`, `list`, `info`...) reading dodo.py; None outside one.

    doit's command loads dodo.py from its execute(params, args), the command being its self.
    """
    frame = sys._getframe(1)
    while frame is not None:
        names = frame.f_locals
        if frame.f_code.co_name == "execute" and "params" in names and "args" in names:
            name = getattr(names.get("self"), "name", None)
            if isinstance(name, str):
                return name
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _load_tasks_locals() -> dict[str, object] | None:
    """The locals of doit's loader while it calls the task creators; None outside it."""
    frame = sys._getframe(1)
    while frame is not None:
        names = frame.f_locals
        if frame.f_code.co_name == "load_tasks" and "allow_delayed" in names and "args" in names:
            return names
        frame = frame.f_back  # type: ignore[assignment]
    return None


def runs_default_tasks() -> bool:
    """Whether this doit run executes its default tasks: a command that runs tasks, none named.

    doit's loader calls the task creators with the command's positional arguments and whether
    the command executes tasks among its locals. Where they cannot be found, False: every
    creator then makes all its tasks, as before.
    """
    names = _load_tasks_locals()
    return names is not None and bool(names["allow_delayed"]) and not named_tasks(names)


def named_tasks(names: dict[str, object] | None = None) -> list[str]:
    """The tasks (or targets) this doit command names on its command line, as written."""
    names = _load_tasks_locals() if names is None else names
    args = names.get("args") if names is not None else None
    return [str(arg) for arg in args or () if not str(arg).startswith("-")]  # type: ignore[attr-defined]


def refuse_other_backend(backend: str | None) -> None:
    """Stop a run whose command line picks a doit backend other than the pinned one."""
    if backend is None or backend == BACKEND:
        return
    _say(
        f"--backend {backend} is refused: this project pins doit's {BACKEND} backend for "
        f"{DEP_FILE} (dbm falls back to dbm.dumb, which a killed run can corrupt, where no "
        f"gdbm or ndbm is installed; no other backend reads the file {BACKEND} writes); "
        "run without --backend"
    )
    raise SystemExit(2)


# the folders doit's database may not lie in: sources (it would be an input of their steps and
# change on every run) and build/ (an extra file `pipeline check` never calls current)
_NOT_FOR_THE_DATABASE = ("robots", "cells", BUILD)


def refuse_database_among_sources(root: Path, dep_file: str) -> None:
    """Stop (exit 2) a run whose `--db-file` lies in robots/, cells/ or build/."""
    where = Path(os.path.abspath(root / dep_file))
    for folder in _NOT_FOR_THE_DATABASE:
        if where.is_relative_to(os.path.abspath(root / folder)):
            finding = Finding(
                "database_in_sources",
                dep_file,
                "",
                f"doit's database cannot lie in {folder}/: "
                + (
                    "build/ is what the sources make, and `pipeline check` names it as extra"
                    if folder == BUILD
                    else f"{folder}/ holds sources, and a file there that changes on every run "
                    "can be an input of its steps (one in meshes/ rebuilt the robot on every run)"
                ),
                f"name a --db-file outside robots/, cells/ and build/ (or none: {DEP_FILE})",
            )
            print(render([finding]), file=sys.stderr, flush=True)
            raise SystemExit(2)


def open_session(root: Path, dep_file: str = DEP_FILE, writes: bool = True) -> BuildLock:
    """Take the build lock, then clear what a killed run left; the caller finishes the lock.

    A command that `writes` nothing (`doit list`) runs without the lock where it cannot be
    opened (a read-only checkout), and then clears nothing: that needs the lock.
    """
    lock = BuildLock(root, watch=dep_file, required=writes)
    if not lock.held:
        return lock
    if os.path.islink(root / dep_file):  # doit writes it in place: through a link, elsewhere
        lock.finish()
        _say(f"{dep_file} is a symbolic link, not doit's database; remove it and run again")
        raise SystemExit(2)
    # the digest cache is also saved by `pipeline check`, which takes no lock: always look there
    remove_leftover_temps(root, in_build=lock.searches_build)
    if lock.interrupted or lock.left != lock.watched():
        repair_doit_db(root, dep_file)  # a killed run, or the file changed since doit wrote it
    return lock


def planned(root: Path) -> list[Step]:
    """The plan of a doit run; a source folder it cannot list stops it with its finding lines."""
    from pipeline.plan import plan

    try:
        return plan(root)
    except ContractError as exc:  # doit would print the stack of dodo.py's loading (exit 3)
        print(render(exc.findings), file=sys.stderr, flush=True)
        raise SystemExit(2) from None
