"""The doit task graph: one step per stage and robot (or cell), each stamped by content."""

from __future__ import annotations

import atexit
import fcntl
import functools
import importlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from doit.dependency import FileChangedChecker
from doit.exceptions import TaskError, TaskFailed, UnmetDependency
from doit.reporter import ConsoleReporter

from pipeline.digests import Digests
from pipeline.stamps import Step, run_step, stamp_path

ROBOTS = "robots"
CELLS = "cells"
BASE_CODE = ("pipeline/findings.py", "pipeline/strict_io.py", "pipeline/stamps.py")
URDF_CODE = (
    *BASE_CODE,
    "pipeline/urdf/__init__.py",
    "pipeline/urdf/model.py",
    "pipeline/urdf/read.py",
    "pipeline/urdf/rules.py",
    "pipeline/description.py",
)
CONFIG_CODE = (
    *URDF_CODE,
    "pipeline/schemas.py",
    "pipeline/schemas/robot-config.schema.json",
    "pipeline/schemas/robot-definition.schema.json",
    "pipeline/config.py",
    "pipeline/rtcore.py",
)
CONFIG_SOURCES = ("config.json", "rtcore_definition.json")
SRDF_CODE = (
    *URDF_CODE,
    *(
        f"pipeline/srdf/{name}.py"
        for name in (
            "__init__",
            "checker",
            "child",
            "compile",
            "generate",
            "groups",
            "model",
            "read",
            "units",
            "validate",
            "validate_more",
            "view",
            "write",
        )
    ),
)
MANIFEST_CODE = (*BASE_CODE, "pipeline/manifest.py", "pipeline/description.py")
INDEX_CODE = (*MANIFEST_CODE, "pipeline/identity.py")
CELL_CODE = (
    *URDF_CODE,
    "pipeline/manifest.py",
    "pipeline/identity.py",
    "pipeline/schemas.py",
    "pipeline/schemas/machine-config.schema.json",
    "pipeline/schemas/machine-planning-calibration.schema.json",
    "pipeline/config.py",
    "pipeline/kinematics.py",
    "pipeline/calibration.py",
    "pipeline/cell.py",
)


class ContractFailure(TaskError):  # type: ignore[misc]
    """A task refused bad input; its message is the finding lines."""


class FindingsReporter(ConsoleReporter):  # type: ignore[misc]
    """doit's console reporter, printing refused input as finding lines without a traceback."""

    desc = "console, with bad input printed as finding lines"

    def add_failure(self, task: Any, fail: Any) -> None:
        """Print refused input as finding lines, skip its knock-on failures, others as doit does."""
        if isinstance(fail, ContractFailure):
            self.write(f"{fail.message}\n")
        elif not isinstance(fail, UnmetDependency):
            super().add_failure(task, fail)


class ContentChecker(FileChangedChecker):  # type: ignore[misc]
    """doit's md5 checker logic (timestamp, then size, then content) on the shared SHA-256 cache.

    doit's own MD5Checker hashes a touched file once for every task that depends on it and never
    refreshes the state of tasks it skips, so one `touch` costs a re-hash on every later run.
    Here the content hash comes from the process-wide, stat-keyed digest cache the stamps use.
    """

    def check_modified(self, file_path: str, file_stat: Any, state: Any) -> bool:
        """Whether a dependency changed since `state` was saved."""
        timestamp, size, digest = state
        if file_stat.st_mtime == timestamp:
            return False
        if file_stat.st_size != size:
            return True
        return bool(_known_digests(Path.cwd()).of(file_path) != digest)

    def get_state(self, dep: str, current_state: Any) -> Any:
        """The (timestamp, size, SHA-256) of a dependency after its task ran."""
        info = os.stat(dep)
        if current_state and current_state[0] == info.st_mtime:
            return None
        return info.st_mtime, info.st_size, _known_digests(Path.cwd()).of(dep)


# Plain `doit` runs these groups; `check` and `cell` (packaging into dist/) run when named.
DEFAULT_TASKS = ["urdf", "config", "srdf", "manifest", "index", "cellbuild"]
DOIT_CONFIG: dict[str, Any] = {
    "default_tasks": DEFAULT_TASKS,
    "backend": "json",
    "dep_file": ".doit.db",
    "check_file_uptodate": ContentChecker,
    "reporter": FindingsReporter,
    "continue": True,
    "verbosity": 1,
}


def _call(module: str, function: str, args: tuple[Any, ...], root: Path) -> Any:
    return getattr(importlib.import_module(module), function)(root, *args)


def lazy(module: str, function: str, *args: Any) -> Any:
    """A make function imported only when the step runs, so listing the graph stays light."""
    return functools.partial(_call, module, function, args)


