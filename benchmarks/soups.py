"""Benchmark `spheres refit` and `spheres verify` on a link whose collision mesh is a triangle soup.

Run from the repository root: `python benchmarks/soups.py` (prints a Markdown table);
`--code DIR` measures the `pipeline/` of another tree (an older checkout, for before and
after); `--sizes 50000,250000` and `--kinds unshared,exploded` choose the soups. A scratch copy
of robots/abb_irb2400 (in a temporary folder, or `--scratch DIR`) is fitted once; then, per
soup, link_2's collision mesh (link_2_whole.stl) is replaced by a binary STL of the soup and, each
in a process of its own under a memory limit (`--limit-gb`, RLIMIT_AS): `spheres refit` (fits
link_2 and proves every link: the build's step, its verify without samples), `spheres verify`
(the proof and the excess ratio from 100 000 samples) and `spheres verify --samples 0`. Wall
and CPU time and peak RSS (`wait4`) of each; link_2's excess ratio and standard error, and the
first 8 hex digits of the SHA-256 of its spheres (the same fit before and after a change).

Soups, from the shipped link_2 (154 triangles, closed, 0.83 m tall) subdivided to the size
(every triangle into 4 while that fits, then as many as needed once more):
- `unshared`: each corner moved by up to 1e-6 m, so no two triangles share a corner or an edge;
- `exploded`: each triangle moved by a random vector (1 mm sigma per axis), an exploded view;
- `scattered`: random triangles, corners 2 mm sigma around random points of a 0.2 m sphere
  (the hostile-input trial's soup; not from link_2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ROBOT = "abb_irb2400"
MESH = "link_2_whole.stl"
LINK = "link_2"


def subdivided(triangles: np.ndarray, size: int) -> np.ndarray:
    """The triangles split into 4 (at their edges' midpoints) until there are about `size`."""
    tri = triangles
    while len(tri) < size:
        a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
        ab, bc, ca = (a + b) / 2, (b + c) / 2, (c + a) / 2
        split = np.concatenate(
            [np.stack(t, axis=1) for t in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))]
        )
        if len(split) <= size:
            tri = split
            continue
        # the first k triangles split: len + 3 k triangles
        k = (size - len(tri)) // 3
        keep = np.ones(len(tri), dtype=bool)
        keep[:k] = False
        parts = [split[i * len(tri) : i * len(tri) + k] for i in range(4)]
        tri = np.concatenate([tri[keep], *parts])
        break
    return tri


def soup(kind: str, size: int, shipped: np.ndarray) -> np.ndarray:
    """The soup of `kind` with about `size` triangles."""
    rng = np.random.default_rng(size)
    if kind == "scattered":
        centres = rng.normal(size=(size, 3))
        centres *= 0.2 / np.linalg.norm(centres, axis=1)[:, None]
        return centres[:, None, :] + rng.normal(scale=0.002, size=(size, 3, 3))
    tri = subdivided(shipped, size)
    if kind == "unshared":
        return tri + rng.uniform(-1e-6, 1e-6, size=tri.shape)
    return tri + rng.normal(scale=0.001, size=(len(tri), 1, 3))


def write_stl(path: Path, triangles: np.ndarray) -> None:
    """A binary STL of the triangles (normals 0: readers compute their own)."""
    record = np.zeros(len(triangles), dtype=[("n", "<f4", 3), ("v", "<f4", 9), ("a", "<u2")])
    record["v"] = triangles.reshape(-1, 9)
    with path.open("wb") as out:
        out.write(b"soup".ljust(80, b" "))
        out.write(np.uint32(len(triangles)).tobytes())
        out.write(record.tobytes())


def read_stl(path: Path) -> np.ndarray:
    """The triangles of a binary STL."""
    data = path.read_bytes()
    count = int(np.frombuffer(data, "<u4", 1, 80)[0])
    record = np.frombuffer(data, [("n", "<f4", 3), ("v", "<f4", 9), ("a", "<u2")], count, 84)
    return record["v"].astype(float).reshape(-1, 3, 3)


def run(args: list[str], cwd: Path, code: Path, limit: int) -> tuple[int, str, str, float]:
    """Exit status, standard output, wall / CPU time (s) and peak RSS (MB) of `python -m
    pipeline` (CPU time: the machine may be shared)."""
    env = {**os.environ, "PYTHONPATH": str(code)}

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "pipeline", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=cap,
    )
    out = child.stdout.read() if child.stdout else ""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = f"{time.perf_counter() - start:.1f} / {usage.ru_utime + usage.ru_stime:.1f}"
    return os.waitstatus_to_exitcode(status), out, seconds, usage.ru_maxrss / 1024


def _digest(path: Path) -> str:
    """The first 8 hex digits of the SHA-256 of link_2's spheres in the file."""
    spheres = json.loads(path.read_text())["links"][LINK]["spheres"]
    return hashlib.sha256(json.dumps(spheres).encode()).hexdigest()[:8]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the tree whose pipeline/ runs")
    parser.add_argument("--scratch", type=Path, help="folder of the scratch robot (kept)")
    parser.add_argument("--sizes", default="50000,250000,1000000")
    parser.add_argument("--kinds", default="unshared,exploded,scattered")
    parser.add_argument("--limit-gb", type=float, default=8.0, help="RLIMIT_AS of each run")
    args = parser.parse_args()
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="soups-"))
    code, limit = args.code.resolve(), int(args.limit_gb * 2**30)
    folder = scratch / "robots" / ROBOT
    if not folder.exists():
        shutil.copytree(ROOT / "robots" / ROBOT, folder)
    mesh = folder / "meshes" / MESH
    shipped = scratch / "shipped.stl"
    if not shipped.exists():
        shutil.copyfile(mesh, shipped)
    print(f"code: {code}; scratch: {scratch}; limit {args.limit_gb:g} GB")
    print(
        "| soup | triangles | refit wall / CPU s | peak MB | verify wall / CPU s | peak MB "
        "| excess ± se | verify --samples 0 wall / CPU s | peak MB | spheres |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            triangles = soup(kind, size, read_stl(shipped))
            write_stl(mesh, triangles)
            cells = [kind, str(len(triangles))]
            for command in (
                ["spheres", "refit", ROBOT],
                ["--json", "spheres", "verify", ROBOT],
                ["spheres", "verify", ROBOT, "--samples", "0"],
            ):
                status, out, seconds, peak = run(command, scratch, code, limit)
                cells += [seconds + ("" if status == 0 else f" (exit {status})")]
                cells += [f"{peak:.0f}"]
                if "--json" in command:
                    rows = json.loads(out) if status == 0 else []
                    row = next((r for r in rows if r["link"] == LINK), None)
                    excess = (
                        "-"
                        if row is None or row["excess_ratio"] is None
                        else (f"{row['excess_ratio']:.4f} ± {row['excess_se']:.4f}")
                    )
                    cells.append(excess)
            cells.append(_digest(scratch / "build" / "robots" / ROBOT / "spheres.json"))
            print("| " + " | ".join(cells) + " |", flush=True)
    shutil.copyfile(shipped, mesh)


if __name__ == "__main__":
    main()
