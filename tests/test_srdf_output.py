"""The generated SRDF: what Tesseract reads from it, its bytes, and the `srdf` target forms."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.cli import main
from pipeline.findings import ContractError
from pipeline.srdf import compile_srdf, load_srdf, parse_srdf, tesseract_view, write_srdf
from pipeline.srdf.compile import make_srdf
from pipeline.srdf.model import GroupState, JointValue, Srdf
from pipeline.srdf.view import TesseractParseError, rpy_to_wxyz
from pipeline.strict_xml import parse_xml
from pipeline.urdf import load_robot
from tests.conftest import REPO, ROBOTS

TOL = 1e-6


def close(actual: Any, expected: Any, path: str = "") -> list[str]:
    """Where two view documents differ, numbers compared at 1e-6."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if set(actual) != set(expected):
            return [f"{path}: keys {sorted(actual)} != {sorted(expected)}"]
        return [d for k in expected for d in close(actual[k], expected[k], f"{path}/{k}")]
    if isinstance(expected, list) and isinstance(actual, list) and len(actual) == len(expected):
        return [
            d
            for i, (a, e) in enumerate(zip(actual, expected, strict=True))
            for d in close(a, e, f"{path}/{i}")
        ]
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        return [] if abs(actual - expected) <= TOL else [f"{path}: {actual} != {expected}"]
    return [] if actual == expected else [f"{path}: {actual!r} != {expected!r}"]


def same_rotation(view: dict[str, Any]) -> dict[str, Any]:
    """The view with each quaternion's sign fixed (q and -q are the same rotation)."""
    for tcps in view["group_tcps"].values():
        for tcp in tcps.values():
            q = tcp["quat_xyzw"]
            if next(v for v in (q[3], *q[:3]) if abs(v) > TOL) < 0:
                tcp["quat_xyzw"] = [-v for v in q]
    return view


def compiled(model_id: str, root: Path = REPO, output: Path | None = None) -> bytes:
    """The SRDF of a robot as the build writes it, or for another output path."""
    if output is None:
        return make_srdf(root, model_id)[f"build/robots/{model_id}/robot.srdf"]
    return compile_srdf(root / "robots" / model_id / "srdf.py", output, root)


@pytest.mark.parametrize("model_id", ROBOTS)
def test_generated_srdf_reads_in_tesseract_as_the_reference(model_id: str) -> None:
    robot = load_robot(REPO / "robots" / model_id, REPO)
    expected = json.loads((REPO / "tests/data" / model_id / "tesseract_view.json").read_text())
    view = tesseract_view(compiled(model_id), robot)
    assert close(same_rotation(view), same_rotation(expected)) == []


@pytest.mark.parametrize("model_id", ROBOTS)
def test_reference_srdf_reads_as_its_tesseract_view(model_id: str) -> None:
    robot = load_robot(REPO / "robots" / model_id, REPO)
    expected = json.loads((REPO / "tests/data" / model_id / "tesseract_view.json").read_text())
    view = tesseract_view((REPO / "tests/data" / model_id / "reference.srdf").read_bytes(), robot)
    assert close(same_rotation(view), same_rotation(expected)) == []


@pytest.mark.parametrize("model_id", ROBOTS)
def test_generated_srdf_reproduces_the_reference(model_id: str) -> None:
    """Same elements, order and values: both models written out give the same bytes."""
    reference = load_srdf(REPO / "tests/data" / model_id / "reference.srdf", "reference.srdf")
    generated, findings = parse_srdf(parse_xml(compiled(model_id), "out"), "out")
    assert findings == []
    assert write_srdf(generated, None) == write_srdf(reference, None)


@pytest.mark.parametrize("model_id", ROBOTS)
def test_committed_build_srdf_is_what_the_source_gives(model_id: str) -> None:
    built = REPO / "build" / "robots" / model_id / "robot.srdf"
    assert built.read_bytes() == compiled(model_id)
    assert b'<tcad:urdf path="robot.urdf"/>' not in compiled(model_id, output=REPO / "x.srdf")


def test_output_bytes_are_deterministic_and_canonical() -> None:
    first = compiled("lbr_iiwa_14_r820")
    assert first == compiled("lbr_iiwa_14_r820")
    text = first.decode("utf-8")
    lines = text.split("\n")
    assert lines[0] == '<?xml version="1.0" encoding="UTF-8"?>'
    assert lines[1] == '<robot name="lbr_iiwa_14_r820" xmlns:tcad="https://text-to-cad.dev/srdf">'
    assert lines[2] == '  <tcad:urdf path="robot.urdf"/>'
    assert text.endswith("</robot>\n") and "\r" not in text and "\t" not in text
    assert all(len(line) - len(line.lstrip(" ")) in (0, 2, 4) for line in lines)
    srdf, _ = parse_srdf(parse_xml(first, "out"), "out")
    assert write_srdf(srdf, "robot.urdf") == first


