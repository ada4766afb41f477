"""doit's extensions: the content checker's stats and signatures, the reporter's record of runs."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

import pipeline.doitext as doitext
from tests.conftest import clock_ahead, refuse_under, run_doit, run_python, tree_bytes


def test_a_source_is_stated_once_for_all_its_steps_an_output_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A URDF is an input of 14 steps; a stamp is written by one step and read by the next."""
    from pipeline.doitext import ContentChecker

    monkeypatch.chdir(tmp_path)
    (tmp_path / "robots").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / "robots" / "robot.urdf").write_text("<robot/>")
    (tmp_path / "build" / "stamp.json").write_text("{}")
    checker = ContentChecker()
    source = checker.info("robots/robot.urdf")
    output = checker.info("build/stamp.json")
    (tmp_path / "build" / "stamp.json").write_text("{ }")
    assert checker.info("robots/robot.urdf") is source
    assert checker.info("build/stamp.json").st_size == output.st_size + 1


@pytest.mark.parametrize(
    ("content", "steps", "changed", "signed", "read"),
    [
        ("<robot/>", 14, False, 1, 1),  # touched, same bytes: signed once, every state refreshed
        ("<robot />", 14, True, 1, 0),  # edited (a new size): each step that reads it runs
        ("<ROBOT/>", 14, True, 1, 1),  # edited, same size: its bytes decide
        ("<robot/>", 1, False, 1, 1),
    ],
)
def test_a_touched_source_is_signed_once_for_all_the_steps_that_read_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    content: str,
    steps: int,
    changed: bool,
    signed: int,
    read: int,
) -> None:
    """A URDF is an input of 14 steps: its stat signature was made three times per step, and
    its content looked up once per step."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "robots").mkdir()
    source = tmp_path / "robots" / "robot.urdf"
    source.write_text("<robot/>")
    digest = hashlib.sha256(b"<robot/>").hexdigest()
    states = [["old signature", source.stat().st_size, digest] for _ in range(steps)]
    source.write_text(content)
    clock_ahead(monkeypatch, 60, doitext)  # out of the racy window
    made: list[os.stat_result] = []
    sign = doitext.stat_signature
    monkeypatch.setattr(doitext, "stat_signature", lambda info: made.append(info) or sign(info))
    checker = doitext.ContentChecker()
    known = checker.known_digests()
    looked_up: list[str] = []
    real_of = known.of
    monkeypatch.setattr(known, "of", lambda rel, *a: looked_up.append(rel) or real_of(rel, *a))
    info = checker.info("robots/robot.urdf")
    assert [checker.check_modified("robots/robot.urdf", info, s) for s in states] == [
        changed
    ] * steps
    assert len(made) == signed
    assert looked_up == ["robots/robot.urdf"] * read
    refreshed = "old signature" if changed else sign(info)
    assert [state[0] for state in states] == [refreshed] * steps


@pytest.mark.parametrize(
    ("age", "mtime_set_back", "refreshed"),
    [(0.0, False, False), (0.0, True, False), (60.0, False, True)],
    ids=["racy", "racy_with_mtime_set_back", "old"],
)
def test_a_touched_source_changed_this_recently_is_not_refreshed_in_doits_state(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    age: float,
    mtime_set_back: bool,
    refreshed: bool,
) -> None:
    """A file changed within RACY_SECONDS could change again without its stat changing (git's
    "racily clean"): its new signature is not saved, so the next run proves its bytes again."""
    from pipeline.doitext import ContentChecker

    monkeypatch.chdir(tmp_path)
    source = tmp_path / "robot.urdf"
    source.write_text("<robot/>")
    clock_ahead(monkeypatch, age, doitext)
    if mtime_set_back:  # as cp -p or tar do: it was still written now, its ctime says so
        os.utime(source, (time.time() - 60, time.time() - 60))
    state = ["old signature", source.stat().st_size, hashlib.sha256(b"<robot/>").hexdigest()]
    checker = ContentChecker()
    info = checker.info("robot.urdf")
    assert not checker.check_modified("robot.urdf", info, state)
    assert (state[0] != "old signature") == refreshed


def _run_event(reporter: object, event: str) -> None:
    from doit.task import Task

    from pipeline.doitext import ContractFailure

    step = Task("urdf:r", [lambda: None])
    if event == "a step started":
        reporter.execute_task(step)  # type: ignore[attr-defined]
    elif event == "a step succeeded":
        reporter.add_success(step)  # type: ignore[attr-defined]
    elif event == "a step failed":
        reporter.add_failure(step, ContractFailure("r: refused"))  # type: ignore[attr-defined]
    elif event == "a group ran":  # no actions: doit runs it on every run, it writes nothing
        group = Task("urdf", None, task_dep=["urdf:r"])
        reporter.execute_task(group)  # type: ignore[attr-defined]
        reporter.add_success(group)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("event", "stated_again"),
    [
        ("nothing ran", False),
        ("a group ran", False),
        ("a step started", True),
        ("a step succeeded", True),
        ("a step failed", True),
    ],
)
def test_an_output_is_stated_once_until_a_step_of_the_run_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, event: str, stated_again: bool
) -> None:
    """doit asks whether each target exists and states outputs read by later steps: the stats
    the output record took as doit loaded the tasks answer it until a step ran, since a step
    may rewrite its outputs (and a later step must then see their new stat)."""
    import io

    from pipeline.doitext import ContentChecker, FindingsReporter, output_record
    from pipeline.outputs import OutputRecord

    monkeypatch.chdir(tmp_path)
    (tmp_path / "build" / "stamps").mkdir(parents=True)
    stamp = "build/stamps/urdf-r.json"
    (tmp_path / stamp).write_text(json.dumps({"inputs": {}, "outputs": {}}))
    maker = OutputRecord(tmp_path)
    maker.note("urdf:r", stamp)
    maker.save()
    record = output_record(os.getcwd())
    record.wanted = {stamp}
    assert record.unchanged("urdf:r")
    checker = ContentChecker()
    reporter = FindingsReporter(io.StringIO(), {})  # doit makes it before it checks a step
    loaded = checker.info(stamp)
    _run_event(reporter, event)
    (tmp_path / stamp).unlink()  # as if the step had just replaced it: gone, then new
    (tmp_path / stamp).write_text("{}")
    assert (checker.info(stamp) is loaded) is not stated_again
    (tmp_path / stamp).unlink()
    assert checker.exists(stamp) is not stated_again
    assert checker.exists("build/stamps/other.json") is False  # never stated: asked afresh


@pytest.mark.parametrize("reporter", ["executed-only", "json", "zero", "console"])
def test_another_reporter_leaves_a_later_step_reading_an_earlier_steps_new_outputs(
    project: Path, reporter: str
) -> None:
    """Only FindingsReporter says when a step ran: with another `doit -r`, the stats taken as
    doit loaded the tasks must not answer for a stamp the run rewrote (srdf's, which the
    manifest reads), or the manifest, the index and the cell are skipped and left stale."""
    assert run_doit(project).returncode == 0
    with (project / "robots" / "abb_irb2400" / "srdf.py").open("a") as source:
        source.write("# edited\n")
    result = run_doit(project, "-r", reporter)
    assert result.returncode == 0, result.stdout + result.stderr
    check = run_python(project, "-m", "pipeline", "check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_file_unreadable_an_input_in_a_folder_this_user_cannot_search_runs_its_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """doit once stopped with "Dependent file ... does not exist" (it exists): now the step
    runs, and reading the file names the permission to fix."""
    from pipeline.doitext import ContentChecker

    monkeypatch.chdir(tmp_path)
    (tmp_path / "robots" / "arm").mkdir(parents=True)
    (tmp_path / "robots" / "arm" / "robot.urdf").write_text("<robot/>")
    checker = ContentChecker()
    saved = checker.get_state("robots/arm/robot.urdf", None)
    refuse_under(monkeypatch, "stat", Path("robots/arm"))
    refuse_under(monkeypatch, "lstat", Path("robots/arm"))
    refuse_under(monkeypatch, "open", tmp_path / "robots/arm")
    info = ContentChecker().info("robots/arm/robot.urdf")
    assert ContentChecker().check_modified("robots/arm/robot.urdf", info, saved)


def test_file_missing_a_removed_source_runs_its_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source doit holds a state of, then removed: its step runs and says `file_missing`
    (doit would stop the whole run with "Dependent file ... does not exist")."""
    from pipeline.doitext import ContentChecker

    monkeypatch.chdir(tmp_path)
    (tmp_path / "robots" / "arm").mkdir(parents=True)
    source = tmp_path / "robots" / "arm" / "srdf.py"
    source.write_text("")  # the size a missing file's stat would show
    saved = ContentChecker().get_state("robots/arm/srdf.py", None)
    source.unlink()
    info = ContentChecker().info("robots/arm/srdf.py")
    assert ContentChecker().check_modified("robots/arm/srdf.py", info, saved)


