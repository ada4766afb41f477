"""build/ in a team's git life: merge conflicts in it, line endings git converts on checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.stamps import stamp_path
from tests.conftest import run_doit, tree_bytes

# autouse: the user's own git config (autocrlf, attributes) plays no part
from tests.test_gitindex import git, no_user_git_config  # noqa: F401

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")

URDF = "robots/abb_irb2400/robot.urdf"
CONFIG = "robots/abb_irb2400/config.json"


def run(project: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`pipeline <argv>` in `project`: exit status, standard output, standard error."""
    cwd = Path.cwd()
    os.chdir(project)
    try:
        code = main(list(argv))
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    return code, out, err


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def commit_build(project: Path, message: str) -> None:
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    git(project, "add", "-A")
    git(project, "commit", "-qm", message)


Edit = tuple[str, str, str]  # file, old text, new text


def merged(project: Path, theirs: Edit, ours: Edit) -> list[str]:
    """Commit each edit with its build/ on a branch of its own, merge theirs into ours; the
    paths git could not merge."""
    git(project, "init", "-q")
    commit_build(project, "start")
    for branch, (path, old, new) in (("theirs", theirs), ("ours", ours)):
        git(project, "checkout", "-q", "-b", branch, "HEAD" if branch == "theirs" else "HEAD~1")
        edit(project / path, old, new)
        commit_build(project, branch)
    with pytest.raises(subprocess.CalledProcessError):
        git(project, "merge", "-q", "theirs")
    return git(project, "diff", "--name-only", "--diff-filter=U").split()


def branches_both_changing_abb(project: Path) -> None:
    """Our branch changed a joint's sign in config.json, theirs a joint limit in the URDF."""
    sign = '"controller_axis": "rax_6",\n      "sign": '
    unmerged = merged(
        project, (URDF, 'upper="1.9199"', 'upper="1.9"'), (CONFIG, sign + "1", sign + "-1")
    )
    assert unmerged and all(path.startswith("build/") for path in unmerged)


def test_stamp_with_conflict_markers_is_named_and_one_side_of_build_resolves_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check names the conflicted stamps and says what to do; taking HEAD's build/ and running
    doit fits nothing and gives what taking the other side's build/ gives."""
    branches_both_changing_abb(project)
    code, out, err = run(project, capsys, "check")
    assert code == 1
    conflicted = "config:abb_irb2400 has a stamp holding git conflict markers"
    assert f"stale: build/robots/abb_irb2400/config.json ({conflicted})" in out.splitlines()
    assert "`git checkout HEAD -- build/`" in err
    # the description copied into the cell is the cell step's, not the index step's
    description = "build/cells/weld_cell_a/description/robot.urdf"
    maker = "cellbuild:weld_cell_a, which has no readable stamp, may make it: run `doit`"
    assert f"extra: {description} (no stamp records it; {maker})" in out.splitlines()

    built = {}
    for side in ("HEAD", "MERGE_HEAD"):
        git(project, "checkout", side, "--", "build/")
        code, out, _ = run(project, capsys, "spheres", "status", "abb_irb2400")
        assert "refit" not in out  # the spheres of either side are trusted: links restamped
        result = run_doit(project)
        assert result.returncode == 0, result.stdout + result.stderr
        assert run(project, capsys, "check")[:2] == (0, "build/ is current: 20 steps\n")
        built[side] = tree_bytes(project / "build")
    assert built["HEAD"] == built["MERGE_HEAD"]
    git(project, "add", "build/")
    assert not git(project, "diff", "--name-only", "--diff-filter=U")


