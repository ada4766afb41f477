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

from pipeline.failures import system_fix


def guard_database(manager: Any) -> None:
    """doit writes its JSON database in place (a full disk tore it): have it save by a rename."""
    if isinstance(backend := getattr(manager, "backend", None), JsonDB):
        save_by_rename(backend)


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


def save_by_rename(backend: Any) -> None:
    """Have a doit JSON database backend save itself through save_database (once)."""
    if not isinstance(backend.dump, functools.partial):
        backend.dump = functools.partial(_dump, backend)


def _dump(backend: Any) -> None:
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
        for key, value in data.items():
            print(f"{key} -> {pprint.pformat(value, indent=4, width=100)}")
        return 0
