"""The build plan: which steps the robots and cells get, what each reads and makes."""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main as cli_main
from pipeline.findings import ContractError
from pipeline.plan import cell_ids, linked_folders, model_ids, needed, plan
from pipeline.stagecode import CODE, code
from pipeline.stamps import Step
from tests.conftest import refuse_under, run_doit, run_python, tree_bytes
from tests.test_tasks import ran

ABB = "abb_irb2400"
IIWA = "lbr_iiwa_14_r820"
ROBOT_STAGES = ("urdf", "config", "srdf", "spheres", "manifest")


def by_name(root: Path) -> dict[str, Step]:
    return {step.name: step for step in plan(root)}


def test_each_robot_gets_five_steps_and_each_cell_one_after_the_code_stamps(repo: Path) -> None:
    names = [step.name for step in plan(repo)]
    assert names == [
        *(f"code:{stage}" for stage in CODE),
        *(f"{stage}:{m}" for m in (ABB, IIWA) for stage in ROBOT_STAGES),
        "index:robots",
        "cellbuild:iiwa_bench",
        "cellbuild:weld_cell_a",
    ]


@pytest.mark.parametrize(
    ("step", "targets"),
    [
        ("urdf:abb_irb2400", ["build/robots/abb_irb2400/robot.urdf"]),
        (
            "config:abb_irb2400",
            [
                "build/robots/abb_irb2400/config.json",
                "build/robots/abb_irb2400/rtcore_definition.json",
            ],
        ),
        ("srdf:abb_irb2400", ["build/robots/abb_irb2400/robot.srdf"]),
        ("spheres:abb_irb2400", ["build/robots/abb_irb2400/spheres.json"]),
        ("manifest:abb_irb2400", ["build/robots/abb_irb2400/robot_description_manifest.json"]),
        ("index:robots", ["build/index.json"]),
        (
            "cellbuild:weld_cell_a",
            [
                "build/cells/weld_cell_a/cell.json",
                "build/cells/weld_cell_a/machine_planning_calibration.json",
            ],
        ),
        ("code:urdf", []),
    ],
)
def test_targets_of_each_kind_of_step(repo: Path, step: str, targets: list[str]) -> None:
    found = by_name(repo)[step]
    assert list(found.targets) == targets
    assert found.stamp == f"build/stamps/{step.replace(':', '/')}.json"


def test_a_robot_steps_read_its_sources_the_stamps_before_them_and_their_code(repo: Path) -> None:
    steps = by_name(repo)
    src = f"robots/{ABB}"
    meshes = sorted(f"{src}/meshes/{p.name}" for p in (repo / src / "meshes").iterdir())
    urdf = steps[f"urdf:{ABB}"]
    assert list(urdf.inputs) == [f"{src}/robot.urdf", *meshes, code("urdf")]
    assert list(steps[f"config:{ABB}"].inputs) == [
        f"{src}/robot.urdf",
        f"{src}/config.json",
        f"{src}/rtcore_definition.json",
        code("config"),
    ]
    assert list(steps[f"srdf:{ABB}"].inputs) == [
        f"{src}/srdf.py",
        f"{src}/robot.urdf",
        urdf.stamp,  # the meshes: its group states are collided
        code("srdf"),
    ]
    assert list(steps[f"spheres:{ABB}"].inputs) == [
        f"{src}/robot.urdf",
        *meshes,
        urdf.stamp,
        code("spheres"),
    ]
    assert list(steps[f"manifest:{ABB}"].inputs) == [
        *(steps[f"{stage}:{ABB}"].stamp for stage in ("urdf", "config", "srdf", "spheres")),
        code("manifest"),
    ]
    assert list(steps["index:robots"].inputs) == [
        steps[f"manifest:{ABB}"].stamp,
        steps[f"manifest:{IIWA}"].stamp,
        code("index"),
    ]


def test_config_and_srdf_run_after_the_urdf_checks_without_reading_its_copies(repo: Path) -> None:
    """Ordered after urdf:<id> (a bad URDF is reported once). A mesh change leaves config
    current: it reads the URDF source, not the urdf step's stamp. The srdf step reads the
    stamp, for the meshes its group states are collided with."""
    steps = by_name(repo)
    for stage in ("config", "srdf"):
        step = steps[f"{stage}:{ABB}"]
        assert step.after == (f"urdf:{ABB}",)
        assert (steps[f"urdf:{ABB}"].stamp in step.inputs) == (stage == "srdf")
    assert [s.name for s in needed(list(steps.values()), f"srdf:{ABB}")] == [
        "code:urdf",
        "code:srdf",
        f"urdf:{ABB}",
        f"srdf:{ABB}",
    ]


