"""Crash safety: doit killed with SIGKILL anywhere in a build loses nothing and shows no torn file.

tests/killshim.py runs doit and kills it at the N-th write event (half-way through a temporary
file, before or after a rename into place, half-way through doit's database dump). After each
kill, every file under its final name in build/ must hold exactly the bytes a clean build gives
(or, for a rebuild, the bytes it held before), and the next plain `doit` must give a build/
byte-identical to a clean build, with no temporary file left and a readable doit database.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.lock import LOCK_NAME, MARK
from pipeline.session import is_temp_name
from tests.conftest import REPO, run_doit, run_python, tree_bytes

SHIM = Path(__file__).with_name("killshim.py")
SEED = 8
# Independent kills each cost about one full build (sphere fitting included); the chained test
# below gets its >= 20 kills for about the price of one build.
POINTS = 3
CHAINED_KILLS = 24


def run_shim(project: Path, target: int, log: Path) -> subprocess.CompletedProcess[str]:
    """Run doit under the kill shim, dying at write event `target` (never when < 0)."""
    return run_python(project, str(SHIM), str(target), str(log))


def events(log: Path) -> list[tuple[int, str, str]]:
    """The counted events of a shim log: (index, kind, path)."""
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        _, index, kind, path = line.split(" ", 3)
        if index != "-":
            out.append((int(index), kind, path))
    return out


def split_temps(files: dict[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    """Files under their final names, and the names of leftover temporary files."""
    finals = {p: b for p, b in files.items() if not is_temp_name(p.rsplit("/", 1)[-1])}
    return finals, sorted(set(files) - set(finals))


def check_exit(project: Path) -> int:
    cwd = Path.cwd()
    os.chdir(project)
    try:
        return main(["check"])
    finally:
        os.chdir(cwd)


def assert_recovers(project: Path, reference: dict[str, bytes]) -> None:
    """The next plain doit completes, gives the reference build/ and leaves clean state."""
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert tree_bytes(project / "build") == reference
    db = json.loads((project / ".doit.db").read_text(encoding="utf-8"))
    assert isinstance(db, dict) and db
    again = run_doit(project)
    assert again.returncode == 0 and "\n.  " not in "\n" + again.stdout


def test_leftover_temporaries_reported_by_check_and_removed_by_doit(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a killed run left is reported by check, and removed by the next run it warns."""
    before = tree_bytes(project / "build")
    meshes = project / "build" / "robots" / "abb_irb2400" / "meshes"
    (meshes / ".link_1.stl.k3j9x_a2.tmp").write_bytes(b"solid half")
    (project / "build" / "stamps" / ".robots.json.abcdefgh.tmp").write_bytes(b"{")
    (project / ".pipeline-digests.4242.tmp").write_bytes(b"pipeline digests 2")
    (project / LOCK_NAME).write_text(MARK)  # what the killed run left in the lock file
    assert check_exit(project) == 1
    lines = capsys.readouterr().out.splitlines()
    assert (
        "extra: build/robots/abb_irb2400/meshes/.link_1.stl.k3j9x_a2.tmp "
        "(temporary file of an interrupted build; the next `doit` removes it)"
    ) in lines
    result = run_doit(project)
    assert result.returncode == 0
    assert "removed 3 temporary file(s)" in result.stderr
    assert not (project / ".pipeline-digests.4242.tmp").exists()
    assert tree_bytes(project / "build") == before
    assert check_exit(project) == 0


def test_every_input_is_a_doit_dependency_and_a_dangling_link_is_refused_by_its_step(
    project: Path,
) -> None:
    """doit would stop the whole run on a dangling file_dep; its step refuses it instead."""
    from pipeline.plan import plan
    from pipeline.tasks import doit_task

    before = tree_bytes(project / "build")
    dangling = "robots/abb_irb2400/robot.urdf"
    (project / dangling).unlink()
    (project / dangling).symlink_to(project / "gone.urdf")
    for step in plan(project):
        assert doit_task(project, step)["file_dep"] == list(step.inputs), step.name
    result = run_doit(project)
    assert result.returncode == 2, result.stdout + result.stderr
    out = result.stdout + result.stderr
    assert "Traceback" not in out and "does not exist" not in out
    assert any(line.startswith(f"{dangling}:") for line in result.stdout.splitlines()), out
    assert tree_bytes(project / "build") == before


def _fresh(project: Path) -> None:
    shutil.rmtree(project / "build", ignore_errors=True)
    (project / ".doit.db").unlink(missing_ok=True)


