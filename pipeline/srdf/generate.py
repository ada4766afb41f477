"""Running a `gen_srdf()` source in a child process and checking the envelope it returns."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pipeline.findings import Finding, Severity
from pipeline.srdf.envelope import envelope_findings

CHILD = Path(__file__).with_name("child.py")
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


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


# the first line of what `warnings` prints: "/abs/path/srdf.py:69: UserWarning: message"
_WARNING_LINE = re.compile(r"(?P<file>.+?):(?P<line>\d+): (?P<text>.+)")


def _stderr_warning(stderr: bytes, source: Path, display: str, repo_root: Path | None) -> Finding:
    """What a generator that returned wrote to standard error: a warning, which stops nothing
    (a `warnings.warn` of the generator's, or of a library it calls, would be lost otherwise)."""
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    # a warning's second line is the indented source line it points at: not another message
    messages = [line.strip() for line in lines if not line[:1].isspace()] or [lines[0].strip()]
    first, place = messages[0], "gen_srdf()"
    found = _WARNING_LINE.fullmatch(first)
    if found and os.path.abspath(found["file"]) == str(source.resolve()):
        first, place = found["text"], found["line"]
    elif repo_root is not None:  # repository files by their repo-relative path
        first = first.replace(f"{repo_root.resolve()}/", "")
    more = f" and {len(messages) - 1} more" if len(messages) > 1 else ""
    return Finding(
        "generator_wrote_stderr",
        display,
        place,
        f"wrote to standard error: {first[:200]!r}{more}",
        "mend what it warns of, or silence it in the source if it is expected",
        Severity.WARNING,
    )


def _has_bytes(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


# what Python or ctypes loads compiled: no input of the step, whose inputs are .py sources
_COMPILED = (".pyc", ".so", ".pyd", ".dylib", ".dll")
_COMPILED_FIX = (
    "a compiled module (an extension module, a .pyc) is no input of the srdf step: keep its .py "
    "source beside srdf.py, or install the compiled one as a package outside the repository"
)


def _sandbox_files(sandbox: Path) -> list[str]:
    return sorted(p.relative_to(sandbox).as_posix() for p in sandbox.rglob("*"))


# What the two runs of a generator see of the machine apart from the hash seed: clocks 26 hours
# apart (POSIX zones, which need no time zone files: UTC-12 and UTC+14), so that no local date or
# hour is the same in both, and other user names (getpass reads these first). Run at once on one
# machine, both runs would otherwise agree on what the next build or another user changes.
_MACHINE = (
    {"TZ": "AAA+12", "USER": "gen_srdf_a", "LOGNAME": "gen_srdf_a"},
    {"TZ": "BBB-14", "USER": "gen_srdf_b", "LOGNAME": "gen_srdf_b"},
)


def run_child(
    source: Path, display: str, timeout: float, repo_root: Path | None = None, seed: int = 0
) -> tuple[dict[str, Any], list[Finding]]:
    """Run the source's gen_srdf() in a child with a fresh temporary cwd and a time limit."""
    findings: list[Finding] = []
    # reads outside the source's folder are guarded within the repository holding it
    in_repo = repo_root is not None and source.resolve().is_relative_to(repo_root.resolve())
    with tempfile.TemporaryDirectory(prefix="gen_srdf.") as work:
        sandbox = Path(work) / "cwd"
        sandbox.mkdir()
        # a write there named by its absolute path: named as the working folder's file
        cwd = tuple(dict.fromkeys(f"{folder}/" for folder in (sandbox, sandbox.resolve())))
        result_path = Path(work) / "result.json"
        # not -I: it would ignore PYTHONHASHSEED, and a random seed makes a generator that
        # iterates a set of names write another order on every build. The environment is built
        # here (no other PYTHON* variable), and child.py drops its own folder from sys.path.
        command = [sys.executable, "-s", "-B", str(CHILD), str(source.resolve()), str(result_path)]
        if in_repo and repo_root is not None:
            # the compiler's own package may be imported, wherever the checkout keeps it
            command += [str(repo_root.resolve()), str(Path(__file__).resolve().parents[1])]
        env = {
            "PATH": os.environ.get("PATH", ""),
            "LC_ALL": "C.UTF-8",
            "PYTHONHASHSEED": str(seed),
            **_MACHINE[seed % len(_MACHINE)],
        }
        process = subprocess.Popen(
            command,
            cwd=sandbox,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        # written by the child once gen_srdf() returns: what ends or holds the process after
        # that (a method of the element returned) is not its not returning
        returned = Path(f"{result_path}.returned")
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            if _has_bytes(returned):
                return {}, [
                    _finding(
                        "generator_timeout",
                        display,
                        "gen_srdf()",
                        f"returned, but its process did not end within {timeout:g} s and was "
                        "stopped",
                        "return a plain dict of a string or ElementTree element and a path: a "
                        "method of a subclass of them ran on as the envelope was read",
                    )
                ]
            return {}, [
                _finding(
                    "generator_timeout",
                    display,
                    "gen_srdf()",
                    f"did not return within {timeout:g} s and was stopped",
                    "remove the endless loop or blocking call; a generator only builds XML",
                )
            ]
        if stdout:
            first = (stdout.decode("utf-8", "replace").strip().splitlines() or [""])[0][:120]
            findings.append(
                _finding(
                    "generator_printed",
                    display,
                    "gen_srdf()",
                    f"wrote to standard output ({first!r})",
                    "remove the print; return the XML in the envelope instead",
                )
            )
        created = _sandbox_files(sandbox)
        try:
            result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
            if result.get("status") == "ok" and stderr.strip():
                findings.append(_stderr_warning(stderr, source, display, repo_root))
        except (OSError, ValueError):
            last = (stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:200]
            when = (
                "after gen_srdf() returned, before its envelope was read"
                if _has_bytes(returned)
                else "before returning"
            )
            findings.append(
                _finding(
                    "generator_exited",
                    display,
                    "gen_srdf()",
                    f"the process ended with status {process.returncode} {when}"
                    + (f" ({last})" if last else ""),
                    "return the envelope; do not call os._exit or crash the interpreter, in "
                    "gen_srdf() or in a method of what it returns",
                )
            )
            result = {}
    attempts = [
        a.removeprefix(next((c for c in cwd if a.startswith(c)), ""))
        for a in [*created, *result.get("write_attempts", [])]
    ]
    attempts = list(dict.fromkeys(attempts))  # TemporaryFile() tries twice: named once
    if repo_root is not None:
        # findings name repository files by their repo-relative path, never an absolute one
        prefix = f"{repo_root.resolve()}/"
        attempts = [attempt.replace(prefix, "") for attempt in attempts]
    if attempts:
        findings.append(
            _finding(
                "generator_wrote_files",
                display,
                "gen_srdf()",
                f"tried to write files: {', '.join(attempts[:5])}",
                "return the XML in the envelope; the srdf command writes the output",
            )
        )
    if result.get("read_attempts"):
        folder = display.rsplit("/", 1)[0]
        read = result["read_attempts"][0]
        read = read if in_repo else f"{folder}/{read}"
        where = "" if read.startswith(f"{folder}/") else f", outside {folder}/"
        findings.append(
            _finding(
                "generator_read_untracked_file",
                display,
                "gen_srdf()",
                f"read {read}{where}, which is no input of the srdf step: a change to it "
                "would leave the built SRDF stale",
                _COMPILED_FIX
                if read.endswith(_COMPILED)
                else "keep the data in a Python module beside srdf.py (tcps.py holding "
                "TCPS = {...}) and import it: modules there are inputs",
            )
        )
    if result.get("spawn_attempts"):
        findings.append(
            _finding(
                "generator_spawned_process",
                display,
                "gen_srdf()",
                f"tried to start a process ({result['spawn_attempts'][0]})",
                "build the XML in Python without running other programs",
            )
        )
    return result, findings


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
    # Run twice at once, the second under another hash seed, time zone and user (_MACHINE): a
    # generator iterating a set, or reading the clock, the user or a random source, writes other
    # bytes on another machine or Python.
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
