"""Atomic writes: staged beside the target, renamed into place, a set all or none."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.findings import ContractError
from pipeline.writing import atomic_write, write_output, write_outputs
from tests.conftest import refuse_under


def test_atomic_write_replaces_and_skips_equal(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.json"
    assert atomic_write(target, b"one")
    assert not atomic_write(target, b"one")
    assert atomic_write(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]


@pytest.mark.parametrize("below", ["x.srdf", "a/b/x.srdf"])
def test_output_unwritable_under_a_file_names_that_file(tmp_path: Path, below: str) -> None:
    """`-o notes.txt/x.srdf` said only the system's "File exists" (hostile-input trial)."""
    (tmp_path / "notes.txt").write_text("mine")
    target = tmp_path / "notes.txt" / below
    with pytest.raises(ContractError) as raised:
        write_output(target, b"<robot/>")
    [finding] = raised.value.findings
    assert finding.code == "output_unwritable"
    assert (
        finding.message
        == f"cannot be written: {tmp_path.as_posix()}/notes.txt is a file, not a folder"
    )
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_write_outputs_undoes_its_renames_when_a_later_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pipeline srdf a=x b=y` with y immutable wrote x anyway, though docs/srdf.md says only
    when all pass is anything written (hostile-input trial)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "old.srdf").write_bytes(b"old")
    refuse_under(monkeypatch, "replace", tmp_path / "b")  # a rename into b/ is refused
    outputs = [
        (tmp_path / "a" / "old.srdf", b"new"),
        (tmp_path / "a" / "new.srdf", b"new"),
        (tmp_path / "b" / "x.srdf", b"new"),
    ]
    with pytest.raises(ContractError) as raised:
        write_outputs(outputs)
    [finding] = raised.value.findings
    assert (finding.code, finding.file) == ("output_unwritable", f"{tmp_path.as_posix()}/b/x.srdf")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["old.srdf"]  # no temporaries
    assert (tmp_path / "a" / "old.srdf").read_bytes() == b"old"
    assert list((tmp_path / "b").iterdir()) == []
