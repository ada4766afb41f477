"""One doit run in one checkout: the build lock, and clearing what an interrupted run left."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from pipeline.digestcache import BUILT_CACHE_NAME, CACHE_NAME
from pipeline.lock import FINISHED, LOCK_NAME, MARK
from pipeline.outputs import RECORD_NAME
from pipeline.session import (
    DEP_FILE,
    command_line_choice,
    doit_command,
    is_temp_name,
    leftover_temps,
    open_session,
    planned,
    remove_leftover_temps,
    repair_doit_db,
)
from pipeline.writing import atomic_write
from tests.conftest import refuse_under, run_doit, run_python, tree_bytes

TORN_DB = b'{"urdf:abb_irb2400": {"checker:": "ContentChecker"}'


def test_atomic_write_temporaries_are_recognised_as_temporary(tmp_path: Path) -> None:
    """session.is_temp_name must know strict_io's temporary names, or leftovers would stay."""
    seen: list[str] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        seen.append(Path(src).name)
        real(src, dst)

    os.replace = spy  # type: ignore[assignment]
    try:
        atomic_write(tmp_path / "robot.urdf", b"<robot/>")
    finally:
        os.replace = real
    assert len(seen) == 1 and is_temp_name(seen[0])
    assert not is_temp_name("robot.urdf") and not is_temp_name(".robot.urdf.tmp")
    fd, name = tempfile.mkstemp(prefix=".link_1.stl.", suffix=".tmp", dir=tmp_path)
    os.close(fd)
    assert is_temp_name(Path(name).name)


def leave_temps(root: Path) -> dict[str, Path]:
    """What a killed run leaves: a temporary in build/ and one of each local cache."""
    meshes = root / "build" / "robots" / "abb_irb2400" / "meshes"
    meshes.mkdir(parents=True)
    temps = {
        "build": meshes / ".link_1.stl.k3j9x_a2.tmp",
        "digests": root / f"{CACHE_NAME}.4242.tmp",
        "built digests": root / f"{BUILT_CACHE_NAME}.4242.tmp",
        "outputs": root / f"{RECORD_NAME}.4242.tmp",
    }
    for path in temps.values():
        path.write_bytes(b"half")
    (meshes / "link_1.stl").write_bytes(b"solid")
    return temps


def test_leftover_temps_in_build_are_searched_only_when_asked(tmp_path: Path) -> None:
    temps = leave_temps(tmp_path)
    caches = sorted([temps["digests"], temps["built digests"], temps["outputs"]])
    assert leftover_temps(tmp_path, in_build=False) == caches
    assert leftover_temps(tmp_path) == sorted([*caches, temps["build"]])


def test_remove_leftover_temps_deletes_them_and_says_how_many(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    temps = leave_temps(tmp_path)
    assert remove_leftover_temps(tmp_path) == 4
    assert not any(path.exists() for path in temps.values())
    assert (tmp_path / "build/robots/abb_irb2400/meshes/link_1.stl").read_bytes() == b"solid"
    assert "removed 4 temporary file(s)" in capsys.readouterr().err
    assert remove_leftover_temps(tmp_path) == 0
    assert capsys.readouterr().err == ""


def test_after_a_killed_run_a_bundles_temporaries_in_dist_are_removed_and_no_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `doit cell:<cell_id>` killed at a rename left its temporary files in dist/ for good:
    only build/ was searched. A user's file is kept, even one looking like a temporary."""
    dist = tmp_path / "dist"
    (dist / "old").mkdir(parents=True)
    ours = [dist / ".weld_cell_a.tar.gz.k3j9x_a2.tmp", dist / ".weld_cell_a.identity.0a1b2c3d.tmp"]
    theirs = [
        dist / "weld_cell_a.tar.gz",
        dist / "weld_cell_a.identity",
        dist / ".notes.txt.k3j9x_a2.tmp",  # not a bundle's nor an identity's
        dist / ".weld_cell_a.tar.gz.tmp",  # no random part: not written by us
        dist / "old" / ".weld_cell_a.tar.gz.k3j9x_a2.tmp",  # below dist/: never written there
    ]
    for path in ours + theirs:
        path.write_bytes(b"half")
    (dist / ".iiwa_bench.identity.k3j9x_a3.tmp").mkdir()  # a folder: not a file we wrote
    (tmp_path / LOCK_NAME).write_text(MARK)  # the killed run's mark
    with open_session(tmp_path):
        assert not any(path.exists() for path in ours)
        assert all(path.exists() for path in theirs)
        assert (dist / ".iiwa_bench.identity.k3j9x_a3.tmp").is_dir()
    assert "removed 2 temporary file(s) an interrupted build left (2 of them in dist/)" in (
        capsys.readouterr().err
    )
    for path in ours:  # after a finished run dist/ is not searched
        path.write_bytes(b"half")
    with open_session(tmp_path):
        assert all(path.exists() for path in ours)


@pytest.mark.parametrize(
    ("content", "removed"),
    [
        (None, False),
        (b'{"urdf:abb_irb2400": {}}', False),
        (b"", True),
        (b"\xff\xfe", True),
        (b"[]", True),  # JSON, but not doit's database (an object)
        (TORN_DB, True),
    ],
    ids=["missing", "readable", "empty", "not-utf8", "not-an-object", "torn"],
)
def test_repair_doit_db_removes_only_an_unreadable_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, removed: bool
) -> None:
    db = tmp_path / DEP_FILE
    if content is not None:
        db.write_bytes(content)
    assert repair_doit_db(tmp_path, DEP_FILE) is removed
    assert db.exists() is (content is not None and not removed)
    assert (f"{DEP_FILE} could not be read" in capsys.readouterr().err) is removed


