"""Where a doit run may work: the folder of its dodo.py holding the pipeline/ it imports, and
a database outside the sources and build/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_doit, run_python, tree_bytes


@pytest.mark.parametrize("command", [[], ["list"]], ids=["run", "list"])
def test_doit_on_a_dodo_outside_the_checkout_is_refused_and_writes_nothing_there(
    project: Path, tmp_path_factory: pytest.TempPathFactory, command: list[str]
) -> None:
    """`doit -f /elsewhere/dodo.py` ran in /elsewhere, stamping the code of a pipeline/ that
    folder does not hold (doit's DependencyError per stage, exit 2) and writing build/stamps/,
    .doit.lock and .doit.db there."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "dodo.py").write_bytes((project / "dodo.py").read_bytes())
    before = tree_bytes(project)
    result = run_doit(project, *command, "-f", str(elsewhere / "dodo.py"))
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"{elsewhere}: not_repository_root: doit runs in this folder (its dodo.py's, or -d's), "
        f"which does not hold the pipeline/ code the run imports "
        f"({(project / 'pipeline').resolve()}); run the dodo.py of the repository root, beside "
        "its pipeline/, robots/ and cells/, without -d (`doit` there, or `doit -f <root>/dodo.py`)"
    ]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["dodo.py"]
    assert tree_bytes(project) == before


def test_doit_told_to_run_in_a_subfolder_is_refused_and_writes_nothing_there(
    project: Path,
) -> None:
    """`doit -d robots` ran in robots/, writing build/stamps/, a lock and a database among the
    sources."""
    before = tree_bytes(project)
    result = run_doit(project, "-d", "robots")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"{project / 'robots'}: not_repository_root: ")
    assert tree_bytes(project) == before


@pytest.mark.parametrize("option", [["-f", "../dodo.py"], ["-k"]], ids=["file", "seek-file"])
def test_doit_on_the_checkouts_own_dodo_from_a_subfolder_runs_there(
    project: Path, option: list[str]
) -> None:
    """`doit -f ../dodo.py` from robots/ runs in the checkout, whose pipeline/ it imports, and
    so does `doit -k`, which finds dodo.py in a parent folder (README, docs/doit.md)."""
    result = run_python(project / "robots", "-m", "doit", *option)
    assert result.returncode == 0, result.stderr
    assert run_python(project, "-m", "pipeline", "check").returncode == 0


@pytest.mark.parametrize(
    "db_file",
    [
        "build/state.db",
        "robots/abb_irb2400/meshes/state.db",
        "cells/state.db",
        "./cells/../build/x",
    ],
    ids=["build", "meshes", "cells", "dotted"],
)
def test_a_database_in_the_sources_or_build_is_refused_before_anything_is_written(
    project: Path, db_file: str
) -> None:
    """`doit --db-file build/state.db` left a file `pipeline check` calls extra for ever (CI
    fails), and one in robots/<model_id>/meshes/ was an input of that robot's steps: every run
    rebuilt it, as the database changed."""
    before = tree_bytes(project)
    result = run_doit(project, "--db-file", db_file)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{db_file}: database_in_sources: doit's database cannot lie in ")
    assert line.endswith(
        "; name a --db-file outside robots/, cells/ and build/ (or none: .doit.db)"
    )
    assert tree_bytes(project) == before
    assert not (project / db_file).exists()


def test_a_database_outside_the_checkout_is_used(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`--db-file` elsewhere is a cache like any other."""
    db_file = tmp_path_factory.mktemp("db") / "state.db"
    assert run_doit(project, "--db-file", str(db_file)).returncode == 0
    assert db_file.is_file()
    assert run_python(project, "-m", "pipeline", "check").returncode == 0
