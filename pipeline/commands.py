"""The general subcommands of the `pipeline` command (manifest, identity, check, validate,
template, srdf) and what every subcommand shares: the repository root, a path as shown."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.findings import ContractError, Finding, errors, escaped, render

if TYPE_CHECKING:
    from numpy import ndarray

    from pipeline.urdf import Mesh, Robot


def shown(path: Path) -> str:
    """A path given on the command line as findings and messages name it."""
    from pipeline.urdf import display_path

    return display_path(path, Path.cwd())


def _holds_sources(folder: Path) -> bool:
    return (folder / "robots").is_dir() or (folder / "cells").is_dir()


def _root_above(folder: Path) -> Path | None:
    """The repository root above `folder`: the nearest folder holding robots/ or cells/ and
    dodo.py (build/ holds robots/ and cells/ too), else the nearest holding either."""
    holders = [p for p in folder.parents if _holds_sources(p)]
    return next((p for p in holders if (p / "dodo.py").is_file()), holders[0] if holders else None)


def repository_root() -> Path:
    """The current folder, which must be the repository root: it holds robots/ or cells/
    (and is not the build/ of a folder that does: its robots/ and cells/ are outputs)."""
    root = Path.cwd()
    if _holds_sources(root) and not (root.name == "build" and _holds_sources(root.parent)):
        return root
    up = _root_above(root)
    if up is None:
        message = "the current folder is not the repository root: it holds no robots/ or cells/"
        hint = "run the command from the repository root (the folder of robots/ and dodo.py)"
    else:
        there = os.path.relpath(up, root)
        message = (
            f"the current folder is the build folder of the repository root {there}: its "
            "robots/ and cells/ are outputs, not sources"
            if _holds_sources(root)
            else f"the current folder is inside the repository root {there}, not the root"
        )
        hint = f"run the command from the repository root: cd {there}"
    raise ContractError([Finding("not_repository_root", ".", "", message, hint)])


def srdf_root(sources: list[Path]) -> Path:
    """The folder the srdf command bounds its sources' URDF paths by: the current folder, or,
    run from a subfolder of a repository (cells/), the repository root holding the sources."""
    cwd = Path.cwd()
    inside = [s.resolve().is_relative_to(cwd.resolve()) for s in sources]
    up = None if all(inside) else _root_above(cwd)
    if up is not None and all(s.resolve().is_relative_to(up.resolve()) for s in sources):
        return up
    return cwd


def _cell_model(folder: Path) -> str | None:
    """For a compiled cell's description/ (its name is not the model id): cell.json's model."""
    from pipeline.strict_json import load_json

    cell = Path(os.path.abspath(folder)).parent / "cell.json"
    if Path(os.path.abspath(folder)).name != "description" or not cell.is_file():
        return None
    model = load_json(cell, shown(cell)).get("model_id")
    return model if isinstance(model, str) else None


def cmd_manifest(args: argparse.Namespace) -> int:
    """Check description manifests and print one ok line per description."""
    from pipeline.manifest import check_complete, read_manifest

    if not args.check:
        nothing = Finding("usage_error", "pipeline manifest", "", "nothing to do", "pass --check")
        raise ContractError([nothing])
    # the default is the build's descriptions: from a subfolder there are none, and "no
    # finding" would read as "every manifest checked"
    folders = [Path(d) for d in args.dirs] or sorted(
        p for p in (repository_root() / "build" / "robots").glob("*") if p.is_dir()
    )
    findings: list[Finding] = []
    for folder in folders:
        display = shown(folder)
        try:
            manifest = read_manifest(folder, display, _cell_model(folder))
        except ContractError as exc:
            findings.extend(exc.findings)
            continue
        problems = check_complete(folder, manifest, display)
        findings.extend(problems)
        if not problems:
            print(f"manifest: {manifest.model_id} ok, {len(manifest.files)} files")
    if findings:
        raise ContractError(findings)
    return 0


def cmd_identity(args: argparse.Namespace) -> int:
    """Print the identity of a compiled description directory."""
    from pipeline.identity import description_identity

    folder = Path(args.dir)
    identity, _ = description_identity(folder, shown(folder), _cell_model(folder))
    print(identity)
    recorded = _recorded_identity(folder)
    if recorded is None or recorded[1] == identity:
        return 0
    # the files on disk are not what was compiled (a build that failed half way, an edit):
    # the number printed is theirs, but nothing deployed was made with it
    unrecorded = Finding(
        "identity_not_recorded",
        shown(folder),
        "",
        f"{identity} is not the identity {shown(recorded[0])} records for it ({recorded[1]})",
        "the folder changed after that was written (a failed or interrupted build, an edit, "
        "or `doit cell:<id>` without `doit`): `pipeline check` says what is stale, `doit` "
        "rebuilds; deploy only a description whose identity is recorded",
    )
    print(render([unrecorded], as_json=args.json), file=sys.stderr)
    return 1


def _recorded_identity(folder: Path) -> tuple[Path, str] | None:
    """Where the build recorded a compiled description's identity, and that identity:
    build/index.json for build/robots/<model_id>, cell.json for a cell's description/."""
    from pipeline.strict_json import load_json

    here = Path(os.path.abspath(folder))
    if here.name == "description":
        record, key = here.parent / "cell.json", None
    elif here.parent.name == "robots" and here.parent.parent.name == "build":
        record, key = here.parent.parent / "index.json", here.name
    else:
        return None
    if not record.is_file():
        return None
    try:
        data = load_json(record, shown(record))
    except ContractError:
        return None  # a record that cannot be read vouches for nothing: not compared
    robots = data.get("robots")
    entry = data if key is None else robots.get(key) if isinstance(robots, dict) else None
    field = "description_identity" if key is None else "identity"
    recorded = entry.get(field) if isinstance(entry, dict) else None
    return (record, recorded) if isinstance(recorded, str) else None


