"""The `pipeline spheres verify|status|refit|show` subcommands."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.commands import check_model_ids, repository_root
from pipeline.findings import ContractError, Finding
from pipeline.strict_io import JSON_LIMIT, read_bytes
from pipeline.writing import write_output

if TYPE_CHECKING:
    from pipeline.spheres.checks import LinkCheck
    from pipeline.urdf import Robot

FILE = "spheres.json"
# what verify and status print for a robot they would otherwise print nothing for
NO_LINKS = "no link has collision geometry (no spheres)"


def _models(args: argparse.Namespace, root: Path) -> list[str]:
    from pipeline.plan import model_ids

    chosen: list[str] = list(dict.fromkeys(args.models))  # a robot named twice is one robot
    check_model_ids(chosen, root)
    return chosen or model_ids(root)


def _load(root: Path, model_id: str, spheres: str | None) -> tuple[Robot, Path, str, bytes | None]:
    folder = root / "robots" / model_id
    from pipeline.urdf import load_robot

    # model ids that are paths were refused by check_model_ids; load_robot refuses the rest
    robot = load_robot(folder, root)
    built = f"build/robots/{model_id}/{FILE}"
    display = spheres or built
    path = root / display
    if spheres is not None and not os.path.lexists(path):
        # a file the user named is never taken as absent: status would say every link "refit"
        hint = f"name an existing {FILE}, or leave out --file to use {built}"
        raise ContractError([Finding("file_missing", display, "", "file does not exist", hint)])
    data = read_bytes(path, display, JSON_LIMIT) if os.path.lexists(path) else None
    return robot, folder, display, data


def cmd_verify(args: argparse.Namespace) -> int:
    """Prove each link's coverage; print spheres, gap bound and excess ratio per link."""
    from pipeline.spheres.build import verify

    root = repository_root()
    findings: list[Finding] = []
    rows = []
    for model_id in _models(args, root):
        robot, folder, display, data = _load(root, model_id, args.file)
        if data is None:
            raise ContractError(
                [Finding("file_missing", display, "", "file does not exist", "run `doit spheres`")]
            )
        report = verify(robot, folder, data, samples=args.samples, display=display)
        findings.extend(report.findings)
        if not report.links and not args.json:
            print(f"{model_id}: {NO_LINKS}")
        for check in report.links:
            rows.append({"model_id": model_id, **check.as_json()})
            if not args.json:
                print(f"{model_id} {_line(check)}")
    if args.json:
        print(json.dumps(rows, indent=2, sort_keys=True))
    if findings:
        raise ContractError(findings)
    return 0


def _line(check: LinkCheck) -> str:
    excess = "-"
    if check.excess is not None and check.excess_se is not None:
        excess = f"{check.excess:.3f} ± {check.excess_se:.3f}"
    state = "proven" if check.proven else f"NOT proven, gap <= {check.gap * 1000:.3f} mm"
    spheres = "1 sphere" if check.count == 1 else f"{check.count} spheres"
    return f"{check.link}: {spheres}, {state}, excess ratio {excess}"


def cmd_status(args: argparse.Namespace) -> int:
    """Print each link as current, restamp or refit; exit 1 when any is not current."""
    from pipeline.spheres.build import status
    from pipeline.spheres.task import written_by_step

    root = repository_root()
    stale = 0
    for model_id in _models(args, root):
        robot, folder, display, data = _load(root, model_id, args.file)
        if args.file is not None and data is not None:
            _named_file_fits(robot, data, display)
        if args.file is None and data is not None and not written_by_step(root, model_id, data):
            # what the build does: a file its step did not write is refitted, not reused
            print(f"{display}: not what spheres:{model_id} wrote; doit refits it", file=sys.stderr)
            data = None
        states = status(robot, folder, data)
        if not states:
            print(f"{model_id}: {NO_LINKS}")
        for link, state in states.items():
            print(f"{model_id} {link}: {state}")
            stale += state != "current"
    return 1 if stale else 0


def _named_file_fits(robot: Robot, data: bytes, display: str) -> None:
    """A spheres.json named by --file is this robot's, as verify requires; a link it lacks is
    one to refit, a link with no collision geometry is refused."""
    from pipeline.spheres.checks import link_set_findings
    from pipeline.spheres.document import read_document
    from pipeline.spheres.geometry import collision_links

    document = read_document(data, display, robot.name)
    names = {link.name for link in collision_links(robot)}
    extra = sorted(set(document["links"]) - names)
    if extra:
        raise ContractError(link_set_findings([], extra, display))


# what `refit` says it did for each state `status` gives a link before the run
DONE = {"refit": "refitted", "restamp": "restamped", "current": "current"}