@pytest.mark.parametrize(
    ("step", "output", "source"),
    [
        (f"urdf:{ABB}", f"build/robots/{ABB}/meshes/link_3.stl", f"robots/{ABB}/meshes/link_3.stl"),
        (f"urdf:{ABB}", f"build/robots/{ABB}/robot.urdf", f"robots/{ABB}/robot.urdf"),
        (f"config:{ABB}", f"build/robots/{ABB}/config.json", f"robots/{ABB}/config.json"),
        (f"srdf:{ABB}", f"build/robots/{ABB}/robot.srdf", None),
        (f"spheres:{ABB}", f"build/robots/{ABB}/spheres.json", None),
        (
            "cellbuild:weld_cell_a",
            "build/cells/weld_cell_a/description/meshes/link_3.stl",
            f"build/robots/{ABB}/meshes/link_3.stl",
        ),
        (
            "cellbuild:weld_cell_a",
            "build/cells/weld_cell_a/machine_planning_calibration.json",
            "cells/weld_cell_a/machine_planning_calibration.json",
        ),
        ("cellbuild:weld_cell_a", "build/cells/weld_cell_a/cell.json", None),
    ],
)
def test_each_step_names_the_outputs_it_copies_byte_for_byte(
    repo: Path, step: str, output: str, source: str | None
) -> None:
    assert by_name(repo)[step].source_of(output) == source


@pytest.mark.parametrize("pin", ["../iiwa_bench/calibration.json", "/etc/passwd", "a/../../b"])
def test_a_calibration_pin_leaving_its_cell_is_no_copy_source(repo: Path, pin: str) -> None:
    machine_path = repo / "cells" / "weld_cell_a" / "machine.json"
    machine = json.loads(machine_path.read_text())
    machine["robot"]["machine_planning_calibration"]["path"] = pin
    machine_path.write_text(json.dumps(machine))
    step = by_name(repo)["cellbuild:weld_cell_a"]
    assert step.source_of("build/cells/weld_cell_a/machine_planning_calibration.json") is None


def test_a_module_srdf_py_imports_is_an_input_of_the_srdf_step(project: Path) -> None:
    """gen_srdf() may import a module beside it; a change to that module makes the SRDF stale."""
    src = project / "robots" / ABB
    (src / "tcps.py").write_text('TCPS = {"welder": {"xyz": ".1 1 .2", "wxyz": "1 0 0 0"}}\n')
    source = (src / "srdf.py").read_text()
    start = source.index("TCPS = {")
    end = source.index("\n}\n", start) + 3
    (src / "srdf.py").write_text(source[:start] + "from tcps import TCPS\n" + source[end:])
    step = by_name(project)[f"srdf:{ABB}"]
    assert f"robots/{ABB}/tcps.py" in step.inputs
    assert run_doit(project).returncode == 0
    (src / "tcps.py").write_text('TCPS = {"welder": {"xyz": ".1 1 .3", "wxyz": "1 0 0 0"}}\n')
    check = run_python(project, "-m", "pipeline", "check")
    assert check.returncode == 1
    assert f"(srdf:{ABB}: robots/{ABB}/tcps.py changed)" in check.stdout
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert f"srdf:{ABB}" in ran(result.stdout)
    srdf = (project / "build" / "robots" / ABB / "robot.srdf").read_text()
    assert 'xyz="0.1 1.0 0.3"' in srdf


TCPS_BEFORE = 'TCPS = {"welder": {"xyz": ".1 1 .2", "wxyz": "1 0 0 0"}}\n'
TCPS_AFTER = TCPS_BEFORE.replace(".2", ".3")
HELPER = f"robots/{ABB}/abbdata"


def _import_tcps_from(src: Path, module: str) -> None:
    """Make the ABB generator take its TCPs from `module`."""
    source = (src / "srdf.py").read_text()
    start = source.index("TCPS = {")
    end = source.index("\n}\n", start) + 3
    (src / "srdf.py").write_text(f"{source[:start]}from {module} import TCPS\n{source[end:]}")


def _package(folder: Path, module: str = "tcps") -> Path:
    """A package folder holding the TCPs module; the module's file."""
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / f"{module}.py").write_text(TCPS_BEFORE)
    return folder / f"{module}.py"


def _real_folder(src: Path, outside: Path) -> Path:
    return _package(src / "abbdata")


def _linked_module_file(src: Path, outside: Path) -> Path:
    target = _package(src.parent.parent / "shared" / "abbdata")
    _package(src / "abbdata", "other")
    (src / "abbdata" / "tcps.py").symlink_to("../../../shared/abbdata/tcps.py")
    return target


def _linked_folder(src: Path, outside: Path) -> Path:
    target = _package(src.parent.parent / "shared" / "abbdata")
    (src / "abbdata").symlink_to("../../shared/abbdata")
    return target


