"""benchmarks/spheres.py --fit-only: the fit's table alone, without baselines or build timings.

A new-user trial measured four robots of 58 links in 12 minutes on a machine shared with others,
about 6 of them the two builds each robot is fitted in again, and nothing skipped them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.conftest import REPO

URDF = """<robot name="box_arm">
  <link name="base_link">
    <collision><geometry><box size="0.2 0.1 0.05"/></geometry></collision>
  </link>
  <link name="tool0"/>
  <joint name="joint_1" type="revolute">
    <parent link="base_link"/><child link="tool0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>
"""


def test_fit_only_prints_the_fit_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    robots = tmp_path / "robots"
    (robots / "box_arm").mkdir(parents=True)
    (robots / "box_arm" / "robot.urdf").write_text(URDF)
    spec = importlib.util.spec_from_file_location("bench_spheres", REPO / "benchmarks/spheres.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.main(["--robots-dir", str(robots), "--fit-only"])
    out = capsys.readouterr().out
    assert "| box_arm/base_link | " in out
    assert out.splitlines()[0].endswith("| fit wall / CPU (s) |")
    assert "fit: links 1, proven 1/1" in out
    assert "k-means" not in out and "build from scratch" not in out
