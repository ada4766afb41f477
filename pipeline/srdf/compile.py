"""One `gen_srdf()` source to the bytes of one checked, deterministic SRDF file."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from pipeline.findings import ContractError, Finding, raise_if_errors, render
from pipeline.srdf.contact_check import state_contact_findings
from pipeline.srdf.generate import DEFAULT_TIMEOUT, run_generator
from pipeline.srdf.jointgroups import joint_group_findings
from pipeline.srdf.read import parse_srdf
from pipeline.srdf.units import to_native
from pipeline.srdf.validate import check_srdf
from pipeline.srdf.write import write_srdf
from pipeline.strict_io import (
    SOURCE_LIMIT,
    XML_LIMIT,
    linked_helper_folders,
    read_bytes,
    require_source,
)
from pipeline.strict_xml import parse_xml
from pipeline.urdf import Robot, check_meshes, check_rules, display_path, load_robot, parse_urdf


def load_linked_urdf(path: Path, repo_root: Path) -> Robot:
    """A `robot.urdf` loads as its description folder; any other name as a standalone URDF."""
    if path.name == "robot.urdf":
        return load_robot(path.parent, repo_root)
    display = display_path(path, repo_root)
    data = read_bytes(path, display, XML_LIMIT)
    name = parse_xml(data, display).get("name") or path.stem
    robot, findings = parse_urdf(data, display, name)
    findings += check_rules(robot) + check_meshes(robot, path.parent)
    raise_if_errors(findings)
    return robot


def relative_posix(target: Path, start: Path) -> str:
    """The POSIX path from folder `start` to `target`."""
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def compile_srdf(
    source: Path,
    output: Path,
    repo_root: Path,
    timeout: float = DEFAULT_TIMEOUT,
    urdf_at: Path | None = None,
    own_urdf: Path | None = None,
) -> bytes:
    """The bytes of `checked_srdf`, its warnings printed on stderr as doit shows a step's stderr."""
    data, warnings = checked_srdf(source, output, repo_root, timeout, urdf_at, own_urdf)
    if warnings:
        print(render(warnings), file=sys.stderr)
    return data


def checked_srdf(
    source: Path,
    output: Path,
    repo_root: Path,
    timeout: float = DEFAULT_TIMEOUT,
    urdf_at: Path | None = None,
    own_urdf: Path | None = None,
) -> tuple[bytes, list[Finding]]:
    """Run a generator, check everything against its URDF: the bytes to write at `output` and
    the warnings found on the way.

    `urdf_at` is where the URDF is served beside the output (a compiled description
    directory holds its own copy); the injected `tcad:urdf` path points there, else at the
    linked URDF itself. `own_urdf`, when given, is the only URDF the generator may link.
    """
    display = display_path(source, repo_root)
    read_bytes(source, display, SOURCE_LIMIT)  # as `pipeline validate` reads a robot's srdf.py
    envelope, findings = run_generator(source, display, repo_root, timeout)
    if envelope is None:
        raise ContractError(findings)
    if own_urdf is not None and envelope.urdf.resolve() != own_urdf.resolve():
        linked, own = display_path(envelope.urdf, repo_root), display_path(own_urdf, repo_root)
        findings.append(
            Finding(
                "urdf_path_other_robot",
                display,
                'gen_srdf()["urdf"]',
                f"links {linked}, not this robot's {own}",
                'return "urdf": "robot.urdf"; the SRDF is served beside its robot\'s own URDF',
            )
        )
        raise ContractError(findings)
    robot: Robot | None = None
    try:
        robot = load_linked_urdf(envelope.urdf, repo_root)
    except ContractError as exc:
        findings += exc.findings
    try:
        root = parse_xml(_utf8(envelope.xml, display), display)
    except ContractError as exc:
        raise ContractError([*findings, *map(_in_returned_xml, exc.findings)]) from None
    srdf, read_findings = parse_srdf(root, display)
    findings += read_findings
    if robot is not None:
        if srdf.name and srdf.name != robot.name:
            findings.append(
                Finding(
                    "robot_name_mismatch",
                    display,
                    "/robot",
                    f"<robot name={srdf.name!r}> differs from the URDF's {robot.name!r}",
                    f'set <robot name="{robot.name}">',
                )
            )
        srdf = to_native(srdf, robot)
        findings += check_srdf(srdf, robot, display)
    raise_if_errors(findings)  # past it, the findings are warnings alone
    findings += joint_group_findings(srdf, display)
    if robot is not None:
        urdf_folder = envelope.urdf.parent
        findings += state_contact_findings(
            srdf, robot, urdf_folder, display, display_path(urdf_folder, repo_root)
        )
    link = relative_posix(urdf_at or envelope.urdf, output.parent)
    return write_srdf(srdf, link), findings


def _in_returned_xml(finding: Finding) -> Finding:
    """A finding of the XML reader placed in the envelope: its line is the returned XML's, not
    the source's (where a raised exception's place is the source line)."""
    if not finding.place.isdigit():
        return finding
    message = f"line {finding.place} of the returned XML: {finding.message}"
    return finding._replace(place='gen_srdf()["xml"]', message=message)


# The encoding an XML declaration names, as in <?xml version="1.0" encoding="ISO-8859-1"?>.
_DECLARED_ENCODING = re.compile(
    r"""\A(<\?xml\s+version\s*=\s*(["'])[^"']*\2)\s+encoding\s*=\s*(["'])[^"']*\3"""
)


def _utf8(xml: str, display: str) -> bytes:
    """The XML text as UTF-8; a lone surrogate (a "\\ud800" in a Python string) is refused.

    A string is text already decoded: an encoding its declaration names is dropped (the XML
    spec lets what is known outside a document override it), else the UTF-8 bytes of "é"
    would be read as Latin-1 "Ã©", or as UTF-16 not at all.
    """
    xml = _DECLARED_ENCODING.sub(r"\1", xml, count=1)
    try:
        return xml.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = xml[exc.start].encode("unicode_escape").decode("ascii")
        raise ContractError(
            [
                Finding(
                    "invalid_xml",
                    display,
                    'gen_srdf()["xml"]',
                    f"holds the lone surrogate {char} at character {exc.start}, which no XML "
                    "document can hold",
                    "write the character itself, or both halves of its surrogate pair",
                )
            ]
        ) from None


def make_srdf(root: Path, model_id: str, links: tuple[str, ...] = ()) -> dict[str, bytes]:
    """The build step: robots/<id>/srdf.py to build/robots/<id>/robot.srdf (URDF served beside);
    `links`, the folders beside srdf.py the plan found to be symbolic links, are refused."""
    raise_if_errors(linked_helper_folders(os.path.join(root, ""), links))
    out = root / "build" / "robots" / model_id
    source = root / "robots" / model_id / "srdf.py"
    hint = "add srdf.py defining gen_srdf(), which returns the robot's SRDF (docs/srdf.md)"
    require_source(source.parent, "srdf.py", f"robots/{model_id}/srdf.py", hint)
    data = compile_srdf(
        source,
        out / "robot.srdf",
        root,
        urdf_at=out / "robot.urdf",
        own_urdf=root / "robots" / model_id / "robot.urdf",
    )
    return {f"build/robots/{model_id}/robot.srdf": data}