MINIMAL = """
import xml.etree.ElementTree as ET

def gen_srdf():
    robot = ET.Element("robot", {{"name": "abb_irb2400"}})
    group = ET.SubElement(robot, "group", {{"name": "manipulator"}})
    ET.SubElement(group, "chain", {{"base_link": "base_link", "tip_link": "tool0"}})
{body}
    return {{"xml": robot, "urdf": "robot.urdf"}}
"""


def write_source(repo: Path, body: str, name: str = "gen.py") -> Path:
    source = repo / "robots" / "abb_irb2400" / name
    source.write_text(textwrap.dedent(body))
    return source


def minimal_source(repo: Path, lines: str) -> Path:
    """A generator of the manipulator chain plus `lines` (indented into gen_srdf)."""
    return write_source(repo, MINIMAL.format(body=textwrap.indent(textwrap.dedent(lines), "    ")))


@pytest.mark.parametrize(
    ("case", "old", "new"),
    [
        # a set of names iterates in another order under another hash seed (or Python)
        ("set", "in ALLOWED_COLLISIONS:", "in set(ALLOWED_COLLISIONS):"),
        (
            "random",
            "in ALLOWED_COLLISIONS:",
            "in __import__('random').sample(ALLOWED_COLLISIONS, len(ALLOWED_COLLISIONS)):",
        ),
        # a folder lists its files in the file system's order, another on another clone
        *(
            (
                case,
                "in ALLOWED_COLLISIONS:",
                f"in [c for f in {files} for c in "
                "ALLOWED_COLLISIONS if f.endswith(c[0] + '.dae')]:",
            )
            for case, files in [
                ("listdir", "__import__('os').listdir(MESHES)"),
                ("scandir", "[e.name for e in __import__('os').scandir(MESHES)]"),
                ("walk", "next(__import__('os').walk(MESHES))[2]"),
                ("glob", "__import__('glob').glob(MESHES + '/*')"),
                ("iterdir", "map(str, __import__('pathlib').Path(MESHES).iterdir())"),
                ("path_glob", "map(str, __import__('pathlib').Path(MESHES).glob('*'))"),
            ]
        ),
        # the day, the hour, the user or the host name, the same in two runs at once on one
        # machine, but another on the next build or machine: the runs' clocks are in time zones
        # 26 hours apart, and their users and hosts are named apart
        *(
            (case, '"reason": reason}', f'"reason": reason + {stamp}}}')
            for case, stamp in [
                ("local_date", "str(__import__('datetime').date.today())"),
                ("local_hour", "__import__('time').strftime('%H')"),
                ("time_zone", "__import__('time').strftime('%Z')"),
                ("user", "__import__('getpass').getuser()"),
                ("host", "__import__('socket').gethostname()"),
                ("node", "__import__('platform').node()"),
                ("uname", "__import__('os').uname().nodename"),
            ]
        ),
    ],
)
def test_generator_not_deterministic_runs_that_differ_are_refused(
    repo: Path, case: str, old: str, new: str
) -> None:
    real = (REPO / "robots/abb_irb2400/srdf.py").read_text()
    text = real.replace(old, new) + "MESHES = __import__('os').path.dirname(__file__) + '/meshes'\n"
    assert text != real
    source = write_source(repo, text, f"{case}_order.py")
    with pytest.raises(ContractError) as raised:
        compile_srdf(source, repo / "o.srdf", repo)
    [finding] = raised.value.findings
    assert finding.code == "generator_not_deterministic", finding.line()
    assert finding.place == "gen_srdf()" and "sorted()" in finding.hint
    assert not (repo / "o.srdf").exists()


@pytest.mark.parametrize(
    "new",
    [
        "in sorted(set(ALLOWED_COLLISIONS)):",
        "in [c for f in sorted(__import__('os').listdir(MESHES)) for c in ALLOWED_COLLISIONS "
        "if f.endswith(c[0] + '.dae')]:",
    ],
)
def test_a_sorted_set_is_deterministic(repo: Path, new: str) -> None:
    real = (REPO / "robots/abb_irb2400/srdf.py").read_text()
    text = (
        real.replace("in ALLOWED_COLLISIONS:", new)
        + "MESHES = __import__('os').path.dirname(__file__) + '/meshes'\n"
    )
    source = write_source(repo, text, "sorted_set.py")
    runs = {compile_srdf(source, repo / "o.srdf", repo) for _ in range(2)}
    assert len(runs) == 1


