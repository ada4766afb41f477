"""Findings: one line each, printed in the order a person reads the files they name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.findings import (
    FINDINGS_SHOWN,
    ContractError,
    Finding,
    Severity,
    reading_order,
    render,
)

URDF = "robots/abb_irb2400/robot.urdf"
CONFIG = "robots/abb_irb2400/config.json"


def finding(file: str, place: str) -> Finding:
    return Finding("some_code", file, place, "what is wrong", "how to fix it")


@pytest.mark.parametrize(
    ("found", "printed"),
    [
        # lines of one file: by line
        ([(URDF, "80"), (URDF, "73"), (URDF, "9")], [(URDF, "9"), (URDF, "73"), (URDF, "80")]),
        # files keep the order they first appear in (the stage that found them)
        (
            [(URDF, "80"), (CONFIG, "/axes"), (URDF, "7")],
            [(URDF, "7"), (URDF, "80"), (CONFIG, "/axes")],
        ),
        # JSON pointers are no lines: their order stays as found
        ([(CONFIG, "/b"), (CONFIG, "/a")], [(CONFIG, "/b"), (CONFIG, "/a")]),
        # a finding with no place comes before the lines of its file
        ([(URDF, "12"), (URDF, "")], [(URDF, ""), (URDF, "12")]),
    ],
    ids=["by-line", "files-as-found", "pointers-as-found", "no-place-first"],
)
def test_reading_order(found: list[tuple[str, str]], printed: list[tuple[str, str]]) -> None:
    findings = [finding(file, place) for file, place in found]
    assert [(f.file, f.place) for f in reading_order(findings)] == printed
    assert render(findings).splitlines() == [finding(*p).line() for p in printed]


def test_a_links_visual_is_printed_before_its_collision_below_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The mesh rules look at a link's collisions first: line 63 was printed before line 54."""
    path = repo / URDF
    text = path.read_text()
    for mesh in ("link_1.dae", "link_1.stl"):
        text = text.replace(f"meshes/{mesh}", f"meshes/missing_{mesh}", 1)
    path.write_text(text)
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 2
    lines = capsys.readouterr().err.splitlines()
    places = [int(line.split(":")[1]) for line in lines]
    assert len(places) == 2 and places == sorted(places), lines


def _abb_with_independent_problems(repo: Path) -> None:
    """The shipped abb_irb2400 with a problem in each of several links and mesh files."""
    folder = repo / "robots" / "abb_irb2400"
    meshes = folder / "meshes"
    (meshes / "link_2_whole.stl").write_bytes(bytes(range(256)) * 7)  # random bytes
    (meshes / "link_3.stl").write_bytes(b"")
    # link_4's visual DAE as its collision, in inches, with a <lines> of count 0 too
    dae = (meshes / "link_4.dae").read_text()
    lines = '<lines count="0"><input semantic="VERTEX" source="#Link_4-mesh-vertices" '
    lines += 'offset="0"/><p>0 1</p></lines>\n        <polylist'
    dae = dae.replace('meter="1"', 'meter="0.0254"', 1).replace("<polylist", lines, 1)
    (meshes / "link_4_in_inches.dae").write_text(dae)
    edits = [
        ("meshes/link_1.stl", "meshes/link_1_gone.stl"),  # mesh_missing
        ("meshes/link_4.stl", "meshes/link_4_in_inches.dae"),
        ('<origin rpy="0 0 0" xyz="0 0 0"/>', '<origin rpy="0 0 0" xyz="0 0 zero"/>'),
        # link_5's collision far out, link_6's scaled past any cell: geometry_out_of_range
        (
            '<origin rpy="0 0 0" xyz="0 0 0"/>\n      <geometry>\n        <mesh filename='
            '"package://abb_irb2400/meshes/link_5.stl"/>',
            '<origin rpy="0 0 0" xyz="0 0 1e300"/>\n      <geometry>\n        <mesh filename='
            '"package://abb_irb2400/meshes/link_5.stl"/>',
        ),
        ('meshes/link_6.stl"/>', 'meshes/link_6.stl" scale="1e200 1 1"/>'),
    ]
    urdf = folder / "robot.urdf"
    text = urdf.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    urdf.write_text(text)


