"""Compiling one description directory: validated copies, the manifest, the identity index."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.description import (
    INDEX_PATH,
    build_dir,
    check_robot_sources,
    make_config_copies,
    make_index,
    make_manifest,
    make_urdf_copies,
    read_urdf_sources,
    source_dir,
)
from pipeline.findings import ContractError, Severity, render
from pipeline.strict_io import SOURCE_LIMIT
from tests.conftest import REPO, ROBOTS, run_doit, tree_bytes
from tests.meshfiles import LONE_POINT

FLAT_STL = b"""solid flat
facet normal 0 0 0
outer loop
vertex 0 0 0
vertex 1 0 0
vertex 2 0 0
endloop
endfacet
endsolid flat
"""


def sources(root: Path, model_id: str, names: list[str]) -> dict[str, bytes]:
    """The source files `names` of a robot, keyed by their paths in its build folder."""
    src = root / source_dir(model_id)
    return {f"{build_dir(model_id)}/{name}": (src / name).read_bytes() for name in names}


@pytest.mark.parametrize("model_id", ROBOTS)
def test_urdf_copies_are_the_urdf_and_every_mesh_it_names_byte_for_byte(model_id: str) -> None:
    copies = make_urdf_copies(REPO, model_id)
    meshes = sorted(p.name for p in (REPO / source_dir(model_id) / "meshes").iterdir())
    assert copies == sources(REPO, model_id, ["robot.urdf", *(f"meshes/{m}" for m in meshes)])
    # what the committed build holds
    for path, data in copies.items():
        assert (REPO / path).read_bytes() == data, path


def test_provenance_files_beside_the_sources_are_not_copied() -> None:
    copies = make_urdf_copies(REPO, "abb_irb2400")
    assert (REPO / "robots/abb_irb2400/LICENSE").is_file()
    assert not any(path.endswith(("LICENSE", "NOTICE", "srdf.py")) for path in copies)


def test_a_mesh_the_urdf_does_not_name_is_not_copied(repo: Path) -> None:
    (repo / "robots/abb_irb2400/meshes/spare.stl").write_bytes(
        (repo / "robots/abb_irb2400/meshes/link_1.stl").read_bytes()
    )
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert "build/robots/abb_irb2400/meshes/spare.stl" not in copies
    assert "build/robots/abb_irb2400/meshes/link_1.stl" in copies


@pytest.mark.parametrize(
    ("twin", "companion"),
    [("meshes/LINK_1.stl", False), ("meshes/Link_1.mtl", True)],
    ids=["two-meshes", "a-mesh-and-a-material-library"],
)
def test_case_collision_copies_that_differ_only_in_case_are_refused(
    repo: Path, twin: str, companion: bool
) -> None:
    """macOS and Windows check out meshes/link_1.stl and meshes/LINK_1.stl as one file, so
    build/ (and a bundle unpacked there) would lose one of two files the manifest registers."""
    src = repo / "robots/abb_irb2400"
    urdf = src / "robot.urdf"
    if companion:  # a visual OBJ whose material library differs from it only in case
        (src / "meshes/link_1.obj").write_bytes(
            b"mtllib Link_1.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
        )
        (src / twin).write_bytes(b"newmtl skin\n")
        (src / "meshes/link_1.mtl").write_bytes(b"newmtl skin\n")
        old, new = "meshes/link_1.dae", "meshes/link_1.obj"
        urdf.write_text(urdf.read_text().replace(old, new, 1))
        (src / "meshes/link_2.obj").write_bytes(
            b"mtllib link_1.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
        )
        old, new = "meshes/link_2.dae", "meshes/link_2.obj"
    else:
        shutil.copy(src / "meshes/link_2_whole.stl", src / twin)
        old, new = "meshes/link_1.dae", twin
    urdf.write_text(urdf.read_text().replace(old, new, 1))
    lines = urdf.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "meshes/link_1.stl" in text)
    with pytest.raises(ContractError) as exc:
        make_urdf_copies(repo, "abb_irb2400")
    [finding] = exc.value.findings
    assert finding.code == "case_collision"
    assert "meshes/link_1" in finding.message and "differ only in case" in finding.message
    if companion:  # named by no URDF line: the file itself
        assert (finding.file, finding.place) == ("robots/abb_irb2400/meshes/link_1.mtl", "")
    else:  # the <mesh> that names the second of the two, in the URDF's order
        assert (finding.file, finding.place) == ("robots/abb_irb2400/robot.urdf", str(line))


def test_case_collision_names_that_differ_only_in_unicode_normalisation_are_refused(
    repo: Path,
) -> None:
    """macOS file systems also take an é written as one code point or as e + U+0301 as one."""
    src = repo / "robots/abb_irb2400"
    composed, decomposed = "meshes/caf\u00e9.stl", "meshes/cafe\u0301.stl"
    for name in (composed, decomposed):
        shutil.copy(src / "meshes/link_1.stl", src / name)
    urdf = src / "robot.urdf"
    text = urdf.read_text().replace("meshes/link_1.dae", composed, 1)
    urdf.write_text(text.replace("meshes/link_2.dae", decomposed, 1))
    with pytest.raises(ContractError) as exc:
        make_urdf_copies(repo, "abb_irb2400")
    assert [f.code for f in exc.value.findings] == ["case_collision"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("meshes/link:1.stl", "holds ':'"),
        ("meshes/link_1?.stl", "holds '?'"),
        ("meshes/link_1.", "ends in a dot or a space"),
        ("meshes/nul.stl", "the name of a Windows device"),
        ("meshes/Lpt3.v2.stl", "the name of a Windows device"),
        ("meshes/link_1.stl", None),  # a plain name
        ("meshes/console.stl", None),  # a device's name only as a whole stem
        ("meshes/link%201.stl", "holds '%', which a URI reader decodes"),
        ("meshes/link#1.stl", "holds '#', which a URI reader decodes"),
        ("meshes/link 1.stl", "holds ' ', which a URI reader decodes"),
    ],
    ids=[
        "colon",
        "question-mark",
        "trailing-dot",
        "device-nul",
        "device-with-two-suffixes",
        "plain",
        "con-prefix",
        "uri-percent",
        "uri-fragment",
        "uri-space",
    ],
)
def test_unportable_file_name_is_a_warning_at_its_mesh(
    repo: Path, name: str, why: str | None
) -> None:
    """A copy Windows cannot hold (pybullet_data ships such names) makes a clone of build/ fail
    there, and one whose URI ROS's resource_retriever (curl) decodes or cuts (`%20`, `#`) loads
    another file there than in Tesseract (none warned of before): warned of at the <mesh> naming
    it, and the copy is still made, byte for byte."""
    src = repo / "robots/abb_irb2400"
    (src / name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "meshes/link_2_whole.stl", src / name)
    urdf = src / "robot.urdf"
    urdf.write_text(urdf.read_text().replace("meshes/link_1.dae", name, 1))
    line = next(n for n, text in enumerate(urdf.read_text().splitlines(), 1) if name in text)
    sources = read_urdf_sources(repo, "abb_irb2400")
    found = [f for f in sources.warnings if f.code == "unportable_file_name"]
    assert sources.copies[f"build/robots/abb_irb2400/{name}"] == (src / name).read_bytes()
    if why is None:
        assert found == []
        return
    [finding] = found
    assert finding.severity == Severity.WARNING
    assert (finding.file, finding.place) == ("robots/abb_irb2400/robot.urdf", str(line))
    assert why in finding.message
    assert "URI reader" in why or "Windows" in finding.message
    assert "rename the file" in finding.hint


ABB = "abb_irb2400"
J1_LIMIT = '<limit effort="0" lower="-3.1416" upper="3.1416" velocity="2.618"/>'
# (case, URDF text replaced, by what, the URDF's finding, whether its own rules pass)
URDF_BREAKS = [
    ("missing_joint_limit", J1_LIMIT, "", ("missing_joint_limit", "robot.urdf"), False),
    ("invalid_xml", "</robot>", "", ("invalid_xml", "robot.urdf"), False),
    ("mesh_missing", "meshes/link_1.stl", "meshes/gone.stl", ("mesh_missing", "robot.urdf"), True),
]
SHIPPED_DEFINITION = (REPO / source_dir(ABB) / "rtcore_definition.json").read_bytes()
# (file, bytes, its findings without a model, those that need the URDF's model)
JSON_BREAKS: list[tuple[str, bytes, tuple[str, ...], tuple[str, ...]]] = [
    ("config.json", b'{"a": 1, "a": 2}', ("duplicate_key",), ()),
    (
        "rtcore_definition.json",
        SHIPPED_DEFINITION.replace(b'"model_id": "abb_irb2400"', b'"model_id": "irb"', 1).replace(
            b'"joint_6"', b'"joint_9"', 1
        ),
        ("model_id_mismatch",),
        ("unknown_joint", "joint_not_mapped"),
    ),
    (
        "spheres.settings.json",
        b'{"defaults": {"seed": 1.0}, "links": {"ghost": {}}}',
        ("wrong_type",),
        ("unknown_link",),
    ),
]


def _break(root: Path, old: str, new: str, name: str, data: bytes) -> None:
    urdf = root / source_dir(ABB) / "robot.urdf"
    text = urdf.read_text()
    assert old in text
    urdf.write_text(text.replace(old, new, 1))
    (root / source_dir(ABB) / name).write_bytes(data)


@pytest.mark.parametrize(
    ("name", "data", "alone", "joined"), JSON_BREAKS, ids=[b[0] for b in JSON_BREAKS]
)
@pytest.mark.parametrize(
    ("old", "new", "urdf", "model"), [b[1:] for b in URDF_BREAKS], ids=[b[0] for b in URDF_BREAKS]
)
def test_a_refused_urdf_hides_no_json_source_finding(
    repo: Path,
    old: str,
    new: str,
    urdf: tuple[str, str],
    model: bool,
    name: str,
    data: bytes,
    alone: tuple[str, ...],
    joined: tuple[str, ...],
) -> None:
    """The urdf step (the build runs config and spheres after it) and `validate` report the
    broken URDF and the broken JSON source at once; the JSON source's rules that name the
    URDF's joints and links run only when the URDF's own rules passed."""
    _break(repo, old, new, name, data)
    codes = alone + joined if model else alone
    expected = [(urdf[0], f"{source_dir(ABB)}/{urdf[1]}")]
    expected += [(code, f"{source_dir(ABB)}/{name}") for code in codes]
    for make in (make_urdf_copies, check_robot_sources):
        with pytest.raises(ContractError) as exc:
            make(repo, ABB)
        found = [(f.code, f.file) for f in exc.value.findings]
        assert sorted(found) == sorted(expected), make


def test_check_robot_sources_with_a_valid_urdf_reports_every_json_source(repo: Path) -> None:
    for name, data, _, _ in JSON_BREAKS:
        (repo / source_dir(ABB) / name).write_bytes(data)
    assert make_urdf_copies(repo, ABB)  # the urdf step leaves them to the config, spheres steps
    with pytest.raises(ContractError) as exc:
        check_robot_sources(repo, ABB)
    found = [(f.code, f.file.rsplit("/", 1)[1]) for f in exc.value.findings]
    assert found == [
        ("duplicate_key", "config.json"),
        ("joint_not_mapped", "rtcore_definition.json"),  # in the file's order
        ("unknown_joint", "rtcore_definition.json"),
        ("model_id_mismatch", "rtcore_definition.json"),
        ("wrong_type", "spheres.settings.json"),
        ("unknown_link", "spheres.settings.json"),
    ]


def test_doit_reports_a_broken_urdf_and_every_broken_json_source_at_once(project: Path) -> None:
    before = tree_bytes(project / "build")
    _break(project, J1_LIMIT, "", *JSON_BREAKS[0][:2])
    for name, data, _, _ in JSON_BREAKS[1:]:
        (project / source_dir(ABB) / name).write_bytes(data)
    result = run_doit(project)
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    codes = [
        line.split(": ")[1] for line in result.stdout.splitlines() if line.startswith("robots/")
    ]
    assert codes == ["missing_joint_limit", "duplicate_key", "model_id_mismatch", "wrong_type"]
    assert tree_bytes(project / "build") == before


def test_read_urdf_sources_gives_the_model_with_the_copies() -> None:
    sources = read_urdf_sources(REPO, "lbr_iiwa_14_r820")
    assert sources.robot.name == "lbr_iiwa_14_r820"
    assert sources.copies == make_urdf_copies(REPO, "lbr_iiwa_14_r820")


@pytest.mark.parametrize(
    ("damage", "found"),
    [
        (None, ("mesh_missing", "robots/abb_irb2400/robot.urdf")),
        (b"not a mesh", ("mesh_not_a_mesh", "robots/abb_irb2400/meshes/link_3.stl")),
        # a valid STL whose only triangle has no area: refused as the spheres step reads it
        (FLAT_STL, ("mesh_empty", "robots/abb_irb2400/meshes/link_3.stl")),
    ],
    ids=["mesh_missing", "mesh_not_a_mesh", "mesh_empty"],
)
def test_a_bad_collision_mesh_is_refused_before_anything_is_copied(
    repo: Path, damage: bytes | None, found: tuple[str, str]
) -> None:
    mesh = repo / "robots/abb_irb2400/meshes/link_3.stl"
    if damage is None:
        mesh.unlink()
    else:
        mesh.write_bytes(damage)
    with pytest.raises(ContractError) as exc:
        make_urdf_copies(repo, "abb_irb2400")
    assert [(f.code, f.file) for f in exc.value.findings] == [found]


@pytest.mark.parametrize("name", sorted(LONE_POINT))
def test_validate_refuses_a_collision_part_of_one_point_with_the_builds_line(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A collision mesh part of one point (a lone `p`, a tetrahedron 1 nm across as an object
    of its own) crashes Tesseract's contact manager. Only the srdf step's contact check refused
    it: `pipeline validate` said ok and `doit` stopped. The urdf step refuses it, for both."""
    text, where = LONE_POINT[name]
    _break(repo, "meshes/link_3.stl", f"meshes/{name}", f"meshes/{name}", text.encode())
    monkeypatch.chdir(repo)
    assert main(["validate", ABB]) == 2
    out, err = capsys.readouterr()
    with pytest.raises(ContractError) as exc:
        make_urdf_copies(repo, ABB)  # the build's urdf step
    assert (out, err) == ("", render(exc.value.findings) + "\n")
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("mesh_not_a_mesh", f"robots/{ABB}/meshes/{name}")
    if finding.place:  # an OBJ's line
        assert text.splitlines()[int(finding.place) - 1] == where
    else:  # the point, or the PLY's face
        assert where in finding.message


