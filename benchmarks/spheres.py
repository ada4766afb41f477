"""Benchmark the sphere fitter on every link of the shipped robots against two baselines.

Run from the repository root: `python benchmarks/spheres.py` (prints a Markdown table);
`python benchmarks/spheres.py --robots-dir DIR [MODEL_ID ...]` measures the robot folders
(`DIR/<model_id>/robot.urdf`, laid out as `robots/`) of another tree, or only some of them.
`--fit-only` measures the fit alone: no baselines, no build timings (each build fits every
link again, twice; on a machine shared with others they took most of the run).
Per link: sphere count, proven coverage (share of the surface area proven inside the union),
worst gap bound, excess ratio (Monte Carlo, +- standard error) and fit time, for
- `fit`: pipeline.spheres.fit with the robot's settings (default 16 spheres);
- `mbs`: one minimum bounding sphere of the link's vertices (trimesh);
- `kmeans`: k-means of surface samples with the fit's sphere count, each radius the largest
  distance to its assigned samples.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import trimesh

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.spheres.build import build_spheres  # noqa: E402
from pipeline.spheres.checks import excess_ratio  # noqa: E402
from pipeline.spheres.finish import grow_until_proven  # noqa: E402
from pipeline.spheres.fit import fit_link  # noqa: E402
from pipeline.spheres.geometry import Array, LinkGeometry, collision_links, load_link_geometry  # noqa: E402
from pipeline.spheres.prove import prove  # noqa: E402
from pipeline.spheres.provenance import read_sources  # noqa: E402
from pipeline.urdf import load_robot  # noqa: E402

SAMPLES = 200_000


def minimum_bounding_sphere(geometry: LinkGeometry) -> tuple[Array, Array]:
    """One sphere: trimesh's minimum n-sphere of every hull point of the surface."""
    points = np.concatenate([p.hull().reshape(-1, 3) for p in geometry.patches])
    center, radius = trimesh.nsphere.minimum_nsphere(np.unique(points, axis=0))
    return np.array([center]), np.array([radius * (1 + 1e-9) + 1e-9])


def kmeans_spheres(geometry: LinkGeometry, k: int, seed: int = 0) -> tuple[Array, Array]:
    """k-means of surface samples; each radius the largest distance to its assigned samples."""
    lo, hi = geometry.bounds()
    points = geometry.surface_points(float(np.linalg.norm(hi - lo)) / 40)
    rng = np.random.default_rng(seed)
    centers = points[rng.choice(len(points), size=k, replace=False)]
    for _ in range(30):
        label = np.argmin(((points[:, None] - centers[None]) ** 2).sum(axis=2), axis=1)
        for j in range(k):
            if (label == j).any():
                centers[j] = points[label == j].mean(axis=0)
    label = np.argmin(((points[:, None] - centers[None]) ** 2).sum(axis=2), axis=1)
    radii = np.zeros(k)
    np.maximum.at(radii, label, np.linalg.norm(points - centers[label], axis=1))
    return centers, radii


def measure(geometry: LinkGeometry, centers: Array, radii: Array) -> dict[str, float]:
    """Count, proven coverage share, gap bound and excess of one set of spheres."""
    proof = prove(geometry, centers, radii)
    excess, se = excess_ratio(geometry, centers, radii, SAMPLES)
    return {
        "count": len(radii),
        "covered": 1.0 - proof.uncovered_fraction(geometry),
        "proven": float(proof.proven),
        "gap": proof.gap,
        "excess": excess,
        "se": se,
    }


def robot_folders(robots_dir: Path, only: list[str]) -> list[Path]:
    """The robot folders to measure: every one with a robot.urdf, or those named."""
    folders = sorted(f for f in robots_dir.iterdir() if (f / "robot.urdf").is_file())
    return [f for f in folders if not only or f.name in only]