def test_a_folder_in_place_of_the_database_is_kept_and_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / DEP_FILE).mkdir()
    with pytest.raises(SystemExit) as exc:
        repair_doit_db(tmp_path, DEP_FILE)
    assert exc.value.code == 2
    assert f"{DEP_FILE} is a folder" in capsys.readouterr().err
    assert (tmp_path / DEP_FILE).is_dir()


def test_an_unreadable_database_that_cannot_be_removed_stops_with_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A torn .doit.db on a read-only mount stopped the run with a traceback."""
    (tmp_path / DEP_FILE).write_bytes(TORN_DB)

    def busy(self: Path, missing_ok: bool = False) -> None:
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(Path, "unlink", busy)
    with pytest.raises(SystemExit) as exc:
        repair_doit_db(tmp_path, DEP_FILE)
    assert exc.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "cannot be removed (Device or resource busy); remove it" in line


def test_a_session_holds_the_lock_until_it_finishes(tmp_path: Path) -> None:
    with open_session(tmp_path) as lock:
        assert (tmp_path / LOCK_NAME).read_text() == MARK
        assert not lock.interrupted
    assert (tmp_path / LOCK_NAME).read_text().startswith(FINISHED)


def test_after_a_finished_run_build_is_not_searched_but_the_caches_are(tmp_path: Path) -> None:
    """Only a killed run leaves temporaries in build/; `pipeline check` (no lock) may leave a
    cache's."""
    open_session(tmp_path).finish()
    temps = leave_temps(tmp_path)
    with open_session(tmp_path):
        pass
    assert temps["build"].exists()
    assert not any(temps[k].exists() for k in ("digests", "built digests", "outputs"))


@pytest.mark.parametrize("lock", [None, ""], ids=["no_lock_yet", "older_version_empty_lock"])
def test_without_a_record_of_the_last_run_build_is_searched(
    tmp_path: Path, lock: str | None
) -> None:
    """Versions before the mark held an empty lock, so a run of theirs killed mid-write left
    temporaries that `pipeline check` said the next doit removes, and no doit ever did."""
    temps = leave_temps(tmp_path)
    if lock is not None:
        (tmp_path / LOCK_NAME).write_text(lock)
    with open_session(tmp_path) as held:
        assert not held.interrupted and held.searches_build
        assert not any(path.exists() for path in temps.values())
    assert (tmp_path / LOCK_NAME).read_text().startswith(FINISHED)


def test_after_a_killed_run_its_leftovers_and_torn_database_are_cleared(tmp_path: Path) -> None:
    temps = leave_temps(tmp_path)
    (tmp_path / DEP_FILE).write_bytes(TORN_DB)
    (tmp_path / LOCK_NAME).write_text(MARK)  # the killed run's mark
    with open_session(tmp_path) as lock:
        assert lock.interrupted
        assert not any(path.exists() for path in temps.values())
        assert not (tmp_path / DEP_FILE).exists()


