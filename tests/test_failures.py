"""The machine failing under a build: a full disk, a limit, memory, a signal; one line each."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import pytest

from pipeline.doitext import ContractFailure
from pipeline.failures import (
    TERMINATED_STATUS,
    WorkerDied,
    quiet_interrupt,
    repo_relative,
    system_finding,
    system_fix,
    terminate,
)
from pipeline.stamps import Step
from pipeline.tasks import _action


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (errno.ENOSPC, "free space on the disk"),
        (errno.EDQUOT, "disk quota"),
        (errno.EFBIG, "`ulimit -f`"),
        (errno.EMFILE, "`ulimit -n`"),
        (errno.ENOMEM, "`ulimit -v`"),
        (errno.EACCES, "check the permissions"),
        (errno.EROFS, "writable"),
    ],
)
def test_system_refused_fix_names_the_cause(code: int, fix: str) -> None:
    """A full disk was answered with "make build/ writable"."""
    assert fix in system_fix(OSError(code, os.strerror(code)))


def test_repo_relative_names_no_absolute_path(tmp_path: Path) -> None:
    assert repo_relative(tmp_path, str(tmp_path / "robots/a/srdf.py")) == "robots/a/srdf.py"
    assert repo_relative(tmp_path, "/elsewhere/gen_srdf/cwd") is None
    assert repo_relative(tmp_path, None) is None


def _failing(exc: BaseException) -> Step:
    def make(root: Path) -> dict[str, bytes]:
        raise exc

    return Step("spheres:arm", "doc", (), make, targets=("build/robots/arm/spheres.json",))


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (
            OSError(errno.EMFILE, "Too many open files"),
            "build/robots/arm/spheres.json: system_refused: spheres:arm stopped: the system "
            "refused an operation (Too many open files); raise the open-file limit",
        ),
        (
            OSError(errno.ENOSPC, "No space left on device", "/tmp/outside/x"),
            "build/robots/arm/spheres.json: system_refused:",
        ),
        (MemoryError(), "build/robots/arm/spheres.json: out_of_memory: spheres:arm ran out of"),
        (WorkerDied(), "build/robots/arm/spheres.json: worker_died: spheres:arm stopped"),
    ],
)
def test_system_refused_out_of_memory_worker_died_in_a_step_are_one_line(
    tmp_path: Path, exc: BaseException, line: str
) -> None:
    """EMFILE (`ulimit -n`), MemoryError (`ulimit -v`) and a killed worker were tracebacks."""
    failure = _action(tmp_path, _failing(exc))
    assert isinstance(failure, ContractFailure)
    assert failure.message.startswith(line)
    assert "\n" not in failure.message and "Traceback" not in failure.message


def test_system_refused_names_the_file_the_system_named(tmp_path: Path) -> None:
    exc = OSError(errno.EACCES, "Permission denied", str(tmp_path / "robots/arm/srdf.py"))
    finding = system_finding(tmp_path, "srdf:arm", "build/robots/arm/robot.srdf", exc)
    assert (finding.code, finding.file) == ("system_refused", "robots/arm/srdf.py")


def test_interrupted_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C during a sphere fit printed doit's whole stack."""
    quiet_interrupt(KeyboardInterrupt, KeyboardInterrupt(), None)
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("doit: interrupted; ") and "run `doit` again" in line


def test_terminated_is_one_line_and_exit_143(capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM killed the run without a word; now it stops as Ctrl-C does (cleanups run)."""
    with pytest.raises(SystemExit) as stop:
        terminate(signal.SIGTERM, None)
    assert stop.value.code == TERMINATED_STATUS == 143
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("doit: terminated; ")