def test_extra_files_name_the_step_writing_in_their_folder(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """index:robots writes build/index.json only: it is never named for what lies deeper."""
    (project / "build" / "stamps" / "index" / "robots.json").unlink()
    (project / "build" / "robots" / "abb_irb2400" / "notes.txt").write_text("mine\n")
    code, out, _ = run(project, capsys, "check")
    assert code == 1
    assert "extra: build/robots/abb_irb2400/notes.txt (no step makes it; delete it)" in out
    (project / "build" / "stamps" / "cellbuild" / "weld_cell_a.json").unlink()
    code, out, _ = run(project, capsys, "check")
    maker = "cellbuild:weld_cell_a, which has no readable stamp, may make it: run `doit`"
    spheres = "build/cells/weld_cell_a/description/spheres.json"
    assert f"extra: {spheres} (no stamp records it; {maker})" in out.splitlines()
    assert "index:robots, which" not in out


def test_crlf_line_endings_from_an_autocrlf_clone_are_named(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A clone with core.autocrlf=true: check says the line endings changed, and how to undo."""
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    clone = tmp_path / "crlf"
    git(tmp_path, "clone", "-q", "-c", "core.autocrlf=true", str(project), str(clone))
    assert b"\r\n" in (clone / URDF).read_bytes()
    code, out, err = run(clone, capsys, "check")
    assert code == 1
    lines = out.splitlines()
    assert any(f"{URDF} changed (line endings only: CRLF)" in line for line in lines)
    assert "git config core.autocrlf false" in err
    git(clone, "config", "core.autocrlf", "false")
    git(clone, "rm", "-rq", "--cached", ".")
    git(clone, "reset", "-q", "--hard")
    assert run(clone, capsys, "check")[:2] == (0, "build/ is current: 20 steps\n")


def test_a_stamp_unreadable_for_another_reason_is_not_called_a_conflict(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stamp = project / "build" / "stamps" / "config" / "abb_irb2400.json"
    stamp.write_text("<<<<<<< not a conflict\n")
    code, out, err = run(project, capsys, "check")
    assert code == 1
    assert "config:abb_irb2400 has no readable stamp" in out
    assert "conflict" not in out + err


def test_an_output_checked_out_with_crlf_is_named(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An eol attribute on build/ alone: the outputs differ only in their line endings."""
    index = project / "build" / "index.json"
    index.write_bytes(index.read_bytes().replace(b"\n", b"\r\n"))
    code, out, err = run(project, capsys, "check")
    assert code == 1
    assert out.splitlines() == [
        "modified: build/index.json (differs from what index:robots made (line endings only: CRLF))"
    ]
    assert "core.autocrlf" in err


@pytest.mark.parametrize("step", ["cellbuild:iiwa_bench", "urdf:abb_irb2400"])
def test_a_stamp_checked_out_with_crlf_is_named_and_written_again(
    project: Path, capsys: pytest.CaptureFixture[str], step: str
) -> None:
    """An eol attribute on build/stamps/: the stamp is read for what it records, but is not what
    its step wrote; `doit` writes it again, so build/ ends as a clean build makes it."""
    before = tree_bytes(project / "build")
    stamp = project / stamp_path(step)
    stamp.write_bytes(stamp.read_bytes().replace(b"\n", b"\r\n"))
    code, out, err = run(project, capsys, "check")
    assert code == 1
    made = f"differs from what {step} made (line endings only: CRLF)"
    assert f"modified: {stamp_path(step)} ({made})" in out.splitlines()
    assert "core.autocrlf" in err
    assert run_doit(project).returncode == 0
    assert tree_bytes(project / "build") == before
    assert run(project, capsys, "check")[:2] == (0, "build/ is current: 20 steps\n")


def test_a_stamp_merged_from_a_source_change_and_a_code_change_is_not_trusted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One branch changes a robot's srdf.py, the other the SRDF writer in a way that shows only
    on the new source. git merges the srdf stamp's two changed lines without a conflict; the
    seal makes it a conflict, so the merged build/ is what the merged sources produce."""
    apostrophe = ("robots/abb_irb2400/srdf.py", '"Default")', '"Default: it\'s close")')
    tab = '_ESCAPES["\\t"] = "&#9;"\n'
    escape = ("pipeline/srdf/write.py", tab, tab + '_ESCAPES["\'"] = "&apos;"\n')
    unmerged = merged(project, apostrophe, escape)
    assert "build/stamps/srdf/abb_irb2400.json" in unmerged
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    srdf = (project / "build/robots/abb_irb2400/robot.srdf").read_text()
    assert 'reason="Default: it&apos;s close"' in srdf
    assert run(project, capsys, "check")[0] == 0