def test_a_database_unchanged_since_the_last_finished_run_is_not_parsed(tmp_path: Path) -> None:
    """Its stat signature is the one that run recorded: parsing it on every run would be waste.
    Written by anything else since, it is parsed (and removed when torn)."""
    db = tmp_path / DEP_FILE
    with open_session(tmp_path):
        db.write_bytes(TORN_DB)  # as doit writes it while the run holds the lock
    with open_session(tmp_path):
        assert db.read_bytes() == TORN_DB  # unchanged since that run finished: not parsed
    db.write_bytes(TORN_DB + b" ")
    with open_session(tmp_path):
        assert not db.exists()


def test_a_link_in_place_of_the_database_stops_and_releases_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (tmp_path / DEP_FILE).symlink_to(precious)
    with pytest.raises(SystemExit) as exc:
        open_session(tmp_path)
    assert exc.value.code == 2
    assert f"{DEP_FILE} is a symbolic link" in capsys.readouterr().err
    assert precious.read_text() == "keep me\n"
    assert (tmp_path / LOCK_NAME).read_text().startswith(FINISHED)


@pytest.mark.parametrize(
    ("content", "killed"),
    [
        (b"", False),
        (b'{"urdf:abb_irb2400": {"robot', False),
        (b"\xff\xfe", False),
        (b"[]", False),
        # torn just after an inner object, so it looks whole at both ends: parsed after a kill,
        # and after a finished run because its stat signature is not the one that run recorded
        (TORN_DB, True),
        (TORN_DB, False),
    ],
)
def test_unreadable_doit_db_is_removed_with_a_message(
    project: Path, content: bytes, killed: bool
) -> None:
    """A .doit.db torn by a kill mid-dump no longer stops every later run (doit exits 3)."""
    assert run_doit(project).returncode == 0
    before = tree_bytes(project / "build")
    mtimes = {p: p.stat().st_mtime_ns for p in (project / "build").rglob("*") if p.is_file()}
    (project / ".doit.db").write_bytes(content)
    if killed:
        (project / LOCK_NAME).write_text(MARK)
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert ".doit.db could not be read" in result.stderr
    assert tree_bytes(project / "build") == before
    assert {p: p.stat().st_mtime_ns for p in mtimes} == mtimes
    assert isinstance(json.loads((project / ".doit.db").read_text(encoding="utf-8")), dict)
    assert (project / LOCK_NAME).read_text().startswith(FINISHED)  # this run finished


