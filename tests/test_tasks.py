"""The doit graph: full builds, no-ops, refused input that leaves build/ intact."""

from __future__ import annotations

import ast
import getpass
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from pipeline.filesig import RACY_SECONDS
from tests.conftest import REPO, run_doit, run_python, tree_bytes


def ran(output: str) -> set[str]:
    """Names of the tasks doit executed (not skipped) in one run."""
    return {line[3:].strip() for line in output.splitlines() if line.startswith(".  ")}


def test_clean_build_recreates_committed_build_byte_for_byte_with_no_path_user_or_time(
    project: Path,
) -> None:
    """DESIGN.md: deleting build/ and running doit recreates it byte for byte; outputs hold no
    timestamps, no absolute paths, no user names."""
    shutil.rmtree(project / "build")
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    built = tree_bytes(project / "build")
    assert built == tree_bytes(REPO / "build")
    sources = b"".join(
        [*tree_bytes(project / "robots").values(), *tree_bytes(project / "cells").values()]
    )
    # what a build could only have taken from this machine or this moment (unless a source has it)
    words = [project, Path.home(), getpass.getuser(), time.strftime("%Y-%m-%d")]
    leaks = [os.fsencode(w) for w in words if len(str(w)) > 1 and os.fsencode(w) not in sources]
    found = sorted((path, leak) for path, data in built.items() for leak in leaks if leak in data)
    assert found == []


def test_second_run_does_nothing(project: Path) -> None:
    first = run_doit(project)
    assert first.returncode == 0, first.stdout
    second = run_doit(project)
    assert second.returncode == 0
    assert ran(second.stdout) == set()


def test_a_no_op_leaves_doits_database_as_it_was(project: Path) -> None:
    """doit encoded and rewrote its whole database on every run, 6% of a no-op at 100 robots."""
    assert run_doit(project).returncode == 0
    database = project / ".doit.db"
    before = database.stat()
    again = run_doit(project)
    assert again.returncode == 0 and ran(again.stdout) == set()
    after = database.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    # an input touched this instant is proven by its bytes, but its new stat is not saved: it
    # could change again within the clock's granularity without its stat changing
    urdf = project / "robots" / "abb_irb2400" / "robot.urdf"
    urdf.touch()
    touched = run_doit(project)
    assert touched.returncode == 0 and ran(touched.stdout) == set()
    assert database.stat().st_ino == before.st_ino
    # a run that does save something (the new stat of an input touched out of the racy window,
    # judged by the ctime, which cannot be set back: waited out) writes it
    time.sleep(RACY_SECONDS + 0.1)
    touched = run_doit(project)
    assert touched.returncode == 0 and ran(touched.stdout) == set()
    assert database.stat().st_ino != before.st_ino


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
        "robots/abb_irb2400/robot.urdf:160: invalid_joint_velocity: joint "
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


def warm(project: Path) -> None:
    """One doit run so that doit's own state exists, as on a developer's checkout."""
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr


def test_generator_change_rebuilds_its_robot_and_the_cells_serving_it(project: Path) -> None:
    warm(project)
    source = project / "robots" / "abb_irb2400" / "srdf.py"
    source.write_text(source.read_text().replace('"xyz": ".1 1 .2"', '"xyz": ".1 1 .25"', 1))
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert ran(result.stdout) == {
        "srdf:abb_irb2400",
        "manifest:abb_irb2400",
        "index:robots",
        "cellbuild:weld_cell_a",
    }
    served = (project / "build/cells/weld_cell_a/description/robot.srdf").read_text()
    assert '<tcp name="welder" xyz="0.1 1.0 0.25" wxyz="1.0 0.0 0.0 0.0"/>' in served


def test_mesh_change_rebuilds_its_copies_spheres_srdf_and_identity_not_config(
    project: Path,
) -> None:
    """The config step reads the URDF, not meshes: a mesh change leaves it alone. The SRDF
    step collides the group states, so it runs again (and writes the same bytes)."""
    warm(project)
    mesh = project / "robots" / "abb_irb2400" / "meshes" / "link_3.stl"
    data = bytearray(mesh.read_bytes())
    data[300] ^= 1
    mesh.write_bytes(bytes(data))
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert ran(result.stdout) == {
        "urdf:abb_irb2400",
        "srdf:abb_irb2400",
        "spheres:abb_irb2400",
        "manifest:abb_irb2400",
        "index:robots",
        "cellbuild:weld_cell_a",
    }
    srdf = project / "build/robots/abb_irb2400/robot.srdf"
    assert srdf.read_bytes() == (REPO / "build/robots/abb_irb2400/robot.srdf").read_bytes()
    served = project / "build/cells/weld_cell_a/description/meshes/link_3.stl"
    assert served.read_bytes() == mesh.read_bytes()