def test_a_generator_cannot_import_the_compilers_modules_by_bare_name(repo: Path) -> None:
    # child.py runs as a script: its own folder (pipeline/srdf/) is not left on sys.path
    source = minimal_source(repo, "import model")
    with pytest.raises(ContractError) as raised:
        compile_srdf(source, repo / "o.srdf", repo)
    [finding] = raised.value.findings
    assert finding.code == "generator_raised" and "No module named 'model'" in finding.message


def test_the_child_imports_no_compiler_module(repo: Path) -> None:
    """child.py's guard and XML reading are modules beside it (child_guard.py, child_xml.py),
    loaded from their files: a generator finds no module of the pipeline package loaded."""
    source = minimal_source(
        repo,
        "import sys\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('pipeline', 'child'))\n"
        "assert not loaded, loaded\n",
    )
    assert b"<robot" in compile_srdf(source, repo / "o.srdf", repo)


def test_value_deg_is_converted_to_radians_that_read_back_exactly(repo: Path) -> None:
    source = minimal_source(
        repo,
        """
        state = ET.SubElement(robot, "group_state", {"name": "bent", "group": "manipulator"})
        ET.SubElement(state, "joint", {"name": "joint_2", "value_deg": "30"})
        ET.SubElement(state, "joint", {"name": "joint_3", "value": "0.1"})
        """,
    )
    data = compile_srdf(source, repo / "out" / "robot.srdf", repo)
    assert f'<joint name="joint_2" value="{math.radians(30)!r}"/>'.encode() in data
    assert b'<joint name="joint_3" value="0.1"/>' in data
    assert b"value_deg" not in data
    view = tesseract_view(data, load_robot(repo / "robots/abb_irb2400", repo))
    assert view["group_states"]["manipulator"]["bent"]["joint_2"] == math.radians(30)


def test_legacy_explorer_urdf_is_replaced_and_tcad_urdf_updated(repo: Path) -> None:
    body = """
        XML = '''<robot name="abb_irb2400" xmlns:explorer="https://text-to-cad.dev/explorer"
          xmlns:tcad="https://text-to-cad.dev/srdf">
          <group name="manipulator"><chain base_link="base_link" tip_link="tool0"/></group>
          <{tag} path="somewhere/else.urdf"/>
        </robot>'''

        def gen_srdf():
            return {{"xml": XML, "urdf": "robot.urdf"}}
        """
    for tag in ("explorer:urdf", "tcad:urdf"):
        source = write_source(repo, body.format(tag=tag))
        data = compile_srdf(source, repo / "out" / "robot.srdf", repo)
        text = data.decode()
        assert text.splitlines()[2] == '  <tcad:urdf path="../robots/abb_irb2400/robot.urdf"/>'
        assert "explorer" not in text and "somewhere" not in text
        assert text.count("tcad:urdf") == 1


def test_string_elementtree_and_lxml_envelopes_give_the_same_bytes(repo: Path) -> None:
    real = (REPO / "robots/abb_irb2400/srdf.py").read_text()
    variants = {
        "element": real,
        "string": real
        + "\n_g = gen_srdf\n"
        + "gen_srdf = lambda: {**_g(), 'xml': ET.tostring(_g()['xml'], encoding='unicode')}\n",
        "via_lxml": real
        + "\nfrom lxml import etree\n_g = gen_srdf\n"
        + "gen_srdf = lambda: {**_g(), 'xml': etree.fromstring(ET.tostring(_g()['xml']))}\n",
        "tree": real
        + "\n_g = gen_srdf\ngen_srdf = lambda: {**_g(), 'xml': ET.ElementTree(_g()['xml'])}\n",
    }
    outputs = {
        name: compile_srdf(write_source(repo, text, f"{name}.py"), repo / "o.srdf", repo)
        for name, text in variants.items()
    }
    assert len(set(outputs.values())) == 1


@pytest.mark.parametrize("encoding", ["ISO-8859-1", "UTF-16", "UTF-8"])
def test_string_envelope_declaring_an_encoding_is_read_as_the_text_it_is(
    repo: Path, encoding: str
) -> None:
    """The text was encoded as UTF-8 and parsed as declared: 'é' came out 'Ã©', UTF-16 failed."""
    real = (REPO / "robots/abb_irb2400/srdf.py").read_text()
    text = real + textwrap.dedent(
        f"""
        _g = gen_srdf


        def gen_srdf():
            root = _g()["xml"]
            group = ET.SubElement(root, "group", {{"name": "wrist_\u00e9"}})
            ET.SubElement(group, "joint", {{"name": "joint_6"}})
            head = '<?xml version="1.0" encoding="{encoding}"?>'
            return {{**_g(), "xml": head + ET.tostring(root, encoding="unicode")}}
        """
    )
    data = compile_srdf(write_source(repo, text, "declared.py"), repo / "o.srdf", repo)
    assert '<group name="wrist_\u00e9">' in data.decode("utf-8")


