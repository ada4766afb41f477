"""doit's database here: saved through a rename, and dumped for the json backend it pins."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pprint
import sys
from collections.abc import Mapping
from typing import Any

from doit.cmd_base import Command, opt_depfile
from doit.dependency import JsonDB

from pipeline.failures import reader_left, system_fix


class DatabaseChanges:
    """Whether this run changed doit's database: a no-op leaves the file as it is."""

    def __init__(self) -> None:
        self.made = False


def guard_database(manager: Any) -> None:
    """Have doit's JSON database save by a rename (in place, a full disk tore it), and only
    when this run changed it (at 100 robots, encoding it alone took 19 ms of a 0.3 s no-op)."""
    backend = getattr(manager, "backend", None)
    if not isinstance(backend, JsonDB) or isinstance(backend.dump, functools.partial):
        return
    changes = DatabaseChanges()
    backend.set = functools.partial(_set, backend, backend.set, changes)
    backend.remove = functools.partial(_remove, backend, backend.remove, changes)
    backend.remove_all = functools.partial(_remove_all, backend, backend.remove_all, changes)
    # doit's manager bound the backend's methods when it opened it
    manager._set, manager.remove, manager.remove_all = (
        backend.set,
        backend.remove,
        backend.remove_all,
    )
    if hasattr(manager.checker, "changes"):  # the checker refreshes saved states in place
        manager.checker.changes = changes
    backend.dump = functools.partial(_dump, backend, changes)


def _set(
    backend: Any, method: Any, changes: DatabaseChanges, task: str, key: str, value: Any
) -> None:
    # doit saves every run of a group task (and tuples that read back as lists): compare as saved
    if not changes.made:
        saved = backend.get(task, key)
        changes.made = saved is None or backend.codec.decode(backend.codec.encode(value)) != saved
    method(task, key, value)


def _remove(backend: Any, method: Any, changes: DatabaseChanges, task: str) -> None:
    changes.made = changes.made or backend.in_(task)
    method(task)


def _remove_all(backend: Any, method: Any, changes: DatabaseChanges) -> None:
    changes.made = changes.made or bool(backend._db)
    method()


def save_database(name: str, text: str) -> None:
    """Write doit's database through a rename: a full disk keeps the previous one whole.

    doit writes it in place, so a refused write left it torn (and a traceback, exit 3). A
    refusal is one line and exit status 2; the database is only a cache (build/stamps/ decide
    what is current), so the previous one stays usable.
    """
    tmp = f"{name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, name)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        print(
            f"doit: {name}: system_refused: doit's database cannot be written "
            f"({exc.strerror or exc}), the previous one is kept; {system_fix(exc)}",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(2) from None


def _dump(backend: Any, changes: DatabaseChanges) -> None:
    if changes.made or not os.path.exists(backend.name):
        save_database(backend.name, backend.codec.encode(backend._db))


class DumpDB(Command):  # type: ignore[misc]
    """`doit dumpdb` for the json backend this project pins (doit's own opens dbm files only).

    pyproject.toml names it as doit's `dumpdb` command plugin ([tool.doit.plugins.command]).
    """

    name = "dumpdb"
    doc_purpose = "dump dependency DB"
    doc_usage = ""
    doc_description = None
    cmd_options = (opt_depfile,)

    def execute(self, opt_values: Mapping[str, Any], pos_args: list[str]) -> int:
        """Print each task's saved state, one `task -> state` entry per task; 2 if unreadable."""
        path = str(opt_values["dep_file"])
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            if not isinstance(data, dict):
                raise ValueError(path)
        except FileNotFoundError:
            print(f"doit: {path} does not exist yet: no doit run saved anything here")
            return 0
        except (OSError, UnicodeDecodeError, ValueError):
            print(
                f"doit: {path} is not a readable json database (an interrupted run?); the next "
                "doit removes it (it is only a cache)",
                file=sys.stderr,
            )
            return 2
        try:
            for key, value in data.items():
                print(f"{key} -> {pprint.pformat(value, indent=4, width=100)}")
        except BrokenPipeError:  # `doit dumpdb | head -1`: the reader has what it wanted
            reader_left(sys.stdout)
        return 0