def _linked_folder_outside(src: Path, outside: Path) -> Path:
    target = _package(outside / "abbdata")
    (src / "abbdata").symlink_to(outside / "abbdata")
    return target


def _nested_linked_folder(src: Path, outside: Path) -> Path:
    _package(src / "abbdata", "other")
    target = _package(outside / "vendor")
    (src / "abbdata" / "vendor").symlink_to(outside / "vendor")
    return target


# layout of a helper package beside srdf.py: (make it, the module srdf.py imports, the srdf
# step's helper inputs, the linked folder refused or None)
HELPER_LAYOUTS: dict[str, tuple[Callable[[Path, Path], Path], str, list[str], str | None]] = {
    "real-folder": (
        _real_folder,
        "abbdata.tcps",
        [f"{HELPER}/__init__.py", f"{HELPER}/tcps.py"],
        None,
    ),
    "linked-module-file": (
        _linked_module_file,
        "abbdata.tcps",
        [f"{HELPER}/__init__.py", f"{HELPER}/other.py", f"{HELPER}/tcps.py"],
        None,
    ),
    "symlink_refused-linked-folder": (_linked_folder, "abbdata.tcps", [HELPER], HELPER),
    "symlink_refused-linked-folder-outside": (
        _linked_folder_outside,
        "abbdata.tcps",
        [HELPER],
        HELPER,
    ),
    "symlink_refused-nested-linked-folder": (
        _nested_linked_folder,
        "abbdata.vendor.tcps",
        [f"{HELPER}/__init__.py", f"{HELPER}/other.py", f"{HELPER}/vendor"],
        f"{HELPER}/vendor",
    ),
}


def _refusal(folder: str) -> str:
    return (
        f"{folder}: symlink_refused: the helper folder is a symbolic link; replace the link "
        f"with a real folder holding the modules it points to (copy them into {folder}/): the "
        "build reads nothing through a linked folder, so a change behind it would leave "
        "robot.srdf as it was"
    )


@pytest.mark.parametrize("layout", HELPER_LAYOUTS)
def test_a_helper_package_is_an_input_of_the_srdf_step_and_a_linked_one_refused(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, layout: str
) -> None:
    """A package folder beside srdf.py that was a symbolic link was not entered and nothing in
    it listed: a change behind the link left robot.srdf current. The link itself is an input
    now (so that a new one makes the step run and refuse it), and nothing through it is."""
    make, _, helpers, refused = HELPER_LAYOUTS[layout]
    make(repo / "robots" / ABB, tmp_path_factory.mktemp("outside"))
    steps = plan(repo)
    inputs = {step.name: step for step in steps}[f"srdf:{ABB}"].inputs
    assert list(inputs) == [
        f"robots/{ABB}/srdf.py",
        *helpers,
        f"robots/{ABB}/robot.urdf",
        f"build/stamps/urdf/{ABB}.json",  # the meshes, through the urdf step
        code("srdf"),
    ]
    lines = [finding.line() for finding in linked_folders(repo, steps)]
    assert lines == ([] if refused is None else [_refusal(refused)])


@pytest.mark.parametrize("layout", HELPER_LAYOUTS)
def test_a_change_inside_a_helper_package_reruns_the_srdf_step_unless_its_link_is_refused(
    project: Path, tmp_path_factory: pytest.TempPathFactory, layout: str
) -> None:
    """doit and `pipeline check` after a change to the module srdf.py imports from a package
    beside it: the SRDF and what depends on it are rebuilt, or the linked folder is refused
    (symlink_refused, exit 2, build/ as it was) before and after the change."""
    make, module, _, refused = HELPER_LAYOUTS[layout]
    src = project / "robots" / ABB
    tcps = make(src, tmp_path_factory.mktemp("outside"))
    _import_tcps_from(src, module)
    srdf = project / "build" / "robots" / ABB / "robot.srdf"
    built = tree_bytes(project / "build" / "robots" / ABB)
    first = run_doit(project)
    if refused is not None:
        tcps.write_text(TCPS_AFTER)
        again = run_doit(project)
        for result in (first, again, run_python(project, "-m", "pipeline", "check")):
            said = result.stdout + result.stderr
            assert result.returncode == 2, said
            assert "Traceback" not in said
            assert [line for line in said.splitlines() if ": symlink_refused: " in line] == [
                _refusal(refused)
            ]
        assert ran(again.stdout) == {f"srdf:{ABB}"}  # and refused: nothing after it ran
        assert tree_bytes(project / "build" / "robots" / ABB) == built
        return
    assert first.returncode == 0, first.stdout + first.stderr
    assert 'xyz="0.1 1.0 0.2"' in srdf.read_text()
    tcps.write_text(TCPS_AFTER)
    check = run_python(project, "-m", "pipeline", "check")
    assert check.returncode == 1, check.stdout
    assert f"(srdf:{ABB}: robots/{ABB}/abbdata/tcps.py changed)" in check.stdout
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ran(result.stdout) == {
        f"srdf:{ABB}",
        f"manifest:{ABB}",
        "index:robots",
        "cellbuild:weld_cell_a",
    }
    assert 'xyz="0.1 1.0 0.3"' in srdf.read_text()
    assert run_python(project, "-m", "pipeline", "check").returncode == 0


