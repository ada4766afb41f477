"""Atomic writes: staged beside the target, renamed into place, a set all or none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.findings import ContractError
from pipeline.session import is_temp_name
from pipeline.writing import atomic_write, file_mode, write_output, write_outputs
from tests.conftest import refuse_under, run_python


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


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o644)])
def test_a_written_file_is_0644_as_the_umask_allows(tmp_path: Path, umask: int, mode: int) -> None:
    """Under `umask 077` every output (calibration copies, dist/'s bundle) was 0644, readable by
    every user of the machine, where a checkout git made beside it is 0600."""
    old = os.umask(umask)
    file_mode.cache_clear()
    try:
        assert atomic_write(tmp_path / "out.json", b"{}")
    finally:
        os.umask(old)
        file_mode.cache_clear()
    assert (tmp_path / "out.json").stat().st_mode & 0o777 == mode


def test_doit_and_its_bundle_under_umask_077_write_files_only_their_user_reads(
    project: Path,
) -> None:
    """The same, through a build and `doit cell:<cell_id>`."""
    urdf = project / "robots" / "abb_irb2400" / "robot.urdf"
    urdf.write_bytes(urdf.read_bytes() + b"\n")
    for args in ([], ["cell:weld_cell_a"]):
        result = subprocess.run(
            ["sh", "-c", 'umask 077 && exec "$@"', "sh", sys.executable, "-m", "doit", *args],
            cwd=project,
            env={**os.environ, "PYTHONPATH": str(project)},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
    written = [
        "build/robots/abb_irb2400/robot.urdf",
        "build/stamps/urdf/abb_irb2400.json",
        "dist/weld_cell_a.tar.gz",
        "dist/weld_cell_a.identity",
    ]
    assert {path: (project / path).stat().st_mode & 0o777 for path in written} == dict.fromkeys(
        written, 0o600
    )
    assert run_python(project, "-m", "pipeline", "check").returncode == 0


@pytest.mark.parametrize(
    "name", ["m" * 251 + ".stl", "x" + "\u00e9" * 125 + ".stl"], ids=["ascii", "utf8"]
)
def test_a_file_whose_name_is_as_long_as_a_name_may_be_is_written_and_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A mesh named with 250 of the 255 bytes a name may hold passed `pipeline validate` and
    failed `doit` (`output_unwritable: ... File name too long; make build/ writable`): its
    temporary name, `.<name>.<8 characters>.tmp`, was 14 bytes longer. Now the name is cut in
    it, and a write that is undone (a hard link kept aside) is undone too."""
    target = tmp_path / name
    assert len(os.fsencode(name)) == 255
    assert atomic_write(target, b"one")
    assert [p.name for p in tmp_path.iterdir()] == [name]
    staged = []
    real = os.replace

    def seen(src: str, dst: str) -> None:
        staged.append(Path(src).name)
        real(src, dst)

    monkeypatch.setattr(os, "replace", seen)
    (tmp_path / "b").mkdir()
    refuse_under(monkeypatch, "replace", tmp_path / "b")
    with pytest.raises(ContractError):
        write_outputs([(target, b"two"), (tmp_path / "b" / "x", b"two")])
    assert target.read_bytes() == b"one"  # put back from the link kept aside
    assert [p.name for p in tmp_path.iterdir() if p.name != "b"] == [name]
    assert staged and all(is_temp_name(n) and len(os.fsencode(n)) <= 255 for n in staged)