def _files_under(root: Path, folder: str) -> list[str]:
    base = root / folder
    if not base.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file())


def model_ids(root: Path) -> list[str]:
    """Every robot model with sources under robots/."""
    base = root / ROBOTS
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "robot.urdf").is_file())


def robot_steps(root: Path, model_id: str) -> dict[str, Step]:
    """The steps that compile one robot, keyed by stage."""
    src = f"{ROBOTS}/{model_id}"
    urdf = Step(
        f"urdf:{model_id}",
        "validate the URDF; copy it and its meshes into build/",
        (f"{src}/robot.urdf", *_files_under(root, f"{src}/meshes"), *URDF_CODE),
        lazy("pipeline.description", "make_urdf_copies", model_id),
        (f"build/robots/{model_id}/robot.urdf",),
    )
    steps = {"urdf": urdf}
    present = [f"{src}/{name}" for name in CONFIG_SOURCES if (root / src / name).is_file()]
    steps["config"] = Step(
        f"config:{model_id}",
        "validate config.json and rtcore_definition.json; copy them into build/",
        (urdf.stamp, *present, *CONFIG_CODE),
        lazy("pipeline.description", "make_config_copies", model_id),
        tuple(f"build/robots/{model_id}/{name}" for name in CONFIG_SOURCES),
    )
    if (root / src / "srdf.py").is_file():
        steps["srdf"] = Step(
            f"srdf:{model_id}",
            "run gen_srdf() and write the checked SRDF",
            # the urdf step's stamp orders this step after the URDF's own checks, so that a
            # bad URDF is reported once (by urdf:<id>) and this step is skipped
            (f"{src}/srdf.py", f"{src}/robot.urdf", urdf.stamp, *SRDF_CODE),
            lazy("pipeline.srdf.compile", "make_srdf", model_id),
            (f"build/robots/{model_id}/robot.srdf",),
        )
    upstream = [step.name for step in steps.values()]
    steps["manifest"] = Step(
        f"manifest:{model_id}",
        "write the description manifest",
        (*(steps[s].stamp for s in steps), *MANIFEST_CODE),
        lazy("pipeline.description", "make_manifest", model_id, tuple(upstream)),
        (f"build/robots/{model_id}/robot_description_manifest.json",),
    )
    return steps


def index_step(root: Path, models: list[str], manifests: list[Step]) -> Step:
    """The step that records every description's identity in build/index.json."""
    return Step(
        "index:robots",
        "record each description's identity and file count",
        (*(step.stamp for step in manifests), *INDEX_CODE),
        lazy("pipeline.description", "make_index", tuple(models)),
        ("build/index.json",),
    )


def cell_ids(root: Path) -> list[str]:
    """Every cell folder under cells/ that holds a machine.json."""
    base = root / CELLS
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "machine.json").is_file())