def _name_not_utf8(folder: Path, name: bytes) -> None:
    with open(bytes(folder) + b"/" + name, "wb") as file:
        file.write(b"")


def _helper_linked(folder: Path) -> None:
    (folder.parent.parent / "elsewhere").mkdir()
    (folder / "abbdata").symlink_to(folder.parent.parent / "elsewhere")


def _srdf_linked(folder: Path) -> None:
    shared = folder.parent.parent / "shared"
    shared.mkdir()
    (folder / "srdf.py").rename(shared / "srdf.py")
    (folder / "srdf.py").symlink_to(shared / "srdf.py")


def _srdf_too_large(folder: Path) -> None:
    with (folder / "srdf.py").open("r+b") as file:
        file.truncate(SOURCE_LIMIT + 1)


def _srdf_folder(folder: Path) -> None:
    (folder / "srdf.py").unlink()
    (folder / "srdf.py").mkdir()


_UTF8_HINT = "rename the file to a UTF-8 name, or move it out of the sources"
# (case, what is done to robots/abb_irb2400, the lines `pipeline validate` prints, as `doit`'s):
# what the build refuses in the robot's folder whatever srdf.py's gen_srdf() returns
FOLDER_REFUSALS = [
    (
        "mesh_name_not_utf8",  # a spare file in meshes/: an input of the urdf step
        lambda folder: _name_not_utf8(folder / "meshes", b"spare\xff.stl"),
        [
            f"robots/{ABB}/meshes/spare\\udcff.stl: invalid_path_character: the file name is not "
            f"UTF-8 text, so no stamp can record it; {_UTF8_HINT}"
        ],
    ),
    (
        "module_name_not_utf8",  # a module beside srdf.py: an input of the srdf step
        lambda folder: _name_not_utf8(folder, b"help\xff.py"),
        [
            f"robots/{ABB}/help\\udcff.py: invalid_path_character: the file name is not UTF-8 "
            f"text, so no stamp can record it; {_UTF8_HINT}"
        ],
    ),
    (
        "helper_folder_linked",
        _helper_linked,
        [
            f"robots/{ABB}/abbdata: symlink_refused: the helper folder is a symbolic link; "
            "replace the link with a real folder holding the modules it points to (copy them "
            f"into robots/{ABB}/abbdata/): the build reads nothing through a linked folder, so "
            "a change behind it would leave robot.srdf as it was"
        ],
    ),
    # srdf.py as the srdf step reads it before running it (validate runs none)
    (
        "srdf_linked",  # one generator shared by robots
        _srdf_linked,
        [
            f"robots/{ABB}/srdf.py: symlink_refused: is a symbolic link; replace the link with "
            "the regular file it points to"
        ],
    ),
    (
        "srdf_too_large",
        _srdf_too_large,
        [
            f"robots/{ABB}/srdf.py: file_too_large: is {SOURCE_LIMIT + 1} bytes, over the limit "
            f"of {SOURCE_LIMIT} bytes; keep data out of the generator source: compute it, or "
            "read it from robot.urdf"
        ],
    ),
    (
        "srdf_a_folder",
        _srdf_folder,
        [
            f"robots/{ABB}/srdf.py: not_a_regular_file: is not a regular file; replace it with "
            "a regular file"
        ],
    ),
]