def cmd_check(args: argparse.Namespace) -> int:
    """Say whether build/ is exactly what the sources produce; exit 1 when it is not."""
    from pipeline.digests import COPY_BUDGET, Digests
    from pipeline.findings import raise_if_errors
    from pipeline.freshness import advice, check
    from pipeline.plan import linked_folders, plan

    root = repository_root()
    known = Digests(root, keep_bytes=COPY_BUDGET, settled=True)
    known.answer_build_elsewhere()  # with no digest cache yet: while this process plans
    try:
        steps = plan(root)
        raise_if_errors(linked_folders(root, steps))
        problems = check(root, steps, known)
        known.save()
    finally:
        known.close()
    if args.json:  # the list a tool reads (stdout); the advice and summary stay for people
        print(json.dumps([p._asdict() for p in problems], indent=2, sort_keys=True))
    else:
        for problem in problems:
            print(problem.line())
    for hint in advice(problems):
        print(hint, file=sys.stderr)
    # files no step makes (the user's, or an interrupted build's): `doit` leaves them
    manual = [p for p in problems if p.kind == "extra" and p.reason.endswith("; delete it")]
    if problems and len(manual) == len(problems):
        message = f"build/ holds {len(manual)} file(s) that no step makes: delete them"
        print(f"{message} (`doit` leaves them)", file=sys.stderr)
        return 1
    if problems:
        print(f"build/ is stale: {len(problems)} file(s); run `doit` to rebuild", file=sys.stderr)
        return 1
    print(f"build/ is current: {len(steps)} steps", file=sys.stderr if args.json else sys.stdout)
    return 0


def check_model_ids(model_ids: Sequence[str], root: Path) -> None:
    """Refuse model ids given on the command line that are not a plain folder name of robots/,
    or name no folder there (with the models there are, and the closest one)."""
    findings = [
        Finding(
            "unknown_model",
            "robots",
            "",
            f"model id {model_id!r} is not the name of a folder of robots/",
            "name the model by its folder's name, as in robots/<model_id>",
        )
        for model_id in model_ids
        if model_id in ("", ".", "..") or any(c in model_id for c in "/\\\x00")
    ]
    from pipeline.urdf.rules import is_model_id  # a name that is no model id is refused as such

    absent = [
        m
        for m in model_ids
        if not findings and is_model_id(m) and not os.path.lexists(root / "robots" / m)
    ]
    if absent:
        from pipeline.findings import listed_and_closest
        from pipeline.plan import model_ids as known_models

        known = known_models(root)
        for model_id in absent:
            listed, close = listed_and_closest(model_id, known)
            findings.append(
                Finding(
                    "unknown_model",
                    f"robots/{escaped(model_id)}",
                    "",
                    f"robots/ has no folder {model_id!r}; it holds {listed or 'no robot'}",
                    f"name {close!r}"
                    if close
                    else "name one of them, or add the robot's folder (docs/robots.md: adding "
                    "a robot)",
                )
            )
    if findings:
        raise ContractError(findings)


def cmd_validate(args: argparse.Namespace) -> int:
    """Check each robot's sources (URDF, meshes, the JSON config files); ok lines."""
    from pipeline.description import check_robot_sources
    from pipeline.plan import model_ids

    root = repository_root()
    check_model_ids(args.models, root)
    # the robots the build compiles: a robot.urdf that is a folder, a FIFO or a dangling link
    # is refused here as there, not skipped
    models = args.models or model_ids(root)
    findings: list[Finding] = []
    for model_id in models:
        try:
            # every source, each checked as the build checks it, all in this one run
            sources = check_robot_sources(root, model_id)
        except ContractError as exc:
            findings.extend(exc.findings)
            continue
        findings.extend(sources.warnings)
        count = len(sources.warnings)
        print(f"validate: {model_id} ok" + (f", {count} warning(s)" if count else ""))
    if errors(findings):
        raise ContractError(findings)
    if findings:  # warnings alone: printed as errors are, but the robots are acceptable
        print(render(findings, as_json=args.json), file=sys.stderr)
    return 0


