"""Measure builds at scale: K synthetic robots and C synthetic cells, one table.

Synthesises K robots (copies of the shipped examples under new model ids) and C cells (copies
of the shipped cells, pointed at those robots, pins recomputed) in a scratch checkout, then
measures in one run: a full build, a no-op, `pipeline check` (also in a git clone of the built
checkout, as CI runs it), a touch of every source, one generator change and one calibration
change, beside the floor: a Python process that reads and SHA-256-hashes every input once. Each
figure is wall time and the peak RSS of that process; the cheap ones are the median of --repeat
runs, because the machine may be shared. "x floor" divides by the floor measured once at the
start; "x paired" is the median, over the --repeat runs, of each run divided by a floor run just
before it, so that a drift of the machine's speed within the run moves both alike.

    python benchmarks/scale.py --robots 100 --cells 500

Copies share their meshes, so the digest and byte caches see each mesh once. To measure a fleet
of distinct robots instead, give folders of robot and cell sources: every folder in them is added
as it is, and nothing is synthesised (the full build then fits every robot's spheres):

    python benchmarks/scale.py --robots-dir ../fleet/robots --cells-dir ../fleet/cells

`--python` runs every measured command with another interpreter that has the dependencies, as a
fresh virtual environment's (`python -m venv v && v/bin/pip install -e .`): the shared
interpreter of a developer machine or sandbox may carry hundreds of packages, whose metadata
doit's plugin loader reads at every start.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pipeline.plan import plan  # noqa: E402
from pipeline.stamps import stamp_bytes  # noqa: E402

TEXT_SUFFIXES = {".urdf", ".py", ".json", ".srdf"}
# argv[1]: a file listing the build's inputs, one path a line; argv[2:]: folders read whole
FLOOR = """
import hashlib, os, sys
with open(sys.argv[1], encoding='utf-8') as listing:
    paths = listing.read().splitlines()
for top in sys.argv[2:]:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        paths += [os.path.join(dirpath, name) for name in sorted(filenames)]
for path in paths:
    with open(path, 'rb') as handle:
        hashlib.sha256(handle.read()).hexdigest()
"""


def rename_tree(folder: Path, old: str, new: str) -> None:
    """Replace a model or cell id in every text file of a copied source folder."""
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            text = path.read_text(encoding="utf-8")
            if old in text:
                path.write_text(text.replace(old, new), encoding="utf-8")


def repin(cell: Path) -> None:
    """Recompute a cell's calibration pin after its calibration file was rewritten."""
    machine_path = cell / "machine.json"
    machine = json.loads(machine_path.read_text())
    pin = machine.get("robot", {}).get("machine_planning_calibration")
    if pin:
        pin["sha256"] = hashlib.sha256((cell / pin["path"]).read_bytes()).hexdigest()
        machine_path.write_text(json.dumps(machine, indent=2, sort_keys=True) + "\n")


