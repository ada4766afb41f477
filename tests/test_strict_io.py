"""Reading untrusted files: regular files only, within a size limit."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.findings import ContractError
from pipeline.strict_io import (
    linked_helper_folders,
    read_bytes,
    read_fd,
    read_regular,
    require_source,
)
from tests.conftest import refuse_under


def test_read_bytes_limits(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 101)
    with pytest.raises(ContractError) as exc:
        read_bytes(big, "big.json", 100)
    assert exc.value.findings[0].code == "file_too_large"
    link = tmp_path / "link.json"
    link.symlink_to(big)
    with pytest.raises(ContractError) as exc:
        read_bytes(link, "link.json", 1000)
    assert exc.value.findings[0].code == "symlink_refused"
    with pytest.raises(ContractError) as exc:
        read_bytes(tmp_path / "nope", "nope", 1000)
    assert exc.value.findings[0].code == "file_missing"


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        # a cell's calibration or cell.json over the JSON limit was told to decimate a mesh
        ("calibration.json", "a JSON file this large is no configuration, calibration or program"),
        ("robot.urdf", "an XML file this large is no robot description"),
        ("meshes/link_1.STL", "decimate the mesh"),
        ("robots/arm/srdf.py", "keep data out of the generator source"),
        ("dist/cell.tar.gz", "check that it is the right file"),
    ],
)
def test_file_too_large_hint_fits_the_kind_of_file(tmp_path: Path, name: str, hint: str) -> None:
    big = tmp_path / "big"
    big.write_bytes(b" " * 101)
    with pytest.raises(ContractError) as exc:
        read_bytes(big, name, 100)
    [finding] = exc.value.findings
    assert finding.code == "file_too_large"
    assert finding.hint.startswith(hint), finding.hint


@pytest.mark.parametrize(
    ("files", "hint"),
    [
        (["my_arm.urdf"], "rename my_arm.urdf to robot.urdf: each folder in robots/ holds its"),
        (["a.URDF", "b.urdf"], "rename a.URDF or b.urdf to robot.urdf"),
        (["README.md"], "add robot.urdf, or move the folder out of robots/"),
        (None, "create it or correct the path that names it"),
    ],
    ids=["file_missing-misnamed", "file_missing-two-candidates", "file_missing-none", "no-folder"],
)
def test_file_missing_a_source_folder_without_its_defining_file(
    tmp_path: Path, files: list[str] | None, hint: str
) -> None:
    folder = tmp_path / "robots" / "my_arm"
    for name in files or []:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("x")
    with pytest.raises(ContractError) as exc:
        require_source(folder, "robot.urdf", "robots/my_arm/robot.urdf")
    [finding] = exc.value.findings
    assert (finding.code, finding.file, finding.message) == (
        "file_missing",
        "robots/my_arm/robot.urdf",
        "file does not exist",
    )
    assert finding.hint.startswith(hint)


def test_file_missing_a_cell_folder_offers_only_machine_files_to_rename(tmp_path: Path) -> None:
    folder = tmp_path / "cells" / "my_cell"
    folder.mkdir(parents=True)
    (folder / "calibration.json").write_text("{}")
    with pytest.raises(ContractError) as exc:
        require_source(folder, "machine.json", "cells/my_cell/machine.json", like="*machine*.json")
    assert exc.value.findings[0].hint.startswith("add machine.json, or move the folder out of")
    (folder / "Machine_Config.JSON").write_text("{}")
    with pytest.raises(ContractError) as exc:
        require_source(folder, "machine.json", "cells/my_cell/machine.json", like="*machine*.json")
    assert exc.value.findings[0].hint.startswith("rename Machine_Config.JSON to machine.json")


def test_require_source_accepts_a_folder_holding_the_file(tmp_path: Path) -> None:
    (tmp_path / "machine.json").write_text("{}")
    require_source(tmp_path, "machine.json", "cells/x/machine.json")


@pytest.mark.parametrize(
    ("make", "limit", "expected"),
    [
        (lambda p: p.write_bytes(b"abc"), 3, b"abc"),
        (lambda p: p.write_bytes(b""), 0, b""),
        (lambda p: p.write_bytes(b"abcd"), 3, None),  # over the limit
        (lambda p: None, 3, None),  # missing
        (lambda p: p.mkdir(), 3, None),
        (lambda p: os.mkfifo(p), 3, None),  # refused at once, not waited on
    ],
    ids=["file", "empty", "over-limit", "missing", "folder", "fifo"],
)
def test_read_regular_reads_only_regular_files_within_the_limit(
    tmp_path: Path, make: Callable[[Path], object], limit: int, expected: bytes | None
) -> None:
    path = tmp_path / "x"
    make(path)
    found = read_regular(path, limit)
    assert (None if found is None else found[0]) == expected
    if found is not None:
        assert found[1].st_size == len(found[0])


@pytest.mark.parametrize(
    ("data", "size", "limit", "expected"),
    [
        (b"abc", 3, 3, b"abc"),  # as its stat said, at the limit
        (b"ab", 3, 3, b"ab"),  # shrank since its stat: what is there
        (b"abc", 3, 2, None),  # a size past the limit, passed anyway: still refused
        (b"", 0, 0, b""),
    ],
    ids=["as stat", "shrank", "past the limit", "empty"],
)
def test_read_fd_of_a_file_that_did_not_grow_keeps_the_limit(
    tmp_path: Path, data: bytes, size: int, limit: int, expected: bytes | None
) -> None:
    path = tmp_path / "x"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_fd(fd, size, limit) == expected
    finally:
        os.close(fd)


@pytest.mark.parametrize(("limit", "expected"), [(1 << 30, b"abc" + b"d" * 5_000_000), (4, None)])
def test_read_fd_reads_what_a_file_grew_by_since_its_stat(
    tmp_path: Path, limit: int, expected: bytes | None
) -> None:
    """A file written to while it is read: all of it, or None once past the limit."""
    path = tmp_path / "x"
    path.write_bytes(b"abc")
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        with open(path, "ab") as grow:
            grow.write(b"d" * 5_000_000)
        assert read_fd(fd, size, limit) == expected
    finally:
        os.close(fd)


def test_file_unreadable_a_source_folder_this_user_cannot_search_is_not_file_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """robot.urdf is there, in a folder of mode 600: once "file does not exist; rename ..."."""
    folder = tmp_path / "robots" / "my_arm"
    folder.mkdir(parents=True)
    (folder / "robot.urdf").write_text("<robot/>")
    refuse_under(monkeypatch, "lstat", folder)
    with pytest.raises(ContractError) as exc:
        require_source(folder, "robot.urdf", "robots/my_arm/robot.urdf")
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("file_unreadable", "robots/my_arm")
    assert "permission on robots/my_arm/" in finding.hint


def _helper_entry(robot: Path, make: str) -> None:
    """Put one kind of entry at robot/abbdata (a module file at robot/abbdata.py)."""
    shared = robot.parent / "shared"
    (shared / "pkg").mkdir(parents=True)
    (shared / "pkg" / "tcps.py").write_text("TCPS = {}\n")
    if make == "real-folder":
        (robot / "abbdata").mkdir()
    elif make == "linked-folder":
        (robot / "abbdata").symlink_to(shared / "pkg")
    elif make == "linked-folder-to-nothing":
        (robot / "abbdata").symlink_to(shared / "gone")
    elif make == "linked-module-file":
        (robot / "abbdata.py").symlink_to(shared / "pkg" / "tcps.py")


@pytest.mark.parametrize(
    ("make", "refused"),
    [
        ("real-folder", False),
        ("linked-folder", True),
        ("linked-folder-to-nothing", False),  # no folder to import from: gen_srdf() says so
        ("linked-module-file", False),  # its digest follows its bytes
        ("absent", False),
    ],
)
def test_symlink_refused_a_folder_beside_srdf_py_that_is_a_link(
    tmp_path: Path, make: str, refused: bool
) -> None:
    """gen_srdf() could import from a linked folder whose files the srdf step never listed: a
    change behind the link left robot.srdf current. Such a folder is refused, alone."""
    robot = tmp_path / "robots" / "arm"
    robot.mkdir(parents=True)
    _helper_entry(robot, make)
    paths = ["robots/arm/abbdata", "robots/arm/abbdata.py"]
    found = linked_helper_folders(os.path.join(tmp_path, ""), paths)
    lines = [finding.line() for finding in found]
    assert lines == (
        [
            "robots/arm/abbdata: symlink_refused: the helper folder is a symbolic link; replace "
            "the link with a real folder holding the modules it points to (copy them into "
            "robots/arm/abbdata/): the build reads nothing through a linked folder, so a change "
            "behind it would leave robot.srdf as it was"
        ]
        if refused
        else []
    )


LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n"
)


def test_lfs_pointer_is_refused_as_such(tmp_path: Path) -> None:
    """A checkout without git-lfs holds pointer files: a mesh's was `mesh_not_a_mesh: ...;
    export the mesh again`, a COLLADA one's `invalid_xml`, where the fix is `git lfs pull`."""
    pointer = tmp_path / "link_1.stl"
    pointer.write_bytes(LFS_POINTER)
    with pytest.raises(ContractError) as exc:
        read_bytes(pointer, "meshes/link_1.stl", 1 << 20)
    [finding] = exc.value.findings
    assert (finding.code, finding.file) == ("lfs_pointer", "meshes/link_1.stl")
    assert "`git lfs pull`" in finding.hint
    # a file that only mentions the line further on is read as it is
    pointer.write_bytes(b"solid x\n" + LFS_POINTER)
    assert read_bytes(pointer, "meshes/link_1.stl", 1 << 20) == b"solid x\n" + LFS_POINTER
