"""Running a `gen_srdf()` source once in a child process (pipeline/srdf/child.py) with a fresh
temporary working folder, its environment and a time limit, and the findings of what the process
did: printed, warned, wrote, read or started, ended early or ran over. generate.py runs it twice
and judges what the two runs returned."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pipeline.findings import Finding, Severity
from pipeline.sourcefiles import files_under

CHILD = Path(__file__).with_name("child.py")


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
        # the meshes it may read: inputs of the urdf step, whose stamp is the srdf step's input
        meshes = files_under(source.resolve().parent, "meshes")
        Path(f"{result_path}.meshes").write_text(json.dumps(meshes), encoding="utf-8")
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
                    Finding(
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
                Finding(
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
                Finding(
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
                Finding(
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
            Finding(
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
            Finding(
                "generator_read_untracked_file",
                display,
                "gen_srdf()",
                f"read {read}{where}, which is no input of the srdf step: a change to it "
                "would leave the built SRDF stale",
                _COMPILED_FIX
                if read.endswith(_COMPILED)
                else "keep the data in a Python module beside srdf.py (tcps.py holding "
                "TCPS = {...}) and import it, or a mesh in meshes/, named plainly: those are "
                "inputs",
            )
        )
    if result.get("spawn_attempts"):
        findings.append(
            Finding(
                "generator_spawned_process",
                display,
                "gen_srdf()",
                f"tried to start a process ({result['spawn_attempts'][0]})",
                "build the XML in Python without running other programs",
            )
        )
    return result, findings