def _spheres_of(data: bytes | None) -> dict[str, Any]:
    """Each link's spheres in a spheres.json the step wrote (none for None)."""
    links = {} if data is None else json.loads(data).get("links", {})
    return {name: entry.get("spheres") for name, entry in links.items()}


def _refit_done(states: dict[str, str], before: bytes | None, after: bytes | None) -> list[str]:
    """What the step did to each link, from `status` before it and its file before and after:
    a link kept whose spheres changed was refitted (the proof no longer accepted them)."""
    old, new = _spheres_of(before), _spheres_of(after)
    return [
        f"{link}: {'refitted' if old.get(link) != new.get(link) else DONE[state]}"
        for link, state in states.items()
    ]


def cmd_refit(args: argparse.Namespace) -> int:
    """Refit the links whose geometry changed and restamp the rest, as `doit spheres:<id>`."""
    from pipeline.digests import Digests
    from pipeline.plan import needed, plan
    from pipeline.session import open_session
    from pipeline.spheres.build import status
    from pipeline.spheres.task import target_of, trusted_previous
    from pipeline.stamps import run_step
    from pipeline.strict_io import read_regular
    from pipeline.urdf import load_robot

    root = repository_root()
    models = _models(args, root)
    made = False
    # the session doit opens: its lock, and a killed build's leftovers cleared first
    with open_session(root):
        steps = plan(root)
        known = Digests(root)
        for model_id in models:
            folder = root / "robots" / model_id
            before = trusted_previous(root, model_id)
            states = status(load_robot(folder, root), folder, before)
            for step in needed(steps, f"spheres:{model_id}"):
                made = run_step(root, step, known) or made
            if not states:
                print(f"{model_id}: {NO_LINKS}")
            found = read_regular(root / target_of(model_id), JSON_LIMIT)
            for line in _refit_done(states, before, None if found is None else found[0]):
                print(f"{model_id} {line}")
        known.save()
    if made:
        print(
            "run `doit` to bring the manifests, the index and the cells up to date", file=sys.stderr
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Draw each link's collision geometry with its spheres into a PNG."""
    from pipeline.spheres.picture import draw

    output = Path(args.output)
    if output.suffix.lower() != ".png":
        hint = "name the output FILE.png (the picture is always a PNG)"
        message = f"the output {args.output!r} does not end in .png"
        if output.name.lower() == ".png":  # a name that is all suffix has none (pathlib's view)
            message = f"the output {args.output!r} names no file before its .png"
        raise ContractError([Finding("output_not_png", args.output, "", message, hint)])
    root = repository_root()
    check_model_ids([args.model], root)
    robot, folder, display, data = _load(root, args.model, args.file)
    if data is None:
        raise ContractError(
            [Finding("file_missing", display, "", "file does not exist", "run `doit spheres`")]
        )
    write_output(output, draw(robot, folder, data, display, args.link or ()))
    print(f"spheres: wrote {args.output}")
    return 0


# Each sample is held as 3 doubles several times over: 10^6 is ~100 MB, 2 * 10^9 was 45 GiB.
MAX_SAMPLES = 1_000_000


def _samples(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_SAMPLES:
        raise argparse.ArgumentTypeError(f"{text} is not a sample count from 0 to {MAX_SAMPLES}")
    return value


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    """Register `spheres verify|status|refit|show`."""
    spheres = sub.add_parser("spheres", help="verify, inspect, refit or draw collision spheres")
    inner = spheres.add_subparsers(dest="spheres_command", required=True)
    for name, run, text in (
        ("verify", cmd_verify, "prove coverage and measure the excess of spheres.json"),
        ("status", cmd_status, "list each link as current, restamp or refit"),
        ("refit", cmd_refit, "refit the links whose geometry changed, restamp the rest"),
    ):
        p = inner.add_parser(name, help=text)
        p.add_argument("models", nargs="*", help="model ids under robots/ (default: all)")
        if name != "refit":  # refit writes build/'s own
            p.add_argument(
                "--file", help="a spheres.json (default: build/robots/<id>/spheres.json)"
            )
        if name == "verify":
            p.add_argument(
                "--samples",
                type=_samples,
                default=100_000,
                help=f"Monte Carlo samples of the excess (0 to {MAX_SAMPLES:,}; 0: no estimate)",
            )
        p.set_defaults(run=run)
    show = inner.add_parser("show", help="draw each link's collision mesh with its spheres")
    show.add_argument("model", help="model id under robots/")
    show.add_argument("-o", "--output", required=True, help="PNG file to write")
    show.add_argument("--file", help="a spheres.json (default: build/robots/<id>/spheres.json)")
    show.add_argument(
        "--link",
        action="append",
        metavar="NAME",
        help="draw only this link (repeat for more; default: every link with collision geometry)",
    )
    show.set_defaults(run=cmd_show)
