"""doit's JSON database (`doitdb.py`): written only when a run changed it, always by a rename."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from doit.dependency import Dependency, JsonDB

from pipeline import doitdb, doitext
from pipeline.doitdb import guard_database, save_database
from pipeline.doitext import ContentChecker
from tests.conftest import clock_ahead

SAVED = '{"t": {"_values_:": {}, "checker:": "ContentChecker", "deps:": ["a"], "a": ["s", 1, "d"]}}'


def _state(manager: Any) -> Any:
    return manager.backend.get("t", "a")


@pytest.mark.parametrize(
    ("case", "change", "written"),
    [
        ("nothing", lambda m: None, False),
        # doit saves a group task's values on every run, and tuples that read back as lists
        ("same_values", lambda m: m._set("t", "deps:", ("a",)), False),
        ("same_state", lambda m: m._set("t", "a", ["s", 1, "d"]), False),
        ("new_value", lambda m: m._set("t", "a", ["s2", 1, "d"]), True),
        ("new_task", lambda m: m._set("u", "_values_:", {}), True),
        ("remove", lambda m: m.remove("t"), True),
        ("remove_unknown", lambda m: m.remove("u"), False),
        ("remove_all", lambda m: m.remove_all(), True),
        ("backend_set", lambda m: m.backend.set("t", "x", 1), True),
        ("refreshed_stat", lambda m: m.checker.check_modified("a", os.stat("a"), _state(m)), True),
    ],
)
def test_database_is_written_only_when_changed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: str,
    change: Callable[[Any], Any],
    written: bool,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a").write_text("x")
    clock_ahead(monkeypatch, 60, doitext)  # "a" older than the racy window
    Path(".doit.db").write_text(SAVED)
    before = os.stat(".doit.db").st_ino
    manager = Dependency(JsonDB, ".doit.db", checker_cls=ContentChecker)
    guard_database(manager)
    if case == "refreshed_stat":  # same size, same bytes, another stat: saved in place
        manager.backend.get("t", "a")[1:] = [1, hashlib.sha256(b"x").hexdigest()]
    change(manager)
    manager.close()
    assert (os.stat(".doit.db").st_ino != before) is written


def test_a_missing_database_is_written_even_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    manager = Dependency(JsonDB, ".doit.db")
    guard_database(manager)
    manager.close()
    assert Path(".doit.db").read_text() == "{}"


def test_system_refused_saving_doits_database_keeps_the_previous_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """doit wrote .doit.db in place: a full disk left it torn, with a traceback and exit 3, and
    the next run (the lock saying the run finished) stopped on it again."""
    monkeypatch.chdir(tmp_path)
    Path(".doit.db").write_text('{"old": {}}')
    manager = Dependency(JsonDB, ".doit.db")
    guard_database(manager)
    guard_database(manager)  # once is enough; twice changes nothing
    manager.backend.set("task", "dep", "value")

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(doitdb.os, "replace", full)
    with pytest.raises(SystemExit) as stop:
        manager.close()
    assert stop.value.code == 2
    assert Path(".doit.db").read_text() == '{"old": {}}'
    assert sorted(os.listdir(".")) == [".doit.db"]  # no temporary file left
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("doit: .doit.db: system_refused: doit's database cannot be written")
    assert "free space" in line


def test_doits_database_is_saved_whole_through_a_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    manager = Dependency(JsonDB, ".doit.db")
    guard_database(manager)
    manager.backend.set("task", "dep", "value")
    manager.close()
    assert json.loads(Path(".doit.db").read_text()) == {"task": {"dep": "value"}}
    assert sorted(os.listdir(".")) == [".doit.db"]


def test_save_database_writes_the_text(tmp_path: Path) -> None:
    save_database(str(tmp_path / "db"), "{}")
    assert (tmp_path / "db").read_text() == "{}"
