"""`pipeline check` and the doit `check` task: is build/ exactly what the sources produce?"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from pipeline.digestcache import BUILT_CACHE_NAME, CACHE_NAME
from pipeline.filesig import RACY_SECONDS, stat_signature
from pipeline.freshness import (
    ABSENT,
    ADVICE,
    LINKED_FOLDER,
    LINKED_OUTPUT,
    OLDER,
    UNREADABLE,
    _build_files,
)
from pipeline.lock import FINISHED, LOCK_NAME, MARK
from pipeline.plan import needed, plan
from pipeline.stamps import stamp_path
from tests.conftest import REPO, refuse_under, run_doit, tree_bytes


def check(project: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    cwd = Path.cwd()
    os.chdir(project)
    try:
        code = main(["check"])
    finally:
        os.chdir(cwd)
    return code, capsys.readouterr().out.splitlines()


def flip_byte(path: Path, index: int = 200) -> None:
    data = bytearray(path.read_bytes())
    data[index] ^= 1
    path.write_bytes(bytes(data))


def test_committed_build_is_current(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = check(project, capsys)
    assert code == 0 and lines[-1].startswith("build/ is current:")


def test_one_byte_source_change_is_stale_with_its_cause(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_bytes(project / "build")
    flip_byte(project / "robots" / "lbr_iiwa_14_r820" / "meshes" / "link_3.stl", 300)
    code, lines = check(project, capsys)
    assert code == 1
    assert (
        "stale: build/robots/lbr_iiwa_14_r820/meshes/link_3.stl (urdf:lbr_iiwa_14_r820: "
        "robots/lbr_iiwa_14_r820/meshes/link_3.stl changed)" in lines
    )
    assert not any("abb_irb2400" in line for line in lines)
    assert tree_bytes(project / "build") == before


def test_one_mesh_change_names_exactly_the_files_a_rebuild_changes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Copies of unchanged files are not stale, in the description or in the cell serving it;
    nor is the config, which reads no mesh. The SRDF is: its step collides the group states."""
    flip_byte(project / "robots" / "abb_irb2400" / "meshes" / "link_3.stl", 300)
    code, lines = check(project, capsys)
    assert code == 1
    robot, cell = "build/robots/abb_irb2400", "build/cells/weld_cell_a"
    assert sorted(line.split(" ")[1] for line in lines) == sorted(
        [
            f"{robot}/meshes/link_3.stl",
            f"{robot}/robot.srdf",
            f"{robot}/spheres.json",
            f"{robot}/robot_description_manifest.json",
            "build/index.json",
            f"{cell}/cell.json",
            f"{cell}/description/meshes/link_3.stl",
            f"{cell}/description/robot.srdf",
            f"{cell}/description/robot_description_manifest.json",
            f"{cell}/description/spheres.json",
        ]
    )
    assert run_doit(project).returncode == 0
    assert check(project, capsys)[0] == 0


