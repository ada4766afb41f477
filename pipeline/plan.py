"""The build plan: every step, its inputs (sources, upstream stamps, code) and its make."""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline.findings import Finding
from pipeline.sourcefiles import files_under, folders_holding, helper_modules
from pipeline.stagecode import CODE, code
from pipeline.stamps import Step, unrecordable_names
from pipeline.strict_io import (
    JSON_LIMIT,
    linked_folder,
    linked_helper_folders,
    read_regular,
)

ROBOTS = "robots"
CELLS = "cells"
# a calibration path a cell may pin, as the plan reads it: folders and names, no `..`
_PLAIN_PATH = re.compile(r"(?!.*(?:^|/)\.\.(?:/|$))[\w.-]+(?:/[\w.-]+)*")
CONFIG_SOURCES = ("config.json", "rtcore_definition.json")
SPHERES_SETTINGS = "spheres.settings.json"


def no_outputs(root: Path) -> dict[str, bytes]:
    """The make of a step whose stamp alone is its output."""
    return {}


def code_steps() -> list[Step]:
    """One step per stage, stamping the digests of the stage's code."""
    return [
        Step(
            f"code:{stage}",
            f"record the digests of the code that makes {stage} outputs",
            modules,
            functools.partial(_call, "pipeline.plan", "no_outputs", ()),
        )
        for stage, modules in CODE.items()
    ]


def _call(module: str, function: str, args: tuple[Any, ...], root: Path) -> Any:
    return getattr(importlib.import_module(module), function)(root, *args)


def lazy(module: str, function: str, *args: Any) -> Any:
    """A make function imported only when the step runs, so listing the graph stays light."""
    return functools.partial(_call, module, function, args)


# Planning runs for every robot and cell on every doit run, so the helpers below work on
# strings (os.scandir, os.path) rather than pathlib objects, which cost several times more.


def _linked(root: Path, rel: str) -> bool:
    return os.path.islink(os.path.join(root, rel))


def _through_no_link(step: Step, folder: str) -> Step:
    """The step of a linked robot or cell folder: it reads nothing through the link (its make
    refuses the folder, strict_io.linked_folder), so no digest or check reads outside."""
    inside = f"{folder}/"
    inputs = tuple(path for path in step.inputs if not path.startswith(inside))
    return step._replace(inputs=inputs, mirrors=())


def _is_file(root: Path, rel: str) -> bool:
    return os.path.isfile(os.path.join(root, rel))


def _lexists(root: Path, rel: str) -> bool:
    return os.path.lexists(os.path.join(root, rel))


def model_ids(root: Path) -> list[str]:
    """Every robot model with sources under robots/."""
    return folders_holding(root, ROBOTS, "robot.urdf")