def test_bad_urdf_is_reported_once_and_its_config_and_srdf_steps_wait(project: Path) -> None:
    warm(project)
    urdf = project / "robots" / "abb_irb2400" / "robot.urdf"
    urdf.write_text(urdf.read_text().replace('velocity="2.618"', 'velocity="-1"', 1))
    result = run_doit(project)
    assert result.returncode == 2
    assert result.stdout.count("invalid_joint_velocity") == 1
    assert not {"config:abb_irb2400", "srdf:abb_irb2400"} & ran(result.stdout)


def test_calibration_change_rebuilds_that_cell_alone(project: Path) -> None:
    warm(project)
    cell = project / "cells" / "weld_cell_a"
    calibration = cell / "machine_planning_calibration.json"
    calibration.write_bytes(calibration.read_bytes().replace(b"{", b"{ ", 1))
    machine = json.loads((cell / "machine.json").read_text())
    pin = machine["robot"]["machine_planning_calibration"]
    pin["sha256"] = hashlib.sha256(calibration.read_bytes()).hexdigest()
    (cell / "machine.json").write_text(json.dumps(machine, indent=2))
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert ran(result.stdout) == {"cellbuild:weld_cell_a"}
    served = project / "build/cells/weld_cell_a/machine_planning_calibration.json"
    assert served.read_bytes() == calibration.read_bytes()


def test_code_change_restamps_its_stage_only(project: Path) -> None:
    warm(project)
    module = project / "pipeline" / "rtcore.py"
    module.write_text(module.read_text() + "\n# a comment\n")
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert ran(result.stdout) == {
        "code:config",
        "config:abb_irb2400",
        "config:lbr_iiwa_14_r820",
        "manifest:abb_irb2400",
        "manifest:lbr_iiwa_14_r820",
        "index:robots",
        "cellbuild:iiwa_bench",
        "cellbuild:weld_cell_a",
    }


def test_robot_without_config_files_is_a_no_op_on_the_second_run(project: Path) -> None:
    robot = project / "robots" / "lbr_iiwa_14_r820"
    (robot / "config.json").unlink()
    (robot / "rtcore_definition.json").unlink()
    shutil.rmtree(project / "cells" / "iiwa_bench")
    shutil.rmtree(project / "build" / "cells" / "iiwa_bench")
    first = run_doit(project)
    assert first.returncode == 0, first.stdout
    second = run_doit(project)
    assert ran(second.stdout) == set()


