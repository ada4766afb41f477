"""Outputs of removed robots and cells: found through their stamps, removed from build/."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pipeline.findings import ContractError
from pipeline.plan import plan
from pipeline.prune import orphan_outputs, orphan_stamps, remove_orphans
from tests.conftest import REPO, run_doit, tree_bytes

IIWA = "lbr_iiwa_14_r820"
IIWA_STAMPS = [
    *(f"build/stamps/{stage}/{IIWA}.json" for stage in ("config", "manifest", "spheres")),
    f"build/stamps/srdf/{IIWA}.json",
    f"build/stamps/urdf/{IIWA}.json",
]


def remove_iiwa(project: Path) -> None:
    """Take the iiwa and the cell serving it out of the sources."""
    shutil.rmtree(project / "robots" / IIWA)
    shutil.rmtree(project / "cells" / "iiwa_bench")


def files_under(project: Path, folder: str) -> set[str]:
    return {f"{folder}/{rel}" for rel in tree_bytes(project / folder)}


def write_stamp(project: Path, name: str, outputs: list[str]) -> Path:
    group, _, target = name.partition(":")
    stamp = project / "build" / "stamps" / group / f"{target}.json"
    record = {"step": name, "inputs": {}, "outputs": dict.fromkeys(outputs, "x")}
    stamp.write_text(json.dumps(record))
    return stamp


def test_a_current_build_has_no_orphans(project: Path) -> None:
    steps = plan(project)
    assert orphan_stamps(project, steps) == []
    assert orphan_outputs(project, [], steps) == []


def test_a_removed_robots_and_cells_stamps_are_orphans(project: Path) -> None:
    remove_iiwa(project)
    assert orphan_stamps(project, plan(project)) == sorted(
        ["build/stamps/cellbuild/iiwa_bench.json", *IIWA_STAMPS]
    )


def test_a_removed_robots_outputs_are_every_file_its_steps_made(project: Path) -> None:
    remove_iiwa(project)
    steps = plan(project)
    found = orphan_outputs(project, orphan_stamps(project, steps), steps)
    expected = files_under(project, f"build/robots/{IIWA}") | files_under(
        project, "build/cells/iiwa_bench"
    )
    assert set(found) == expected
    assert found == sorted(found)


def test_remove_orphans_removes_outputs_stamps_and_emptied_folders_only(project: Path) -> None:
    remove_iiwa(project)
    kept = {
        path: data
        for path, data in tree_bytes(project / "build").items()
        if IIWA not in path and "iiwa_bench" not in path
    }
    removed = remove_orphans(project, plan(project))
    assert "build/stamps/cellbuild/iiwa_bench.json" in removed
    assert f"build/robots/{IIWA}/robot.urdf" in removed
    assert not (project / "build" / "robots" / IIWA).exists()
    assert not (project / "build" / "cells" / "iiwa_bench").exists()
    assert tree_bytes(project / "build") == kept
    assert (project / "build" / "stamps" / "urdf").is_dir()  # still holds the abb's stamp
    assert remove_orphans(project, plan(project)) == []


def test_an_output_a_current_step_claims_is_not_removed(project: Path) -> None:
    """An orphan stamp naming what a current step made (a robot renamed back and forth)."""
    claimed = "build/robots/abb_irb2400/robot.urdf"
    stamp = write_stamp(project, "urdf:old_name", [claimed])
    assert remove_orphans(project, plan(project)) == ["build/stamps/urdf/old_name.json"]
    assert (project / claimed).read_bytes() == (REPO / claimed).read_bytes()
    assert not stamp.exists()


@pytest.mark.parametrize(
    "content",
    [b"", b"{", b"[]", b'{"outputs": ["build/x"]}', b'{"outputs": {"7": 1}}'],
    ids=["empty", "torn", "not-an-object", "outputs-not-an-object", "path-not-in-build"],
)
def test_an_unreadable_orphan_stamp_is_removed_and_names_no_output(
    project: Path, content: bytes
) -> None:
    stamp = project / "build" / "stamps" / "urdf" / "gone.json"
    stamp.write_bytes(content)
    steps = plan(project)
    assert orphan_outputs(project, orphan_stamps(project, steps), steps) == []
    assert remove_orphans(project, steps) == ["build/stamps/urdf/gone.json"]


def test_only_json_files_in_stamp_folders_are_stamps(project: Path) -> None:
    stamps = project / "build" / "stamps"
    (stamps / "urdf" / "notes.txt").write_text("x")
    (stamps / "README").write_text("x")  # a file where a group folder would be
    assert orphan_stamps(project, plan(project)) == []


def test_without_stamps_nothing_is_an_orphan(repo: Path) -> None:
    assert orphan_stamps(repo, plan(repo)) == []
    assert remove_orphans(repo, plan(repo)) == []


def test_a_stamp_never_names_a_file_outside_build_for_removal(project: Path) -> None:
    """A hand-written orphan stamp listing sources is not obeyed."""
    stamp = project / "build" / "stamps" / "urdf" / "gone_robot.json"
    outputs = {
        "robots/abb_irb2400/robot.urdf": "x",
        "build/../robots/abb_irb2400/srdf.py": "x",
        "build/robots/gone_robot/robot.urdf": "x",
    }
    stamp.write_text(json.dumps({"step": "urdf:gone_robot", "inputs": {}, "outputs": outputs}))
    (project / "build" / "robots" / "gone_robot").mkdir()
    (project / "build" / "robots" / "gone_robot" / "robot.urdf").write_text("<robot/>")
    assert run_doit(project).returncode == 0
    assert (project / "robots" / "abb_irb2400" / "robot.urdf").is_file()
    assert (project / "robots" / "abb_irb2400" / "srdf.py").is_file()
    assert not (project / "build" / "robots" / "gone_robot").exists()
    assert not stamp.exists()


def test_pruning_never_follows_a_linked_folder_out_of_build(project: Path, tmp_path: Path) -> None:
    """An orphan stamp naming a file behind a folder link: the file outside stays."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not yours")
    (project / "build" / "robots" / "gone_robot").symlink_to(outside, target_is_directory=True)
    stamp = project / "build" / "stamps" / "urdf" / "gone_robot.json"
    outputs = {"build/robots/gone_robot/keep.txt": "x"}
    stamp.write_text(json.dumps({"step": "urdf:gone_robot", "inputs": {}, "outputs": outputs}))
    assert run_doit(project).returncode == 0
    assert (outside / "keep.txt").read_text() == "not yours"
    assert not stamp.exists()


def test_output_unwritable_when_pruning_is_a_finding_per_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only build/ stopped the prune step with a traceback."""
    shutil.rmtree(project / "cells" / "iiwa_bench")

    def refuse(path: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "unlink", refuse)
    with pytest.raises(ContractError) as exc:
        remove_orphans(project, plan(project))
    findings = exc.value.findings
    assert {f.code for f in findings} == {"output_unwritable"}
    assert "build/stamps/cellbuild/iiwa_bench.json" in {f.file for f in findings}
    assert "build/cells/iiwa_bench/cell.json" in {f.file for f in findings}