def robot_steps(root: Path, model_id: str) -> dict[str, Step]:
    """The steps that compile one robot, keyed by stage."""
    src = f"{ROBOTS}/{model_id}"
    # a linked robot folder is planned, but nothing in it is listed or read: its urdf step
    # refuses it (symlink_refused), and the steps after that one do not run
    linked = _linked(root, src)
    meshes = [] if linked else files_under(root, f"{src}/meshes")
    urdf = Step(
        f"urdf:{model_id}",
        "validate the URDF; copy it and its meshes into build/",
        (f"{src}/robot.urdf", *meshes, code("urdf")),
        lazy("pipeline.description", "make_urdf_copies", model_id),
        (f"build/robots/{model_id}/robot.urdf",),
        mirrors=((f"{src}/", f"build/robots/{model_id}/"),),
    )
    steps = {"urdf": urdf}
    # lexists, not is_file, here and below: an optional source that is a folder, a FIFO or a
    # dangling link is an input its step refuses, never an absent file
    present = [
        f"{src}/{name}" for name in CONFIG_SOURCES if not linked and _lexists(root, f"{src}/{name}")
    ]
    steps["config"] = Step(
        f"config:{model_id}",
        "validate config.json and rtcore_definition.json; copy them into build/",
        # after the URDF's own checks, so that a bad URDF is reported once (by urdf:<id>) and
        # this step is skipped; a mesh change leaves this step current
        (f"{src}/robot.urdf", *present, code("config")),
        lazy("pipeline.description", "make_config_copies", model_id),
        tuple(f"build/robots/{model_id}/{path.rsplit('/', 1)[1]}" for path in present),
        after=(urdf.name,),
        mirrors=((f"{src}/", f"build/robots/{model_id}/"),),
    )
    # srdf.py is required, not optional: a planner loads no robot without its SRDF
    modules, links = helper_modules(root, src, linked)
    steps["srdf"] = Step(
        f"srdf:{model_id}",
        "run gen_srdf() and write the checked SRDF",
        # a linked folder is an input too, so that a new one makes the step run and refuse it;
        # the meshes (its group states are collided) through the urdf step's stamp: one input
        # instead of every mesh again, which a no-op would check once more
        (f"{src}/srdf.py", *sorted(modules + links), f"{src}/robot.urdf", urdf.stamp, code("srdf")),
        lazy("pipeline.srdf.compile", "make_srdf", model_id, tuple(links)),
        (f"build/robots/{model_id}/robot.srdf",),
        after=(urdf.name,),  # as config: a bad URDF is reported by urdf:<id> alone
    )
    found = not linked and _lexists(root, f"{src}/{SPHERES_SETTINGS}")
    settings = [f"{src}/{SPHERES_SETTINGS}"] if found else []
    steps["spheres"] = Step(
        f"spheres:{model_id}",
        "fit (or restamp) the collision spheres; prove they cover every collision surface",
        # the meshes are inputs through the urdf step's stamp and by name: a mesh change
        # reaches this step even when the URDF copy is unchanged
        (
            f"{src}/robot.urdf",
            *meshes,
            *settings,
            urdf.stamp,
            code("spheres"),
        ),
        lazy("pipeline.spheres.task", "make_spheres", model_id),
        (f"build/robots/{model_id}/spheres.json",),
    )
    if linked:  # the manifest below reads stamps only
        steps = {stage: _through_no_link(step, src) for stage, step in steps.items()}
    upstream = [step.name for step in steps.values()]
    steps["manifest"] = Step(
        f"manifest:{model_id}",
        "write the description manifest",
        (*(steps[s].stamp for s in steps), code("manifest")),
        lazy("pipeline.description", "make_manifest", model_id, tuple(upstream)),
        (f"build/robots/{model_id}/robot_description_manifest.json",),
    )
    return steps


def index_step(root: Path, models: list[str], manifests: list[Step]) -> Step:
    """The step that records every description's identity in build/index.json."""
    return Step(
        "index:robots",
        "record each description's identity and file count",
        (*(step.stamp for step in manifests), code("index")),
        lazy("pipeline.description", "make_index", tuple(models)),
        ("build/index.json",),
    )


def cell_ids(root: Path) -> list[str]:
    """Every cell folder under cells/ (one without machine.json too: its step names it)."""
    return folders_holding(root, CELLS, "machine.json")


def _cell_sources(root: Path, cell_id: str) -> tuple[str | None, str | None]:
    """The model a cell names and the calibration file it pins, read leniently: the cell step
    itself validates machine.json."""
    # only a regular file is read: a FIFO would block planning; the cell step refuses it
    found = read_regular(os.path.join(root, CELLS, cell_id, "machine.json"), JSON_LIMIT)
    try:
        robot = json.loads(found[0])["robot"] if found else {}
        model = robot.get("model_id")
        pinned = (robot.get("machine_planning_calibration") or {}).get("path")
    except (ValueError, AttributeError, TypeError, KeyError, RecursionError):
        return None, None
    plain = isinstance(pinned, str) and _PLAIN_PATH.fullmatch(pinned) is not None
    return (model if isinstance(model, str) else None), (pinned if plain else None)