@pytest.mark.parametrize(
    ("make", "lines"), [c[1:] for c in FOLDER_REFUSALS], ids=[c[0] for c in FOLDER_REFUSALS]
)
def test_validate_refuses_what_the_build_refuses_in_the_robots_folder(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], None],
    lines: list[str],
) -> None:
    """`pipeline validate` said ok and `doit` stopped: a stamp cannot record a file name that
    is not UTF-8 (stamps.unrecordable_names), the srdf step refuses a linked folder beside
    srdf.py, whatever srdf.py holds (strict_io.linked_helper_folders), and srdf.py itself when
    it is no regular file within SOURCE_LIMIT (validate runs no generator; without srdf.py,
    not written yet, it says ok)."""
    make(repo / source_dir(ABB))
    monkeypatch.chdir(repo)
    assert main(["validate", ABB]) == 2
    assert capsys.readouterr() == ("", "\n".join(lines) + "\n")


def test_a_bad_collision_mesh_two_links_name_is_one_finding_mesh_empty(repo: Path) -> None:
    """pybullet's Panda names one finger mesh for both fingers: a flat one was printed twice."""
    (repo / "robots/abb_irb2400/meshes/link_3.stl").write_bytes(FLAT_STL)
    urdf = repo / "robots/abb_irb2400/robot.urdf"
    link_4 = 'filename="package://abb_irb2400/meshes/link_4.stl"'
    text = urdf.read_text()
    urdf.write_text(text.replace(link_4, link_4.replace("link_4", "link_3")))
    with pytest.raises(ContractError) as exc:
        make_urdf_copies(repo, "abb_irb2400")
    assert [(f.code, f.file) for f in exc.value.findings] == [
        ("mesh_empty", "robots/abb_irb2400/meshes/link_3.stl")
    ]


