"""COLLADA blocks of faces that Tesseract's mesh reader refuses or crashes on, on any mesh, and
those it reads otherwise than pycollada, on a collision mesh (pipeline/urdf/dae_blocks.py; each
case measured against Tesseract in tests/test_tesseract_dae_blocks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.urdf.mesh_bytes import mesh_findings
from tests.conftest import peak_memory
from tests.meshfiles import (
    DAE_LINES_OTHERWISE,
    DAE_LINES_READ,
    DAE_READ_ALIKE,
    DAE_READ_OTHERWISE,
    DAE_REFUSED,
    block_dae,
)
from tests.test_dae_instancing import ABB, COLLISION, VISUAL, validate

# name: (the element the finding names, the start of what it says)
SAYS = {
    "ph_with_a_hole": ("<h>", "<polygons> holds a <ph> polygon with a hole (<h>)"),
    "technique_in_extra": (
        "<technique",
        "<polygons> holds a <technique>, an element the reader does not know",
    ),
    "triangles_count_too_high": (
        "<p>0 1 2",
        "<triangles count='2'> has a <p> of 3 indices, not 6 (6 corners of 1 each)",
    ),
    "triangles_empty_second_p": (
        "<p/>",
        "<triangles count='1'> has a <p> of 0 indices, not 3 (3 corners of 1 each)",
    ),
    "triangles_stride_2": (
        "<p>",
        "<triangles count='1'> has a <p> of 3 indices, not 6 (3 corners of 2 each)",
    ),
    "polylist_few_vcounts": (
        "<polylist",
        "<polylist count='2'> has 1 <vcount> numbers, fewer than its count",
    ),
    "polylist_vcounts_disagree": (
        "<p>",
        "<polylist count='1'> has a <p> of 4 indices, not 3 (3 corners of 1 each)",
    ),
    "tristrips_no_count": ("<tristrips", "<tristrips count=''> has no count above 0"),
    "linestrips_no_count": ("<linestrips", "<linestrips count=''> has no count above 0"),
    "linestrips_count_minus_1": ("<linestrips", "<linestrips count='-1'> has no count above 0"),
    "triangles_index_past_the_end": (
        "<p>0 1 8",
        "<triangles count='1'> has a <p> whose VERTEX index 8 names none of its 8 items",
    ),
    "normal_index_past_the_end": (
        "<p>0 0 1 1 2 8",
        "<triangles count='1'> has a <p> whose NORMAL index 8 names none of its 8 items",
    ),
    "lines_index_past_the_end": (
        "<p>0 8",
        "<lines count='1'> has a <p> whose VERTEX index 8 names none of its 8 items",
    ),
    "trifans_half_a_corner": (
        "<p>",
        "<trifans count='1'> has a <p> of 5 indices, not whole corners of 2 each",
    ),
    "polygons_count_too_high": ("<polygons", "<polygons count='2'> holds 1 <p>, not its count"),
    "polygons_count_0": ("<polygons", "<polygons count='0'> holds 1 <p>, not its count"),
    "polygons_empty_p": ("<polygons", "<polygons count='1'> holds 2 <p>s, not its count"),
    "triangles_two_p": ('<triangles count="1"', "<triangles count='1'> holds 2 <p>s, not one"),
    "triangles_no_p": ('<triangles count="1"', "<triangles count='1'> holds 0 <p>s, not one"),
    "polylist_two_p": ("<polylist", "<polylist count='1'> holds 2 <p>s, not one"),
    "polylist_p_before_vcount": (
        "<polylist",
        "<polylist count='1'> has no <vcount> before its <p>",
    ),
    "polylist_no_vcount": ("<polylist", "<polylist count='1'> has no <vcount> before its <p>"),
}


def _line(text: str, needle: str) -> str:
    """The line of the first `needle` after the cube's own <triangles>."""
    return str(text.count("\n", 0, text.index(needle, text.index("</triangles>"))) + 1)


@pytest.mark.parametrize("name", sorted(DAE_REFUSED))
def test_blocks_tesseract_refuses_or_crashes_on_are_named(name: str) -> None:
    """mesh_not_a_mesh at the element's line, saying what the reader does with the file."""
    block, does = DAE_REFUSED[name]
    text = block_dae(block)
    element, says = SAYS[name]
    [finding] = mesh_findings(text.encode(), "robots/r/meshes/x.dae")
    assert (finding.code, finding.place) == ("mesh_not_a_mesh", _line(text, element))
    assert finding.message.startswith(f"is a COLLADA file whose {says}"), finding.message
    assert finding.message.endswith(
        f"Tesseract's mesh reader {does}, and the planner's process with it"
        if does != "refuses"
        else "Tesseract's mesh reader refuses it (on a visual too), and with it the URDF"
    )


@pytest.mark.parametrize("name", sorted(DAE_READ_ALIKE))
def test_blocks_read_alike_are_no_finding(name: str) -> None:
    assert mesh_findings(block_dae(DAE_READ_ALIKE[name]).encode(), "x.dae") == []