def test_a_folder_in_place_of_the_doit_db_stops_with_a_message(project: Path) -> None:
    """Not removed unasked (doit never writes a folder there), and no traceback."""
    (project / ".doit.db").mkdir()
    before = tree_bytes(project / "build")
    result = run_doit(project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert ".doit.db is a folder" in result.stderr
    assert (project / ".doit.db").is_dir()
    assert tree_bytes(project / "build") == before


def test_a_link_in_place_of_the_doit_db_stops_with_a_message(project: Path, tmp_path: Path) -> None:
    """doit writes its database in place: a link named .doit.db had it overwrite another file."""
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (project / ".doit.db").symlink_to(precious)
    before = tree_bytes(project / "build")
    result = run_doit(project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert ".doit.db is a symbolic link" in result.stderr
    assert precious.read_text() == "keep me\n"
    assert tree_bytes(project / "build") == before


@pytest.mark.parametrize(
    "args",
    [
        ("--backend", "dbm"),  # dbm.dumb where no gdbm/ndbm is installed: silently picked
        ("--backend=sqlite3",),  # cannot read the json .doit.db: doit's traceback
        ("--back", "dbm"),  # doit takes an unambiguous prefix of an option
        ("list", "--backend", "dbm"),
        ("forget", "--backend", "sqlite3"),
    ],
)
def test_a_backend_other_than_the_pinned_json_is_refused(
    project: Path, args: tuple[str, ...]
) -> None:
    """doit's command line overrides DOIT_CONFIG's backend: refused with a message, exit 2."""
    assert run_doit(project).returncode == 0
    before = tree_bytes(project / "build")
    result = run_doit(project, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "is refused: this project pins doit's json backend" in result.stderr
    assert sorted(p.name for p in project.glob(".doit.db*")) == [".doit.db"]
    assert json.loads((project / ".doit.db").read_text(encoding="utf-8"))
    assert tree_bytes(project / "build") == before
    assert run_doit(project, "--backend", "json").returncode == 0


def test_command_line_choice_reads_doits_parsed_options() -> None:
    """What doit's parser left in its caller's `params`, only when the command line set it."""

    class Parsed(dict[str, str]):
        _non_default_keys = frozenset({"backend"})

    def doit_command(params: Parsed) -> tuple[str | None, str | None]:
        return command_line_choice("backend"), command_line_choice("dep_file")

    assert doit_command(Parsed(backend="dbm", dep_file=".doit.db")) == ("dbm", None)
    assert command_line_choice("backend") is None


def test_runs_default_tasks_reads_what_doits_loader_was_given() -> None:
    from pipeline.session import runs_default_tasks

    def load_tasks(allow_delayed: bool, args: list[str]) -> bool:  # doit.loader's names
        return runs_default_tasks()

    assert load_tasks(True, []) is True
    assert load_tasks(True, ["cell:weld_cell_a"]) is False
    assert load_tasks(False, []) is False  # `doit list`, `doit info`: every task is made
    assert runs_default_tasks() is False  # not called by doit's loader: every task is made


def test_file_unreadable_planning_refused_stops_doit_with_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A robots/ folder that cannot be listed once ended doit in dodo.py's traceback (exit 3)."""
    (tmp_path / "robots").mkdir()
    refuse_under(monkeypatch, "scandir", tmp_path / "robots")
    with pytest.raises(SystemExit) as exc:
        planned(tmp_path)
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith(
        "robots: file_unreadable: folder cannot be listed or searched (Permission denied); "
    )


def test_file_unreadable_doit_db_refused_by_its_mode_is_not_said_torn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """chmod 000 .doit.db was said to be "interrupted while writing it": the cause is named."""
    db = tmp_path / DEP_FILE
    db.write_text("{}")
    real = Path.read_bytes

    def refused(self: Path) -> bytes:
        if self == db:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", refused)
    assert repair_doit_db(tmp_path, DEP_FILE)
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"doit: {DEP_FILE} could not be read (Permission denied); removed it.")
    assert not db.exists()


def test_doit_command_names_the_command_reading_dodo_py() -> None:
    """doit's command loads dodo.py from its execute(params, args), the command being self."""

    class List:
        name = "list"

        def execute(self, params: dict[str, str], args: list[str]) -> str | None:
            return doit_command()

    assert List().execute({}, []) == "list"
    assert doit_command() is None  # not read by a doit command


# doit in a checkout whose file system is read-only: opening the lock fails with EROFS
READ_ONLY_DOIT = """
import errno, os, sys
from doit.doit_cmd import DoitMain

opened = os.open
def read_only(path, flags, *args, **kwargs):
    if str(path).endswith(".doit.lock"):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
    return opened(path, flags, *args, **kwargs)
os.open = read_only
sys.exit(DoitMain().run(sys.argv[1:]))
"""


def test_on_a_read_only_checkout_list_and_info_run_and_a_build_says_what_works(
    project: Path,
) -> None:
    """doit list, doit info and doit check all stopped (exit 2), told to run as the owner of
    the checkout. The commands that write nothing now run without the lock; the others say the
    file system is read-only and that `pipeline check` checks build/ without writing."""
    listed = run_python(project, "-c", READ_ONLY_DOIT, "list")
    assert listed.returncode == 0, listed.stderr
    assert "spheres" in listed.stdout.split() and listed.stderr == ""
    info = run_python(project, "-c", READ_ONLY_DOIT, "info", "index:robots")
    # doit's `info` exits 1 for a task not up to date: this copy has no doit database yet
    assert info.returncode == 1 and info.stderr == "", info.stderr
    assert "index:robots" in info.stdout and "status     : run" in info.stdout
    helped = run_python(project, "-c", READ_ONLY_DOIT, "help", "index:robots")
    assert helped.returncode == 0, helped.stderr
    for command in (["check"], []):
        refused = run_python(project, "-c", READ_ONLY_DOIT, *command)
        assert refused.returncode == 2
        assert refused.stderr.startswith(f"doit: the build lock {LOCK_NAME} cannot be opened")
        assert "`pipeline check` checks build/ without writing" in refused.stderr
    assert not (project / LOCK_NAME).exists() and not (project / DEP_FILE).exists()