@pytest.mark.slow
def test_sigkill_at_seeded_points_of_a_full_build(project: Path, tmp_path: Path) -> None:
    """SIGKILL at seeded write events and at the db dump of a build from empty, then recover."""
    reference = tree_bytes(REPO / "build")
    _fresh(project)
    count_log = tmp_path / "count.log"
    full = run_shim(project, -1, count_log)
    assert full.returncode == 0, full.stdout + full.stderr
    assert tree_bytes(project / "build") == reference
    trace = events(count_log)
    dumps = [index for index, kind, _ in trace if kind == "db-dump"]
    rng = random.Random(SEED)
    points = list(dumps)
    for wanted in ("tmp-write", "replace", "replaced"):
        # renames into build/ only: the digest cache beside it is saved or not by file age
        writes = [
            i
            for i, kind, path in trace
            if kind == wanted and (kind == "tmp-write" or "/build/" in path)
        ]
        assert len(writes) >= POINTS // 3
        points += rng.sample(writes, POINTS // 3)
    points.sort()
    kinds: set[str] = set()
    for point in points:
        _fresh(project)
        log = tmp_path / f"kill-{point}.log"
        killed = run_shim(project, point, log)
        assert killed.returncode == -signal.SIGKILL, (point, killed.stdout, killed.stderr)
        last = events(log)[-1]
        assert last[0] == point
        kinds.add(last[1])
        finals, temps = split_temps(tree_bytes(project / "build"))
        # No reader sees a torn file: whatever has its final name holds the final bytes.
        torn = [p for p, data in finals.items() if reference.get(p) != data]
        assert torn == [], (point, last)
        if last[1] == "db-dump":
            assert finals == reference and temps == []
        # pipeline check tells the truth about the interrupted build/.
        complete = finals == reference and temps == []
        assert check_exit(project) == (0 if complete else 1), (point, last)
        assert_recovers(project, reference)
    assert kinds == {"tmp-write", "replace", "replaced", "db-dump"}


@pytest.mark.slow
def test_sigkill_during_a_rebuild_keeps_each_file_old_or_new(project: Path, tmp_path: Path) -> None:
    """Killed while rebuilding after a source change, every output is its old or its new bytes."""
    old = tree_bytes(project / "build")
    mesh = project / "robots" / "lbr_iiwa_14_r820" / "meshes" / "link_3.stl"
    original = mesh.read_bytes()
    # a binary STL's 80-byte header is free text: new bytes, same geometry (restamp, no refit)
    mesh.write_bytes(original[:10] + bytes([original[10] ^ 1]) + original[11:])
    count_log = tmp_path / "count.log"
    assert run_shim(project, -1, count_log).returncode == 0
    new = tree_bytes(project / "build")
    assert new != old
    trace = [i for i, kind, path in events(count_log) if kind == "tmp-write" or "/build/" in path]
    points = sorted(random.Random(SEED).sample(trace, min(10, len(trace))))
    snapshot = tmp_path / "old-build"
    shutil.copytree(REPO / "build", snapshot)
    for point in points:
        shutil.rmtree(project / "build")
        shutil.copytree(snapshot, project / "build")
        (project / ".doit.db").unlink(missing_ok=True)
        killed = run_shim(project, point, tmp_path / f"kill-{point}.log")
        assert killed.returncode == -signal.SIGKILL
        finals, _ = split_temps(tree_bytes(project / "build"))
        mixed = [p for p, data in finals.items() if data not in (old.get(p), new.get(p))]
        assert mixed == [], point
        assert_recovers(project, new)


@pytest.mark.slow
def test_build_killed_again_and_again_still_completes_byte_identical(
    project: Path, tmp_path: Path
) -> None:
    """Each run is SIGKILLed after a seeded number of writes, until one completes (>= 20 kills)."""
    reference = tree_bytes(REPO / "build")
    _fresh(project)
    count_log = tmp_path / "count.log"
    assert run_shim(project, -1, count_log).returncode == 0
    total = len(events(count_log))
    _fresh(project)
    rng = random.Random(SEED)
    kills = 0
    for attempt in range(10 * CHAINED_KILLS):
        log = tmp_path / f"run-{attempt}.log"
        result = run_shim(project, rng.randrange(max(1, total // CHAINED_KILLS)), log)
        finals, _ = split_temps(tree_bytes(project / "build"))
        assert [p for p, data in finals.items() if reference.get(p) != data] == [], attempt
        if result.returncode == 0:
            break
        assert result.returncode == -signal.SIGKILL, result.stdout + result.stderr
        kills += 1
    assert kills >= 20
    assert_recovers(project, reference)
