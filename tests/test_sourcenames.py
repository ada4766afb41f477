"""Names that are not sources: hidden files, editors' backups and locks, OS metadata."""

from __future__ import annotations

import pytest

from pipeline.sourcenames import ignored, ignored_part


@pytest.mark.parametrize(
    ("name", "is_ignored"),
    [
        (".DS_Store", True),  # macOS Finder, in every folder it opens
        ("._link_1.stl", True),  # macOS AppleDouble on a foreign file system
        ("Thumbs.db", True),  # Windows Explorer
        ("thumbs.DB", True),  # case-blind, as Windows and macOS file systems
        ("desktop.ini", True),
        ("Icon\r", True),  # a macOS custom folder icon
        ("link_3.stl~", True),  # Emacs, gedit, Kate backups
        ("#srdf.py#", True),  # Emacs auto-save
        (".#srdf.py", True),  # Emacs lock
        (".robot.urdf.swp", True),  # Vim swap
        ("__pycache__", True),
        ("link_3.stl", False),
        ("robot.urdf", False),
        ("#", False),  # a name of one '#' is no auto-save
        ("base#1.stl", False),
        ("machine_planning_calibration.json", False),
        ("link~3.stl", False),
        ("link_3.stl.orig", False),  # a person's, not a tool's: left to the person
    ],
)
def test_ignored_names(name: str, is_ignored: bool) -> None:
    assert ignored(name) is is_ignored


@pytest.mark.parametrize(
    ("path", "part"),
    [
        ("link_1.stl", None),
        ("vis/link_1.dae", None),
        ("vis/.hidden/link_1.dae", ".hidden"),
        ("link_1.stl~", "link_1.stl~"),
        ("./cal.json", None),  # '.' and '..' are other rules' concern
        ("../cal.json", None),
    ],
)
def test_ignored_part_names_the_first_segment_not_a_source(path: str, part: str | None) -> None:
    assert ignored_part(path) == part
