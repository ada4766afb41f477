"""Benchmark the srdf step's contact check on robots with a huge collision mesh.

Run from the repository root: `python benchmarks/contacts.py` (prints a Markdown table);
`--code DIR` measures the `pipeline/` of another tree (an older checkout, for before and
after). Each robot is written to a scratch folder: base_link's collision is a box of 0.2 m, or
a sphere mesh; link_1's a sphere mesh of radius 0.1 m (`trimesh.creation.uv_sphere`, `--count`
rings: 505 makes 987,712 triangles) beside it, 0.013 m apart or 0.001 m into it; one group
state. Per robot, each in a process of its own: reading the meshes and their hulls
(`link_solids`), the check at three joint values (`contacts`, its budget spent per state), the
peak RSS, and `pipeline srdf` on its srdf.py from start to end (wall time, peak RSS).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_URDF = """<?xml version="1.0"?>
<robot name="big">
  <link name="base_link"><collision><geometry>{base}</geometry></collision></link>
  <link name="link_1"><collision><origin xyz="{xy!r} {xy!r} 0"/><geometry>
    <mesh filename="package://big/meshes/ball.stl"/></geometry></collision></link>
  <joint name="joint_1" type="revolute"><parent link="base_link"/><child link="link_1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""
_SRDF = """import xml.etree.ElementTree as ET


def gen_srdf():
    robot = ET.Element("robot", {"name": "big"})
    group = ET.SubElement(robot, "group", {"name": "manipulator"})
    ET.SubElement(group, "chain", {"base_link": "base_link", "tip_link": "link_1"})
    state = ET.SubElement(robot, "group_state", {"name": "home", "group": "manipulator"})
    ET.SubElement(state, "joint", {"name": "joint_1", "value": "0.0"})
    return {"xml": robot, "urdf": "robot.urdf"}
"""
# name: (base_link's geometry, link_1's centre x = y): the box's edge at (0.1, 0.1), the ball's
# centre 0.113 m or 0.099 m from it; two balls 0.283 m or 0.198 m apart
CASES = {
    "ball beside a box, apart": ('<box size="0.2 0.2 0.2"/>', 0.18),
    "ball beside a box, in contact": ('<box size="0.2 0.2 0.2"/>', 0.17),
    "two balls, apart": ('<mesh filename="package://big/meshes/ball.stl"/>', 0.2),
    "two balls, in contact": ('<mesh filename="package://big/meshes/ball.stl"/>', 0.14),
}


def _write(folder: Path, case: str, count: int) -> int:
    """The robot of `case` in `folder`/robots/big; its mesh's triangles."""
    import trimesh

    robot = folder / "robots" / "big"
    (robot / "meshes").mkdir(parents=True)
    ball = trimesh.creation.uv_sphere(radius=0.1, count=[count, count])
    ball.export(robot / "meshes" / "ball.stl")
    base, xy = CASES[case]
    (robot / "robot.urdf").write_text(_URDF.format(base=base, xy=xy))
    (robot / "srdf.py").write_text(_SRDF)
    return len(ball.faces)


def _worker(folder: Path) -> None:
    """Measure the check in this process; print its figures as JSON."""
    from pipeline.contacts import (
        Budget,
        BudgetSpent,
        contacts,
        link_poses,
        link_solids,
        static_links,
    )
    from pipeline.urdf import load_robot

    robot = load_robot(folder, folder.parent.parent)
    start = time.perf_counter()
    solids = link_solids(robot, folder, "robots/big")
    read = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    budget, times, spent, found = Budget(), [], [], []
    for value in (0.0, 0.3, -0.3):
        left, poses = budget.left, link_poses(robot, {"joint_1": value})
        start = time.perf_counter()
        try:
            found.append(len(contacts(solids, poses, (), static_links(robot), budget)))
        except BudgetSpent:  # the state not collided
            found.append(-1)
        times.append(time.perf_counter() - start)
        spent.append(left - budget.left)
    faces = sum(len(c.offsets) for convexes in solids.values() for c in convexes)
    figures = {"read": read, "rss_read": rss, "states": times, "spent": spent, "found": found}
    figures |= {"faces": faces, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    print(json.dumps(figures))


def _run(command: list[str], cwd: Path, code: Path) -> tuple[str, float, float]:
    """A command's standard output, wall time and peak RSS (MB), `code` first on its path."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    start = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    if status:
        raise SystemExit(f"{' '.join(command)} failed ({status})")
    return out, time.perf_counter() - start, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the tree whose pipeline/ runs")
    parser.add_argument("--count", type=int, default=505, help="rings of the sphere mesh")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        sys.path.insert(0, str(args.code))
        _worker(args.worker)
        return
    print(f"code: {args.code.resolve()}")
    print(
        "| robot | triangles | hull faces | meshes and hulls read | check per state (3) "
        "| budget per state | pairs found | peak RSS | `pipeline srdf` |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for case in CASES:
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            triangles = _write(folder, case, args.count)
            robot = folder / "robots" / "big"
            me = [sys.executable, str(Path(__file__).resolve()), "--code", str(args.code)]
            out, _, _ = _run([*me, "--worker", str(robot)], folder, args.code)
            f = json.loads(out.strip().splitlines()[-1])
            command = [sys.executable, "-m", "pipeline", "srdf", "robots/big/srdf.py"]
            _, wall, peak = _run([*command, "-o", str(folder / "out.srdf")], folder, args.code)
            rows = zip(f["states"], f["found"], strict=True)
            states = " / ".join(f"{t:.2f}" if n >= 0 else "spent" for t, n in rows)
            print(
                f"| {case} | {triangles:,} | {f['faces']:,} | {f['read']:.1f} s, "
                f"{f['rss_read']:,.0f} MB | {states} s | {f['spent'][0]:,} "
                f"| {f['found'][0]} | {f['rss']:,.0f} MB | {wall:.1f} s, {peak:,.0f} MB |",
                flush=True,
            )


if __name__ == "__main__":
    main()
