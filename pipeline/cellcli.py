"""The `pipeline cell|load-check|bundle-identity` subcommands: one cell and what it ships."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from pipeline.commands import repository_root, shown
from pipeline.findings import ContractError, Finding, render
from pipeline.schemas import NAME


def _cell_id(folder: Path) -> str:
    """The id of a cell folder, which must be cells/<cell_id> of the current repository."""
    from pipeline.cell import CELLS

    # the folder itself is not resolved: a link cells/<b> -> <a> is cell <b>, which its
    # step refuses (symlink_refused), not cell <a> under another name
    resolved = Path(os.path.abspath(folder))
    if resolved.parent.resolve() != (Path.cwd() / CELLS).resolve():
        raise ContractError(
            [
                Finding(
                    "cell_outside_cells",
                    shown(folder),
                    "",
                    f"a cell folder is {CELLS}/<cell_id> of the repository you run from",
                    f"run from the repository root and name {CELLS}/<cell_id>",
                )
            ]
        )
    return resolved.name


def cmd_cell(args: argparse.Namespace) -> int:
    """Validate one cell; unless --check, compile it (and what it needs) into build/cells/."""
    from pipeline.cell import cell_build_dir, cell_dir, load_cell
    from pipeline.digests import Digests
    from pipeline.machine import MACHINE_NAME
    from pipeline.plan import needed, plan
    from pipeline.session import open_session
    from pipeline.stamps import run_step

    root = repository_root()
    cell_id = _cell_id(Path(args.dir))
    if args.check or not os.path.lexists(root / cell_dir(cell_id) / MACHINE_NAME):
        cell = load_cell(root, cell_id)  # without a machine.json, refused here: no step makes it
        pinned = "pinned calibration" if cell.machine.pin else "no calibration (empty document)"
        print(f"cell: {cell_id} ok, model {cell.machine.model_id}, {pinned}")
        return 0
    # the session doit opens: a killed build's leftovers are cleared before its mark is
    with open_session(root):
        known = Digests(root)
        for step in needed(plan(root), f"cellbuild:{cell_id}"):
            run_step(root, step, known)
        known.save()
    block = json.loads((root / cell_build_dir(cell_id) / "cell.json").read_bytes())["robot_cell"]
    print(f"cell: {cell_id} ok, model {block['model_id']}")
    print(f"  description_identity {block['description_identity']}")
    print(f"  calibration_identity {block['calibration_identity']}")
    return 0


def cmd_load_check(args: argparse.Namespace) -> int:
    """Check a program header's robot_cell block against a compiled cell: 0 accepted, 3 refused."""
    from pipeline.loadcheck import load_check

    program, cell = Path(args.program), Path(args.cell)
    refusals = load_check(program, shown(program), cell, shown(cell))
    if refusals:
        print(render(refusals, as_json=args.json), file=sys.stderr)
        return 3
    print(f"load-check: {shown(program)} accepted on {shown(cell)}")
    return 0


def cmd_bundle_identity(args: argparse.Namespace) -> int:
    """Print the identity of a cell bundle, recomputed from the entries of its .tar.gz."""
    import tarfile
    import zlib

    from pipeline.archive import (
        BUNDLE_LIMIT,
        EntryProblems,
        identity_of_listing,
        listing_of_archive,
        names_of_listing,
    )
    from pipeline.bundle import bundle_shape_problem
    from pipeline.strict_io import read_bytes

    path = Path(args.archive)
    display = shown(path)
    try:
        text = listing_of_archive(read_bytes(path, display, BUNDLE_LIMIT))
        problem = bundle_shape_problem(names_of_listing(text))
        if problem is not None:
            raise ValueError(problem)
    except EntryProblems as exc:  # one line per problem: entries made or altered by hand
        lines = [
            _bad_archive(display, f"entry {name!a}: {why}", path) for name, why in exc.problems
        ]
        if exc.more:
            lines.append(_bad_archive(display, f"{exc.more} more problems of its entries", path))
        raise ContractError(lines) from None
    except (tarfile.TarError, zlib.error, OSError, EOFError, ValueError) as exc:
        raise ContractError([_bad_archive(display, str(exc), path)]) from None
    print(identity_of_listing(text))
    return 0


def _bad_archive(display: str, why: str, path: Path) -> Finding:
    return Finding("bad_archive", display, "", f"is not a cell bundle ({why})", _refetch(path))


def _refetch(path: Path) -> str:
    """The fix of a bundle that is none: fetched again, or packaged again from its cell."""
    cell_id = path.name.removesuffix(".tar.gz")
    # a file name is any bytes: only a cell's own name goes into a command to paste
    ours = path.name.endswith(".tar.gz") and re.fullmatch(NAME, cell_id)
    command = f"doit cell:{cell_id}" if ours else "`doit cell:<cell_id>`"
    return (
        "fetch the bundle again (a download cut short or altered), or package it again from its "
        f"cell: {command}"
    )


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the cell subcommands to the `pipeline` parser."""
    cell = sub.add_parser("cell", help="validate and compile one cell")
    cell.add_argument("dir", help="the cell folder, cells/<cell_id>")
    cell.add_argument("--check", action="store_true", help="validate only; write nothing")
    cell.set_defaults(run=cmd_cell)

    load = sub.add_parser("load-check", help="check a program header against a compiled cell")
    load.add_argument("program", help="the program header, a JSON document with robot_cell")
    load.add_argument("--cell", required=True, help="the compiled cell, build/cells/<cell_id>")
    load.set_defaults(run=cmd_load_check)

    bundle = sub.add_parser("bundle-identity", help="print a cell bundle's identity")
    bundle.add_argument("archive", help="a dist/<cell_id>.tar.gz")
    bundle.set_defaults(run=cmd_bundle_identity)
