"""The doit task graph: one step per stage and robot (or cell), each stamped by content."""

from __future__ import annotations

import atexit
import functools
import gc
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from doit.exceptions import TaskFailed
from doit.globals import Globals

from pipeline.digests import Digests
from pipeline.doitdb import guard_database
from pipeline.doitext import (
    ContentChecker,
    ContractFailure,
    FindingsReporter,
    digest_cache,
    doit_workers_die_with_the_run,
    output_record,
)
from pipeline.failures import (
    WorkerDied,
    escape_unencodable,
    install_handlers,
    open_standard_streams,
    system_finding,
)
from pipeline.findings import Finding, escaped, listed_and_closest, render
from pipeline.lock import BuildLock
from pipeline.plan import cell_ids, plan
from pipeline.session import (
    BACKEND,
    DEP_FILE,
    READ_ONLY_COMMANDS,
    command_line_choice,
    doit_command,
    named_tasks,
    open_session,
    planned,
    refuse_database_among_sources,
    refuse_foreign_root,
    refuse_other_backend,
    runs_default_tasks,
)
from pipeline.stagecode import PACKAGE_CODE
from pipeline.stamps import Step, run_step, stamp_path

# Plain `doit` runs these groups; `check` and `cell` (packaging into dist/) run when named.
DEFAULT_TASKS = [
    "prune",
    "code",
    "urdf",
    "config",
    "srdf",
    "spheres",
    "manifest",
    "index",
    "cellbuild",
]
# one entry when this doit run started with its standard output closed (`doit >&-`)
_STDOUT_CLOSED: list[bool] = []

DOIT_CONFIG: dict[str, Any] = {
    "default_tasks": DEFAULT_TASKS,
    "backend": BACKEND,
    "dep_file": DEP_FILE,
    "check_file_uptodate": ContentChecker,
    "reporter": FindingsReporter,
    "continue": True,
    "verbosity": 1,
}


def _action(root: Path, step: Step) -> ContractFailure | None:
    from pipeline.findings import ContractError, render

    try:
        run_step(root, step, digest_cache(str(root)))
    except ContractError as exc:
        return ContractFailure(render(exc.findings))
    except (OSError, MemoryError, WorkerDied) as exc:  # EMFILE, ulimit -v: one line
        where = (*step.targets, step.stamp)[0]
        return ContractFailure(render([system_finding(root, step.name, where, exc)]))
    return None


def doit_task(root: Path, step: Step) -> dict[str, Any]:
    """The doit task dict of a step: its inputs as file_dep, its stamp among the targets.

    doit only checks that targets exist: a step whose outputs were edited, replaced or deleted
    since it ran (or that has no record of them) is not up to date, whatever doit's database says.
    """
    _, _, name = step.name.partition(":")
    return {
        "name": name,
        "actions": [(_action, [root, step])],
        "file_dep": list(step.inputs),
        "task_dep": list(step.after),
        "uptodate": [output_record(str(root)).unchanged(step.name)],
        "targets": [step.stamp, *step.targets],
        "doc": step.doc,
        "meta": {"stamp": step.stamp, "own_checks": step.own_checks},
    }


def doit_groups(root: Path, steps: list[Step] | None = None) -> Mapping[str, list[dict[str, Any]]]:
    """The doit tasks of the plan, grouped by stage."""
    groups: dict[str, list[dict[str, Any]]] = {}
    steps = plan(root) if steps is None else steps
    # doit states each target, and each output a later step reads (always a stamp, a target)
    output_record(str(root)).wanted = {t for step in steps for t in (step.stamp, *step.targets)}
    for step in steps:
        groups.setdefault(step.name.partition(":")[0], []).append(doit_task(root, step))
    return groups


@functools.cache
def _session(root: Path) -> tuple[BuildLock, list[Step], Mapping[str, list[dict[str, Any]]]]:
    """One doit run in one checkout: its build lock (held until exit), its steps and graph."""
    # doit's reporter writes findings on this stdout (its outstream): an é in a joint's name
    # under PYTHONIOENCODING=ascii is escaped, not a traceback and exit status 3
    refuse_foreign_root(root)  # before anything is written there
    if open_standard_streams() and sys.stdout is None:  # before the lock and database open
        _STDOUT_CLOSED.append(True)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the run's stdout, open until exit)
    escape_unencodable(sys.stdout, sys.stderr)
    refuse_other_backend(command_line_choice("backend"))
    dep_file = command_line_choice("dep_file") or DOIT_CONFIG["dep_file"]
    refuse_database_among_sources(root, dep_file)
    lock = open_session(root, dep_file, writes=doit_command() not in READ_ONLY_COMMANDS)
    install_handlers()
    doit_workers_die_with_the_run()  # doit -n's: killed with SIGKILL, they built on unlocked
    # registered first, so it runs last: after doit wrote its database and the digests are saved
    atexit.register(lock.finish)
    steps = planned(root)
    groups = doit_groups(root, steps)
    # What is made so far (modules, the plan, the task dicts) lives until exit. Frozen, it is
    # out of the cyclic collector's reach: a no-op's two full collections (one as doit checks
    # the steps, one at exit) walked it, 20-25 ms at 100 robots and 500 cells, in process.
    gc.freeze()
    return lock, steps, groups


