"""doit's own command line as docs/doit.md states it: what it cannot parse exits 3, `doit clean`
does nothing, and neither touches build/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_doit, tree_bytes


@pytest.mark.parametrize(
    ("args", "status", "said"),
    [
        # a name that is no stage, no stage:<id> of a robot or cell, no target: doit's own line
        (("nosuchtask",), 3, 'Invalid parameter: "nosuchtask". Must be a command, task, or a'),
        (("clean", "--all"), 3, "option --all not recognized"),
        (("--dep-file", "x"), 3, "option --dep-file not recognized"),
        # no task declares targets to clean: nothing removed, nothing printed
        (("clean",), 0, ""),
        (("clean", "--clean-all", "--dry-run"), 0, ""),
    ],
    ids=["unknown-task", "clean-all-option", "dep-file-option", "clean", "clean-all"],
)
def test_doit_command_lines_exit_as_docs_say_and_leave_build_alone(
    project: Path, args: tuple[str, ...], status: int, said: str
) -> None:
    """docs/doit.md's exit statuses: 3 where doit could not parse the command line (a task name
    it does not know included), 0 for a `doit clean` that removes nothing; no test held them."""
    before = tree_bytes(project / "build")
    result = run_doit(project, *args)
    assert result.returncode == status, result.stdout + result.stderr
    if said:
        assert said in result.stdout + result.stderr
    else:
        assert (result.stdout, result.stderr) == ("", "")
    assert "Traceback" not in result.stderr
    assert tree_bytes(project / "build") == before