def lay_out(work: Path) -> None:
    """Copy the shipped checkout (sources, code, committed build/) into the scratch folder."""
    for name in ("pipeline", "robots", "cells", "build"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("dodo.py", ".gitignore", ".gitattributes"):
        shutil.copy2(REPO / name, work / name)


def seed_spheres(work: Path, spheres: Path, model_id: str) -> None:
    """Give a synthesised robot its example's spheres.json, and a stamp that vouches for it.

    The spheres step reuses a previous spheres.json only when its stamp recorded those bytes (a
    hand-edited file is refitted whole); the stamp's empty inputs make the step run and restamp.
    """
    target = f"build/robots/{model_id}/spheres.json"
    data = spheres.read_bytes()
    (work / target).parent.mkdir(parents=True, exist_ok=True)
    (work / target).write_bytes(data)
    stamp = work / "build" / "stamps" / "spheres" / f"{model_id}.json"
    outputs = {target: hashlib.sha256(data).hexdigest()}
    stamp.write_bytes(stamp_bytes(f"spheres:{model_id}", {}, outputs))


def add_folders(work: Path, kind: str, source: Path) -> list[str]:
    """Copy every folder of `source` into the scratch checkout's robots/ or cells/, as it is."""
    ids = []
    for folder in sorted(p for p in source.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if (work / kind / folder.name).exists():
            sys.exit(f"{kind}/{folder.name} is shipped already; rename the one in {source}")
        shutil.copytree(folder, work / kind / folder.name, symlinks=True)
        ids.append(folder.name)
    return ids


def synthesise(work: Path, robots: int, cells: int) -> tuple[list[str], list[str]]:
    """Add K robots and C cells to a laid-out scratch checkout; return their ids."""
    examples = sorted(p.name for p in (REPO / "robots").iterdir() if p.is_dir())
    model_ids = []
    for i in range(robots):
        base = examples[i % len(examples)]
        new = f"{base}_k{i:03d}"
        shutil.copytree(work / "robots" / base, work / "robots" / new)
        rename_tree(work / "robots" / new, base, new)
        spheres = work / "build" / "robots" / base / "spheres.json"
        if spheres.is_file():  # the examples' fit, so the full build restamps instead of fitting
            seed_spheres(work, spheres, new)
        model_ids.append(new)
    cell_ids = []
    base_cells = (
        sorted(p.name for p in (REPO / "cells").iterdir()) if (REPO / "cells").is_dir() else []
    )
    for j in range(cells if base_cells else 0):
        base = base_cells[j % len(base_cells)]
        machine = json.loads((REPO / "cells" / base / "machine.json").read_text())
        model = machine["robot"]["model_id"]
        targets = [m for m in model_ids if m.startswith(model + "_k")]
        new = f"{base}_c{j:03d}"
        shutil.copytree(work / "cells" / base, work / "cells" / new)
        rename_tree(work / "cells" / new, base, new)
        if targets:
            rename_tree(work / "cells" / new, model, targets[j % len(targets)])
        repin(work / "cells" / new)
        cell_ids.append(new)
    return model_ids, cell_ids


Run = tuple[float, float, int, str, float]  # wall s, peak MB, tasks run, output, CPU s
Row = tuple[str, Run, float | None]  # name, run, median ratio to the floor run just before


def write_inputs(work: Path, listing: Path) -> None:
    """List every file a build step reads outside build/ (the plan's inputs) for the floor.

    Only the inputs: not Python's bytecode caches under pipeline/ (which the benchmark's own runs
    write), nor the LICENSE and NOTICE files and command-line modules no step reads.
    """
    inputs = {path for step in plan(work) for path in step.inputs if not path.startswith("build/")}
    present = sorted(path for path in inputs if (work / path).is_file())
    listing.write_text("".join(f"{path}\n" for path in present), encoding="utf-8")


def measure(work: Path, args: list[str]) -> Run:
    """Run one command; wall seconds, peak RSS in MB, tasks executed, its output, CPU seconds.

    Peak RSS and CPU are what wait4 reports: the process's own, or for a build that starts
    worker processes, the largest RSS of it and its workers and the CPU time of all of them.
    A command that exits other than 0 stops the benchmark: a failed build (doit's 1) or a
    check that finds build/ stale (1) would otherwise be timed as if it had done its work.
    """
    env = {**os.environ, "PYTHONPATH": str(work)}
    # a user's checkout keeps Python's bytecode caches; without them each run compiles pipeline/
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    proc = subprocess.Popen(
        args, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(args)} failed:\n{out[-3000:]}")
    ran = sum(1 for line in out.splitlines() if line.startswith(".  "))
    return seconds, usage.ru_maxrss / 1024, ran, out, usage.ru_utime + usage.ru_stime


def median_of(
    work: Path, args: list[str], repeat: int, before: Callable[[], None] | None = None
) -> Run:
    """The run with the median wall time of `repeat` runs (each after `before`, if given)."""
    runs = []
    for _ in range(repeat):
        if before is not None:
            before()
        runs.append(measure(work, args))
    return sorted(runs, key=lambda run: run[0])[len(runs) // 2]


def paired(
    name: str,
    work: Path,
    args: list[str],
    repeat: int,
    floor_args: list[str],
    before: Callable[[], None] | None = None,
) -> Row:
    """A row measured as median_of does, each run just after a floor run in the same folder.

    The machine's speed drifts within a run; the median of the per-pair ratios compares each
    run with the floor of the same moment.
    """
    runs, ratios = [], []
    for _ in range(repeat):
        floor = measure(work, floor_args)
        if before is not None:
            before()
        runs.append(measure(work, args))
        ratios.append(runs[-1][0] / floor[0])
    run = sorted(runs, key=lambda run: run[0])[len(runs) // 2]
    return name, run, sorted(ratios)[len(ratios) // 2]


def touch_sources(work: Path) -> None:
    """Set every source file's mtime to now without changing a byte."""
    for top in ("robots", "cells"):
        for dirpath, _, filenames in os.walk(work / top):
            for name in filenames:
                os.utime(os.path.join(dirpath, name))


def move_tcp(generator: Path) -> bool:
    """Move the generator's first TCP (`"xyz": "x y z"`) 1 mm along z; False if it has none."""
    text = generator.read_text(encoding="utf-8")
    found = re.search(r'"xyz": "([^"]*)"', text)
    if found is None:
        return False
    *xy, z = found.group(1).split()
    moved = " ".join([*xy, repr(round(float(z) + 0.001, 9))])
    generator.write_text(text[: found.start(1)] + moved + text[found.end(1) :], encoding="utf-8")
    return True


def nudge_calibration(calibration: Path) -> None:
    """Change one calibrated value: the first origin correction by 0.1 mm, else a joint limit."""
    data = json.loads(calibration.read_text(encoding="utf-8"))
    kinematics = data.get("kinematics") or {}
    if kinematics:
        xyz = next(iter(kinematics.values()))["xyz_m"]
        xyz[0] = round(xyz[0] + 0.0001, 9)
    else:
        limit = next(iter(data["limits"]["joints"].values()))
        limit["lower_rad"] = round(limit["lower_rad"] + 0.001, 9)  # narrower, still inside
    calibration.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def git(args: list[str], cwd: Path) -> None:
    """Run one git command quietly; stop the benchmark if it fails."""
    subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args],
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def fresh_clone(
    work: Path, doit: list[str], check: list[str], n: int, floor_args: list[str]
) -> list[Row]:
    """Commit the built checkout, clone it as CI does, and measure check and doit there."""
    if shutil.which("git") is None:
        return []
    git(["init", "-q"], work)
    git(["add", "-A"], work)
    git(["commit", "-qm", "scale"], work)
    clone = Path(tempfile.mkdtemp(prefix="scale-clone-")) / "repo"
    try:
        git(["clone", "-q", str(work), str(clone)], work)
        caches = [clone / ".pipeline-digests", clone / ".pipeline-digests-build"]
        rows: list[Row] = [
            paired(
                "fresh git clone: pipeline check (no digest cache)",
                clone,
                check,
                n,
                floor_args,
                lambda: [cache.unlink(missing_ok=True) for cache in caches],
            ),
            ("fresh git clone: first doit", measure(clone, doit), None),
            paired("fresh git clone: no-op doit (second and later)", clone, doit, n, floor_args),
        ]
        status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True)
        if status.stdout:
            sys.exit(f"doit rewrote files of a current clone:\n{status.stdout.decode()[:2000]}")
    finally:
        shutil.rmtree(clone.parent)
    return rows


def main() -> None:
    """Synthesise, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=100)
    parser.add_argument("--cells", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5, help="runs per cheap measurement")
    parser.add_argument("--keep", action="store_true", help="keep the scratch checkout")
    parser.add_argument(
        "--robots-dir", type=Path, help="add these robot folders instead of synthesising copies"
    )
    parser.add_argument(
        "--cells-dir", type=Path, help="add these cell folders instead of synthesising copies"
    )
    parser.add_argument(
        "--python",
        type=Path,
        help="run the measured commands with this interpreter (default: this one), for example "
        "a fresh virtual environment's: the fixed cost is mostly start-up and installed packages",
    )
    opts = parser.parse_args()
    py = str(opts.python) if opts.python else sys.executable
    work = Path(tempfile.mkdtemp(prefix="scale-"))
    listing = Path(tempfile.mkdtemp(prefix="scale-inputs-")) / "inputs.txt"
    try:
        doit, check = [py, "-m", "doit"], [py, "-m", "pipeline", "check"]
        n = opts.repeat
        lay_out(work)
        measure(work, doit)  # doit's own state, as on a developer's checkout
        shipped: list[Row] = [
            (
                "shipped repo: bare interpreter (python -c pass)",
                median_of(work, [py, "-c", "pass"], n),
                None,
            ),
            (  # what this machine's site-packages start-up (its .pth files) adds to every process
                "shipped repo: bare interpreter, no site (-S)",
                median_of(work, [py, "-S", "-c", "pass"], n),
                None,
            ),
            ("shipped repo: fixed cost, doit list", median_of(work, [*doit, "list"], n), None),
            ("shipped repo: no-op doit", median_of(work, doit, n), None),
            (
                "shipped repo: fixed cost, pipeline --help",
                median_of(work, [py, "-m", "pipeline", "--help"], n),
                None,
            ),
        ]
        if opts.robots_dir or opts.cells_dir:
            model_ids = add_folders(work, "robots", opts.robots_dir) if opts.robots_dir else []
            cell_ids = add_folders(work, "cells", opts.cells_dir) if opts.cells_dir else []
        else:
            model_ids, cell_ids = synthesise(work, opts.robots, opts.cells)
        rows: list[Row] = []
        write_inputs(work, listing)
        floor_args = [py, "-c", FLOOR, str(listing)]
        floor = median_of(work, floor_args, n)
        rows.append(("hash floor (read + SHA-256 every input once)", floor, None))
        # the floor needs only the standard library: without site-packages' start-up, the part
        # of it that is this machine's Python start-up rather than reading and hashing
        floor_bare = median_of(work, [py, "-S", "-c", FLOOR, str(listing)], n)
        rows.append(("hash floor, no site (-S)", floor_bare, None))
        rows.append(("full build", measure(work, doit), None))
        # what a check of a fresh clone reads at least: the sources and all of build/
        everything = [*floor_args, "build"]
        rows.append(
            ("reference: read + SHA-256 inputs and build/", median_of(work, everything, n), None)
        )
        time.sleep(2.5)  # let the last outputs age out of the digest cache's racy window
        rows.append(paired("no-op doit", work, doit, n, floor_args))
        caches = [work / ".pipeline-digests", work / ".pipeline-digests-build"]
        rows.append(  # no digest cache, in a folder that is not a git checkout
            paired(
                "pipeline check, cold digest cache",
                work,
                check,
                n,
                floor_args,
                lambda: [cache.unlink(missing_ok=True) for cache in caches],
            )
        )
        # nothing remembered at all (a folder copied without .git): no digest cache and no
        # record of what the build left, so every output of build/ is read
        record = work / ".pipeline-outputs"
        kept = record.read_bytes()
        rows.append(
            paired(
                "pipeline check, no digest cache, no output record",
                work,
                check,
                n,
                floor_args,
                lambda: [path.unlink(missing_ok=True) for path in [*caches, record]],
            )
        )
        record.write_bytes(kept)  # the build's record back: the later rows are a developer's
        rows.append(paired("pipeline check, warm digest cache", work, check, n, floor_args))
        rows += fresh_clone(work, doit, check, n, floor_args)
        rows.append(paired("fixed cost: doit list", work, [*doit, "list"], n, floor_args))
        pipeline_help = [py, "-m", "pipeline", "--help"]
        rows.append(paired("fixed cost: pipeline --help", work, pipeline_help, n, floor_args))
        rows.append(
            paired(
                "touch every source, then doit",
                work,
                doit,
                n,
                floor_args,
                lambda: touch_sources(work),
            )
        )
        # the touched sources' stats are saved only once they are out of the racy window
        time.sleep(2.5)
        if measure(work, doit)[2]:  # the first run after that saves them, as a user's would
            sys.exit("a touched source rebuilt something")
        served = [
            json.loads((work / "cells" / c / "machine.json").read_text())["robot"]["model_id"]
            for c in cell_ids
        ]
        # a robot that cells serve, if any
        model = served[-1] if served else (model_ids or ["abb_irb2400"])[0]
        generator = work / "robots" / model / "srdf.py"
        if generator.is_file() and move_tcp(generator):
            srdf = work / "build" / "robots" / model / "robot.srdf"
            before = srdf.read_bytes()
            run = measure(work, doit)
            if srdf.read_bytes() == before:
                sys.exit(f"moving a TCP in {model}'s srdf.py left its robot.srdf unchanged")
            rows.append(
                (f"one generator changed ({model}, {served.count(model)} cells)", run, None)
            )
        pinned = [
            c
            for c in cell_ids
            if "machine_planning_calibration" in (work / "cells" / c / "machine.json").read_text()
        ]
        if pinned:
            cell = work / "cells" / pinned[0]
            machine = json.loads((cell / "machine.json").read_text())
            calibration = cell / machine["robot"]["machine_planning_calibration"]["path"]
            nudge_calibration(calibration)
            repin(cell)
            rows.append((f"one calibration changed ({pinned[0]})", measure(work, doit), None))
        rows += shipped
        floor_s = floor[0]
        robots = len(list((work / "robots").iterdir()))
        cells = len(list((work / "cells").iterdir())) if (work / "cells").is_dir() else 0
        print(
            f"robots: {robots}, cells: {cells}, cores: {os.cpu_count()}, "
            f"python {sys.version.split()[0]}"
        )
        print(
            f"| {'operation':<48} | {'seconds':>8} | {'x floor':>7} | {'x paired':>8} | "
            f"{'CPU s':>7} | {'peak MB':>7} | {'tasks run':>9} |"
        )
        print(f"|{'-' * 50}|{'-' * 10}|{'-' * 9}|{'-' * 10}|{'-' * 9}|{'-' * 9}|{'-' * 11}|")
        for name, (seconds, peak, ran, _, cpu), ratio in rows:
            pair = f"{ratio:8.2f}" if ratio is not None else f"{'-':>8}"
            print(
                f"| {name:<48} | {seconds:8.3f} | {seconds / floor_s:7.2f} | {pair} | "
                f"{cpu:7.3f} | {peak:7.1f} | {ran:9d} |"
            )
    finally:
        if opts.keep:
            print(f"scratch checkout kept at {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(listing.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
