"""spheres.json builds: refit only changed links, restamp the rest, verify, status, settings."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.cli import main
from pipeline.findings import ContractError
from pipeline.spheres import build_spheres, status, verify
from pipeline.urdf import load_robot
from tests.conftest import REPO
from tests.test_spheres_polygons import ngon_obj

IIWA = "lbr_iiwa_14_r820"
LINKS = ("base_link", "link_1", "link_2", "link_3", "link_4", "link_5", "link_6", "link_7")
FAST = {"defaults": {"max_spheres": 4, "rounds": 2, "sample_divisions": 10, "grid_points": 4000}}


def _copy(root: Path) -> Path:
    folder = root / "robots" / IIWA
    shutil.copytree(REPO / "robots" / IIWA, folder)
    (folder / "spheres.settings.json").write_text(json.dumps(FAST))
    return folder


def _build(root: Path, previous: bytes | None) -> tuple[bytes, object]:
    folder = root / "robots" / IIWA
    return build_spheres(load_robot(folder, root), folder, root, previous)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """spheres.json of the iiwa with a small budget, fitted once for the module."""
    root = tmp_path_factory.mktemp("spheres")
    _copy(root)
    data, report = _build(root, None)
    assert report.fitted == LINKS  # type: ignore[attr-defined]
    return data


@pytest.fixture
def root(tmp_path: Path) -> Path:
    _copy(tmp_path)
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_build_is_deterministic_and_a_rebuild_fits_nothing(root: Path, fitted: bytes) -> None:
    again, report = _build(root, None)
    assert again == fitted
    same, report = _build(root, fitted)
    assert same == fitted
    assert report.fitted == () and report.current == LINKS  # type: ignore[attr-defined]


def test_changed_mesh_refits_that_link_only(root: Path, fitted: bytes) -> None:
    mesh = root / "robots" / IIWA / "meshes" / "link_3.stl"
    import trimesh

    shape = trimesh.load(mesh)
    shape.apply_scale(1.05)
    shape.export(mesh)
    folder = root / "robots" / IIWA
    assert status(load_robot(folder, root), folder, fitted)["link_3"] == "refit"
    data, report = _build(root, fitted)
    assert report.fitted == ("link_3",)  # type: ignore[attr-defined]
    assert report.restamped == tuple(n for n in LINKS if n != "link_3")  # type: ignore[attr-defined]
    old, new = json.loads(fitted)["links"], json.loads(data)["links"]
    assert old["link_3"] != new["link_3"]
    assert all(old[n]["spheres"] == new[n]["spheres"] for n in LINKS if n != "link_3")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_build_tells_each_link_it_fits_and_nothing_when_it_fits_none(
    root: Path, fitted: bytes, workers: int
) -> None:
    """doit printed nothing for the seconds per link a robot's spheres step fits."""
    import trimesh

    for name in ("link_3", "link_5"):
        mesh = root / "robots" / IIWA / "meshes" / f"{name}.stl"
        shape = trimesh.load(mesh)
        shape.apply_scale(1.05)
        shape.export(mesh)
    folder = root / "robots" / IIWA
    robot = load_robot(folder, root)
    lines: list[str] = []
    data, _ = build_spheres(robot, folder, root, fitted, workers=workers, progress=lines.append)
    # each fit's CPU seconds, so a user sees which link is slow (a new-user trial's wish)
    timed = [re.sub(r" in \d+\.\d s ", " in T s ", line) for line in lines]
    assert timed == [
        "fitting 2 links" + (" in 2 processes" if workers == 2 else ""),
        "fitted link_3 in T s (1 of 2)",
        "fitted link_5 in T s (2 of 2)",
    ]
    assert all(float(line.split(" in ")[1].split()[0]) > 0 for line in lines[1:])
    lines.clear()
    build_spheres(robot, folder, root, data, workers=workers, progress=lines.append)
    assert lines == []


@pytest.mark.parametrize("workers", [1, 2])
def test_a_build_tells_the_links_fitted_once_for_another_alike(
    root: Path, fitted: bytes, workers: int
) -> None:
    """A new-user trial: two KUKA KR3s on one bench, 15 collision links, printed 'fitting 8
    links' and 'fitted left_link_6 ... (8 of 8)', no word of the right arm's 7 links, which
    share the left's meshes and so its fit."""
    import trimesh

    folder = root / "robots" / IIWA
    mesh = folder / "meshes" / "link_3.stl"
    shape = trimesh.load(mesh)
    shape.apply_scale(1.05)
    shape.export(mesh)
    urdf = folder / "robot.urdf"
    text = urdf.read_text()
    urdf.write_text(text.replace("meshes/link_5.stl", "meshes/link_3.stl"))
    robot = load_robot(folder, root)
    lines: list[str] = []
    build_spheres(robot, folder, root, fitted, workers=workers, progress=lines.append)
    timed = [re.sub(r" in \d+\.\d s ", " in T s ", line) for line in lines]
    assert timed == [
        "fitting 1 link for 2 (a link of the same collision geometry as another is fitted once)",
        "fitted link_3 in T s (1 of 1; link_5 alike)",
    ]