def cell_step(
    root: Path, cell_id: str, manifests: Mapping[str, Step], configs: dict[str, bool] | None = None
) -> Step:
    """The step that validates one cell and compiles it into build/cells/<cell_id>/.
    (`configs`: which robots have a config.json, found once for all cells serving each.)"""
    folder = f"{CELLS}/{cell_id}"
    inputs = files_under(root, folder)  # none in a linked folder, which the step refuses
    machine = f"{folder}/machine.json"
    # listed when absent too: the step refuses it, and a check names it as what is missing
    inputs = inputs if machine in inputs else [machine, *inputs]
    linked = _linked(root, folder)
    model, pinned = (None, None) if linked else _cell_sources(root, cell_id)
    if model is not None and model in manifests:
        src = f"{ROBOTS}/{model}"
        inputs += [manifests[model].stamp, f"{src}/robot.urdf"]
        configs = {} if configs is None else configs
        if model not in configs:
            configs[model] = _is_file(root, f"{src}/config.json")
        inputs += [f"{src}/config.json"] if configs[model] else []
    out = f"build/cells/{cell_id}"
    # the description is served as built, the calibration as pinned (the step refuses others)
    served = [] if model is None else [(f"build/robots/{model}/", f"{out}/description/")]
    if pinned is not None:
        served.append((f"{CELLS}/{cell_id}/{pinned}", f"{out}/machine_planning_calibration.json"))
    step = Step(
        f"cellbuild:{cell_id}",
        "validate the cell's machine config and calibration; compile it into build/cells/",
        (*inputs, code("cellbuild")),
        lazy("pipeline.cell", "make_cell", cell_id),
        (f"{out}/cell.json", f"{out}/machine_planning_calibration.json"),
        mirrors=tuple(served),
        own_checks=lazy("pipeline.cell", "own_findings", cell_id),
    )
    return _through_no_link(step, folder) if linked else step


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
        if step is not None:
            todo += [by_stamp[i].name for i in step.inputs if i in by_stamp]
            todo += step.after
    return [step for step in steps if step.name in wanted]


def plan(root: Path) -> list[Step]:
    """Every step of the build, in an order where inputs come before their users."""
    models = model_ids(root)
    steps = code_steps()
    per_robot = [robot_steps(root, model_id) for model_id in models]
    steps += [step for stages in per_robot for step in stages.values()]
    steps.append(index_step(root, models, [stages["manifest"] for stages in per_robot]))
    manifests = {m: stages["manifest"] for m, stages in zip(models, per_robot, strict=True)}
    configs: dict[str, bool] = {}
    steps += [cell_step(root, cell_id, manifests, configs) for cell_id in cell_ids(root)]
    return steps


def linked_folders(root: Path, steps: list[Step]) -> list[Finding]:
    """The refusal of each planned robot or cell folder, robot's meshes/, or folder beside a
    robot's srdf.py, that is a symbolic link: a check cannot say whether build/ is what sources
    it will not read produce."""
    out: list[Finding] = []
    base = os.path.join(root, "")  # paths as strings: a check plans 600 folders at scale
    for step in steps:
        stage, _, name = step.name.partition(":")
        src = f"{ROBOTS}/{name}"
        if stage == "cellbuild":
            out += linked_folder(f"{base}{CELLS}/{name}", f"{CELLS}/{name}", "cell")
        elif stage == "urdf":
            linked = linked_folder(base + src, src, "robot")
            out += linked or linked_folder(f"{base}{src}/meshes", f"{src}/meshes", "meshes")
        elif stage == "srdf":  # what gen_srdf() can import: its inputs but its own two
            own = (f"{src}/srdf.py", f"{src}/robot.urdf")
            helpers = [i for i in step.inputs if i.startswith(f"{src}/") and i not in own]
            out += linked_helper_folders(base, helpers)
    return out


def robot_folder_findings(root: Path, model_id: str) -> list[Finding]:
    """What the build refuses in a robot's folder before any of its steps reads a file, which
    `pipeline validate` asks too: an input whose name no stamp can record (stamps.run_step), and
    a folder beside srdf.py that is a symbolic link (the srdf step's, whatever srdf.py holds).
    (Its robot folder and meshes/ linked: the URDF's rules say so, urdf/rules.py.)"""
    steps = robot_steps(root, model_id)
    inputs = dict.fromkeys(path for step in steps.values() for path in step.inputs)
    return unrecordable_names(inputs) + linked_folders(root, [steps["srdf"]])
