"""The manifest: what it registers, byte order, and every rule of the spec."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.findings import ContractError
from pipeline.manifest import (
    MANIFEST_NAME,
    check_complete,
    manifest_bytes,
    read_manifest,
    registered_files,
)
from tests.conftest import REPO

ABB_BUILD = REPO / "build" / "robots" / "abb_irb2400"


@pytest.fixture
def desc(tmp_path: Path) -> Path:
    """A copy of the committed compiled description of abb_irb2400."""
    folder = tmp_path / "abb_irb2400"
    shutil.copytree(ABB_BUILD, folder)
    return folder


def write_files(folder: Path, files: list[object]) -> None:
    data = json.loads((folder / MANIFEST_NAME).read_text())
    data["files"] = files
    (folder / MANIFEST_NAME).write_text(json.dumps(data))


CASES = [
    ("empty_path", [""]),
    ("absolute_path", ["/etc/passwd"]),
    ("absolute_path", ["C:/robot.urdf"]),
    ("backslash_path", ["meshes\\link_1.stl"]),
    ("dot_segment", ["meshes/../robot.urdf"]),
    ("dot_segment", ["./robot.urdf"]),
    ("dot_segment", ["meshes//link_1.stl"]),
    ("duplicate_path", ["robot.urdf", "robot.urdf"]),
    ("manifest_lists_itself", [MANIFEST_NAME]),
    ("manifest_lists_calibration", ["machine_planning_calibration.json"]),
    ("not_a_regular_file", ["robot.srdf.missing"]),
    ("not_a_regular_file", ["meshes"]),
    ("path_not_string", [7]),
    ("invalid_path_character", ["meshes/a\x00.stl"]),
    ("invalid_path_character", ["meshes/\ud800.stl"]),
]


@pytest.mark.parametrize(("code", "files"), CASES, ids=[c[0] for c in CASES])
def test_manifest_rule(desc: Path, code: str, files: list[object]) -> None:
    write_files(desc, files)
    with pytest.raises(ContractError) as exc:
        read_manifest(desc, "d")
    assert [f.code for f in exc.value.findings] == [code]
    assert exc.value.findings[0].file == f"d/{MANIFEST_NAME}"


def test_symlink_entry_is_not_a_regular_file(desc: Path) -> None:
    os.symlink(desc / "robot.urdf", desc / "linked.urdf")
    write_files(desc, ["linked.urdf", "robot.urdf"])
    with pytest.raises(ContractError) as exc:
        read_manifest(desc, "d")
    assert [(f.code, f.place) for f in exc.value.findings] == [("not_a_regular_file", "/files/0")]


def test_not_a_regular_file_through_a_linked_folder(desc: Path, tmp_path: Path) -> None:
    """meshes/ linked to a folder outside the description: each entry in it would leave it."""
    shutil.move(desc / "meshes", tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", desc / "meshes")
    with pytest.raises(ContractError) as exc:
        read_manifest(desc, "d")
    meshes = [f for f in json.loads((desc / MANIFEST_NAME).read_text())["files"] if "/" in f]
    assert meshes and len(exc.value.findings) == len(meshes)
    first = exc.value.findings[0]
    assert first.code == "not_a_regular_file"
    assert first.message == f"{meshes[0]!r} lies in 'meshes', a symbolic link"


def test_not_a_regular_file_under_a_file(desc: Path) -> None:
    write_files(desc, ["robot.urdf/x.stl"])
    with pytest.raises(ContractError) as exc:
        read_manifest(desc, "d")
    assert [f.message for f in exc.value.findings] == [
        "'robot.urdf/x.stl' lies in 'robot.urdf', which is not a folder"
    ]


def test_unknown_field_place_is_an_escaped_json_pointer(desc: Path) -> None:
    data = json.loads((desc / MANIFEST_NAME).read_text())
    data["a/b~c"] = 1
    (desc / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(ContractError) as exc:
        read_manifest(desc, "d")
    assert [(f.code, f.place) for f in exc.value.findings] == [("unknown_field", "/a~1b~0c")]


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("schema", "rosie.robot-manifest.v2", "wrong_schema"),
        ("model_id", "other", "model_id_mismatch"),
        ("extra", 1, "unknown_field"),
        ("files", "robot.urdf", "files_not_list"),
    ],
)
def test_manifest_fields(desc: Path, field: str, value: object, code: str) -> None:
    data = json.loads((desc / MANIFEST_NAME).read_text())
    data[field] = value
    (desc / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(ContractError) as exc:
        read_manifest(desc, "d")
    assert [f.code for f in exc.value.findings] == [code]


def test_registers_named_files_and_all_meshes_in_byte_order(tmp_path: Path) -> None:
    for name in [
        "robot.urdf",
        "spheres.json",
        "notes.txt",
        "meshes/b.stl",
        "meshes/B.stl",
        "meshes/sub/a.stl",
        "meshes/é.stl",
        "meshes/z.stl",
    ]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    assert registered_files(tmp_path) == [
        "meshes/B.stl",
        "meshes/b.stl",
        "meshes/sub/a.stl",
        "meshes/z.stl",
        "meshes/é.stl",
        "robot.urdf",
        "spheres.json",
    ]


def test_unregistered_file_is_found(desc: Path) -> None:
    (desc / "meshes" / "unlisted.stl").write_text("solid x\n")
    manifest = read_manifest(desc, "d")
    assert [f.code for f in check_complete(desc, manifest, "d")] == ["unregistered_file"]


@pytest.mark.parametrize("path", ["NOTES.md", "urdf/robot.urdf", "spheres.json.orig"])
def test_provenance_registered_is_found(desc: Path, path: str) -> None:
    """A listed provenance file passed `manifest --check`: only missing files were looked for."""
    (desc / path).parent.mkdir(exist_ok=True)
    (desc / path).write_text("provenance\n")
    data = json.loads((desc / MANIFEST_NAME).read_text())
    files = sorted([*data["files"], path], key=lambda p: p.encode())
    write_files(desc, files)
    found = check_complete(desc, read_manifest(desc, "d"), "d")
    assert [(f.code, f.place) for f in found] == [
        ("provenance_registered", f"/files/{files.index(path)}")
    ]


def test_committed_manifests_are_canonical() -> None:
    for folder in sorted((REPO / "build" / "robots").iterdir()):
        files = registered_files(folder)
        assert (folder / MANIFEST_NAME).read_bytes() == manifest_bytes(folder.name, files)


def test_cli_manifest_check_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifest", "--check", str(ABB_BUILD)]) == 0
    out = capsys.readouterr().out
    count = len(registered_files(ABB_BUILD))
    assert out == f"manifest: abb_irb2400 ok, {count} files\n"


def test_cli_manifest_check_of_a_cells_description_takes_cell_json_model_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A compiled cell's description/ is not named after its model: its model id is the one
    cell.json beside it names (manifest.md), as `identity` takes it."""
    folder = REPO / "build" / "cells" / "weld_cell_a" / "description"
    assert main(["manifest", "--check", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out == f"manifest: abb_irb2400 ok, {len(registered_files(folder))} files\n"


def test_cli_manifest_check_refuses(desc: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_files(desc, ["robot.urdf", "../x"])
    assert main(["manifest", "--check", str(desc)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].endswith(
        f"{MANIFEST_NAME}:/files/1: dot_segment: '../x' has a '.', '..' or "
        "empty segment; write the plain relative path"
    )
    assert "Traceback" not in err[0]


@pytest.mark.parametrize("command", [["manifest", "--check", "."], ["identity", "."]])
def test_cli_on_the_current_folder_takes_its_name_as_model_id(
    desc: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    """`.` has no name: the model id was '' and every manifest a model_id_mismatch."""
    monkeypatch.chdir(desc)
    assert main(command) == 0
    assert "model_id_mismatch" not in capsys.readouterr().err


def test_cli_manifest_check_without_folders_outside_the_root_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It found no build/robots/* there and said nothing, exit 0, as if all were checked."""
    monkeypatch.chdir(tmp_path)
    assert main(["manifest", "--check"]) == 2
    assert ": not_repository_root: " in capsys.readouterr().err