def test_optional_sources_are_inputs_only_when_present(repo: Path) -> None:
    """Without config files the config step makes nothing; a settings file feeds the spheres."""
    src = repo / "robots" / IIWA
    (src / "config.json").unlink()
    (src / "rtcore_definition.json").unlink()
    (src / "spheres.settings.json").write_text("{}")
    steps = by_name(repo)
    config = steps[f"config:{IIWA}"]
    assert list(config.inputs) == [f"robots/{IIWA}/robot.urdf", code("config")]
    assert config.targets == ()
    assert f"robots/{IIWA}/spheres.settings.json" in steps[f"spheres:{IIWA}"].inputs
    assert f"robots/{ABB}/spheres.settings.json" not in steps[f"spheres:{ABB}"].inputs


def test_a_cell_reads_its_files_and_the_description_of_the_model_it_names(repo: Path) -> None:
    cell = by_name(repo)["cellbuild:weld_cell_a"]
    assert list(cell.inputs) == [
        "cells/weld_cell_a/machine.json",
        "cells/weld_cell_a/machine_planning_calibration.json",
        f"build/stamps/manifest/{ABB}.json",
        f"robots/{ABB}/robot.urdf",
        f"robots/{ABB}/config.json",
        code("cellbuild"),
    ]


@pytest.mark.parametrize(
    ("config", "read"),
    [
        ("file", True),
        ("absent", False),
        ("folder", False),  # only a file is served: the config step refuses the folder
    ],
)
def test_every_cell_serving_a_robot_reads_its_config_json_only_when_it_is_a_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch, config: str, read: bool
) -> None:
    """Cells serving one robot find its config.json once for all (asked once per plan)."""
    import pipeline.plan

    asked: list[str] = []
    is_file = pipeline.plan._is_file
    monkeypatch.setattr(
        pipeline.plan, "_is_file", lambda root, rel: asked.append(rel) or is_file(root, rel)
    )
    for n in (1, 2):
        shutil.copytree(repo / "cells" / "weld_cell_a", repo / "cells" / f"weld_cell_a{n}")
    path = repo / "robots" / ABB / "config.json"
    if config != "file":
        path.unlink()
    if config == "folder":
        path.mkdir()
    steps = by_name(repo)
    for cell in ("weld_cell_a", "weld_cell_a1", "weld_cell_a2"):
        assert (f"robots/{ABB}/config.json" in steps[f"cellbuild:{cell}"].inputs) is read
    assert f"robots/{IIWA}/config.json" in steps["cellbuild:iiwa_bench"].inputs
    assert sorted(asked) == [f"robots/{ABB}/config.json", f"robots/{IIWA}/config.json"]


@pytest.mark.parametrize(
    "machine",
    [
        b'{"robot": {"model_id": "no_such_robot"}}',
        b'{"robot": {"model_id": 7}}',
        b'{"robot": []}',
        b"{not json",
        None,  # a folder in place of machine.json
    ],
    ids=["unknown-model", "model-not-a-string", "robot-not-an-object", "torn", "folder"],
)
def test_a_cell_naming_no_known_model_reads_only_its_own_files(
    repo: Path, machine: bytes | None
) -> None:
    """Planning reads machine.json leniently: the cell step itself reports what is wrong."""
    path = repo / "cells" / "weld_cell_a" / "machine.json"
    path.unlink()
    if machine is None:
        path.mkdir()
    else:
        path.write_bytes(machine)
    cell = by_name(repo)["cellbuild:weld_cell_a"]
    own = [i for i in cell.inputs if i.startswith("cells/weld_cell_a/")]
    assert list(cell.inputs) == [*own, code("cellbuild")]


def pycache(folder: Path) -> None:
    """What git leaves of a removed robot: its srdf.py's compiled bytecode."""
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "srdf.cpython-311.pyc").write_bytes(b"x")


