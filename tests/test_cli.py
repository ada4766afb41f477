"""The `pipeline` command through main(argv): usage errors, findings, --json, exit codes."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.conftest import REPO, run_doit, run_python, tree_bytes


def run(argv: list[str]) -> int:
    """main(argv)'s exit status, whether it returns it or argparse's path raises it."""
    try:
        return main(argv)
    except SystemExit as exc:
        assert isinstance(exc.code, int)
        return exc.code


@pytest.mark.parametrize(
    ("argv", "prog", "message"),
    [
        ([], "pipeline", "the following arguments are required: command"),
        (["nope"], "pipeline", "invalid choice: 'nope'"),
        (["identity"], "pipeline identity", "the following arguments are required: dir"),
        (["identity", "a", "b"], "pipeline", "unrecognized arguments: b"),
        (["load-check", "p.json"], "pipeline load-check", "required: --cell"),
        # after `--`, --json is an argument, not the flag: the usage error stays text
        (["identity", "--", "--json", "b"], "pipeline", "unrecognized arguments: b"),
    ],
    ids=[
        "no-command",
        "unknown-command",
        "missing-argument",
        "extra-argument",
        "missing-option",
        "json-after-double-dash",
    ],
)
def test_usage_error_is_one_finding_line_and_exits_2(
    argv: list[str], prog: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse printed its usage and `pipeline: error: ...`, lines of no finding's form."""
    assert run(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.splitlines()
    assert line.startswith(f"{prog}: usage_error: ") and message in line
    assert line.endswith(f"; see `{prog} --help`")


@pytest.mark.parametrize(
    "argv",
    [
        ["foo"],
        ["template", "foo"],
        ["validate", "--bogus"],
        ["spheres", "foo"],
        ["spheres", "verify", "--samples", "x"],
        ["cell"],
    ],
)
def test_each_usage_error_is_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(argv) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert re.fullmatch(r"pipeline[a-z ]*: usage_error: .+; see `pipeline[a-z ]* --help`", line)


@pytest.mark.parametrize("argv", [["--help"], ["spheres", "--help"], ["cell", "-h"]])
def test_help_still_prints_help_and_exits_0(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: pipeline") and captured.err == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "template", "cell"],
        ["--json"],
        ["--json", "cell"],
        ["--json", "srdf", "x.py", "--timeout", "inf"],
        ["--json", "spheres", "show", "abb_irb2400"],
        ["--json", "manifest"],
    ],
)
def test_usage_error_with_json_is_one_json_finding(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse printed its usage text on stderr, which a tool asking for --json cannot parse."""
    try:
        status = main(argv)
    except SystemExit as info:
        status = info.code  # type: ignore[assignment]
    assert status == 2
    captured = capsys.readouterr()
    [finding] = json.loads(captured.err)
    assert finding["code"] == "usage_error" and finding["file"].startswith("pipeline")
    assert captured.out == ""


@pytest.mark.parametrize("timeout", ["inf", "1e400", "1e12", "0", "-1", "nan"])
def test_timeout_outside_0_to_a_day_is_a_usage_error(
    timeout: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """inf and 1e12 passed argparse and overflowed the system's clock with a traceback."""
    with pytest.raises(SystemExit) as exc:
        main(["srdf", "--timeout", timeout, "robots/abb_irb2400/srdf.py"])
    assert exc.value.code == 2
    assert "is not a number of seconds above 0 and at most 86400" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [["check"], ["validate"], ["cell", "weld_cell_a"], ["spheres", "verify"], ["--json", "check"]],
)
def test_not_repository_root_commands_run_from_a_subfolder_are_refused(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    """From cells/, `check` said build/ stale (missing index.json...) and wrote a digest cache
    there, and `validate` printed nothing and exited 0: nothing was checked."""
    monkeypatch.chdir(project / "cells")
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "not_repository_root" in captured.err
    assert "cd .." in captured.err
    assert sorted(p.name for p in (project / "cells").iterdir()) == ["iiwa_bench", "weld_cell_a"]


def test_not_repository_root_hint_skips_build_which_holds_robots_too(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From build/robots/<id>, the hint said `cd ../..`: build/, which holds robots/ and cells/."""
    monkeypatch.chdir(project / "build" / "robots" / "abb_irb2400")
    assert main(["check"]) == 2
    assert "run the command from the repository root: cd ../../.." in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [["check"], ["validate"], ["cell", "cells/weld_cell_a", "--check"], ["spheres", "status"]],
)
def test_not_repository_root_build_itself_is_refused_though_it_holds_robots_and_cells(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    """From build/, `check` listed every output missing (`pipeline/findings.py is missing`),
    `validate` said the compiled copies ok, and `cell` said to rename the calibration file to
    machine.json: build/robots and build/cells were taken for the sources."""
    monkeypatch.chdir(project / "build")
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert ": not_repository_root: " in captured.err
    assert "run the command from the repository root: cd .." in captured.err


@pytest.mark.parametrize(
    ("folder", "message"),
    [
        (
            "build",
            "the current folder is the build folder of the repository root ..: its robots/ and "
            "cells/ are outputs, not sources; run the command from the repository root: cd ..",
        ),
        (
            "cells",
            "the current folder is inside the repository root .., not the root; run the "
            "command from the repository root: cd ..",
        ),
        (
            "build/robots/abb_irb2400",
            "the current folder is inside the repository root ../../.., not the root; run the "
            "command from the repository root: cd ../../..",
        ),
    ],
)
def test_not_repository_root_says_which_folder_is_the_root(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    folder: str,
    message: str,
) -> None:
    """From build/ it said 'it holds no robots/ or cells/', though build/ holds both."""
    monkeypatch.chdir(project / folder)
    assert main(["check"]) == 2
    assert capsys.readouterr().err == f".: not_repository_root: {message}\n"


def test_srdf_from_a_subfolder_bounds_the_urdf_by_the_repository_root(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """From cells/, `srdf ../robots/abb_irb2400/srdf.py` said the URDF beside the source
    'leaves the repository' (bounded by the current folder); from the root it is written."""
    monkeypatch.chdir(project / "cells")
    out = tmp_path / "abb.srdf"
    assert main(["srdf", "../robots/abb_irb2400/srdf.py", "-o", str(out)]) == 0
    assert "urdf_path_outside_repo" not in capsys.readouterr().err
    monkeypatch.chdir(project)
    assert main(["srdf", "robots/abb_irb2400/srdf.py", "-o", str(tmp_path / "root.srdf")]) == 0
    assert out.read_bytes() == (tmp_path / "root.srdf").read_bytes()


def test_a_refusal_inside_a_command_is_finding_lines_on_stderr_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["manifest"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "pipeline manifest: usage_error: nothing to do; pass --check\n"


def test_json_prints_the_findings_of_a_refusal_as_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    assert main(["--json", "validate", "../abb_irb2400", "ok/no"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    findings = json.loads(captured.err)
    assert [(f["code"], f["file"]) for f in findings] == [("unknown_model", "robots")] * 2
    assert "'../abb_irb2400'" in findings[0]["message"]
    assert "'ok/no'" in findings[1]["message"]


def test_a_command_that_succeeds_prints_on_stdout_and_exits_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    assert main(["validate", "abb_irb2400"]) == 0
    assert capsys.readouterr() == ("validate: abb_irb2400 ok\n", "")
    assert main(["identity", "build/robots/abb_irb2400"]) == 0
    index = json.loads((REPO / "build/index.json").read_text())
    assert capsys.readouterr().out == index["robots"]["abb_irb2400"]["identity"] + "\n"


@pytest.mark.parametrize(
    ("folder", "record"),
    [
        ("build/robots/abb_irb2400", "build/index.json"),
        ("build/cells/weld_cell_a/description", "build/cells/weld_cell_a/cell.json"),
    ],
)
def test_identity_of_a_description_its_build_did_not_record_exits_1(
    folder: str,
    record: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A build that failed half way (a new mesh copied, the SRDF's step refused) leaves a
    description whose identity no record holds: `identity` prints it and says so."""
    shutil.copytree(REPO / "build", tmp_path / "build")
    monkeypatch.chdir(tmp_path)
    assert main(["identity", folder]) == 0
    recorded = capsys.readouterr().out.strip()
    mesh = tmp_path / folder / "meshes/link_1.stl"
    mesh.write_bytes(mesh.read_bytes() + b"\n")
    assert main(["identity", folder]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("sha256:") and out.strip() != recorded
    assert err.startswith(f"{folder}: identity_not_recorded: {out.strip()} is not the identity ")
    assert f"{record} records for it ({recorded})" in err
    # with --json, the same finding as JSON (it was printed as the text line regardless)
    assert main(["--json", "identity", folder]) == 1
    out, err = capsys.readouterr()
    [finding] = json.loads(err)
    assert (finding["code"], finding["file"]) == ("identity_not_recorded", folder)
    assert finding["message"].startswith(f"{out.strip()} is not the identity {record} records")


def test_identity_outside_a_build_compares_with_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(REPO / "build/robots/abb_irb2400", tmp_path / "abb_irb2400")
    mesh = tmp_path / "abb_irb2400/meshes/link_1.stl"
    mesh.write_bytes(mesh.read_bytes() + b"\n")
    monkeypatch.chdir(tmp_path)
    assert main(["identity", "abb_irb2400"]) == 0
    assert capsys.readouterr().err == ""


def test_a_cell_folder_outside_cells_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    assert main(["cell", "--check", "robots/abb_irb2400"]) == 2
    assert "robots/abb_irb2400: cell_outside_cells: " in capsys.readouterr().err


def test_a_file_that_is_not_a_bundle_is_bad_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.tar.gz").write_bytes(b"not gzip")
    monkeypatch.chdir(tmp_path)
    assert main(["bundle-identity", "x.tar.gz"]) == 2
    assert capsys.readouterr().err.startswith("x.tar.gz: bad_archive: is not a cell bundle (")


def test_interrupted_command_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C during `pipeline check` printed a traceback."""

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr("pipeline.cli.cmd_check", interrupted)
    assert main(["check"]) == 130
    assert capsys.readouterr().err == "pipeline: interrupted\n"


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (MemoryError(), "pipeline: out_of_memory: pipeline ran out of memory; free memory"),
        (
            OSError(24, "Too many open files"),
            "pipeline: system_refused: pipeline stopped: the system refused an operation (Too "
            "many open files); raise the open-file limit",
        ),
    ],
)
def test_out_of_memory_and_system_refused_in_a_command_are_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    exc: BaseException,
    line: str,
) -> None:
    """`pipeline spheres verify` under `ulimit -v` printed a MemoryError traceback."""

    def failing(args: object) -> int:
        raise exc

    monkeypatch.setattr("pipeline.cli.cmd_check", failing)
    assert main(["check"]) == 2
    [printed] = capsys.readouterr().err.splitlines()
    assert printed.startswith(line)


def test_check_with_only_files_no_step_makes_says_delete_them_not_run_doit(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`doit` leaves a file no step makes (it may be the user's), so "run `doit` to rebuild"
    would send the user round in a circle: the summary says what the lines say."""
    (project / "build" / "robots" / "abb_irb2400" / "notes.txt").write_text("mine")
    monkeypatch.chdir(project)
    assert run(["check"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "extra: build/robots/abb_irb2400/notes.txt (no step makes it; delete it)"
    ]
    assert captured.err.splitlines() == [
        "build/ holds 1 file(s) that no step makes: delete them (`doit` leaves them)"
    ]


def test_check_with_json_prints_the_stale_files_as_json_on_stdout(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pipeline --json check` printed its stale list as text lines a tool cannot parse."""
    (project / "build" / "robots" / "abb_irb2400" / "notes.txt").write_text("mine")
    monkeypatch.chdir(project)
    assert run(["--json", "check"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out) == [
        {
            "kind": "extra",
            "path": "build/robots/abb_irb2400/notes.txt",
            "reason": "no step makes it; delete it",
        }
    ]
    assert captured.err.splitlines() == [
        "build/ holds 1 file(s) that no step makes: delete them (`doit` leaves them)"
    ]
    (project / "build" / "robots" / "abb_irb2400" / "notes.txt").unlink()
    assert run(["--json", "check"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == [] and captured.err.startswith("build/ is current: ")


def _robot_outside(project: Path, outside: Path) -> None:
    shutil.copytree(project / "robots/abb_irb2400", outside / "panda")
    (project / "robots/outside").symlink_to(outside / "panda")


def _robot_to_robot(project: Path, outside: Path) -> None:
    (project / "robots/abb2").symlink_to("abb_irb2400")


def _cell_to_cell(project: Path, outside: Path) -> None:
    (project / "cells/bench2").symlink_to("iiwa_bench")


def _meshes_outside(project: Path, outside: Path) -> None:
    shutil.move(project / "robots/abb_irb2400/meshes", outside / "meshes")
    (project / "robots/abb_irb2400/meshes").symlink_to(outside / "meshes")


def _helper_outside(project: Path, outside: Path) -> None:
    """A package folder beside srdf.py, linked in from outside; srdf.py itself unchanged."""
    (outside / "abbdata").mkdir()
    (outside / "abbdata" / "__init__.py").write_text("")
    (project / "robots/abb_irb2400/abbdata").symlink_to(outside / "abbdata")


_NEW_ID = {
    "robot": "new model: give its <robot name> and package:// mesh URIs the folder's name",
    "cell": "new cell: give its machine.json the folder's name as cell_id",
}


def _linked(folder: str, kind: str) -> str:
    return (
        f"{folder}: symlink_refused: the {kind} folder is a symbolic link; replace the link with "
        f"a real folder holding the {kind}'s sources (copy what it points to into {folder}/; a "
        f"copy of another {kind}'s folder is a {_NEW_ID[kind]})"
    )


MESHES_LINKED = (
    "robots/abb_irb2400/meshes: symlink_refused: the meshes folder is a symbolic link; replace "
    "the link with a real meshes/ folder holding the mesh files"
)
HELPER_LINKED = (
    "robots/abb_irb2400/abbdata: symlink_refused: the helper folder is a symbolic link; replace "
    "the link with a real folder holding the modules it points to (copy them into "
    "robots/abb_irb2400/abbdata/): the build reads nothing through a linked folder, so a change "
    "behind it would leave robot.srdf as it was"
)
# (link, the one finding, the commands that must refuse it)
LINKED_FOLDERS = {
    "robot-outside": (
        _robot_outside,
        _linked("robots/outside", "robot"),
        (("doit",), ("validate",), ("validate", "outside"), ("check",)),
    ),
    "robot-to-robot": (
        _robot_to_robot,
        _linked("robots/abb2", "robot"),
        (("doit",), ("validate",), ("validate", "abb2"), ("check",)),
    ),
    "cell-to-cell": (
        _cell_to_cell,
        _linked("cells/bench2", "cell"),
        (("doit",), ("cell", "cells/bench2"), ("cell", "--check", "cells/bench2"), ("check",)),
    ),
    "meshes-outside": (
        _meshes_outside,
        MESHES_LINKED,
        (("doit",), ("validate", "abb_irb2400"), ("check",)),
    ),
    # the srdf step refuses it, whatever srdf.py holds: so does validate (which reads no
    # srdf.py), and a cell compiled with it
    "helper-outside": (
        _helper_outside,
        HELPER_LINKED,
        (
            ("doit",),
            ("validate",),
            ("validate", "abb_irb2400"),
            ("cell", "cells/weld_cell_a"),
            ("check",),
        ),
    ),
}
FINDING_LINE = re.compile(r"^\S+?(:\S+)?: [a-z][a-z0-9_]*: ")
# rebuilt by the doit run of each case: another robot's step and another cell's
REBUILT = ("build/robots/lbr_iiwa_14_r820/robot.srdf", "build/cells/iiwa_bench/cell.json")


@pytest.mark.parametrize(
    ("case", "command"),
    [(case, command) for case, (_, _, commands) in LINKED_FOLDERS.items() for command in commands],
    ids=lambda v: v if isinstance(v, str) else "-".join(v),
)
def test_symlink_refused_linked_robot_cell_meshes_or_helper_folder_is_one_finding_exit_2(
    project: Path, tmp_path_factory: pytest.TempPathFactory, case: str, command: tuple[str, ...]
) -> None:
    """A linked robots/<id> was compiled from the files it points to (outside the repository,
    or another robot's as a second robot); a linked cell was compiled as the cell it names; a
    linked folder beside srdf.py was importable but no input, so a change in it went unseen."""
    link, finding, _ = LINKED_FOLDERS[case]
    rebuilt = {path: (project / path).read_bytes() for path in REBUILT}
    for path in REBUILT:
        (project / path).unlink()  # what the doit run must still build beside the refusal
    before = tree_bytes(project / "build")
    link(project, tmp_path_factory.mktemp("outside"))
    if command == ("doit",):
        result = run_doit(project)
    else:
        result = run_python(project, "-m", "pipeline", *command)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    assert [line for line in output.splitlines() if FINDING_LINE.match(line)] == [finding]
    if command == ("doit",):
        after = {f"build/{path}": data for path, data in tree_bytes(project / "build").items()}
        assert {path: after.get(path) for path in REBUILT} == rebuilt
        assert {p.removeprefix("build/"): b for p, b in after.items() if p not in REBUILT} == before
    else:
        assert tree_bytes(project / "build") == before


# (the JSON source broken, its bytes, the place and code of its finding)
VALIDATE_BREAKS = [
    ("config.json", b'{"a": 1, "a": 2}', "/a", "duplicate_key"),
    ("rtcore_definition.json", b"[]", "/", "root_not_object"),
    ("spheres.settings.json", b'{"defaults": {"seed": 1.0}}', "/defaults/seed", "wrong_type"),
]


@pytest.mark.parametrize(
    ("name", "data", "place", "code"), VALIDATE_BREAKS, ids=[b[0] for b in VALIDATE_BREAKS]
)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_validate_reports_a_broken_urdf_and_a_broken_json_source_in_one_run(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    data: bytes,
    place: str,
    code: str,
    as_json: bool,
) -> None:
    """The JSON sources were read only once the URDF and its meshes passed."""
    folder = project / "robots/abb_irb2400"
    urdf = folder / "robot.urdf"
    urdf.write_text(urdf.read_text().replace("</robot>", "", 1))  # not XML: no model at all
    (folder / name).write_bytes(data)
    before = tree_bytes(project / "build")
    monkeypatch.chdir(project)
    assert main([*(["--json"] if as_json else []), "validate"]) == 2
    out, err = capsys.readouterr()
    assert out == "validate: lbr_iiwa_14_r820 ok\n"  # the other robot is still judged
    expected = [
        ("robots/abb_irb2400/robot.urdf", "invalid_xml"),
        (f"robots/abb_irb2400/{name}", code),
    ]
    if as_json:
        findings = json.loads(err)
        assert [(f["file"], f["code"]) for f in findings] == expected
        assert findings[1]["place"] == place
    else:
        lines = err.splitlines()
        assert [(x.split(":")[0], x.split(": ")[1]) for x in lines] == expected
        assert lines[1].startswith(f"robots/abb_irb2400/{name}:{place}: {code}: ")
    assert tree_bytes(project / "build") == before


def test_a_path_stdout_cannot_encode_is_escaped_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under PYTHONIOENCODING=ascii, stdout's errors are strict: `srdf -o é2.srdf` wrote the
    file, then stopped with a UnicodeEncodeError printing its name (stderr escapes it)."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii")  # strict, as Python opens stdout
    monkeypatch.setattr(sys, "stdout", out)
    target = tmp_path / "é2.srdf"
    assert main(["srdf", str(REPO / "robots/abb_irb2400/srdf.py"), "-o", str(target)]) == 0
    out.flush()
    assert raw.getvalue().decode("ascii").endswith("\\xe92.srdf written\n")
    assert target.is_file()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["validate", "abb_irb240"],
            "robots/abb_irb240: unknown_model: robots/ has no folder 'abb_irb240'; it holds "
            "abb_irb2400, lbr_iiwa_14_r820; name 'abb_irb2400'",
        ),
        (
            ["spheres", "verify", "ur5"],
            "robots/ur5: unknown_model: robots/ has no folder 'ur5'; it holds abb_irb2400, "
            "lbr_iiwa_14_r820; name one of them, or add the robot's folder (docs/robots.md: "
            "adding a robot)",
        ),
        (
            ["template", "srdf", "lbr_iiwa"],
            "robots/lbr_iiwa: unknown_model: robots/ has no folder 'lbr_iiwa'; it holds "
            "abb_irb2400, lbr_iiwa_14_r820; name 'lbr_iiwa_14_r820'",
        ),
    ],
    ids=["validate", "spheres_verify", "template_srdf"],
)
def test_unknown_model_a_model_id_naming_no_folder_lists_the_models(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    """It said `robots/ur5/robot.urdf: file_missing`, naming neither the models nor a near one."""
    monkeypatch.chdir(REPO)
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [line]