def test_a_visual_mesh_tesseract_aborts_on_is_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A visual COLLADA mesh whose <polygons> count is off: `pipeline validate` had accepted it,
    and Tesseract's URDF parser aborts the planner's process on it."""
    text = block_dae(DAE_REFUSED["polygons_count_too_high"][0])
    assert validate(repo, VISUAL, "vis.dae", text, monkeypatch) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{ABB}/meshes/vis.dae:{_line(text, '<polygons')}: mesh_not_a_mesh: is a COLLADA file "
        "whose <polygons count='2'> holds 1 <p>, not its count: Tesseract's mesh reader aborts "
        "(SIGABRT), and "
        "the planner's process with it; export the mesh again (each block's count the number "
        "of its primitives)"
    ]


@pytest.mark.parametrize(
    ("block", "line_of", "says"),
    [
        (
            '<polygons count="1">{v}<ph><p>0 1 3 2</p></ph></polygons>',
            "<ph>",
            "holds a <ph> polygon, which the COLLADA reader here (pycollada) drops and Tesseract "
            "collides, so the spheres would not cover it; export the collision mesh again with "
            "triangles only",
        ),
        (
            "<triangles>{v}<p>0 1 2</p></triangles>",
            "<triangles>",
            "holds a <triangles count=''> with faces: Tesseract's mesh reader skips a block of no "
            "count above 0, the COLLADA reader here reads them, so the planner would collide "
            "another mesh than the spheres cover; set the <triangles>'s count to the number of "
            "its primitives, or export the collision mesh again",
        ),
    ],
    ids=["ph-without-a-hole", "triangles-without-a-count"],
)
def test_a_collision_mesh_read_otherwise_is_refused_a_visual_one_passes(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    block: str,
    line_of: str,
    says: str,
) -> None:
    text = block_dae(block)
    assert validate(repo, VISUAL, "vis.dae", text, monkeypatch) == 0
    assert validate(repo, COLLISION, "col.dae", text, monkeypatch) == 2
    line = _line(text, line_of)
    assert capsys.readouterr().err.splitlines() == [
        f"{ABB}/meshes/col.dae:{line}: mesh_unreadable: {says}"
    ]


def test_a_ph_with_a_hole_is_named_alike_by_the_steps_that_read_collision_meshes() -> None:
    """The srdf and spheres steps read a collision mesh without the urdf step's byte checks: a
    <ph> with a hole is the file Tesseract refuses there too, not a polygon pycollada drops."""
    from pipeline.findings import ContractError
    from pipeline.spheres.triangles import mesh_parts
    from pipeline.urdf import Mesh

    text = block_dae(DAE_REFUSED["ph_with_a_hole"][0]).encode()
    with pytest.raises(ContractError) as caught:
        mesh_parts(text, Mesh("x.dae", "meshes/x.dae"), "robots/r/meshes/x.dae")
    assert list(caught.value.findings) == mesh_findings(text, "robots/r/meshes/x.dae")


def test_a_p_of_millions_of_indices_is_checked_without_a_list_of_them() -> None:
    """A visual COLLADA file of 13 M triangles in 117 MB, its indices two digits each, peaked
    at 3.1 GB in the urdf step: each <p> was split into a list of its indices to count them
    (~59 bytes an index). Counted in chunks, a <p> costs about its own text's size again."""
    corners = 600_000
    indices = "0 1 3 " * (corners // 3)
    data = block_dae(
        f'<triangles count="{corners // 3}">{{v}}<p>{indices}</p></triangles>'
    ).encode()
    found, peak = peak_memory(lambda: mesh_findings(data, "x.dae"))
    assert found == []
    assert peak < 6 * len(indices), f"{peak / 1e6:.1f} MB for a {len(indices) / 1e6:.1f} MB <p>"


@pytest.mark.parametrize(
    ("block", "codes"),
    [
        ("", []),
        (DAE_READ_OTHERWISE["ph_without_a_hole"][0], ["mesh_unreadable"]),
        (DAE_READ_OTHERWISE["triangles_count_0"][0], ["mesh_unreadable"]),
        ('<triangles count="0">{v}<p/></triangles>', []),
        (DAE_LINES_READ["lines"][0], []),
        (DAE_LINES_OTHERWISE["lines_count_0"][0], ["mesh_lines_or_points"]),
        ('<polylist count="1">{v}<vcount>4</vcount><p>0 1 3 2</p></polylist>', []),
    ],
    ids=["plain", "ph", "count-0", "empty-count-0", "lines", "lines-count-0", "polylist"],
)
def test_a_collision_collada_file_is_parsed_once(
    monkeypatch: pytest.MonkeyPatch, block: str, codes: list[str]
) -> None:
    """A <ph>, a block without a count, a <polylist> or <lines> had the file parsed again by
    each check of the collision mesh (the triangle count, lines, polygons, read_otherwise: up
    to four times); once now, and the same findings."""
    import pipeline.strict_xml
    from pipeline.findings import ContractError
    from pipeline.spheres.triangles import mesh_parts
    from pipeline.urdf import Mesh

    parse, parsed = pipeline.strict_xml.parse_xml, []
    monkeypatch.setattr(
        pipeline.strict_xml, "parse_xml", lambda *a, **k: parsed.append(1) or parse(*a, **k)
    )
    try:
        mesh_parts(block_dae(block).encode(), Mesh("x.dae", "meshes/x.dae"), "x.dae")
        found = []
    except ContractError as caught:
        found = [f.code for f in caught.findings]
    assert (found, len(parsed)) == (codes, 1)


def test_a_huge_input_offset_costs_nothing_before_its_p_is_read() -> None:
    """`<input offset="100000000">` beside an empty `<p>` (no corner wrong: 0 indices is whole
    corners of any size): the largest index at each offset was a list of them all, 800 MB (8 GB
    at 1000000000, the urdf step out of memory on a 1 KB file; a review of d083b82)."""
    offset = '<input semantic="NORMAL" source="#g0-pos" offset="100000000"/>'
    data = block_dae(f'<lines count="1">{{v}}{offset}<p/></lines>').encode()
    found, peak = peak_memory(lambda: mesh_findings(data, "x.dae"))
    assert found == []
    assert peak < 50_000_000, f"{peak / 1e6:.1f} MB"
