"""A `<material>`'s `<texture>` as Tesseract's URDF parser reads it, and as the compiler judges
it (pipeline/urdf/extras.py): refused where Tesseract refuses the URDF, warned of where it loads
a texture that names no file."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tesseract_robotics")

from pipeline.findings import Severity
from pipeline.urdf import parse_urdf
from tests.tesseract_support import tesseract_urdf

BOX = '<geometry><box size="0.1 0.1 0.1"/></geometry>'
COLOR = '<color rgba="1 0 0 1"/>'
GOOD = '<texture filename="package://t/meshes/t.png"/>'


def _urdf(visual_material: str, robot_material: str = "") -> str:
    """A robot of two links, the first drawn with `visual_material`."""
    return (
        f'<robot name="t">{robot_material}<link name="a"><visual>{BOX}{visual_material}</visual>'
        f'<collision>{BOX}</collision></link><link name="b"/><joint name="j" type="fixed">'
        '<parent link="a"/><child link="b"/></joint></robot>'
    )


# (case, URDF, Tesseract's refusal (None: it loads the URDF), the texture file name it keeps,
# the compiler's findings: code and severity)
CASES = [
    # iCub's <texture />: Tesseract refuses the URDF, its message naming the link, not why
    (
        "no_filename",
        _urdf(f'<material name="m">{COLOR}<texture /></material>'),
        "URDF: Error parsing 'link' element for robot 't'!",
        None,
        [("invalid_material", Severity.ERROR)],
    ),
    (
        "no_filename_texture_alone",
        _urdf('<material name="m"><texture/></material>'),
        "URDF: Error parsing 'link' element for robot 't'!",
        None,
        [("invalid_material", Severity.ERROR)],
    ),
    (
        "no_filename_in_the_robot",
        _urdf('<material name="m"/>', f'<material name="m">{COLOR}<texture /></material>'),
        "URDF: Error parsing urdf global 'material' element for robot 't'!",
        None,
        [("invalid_material", Severity.ERROR)],
    ),
    # an empty filename loads, kept empty: the <texture> names no file and is ignored
    (
        "empty_filename",
        _urdf(f'<material name="m">{COLOR}<texture filename=""/></material>'),
        None,
        "",
        [("empty_texture_filename", Severity.WARNING)],
    ),
    ("good", _urdf(f'<material name="m">{COLOR}{GOOD}</material>'), None, "meshes/t.png", []),
]


@pytest.mark.parametrize(
    ("case", "text", "refusal", "texture", "findings"), CASES, ids=[c[0] for c in CASES]
)
def test_a_texture_is_judged_as_tesseract_reads_it(
    tmp_path: Path,
    case: str,
    text: str,
    refusal: str | None,
    texture: str | None,
    findings: list[tuple[str, Severity]],
) -> None:
    if refusal is not None:
        with pytest.raises(RuntimeError) as exc:
            tesseract_urdf(tmp_path, text, "t")
        assert str(exc.value) == refusal
    else:
        graph = tesseract_urdf(tmp_path, text, "t")
        kept = graph.getLink("a").visual[0].material.texture_filename
        assert kept.endswith(texture) and (texture or not kept)
    _, found = parse_urdf(text.encode(), "robots/t/robot.urdf", "t")
    assert [(f.code, f.severity) for f in found] == findings
    if refusal is not None:
        assert "Tesseract refuses" in found[0].message
