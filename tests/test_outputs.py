"""The record of what each step left in build/: what makes doit put back a hand-edited output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.outputs import RECORD_NAME, OutputRecord


def built(root: Path) -> str:
    """A step's stamp and two outputs, as run_step leaves them; the stamp's path."""
    (root / "build" / "stamps").mkdir(parents=True)
    for name in ("a.stl", "b.json"):
        (root / "build" / name).write_text(name)
    stamp = "build/stamps/step.json"
    outputs = {"build/a.stl": "x", "build/b.json": "y"}
    (root / stamp).write_text(json.dumps({"step": "s:x", "inputs": {}, "outputs": outputs}))
    return stamp


def noted(root: Path) -> OutputRecord:
    record = OutputRecord(root)
    record.note("s:x", built(root))
    record.save()
    past_a_clock_tick(root / "build" / "a.stl")
    return OutputRecord(root)


def past_a_clock_tick(reference: Path) -> None:
    """Wait until a new write gets a later ctime than `reference` (the kernel's clock is coarse),
    as any edit by a person or a later tool would."""
    probe = reference.with_name("probe")
    for _ in range(10_000):
        probe.write_text("")
        if probe.stat().st_ctime_ns > reference.stat().st_ctime_ns:
            break
    probe.unlink()


def test_a_step_left_as_it_was_is_unchanged_across_processes(tmp_path: Path) -> None:
    record = noted(tmp_path)
    assert record.unchanged("s:x")
    assert not record.unchanged("s:never_ran")


@pytest.mark.parametrize("folder", ["build", "build/stamps"])
def test_a_folder_moved_aside_and_replaced_by_a_link_to_it_is_noticed(
    tmp_path: Path, folder: str
) -> None:
    """Moving a folder keeps the inodes and ctimes of the files in it: only the folder's own
    lstat tells that a link now stands in its place (doit then left it there, exit 0)."""
    record = noted(tmp_path)
    (tmp_path / folder).rename(tmp_path / "aside")
    (tmp_path / folder).symlink_to(tmp_path / "aside")
    assert not record.unchanged("s:x")


def test_a_file_written_beside_an_output_leaves_its_step_unchanged(tmp_path: Path) -> None:
    """A folder's ctime changes with every file written in it (by another step): not taken."""
    record = noted(tmp_path)
    (tmp_path / "build" / "another_steps.json").write_text("x")
    (tmp_path / "build" / "stamps" / "another_step.json").write_text("x")
    assert record.unchanged("s:x")


def test_a_folder_is_looked_at_again_once_a_step_ran(tmp_path: Path) -> None:
    """Until a step of the run ran, a folder's lstat serves every step in it; not after."""
    record = noted(tmp_path)
    assert record.unchanged("s:x")
    (tmp_path / "build" / "stamps").rename(tmp_path / "aside")
    (tmp_path / "build" / "stamps").symlink_to(tmp_path / "aside")
    record.step_ran()
    assert not record.unchanged("s:x")


@pytest.mark.parametrize(
    "change",
    [
        "append in place",
        "same size, same mtime",
        "replace by rename",
        "delete",
        "edit the stamp",
    ],
)
def test_any_edit_of_an_output_or_the_stamp_is_noticed(tmp_path: Path, change: str) -> None:
    record = noted(tmp_path)
    target = tmp_path / "build" / "a.stl"
    info = target.stat()
    if change == "append in place":
        with target.open("a") as handle:
            handle.write("!")
    elif change == "same size, same mtime":
        target.write_text("A.stl")
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    elif change == "replace by rename":
        (tmp_path / "build" / "new").write_text("a.stl")
        os.replace(tmp_path / "build" / "new", target)
    elif change == "delete":
        target.unlink()
    else:
        stamp = tmp_path / "build" / "stamps" / "step.json"
        stamp.write_text(stamp.read_text() + " ")
    assert not record.unchanged("s:x")


@pytest.mark.parametrize(
    "content", ["", "junk", "pipeline outputs 1\0s:x\0", "pipeline outputs 0\0s:x\0d\0p\0"]
)
def test_a_missing_foreign_or_torn_record_trusts_nothing(tmp_path: Path, content: str) -> None:
    noted(tmp_path)
    (tmp_path / RECORD_NAME).write_text(content)
    assert not OutputRecord(tmp_path).unchanged("s:x")


def test_a_step_whose_stamp_cannot_be_read_is_forgotten(tmp_path: Path) -> None:
    record = noted(tmp_path)
    (tmp_path / "build" / "stamps" / "step.json").write_text("{torn")
    record.note("s:x", "build/stamps/step.json")
    assert not record.unchanged("s:x")


@pytest.mark.parametrize(
    ("saved", "remembered"),
    [
        ({}, True),  # a step without file_dep states (none saved)
        ({"robots/r/srdf.py": "d1"}, True),  # doit saved what the step hashed
        ({"robots/r/srdf.py": "d2"}, False),  # the source was edited while the step ran
        ({"robots/r/other.py": "d3"}, False),  # an input the stamp does not record
    ],
)
def test_a_source_edited_while_its_step_ran_is_not_taken_as_current(
    tmp_path: Path, saved: dict[str, str], remembered: bool
) -> None:
    # doit saves each input's digest after the step ran; the stamp holds what the step hashed
    stamp = built(tmp_path)
    found = json.loads((tmp_path / stamp).read_text())
    found["inputs"] = {"robots/r/srdf.py": "d1"}
    (tmp_path / stamp).write_text(json.dumps(found))
    record = OutputRecord(tmp_path)
    record.note("s:x", stamp, saved)
    assert record.unchanged("s:x") is remembered


BOTH = {"build/stamps/step.json", "build/a.stl"}


@pytest.mark.parametrize(
    ("wanted", "ran", "kept"),
    [
        (BOTH, False, BOTH),
        ({"build/a.stl", "build/never_made.json"}, False, {"build/a.stl"}),  # missing: not kept
        (set(), False, set()),  # only what doit asks about is kept
        (BOTH, True, set()),  # a step ran: none holds any more
    ],
)
def test_the_stats_taken_for_the_comparison_are_kept_until_a_step_runs(
    tmp_path: Path, wanted: set[str], ran: bool, kept: set[str]
) -> None:
    record = noted(tmp_path)
    record.wanted = wanted
    if ran:
        record.step_ran()
    assert record.unchanged("s:x")
    assert set(record.stats) == kept
    for path in kept:
        assert record.stats[path] == os.stat(tmp_path / path)


@pytest.mark.parametrize("where", ["the checkout", "another folder"])
def test_outputs_are_stated_relative_to_the_checkout_only_when_it_is_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root if where == "the checkout" else tmp_path)
    record = noted(root)
    assert record.prefix == ("" if where == "the checkout" else f"{root}{os.sep}")
    assert record.unchanged("s:x")
    (root / "build" / "a.stl").unlink()
    assert not record.unchanged("s:x")


def test_a_step_noted_from_another_folder_runs_again_rather_than_being_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative stats need the checkout to stay the current folder; were it left, what a step
    left reads as missing, so that the step runs again, never the other way round."""
    monkeypatch.chdir(tmp_path)
    stamp = built(tmp_path)
    record = OutputRecord(tmp_path)
    monkeypatch.chdir(tmp_path / "build")
    record.note("s:x", "build/stamps/step.json")  # the stamp is not found from here
    assert not record.unchanged("s:x")
    record.save()
    monkeypatch.chdir(tmp_path)
    assert (tmp_path / stamp).exists()
    assert not OutputRecord(tmp_path).unchanged("s:x")