def test_tcp_wxyz_is_normalised_on_output(repo: Path) -> None:
    source = minimal_source(
        repo,
        """
        tcps = ET.SubElement(robot, "group_tcps", {"group": "manipulator"})
        ET.SubElement(tcps, "tcp", {"name": "t", "xyz": "0 0 0.1", "wxyz": "2 0 0 2"})
        """,
    )
    data = compile_srdf(source, repo / "o.srdf", repo)
    half = repr(1 / math.sqrt(2))
    assert f'<tcp name="t" xyz="0.0 0.0 0.1" wxyz="{half} 0.0 0.0 {half}"/>'.encode() in data


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_written_joint_values_read_back_exactly(value: float) -> None:
    srdf = Srdf("r", None, (GroupState("s", "g", (JointValue("j", value, False, ""),), ""),))
    back, findings = parse_srdf(parse_xml(write_srdf(srdf, None), "x"), "x")
    assert findings == []
    state = back.elements[0]
    assert isinstance(state, GroupState)
    assert state.values[0].value == value


def test_rpy_composes_as_rz_ry_rx() -> None:
    w, x, y, z = rpy_to_wxyz(0.0, math.pi / 2, 0.0)
    assert (w, x, y, z) == pytest.approx((math.sqrt(0.5), 0.0, math.sqrt(0.5), 0.0))
    # Rz(90°)·Rx(90°): rotating x then z is not the same as z then x
    assert rpy_to_wxyz(math.pi / 2, 0.0, math.pi / 2) == pytest.approx((0.5, 0.5, 0.5, 0.5))