def doit_config() -> dict[str, Any]:
    """doit's configuration, returned once this run holds the checkout's build lock.

    dodo.py calls it while doit loads the file, which is before doit opens its database: a second
    run waits here, so whole runs (database reads and writes included) are serialised.
    """
    _session(Path.cwd())
    if _STDOUT_CLOSED:  # `doit >&-`: its report discarded, as `>/dev/null` would, no traceback
        return {**DOIT_CONFIG, "outfile": sys.stdout}
    return DOIT_CONFIG


def _loaded(root: Path) -> tuple[BuildLock, list[Step], Mapping[str, list[dict[str, Any]]]]:
    """The session, once doit loads tasks (its database is open by then, not yet earlier)."""
    guard_database(Globals.dep_manager)
    session = _session(root)
    _refuse_unknown_names(root)
    return session


@functools.cache
def _refuse_unknown_names(root: Path) -> None:
    """Stop a run naming a robot's or a cell's task that does not exist (`doit cell:wled_a`)
    with a finding and exit status 2; doit itself would say "Invalid parameter" (status 3)."""
    named = [n for n in named_tasks() if ":" in n and not any(c in n for c in "*?[")]
    if not named:
        return
    groups = _session(root)[2]
    known = {group: {task["name"] for task in tasks} for group, tasks in groups.items()}
    known["cell"] = set(cell_ids(root))
    findings = [
        _unknown_subtask(group, name, sorted(known[group]))
        for group, _, name in (n.partition(":") for n in named)
        if group in _SUBTASK_OF and name not in known.get(group, ())
    ]
    if findings:
        print(render(findings), file=sys.stderr, flush=True)
        raise SystemExit(2)


def _group(stage: str) -> Iterator[dict[str, Any]]:
    yield from _loaded(Path.cwd())[2].get(stage, [])


# the groups whose tasks are named after a robot or a cell: (folder, finding code)
_SUBTASK_OF = {
    **dict.fromkeys(("urdf", "config", "srdf", "spheres", "manifest"), ("robots", "unknown_model")),
    **dict.fromkeys(("cellbuild", "cell"), ("cells", "unknown_cell")),
}


def _unknown_subtask(group: str, name: str, known: list[str]) -> Finding:
    """The finding of `doit <group>:<name>` naming no robot or cell of the checkout."""
    folder, code = _SUBTASK_OF[group]
    shown = escaped(name)
    listed, close = listed_and_closest(name, known)
    return Finding(
        code,
        f"{folder}/{shown}",
        "",
        f"`doit {group}:{shown}` names no {folder[:-1]}: {folder}/ holds " + (listed or "none"),
        f"run `doit {group}:{close}`"
        if close
        else f"name one of them (`doit list --all` shows every task), or add {folder}/{shown}/",
    )


def task_cellbuild() -> Iterator[dict[str, Any]]:
    """Validate each cell and compile it into build/cells/<cell_id>/."""
    yield from _group("cellbuild")


def _package(root: Path, cell_id: str) -> ContractFailure | dict[str, str]:
    from pipeline.bundle import package_cell
    from pipeline.findings import ContractError, Finding, render

    stale = _cell_problems(root, cell_id)
    if stale:  # `doit -s cell:<cell_id>` skipped the rebuild: never pack a stale cell
        return ContractFailure(
            Finding(
                "cell_not_built",
                f"build/cells/{cell_id}",
                "",
                f"the compiled cell is not what the sources produce now ({stale[0].line()})",
                f"run `doit cell:{cell_id}` without -s: it rebuilds the cell first",
            ).line()
        )
    try:
        identity = package_cell(root, cell_id)
    except ContractError as exc:
        return ContractFailure(render(exc.findings))
    except (OSError, MemoryError) as exc:
        where = f"dist/{cell_id}.tar.gz"
        return ContractFailure(render([system_finding(root, f"cell:{cell_id}", where, exc)]))
    print(f"{cell_id}: dist/{cell_id}.tar.gz {identity}")
    # doit keeps what an action returns: the next run compares the pair's bytes with it
    return _pair_digests(root, cell_id)