@pytest.mark.parametrize("removed", ["srdf.py", "robot.urdf"])
def test_file_missing_a_source_removed_after_a_run_is_the_steps_finding(
    removed: str, project: Path
) -> None:
    """Once doit has run, its database holds the source's state: removing srdf.py or
    robot.urdf then is still the documented `file_missing` finding, not doit's error."""
    assert run_doit(project).returncode == 0
    before = tree_bytes(project / "build")
    (project / "robots" / "abb_irb2400" / removed).unlink()
    result = run_doit(project)
    assert result.returncode == 2
    assert "DependencyError" not in result.stdout + result.stderr, result.stdout + result.stderr
    line = f"robots/abb_irb2400/{removed}: file_missing: file does not exist; "
    assert [x for x in result.stdout.splitlines() if x.startswith(line)], result.stdout
    assert tree_bytes(project / "build") == before


def test_a_cell_its_failed_robot_keeps_from_compiling_still_names_its_own_findings(
    project: Path,
) -> None:
    """Every error in one run: a robot's generator raises and the cell serving it pins the wrong
    digest; both lines are printed, the robot's once, and build/ is left as it was."""
    assert run_doit(project).returncode == 0
    before = tree_bytes(project / "build")
    source = project / "robots" / "abb_irb2400" / "srdf.py"
    source.write_text(source.read_text(encoding="utf-8") + "raise RuntimeError('boom')\n")
    raised_at = len(source.read_text(encoding="utf-8").splitlines())
    machine = project / "cells" / "weld_cell_a" / "machine.json"
    machine.write_text(machine.read_text(encoding="utf-8").replace('"sha256": "8', '"sha256": "9'))
    result = run_doit(project)
    assert result.returncode == 2
    lines = [x for x in result.stdout.splitlines() if not x.startswith((".  ", "-- "))]
    pin = "cells/weld_cell_a/machine.json:/robot/machine_planning_calibration/sha256"
    assert [x.split(": ")[:2] for x in lines] == [
        [f"robots/abb_irb2400/srdf.py:{raised_at}", "generator_raised"],
        [pin, "pin_mismatch"],
    ], result.stdout + result.stderr
    assert tree_bytes(project / "build") == before