@pytest.mark.parametrize(
    ("make", "planned"),
    [
        (lambda f: pycache(f), False),
        (lambda f: (f / ".DS_Store").write_bytes(b"x"), False),
        (lambda f: (f / ".git").mkdir(), False),
        (lambda f: None, False),  # an empty folder
        (lambda f: (f / "my_arm.urdf").write_text("<robot/>"), True),
        (lambda f: (f / "README.md").write_text("x"), True),
        (lambda f: (f / "robot.urdf").symlink_to(f / "gone.urdf"), True),
    ],
    ids=["pycache", "hidden-file", "hidden-folder", "empty", "misnamed", "any-source", "dangling"],
)
def test_which_folders_under_robots_are_planned(
    repo: Path, make: Callable[[Path], object], planned: bool
) -> None:
    """A folder a person put sources in is planned, so its step names the missing robot.urdf."""
    folder = repo / "robots" / "my_arm"
    folder.mkdir()
    make(folder)
    assert ("my_arm" in model_ids(repo)) is planned
    assert ("urdf:my_arm" in by_name(repo)) is planned


def test_hidden_folders_and_files_under_robots_and_cells_are_not_planned(repo: Path) -> None:
    (repo / "robots" / ".cache").mkdir()
    (repo / "robots" / ".cache" / "link_1.stl").write_text("solid")
    (repo / "robots" / "notes.txt").write_text("x")
    (repo / "cells" / ".scratch").mkdir()
    (repo / "cells" / ".scratch" / "notes.txt").write_text("x")
    assert model_ids(repo) == [ABB, IIWA]
    assert cell_ids(repo) == ["iiwa_bench", "weld_cell_a"]


def test_a_hidden_folder_holding_robot_urdf_is_planned_so_that_its_id_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/robots.md: a `.my_arm/robot.urdf` looks meant as a robot, unlike a `.cache/`."""
    (repo / "robots" / ".my_arm").mkdir()
    (repo / "robots" / ".my_arm" / "robot.urdf").write_text("<robot/>")
    assert ".my_arm" in model_ids(repo)
    monkeypatch.chdir(repo)
    assert cli_main(["validate"]) == 2
    assert "robots/.my_arm: invalid_model_id: " in capsys.readouterr().err


def test_hidden_python_files_beside_srdf_py_are_not_helper_modules(repo: Path) -> None:
    """Emacs's lock file `.#srdf.py` (a link to nowhere while a buffer holds unsaved changes)
    was an input of srdf:<id>: `doit` ended in doit's `Dependent file ... does not exist`.
    No import reaches a module whose name starts with a dot."""
    folder = repo / "robots" / ABB
    os.symlink("user@host.1234:1700000000", folder / ".#srdf.py")
    (folder / "helpers").mkdir()
    (folder / "helpers" / ".#joints.py").write_text("")
    (folder / "helpers" / "joints.py").write_text("")
    inputs = by_name(repo)[f"srdf:{ABB}"].inputs
    assert [i for i in inputs if i.endswith(".py")] == [
        f"robots/{ABB}/srdf.py",
        f"robots/{ABB}/helpers/joints.py",
    ]


def test_a_helper_module_link_to_nothing_is_not_an_input(project: Path) -> None:
    """A module beside srdf.py that is a link to nothing (a shared file moved away) was an
    input: the srdf step ran, then doit stopped with its own "Dependent file ... does not
    exist" (exit 2, no finding) after the step had rewritten its stamp, leaving the manifest
    stale. No import reaches such a module; once the link resolves it is an input again."""
    src = project / "robots" / ABB
    (src / "shared.py").symlink_to("../../shared/shared.py")
    assert f"robots/{ABB}/shared.py" not in by_name(project)[f"srdf:{ABB}"].inputs
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert run_python(project, "-m", "pipeline", "check").returncode == 0
    (project / "shared").mkdir()
    (project / "shared" / "shared.py").write_text("")
    assert f"robots/{ABB}/shared.py" in by_name(project)[f"srdf:{ABB}"].inputs
    check = run_python(project, "-m", "pipeline", "check")
    assert check.returncode == 1
    assert f"(srdf:{ABB}: robots/{ABB}/shared.py added)" in check.stdout


# (case, a spare link to nothing, its step, the command that checks the folder, its lines)
LINKS_TO_NOTHING = [
    (
        "robot-meshes",
        f"robots/{ABB}/meshes/spare.stl",
        f"urdf:{ABB}",
        ("validate", ABB),
        f"validate: {ABB} ok\n",
    ),
    (
        "cell-folder",
        "cells/iiwa_bench/notes.txt",
        "cellbuild:iiwa_bench",
        ("cell", "cells/iiwa_bench", "--check"),
        f"cell: iiwa_bench ok, model {IIWA}, no calibration (empty document)\n",
    ),
]


@pytest.mark.parametrize(
    ("link", "step", "command", "lines"),
    [c[1:] for c in LINKS_TO_NOTHING],
    ids=[c[0] for c in LINKS_TO_NOTHING],
)
def test_a_spare_link_to_nothing_is_not_an_input(
    project: Path, link: str, step: str, command: tuple[str, ...], lines: str
) -> None:
    """A link to nothing in meshes/ that the URDF does not name, or in a cell's folder, was
    an input: `pipeline validate` (or `cell --check`) said ok, the step ran and succeeded, then
    doit stopped with its own "Dependent file ... does not exist" (exit 2, no finding). As a
    helper module's (above): no input, and once the link resolves an input again."""
    (project / link).symlink_to(project / "gone")
    assert link not in by_name(project)[step].inputs
    checked = run_python(project, "-m", "pipeline", *command)
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, lines, "")
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert run_python(project, "-m", "pipeline", "check").returncode == 0
    (project / "gone").write_text("")
    assert link in by_name(project)[step].inputs


