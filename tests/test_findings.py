"""Findings: one line each, printed in the order a person reads the files they name."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.findings import Finding, reading_order, render

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