@pytest.mark.parametrize("model_id", ROBOTS)
def test_config_copies_are_both_json_files_byte_for_byte(model_id: str) -> None:
    names = ["config.json", "rtcore_definition.json"]
    assert make_config_copies(REPO, model_id) == sources(REPO, model_id, names)


@pytest.mark.parametrize(
    ("removed", "copied"),
    [
        (["config.json"], ["rtcore_definition.json"]),
        (["rtcore_definition.json"], ["config.json"]),
        (["config.json", "rtcore_definition.json"], []),
    ],
)
def test_config_copies_are_only_of_the_files_present(
    repo: Path, removed: list[str], copied: list[str]
) -> None:
    for name in removed:
        (repo / "robots/lbr_iiwa_14_r820" / name).unlink()
    assert make_config_copies(repo, "lbr_iiwa_14_r820") == sources(repo, "lbr_iiwa_14_r820", copied)


def test_config_copies_report_both_files_findings_and_copy_neither(repo: Path) -> None:
    """A bad config.json does not hide a bad rtcore_definition.json: all findings, no copy."""
    folder = repo / "robots/abb_irb2400"
    for name in ("config.json", "rtcore_definition.json"):
        (folder / name).write_bytes(b'{"a": 1, "a": 2}')
    with pytest.raises(ContractError) as exc:
        make_config_copies(repo, "abb_irb2400")
    files = {(f.code, f.file) for f in exc.value.findings}
    assert files == {
        ("duplicate_key", "robots/abb_irb2400/config.json"),
        ("duplicate_key", "robots/abb_irb2400/rtcore_definition.json"),
    }


