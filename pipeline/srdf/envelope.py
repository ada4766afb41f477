"""The envelope a `gen_srdf()` returned, as its child process described it: its keys, its XML
and its URDF path, each checked."""

from __future__ import annotations

from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from pipeline.findings import Finding
from pipeline.strict_io import XML_LIMIT

ENVELOPE_KEYS = ("urdf", "xml")

# what the child found returned as `xml` when it is no XML text: (code, message of what it
# sent, hint)
_XML_KINDS = {
    "other": (
        "envelope_xml_type",
        "is a {}",
        "return an ElementTree or lxml element, or an XML string",
    ),
    "cyclic": (
        "invalid_xml",
        "holds an element inside itself ({}), which no XML can write",
        "append each element to one parent, below it (ET.SubElement(parent, tag) makes a new one)",
    ),
    "deep": (
        "invalid_xml",
        "nests elements more than {} deep",
        "nest elements less deeply: a robot description needs a few levels",
    ),
    "too_large": (
        "file_too_large",
        "is {} bytes of XML, over the limit of " + str(XML_LIMIT) + " bytes",
        "return the robot's semantics alone: groups, states, TCPs and link pairs are far less "
        "(look for text grown in a loop)",
    ),
    "unserialisable": (
        "invalid_xml",
        "cannot be written as XML ({})",
        'give attribute values as strings, e.g. "value": repr(angle)',
    ),
}


def envelope_findings(
    result: dict[str, Any], source: Path, repo_root: Path, display: str
) -> tuple[list[Finding], bool]:
    """Findings of an envelope (exactly `xml` and `urdf`, each valid), and whether its XML and
    URDF path are usable, so that the SRDF's own findings can be reported with these."""
    out: list[Finding] = []
    if result.get("envelope") != "dict":
        out.append(
            Finding(
                "envelope_not_dict",
                display,
                "gen_srdf()",
                f"returned a {result.get('envelope')}, not a dictionary",
                "return {'xml': root_element, 'urdf': 'robot.urdf'}"
                + (
                    " from a plain def gen_srdf(), not an async def (it is called, never awaited)"
                    if result.get("envelope") == "coroutine"
                    else ""
                ),
            )
        )
        return out, False
    keys = result.get("keys", [])
    for key in ENVELOPE_KEYS:
        if key not in keys:
            out.append(
                Finding(
                    "envelope_missing_key",
                    display,
                    "gen_srdf()",
                    f"the envelope has no {key!r}",
                    f"add {key!r} to the returned dictionary",
                )
            )
    for key_type in result.get("other_keys", []):
        out.append(
            Finding(
                "envelope_unknown_key",
                display,
                "gen_srdf()",
                f"the envelope has a key of type {key_type}, not a name",
                "return exactly 'xml' and 'urdf'",
            )
        )
    for key in keys:
        if key not in ENVELOPE_KEYS:
            out.append(
                Finding(
                    "envelope_unknown_key",
                    display,
                    "gen_srdf()",
                    f"the envelope has unsupported field {key!r}",
                    "return exactly 'xml' and 'urdf'",
                )
            )
    kind = result.get("xml_kind")
    if kind in _XML_KINDS and (kind != "other" or "xml" in keys):
        code, message, hint = _XML_KINDS[kind]
        what = result.get("xml")
        out.append(Finding(code, display, 'gen_srdf()["xml"]', message.format(what), hint))
    urdf_findings: list[Finding] = []
    if "urdf" in keys:
        urdf_findings = urdf_path_findings(
            result.get("urdf"), str(result.get("urdf_type")), source, repo_root, display
        )
    out += urdf_findings
    return out, "urdf" in keys and not urdf_findings and kind in ("string", "element")


def urdf_path_findings(
    value: Any, kind: str, source: Path, repo_root: Path, display: str
) -> list[Finding]:
    """The `urdf` path rules: a relative POSIX path of a .urdf file in the repository."""
    place = 'gen_srdf()["urdf"]'

    def bad(code: str, message: str, hint: str) -> Finding:
        return Finding(code, display, place, message, hint)

    if not isinstance(value, str):
        return [bad("urdf_path_not_string", f"is a {kind}, not a string", 'write "robot.urdf"')]
    if not value:
        return [bad("urdf_path_empty", "is empty", "name the URDF relative to the source")]
    out = []
    if "\\" in value:
        out.append(bad("urdf_path_backslash", f"{value!r} uses \\", "use / separators"))
    if (
        value.startswith("/")
        or PureWindowsPath(value).is_absolute()
        or PureWindowsPath(value).drive
    ):
        out.append(
            bad("urdf_path_absolute", f"{value!r} is absolute", "write it relative to the source")
        )
    if not value.endswith(".urdf"):
        out.append(
            bad("urdf_path_not_urdf", f"{value!r} does not end in .urdf", "name a .urdf file")
        )
    if out:
        return out
    try:
        target = (source.parent / PurePosixPath(value)).resolve()
    except ValueError:  # a NUL or a lone surrogate: no file has such a name
        return [bad("urdf_path_missing", f"{value!r} is not a file name", 'write "robot.urdf"')]
    if not target.is_relative_to(repo_root.resolve()):
        return [
            bad(
                "urdf_path_outside_repo",
                f"{value!r} leaves the repository",
                "link a URDF in the repository",
            )
        ]
    if not target.is_file():
        return [
            bad(
                "urdf_path_missing",
                f"{value!r} names no file",
                "correct the path or create the URDF",
            )
        ]
    return []