def cmd_template(args: argparse.Namespace) -> int:
    """Print an annotated template, byte for byte (or without its notes), or a first srdf.py."""
    if (args.name == "srdf") != (args.model is not None):
        message, hint = (
            ("srdf needs the model id of the robot to write it for", "pass MODEL_ID")
            if args.name == "srdf"
            else (f"the {args.name} template takes no model id", f"pipeline template {args.name}")
        )
        raise ContractError([Finding("usage_error", "pipeline template", "", message, hint)])
    if args.name == "srdf" and args.bare:
        message, hint = "the srdf template has no notes to leave out", "drop --bare"
        raise ContractError([Finding("usage_error", "pipeline template", "", message, hint)])
    if args.name == "srdf":
        from pipeline.contacts import (
            BudgetSpent,
            contacts,
            link_poses,
            link_solids,
            static_links,
        )
        from pipeline.srdf.starter import starter, starter_source
        from pipeline.urdf import load_robot

        root = repository_root()
        check_model_ids([args.model], root)
        folder = root / "robots" / args.model
        robot = load_robot(folder, root)
        meshes = _collision_meshes(robot, folder, f"robots/{args.model}")
        # a link of 1e300 m passes the URDF reader, and overflowed the contact check below
        import numpy as np

        from pipeline.spheres.extent import extent_findings

        out_of_range = errors(
            extent_findings(robot, {m: np.concatenate(p) for m, p in meshes.items() if p})
        )
        if out_of_range:
            raise ContractError(out_of_range)
        plan = starter(robot, meshes)
        try:
            found = contacts(
                link_solids(robot, folder, f"robots/{args.model}", meshes),
                link_poses(robot, plan.home),
                plan.adjacent,
                static_links(robot),
            )
        except BudgetSpent:  # thousands of links overlapping at home: minutes of programmes
            found = []
            print(render([_home_not_collided(args.model)]), file=sys.stderr)
        touching = [(c.link1, c.link2) for c in found]
        sys.stdout.write(starter_source(robot, args.model, touching, plan=plan))
        return 0
    from pipeline.annotated_templates import bare_template_bytes, template_bytes

    text = (bare_template_bytes if args.bare else template_bytes)(args.name)
    sys.stdout.write(text.decode("utf-8"))
    return 0


def _collision_meshes(robot: Robot, folder: Path, display: str) -> dict[Mesh, list[ndarray]]:
    """The corners of each collision mesh, each read once: a link's size is checked before the
    contact check (which takes them as read), and the starter tells a wheel from a leg by the
    shape of those of the links wheels.shape_links names."""
    from pipeline.meshsplit import hull_parts
    from pipeline.urdf import Mesh

    out: dict[Mesh, list[ndarray]] = {}
    for link in robot.links:
        for collision in link.collisions:
            mesh = collision.geometry
            if isinstance(mesh, Mesh) and mesh not in out:
                out[mesh] = hull_parts(folder, mesh, display)
    return out


def _home_not_collided(model: str) -> Finding:
    """The warning that the home pose's pairs were too many to collide within the budget."""
    from pipeline.contacts import PROGRAMME_BUDGET
    from pipeline.findings import Severity

    return Finding(
        "home_contacts_not_collided",
        f"robots/{model}/robot.urdf",
        "",
        "colliding the links' pairs at the home pose needed linear programmes of more than the "
        f"{PROGRAMME_BUDGET:,} constraints a contact check may solve: the starter lists no "
        "DEFAULT pairs",
        f"run pipeline srdf robots/{model}/srdf.py on the starter: its group_state_in_contact "
        "warnings name pairs in contact at home",
        Severity.WARNING,
    )


def cmd_srdf(args: argparse.Namespace) -> int:
    """Run gen_srdf() sources and write their checked SRDF files, all or none."""
    from pipeline.srdf.targets import compile_targets, parse_targets, write_targets

    pairs = parse_targets(args.targets, args.output)
    root = srdf_root([source for source, _ in pairs])
    results, warnings = compile_targets(pairs, root, args.timeout)
    written = set(write_targets(results))
    for output, _ in results:
        state = "written" if output in written else "unchanged"
        print(f"srdf: {shown(output)} {state}")
    if warnings:  # printed as errors are, in the form --json asks for; the SRDFs are written
        print(render(warnings, as_json=args.json), file=sys.stderr)
    return 0