@pytest.mark.parametrize(
    ("case", "old", "new"),
    [
        ("joint_limit", 'lower="-2.9668"', 'lower="-2.9"'),
        ("other_link_name", '<link name="tool0"/>', '<link name="flange"/>'),
        (
            "visual",
            '</link>\n  <link name="link_7">',
            "<visual><geometry>"
            '<box size="1 1 1"/></geometry></visual></link>\n  <link name="link_7">',
        ),
    ],
)
def test_urdf_change_outside_collision_geometry_restamps_without_fitting(
    root: Path, fitted: bytes, case: str, old: str, new: str
) -> None:
    urdf = root / "robots" / IIWA / "robot.urdf"
    _edit(urdf, old, new)
    if case == "other_link_name":
        _edit(urdf, 'child link="tool0"', 'child link="flange"')
    folder = root / "robots" / IIWA
    assert set(status(load_robot(folder, root), folder, fitted).values()) == {"restamp"}
    data, report = _build(root, fitted)
    assert report.fitted == () and report.restamped == LINKS  # type: ignore[attr-defined]
    before, after = json.loads(fitted), json.loads(data)
    assert before["links"] == after["links"]
    assert before["made_from"] != after["made_from"]


def test_changed_fit_settings_of_one_link_refit_it(root: Path, fitted: bytes) -> None:
    settings = {**FAST, "links": {"link_5": {"max_spheres": 3}}}
    (root / "robots" / IIWA / "spheres.settings.json").write_text(json.dumps(settings))
    _, report = _build(root, fitted)
    assert report.fitted == ("link_5",)  # type: ignore[attr-defined]


def _shrink(data: bytes, link: str) -> bytes:
    document = json.loads(data)
    document["links"][link]["spheres"][0]["radius"] *= 0.9
    return json.dumps(document).encode()


def test_spheres_not_covering_names_the_link_in_verify_and_the_build_refits_it(
    root: Path, fitted: bytes
) -> None:
    """verify names the link; a build given those spheres as its previous output (geometry
    digest unchanged) refits that link alone, so spheres that fail never land in build/."""
    folder = root / "robots" / IIWA
    robot = load_robot(folder, root)
    assert verify(robot, folder, fitted, samples=2000).ok
    edited = _shrink(fitted, "link_4")
    report = verify(robot, folder, edited, samples=0)
    assert [f.code for f in report.findings] == ["spheres_not_covering"]
    assert report.findings[0].place == "/links/link_4"
    assert not report.link("link_4").proven and report.link("link_4").gap > 0
    assert report.link("link_2").proven
    data, built = build_spheres(robot, folder, root, edited)
    assert built.fitted == ("link_4",) and "link_2" in built.current + built.restamped
    assert verify(robot, folder, data, samples=0).ok


def _cli(root: Path, fitted: bytes | None, *argv: str) -> int:
    if fitted is not None:
        target = root / "build" / "robots" / IIWA / "spheres.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(fitted)
    cwd = Path.cwd()
    os.chdir(root)
    try:
        return main(list(argv))
    finally:
        os.chdir(cwd)


