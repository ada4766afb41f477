"""The doit graph: full builds, no-ops, refused input that leaves build/ intact."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import REPO, run_doit, tree_bytes


def ran(output: str) -> set[str]:
    """Names of the tasks doit executed (not skipped) in one run."""
    return {line[3:].strip() for line in output.splitlines() if line.startswith(".  ")}


def test_clean_build_recreates_committed_build_byte_for_byte(project: Path) -> None:
    shutil.rmtree(project / "build")
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert tree_bytes(project / "build") == tree_bytes(REPO / "build")


def test_second_run_does_nothing(project: Path) -> None:
    first = run_doit(project)
    assert first.returncode == 0, first.stdout
    second = run_doit(project)
    assert second.returncode == 0
    assert ran(second.stdout) == set()


def test_current_build_in_fresh_clone_rewrites_nothing(project: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in (project / "build").rglob("*") if p.is_file()}
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    after = {p: p.stat().st_mtime_ns for p in (project / "build").rglob("*") if p.is_file()}
    assert after == before


def test_bad_urdf_exits_2_with_finding_lines_and_build_unchanged(project: Path) -> None:
    before = tree_bytes(project / "build")
    urdf = project / "robots" / "abb_irb2400" / "robot.urdf"
    urdf.write_text(urdf.read_text().replace('velocity="2.618"', 'velocity="-1"', 1))
    result = run_doit(project)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "invalid_joint_velocity" in line]
    assert lines == [
        "robots/abb_irb2400/robot.urdf:155: invalid_joint_velocity: joint "
        "'joint_1' has velocity -1.0, not a finite number > 0; set velocity in "
        "rad/s, greater than 0"
    ]
    assert tree_bytes(project / "build") == before


def test_changed_urdf_rebuilds_that_robot_only(project: Path) -> None:
    assert run_doit(project).returncode == 0
    urdf = project / "robots" / "lbr_iiwa_14_r820" / "robot.urdf"
    urdf.write_text(urdf.read_text().replace('velocity="1.4834"', 'velocity="1.4"', 1))
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert {"urdf:lbr_iiwa_14_r820", "manifest:lbr_iiwa_14_r820", "index:robots"} <= ran(
        result.stdout
    )
    assert not any("abb_irb2400" in name for name in ran(result.stdout))