@pytest.mark.parametrize("model_id", ROBOTS)
def test_manifest_registers_what_the_robots_steps_recorded(model_id: str) -> None:
    steps = [f"{stage}:{model_id}" for stage in ("urdf", "config", "srdf", "spheres")]
    made = make_manifest(REPO, model_id, steps)
    path = f"{build_dir(model_id)}/robot_description_manifest.json"
    assert made == {path: (REPO / path).read_bytes()}


def test_manifest_of_steps_never_run_registers_nothing(tmp_path: Path) -> None:
    made = make_manifest(tmp_path, "abb_irb2400", ["urdf:abb_irb2400", "srdf:abb_irb2400"])
    [(path, data)] = made.items()
    assert path == "build/robots/abb_irb2400/robot_description_manifest.json"
    manifest = json.loads(data)
    assert manifest["model_id"] == "abb_irb2400"
    assert not manifest["files"]


def test_index_records_each_descriptions_identity_and_file_count() -> None:
    made = make_index(REPO, list(reversed(ROBOTS)))
    assert made == {INDEX_PATH: (REPO / INDEX_PATH).read_bytes()}
    index = json.loads(made[INDEX_PATH])
    assert index["schema"] == "rosie.build-index.v1"
    assert list(index["robots"]) == sorted(ROBOTS)