def test_validate_reports_the_findings_of_independent_checks_in_one_run(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """DESIGN: validation collects every finding before deciding. A new-user trial needed two
    rounds each: a missing mesh hid two other links' meshes that are no meshes; an invalid
    number hid two links' geometry out of range; a DAE's unit hid its <lines>."""
    _abb_with_independent_problems(repo)
    monkeypatch.chdir(repo)
    assert main(["validate", "abb_irb2400"]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.out == ""
    at = "robots/abb_irb2400/"
    found = [line.removeprefix(at).split(": ")[:2] for line in captured.err.splitlines()]
    assert sorted((where.split(":")[0], code) for where, code in found) == [
        ("meshes/link_2_whole.stl", "mesh_not_a_mesh"),
        ("meshes/link_3.stl", "mesh_empty"),
        ("meshes/link_4_in_inches.dae", "mesh_lines_or_points"),
        ("meshes/link_4_in_inches.dae", "mesh_unreadable"),
        ("robot.urdf", "geometry_out_of_range"),
        ("robot.urdf", "geometry_out_of_range"),
        ("robot.urdf", "invalid_number"),
        ("robot.urdf", "mesh_missing"),
    ], captured.err


HUGE = "j" * 10_000_000


@pytest.mark.parametrize(
    "long",
    [
        # a calibration correcting a joint of a 10 MB name: its pointer and message held it whole
        Finding("unknown_joint", "cal.json", f"/kinematics/{HUGE}", f"joint {HUGE!r} is not", "h"),
        # a program header naming a model of 10 MB: a refusal line of 10 MB
        Finding("model_mismatch", "program.json", "/robot_cell/model_id", f"names {HUGE!r}", "h"),
        Finding("some_code", "f.json", "", "what", f"write {HUGE}"),
    ],
    ids=["place_and_message", "message", "hint"],
)
def test_a_line_cuts_a_huge_value_short_keeping_both_ends(long: Finding) -> None:
    """A value an input holds (a key, a name) is quoted in a finding: a line of megabytes."""
    line = long.line()
    assert len(line) < 6000
    assert line.startswith(f"{long.file}:") and f": {long.code}: " in line
    assert line.endswith(long.hint[-20:]) and "characters left out" in line
    # the JSON form keeps every character: a program reading it may want them
    assert long.as_json()["message"] == long.message


def test_a_line_of_ordinary_length_is_left_whole() -> None:
    plain = Finding("c", "f", "/a", "m" * 1900, "h" * 1900)
    assert plain.line() == f"f:/a: c: {'m' * 1900}; {'h' * 1900}"


# Every character Python's `str.splitlines` breaks a line at, C1 controls, which terminals may
# act on, and the bidirectional controls that reorder what a line shows ("Trojan source"): a
# name holding one still gives one line that shows what the name holds.
@pytest.mark.parametrize(
    "char",
    [
        *("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x9b"),
        *("\u202a", "\u202e", "\u2066", "\u2069", "\u200e", "\u200f", "\u061c"),
    ],
)
def test_a_line_break_or_control_in_a_value_stays_one_line(char: str) -> None:
    found = Finding("mesh_missing", f"robots/r/meshes/a{char}b.stl", "", "names a file", "x")
    line = found.line()
    assert line.splitlines() == [line]
    assert line.isprintable()
    assert ascii(char)[1:-1] in line


# Characters a terminal shows as nothing or as a plain space (a zero-width space or joiner, a
# byte order mark, a soft hyphen, a Unicode tag, a no-break or ideographic space): a mesh
# `link_7\u200b.stl` that failed to parse was shown as `robots/.../meshes/link_7.stl`, a file
# that is there and parses. Written as Python's repr writes them, as every other escape is.
@pytest.mark.parametrize(
    "char", ["\u200b", "\u200d", "\ufeff", "\xad", "\u2060", "\U000e0041", "\xa0", "\u3000"]
)
def test_an_invisible_character_in_a_value_is_shown_escaped(char: str) -> None:
    found = Finding("mesh_not_a_mesh", f"robots/r/meshes/link_7{char}.stl", "", "m", "h")
    line = found.line()
    assert line.isprintable()
    assert f"link_7{ascii(char)[1:-1]}.stl" in line


def test_printable_text_in_any_script_is_left_as_it_is() -> None:
    text = "r2d2é/ロボット/Ω ok"
    assert Finding("c", text, "", "m", "h").line() == f"{text}: c: m; h"


def many(errors: int, warnings: int) -> list[Finding]:
    """`errors` errors and `warnings` warnings of one file, each on its own line."""
    out = [Finding("unexpected_field", CONFIG, f"/k{i}", "m", "h") for i in range(errors)]
    warned = Finding("unknown_element", URDF, "", "m", "h", Severity.WARNING)
    return out + [warned._replace(place=str(i + 1)) for i in range(warnings)]


# (errors, warnings, --json) -> lines printed and the last one's start ("" for a finding's)
CAPPED: list[tuple[int, int, bool, int, str]] = [
    (3, 0, False, 3, ""),
    (FINDINGS_SHOWN, 0, False, FINDINGS_SHOWN, ""),
    (FINDINGS_SHOWN + 1, 0, False, FINDINGS_SHOWN + 1, "pipeline: 1 more finding not shown"),
    (
        1_000,
        50,
        False,
        FINDINGS_SHOWN + 1,
        "pipeline: 950 more findings not shown (900 errors, 50 warnings)",
    ),
    (1_000, 50, True, 1_050, ""),  # --json: every finding, for a program or a person to read
]


@pytest.mark.parametrize(
    ("errors", "warnings", "as_json", "count", "last"),
    CAPPED,
    ids=["few", "at-the-cap", "one-over", "errors-and-warnings", "json-whole"],
)
def test_lines_stop_at_the_cap_and_say_how_many_more_and_how_to_see_them(
    errors: int, warnings: int, as_json: bool, count: int, last: str
) -> None:
    """A config.json of 1.3 M unknown keys printed 1.3 M lines, 212 MB (a review)."""
    findings = many(errors, warnings)
    text = render(findings, as_json=as_json)
    if as_json:
        assert len(json.loads(text)) == count
        return
    lines = text.splitlines()
    assert len(lines) == count
    shown = reading_order(findings)[:FINDINGS_SHOWN]
    assert lines[: len(shown)] == [f.line() for f in shown]
    if last:
        assert lines[-1].startswith(last) and "`pipeline --json" in lines[-1]
    else:
        assert ": " in lines[-1] and not lines[-1].startswith("pipeline: ")


def test_a_contract_errors_message_stops_at_the_cap() -> None:
    """Its message joined every line: 212 MB built before a line was printed."""
    error = ContractError(many(FINDINGS_SHOWN * 3, 0))
    assert str(error) == render(error.findings)
    assert len(error.findings) == FINDINGS_SHOWN * 3