def test_same_size_change_with_mtime_restored_after_a_touch_is_rebuilt(project: Path) -> None:
    """A touched-but-unchanged input gets its saved state refreshed; that must not let a later
    same-size edit whose mtime was put back (cp -p, rsync -t, tar) pass as unchanged."""
    assert run_doit(project).returncode == 0
    urdf = project / "robots/abb_irb2400/robot.urdf"
    os.utime(urdf)
    assert ran(run_doit(project).stdout) == set()  # touched only: nothing runs
    info = urdf.stat()
    edited = urdf.read_bytes().replace(b"NOT RECOMMENDED", b"not recommended", 1)
    assert len(edited) == info.st_size and edited != urdf.read_bytes()
    urdf.write_bytes(edited)
    os.utime(urdf, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert "urdf:abb_irb2400" in ran(run_doit(project).stdout)


def test_hand_edited_or_deleted_outputs_are_put_back_by_the_next_run(project: Path) -> None:
    """doit's database says current, but an output no longer holds its bytes: the step runs."""
    assert run_doit(project).returncode == 0
    before = tree_bytes(project / "build")
    edited = project / "build" / "robots" / "abb_irb2400" / "robot.srdf"
    edited.write_text(edited.read_text().replace("<robot", "<robot edited='1'", 1))
    copy = project / "build" / "cells" / "weld_cell_a" / "description" / "meshes" / "link_3.stl"
    copy.unlink()  # not a doit target: only the stamp records it
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ran(result.stdout) == {"srdf:abb_irb2400", "cellbuild:weld_cell_a"}
    assert tree_bytes(project / "build") == before
    assert ran(run_doit(project).stdout) == set()


def test_parallel_runs_remember_what_their_workers_left(project: Path) -> None:
    """With `doit -n 2` the steps run in worker processes; a second run still does nothing."""
    first = run_doit(project, "-n", "2")
    assert first.returncode == 0, first.stdout + first.stderr
    assert ran(first.stdout)  # a fresh checkout: every step checks its outputs once
    second = run_doit(project, "-n", "2")
    assert second.returncode == 0, second.stdout + second.stderr
    assert ran(second.stdout) == set()


def test_reset_dep_is_obeyed_and_check_still_says_stale(project: Path) -> None:
    """`doit reset-dep` tells doit to take the changed inputs as built: `doit` skips them (the
    user asked), `pipeline check` still says stale, and `doit forget` then `doit` rebuilds."""
    assert run_doit(project).returncode == 0
    urdf = project / "robots/abb_irb2400/robot.urdf"
    urdf.write_text(urdf.read_text().replace('velocity="2.618"', 'velocity="2.6"', 1))
    assert run_doit(project, "reset-dep").returncode == 0
    skipped = run_doit(project)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert ran(skipped.stdout) == set()
    stale = run_python(project, "-m", "pipeline", "check")
    assert stale.returncode == 1
    assert "robots/abb_irb2400/robot.urdf changed" in stale.stdout
    assert run_doit(project, "forget").returncode == 0
    assert "urdf:abb_irb2400" in ran(run_doit(project).stdout)
    assert run_python(project, "-m", "pipeline", "check").returncode == 0


def test_dumpdb_reads_the_pinned_json_backend(project: Path) -> None:
    """doit's own dumpdb opens only dbm files: on the json .doit.db it ended in a traceback."""
    shutil.copy2(REPO / "pyproject.toml", project / "pyproject.toml")  # names the plugin
    assert run_doit(project, "dumpdb", "--db-file", "none.db").returncode == 0
    assert run_doit(project).returncode == 0
    result = run_doit(project, "dumpdb")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "urdf:abb_irb2400 -> {" in result.stdout
    (project / "torn.db").write_text('{"urdf:abb_irb2400": {')
    torn = run_doit(project, "dumpdb", "--db-file", "torn.db")
    assert torn.returncode == 2
    assert "Traceback" not in torn.stderr
    assert "torn.db is not a readable json database" in torn.stderr


@pytest.mark.parametrize(
    ("source", "old", "new"),
    [
        ("robots/abb_irb2400/robot.urdf", 'velocity="2.618"', 'velocity="2.6"'),
        ("cells/weld_cell_a/machine.json", '"source": "example cell', '"source": "edited cell'),
    ],
)
def test_cell_not_built_single_packaging_refuses_a_stale_cell(
    project: Path, source: str, old: str, new: str
) -> None:
    """`doit -s cell:<id>` rebuilds nothing first: it must not pack (nor call current) a bundle
    of a compiled cell its sources no longer produce; without -s the cell is rebuilt, packed."""
    assert run_doit(project, "cell:weld_cell_a").returncode == 0
    bundle = (project / "dist/weld_cell_a.tar.gz").read_bytes()
    path = project / source
    path.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    result = run_doit(project, "-s", "cell:weld_cell_a")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "build/cells/weld_cell_a: cell_not_built: the compiled cell is not what" in (
        result.stdout
    )
    assert "Traceback" not in result.stdout + result.stderr
    assert (project / "dist/weld_cell_a.tar.gz").read_bytes() == bundle  # left as it was
    rebuilt = run_doit(project, "cell:weld_cell_a")
    assert rebuilt.returncode == 0, rebuilt.stdout
    assert {"cellbuild:weld_cell_a", "cell:weld_cell_a"} <= ran(rebuilt.stdout)
    assert ran(run_doit(project, "-s", "cell:weld_cell_a").stdout) == set()


# The graph (tasks.py), the reporter and checker it runs with (doitext.py) and the `dumpdb`
# command pyproject.toml plugs into doit (doitdb.py): README's layout row. The rest is pure.
DOIT_MODULES = {"pipeline.tasks", "pipeline.doitext", "pipeline.doitdb"}


def _imports(path: Path) -> set[str]:
    """The modules a Python file imports (`from pipeline import x` as `pipeline.x` too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_only_the_task_graph_modules_import_doit() -> None:
    """DESIGN.md: pipeline/ holds pure functions; only the module that builds the task graph
    imports doit (directly, or through another module that does)."""
    modules = {
        ".".join(path.relative_to(REPO).with_suffix("").parts): _imports(path)
        for path in sorted(REPO.glob("pipeline/**/*.py"))
    }
    direct = {
        name
        for name, imported in modules.items()
        if any(m == "doit" or m.startswith("doit.") for m in imported)
    }
    assert direct == DOIT_MODULES
    through = {name for name, imported in modules.items() if imported & DOIT_MODULES}
    assert through <= DOIT_MODULES, f"import doit-bound modules: {sorted(through - DOIT_MODULES)}"


COUNT_CELL_TASKS = """
import doit.loader, dodo
namespace = {name: getattr(dodo, name) for name in dir(dodo)}
cases = ((True, []), (True, ["cell:weld_cell_a"]), (True, ["urdf"]), (False, []))
for allow_delayed, args in cases:
    tasks = doit.loader.load_tasks(namespace, allow_delayed=allow_delayed, args=args)
    print(sum(task.name.startswith("cell:") for task in tasks))
"""


def test_plain_doit_makes_no_packaging_tasks_a_named_task_or_listing_does(project: Path) -> None:
    """`doit` never packs, and making 500 cells' `cell:` tasks was 5% of its no-op. doit's own
    loader is called as doit calls it: for a command that runs tasks (allow_delayed) with none
    named, for one naming a task, and for a command that runs none (list, info, forget)."""
    result = run_python(project, "-c", COUNT_CELL_TASKS)
    assert result.returncode == 0, result.stderr
    cells = len([p for p in (project / "cells").iterdir() if p.is_dir()])
    assert result.stdout.split() == ["0", str(cells), str(cells), str(cells)]


FROZEN = """
import gc
before = gc.get_freeze_count()
import dodo
print(before, gc.get_freeze_count() > before)
"""


def test_the_session_keeps_what_it_made_out_of_the_cyclic_collectors_reach(
    project: Path,
) -> None:
    """The plan and task dicts live until exit; the full collections of a no-op walked them."""
    result = run_python(project, "-c", FROZEN)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "True"]


@pytest.mark.parametrize(
    ("named", "line"),
    [
        (
            "cell:weld_cel_a",
            "cells/weld_cel_a: unknown_cell: `doit cell:weld_cel_a` names no cell: cells/ holds "
            "iiwa_bench, weld_cell_a; run `doit cell:weld_cell_a`",
        ),
        (
            "srdf:ur5",
            "robots/ur5: unknown_model: `doit srdf:ur5` names no robot: robots/ holds "
            "abb_irb2400, lbr_iiwa_14_r820; name one of them (`doit list --all` shows every "
            "task), or add robots/ur5/",
        ),
    ],
)
def test_a_task_naming_no_robot_or_cell_is_a_finding_line_and_exit_2(
    project: Path, named: str, line: str
) -> None:
    """doit said "Invalid parameter" with exit status 3 for a mistyped `doit cell:<id>`."""
    before = tree_bytes(project / "build")
    result = run_doit(project, named, "cellbuild:iiwa_bench")
    assert (result.returncode, result.stderr.splitlines()) == (2, [line]), result.stdout
    assert "cellbuild:iiwa_bench" not in result.stdout  # nothing ran
    assert tree_bytes(project / "build") == before


def test_a_finding_stdout_cannot_encode_is_escaped_not_a_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under PYTHONIOENCODING=ascii (strict on stdout), an é in a joint's name stopped doit's
    reporter with a UnicodeEncodeError and exit status 3."""
    (project / "robots" / "t1").mkdir()
    (project / "robots" / "t1" / "robot.urdf").write_text(
        '<robot name="t1"><link name="a"/><link name="b"/>\n'
        '<joint name="jé1" type="revolute"><parent link="a"/><child link="b"/>\n'
        '<axis xyz="0 0 1"/><limit lower="1" upper="-1" effort="1" velocity="1"/></joint>\n'
        "</robot>\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONIOENCODING", "ascii")
    result = run_doit(project, "urdf:t1")
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 2, result.stderr
    assert "robots/t1/robot.urdf:3: invalid_joint_limit: joint 'j\\xe91'" in result.stdout