def test_index_follows_a_description_that_changed(tmp_path: Path) -> None:
    for model_id in ROBOTS:
        shutil.copytree(REPO / build_dir(model_id), tmp_path / build_dir(model_id))
    before = json.loads(make_index(tmp_path, ROBOTS)[INDEX_PATH])["robots"]
    srdf = tmp_path / build_dir("abb_irb2400") / "robot.srdf"
    srdf.write_bytes(srdf.read_bytes().replace(b"<robot", b"<robot ", 1))
    after = json.loads(make_index(tmp_path, ROBOTS)[INDEX_PATH])["robots"]
    assert after["abb_irb2400"]["identity"] != before["abb_irb2400"]["identity"]
    assert after["lbr_iiwa_14_r820"] == before["lbr_iiwa_14_r820"]


def test_lfs_pointer_meshes_are_each_named_as_such(repo: Path) -> None:
    """Meshes a checkout without git-lfs left as pointers: one `lfs_pointer` line each."""
    meshes = repo / "robots/abb_irb2400/meshes"
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 9\n"
    for name in ("link_1.dae", "link_2_whole.stl"):
        (meshes / name).write_bytes(pointer)
    with pytest.raises(ContractError) as exc:
        read_urdf_sources(repo, "abb_irb2400")
    assert [(f.code, f.file) for f in exc.value.findings] == [
        ("lfs_pointer", "robots/abb_irb2400/meshes/link_1.dae"),
        ("lfs_pointer", "robots/abb_irb2400/meshes/link_2_whole.stl"),
    ]