def main(argv: list[str] | None = None) -> None:
    """Fit and measure every link; print the table and the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots-dir", type=Path, default=ROOT / "robots")
    parser.add_argument(
        "--fit-only",
        action="store_true",
        help="measure the fit alone: no minimum bounding sphere or k-means baseline, no build "
        "timings",
    )
    parser.add_argument("model_ids", nargs="*", help="only these robots (default: all)")
    args = parser.parse_args(argv)
    folders = robot_folders(args.robots_dir.resolve(), args.model_ids)
    rows = []
    for folder in folders:
        robot = load_robot(folder, folder.parent.parent)
        sources = read_sources(robot, folder)
        for link in collision_links(robot):
            geometry = load_link_geometry(link, folder, sources.folder_display)
            start, cpu = time.perf_counter(), time.process_time()
            centers, radii = fit_link(geometry, sources.params[link.name])
            seconds = time.perf_counter() - start
            cpu = time.process_time() - cpu
            ours = measure(geometry, centers, radii) | {"time": seconds, "cpu": cpu}
            if args.fit_only:
                rows.append((f"{robot.name}/{link.name}", ours, None, None))
                print(f"measured {robot.name}/{link.name}", file=sys.stderr, flush=True)
                continue
            start = time.perf_counter()
            one_sphere = minimum_bounding_sphere(geometry)
            one_time = time.perf_counter() - start  # the fit alone, as for the others
            one = measure(geometry, *one_sphere) | {"time": one_time}
            start = time.perf_counter()
            km_spheres = kmeans_spheres(geometry, len(radii))
            km_time = time.perf_counter() - start
            km = measure(geometry, *km_spheres) | {"time": km_time}
            grown = grow_until_proven(geometry, *km_spheres)
            km["grown"] = measure(geometry, km_spheres[0], grown)["excess"]
            rows.append((f"{robot.name}/{link.name}", ours, one, km))
            print(f"measured {robot.name}/{link.name}", file=sys.stderr, flush=True)
    if args.fit_only:
        _print_fit_only(rows)
        return
    print(
        "| link | fit: spheres | proven coverage | gap bound (mm) | excess ± se "
        "| fit wall / CPU (s) "
        "| mbs: excess | mbs: proven | k-means: excess | k-means: proven, gap (mm) "
        "| k-means grown to proof: excess |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, ours, one, km in rows:
        print(
            f"| {name} | {ours['count']} | {100 * ours['covered']:.2f}% "
            f"{'(proven)' if ours['proven'] else '(NOT proven)'} | {1000 * ours['gap']:.3f} "
            f"| {ours['excess']:.3f} ± {ours['se']:.3f} | {ours['time']:.2f} / {ours['cpu']:.2f} "
            f"| {one['excess']:.3f} | {'yes' if one['proven'] else 'no'} "
            f"| {km['excess']:.3f} ± {km['se']:.3f} "
            f"| {'yes' if km['proven'] else 'no'}, {1000 * km['gap']:.3f} | {km['grown']:.3f} |"
        )
    for label, index in (("fit", 1), ("minimum bounding sphere", 2), ("k-means", 3)):
        excess = [row[index]["excess"] for row in rows]  # type: ignore[index]
        times = [row[index]["time"] for row in rows]  # type: ignore[index]
        proven = sum(int(row[index]["proven"]) for row in rows)  # type: ignore[index]
        print(
            f"\n{label}: links {len(rows)}, proven {proven}/{len(rows)}, "
            f"excess median {statistics.median(excess):.3f} worst {max(excess):.3f}, "
            f"time median {statistics.median(times):.2f} s worst {max(times):.2f} s",
            end="",
        )
    cpu = [row[1]["cpu"] for row in rows]  # type: ignore[index]
    print(f"\nfit CPU time: median {statistics.median(cpu):.2f} s worst {max(cpu):.2f} s", end="")
    grown = [row[3]["grown"] for row in rows]  # type: ignore[index]
    print(f"\nk-means grown to proof: excess median {statistics.median(grown):.3f}", end="")
    print(f" worst {max(grown):.3f}")
    for folder in folders:
        seconds, links = build_time(folder)
        print(
            f"build from scratch, 2 worker processes: {folder.name} {links} links in "
            f"{seconds:.1f} s ({seconds / links:.2f} s per link); rebuild with nothing changed: "
            f"{rebuild_time(folder):.2f} s, fitted nothing"
        )


def _print_fit_only(rows: list[tuple[str, Any, Any, Any]]) -> None:
    """The fit's columns of the table, and its summary."""
    print(
        "| link | fit: spheres | proven coverage | gap bound (mm) | excess ± se "
        "| fit wall / CPU (s) |"
    )
    print("|---|---|---|---|---|---|")
    for name, ours, _, _ in rows:
        print(
            f"| {name} | {ours['count']} | {100 * ours['covered']:.2f}% "
            f"{'(proven)' if ours['proven'] else '(NOT proven)'} | {1000 * ours['gap']:.3f} "
            f"| {ours['excess']:.3f} ± {ours['se']:.3f} | {ours['time']:.2f} / {ours['cpu']:.2f} |"
        )
    excess = [row[1]["excess"] for row in rows]
    cpu = [row[1]["cpu"] for row in rows]
    proven = sum(int(row[1]["proven"]) for row in rows)
    print(
        f"\nfit: links {len(rows)}, proven {proven}/{len(rows)}, excess median "
        f"{statistics.median(excess):.3f} worst {max(excess):.3f}; fit CPU time: median "
        f"{statistics.median(cpu):.2f} s worst {max(cpu):.2f} s"
    )


def build_time(folder: Path) -> tuple[float, int]:
    """Wall time of build_spheres from nothing with two worker processes, and links fitted."""
    root = folder.parent.parent
    robot = load_robot(folder, root)
    start = time.perf_counter()
    _, report = build_spheres(robot, folder, root, None, workers=2)
    return time.perf_counter() - start, len(report.fitted)


def rebuild_time(folder: Path) -> float:
    """Wall time of build_spheres when the previous file is current (must fit nothing)."""
    root = folder.parent.parent
    robot = load_robot(folder, root)
    data, _ = build_spheres(robot, folder, root, None, workers=2)
    start = time.perf_counter()
    _, report = build_spheres(robot, folder, root, data, workers=2)
    assert report.fitted == (), report
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