def test_cli_status_reports_stale_provenance(
    root: Path, fitted: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    # --file: a spheres.json no stamp vouches for is taken as it is (without, all links refit)
    given = ("--file", f"build/robots/{IIWA}/spheres.json")
    assert _cli(root, fitted, "spheres", "status", IIWA, *given) == 0
    assert f"{IIWA} link_2: current" in capsys.readouterr().out
    (root / "robots" / IIWA / "meshes" / "link_2.stl").write_bytes(
        (REPO / "robots" / IIWA / "meshes" / "link_6.stl").read_bytes()
    )
    assert _cli(root, None, "spheres", "status", IIWA, *given) == 1
    out = capsys.readouterr().out
    assert f"{IIWA} link_2: refit" in out and f"{IIWA} link_1: restamp" in out


@pytest.mark.parametrize(
    ("edit", "finding"),
    [
        (lambda d: d.update(model_id="abb_irb2400"), "/model_id: model_id_mismatch"),
        (lambda d: d["links"].update(tool0=d["links"]["link_1"]), "/links/tool0: unknown_link"),
    ],
    ids=["model_id_mismatch", "unknown_link"],
)
def test_cli_status_refuses_a_named_file_that_verify_refuses(
    root: Path,
    fitted: bytes,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[dict[str, Any]], None],
    finding: str,
) -> None:
    """status --file exited 0 for another robot's file, or one with a link that has no
    collision geometry (hostile-input sweep); a link the file lacks is still 'refit'."""
    document = json.loads(fitted)
    edit(document)
    (root / "other.json").write_text(json.dumps(document))
    assert _cli(root, fitted, "spheres", "status", IIWA, "--file", "other.json") == 2
    assert capsys.readouterr().err.startswith(f"other.json:{finding}: ")
    del document["links"]["link_3"]
    document.update(model_id=IIWA)
    document["links"].pop("tool0", None)
    (root / "other.json").write_text(json.dumps(document))
    assert _cli(root, None, "spheres", "status", IIWA, "--file", "other.json") == 1
    assert f"{IIWA} link_3: refit" in capsys.readouterr().out


def test_cli_verify_fails_with_the_link_named(
    root: Path, fitted: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(root, fitted, "spheres", "verify", IIWA, "--samples", "2000") == 0
    assert f"{IIWA} link_1: 4 spheres, proven" in capsys.readouterr().out
    assert _cli(root, _shrink(fitted, "link_6"), "spheres", "verify", IIWA) == 2
    err = capsys.readouterr().err
    assert f"build/robots/{IIWA}/spheres.json:/links/link_6: spheres_not_covering" in err


def test_cli_show_writes_a_png(root: Path, fitted: bytes) -> None:
    out = root / "pictures" / "fit.png"  # a missing folder is made, as `pipeline srdf -o` does
    assert _cli(root, fitted, "spheres", "show", IIWA, "-o", str(out)) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_show_link_draws_only_the_links_named(root: Path, fitted: bytes) -> None:
    """A 500-link robot drew a 1280 x 40 000 pixel PNG: --link picks the panels."""
    from pipeline.spheres.picture import figure
    from pipeline.urdf import load_robot

    folder = root / "robots" / IIWA
    fig = figure(load_robot(folder, root), folder, fitted, "spheres.json", ["link_6", "link_2"])
    titles = [ax.get_title().split(":")[0] for ax in fig.axes]
    assert titles == ["link_2", "link_6"]  # in the links' order, whatever the order given
    out = root / "two.png"
    assert _cli(root, fitted, "spheres", "show", IIWA, "-o", str(out), "--link", "link_2") == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("name", "says", "fix"),
    [
        ("lnk_2", "--link 'lnk_2' is not in the URDF", "did you mean --link link_2?"),
        # a new-user trial: husky's top_plate_link, a link drawn without <collision>, was
        # called 'no link with collision geometry' and told 'did you mean --link base_link?',
        # as the spheres' settings file tells such a link (unknown_link: has no collision geometry)
        (
            "tool0",
            "--link 'tool0' has no collision geometry in the URDF, so no spheres",
            "name a link that has: base_link, link_1, ",
        ),
    ],
)
def test_unknown_link_for_show_names_the_closest_link(
    root: Path,
    fitted: bytes,
    capsys: pytest.CaptureFixture[str],
    name: str,
    says: str,
    fix: str,
) -> None:
    capsys.readouterr()
    out = root / "none.png"
    assert _cli(root, fitted, "spheres", "show", IIWA, "-o", str(out), "--link", name) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"robots/{IIWA}/robot.urdf: unknown_link: {says}")
    assert fix in line.split("; ", 1)[1]
    assert "did you mean" not in line or name == "lnk_2"
    assert not out.exists()


@pytest.mark.parametrize(
    ("code", "output", "says"),
    [
        ("output_not_png", "fit.jpg", "fit.jpg' does not end in .png"),
        # Path('.png').suffix is '': it was told '.png' "does not end in .png"
        ("output_not_png", ".png", ".png' names no file before its .png"),
        ("output_unwritable", "blocker/fit.png", "blocker is a file, not a folder"),
    ],
)
def test_cli_show_refuses_an_output_it_cannot_write(
    root: Path,
    fitted: bytes,
    capsys: pytest.CaptureFixture[str],
    code: str,
    output: str,
    says: str,
) -> None:
    """One finding line and exit 2, no traceback: a .jpg would hold PNG bytes; a file in the way."""
    (root / "blocker").write_text("a file where the output's folder should be")
    capsys.readouterr()
    assert _cli(root, fitted, "spheres", "show", IIWA, "-o", str(root / output)) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f": {code}: " in err[0] and says in err[0]
    assert not (root / output).exists()