def test_a_stale_step_still_names_its_hand_edited_copies(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy the rebuild leaves as recorded, edited by hand meanwhile, is reported modified."""
    flip_byte(project / "robots" / "abb_irb2400" / "meshes" / "link_3.stl", 300)
    flip_byte(project / "build" / "robots" / "abb_irb2400" / "meshes" / "link_1.stl", 300)
    code, lines = check(project, capsys)
    assert code == 1
    assert (
        "modified: build/robots/abb_irb2400/meshes/link_1.stl "
        "(differs from what urdf:abb_irb2400 made)" in lines
    )
    assert not any("description/meshes/link_1.stl" in line for line in lines)


def test_a_code_change_that_rewrites_only_stamps_names_the_stamps(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The config step copies its files byte for byte: after a change to its code, its stamp is
    what a rebuild rewrites, not the copies."""
    module = project / "pipeline" / "rtcore.py"
    module.write_text(module.read_text() + "# changed\n")
    code, lines = check(project, capsys)
    assert code == 1
    cause = "code:config: pipeline/rtcore.py changed"
    for model in ("abb_irb2400", "lbr_iiwa_14_r820"):
        stamp = f"build/stamps/config/{model}.json"
        assert f"stale: {stamp} (config:{model}: after {cause})" in lines
        assert not any(f"build/robots/{model}/config.json" in line for line in lines)


def test_code_change_makes_its_stage_and_everything_downstream_stale(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A changed spheres module: its code stamp, every spheres.json and what reads them."""
    module = project / "pipeline" / "spheres" / "prove.py"
    module.write_text(module.read_text() + "# changed\n")
    code, lines = check(project, capsys)
    assert code == 1
    cause = "code:spheres: pipeline/spheres/prove.py changed"
    assert f"stale: build/stamps/code/spheres.json ({cause})" in lines
    for model in ("abb_irb2400", "lbr_iiwa_14_r820"):
        assert f"stale: build/robots/{model}/spheres.json (spheres:{model}: after {cause})" in lines
        assert any(f"build/robots/{model}/robot_description_manifest.json" in x for x in lines)
    assert f"stale: build/index.json (index:robots: after {cause})" in lines
    cell = "build/cells/weld_cell_a/cell.json"
    assert f"stale: {cell} (cellbuild:weld_cell_a: after {cause})" in lines
    # the robots' urdf and srdf steps do not read the spheres code
    robot_level = [line for line in lines if line.startswith("stale: build/robots/")]
    assert not any("robot.srdf" in line or "robot.urdf" in line for line in robot_level)


def test_hand_edited_and_extra_build_files(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flip_byte(project / "build" / "robots" / "abb_irb2400" / "robot.urdf")
    (project / "build" / "robots" / "abb_irb2400" / "notes.txt").write_text("hi")
    (project / "build" / "index.json").unlink()
    code, lines = check(project, capsys)
    assert code == 1
    assert sorted(lines) == [
        "extra: build/robots/abb_irb2400/notes.txt (no step makes it; delete it)",
        "missing: build/index.json (index:robots made it; it is gone)",
        "modified: build/robots/abb_irb2400/robot.urdf (differs from what urdf:abb_irb2400 made)",
    ]


@pytest.mark.parametrize("char", ["\u2028", "\x85", "\u202e", "\u200b"])
def test_an_extra_file_named_with_a_line_break_or_invisible_character_is_one_line_escaped(
    project: Path, capsys: pytest.CaptureFixture[str], char: str
) -> None:
    (project / "build" / "robots" / "abb_irb2400" / f"c{char}d").write_text("hi")
    code, lines = check(project, capsys)
    assert code == 1
    shown = ascii(char)[1:-1]
    assert lines == [f"extra: build/robots/abb_irb2400/c{shown}d (no step makes it; delete it)"]


def test_a_new_robot_stales_the_index_by_its_own_cause(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said `index:robots: build/stamps/manifest/new_arm.json added`, a stamp not made yet."""
    shutil.copytree(project / "robots" / "abb_irb2400", project / "robots" / "new_arm")
    urdf = project / "robots" / "new_arm" / "robot.urdf"
    urdf.write_text(urdf.read_text().replace('name="abb_irb2400"', 'name="new_arm"', 1))
    code, lines = check(project, capsys)
    assert code == 1
    assert (
        "stale: build/index.json (index:robots: after manifest:new_arm has never been built)"
        in (lines)
    )


@pytest.mark.parametrize("spoil", ["deleted", "edited"])
def test_a_stamp_deleted_or_edited_by_hand_is_named_itself(
    project: Path, capsys: pytest.CaptureFixture[str], spoil: str
) -> None:
    """Only its outputs were named (`... has no readable stamp`), never the stamp's file."""
    stamp = project / "build" / "stamps" / "srdf" / "abb_irb2400.json"
    if spoil == "deleted":
        stamp.unlink()
    else:
        stamp.write_text(stamp.read_text().replace('"', "'", 1))
    code, lines = check(project, capsys)
    assert code == 1
    kind = "missing" if spoil == "deleted" else "stale"
    assert (
        f"{kind}: build/stamps/srdf/abb_irb2400.json (srdf:abb_irb2400 has no readable stamp)"
        in lines
    ), lines


def test_check_reads_no_output_the_builds_record_vouches_for(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a digest cache, check read every output of build/ (400 MB at 100 robots and 500
    cells) though the build's own record (.pipeline-outputs: each output's inode and ctime as
    its step left it, what a no-op doit goes by) vouched for them; an edited one is still read."""
    assert run_doit(project).returncode == 0  # the first doit here: each step noted, none rebuilt
    for cache in (CACHE_NAME, BUILT_CACHE_NAME):
        (project / cache).unlink(missing_ok=True)
    import pipeline.freshness

    read: list[str] = []
    original = pipeline.freshness.changed_outputs

    def counting(root: Path, stamp: Any, *args: Any) -> list[str]:
        read.append(stamp.step)
        return original(root, stamp, *args)

    monkeypatch.setattr(pipeline.freshness, "changed_outputs", counting)
    assert check(project, capsys) == (0, ["build/ is current: 20 steps"])
    assert read == []
    flip_byte(project / "build" / "robots" / "abb_irb2400" / "robot.srdf")
    code, lines = check(project, capsys)
    assert code == 1 and read == ["srdf:abb_irb2400"]
    assert lines[0] == (
        "modified: build/robots/abb_irb2400/robot.srdf (differs from what srdf:abb_irb2400 made)"
    )


def test_check_writes_nothing_but_the_digest_cache(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not build/, not the sources: only the local cache that makes the next check cheap."""

    def files() -> dict[str, bytes]:
        return {
            k: v for k, v in tree_bytes(project).items() if k not in (CACHE_NAME, BUILT_CACHE_NAME)
        }

    before = files()
    assert check(project, capsys)[0] == 0
    flip_byte(project / "build" / "robots" / "abb_irb2400" / "robot.urdf")
    edited = files()
    assert check(project, capsys)[0] == 1
    assert files() == edited
    assert set(before) == set(edited)  # no temporary file, nothing new


def test_a_folder_without_its_main_source_is_named_with_what_is_missing(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A robot folder without robot.urdf, a cell folder without machine.json: the check names
    the missing source (no build makes it), and what to do, rather than "never built"."""
    (project / "robots" / "ur5").mkdir()
    (project / "robots" / "ur5" / "ur5.urdf").write_text("<robot/>")
    (project / "cells" / "c2").mkdir()
    (project / "cells" / "c2" / "Machine.json").write_text("{}")
    code, lines = check(project, capsys)
    assert code == 1
    missing = "robots/ur5/robot.urdf is missing"
    assert f"missing: build/robots/ur5/robot.urdf (urdf:ur5: {missing})" in lines
    srdf = "srdf:ur5: robots/ur5/srdf.py is missing"
    assert f"missing: build/robots/ur5/robot.srdf ({srdf})" in lines
    manifest = "build/robots/ur5/robot_description_manifest.json"
    assert f"missing: {manifest} (manifest:ur5: after urdf:ur5: {missing})" in lines
    cell = "cellbuild:c2: cells/c2/machine.json is missing"
    assert f"missing: build/cells/c2/cell.json ({cell})" in lines
    cwd = Path.cwd()
    os.chdir(project)
    try:
        assert main(["check"]) == 1
    finally:
        os.chdir(cwd)
    assert ADVICE[ABSENT] in capsys.readouterr().err.splitlines()


def test_a_removed_source_is_named_removed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "robots" / "abb_irb2400" / "srdf.py").unlink()
    code, lines = check(project, capsys)
    assert code == 1
    cause = "srdf:abb_irb2400: robots/abb_irb2400/srdf.py removed"
    assert f"stale: build/robots/abb_irb2400/robot.srdf ({cause})" in lines


def test_a_deleted_stamp_names_its_step_for_the_files_it_made(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without its stamp, a step's outputs are not called extra files to delete."""
    (project / "build" / "stamps" / "urdf" / "abb_irb2400.json").unlink()
    code, lines = check(project, capsys)
    assert code == 1
    cause = "urdf:abb_irb2400 has no readable stamp"
    assert f"stale: build/robots/abb_irb2400/robot.urdf ({cause})" in lines
    mesh = "build/robots/abb_irb2400/meshes/link_3.stl"
    maker = "urdf:abb_irb2400, which has no readable stamp, may make it: run `doit`"
    assert f"extra: {mesh} (no stamp records it; {maker})" in lines
    assert not any("delete it" in line for line in lines)
    assert any(line.startswith("stale: build/index.json (index:robots: after") for line in lines)
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert check(project, capsys) == (0, ["build/ is current: 20 steps"])


@pytest.mark.parametrize(
    ("edit", "state"),
    [
        pytest.param(lambda d: d.pop("seal"), OLDER, id="older_version_unsealed"),
        pytest.param(lambda d: d.update({"seal": "0" * 64}), "has no readable stamp", id="edited"),
    ],
)
def test_a_stamp_of_an_older_version_is_stale_not_missing(
    project: Path, capsys: pytest.CaptureFixture[str], edit: Any, state: str
) -> None:
    """A checkout built by a version before sealed stamps, upgraded: its code stamps were
    called `missing ... has never been built` though they are there."""
    for step in ("code:urdf", "urdf:abb_irb2400"):
        stamp = project / stamp_path(step)
        data = json.loads(stamp.read_bytes())
        edit(data)
        stamp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    code, lines = check(project, capsys)
    assert code == 1
    assert f"stale: build/stamps/code/urdf.json (code:urdf {state})" in lines
    cause = f"urdf:abb_irb2400 {state}"
    assert f"stale: build/robots/abb_irb2400/robot.urdf ({cause})" in lines
    assert not any(line.startswith("missing: ") for line in lines)
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert check(project, capsys) == (0, ["build/ is current: 20 steps"])


@pytest.mark.parametrize(
    ("lock", "fix"),
    [
        pytest.param(None, "the next `doit` removes it", id="no_lock_yet"),
        pytest.param("", "the next `doit` removes it", id="older_version_empty_lock"),
        pytest.param(MARK, "the next `doit` removes it", id="killed_run"),
        pytest.param(f"{FINISHED}-\n", "delete it", id="finished_run"),
    ],
)
def test_a_temporary_file_in_build_says_whether_doit_removes_it(
    project: Path, capsys: pytest.CaptureFixture[str], lock: str | None, fix: str
) -> None:
    """After a finished run doit does not search build/ (a temporary git brought, or copied in,
    stays), but check said the next doit removes it, and stayed stale after every doit."""
    temp = project / "build" / "robots" / "abb_irb2400" / ".robot.urdf.abcd1234.tmp"
    temp.write_bytes(b"half")
    if lock is not None:
        (project / LOCK_NAME).write_text(lock)
    code, lines = check(project, capsys)
    assert code == 1
    reason = f"temporary file of an interrupted build; {fix}"
    assert lines[0] == f"extra: build/robots/abb_irb2400/.robot.urdf.abcd1234.tmp ({reason})"
    assert run_doit(project).returncode == 0
    assert temp.exists() is (fix == "delete it")


def test_a_build_never_made_is_missing_not_stale(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(project / "build")
    code, lines = check(project, capsys)
    assert code == 1
    assert (
        "missing: build/robots/abb_irb2400/robot.urdf (urdf:abb_irb2400 has never been built)"
        in lines
    )
    assert all(line.startswith(("missing: ", "stale: ")) for line in lines)


def test_removed_robot_and_cell_are_named_by_check_and_removed_by_doit(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """build/ is entirely generated: what a removed robot (and its cell) compiled goes too."""
    shutil.rmtree(project / "robots" / "lbr_iiwa_14_r820")
    shutil.rmtree(project / "cells" / "iiwa_bench")
    (project / "build" / "robots" / "abb_irb2400" / "notes.txt").write_text("mine")
    code, lines = check(project, capsys)
    assert code == 1
    removes = "the next `doit` removes it"
    assert (
        f"extra: build/stamps/urdf/lbr_iiwa_14_r820.json "
        f"(stamp of a step the sources no longer have; {removes})" in lines
    )
    assert (
        "extra: build/robots/lbr_iiwa_14_r820/meshes/link_3.stl "
        f"(made for a robot or cell the sources no longer have; {removes})" in lines
    )
    assert any(line.startswith("extra: build/cells/iiwa_bench/cell.json (made") for line in lines)
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (project / "build" / "robots" / "lbr_iiwa_14_r820").exists()
    assert not (project / "build" / "cells" / "iiwa_bench").exists()
    assert not list((project / "build" / "stamps").rglob("*lbr_iiwa_14_r820*"))
    assert (project / "build" / "robots" / "abb_irb2400" / "notes.txt").read_text() == "mine"
    code, lines = check(project, capsys)
    assert lines == ["extra: build/robots/abb_irb2400/notes.txt (no step makes it; delete it)"]
    assert "removed" not in run_doit(project).stdout  # nothing left to remove


def test_doit_check_task_fails_on_stale_build(project: Path) -> None:
    assert run_doit(project, "check").returncode == 0
    flip_byte(project / "robots" / "abb_irb2400" / "meshes" / "link_2_whole.stl")
    result = run_doit(project, "check")
    assert result.returncode == 1
    assert "robots/abb_irb2400/meshes/link_2_whole.stl changed" in result.stdout


def test_touch_without_change_rebuilds_nothing(project: Path) -> None:
    assert run_doit(project).returncode == 0
    for path in (project / "robots").rglob("*"):
        os.utime(path)
    result = run_doit(project)
    assert result.returncode == 0
    assert [line for line in result.stdout.splitlines() if line.startswith(".  ")] == []
    # out of the racy window (judged by the ctime, which cannot be set back: waited out), the
    # files' saved stat signatures are refreshed, so the next run takes the stat fast path
    time.sleep(RACY_SECONDS + 0.1)
    result = run_doit(project)
    assert result.returncode == 0
    assert [line for line in result.stdout.splitlines() if line.startswith(".  ")] == []
    urdf = "robots/abb_irb2400/robot.urdf"
    state = json.loads((project / ".doit.db").read_text(encoding="utf-8"))["urdf:abb_irb2400"]
    assert state[urdf][0] == stat_signature((project / urdf).stat())


@pytest.mark.slow
def test_ci_script_fails_on_one_byte_stale_build(project: Path) -> None:
    """The freshness part of .ci/run refuses a committed build/ one byte off its sources."""
    script = Path(__file__).resolve().parent.parent / ".ci" / "freshness"
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
        cwd=project,
        check=True,
    )
    env = {**os.environ, "PYTHONPATH": str(project)}
    ok = subprocess.run(
        ["bash", str(script)], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    flip_byte(project / "robots" / "abb_irb2400" / "meshes" / "link_4.stl")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "y"],
        cwd=project,
        check=True,
    )
    stale = subprocess.run(
        ["bash", str(script)], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert stale.returncode != 0
    assert "robots/abb_irb2400/meshes/link_4.stl changed" in stale.stdout + stale.stderr


def test_check_output_cut_short_by_its_reader_gives_no_traceback(project: Path) -> None:
    """`pipeline check | head -1` on a stale build: the reader leaves early, no traceback."""
    shutil.rmtree(project / "build" / "robots")
    env = {**os.environ, "PYTHONPATH": str(project)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "check"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # as `head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert first.startswith(b"missing: ") or first.startswith(b"stale: ")
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_stale_cause_an_input_the_step_no_longer_reads_is_not_called_changed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cell switched to another model: the old model's files were reported as changed."""
    machine = project / "cells" / "iiwa_bench" / "machine.json"
    machine.write_text(machine.read_text().replace("lbr_iiwa_14_r820", "abb_irb2400"))
    code, lines = check(project, capsys)
    assert code == 1
    cause = next(line for line in lines if line.startswith("stale: build/cells/iiwa_bench/"))
    assert (
        "(cellbuild:iiwa_bench: build/stamps/manifest/abb_irb2400.json added, "
        "build/stamps/manifest/lbr_iiwa_14_r820.json no longer an input, "
        "cells/iiwa_bench/machine.json changed, " in cause
    ), cause


def test_chain_holds_a_step_and_every_step_it_is_made_from() -> None:
    """What `doit -s cell:<id>` must find current before packing: the cell's whole chain."""
    names = [step.name for step in needed(plan(REPO), "cellbuild:weld_cell_a")]
    assert names[-1] == "cellbuild:weld_cell_a"
    assert {"urdf:abb_irb2400", "srdf:abb_irb2400", "spheres:abb_irb2400"} <= set(names)
    assert {"manifest:abb_irb2400", "code:cellbuild"} <= set(names)
    assert not [name for name in names if "lbr_iiwa" in name or "iiwa_bench" in name]
    assert "index:robots" not in names


@pytest.mark.parametrize(
    "path",
    [
        "build/index.json",
        "build/cells/weld_cell_a/description/meshes/link_1.stl",
        "build/stamps/urdf/abb_irb2400.json",
    ],
)
def test_an_output_or_stamp_with_an_execute_bit_is_modified_and_written_again(
    project: Path, capsys: pytest.CaptureFixture[str], path: str
) -> None:
    """git commits an execute bit, and a build from nothing writes mode 0644: a `chmod +x` on
    build/ is a change the check names (the digest cache warm or not) and `doit` undoes."""
    assert check(project, capsys)[0] == 0  # warms the digest cache
    target = project / path
    before = target.read_bytes()
    target.chmod(0o755)
    code, lines = check(project, capsys)
    assert code == 1
    assert any(
        line.startswith(f"modified: {path} (differs from what ") and "execute bit set" in line
        for line in lines
    ), lines
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.stat().st_mode & 0o777 == 0o644
    assert target.read_bytes() == before
    assert check(project, capsys)[0] == 0


@pytest.mark.parametrize(
    "path",
    [
        "build/robots/abb_irb2400/meshes/link_1.stl",
        "build/index.json",
        "build/stamps/urdf/abb_irb2400.json",
    ],
)
def test_not_a_regular_file_an_output_or_stamp_replaced_by_a_link_to_its_bytes_is_written_again(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, path: str
) -> None:
    """A link to the very bytes a step made was taken for them: check said current, doit kept
    it, and `pipeline manifest --check` and `identity` refused that build/ (not_a_regular_file);
    git commits a link, which a build from nothing never makes."""
    assert check(project, capsys)[0] == 0  # warms the digest cache
    target = project / path
    before = target.read_bytes()
    (tmp_path / "elsewhere").write_bytes(before)
    target.unlink()
    target.symlink_to(tmp_path / "elsewhere")
    code, lines = check(project, capsys)
    assert code == 1
    assert any(path in line for line in lines), lines
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not target.is_symlink() and target.read_bytes() == before
    assert check(project, capsys) == (0, ["build/ is current: 20 steps"])
    assert main(["manifest", "--check", str(project / "build" / "robots" / "abb_irb2400")]) == 0


@pytest.mark.parametrize(
    "folder",
    [
        "build/robots/abb_irb2400",
        "build/robots/abb_irb2400/meshes",
        "build/cells/weld_cell_a/description",
    ],
)
def test_a_folder_of_outputs_replaced_by_a_link_to_a_copy_is_stale_and_made_again(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, folder: str
) -> None:
    """A folder of build/ replaced by a link to a copy of it: check named only the link, as an
    extra file to delete, and doit kept it (exit 0) while git saw every file in it deleted."""
    assert run_doit(project).returncode == 0  # a no-op that leaves the output record
    target = project / folder
    before = tree_bytes(target)
    shutil.copytree(target, tmp_path / "copy")
    shutil.rmtree(target)
    target.symlink_to(tmp_path / "copy")
    code, lines = check(project, capsys)
    assert code == 1
    reason = f"({folder} {LINKED_FOLDER})"
    assert lines and all(line.endswith(reason) for line in lines), lines
    assert {line.split(" ")[1] for line in lines} >= {f"{folder}/{name}" for name in before}
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not target.is_symlink() and tree_bytes(target) == before
    assert tree_bytes(tmp_path / "copy") == before  # the link's target is left as it was
    assert check(project, capsys) == (0, ["build/ is current: 20 steps"])
    assert main(["manifest", "--check", str(project / "build" / "robots" / "abb_irb2400")]) == 0


def test_a_dangling_link_in_place_of_build_stamps_is_named_not_called_extra(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """With build/stamps a dangling link, check said every step had no readable stamp and
    called the link a file some step may make."""
    (project / "build" / "stamps").rename(tmp_path / "stamps")
    (project / "build" / "stamps").symlink_to(tmp_path / "gone")
    code, lines = check(project, capsys)
    assert code == 1
    cause = f"urdf:abb_irb2400 has its stamp in build/stamps, which {LINKED_FOLDER}"
    assert f"stale: build/robots/abb_irb2400/robot.urdf ({cause})" in lines, lines
    assert not [line for line in lines if line.startswith("extra: build/stamps")]


def test_symlink_refused_a_source_replaced_by_a_link_to_its_bytes_is_stale_and_refused(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every reader refuses a source that is a symbolic link, but a link to the same bytes left
    its step current: CI passed a checkout whose build from nothing stops."""
    assert check(project, capsys)[0] == 0  # warms the digest cache
    source = project / "robots" / "abb_irb2400" / "config.json"
    (tmp_path / "config.json").write_bytes(source.read_bytes())
    source.unlink()
    source.symlink_to(tmp_path / "config.json")
    before = tree_bytes(project / "build")
    code, lines = check(project, capsys)
    assert code == 1
    cause = "config:abb_irb2400: robots/abb_irb2400/config.json is a symbolic link"
    assert f"stale: build/robots/abb_irb2400/config.json ({cause})" in lines, lines
    result = run_doit(project)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    assert (
        "robots/abb_irb2400/config.json: symlink_refused: is a symbolic link; replace the link "
        "with the regular file it points to"
    ) in result.stdout.splitlines()
    assert tree_bytes(project / "build") == before


@pytest.mark.parametrize("kind", ["folder", "link to a folder"])
def test_a_folder_in_an_output_s_place_is_not_called_executable(
    project: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    """A folder's mode has execute bits (to enter it), but only a file can have one set by
    mistake: the check said a folder in a mesh's place had an execute bit set."""
    path = "build/robots/lbr_iiwa_14_r820/meshes/link_3.stl"
    target = project / path
    target.unlink()
    if kind == "folder":
        target.mkdir()
    else:
        (tmp_path / "elsewhere").mkdir()
        target.symlink_to(tmp_path / "elsewhere")
    code, lines = check(project, capsys)
    assert code == 1
    note = "" if kind == "folder" else f" ({LINKED_OUTPUT})"
    assert f"modified: {path} (differs from what urdf:lbr_iiwa_14_r820 made{note})" in lines, lines


@pytest.mark.parametrize(
    ("layout", "listed"),
    [
        ({"build/a.json": "file"}, {"build/a.json"}),
        ({"build/r/d/m.stl": "file", "build/r/x": "file"}, {"build/r/d/m.stl", "build/r/x"}),
        ({"build/r/robot.urdf/inside.txt": "file"}, {"build/r/robot.urdf/inside.txt"}),
        ({"build/r/link": "link to folder", "elsewhere/f": "file"}, {"build/r/link"}),
        ({"build/r/gone": "dangling link"}, {"build/r/gone"}),
        ({"build/empty/": "folder"}, set()),
    ],
    ids=["file", "nested", "folder in a file's place", "linked folder", "dangling link", "empty"],
)
def test_build_files_lists_every_file_and_link_below_build_without_entering_links(
    tmp_path: Path, layout: dict[str, str], listed: set[str]
) -> None:
    for rel, kind in layout.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "file":
            path.write_bytes(b"x")
        elif kind == "folder":
            path.mkdir(exist_ok=True)
        elif kind == "link to folder":
            (tmp_path / "elsewhere").mkdir(exist_ok=True)
            path.symlink_to(tmp_path / "elsewhere")
        else:
            path.symlink_to(tmp_path / "nowhere")
    links = any(kind.startswith(("link", "dangling")) for kind in layout.values())
    assert _build_files(tmp_path) == (listed, links)


def test_file_unreadable_source_is_not_called_changed_by_check(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """chmod 000 on srdf.py: check once said "changed" and to run `doit` (which refuses it)."""
    source = project / "robots" / "abb_irb2400" / "srdf.py"
    os.utime(source, ns=(1, 1))  # its stat changed, as chmod changes the ctime
    refuse_under(monkeypatch, "open", source)
    monkeypatch.chdir(project)
    code = main(["check"])
    out, err = capsys.readouterr()
    assert code == 1
    assert (
        "stale: build/robots/abb_irb2400/robot.srdf (srdf:abb_irb2400: "
        f"robots/abb_irb2400/srdf.py {UNREADABLE})" in out.splitlines()
    )
    assert ADVICE[UNREADABLE] in err.splitlines()
