"""The machine failing under a build: a full disk, a limit, memory, a signal; one line each."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
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
from tests.conftest import REPO, run_python


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


def _closing_stdout(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with `args` in `project`, started with its stdout closed (`>&-`)."""
    return subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, *args],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project)},
        stderr=subprocess.PIPE,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [["identity", "build/robots/abb_irb2400"], ["template", "robot"], ["--json", "check"]],
    ids=["identity", "template", "check"],
)
def test_a_command_started_with_stdout_closed_says_so_in_one_line_exit_2(
    project: Path, argv: list[str]
) -> None:
    """`pipeline identity DIR >&-` printed nothing and exited 0 (print() to a closed stdout
    prints nothing), and `pipeline template robot >&-` ended in an AttributeError traceback."""
    result = _closing_stdout(project, "-m", "pipeline", *argv)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    if argv[0] == "--json":
        assert json.loads(result.stderr)[0]["message"].startswith("standard output is closed,")
    else:
        assert result.stderr.splitlines() == [
            "pipeline: system_refused: standard output is closed, so what this command prints "
            "would be lost: nothing was done; run it with its standard output open (`>&-` "
            "closes it; `>/dev/null` discards what it prints)"
        ]


def test_a_command_that_writes_started_with_stdout_closed_writes_nothing(project: Path) -> None:
    """`pipeline srdf A.py -o OUT.srdf >&-` wrote OUT.srdf and exited 0, its line lost."""
    source = "robots/abb_irb2400/srdf.py"
    result = _closing_stdout(project, "-m", "pipeline", "srdf", source, "-o", "out.srdf")
    assert result.returncode == 2, result.stderr
    assert not (project / "out.srdf").exists()


def test_doit_started_with_stdout_closed_builds_without_a_traceback(project: Path) -> None:
    """`doit >&-` ended in doit's reporter writing to None (a traceback, exit status 3)."""
    urdf = project / "robots" / "abb_irb2400" / "robot.urdf"
    urdf.write_bytes(urdf.read_bytes() + b"\n")
    result = _closing_stdout(project, "-m", "doit")
    assert (result.returncode, result.stderr) == (0, "")
    assert run_python(project, "-m", "pipeline", "check").returncode == 0


def test_closed_standard_streams_get_dev_null_so_no_file_takes_their_number() -> None:
    """A file opened with fd 1 closed took number 1, where a child's output would land."""
    script = (
        "import os, sys; from pipeline.failures import open_standard_streams;"
        "closed = open_standard_streams(); fd = os.open(os.devnull, os.O_RDONLY);"
        "sys.stderr.write(f'{closed} {fd > 2} {os.path.realpath(f\"/proc/self/fd/1\")}')"
    )
    result = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-c", script],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stderr == "True True /dev/null"


def test_doit_whose_reader_is_gone_builds_on_without_a_traceback(project: Path) -> None:
    """`doit | head -1` stopped the build at the reporter's next line with a BrokenPipeError
    traceback (exit 3), leaving build/ stale."""
    urdf = project / "robots" / "abb_irb2400" / "robot.urdf"
    urdf.write_bytes(urdf.read_bytes() + b"\n")
    result = _reader_gone(project, "-m", "doit")
    assert (result.returncode, result.stderr) == (0, "")
    assert run_python(project, "-m", "pipeline", "check").returncode == 0


def _reader_gone(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with `args` in `project`, its stdout a pipe nobody reads (as
    `| head -1` once it has its line)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            [sys.executable, *args],
            cwd=project,
            env={**os.environ, "PYTHONPATH": str(project)},
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        os.close(writer)


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["-m", "pipeline", "spheres", "status"], 0),
        (["-m", "pipeline", "check"], 0),
        (["-m", "pipeline", "manifest", "--check", "build/robots/abb_irb2400"], 0),
        (["-m", "doit", "dumpdb"], 0),
    ],
)
def test_a_command_whose_reader_is_gone_keeps_its_exit_status(
    project: Path, argv: list[str], status: int
) -> None:
    """`pipeline spheres status | head -1` exited 1, the status of a stale link, with every link
    current, and `doit dumpdb | head -1` ended in a BrokenPipeError traceback (exit 3): the
    command goes on unheard and exits as it would have."""
    # doit's commands as a checkout has them (dumpdb is ours, named in pyproject.toml)
    (project / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    subprocess.run(
        [sys.executable, "-m", "doit"],  # a database for dumpdb: a build of nothing to do
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project)},
        capture_output=True,
        timeout=600,
        check=True,
    )
    result = _reader_gone(project, *argv)
    assert (result.returncode, result.stderr) == (status, "")


def test_a_stale_link_is_still_reported_by_its_exit_status_when_the_reader_is_gone(
    project: Path,
) -> None:
    """The exit status is the command's own: 1 for a link to refit, not the pipe's."""
    mesh = project / "robots" / "abb_irb2400" / "meshes" / "link_2_whole.stl"
    mesh.write_bytes(b"edited" + mesh.read_bytes()[6:])  # its header: the same triangles
    result = _reader_gone(project, "-m", "pipeline", "spheres", "status")
    assert (result.returncode, result.stderr) == (1, "")


@pytest.mark.parametrize(
    "argv",
    [["check"], ["bundle-identity", "/nowhere/x.tar.gz"]],
    ids=["check", "bundle-identity"],
)
def test_a_command_run_in_a_deleted_folder_says_so_in_one_line(
    tmp_path: Path, argv: list[str]
) -> None:
    """A shell whose folder was deleted (`rm -rf` of a scratch clone from another terminal):
    `pipeline check` ended in two FileNotFoundError tracebacks (the handler's own getcwd failed
    too), exit 1."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$0" && rmdir "$0" && exec "$@"'
    result = subprocess.run(
        ["sh", "-c", script, str(gone), sys.executable, "-m", "pipeline", *argv],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "pipeline: system_refused: the current folder cannot be found (No such file or "
        "directory): it was deleted or moved after the shell entered it; cd to the repository "
        "root (or another existing folder) and run again"
    ]