def _pair_digests(root: Path, cell_id: str) -> dict[str, str]:
    """SHA-256 of dist/<cell_id>.tar.gz and of its .identity as they are now (`missing` when
    one is not a file; a symbolic link's is told apart): an edited identity is written again,
    or the bundle would be published beside another's identity."""
    digests = Digests(root, remember=False)
    return {
        "bundle": digests.of(f"dist/{cell_id}.tar.gz"),
        "identity": digests.of(f"dist/{cell_id}.identity"),
    }


def _cell_problems(root: Path, cell_id: str) -> list[Any]:
    """How the compiled cell, or what it is made from, differs from what the sources produce."""
    from pipeline.freshness import chain_problems

    steps = _session(root)[1]
    return chain_problems(root, steps, f"cellbuild:{cell_id}", digest_cache(str(root)))


def _bundle_unchanged(root: Path, cell_id: str) -> Any:
    """doit uptodate check: the bundle and its identity still hold the bytes packaging wrote
    (neither edited), and the compiled cell it was packed from is current (`doit -s` rebuilds
    nothing first)."""

    def unchanged(task: Any, values: dict[str, Any]) -> bool:
        now = _pair_digests(root, cell_id)
        if any(values.get(name) != digest for name, digest in now.items()):
            return False
        return not _cell_problems(root, cell_id)

    return unchanged


def task_cell() -> Iterator[dict[str, Any]]:
    """Package a compiled cell as dist/<cell_id>.tar.gz and print its bundle identity."""
    root = Path.cwd()
    _loaded(root)  # the build lock, as for every other group
    if runs_default_tasks():
        return  # plain `doit` never packs; at 500 cells making these took about 20 ms of its no-op
    for cell_id in cell_ids(root):
        yield {
            "name": cell_id,
            "actions": [(_package, [root, cell_id])],
            # the cell's compiled files (its stamp covers cell.py and identity.py, which pick
            # and hash them) and the code that packs them, so a new archive format repacks
            "file_dep": [stamp_path(f"cellbuild:{cell_id}"), *PACKAGE_CODE],
            "targets": [f"dist/{cell_id}.tar.gz", f"dist/{cell_id}.identity"],
            # doit only checks that targets exist: an edited bundle or identity is packed again
            "uptodate": [_bundle_unchanged(root, cell_id)],
            "doc": f"package {cell_id} as dist/{cell_id}.tar.gz with its identity",
            "verbosity": 2,
        }


def _check_action(root: Path) -> TaskFailed | None:
    from pipeline.findings import render
    from pipeline.freshness import check
    from pipeline.plan import linked_folders

    steps = plan(root)
    refused = linked_folders(root, steps)
    if refused:
        return TaskFailed(render(refused))
    problems = check(root, steps, digest_cache(str(root)))
    if problems:
        return TaskFailed("\n".join(p.line() for p in problems))
    return None


def task_check() -> dict[str, Any]:
    """Fail when build/ is not exactly what the sources produce (writes nothing)."""
    return {"actions": [(_check_action, [Path.cwd()])], "uptodate": [False], "verbosity": 2}


def _prune(root: Path, steps: list[Step]) -> ContractFailure | None:
    from pipeline.findings import ContractError, render
    from pipeline.prune import remove_orphans

    try:
        removed = remove_orphans(root, steps)
    except ContractError as exc:
        return ContractFailure(render(exc.findings))
    print(f"removed {len(removed)} file(s) of robots or cells the sources no longer have")
    return None


def task_prune() -> dict[str, Any]:
    """Remove the compiled files of robots and cells the sources no longer have."""
    from pipeline.prune import orphan_stamps

    root = Path.cwd()
    steps = _loaded(root)[1]
    return {
        "actions": [(_prune, [root, steps])],
        "uptodate": [not orphan_stamps(root, steps)],
        "verbosity": 2,
    }


def task_code() -> Iterator[dict[str, Any]]:
    """Record the digests of the code that makes each stage's outputs."""
    yield from _group("code")


def task_urdf() -> Iterator[dict[str, Any]]:
    """Validate each robot's URDF and copy it with its meshes into build/robots/."""
    yield from _group("urdf")


def task_config() -> Iterator[dict[str, Any]]:
    """Validate each robot's config.json and rtcore_definition.json and copy them into build/."""
    yield from _group("config")


def task_srdf() -> Iterator[dict[str, Any]]:
    """Run each robot's gen_srdf() source into build/robots/<id>/robot.srdf."""
    yield from _group("srdf")


def task_spheres() -> Iterator[dict[str, Any]]:
    """Fit or restamp each robot's collision spheres into build/robots/<id>/spheres.json."""
    yield from _group("spheres")


def task_manifest() -> Iterator[dict[str, Any]]:
    """Write each description's robot_description_manifest.json."""
    yield from _group("manifest")


def task_index() -> Iterator[dict[str, Any]]:
    """Record every description's identity and file count in build/index.json."""
    yield from _group("index")
