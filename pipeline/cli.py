"""The `pipeline` command: the same functions as the doit graph, one subcommand each."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from pipeline.commands import (
    cmd_check,
    cmd_identity,
    cmd_manifest,
    cmd_srdf,
    cmd_template,
    cmd_validate,
)
from pipeline.failures import (
    WorkerDied,
    escape_unencodable,
    open_standard_streams,
    reader_may_leave,
    system_finding,
)
from pipeline.findings import ContractError, Finding, render

Command = Callable[[argparse.Namespace], int]


MAX_TIMEOUT = 86400.0  # a day: longer is a mistake, and inf or 1e12 overflow the system's clock


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 < value <= MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"{text} is not a number of seconds above 0 and at most {MAX_TIMEOUT:g}"
        )
    return value


class UsageError(Exception):
    """A command line argparse refuses, raised so that main() prints it as a finding."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse's parser (and, through add_subparsers, its subparsers') raising UsageError."""

    def error(self, message: str) -> NoReturn:
        """Raise instead of printing and exiting: main() prints it as a finding line or JSON."""
        raise UsageError(self, message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(prog="pipeline", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    sub = parser.add_subparsers(dest="command", required=True)

    manifest = sub.add_parser("manifest", help="check description manifests")
    manifest.add_argument(
        "--check", action="store_true", help="check the manifests' rules (the only action)"
    )
    manifest.add_argument("dirs", nargs="*", help="description folders (default: build/robots/*)")
    manifest.set_defaults(run=cmd_manifest)

    identity = sub.add_parser("identity", help="print a description's identity")
    identity.add_argument("dir", help="a compiled description folder (or a cell's description/)")
    identity.set_defaults(run=cmd_identity)

    srdf = sub.add_parser("srdf", help="run gen_srdf() sources into checked SRDF files")
    srdf.add_argument(
        "targets", nargs="+", help="SOURCE.py (writes SOURCE.srdf) or SOURCE.py=OUT.srdf"
    )
    srdf.add_argument("-o", "--output", help="the output of a single SOURCE.py")
    srdf.add_argument(
        "--timeout",
        type=_seconds,
        default=60.0,
        help="seconds a generator may run (default 60, at most a day)",
    )
    srdf.set_defaults(run=cmd_srdf)

    check = sub.add_parser("check", help="is build/ exactly what the sources produce?")
    check.set_defaults(run=cmd_check)

    validate = sub.add_parser("validate", help="check robots' sources without building")
    validate.add_argument("models", nargs="*", help="model ids under robots/ (default: all)")
    validate.set_defaults(run=cmd_validate)

    template = sub.add_parser("template", help="print an annotated template")
    template.add_argument(
        "name",
        choices=("robot", "config", "srdf"),
        help="robot: of rtcore_definition.json; config: of config.json; srdf: a first srdf.py "
        "written from robots/MODEL_ID/robot.urdf",
    )
    template.add_argument("model", nargs="?", metavar="MODEL_ID", help="the robot, for srdf")
    template.add_argument(
        "--bare",
        action="store_true",
        help="robot, config: without the *_doc notes, a file to fill in: replace its <...> "
        "placeholders, and keep one of each field's _source and _unverified (robot)",
    )
    template.set_defaults(run=cmd_template)

    from pipeline.cellcli import add_parsers as add_cells

    add_cells(sub)
    from pipeline.spheres.commands import add_parser as add_spheres

    add_spheres(sub)
    return parser


_STDOUT_CLOSED = Finding(
    "system_refused",
    "pipeline",
    "",
    "standard output is closed, so what this command prints would be lost: nothing was done",
    "run it with its standard output open (`>&-` closes it; `>/dev/null` discards what it prints)",
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; bad input prints finding lines on stderr and returns 2."""
    stdout_closed = open_standard_streams() and sys.stdout is None  # started with `>&-`
    escape_unencodable(sys.stdout, sys.stderr)  # a path or finding holding an é, no traceback
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(words)
    except UsageError as exc:
        # exit status 2 as argparse gives, and one finding line as for any bad input (argparse
        # printed its usage and `pipeline: error: ...`); with --json, a finding a tool can parse
        as_json = "--json" in words[: words.index("--") if "--" in words else None]
        hint = f"see `{exc.parser.prog} --help`"
        usage = Finding("usage_error", exc.parser.prog, "", exc.message, hint)
        print(render([usage], as_json=as_json), file=sys.stderr)
        raise SystemExit(2) from None
    run: Command = args.run
    if stdout_closed:  # every command prints there: refused before it writes or reads anything
        print(render([_STDOUT_CLOSED], as_json=args.json), file=sys.stderr)
        return 2
    try:
        os.getcwd()
    except OSError as exc:  # the shell's folder was deleted: every path is shown relative to it
        gone = Finding(
            "system_refused",
            parser.prog,
            "",
            f"the current folder cannot be found ({exc.strerror}): it was deleted or moved "
            "after the shell entered it",
            "cd to the repository root (or another existing folder) and run again",
        )
        print(render([gone], as_json=args.json), file=sys.stderr)
        return 2
    stdout, sys.stdout = sys.stdout, reader_may_leave(sys.stdout)
    try:
        return run(args)
    except ContractError as exc:
        print(render(exc.findings, as_json=args.json), file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, not the stack; outputs are written atomically
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader (`| head`) stopped reading: not an error of ours, and no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (OSError, MemoryError, WorkerDied) as exc:  # `ulimit -n`, `ulimit -v`: one line
        found = system_finding(Path.cwd(), parser.prog, parser.prog, exc)
        print(render([found], as_json=args.json), file=sys.stderr)
        return 2
    finally:
        sys.stdout.flush()  # while a reader gone is still no error
        sys.stdout = stdout
