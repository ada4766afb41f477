"""Running a `gen_srdf()` source twice at once (run_child.py) and judging what it returned: its
status, the two runs agreeing, no path of this machine, and the envelope it returns."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pipeline.findings import Finding
from pipeline.srdf.envelope import envelope_findings
from pipeline.srdf.run_child import run_child

DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Envelope:
    """A checked envelope: the SRDF XML text and the linked URDF, resolved."""

    xml: str
    urdf: Path


# a generator's own exception message, shown up to this many characters (one finding line)
ERROR_CHARS = 500


def _clip(text: str, limit: int) -> str:
    """`text` up to `limit` characters, saying how many more there were."""
    return (
        text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"
    )


def _finding(code: str, display: str, place: str, message: str, hint: str) -> Finding:
    return Finding(code, display, place, message, hint)


def _left_thread(names: list[str], display: str) -> Finding:
    """A generator that returned with threads still running (the child did not wait for them)."""
    shown = ", ".join(repr(_clip(str(name), 60)) for name in names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return _finding(
        "generator_left_thread",
        display,
        "gen_srdf()",
        f"returned leaving the thread{'s' if len(names) > 1 else ''} {shown}{more} running",
        "join each thread before returning (a pool: use it in a with block), or start none: "
        "a thread left running may change the XML after it is taken",
    )


def _is_blank(source: Path | None) -> bool:
    try:
        return (
            source is not None and source.stat().st_size < 4096 and not source.read_bytes().strip()
        )
    except OSError:
        return False


def _status_findings(
    result: dict[str, Any], display: str, source: Path | None = None
) -> list[Finding]:
    status = result.get("status")
    if status == "ok" and result.get("threads_left"):
        return [_left_thread(result["threads_left"], display)]
    if status == "raised":
        line = result.get("line")
        return [
            _finding(
                "generator_raised",
                display,
                str(line) if line else "gen_srdf()",
                _clip(str(result.get("error", "an exception")), ERROR_CHARS),
                "fix the error in the generator source",
            )
        ]
    if status == "exited":
        return [
            _finding(
                "generator_exited",
                display,
                "gen_srdf()",
                f"called sys.exit({result.get('code')}) instead of returning",
                "return the envelope dictionary",
            )
        ]
    if status == "no_function":
        message, hint = "defines no", "define def gen_srdf(): returning {'xml': ..., 'urdf': ...}"
        if _is_blank(source):  # as a redirect of `pipeline template srdf` leaves it
            parts = display.split("/")
            model = parts[1] if len(parts) == 3 and parts[0] == "robots" else "MODEL_ID"
            message = "is empty: it defines no"
            hint = (
                f"write one with `pipeline template srdf {model} > {display}` once `pipeline "
                f"validate {model}` passes (run before, it prints nothing and leaves the file "
                f"empty), or {hint}"
            )
        return [
            _finding(
                "missing_gen_srdf", display, "", f"{message} top-level function gen_srdf()", hint
            )
        ]
    if status == "takes_arguments":
        return [
            _finding(
                "gen_srdf_takes_arguments",
                display,
                "gen_srdf()",
                f"gen_srdf{result.get('signature')} requires arguments",
                "make gen_srdf() take no arguments",
            )
        ]
    return []


def _determinism_findings(
    result: dict[str, Any], again: dict[str, Any], display: str
) -> list[Finding]:
    """A generator whose two runs returned different envelopes."""
    if result.get("status") != "ok" or again.get("status") != "ok":
        return []
    differs = [k for k in ("envelope", "keys", "xml", "urdf") if result.get(k) != again.get(k)]
    if not differs:
        return []
    first, second = str(result.get(differs[0])), str(again.get(differs[0]))
    pairs = enumerate(zip(first, second, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(first), len(second)))
    return [
        _finding(
            "generator_not_deterministic",
            display,
            "gen_srdf()",
            f"returned another {differs[0]!r} when run again under another hash seed, time "
            f"zone, user and host name, folders listed in reverse (first difference at "
            f"character {at}: {first[at : at + 40]!r})",
            "build the XML from lists, or sorted() sets and folder listings, and read no clock, "
            "random source, user or host name or object id: the same source must give the same "
            "SRDF on every machine",
        )
    ]


def _machine_path_findings(result: dict[str, Any], display: str, repo_root: Path) -> list[Finding]:
    """An SRDF holding this checkout's absolute path (or the user's home): both runs agree on it,
    so the determinism check cannot see it, but another clone or machine builds other bytes."""
    xml = result.get("xml")
    if result.get("status") != "ok" or not isinstance(xml, str):
        return []
    places = {str(repo_root), str(repo_root.resolve()), os.path.expanduser("~")}
    # at least /<a>/<b>: "/" or a home of "/root" would match innocent text
    found = sorted(p for p in places if len(Path(p).parts) >= 3 and p in xml)
    if not found:
        return []
    return [
        _finding(
            "generator_output_has_path",
            display,
            "gen_srdf()",
            f"returned XML holding the absolute path {found[0]!r} of this machine",
            "name things by the robot's names, not by __file__ or os.getcwd(): another clone "
            "or machine must build the same SRDF",
        )
    ]


def run_generator(
    source: Path, display: str, repo_root: Path, timeout: float = DEFAULT_TIMEOUT
) -> tuple[Envelope | None, list[Finding]]:
    """Run a source and check its envelope: exactly `xml` and `urdf`, each valid.

    The envelope comes back whenever its xml and urdf are usable, so that the caller can
    report the SRDF's own findings together with these.
    """
    # Run twice at once, the second under another hash seed, time zone and user
    # (run_child._MACHINE): a generator iterating a set, or reading the clock, the user or a
    # random source, writes other bytes on another machine or Python.
    with ThreadPoolExecutor(2) as pool:
        second = pool.submit(run_child, source, display, timeout, repo_root, 1)
        result, findings = run_child(source, display, timeout, repo_root)
        again = second.result()[0]
    findings += _status_findings(result, display, source)
    findings += _determinism_findings(result, again, display)
    findings += _machine_path_findings(result, display, repo_root)
    if result.get("status") != "ok":
        return None, findings
    found, usable = envelope_findings(result, source, repo_root, display)
    findings += found
    if not usable:
        return None, findings
    urdf = (source.parent / PurePosixPath(str(result["urdf"]))).resolve()
    return Envelope(str(result["xml"]), urdf), findings