@pytest.mark.parametrize(
    ("code", "settings"),
    [
        ("unexpected_field", {"defaults": {"max_sphere": 4}}),
        ("unknown_link", {"links": {"tool0": {"max_spheres": 4}}}),
        ("out_of_range", {"defaults": {"max_spheres": 0}}),
        ("out_of_range", {"links": {"link_6": {"growth_rounds": 4}}}),
        # JSON Schema's "integer" takes 8.0; the fitter's numpy calls did not (a traceback)
        ("wrong_type", {"links": {"link_6": {"max_spheres": 4.0}}}),
    ],
)
def test_bad_settings_file_is_refused(root: Path, code: str, settings: object) -> None:
    folder = root / "robots" / IIWA
    (folder / "spheres.settings.json").write_text(json.dumps(settings))
    with pytest.raises(ContractError) as caught:
        status(load_robot(folder, root), folder, None)
    assert [f.code for f in caught.value.findings] == [code]
    assert caught.value.findings[0].file == f"robots/{IIWA}/spheres.settings.json"


def test_growth_rounds_set_for_one_link_reach_its_fit_only(root: Path) -> None:
    from pipeline.spheres.provenance import read_sources

    settings = {"links": {"link_6": {"growth_rounds": 2}}}
    folder = root / "robots" / IIWA
    (folder / "spheres.settings.json").write_text(json.dumps(settings))
    params = read_sources(load_robot(folder, root), folder).params
    assert params["link_6"].growth_rounds == 2
    assert {params[n].growth_rounds for n in LINKS if n != "link_6"} == {0}