def test_without_robots_or_cells_folders_the_plan_is_the_code_stamps_and_the_index(
    tmp_path: Path,
) -> None:
    assert [step.name for step in plan(tmp_path)] == [
        *(f"code:{stage}" for stage in CODE),
        "index:robots",
    ]


def test_every_input_stamp_comes_from_an_earlier_step(repo: Path) -> None:
    made: set[str] = set()
    stamps = {step.stamp for step in plan(repo)}
    for step in plan(repo):
        assert {i for i in step.inputs if i in stamps} <= made, step.name
        made.add(step.stamp)


def test_needed_is_a_step_and_everything_upstream_of_it_in_plan_order(repo: Path) -> None:
    names = [step.name for step in needed(plan(repo), "cellbuild:iiwa_bench")]
    assert names == [
        *(f"code:{stage}" for stage in ("urdf", "config", "srdf", "spheres", "manifest")),
        "code:cellbuild",
        *(f"{stage}:{IIWA}" for stage in ROBOT_STAGES),
        "cellbuild:iiwa_bench",
    ]
    assert [step.name for step in needed(plan(repo), "code:index")] == ["code:index"]
    assert needed(plan(repo), "no:such") == []


def test_file_missing_robot_and_cell_folders_without_their_file_are_reported(
    project: Path,
) -> None:
    """A robot folder with `my_arm.urdf`, a cell with `Machine.json`: once skipped in silence."""
    assert run_doit(project).returncode == 0
    before = tree_bytes(project / "build")
    arm = project / "robots" / "my_arm"
    arm.mkdir()
    shutil.copy2(project / "robots/abb_irb2400/robot.urdf", arm / "my_arm.urdf")
    cell = project / "cells" / "my_cell"
    cell.mkdir()
    shutil.copy2(project / "cells/weld_cell_a/machine.json", cell / "Machine.json")
    result = run_doit(project)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    out = result.stdout
    assert "robots/my_arm/robot.urdf: file_missing: file does not exist; rename my_arm.urdf" in out
    assert "cells/my_cell/machine.json: file_missing: file does not exist; rename Machine." in out
    assert tree_bytes(project / "build") == before
    check = run_python(project, "-m", "pipeline", "check")
    assert check.returncode == 1
    missing = "urdf:my_arm: robots/my_arm/robot.urdf is missing"
    assert f"missing: build/robots/my_arm/robot.urdf ({missing})" in check.stdout
    validate = run_python(project, "-m", "pipeline", "validate")
    assert validate.returncode == 2
    assert "robots/my_arm/robot.urdf: file_missing: " in validate.stderr


def test_folders_holding_only_leftovers_are_not_robots_or_cells(project: Path) -> None:
    """git leaves a removed robot's __pycache__ behind; hidden folders are not sources either."""
    assert run_doit(project).returncode == 0
    (project / "robots/old_arm/__pycache__").mkdir(parents=True)
    (project / "robots/old_arm/__pycache__/srdf.cpython-311.pyc").write_bytes(b"x")
    (project / "robots/old_arm/.DS_Store").write_bytes(b"x")
    (project / "cells/.scratch").mkdir()
    (project / "cells/.scratch/notes.txt").write_text("x")
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert ran(result.stdout) == set()
    assert run_python(project, "-m", "pipeline", "check").returncode == 0


JUNK = (".DS_Store", "._link_1.stl", "Thumbs.db", "desktop.ini", "link_3.stl~", "#notes#")


def test_editor_and_os_files_in_meshes_and_cells_are_no_step_inputs(repo: Path) -> None:
    """A Finder's .DS_Store in meshes/ was an input of urdf:<id> (and so of every step after
    it): the stamps committed from a Mac were stale on a clean clone, and CI failed."""
    before = {name: step.inputs for name, step in by_name(repo).items()}
    (repo / f"robots/{IIWA}/meshes/visual").mkdir(exist_ok=True)
    for folder in (f"robots/{ABB}/meshes", f"robots/{IIWA}/meshes/visual", "cells/weld_cell_a"):
        for name in JUNK:
            (repo / folder / name).write_bytes(b"x")
    (repo / f"robots/{ABB}/meshes/.git-annex").mkdir()
    (repo / f"robots/{ABB}/meshes/.git-annex/link_1.stl").write_bytes(b"x")
    assert {name: step.inputs for name, step in by_name(repo).items()} == before