def run(repo: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    monkeypatch.chdir(repo)
    return main(["srdf", *argv])


def test_srdf_command_source_form_writes_beside_the_source(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(repo, monkeypatch, "robots/abb_irb2400/srdf.py") == 0
    data = (repo / "robots/abb_irb2400/srdf.srdf").read_bytes()
    assert b'<tcad:urdf path="robot.urdf"/>' in data


def test_srdf_command_output_form(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(repo, monkeypatch, "robots/lbr_iiwa_14_r820/srdf.py", "-o", "out/lbr.srdf") == 0
    data = (repo / "out/lbr.srdf").read_bytes()
    assert b'<tcad:urdf path="../robots/lbr_iiwa_14_r820/robot.urdf"/>' in data
    assert data == compiled("lbr_iiwa_14_r820", repo, repo / "out/lbr.srdf")


def test_srdf_command_pair_form_writes_all_or_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pairs = ["robots/abb_irb2400/srdf.py=out/a.srdf", "robots/lbr_iiwa_14_r820/srdf.py=out/b.srdf"]
    assert run(repo, monkeypatch, *pairs) == 0
    assert (repo / "out/a.srdf").is_file() and (repo / "out/b.srdf").is_file()
    before = {p: p.read_bytes() for p in (repo / "out").iterdir()}
    (repo / "robots/lbr_iiwa_14_r820/srdf.py").write_text("def gen_srdf():\n    raise OSError\n")
    (repo / "robots/abb_irb2400/srdf.py").write_text(
        (REPO / "robots/abb_irb2400/srdf.py").read_text().replace("all-zeros", "zero")
    )
    assert run(repo, monkeypatch, *pairs) == 2
    assert {p: p.read_bytes() for p in (repo / "out").iterdir()} == before


def test_a_urdf_not_named_robot_urdf_is_loaded_on_its_own(repo: Path) -> None:
    folder = repo / "robots/abb_irb2400"
    (folder / "irb2400.urdf").write_bytes((folder / "robot.urdf").read_bytes())
    source = write_source(
        repo, (folder / "srdf.py").read_text().replace('"robot.urdf"', '"irb2400.urdf"')
    )
    data = compile_srdf(source, folder / "gen.srdf", repo)
    assert b'<tcad:urdf path="irb2400.urdf"/>' in data


def test_view_reads_margins_link_groups_version_and_warnings(repo: Path) -> None:
    robot = load_robot(repo / "robots/abb_irb2400", repo)
    data = b"""<robot name="abb_irb2400" version="1.2">
      <group name="links"><link name="link_1"/><link name="link_2"/></group>
      <disable_collisions link1="link_2" link2="link_1" reason="Adjacent"/>
      <disable_collisions link1="link_1" link2="link_2" reason="Never"/>
      <disable_collisions link1="link_1" link2="gone" reason="Never"/>
      <collision_margins default_margin="0.025">
        <pair_margin link1="link_6" link2="link_5" margin="0.01"/>
      </collision_margins>
      <collision_margins default_margin="9"/>
    </robot>"""
    view = tesseract_view(data, robot)
    assert view["version"] == [1, 2, 0]
    assert view["link_groups"] == {"links": ["link_1", "link_2"]}
    assert view["allowed_collisions"] == [["link_1", "link_2", "Never"]]
    assert view["collision_margin_data"] == {
        "default_margin": 0.025,
        "pair_margins": [["link_5", "link_6", 0.01]],
    }
    assert view["warnings"] == ["Link 'gone' is not known to URDF"]


@pytest.mark.parametrize(
    "body",
    [
        '<group name="g"><link name="link_1"/><joint name="joint_1"/></group>',
        '<group name="g"/>',
        '<group_state name="s" group="nope"><joint name="joint_1" value="0"/></group_state>',
        '<group_tcps group="g"/>',
    ],
)
def test_view_refuses_what_tesseract_refuses(body: str, repo: Path) -> None:
    robot = load_robot(repo / "robots/abb_irb2400", repo)
    with pytest.raises(TesseractParseError):
        tesseract_view(f'<robot name="abb_irb2400">{body}</robot>'.encode(), robot)


# (case, lines added to gen_srdf, the warning's place, the start of its message)
STDERR_CASES = [
    (
        "warnings_warn",
        "import warnings\nwarnings.warn('joint_6 has no home value')",
        "line",
        "'UserWarning: joint_6 has no home value'",
    ),
    ("stderr_write", "import sys\nsys.stderr.write('note\\n')", "gen_srdf()", "'note'"),
    (
        "two_messages",
        "import sys\nsys.stderr.write('first\\n  detail\\nsecond\\n')",
        "gen_srdf()",
        "'first' and 1 more",
    ),
    (
        "a_repository_module",  # named by its repo-relative path
        "import warnings\nwarnings.warn_explicit('old API', UserWarning, {lib!r}, 3)",
        "gen_srdf()",
        "'robots/abb_irb2400/lib.py:3: UserWarning: old API'",
    ),
]


@pytest.mark.parametrize(
    ("case", "lines", "place", "message"), STDERR_CASES, ids=[c[0] for c in STDERR_CASES]
)
def test_generator_wrote_stderr_is_a_warning_and_the_srdf_is_written(
    repo: Path, capsys: pytest.CaptureFixture[str], case: str, lines: str, place: str, message: str
) -> None:
    quiet = compile_srdf(minimal_source(repo, ""), repo / "o.srdf", repo)
    capsys.readouterr()
    lib = str(repo / "robots" / "abb_irb2400" / "lib.py")
    source = minimal_source(repo, lines.format(lib=lib))
    assert compile_srdf(source, repo / "o.srdf", repo) == quiet
    [line] = capsys.readouterr().err.splitlines()
    if place == "line":  # the line of the warnings.warn call
        place = str(
            1
            + source.read_text()
            .splitlines()
            .index("    warnings.warn('joint_6 has no home value')")
        )
    expected = (
        f"robots/abb_irb2400/gen.py:{place}: generator_wrote_stderr: wrote to standard error: "
    )
    assert line.startswith(expected + message), line
    assert line.endswith(" (warning)") and str(repo) not in line


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_pipeline_srdf_prints_a_generators_warning_as_asked_and_writes(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    minimal_source(repo, "import sys\nsys.stderr.write('note\\n')")
    monkeypatch.chdir(repo)
    argv = ["srdf", "robots/abb_irb2400/gen.py", "-o", "out/gen.srdf"]
    assert main(["--json", *argv] if as_json else argv) == 0
    assert (repo / "out/gen.srdf").is_file()
    captured = capsys.readouterr()
    assert captured.out == "srdf: out/gen.srdf written\n"
    if as_json:
        [warning] = json.loads(captured.err)
        assert (warning["code"], warning["severity"]) == ("generator_wrote_stderr", "warning")
        assert warning["file"] == "robots/abb_irb2400/gen.py"
    else:
        [line] = captured.err.splitlines()
        assert "generator_wrote_stderr" in line and line.endswith(" (warning)")
