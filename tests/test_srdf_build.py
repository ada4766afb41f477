"""The srdf step of the graph: registered, covered by the identity, and refusing bad generators."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main
from tests.conftest import REPO, run_doit, tree_bytes
from tests.test_tasks import ran

ABB = "robots/abb_irb2400"

BAD_GENERATORS = [
    ("generator_raised", "def gen_srdf():\n    raise RuntimeError('no arm')\n"),
    ("envelope_missing_key", "def gen_srdf():\n    return {'xml': '<robot/>'}\n"),
    ("envelope_not_dict", "def gen_srdf():\n    return None\n"),
]


def test_manifest_registers_the_srdf_and_the_identity_covers_it(project: Path) -> None:
    assert run_doit(project).returncode == 0
    manifest = json.loads(
        (project / "build/robots/abb_irb2400/robot_description_manifest.json").read_text()
    )
    assert "robot.srdf" in manifest["files"]
    before = json.loads((project / "build/index.json").read_text())["robots"]
    source = project / ABB / "srdf.py"
    source.write_text(source.read_text().replace('"Default"', '"Never"'))
    result = run_doit(project)
    assert result.returncode == 0, result.stdout
    assert {"srdf:abb_irb2400", "manifest:abb_irb2400", "index:robots"} <= ran(result.stdout)
    assert "srdf:lbr_iiwa_14_r820" not in ran(result.stdout)
    after = json.loads((project / "build/index.json").read_text())["robots"]
    assert after["abb_irb2400"]["identity"] != before["abb_irb2400"]["identity"]
    assert after["lbr_iiwa_14_r820"] == before["lbr_iiwa_14_r820"]
    srdf = (project / "build/robots/abb_irb2400/robot.srdf").read_bytes()
    assert b'link1="link_4" link2="link_6" reason="Never"' in srdf


@pytest.mark.parametrize(("code", "text"), BAD_GENERATORS, ids=[c for c, _ in BAD_GENERATORS])
def test_bad_generator_in_doit_gives_one_line_and_leaves_build(
    code: str, text: str, project: Path
) -> None:
    before = tree_bytes(project / "build")
    (project / ABB / "srdf.py").write_text(text)
    result = run_doit(project)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith(f"{ABB}/srdf.py:")]
    assert len(lines) == 1 and f": {code}: " in lines[0], result.stdout
    assert tree_bytes(project / "build") == before


@pytest.mark.parametrize(
    ("renamed", "hint"),
    [
        (None, "add srdf.py defining gen_srdf(), which returns the robot's SRDF (docs/srdf.md)"),
        ("gen_srdf.py", "rename gen_srdf.py to srdf.py: each folder in robots/ holds its srdf.py"),
    ],
    ids=["file_missing-no-generator", "file_missing-generator-misnamed"],
)
def test_file_missing_a_robot_without_srdf_py_is_refused(
    renamed: str | None, hint: str, project: Path
) -> None:
    """The SRDF is not optional: a description without one loads in no planner."""
    before = tree_bytes(project / "build")
    source = project / ABB / "srdf.py"
    if renamed:
        source.rename(source.with_name(renamed))
    else:
        source.unlink()
    result = run_doit(project)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith(f"{ABB}/srdf.py:")]
    assert lines == [f"{ABB}/srdf.py: file_missing: file does not exist; {hint}"]
    assert tree_bytes(project / "build") == before


def test_hanging_generator_is_stopped_and_build_unchanged(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree_bytes(project / "build")
    (project / ABB / "srdf.py").write_text("def gen_srdf():\n    while True:\n        pass\n")
    monkeypatch.chdir(project)
    target = f"{ABB}/srdf.py=build/robots/abb_irb2400/robot.srdf"
    assert main(["srdf", "--timeout", "1", target]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"{ABB}/srdf.py:gen_srdf(): generator_timeout: did not return within 1 s and was "
        "stopped; remove the endless loop or blocking call; a generator only builds XML"
    ]
    assert tree_bytes(project / "build") == before


def test_committed_build_has_both_srdfs() -> None:
    for model_id in ("abb_irb2400", "lbr_iiwa_14_r820"):
        assert (REPO / "build/robots" / model_id / "robot.srdf").is_file()


def test_generator_wrote_stderr_is_shown_by_doit_and_builds(project: Path) -> None:
    """A generator's warnings.warn reaches the person running doit, and stops nothing."""
    assert run_doit(project).returncode == 0
    source = project / ABB / "srdf.py"
    text = source.read_text().replace(
        "def gen_srdf():", "def gen_srdf():\n    import warnings\n    warnings.warn('check me')", 1
    )
    assert text != source.read_text()
    source.write_text(text)
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "srdf:abb_irb2400" in ran(result.stdout)
    line = f"{ABB}/srdf.py:"
    warned = [x for x in result.stderr.splitlines() if x.startswith(line)]
    assert len(warned) == 1 and ": generator_wrote_stderr: " in warned[0], result.stderr
    assert "standard error: 'UserWarning: check me';" in warned[0], warned
    assert warned[0].endswith(" (warning)"), warned


# a TCP at the top of a tool mesh, read as a new user's generator would
TOOL_TCP = """
import trimesh

_gen_srdf = gen_srdf


def gen_srdf():
    top = trimesh.load(Path(__file__).parent / "meshes" / "tool.stl").bounds[1][2]
    TCPS["tool"] = {"xyz": f"0 0 {top:.3f}", "rpy": "0 0 0"}
    return _gen_srdf()
"""


def test_a_generator_reading_a_mesh_builds_and_runs_again_when_the_mesh_changes(
    project: Path,
) -> None:
    """A mesh is an input of the urdf step, whose stamp the srdf step's inputs hold: a changed
    mesh runs both again (measured: a byte of meshes/link_6.stl changed ran urdf, srdf,
    spheres, manifest, index and cellbuild), so gen_srdf() may read one. A new-user trial: a
    TCP placed from a tool mesh's bounds was refused, generator_read_untracked_file."""
    import trimesh

    tool = project / ABB / "meshes/tool.stl"
    trimesh.creation.box((0.1, 0.1, 0.2)).export(tool)
    source = project / ABB / "srdf.py"
    source.write_text("from pathlib import Path\n" + source.read_text() + TOOL_TCP)
    built = project / "build/robots/abb_irb2400/robot.srdf"
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "srdf:abb_irb2400" in ran(result.stdout)
    assert b'<tcp name="tool" xyz="0.0 0.0 0.1"' in built.read_bytes()
    # both runs agreed (no generator_not_deterministic), and a second build has nothing to do
    assert "srdf:abb_irb2400" not in ran(run_doit(project).stdout)
    trimesh.creation.box((0.1, 0.1, 0.4)).export(tool)
    result = run_doit(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {"urdf:abb_irb2400", "srdf:abb_irb2400"} <= ran(result.stdout)
    assert b'<tcp name="tool" xyz="0.0 0.0 0.2"' in built.read_bytes()