def test_editor_and_os_files_leave_a_built_checkout_current(project: Path) -> None:
    """The trial's case end to end: the stamps doit writes with them are a clean clone's."""
    assert run_doit(project).returncode == 0
    stamps = tree_bytes(project / "build")
    for folder in (f"robots/{ABB}/meshes", "cells/weld_cell_a", f"robots/{IIWA}"):
        for name in JUNK:
            (project / folder / name).write_bytes(b"x")
    # an editor's backup of the calibration names the schema too: not an unpinned calibration
    shutil.copy2(
        project / "cells/weld_cell_a/machine_planning_calibration.json",
        project / "cells/weld_cell_a/machine_planning_calibration.json~",
    )
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert ran(result.stdout) == set()
    assert tree_bytes(project / "build") == stamps
    assert run_python(project, "-m", "pipeline", "check").returncode == 0


def test_files_under_lists_what_os_walk_lists(repo: Path) -> None:
    """Planning walks every robot and cell folder on every run; os.walk's per-folder lstat
    was a fifth of planning at 100 robots. The same files, links as os.walk treats them."""
    from pipeline.sourcefiles import files_under

    folder = repo / "robots" / "abb_irb2400"
    (folder / "meshes" / "deep" / "er").mkdir(parents=True)
    (folder / "meshes" / "deep" / "er" / "x.stl").write_bytes(b"solid")
    (folder / "linked").symlink_to(folder / "meshes")  # a linked folder is not entered
    (folder / "dangling.stl").symlink_to(folder / "gone.stl")
    (folder / "same.urdf").symlink_to(folder / "robot.urdf")
    walked = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        rel = Path(dirpath).relative_to(repo).as_posix()
        walked += [f"{rel}/{name}" for name in filenames]
    listed = files_under(repo, "robots/abb_irb2400")
    # but a link to nothing: no input (doit would end the run on it)
    assert listed == sorted(set(walked) - {"robots/abb_irb2400/dangling.stl"})
    assert "robots/abb_irb2400/meshes/deep/er/x.stl" in listed
    assert not any(path.startswith("robots/abb_irb2400/linked/") for path in listed)
    assert files_under(repo, "robots/nothing_here") == []


@pytest.mark.parametrize("folder", ["robots/abb_irb2400", "cells/weld_cell_a"])
def test_file_unreadable_a_folder_this_user_cannot_search_is_planned_not_taken_as_removed(
    repo: Path, monkeypatch: pytest.MonkeyPatch, folder: str
) -> None:
    """chmod 000 on a robot or cell folder once left it unplanned, and `doit` pruned its build."""
    refuse_under(monkeypatch, "lstat", repo / folder)
    refuse_under(monkeypatch, "scandir", repo / folder)
    assert model_ids(repo) == [ABB, IIWA]
    assert cell_ids(repo) == ["iiwa_bench", "weld_cell_a"]


@pytest.mark.parametrize("top", ["robots", "cells"])
def test_not_a_folder_robots_or_cells_as_a_file_is_refused_not_taken_as_empty(
    project: Path, top: str
) -> None:
    """A file in place of robots/ planned no robot, and `doit` removed every robot's outputs."""
    assert run_doit(project).returncode == 0
    before = tree_bytes(project / "build")
    shutil.rmtree(project / top)
    (project / top).write_text("x")
    result = run_doit(project)
    said = result.stdout + result.stderr
    assert result.returncode == 2, said
    assert f"{top}: not_a_folder: is not a folder, so the {top} in it" in said
    assert "Traceback" not in said
    assert tree_bytes(project / "build") == before
    check = run_python(project, "-m", "pipeline", "check")
    assert check.returncode == 2 and f"{top}: not_a_folder" in check.stderr
    # validate reads robots/ alone (security.md): a file in place of cells/ does not concern it
    validate = run_python(project, "-m", "pipeline", "validate")
    refused = top == "robots"
    assert validate.returncode == (2 if refused else 0), validate.stderr
    assert (f"{top}: not_a_folder" in validate.stderr) == refused


@pytest.mark.parametrize("top", ["robots", "cells"])
def test_file_unreadable_robots_or_cells_folder_that_cannot_be_listed_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch, top: str
) -> None:
    """It once ended `doit` with a traceback (exit 3); planning nothing would prune all."""
    refuse_under(monkeypatch, "scandir", repo / top)
    with pytest.raises(ContractError) as exc:
        plan(repo)
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("file_unreadable", top)
    assert finding.hint.startswith(f"give the user who builds read and search permission on {top}/")