def _cell_model(root: Path, cell_id: str) -> str | None:
    """The model a cell names, read leniently: the cell step itself validates machine.json."""
    try:
        doc = json.loads((root / CELLS / cell_id / "machine.json").read_bytes())
        model = doc["robot"]["model_id"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return model if isinstance(model, str) else None


def cell_step(root: Path, cell_id: str, manifests: Mapping[str, Step]) -> Step:
    """The step that validates one cell and compiles it into build/cells/<cell_id>/."""
    inputs = _files_under(root, f"{CELLS}/{cell_id}")
    model = _cell_model(root, cell_id)
    if model is not None and model in manifests:
        src = f"{ROBOTS}/{model}"
        inputs += [manifests[model].stamp, f"{src}/robot.urdf"]
        inputs += [f"{src}/config.json"] if (root / src / "config.json").is_file() else []
    out = f"build/cells/{cell_id}"
    return Step(
        f"cellbuild:{cell_id}",
        "validate the cell's machine config and calibration; compile it into build/cells/",
        (*inputs, *CELL_CODE),
        lazy("pipeline.cell", "make_cell", cell_id),
        (f"{out}/cell.json", f"{out}/machine_planning_calibration.json"),
    )


def needed(steps: list[Step], name: str) -> list[Step]:
    """The step called `name` and every step it depends on, in plan order."""
    by_stamp = {step.stamp: step for step in steps}
    wanted: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in wanted:
            continue
        wanted.add(current)
        step = next((s for s in steps if s.name == current), None)
        todo += [] if step is None else [by_stamp[i].name for i in step.inputs if i in by_stamp]
    return [step for step in steps if step.name in wanted]


def plan(root: Path) -> list[Step]:
    """Every step of the build, in an order where inputs come before their users."""
    models = model_ids(root)
    per_robot = [robot_steps(root, model_id) for model_id in models]
    steps = [step for stages in per_robot for step in stages.values()]
    steps.append(index_step(root, models, [stages["manifest"] for stages in per_robot]))
    manifests = {m: stages["manifest"] for m, stages in zip(models, per_robot, strict=True)}
    steps += [cell_step(root, cell_id, manifests) for cell_id in cell_ids(root)]
    return steps


@functools.cache
def _known_digests(root: Path) -> Digests:
    """This process's digest cache, written back when doit exits."""
    known = Digests(root)
    atexit.register(known.save)
    return known


def _action(root: Path, step: Step) -> ContractFailure | None:
    from pipeline.findings import ContractError, render

    try:
        run_step(root, step, _known_digests(root))
    except ContractError as exc:
        return ContractFailure(render(exc.findings))
    return None


def doit_task(root: Path, step: Step) -> dict[str, Any]:
    """The doit task dict of a step: its inputs as file_dep, its stamp among the targets."""
    _, _, name = step.name.partition(":")
    return {
        "name": name,
        "actions": [(_action, [root, step])],
        "file_dep": list(step.inputs),
        "targets": [step.stamp, *step.targets],
        "doc": step.doc,
    }


def hold_build_lock(root: Path) -> IO[str]:
    """Take the checkout's build lock, waiting for another run to finish; keep it open."""
    handle = (root / ".doit.lock").open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            "doit: another build is running in this checkout; waiting for it to finish",
            file=sys.stderr,
            flush=True,
        )
        fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def doit_groups(root: Path) -> Mapping[str, list[dict[str, Any]]]:
    """The doit tasks of the plan, grouped by stage."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for step in plan(root):
        groups.setdefault(step.name.partition(":")[0], []).append(doit_task(root, step))
    return groups


@functools.cache
def _session(root: Path) -> tuple[IO[str], Mapping[str, list[dict[str, Any]]]]:
    """One doit run in one checkout: its build lock (held until exit) and its graph."""
    lock = hold_build_lock(root)
    return lock, doit_groups(root)


def _group(stage: str) -> Iterator[dict[str, Any]]:
    yield from _session(Path.cwd())[1].get(stage, [])


def task_cellbuild() -> Iterator[dict[str, Any]]:
    """Validate each cell and compile it into build/cells/<cell_id>/."""
    yield from _group("cellbuild")


def _package(root: Path, cell_id: str) -> ContractFailure | None:
    from pipeline.cell import package_cell
    from pipeline.findings import ContractError, render

    try:
        identity = package_cell(root, cell_id)
    except ContractError as exc:
        return ContractFailure(render(exc.findings))
    print(f"{cell_id}: dist/{cell_id}.tar.gz {identity}")
    return None


def task_cell() -> Iterator[dict[str, Any]]:
    """Package a compiled cell as dist/<cell_id>.tar.gz and print its bundle identity."""
    root = Path.cwd()
    _session(root)  # the build lock, as for every other group
    for cell_id in cell_ids(root):
        yield {
            "name": cell_id,
            "actions": [(_package, [root, cell_id])],
            "file_dep": [stamp_path(f"cellbuild:{cell_id}")],
            "targets": [f"dist/{cell_id}.tar.gz", f"dist/{cell_id}.identity"],
            "doc": f"package {cell_id} as dist/{cell_id}.tar.gz with its identity",
            "verbosity": 2,
        }


def _check_action(root: Path) -> TaskFailed | None:
    from pipeline.freshness import check

    problems = check(root, plan(root), _known_digests(root))
    if problems:
        return TaskFailed("\n".join(p.line() for p in problems))
    return None


def task_check() -> dict[str, Any]:
    """Fail when build/ is not exactly what the sources produce (writes nothing)."""
    return {"actions": [(_check_action, [Path.cwd()])], "uptodate": [False], "verbosity": 2}


def task_urdf() -> Iterator[dict[str, Any]]:
    """Validate each robot's URDF and copy it with its meshes into build/robots/."""
    yield from _group("urdf")


def task_config() -> Iterator[dict[str, Any]]:
    """Validate each robot's config.json and rtcore_definition.json and copy them into build/."""
    yield from _group("config")


def task_srdf() -> Iterator[dict[str, Any]]:
    """Run each robot's gen_srdf() source into build/robots/<id>/robot.srdf."""
    yield from _group("srdf")


def task_manifest() -> Iterator[dict[str, Any]]:
    """Write each description's robot_description_manifest.json."""
    yield from _group("manifest")


def task_index() -> Iterator[dict[str, Any]]:
    """Record every description's identity and file count in build/index.json."""
    yield from _group("index")