def test_bad_settings_file_findings_are_all_reported_and_by_validate_too(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A range error did not hide an unknown link; `pipeline validate` did not read the file."""
    settings = {"defaults": {"rounds": 99, "seed": 1.0}, "links": {"ghost": {}}}
    (root / "robots" / IIWA / "spheres.settings.json").write_text(json.dumps(settings))
    assert _cli(root, None, "validate", IIWA) == 2
    err = capsys.readouterr().err
    shown = f"robots/{IIWA}/spheres.settings.json"
    assert f"{shown}:/defaults/rounds: out_of_range: " in err
    assert f"{shown}:/defaults/seed: wrong_type: 1.0 is not an integer; write 1 " in err
    assert f"{shown}:/links/ghost: unknown_link: " in err
    assert len(err.splitlines()) == 3


def test_spheres_json_records_centres_radii_and_provenance(fitted: bytes) -> None:
    document = json.loads(fitted)
    assert document["schema"] == "rosie.robot-spheres.v1"
    assert set(document["links"]) == set(LINKS)
    assert set(document["made_from"]["files"]) == {
        "robot.urdf",
        "spheres.settings.json",
        *(f"meshes/{name}.stl" for name in LINKS),
    }
    entry = document["links"]["link_1"]
    assert entry["provenance"]["fitter"]["parameters"]["max_spheres"] == 4
    assert entry["provenance"]["geometry_sha256"].startswith("sha256:")
    radii = np.array([s["radius"] for s in entry["spheres"]])
    assert (radii > 0).all() and len(radii) <= 4
    assert fitted.endswith(b"\n") and json.dumps(document, indent=2, sort_keys=True) + "\n" == (
        fitted.decode()
    )


def test_freshness_check_names_the_links_to_refit(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mesh = project / "robots" / IIWA / "meshes" / "link_2.stl"
    mesh.write_bytes((REPO / "robots" / IIWA / "meshes" / "link_6.stl").read_bytes())
    assert _cli(project, None, "check") == 1
    lines = [
        line for line in capsys.readouterr().out.splitlines() if "spheres.json (spheres:" in line
    ]
    assert len(lines) == 1
    assert "links: refit link_2; restamp base_link, link_1, link_3" in lines[0]


def _drop(document: dict[str, Any]) -> None:
    del document["links"]["link_3"]


def _extra(document: dict[str, Any]) -> None:
    document["links"]["tool0"] = document["links"]["link_3"]


def _model(document: dict[str, Any]) -> None:
    document["model_id"] = "abb_irb2400"


def _radius(document: dict[str, Any]) -> None:
    document["links"]["link_1"]["spheres"][0]["radius"] = -0.1


def _far(document: dict[str, Any]) -> None:
    """Squared by the proof and the excess estimate: 1e308 overflowed numpy (a traceback)."""
    document["links"]["link_1"]["spheres"][0]["center"] = [1e308, 0, 0]


def _many(document: dict[str, Any]) -> None:
    """20 000 spheres took the proof 24 GB before it was killed: 64 is the largest budget."""
    spheres = document["links"]["link_1"]["spheres"]
    spheres.extend([spheres[0]] * (65 - len(spheres)))


@pytest.mark.parametrize(
    ("code", "edit", "place"),
    [
        ("spheres_missing_link", _drop, "/links"),
        ("wrong_length", _many, "/links/link_1/spheres"),
        ("unknown_link", _extra, "/links/tool0"),
        ("model_id_mismatch", _model, "/model_id"),
        ("out_of_range", _radius, "/links/link_1/spheres/0/radius"),
        ("out_of_range", _far, "/links/link_1/spheres/0/center/0"),
    ],
)
def test_verify_refuses_a_spheres_json_that_does_not_fit_the_robot(
    root: Path, fitted: bytes, code: str, edit: Callable[[dict[str, Any]], None], place: str
) -> None:
    document = json.loads(fitted)
    edit(document)
    folder = root / "robots" / IIWA
    with pytest.raises(ContractError) as caught:
        verify(load_robot(folder, root), folder, json.dumps(document).encode(), samples=0)
    assert [(f.code, f.place) for f in caught.value.findings] == [(code, place)]


def _stl(triangles: list[list[list[float]]]) -> bytes:
    """A binary STL of the triangles (normals zero)."""
    import struct

    body = b"".join(
        struct.pack("<12fH", 0, 0, 0, *[x for corner in t for x in corner], 0) for t in triangles
    )
    return bytes(80) + struct.pack("<I", len(triangles)) + body


@pytest.mark.parametrize(
    ("code", "name", "data"),
    [
        ("mesh_unreadable", "link_5.dae", b"<COLLADA><broken"),
        ("mesh_empty", "link_5.stl", b""),
        ("mesh_empty", "link_5.stl", _stl([[[0, 0, 0], [0.1, 0, 0], [0.2, 0, 0]]] * 3)),
        # a face of 17 corners, one 1 cm out of the others' plane
        ("polygon_not_planar", "link_5.obj", ngon_obj(17, 0.01, 0.1)),
    ],
)
def test_unreadable_collision_mesh_is_refused(
    root: Path, code: str, name: str, data: bytes
) -> None:
    folder = root / "robots" / IIWA
    (folder / "meshes" / name).write_bytes(data)
    _edit(folder / "robot.urdf", "meshes/link_5.stl", f"meshes/{name}")
    with pytest.raises(ContractError) as caught:
        build_spheres(load_robot(folder, root), folder, root, None)
    assert [(f.code, f.file) for f in caught.value.findings] == [
        (code, f"robots/{IIWA}/meshes/{name}")
    ]


@pytest.mark.parametrize(
    "triangles",
    [
        pytest.param([[[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0]]], id="one_triangle"),
        pytest.param(
            [[[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0]], [[0.1, 0, 0], [0.1, 0.1, 0], [0, 0.1, 0]]],
            id="a_flat_square",
        ),
    ],
)
def test_mesh_enclosing_no_volume_is_fitted_proven_and_has_no_excess_ratio(
    root: Path, triangles: list[list[list[float]]], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = root / "robots" / IIWA
    (folder / "meshes" / "link_5.stl").write_bytes(_stl(triangles))
    data, _ = build_spheres(load_robot(folder, root), folder, root, None)
    report = verify(load_robot(folder, root), folder, data, samples=2000)
    check = report.link("link_5")
    assert check.proven and check.excess is None and check.excess_se is None
    capsys.readouterr()
    assert _cli(root, data, "--json", "spheres", "verify", IIWA, "--samples", "2000") == 0
    rows = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert [r["excess_ratio"] for r in rows if r["link"] == "link_5"] == [None]


def _refuse(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


@pytest.mark.parametrize(("count", "text"), [(1, "toe: 1 sphere, proven"), (2, "toe: 2 spheres")])
def test_verify_line_counts_spheres_in_words(count: int, text: str) -> None:
    """A sphere collision (r2d2's head, laikago's toes) is fitted by one sphere: '1 spheres'."""
    from pipeline.spheres.checks import LinkCheck
    from pipeline.spheres.commands import _line

    assert _line(LinkCheck("toe", count, True, 0.0, 0.001, 0.0)).startswith(text)


def _grow(project: Path) -> Path:
    """A hand edit that still covers: one radius of the committed spheres.json grown by half."""
    target = project / "build" / "robots" / IIWA / "spheres.json"
    document = json.loads(target.read_bytes())
    document["links"]["link_1"]["spheres"][0]["radius"] *= 1.5
    target.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    return target


def test_hand_edited_spheres_json_is_not_reused_by_the_step(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A covering hand edit was restamped into build/ as current; a shrunk one failed doit."""
    from pipeline.spheres import task

    committed = (project / "build" / "robots" / IIWA / "spheres.json").read_bytes()
    assert task.trusted_previous(project, IIWA) == committed
    _grow(project)
    assert task.trusted_previous(project, IIWA) is None
    seen: list[bytes | None] = []

    def spy(robot: object, folder: Path, root: Path, previous: bytes | None, **_: object) -> Any:
        seen.append(previous)
        return committed, None

    monkeypatch.setattr(task, "build_spheres", spy)
    assert task.make_spheres(project, IIWA) == {f"build/robots/{IIWA}/spheres.json": committed}
    assert seen == [None]


def test_the_step_says_its_progress_on_standard_error_under_its_name(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.spheres import task

    committed = (project / "build" / "robots" / IIWA / "spheres.json").read_bytes()

    def spy(*_: object, progress: Callable[[str], None], **__: object) -> Any:
        progress("fitted link_2 (1 of 1)")
        return committed, None

    monkeypatch.setattr(task, "build_spheres", spy)
    task.make_spheres(project, IIWA)
    captured = capsys.readouterr()
    assert captured.err == f"spheres:{IIWA}: fitted link_2 (1 of 1)\n"
    assert captured.out == ""
    monkeypatch.setattr("sys.stderr", None)  # started without one: said to no one, no error
    task.make_spheres(project, IIWA)


@pytest.mark.parametrize(
    ("seal", "reused"),
    [
        pytest.param(None, False, id="older_version_unsealed_stamp"),
        pytest.param("0" * 64, False, id="seal_of_nothing"),
    ],
)
def test_a_stamp_without_its_seal_vouches_for_no_spheres_json(
    project: Path, seal: str | None, reused: bool
) -> None:
    """An unsealed stamp (the format before seals) was trusted, so deleting a stamp's seal line
    made a hand-edited spheres.json reused and sealed anew as current (hostile-input trial);
    the versions that wrote such stamps had an older fitter, which refits every link anyway."""
    from pipeline.spheres import task

    committed = (project / "build" / "robots" / IIWA / "spheres.json").read_bytes()
    stamp = project / "build" / "stamps" / "spheres" / f"{IIWA}.json"
    data = json.loads(stamp.read_bytes())
    del data["seal"]
    if seal is not None:
        data["seal"] = seal
    stamp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    assert task.trusted_previous(project, IIWA) == (committed if reused else None)
    _grow(project)
    assert task.trusted_previous(project, IIWA) is None


def test_status_of_a_hand_edited_spheres_json_says_refit(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(project, None, "spheres", "status", IIWA) == 0
    capsys.readouterr()
    _grow(project)
    assert _cli(project, None, "spheres", "status", IIWA) == 1
    captured = capsys.readouterr()
    assert f"build/robots/{IIWA}/spheres.json: not what spheres:{IIWA} wrote" in captured.err
    assert set(captured.out.splitlines()) == {f"{IIWA} {link}: refit" for link in LINKS}


def test_cli_refit_restamps_a_joint_limit_change_and_refits_one_changed_mesh(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DESIGN.md: the `pipeline` command does the sphere refit/restamp the graph does."""
    target = project / "build" / "robots" / IIWA / "spheres.json"
    committed = json.loads(target.read_bytes())
    _edit(project / "robots" / IIWA / "robot.urdf", 'lower="-2.9668"', 'lower="-2.9"')
    assert _cli(project, None, "spheres", "refit", IIWA) == 0
    captured = capsys.readouterr()
    assert set(captured.out.splitlines()) == {f"{IIWA} {link}: restamped" for link in LINKS}
    assert "run `doit`" in captured.err
    restamped = json.loads(target.read_bytes())
    assert restamped["links"] == committed["links"]
    assert restamped["made_from"] != committed["made_from"]
    (project / "robots" / IIWA / "meshes" / "link_2.stl").write_bytes(
        (REPO / "robots" / IIWA / "meshes" / "link_6.stl").read_bytes()
    )
    assert _cli(project, None, "spheres", "refit", IIWA) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{IIWA} {link}: {'refitted' if link == 'link_2' else 'restamped'}" for link in LINKS
    ]
    refitted = json.loads(target.read_bytes())["links"]
    assert refitted["link_2"] != committed["links"]["link_2"]
    assert all(refitted[n] == restamped["links"][n] for n in LINKS if n != "link_2")
    assert _cli(project, None, "spheres", "status", IIWA) == 0  # the step's own, current
    assert _cli(project, None, "spheres", "refit", IIWA) == 0
    assert capsys.readouterr().err == ""  # nothing made


@pytest.mark.parametrize("command", ["refit", "status"])
def test_cli_a_model_id_given_twice_is_one_robot(
    project: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """`refit X X` said each link `refitted`, then `current`: the second pass ran after the
    first had written the file."""
    (project / "build" / "robots" / IIWA / "spheres.json").unlink()
    assert _cli(project, None, "spheres", command, IIWA, IIWA) == (0 if command == "refit" else 1)
    done = "refitted" if command == "refit" else "refit"
    assert capsys.readouterr().out.splitlines() == [f"{IIWA} {link}: {done}" for link in LINKS]


def test_cli_refit_says_refitted_for_a_kept_link_the_proof_no_longer_accepts(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link `status` calls restamp (its geometry unchanged) whose spheres the proof refuses
    (a stricter proof since they were fitted) is fitted again by the step: `refit` said
    `restamped` for it, though its spheres changed."""
    from pipeline.stamps import read_stamp, sha256_bytes, stamp_bytes
    from pipeline.strict_json import dump_json

    target = project / "build" / "robots" / IIWA / "spheres.json"
    document = json.loads(target.read_bytes())
    for sphere in document["links"]["link_3"]["spheres"]:
        sphere["radius"] = 0.001  # what a stricter proof refuses: the surface is left bare
    data = dump_json(document)
    target.write_bytes(data)
    step = f"spheres:{IIWA}"
    stamp = read_stamp(project, step)
    assert stamp is not None
    outputs = {f"build/robots/{IIWA}/spheres.json": sha256_bytes(data)}
    (project / "build" / "stamps" / "spheres" / f"{IIWA}.json").write_bytes(
        stamp_bytes(step, stamp.inputs, outputs)
    )
    _edit(project / "robots" / IIWA / "robot.urdf", 'lower="-2.9668"', 'lower="-2.9"')
    assert _cli(project, None, "spheres", "refit", IIWA) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{IIWA} {link}: {'refitted' if link == 'link_3' else 'restamped'}" for link in LINKS
    ]
    assert json.loads(target.read_bytes())["links"]["link_3"] != document["links"]["link_3"]


@pytest.mark.parametrize("samples", ["-1", "2000000000", "many"])
def test_verify_samples_out_of_range_is_a_usage_error(
    root: Path, fitted: bytes, capsys: pytest.CaptureFixture[str], samples: str
) -> None:
    """2e9 samples asked numpy for 45 GiB (a traceback); -1 was taken as none."""
    with pytest.raises(SystemExit) as caught:
        _cli(root, fitted, "spheres", "verify", IIWA, "--samples", samples)
    assert caught.value.code == 2
    assert f"argument --samples: {samples} is not a sample count" in capsys.readouterr().err


@pytest.mark.parametrize("rows", [1, 2, 6, 13])
def test_show_title_clear_of_the_panel_titles(rows: int) -> None:
    # talos (52 collision links) draws 13 rows: the title fell onto the first row's titles
    import matplotlib.pyplot as plt

    from pipeline.spheres.picture import lay_out

    fig = plt.figure(figsize=(16, 4 * rows), dpi=80)
    panels = [fig.add_subplot(rows, 4, i + 1, projection="3d") for i in range(4 * rows)]
    for ax in panels:
        ax.set_title("a_link_name: 16 spheres\n0.2 m across", fontsize=9)
        ax.set_axis_off()
    lay_out(fig, rows, "robot: collision geometry and spheres")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    title = fig._suptitle.get_window_extent(renderer)  # type: ignore[union-attr]
    try:
        for ax in panels[:4]:
            assert not title.overlaps(ax.title.get_window_extent(renderer))
        assert title.y1 <= fig.bbox.y1
    finally:
        plt.close(fig)


def test_links_with_the_same_collision_elements_are_fitted_once(
    root: Path, fitted: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # twin: link_7's mesh and origin again (a hand's fingers); moved: the same mesh elsewhere
    twin = """  <link name="twin">
    <collision>
      <origin rpy="0 0 0" xyz="0 0 0"/>
      <geometry>
        <mesh filename="package://lbr_iiwa_14_r820/meshes/link_7.stl"/>
      </geometry>
    </collision>
  </link>
  <link name="moved">
    <collision>
      <origin rpy="0 0 0" xyz="0 0 0.01"/>
      <geometry>
        <mesh filename="package://lbr_iiwa_14_r820/meshes/link_7.stl"/>
      </geometry>
    </collision>
  </link>
  <joint name="twin_joint" type="fixed"><parent link="link_7"/><child link="twin"/></joint>
  <joint name="moved_joint" type="fixed"><parent link="link_7"/><child link="moved"/></joint>
  <link name="tool0"/>"""
    _edit(root / "robots" / IIWA / "robot.urdf", '  <link name="tool0"/>', twin)
    import pipeline.spheres.build as build

    calls: list[str] = []
    fit_one = build._fit_one

    def counted(job: Any) -> Any:
        calls.append(job[3])
        return fit_one(job)

    monkeypatch.setattr(build, "_fit_one", counted)
    data, report = _build(root, None)
    assert report.fitted == (*LINKS, "twin", "moved")  # type: ignore[attr-defined]
    assert calls == [*LINKS, "moved"]
    links = json.loads(data)["links"]
    before = json.loads(fitted)["links"]
    assert links["twin"]["spheres"] == links["link_7"]["spheres"] == before["link_7"]["spheres"]
    assert links["moved"]["spheres"] != links["link_7"]["spheres"]
    assert all(links[name] == before[name] for name in LINKS)


def test_no_collision_geometry_is_a_finding_for_show_and_a_line_for_verify_and_status(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A robot with only visuals (the rtb-data Puma 560): show named it, not a ZeroDivisionError."""
    import re

    urdf = root / "robots" / IIWA / "robot.urdf"
    urdf.write_text(re.sub(r"<collision>.*?</collision>", "", urdf.read_text(), flags=re.S))
    data, _ = _build(root, None)
    assert json.loads(data)["links"] == {}
    png = root / "fit.png"
    assert _cli(root, data, "spheres", "show", IIWA, "-o", str(png)) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"robots/{IIWA}/robot.urdf: no_collision_geometry: no link has a <collision> element: "
        "there is nothing to draw; add <collision> geometry to the links the planner must keep "
        "clear"
    ]
    assert not png.exists()
    for command in ("verify", "status"):
        assert _cli(root, data, "spheres", command, IIWA) == 0
        assert capsys.readouterr().out == f"{IIWA}: no link has collision geometry (no spheres)\n"


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("status", IIWA), id="file_missing-status"),
        pytest.param(("verify", IIWA, "--samples", "0"), id="file_missing-verify"),
        pytest.param(("show", IIWA, "-o", "out.png"), id="file_missing-show"),
    ],
)
def test_file_missing_a_spheres_file_named_by_file_that_does_not_exist_is_refused(
    root: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    # a typo in --file is bad input (exit 2), not a file taken as absent: status said every
    # link "refit" and exited 1, as though the file were stale
    assert _cli(root, None, "spheres", *argv, "--file", "typo.json") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "typo.json: file_missing: file does not exist; name an existing spheres.json, or leave "
        f"out --file to use build/robots/{IIWA}/spheres.json"
    ]
    assert not (root / "out.png").exists()


@pytest.mark.parametrize(
    ("name", "message", "hint"),
    [
        # a name one slip from a link's (wx250s's are `wx250s/<name>`: named without it)
        (
            "link6",
            "link 'link6' is not in the URDF",
            "did you mean 'link_6'? use one of: base_link, link_1, link_2, link_3, link_4, link_5, "
            "link_6",
        ),
        (
            "tool0",
            "link 'tool0' has no collision geometry in the URDF",
            "use one of: base_link, link_1, link_2, link_3, link_4, link_5, link_6",
        ),
    ],
    ids=["not-a-link", "no-geometry"],
)
def test_unknown_link_in_settings_says_whether_the_link_exists(
    name: str, message: str, hint: str
) -> None:
    """A settings key naming no link was said to have no collision geometry, with every link
    listed and none suggested, as `spheres show --link` suggests the closest."""
    from pipeline.spheres.provenance import check_settings

    robot = load_robot(REPO / "robots/abb_irb2400", REPO)
    [finding] = check_settings({"links": {name: {"max_spheres": 32}}}, robot, "s.json")
    assert (finding.code, finding.place) == ("unknown_link", f"/links/{name}")
    assert (finding.message, finding.hint) == (message, hint)