@pytest.mark.parametrize("top", ["robots", "cells"])
def test_file_unreadable_robots_or_cells_folder_listed_but_not_searchable_is_named(
    repo: Path, monkeypatch: pytest.MonkeyPatch, top: str
) -> None:
    """With mode 600 the folders in it could be listed but not reached: each was named
    unreadable, with a hint to chmod it, which would not have helped."""
    below = f"{repo / top}{os.sep}"
    for call in ("stat", "lstat"):
        real = getattr(os, call)

        def refused(path: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if os.fspath(path).startswith(below):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, call, refused)
    with pytest.raises(ContractError) as exc:
        plan(repo)
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("file_unreadable", top)


@pytest.mark.skipif(os.geteuid() == 0, reason="root searches any folder; simulated above")
def test_file_unreadable_folders_stop_doit_and_leave_build_as_it_was(project: Path) -> None:
    assert run_doit(project).returncode == 0
    before = tree_bytes(project / "build")
    for folder, mode in (
        ("robots/abb_irb2400", 0),
        ("cells/weld_cell_a", 0),
        ("robots", 0),
        ("robots", 0o600),  # listed, not searchable
    ):
        (project / folder).chmod(mode)
        try:
            result = run_doit(project)
        finally:
            (project / folder).chmod(0o755)
        said = result.stdout + result.stderr
        assert result.returncode == 2, said
        assert "Traceback" not in said
        assert f"{folder}: file_unreadable: folder cannot be listed" in said
        assert tree_bytes(project / "build") == before


def _link_robot_outside(repo: Path, outside: Path) -> str:
    shutil.copytree(repo / "robots" / ABB, outside / "panda")
    (repo / "robots" / "outside").symlink_to(outside / "panda")
    return "robots/outside"


def _link_robot_to_robot(repo: Path, outside: Path) -> str:
    (repo / "robots" / "abb2").symlink_to(ABB)
    return "robots/abb2"


def _link_robot_dangling(repo: Path, outside: Path) -> str:
    (repo / "robots" / "gone").symlink_to(outside / "gone")
    return "robots/gone"


def _link_cell(repo: Path, outside: Path) -> str:
    (repo / "cells" / "bench2").symlink_to("iiwa_bench")
    return "cells/bench2"


def _link_meshes_outside(repo: Path, outside: Path) -> str:
    shutil.move(repo / "robots" / ABB / "meshes", outside / "meshes")
    (repo / "robots" / ABB / "meshes").symlink_to(outside / "meshes")
    return f"robots/{ABB}/meshes"


@pytest.mark.parametrize(
    ("link", "step"),
    [
        (_link_robot_outside, "urdf:outside"),
        (_link_robot_to_robot, "urdf:abb2"),
        (_link_robot_dangling, "urdf:gone"),
        (_link_cell, "cellbuild:bench2"),
        (_link_meshes_outside, f"urdf:{ABB}"),
    ],
    ids=["robot-outside", "robot-to-robot", "robot-dangling", "cell-to-cell", "meshes-outside"],
)
def test_symlink_refused_a_linked_folder_is_planned_but_nothing_through_it_is_an_input(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, link: Callable[..., str], step: str
) -> None:
    """A linked robots/<id> was planned with the files it points to as inputs (digested, outside
    the repository), a link to another robot as a second robot; its step refuses it now."""
    folder = link(repo, tmp_path_factory.mktemp("outside"))
    steps = by_name(repo)
    assert step in steps  # planned: its step names the link, and its outputs are not pruned
    through = [i for s in steps.values() for i in s.inputs if i.startswith(f"{folder}/")]
    assert through == []
    assert all(src != f"{folder}/" for s in steps.values() for src, _ in s.mirrors)


@pytest.mark.parametrize(
    "machine",
    [b"{}", b'{"schema": "rosie.machine-config.v1", "cell_id": "weld_cell_a"}', b'{"Robot": {}}'],
    ids=["empty", "no-robot", "misspelt"],
)
def test_a_machine_json_without_robot_is_planned_and_reported_by_its_step(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], machine: bytes
) -> None:
    """Planning read `["robot"]` unguarded: every doit command ended in a KeyError traceback."""
    (repo / "cells" / "weld_cell_a" / "machine.json").write_bytes(machine)
    cell = by_name(repo)["cellbuild:weld_cell_a"]
    assert list(cell.inputs)[-1] == code("cellbuild")
    monkeypatch.chdir(repo)
    assert cli_main(["cell", "cells/weld_cell_a"]) == 2
    assert "cells/weld_cell_a/machine.json:/: missing_field: required field 'robot'" in (
        capsys.readouterr().err
    )
