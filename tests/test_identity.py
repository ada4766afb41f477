"""The identity algorithm, checked against an independent implementation of the spec."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.identity import description_identity, identity_of
from tests.conftest import REPO


def spec_identity(folder: Path) -> str:
    """The spec's algorithm written out again, step by step, from the files on disk."""
    manifest = json.loads((folder / "robot_description_manifest.json").read_bytes())
    names = ["robot_description_manifest.json", *manifest["files"]]
    entries = sorted(
        (name.encode("utf-8"), hashlib.sha256((folder / name).read_bytes()).digest())
        for name in names
    )
    h = hashlib.sha256()
    h.update(b"rosie.robot-description.identity.v1" + b"\x00")
    h.update(struct.pack(">Q", len(entries)))
    for path, digest in entries:
        h.update(struct.pack(">Q", len(path)) + path + digest)
    return "sha256:" + h.hexdigest()


@pytest.mark.parametrize("model_id", ["abb_irb2400", "lbr_iiwa_14_r820"])
def test_cli_identity_matches_spec(model_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    folder = REPO / "build" / "robots" / model_id
    assert main(["identity", str(folder)]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == spec_identity(folder)
    index = json.loads((REPO / "build" / "index.json").read_text())
    assert index["robots"][model_id]["identity"] == printed


@pytest.mark.parametrize("cell_id", ["weld_cell_a", "iiwa_bench"])
def test_cli_identity_of_a_cells_description_is_its_cell_json_identity(
    cell_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A compiled cell's (or an unpacked bundle's) description/ was refused: model_id_mismatch."""
    cell = tmp_path / cell_id  # as unpacked from dist/<cell_id>.tar.gz
    shutil.copytree(REPO / "build" / "cells" / cell_id, cell)
    expected = json.loads((cell / "cell.json").read_text())["description_identity"]
    for folder in (REPO / "build" / "cells" / cell_id / "description", cell / "description"):
        assert main(["identity", str(folder)]) == 0
        assert capsys.readouterr().out == expected + "\n"
        assert main(["manifest", "--check", str(folder)]) == 0
        assert capsys.readouterr().out.startswith("manifest: ")
    assert spec_identity(cell / "description") == expected
    (cell / "cell.json").unlink()  # a description/ outside a cell: its name is no model id
    assert main(["identity", str(cell / "description")]) == 2
    assert "model_id_mismatch" in capsys.readouterr().err


def test_vector_non_ascii_sorted_by_bytes() -> None:
    # "Z" (0x5a) < "a" (0x61) < "é" (0xc3 0xa9) in byte order; code points agree here, but
    # "ﬀ" (U+FB00, 0xef 0xac 0x80) sorts after "𝔸" only by code point, not by bytes.
    d = [hashlib.sha256(bytes([i])).digest() for i in range(5)]
    entries = [("é", d[0]), ("a", d[1]), ("Z", d[2]), ("\U0001d538", d[3]), ("\ufb00", d[4])]
    h = hashlib.sha256(b"rosie.robot-description.identity.v1\x00" + struct.pack(">Q", 5))
    for path, digest in sorted(entries, key=lambda e: e[0].encode()):
        raw = path.encode()
        h.update(struct.pack(">Q", len(raw)) + raw + digest)
    assert identity_of(entries) == "sha256:" + h.hexdigest()
    assert [p for p, _ in sorted(entries, key=lambda e: e[0].encode())][-2:] == [
        "\ufb00",
        "\U0001d538",
    ]


def test_empty_vector() -> None:
    expected = hashlib.sha256(b"rosie.robot-description.identity.v1\x00" + bytes(8)).hexdigest()
    assert identity_of([]) == "sha256:" + expected


def test_removing_a_name_changes_identity_while_file_stays(tmp_path: Path) -> None:
    folder = tmp_path / "abb_irb2400"
    shutil.copytree(REPO / "build" / "robots" / "abb_irb2400", folder)
    before, count = description_identity(folder, "d")
    manifest = json.loads((folder / "robot_description_manifest.json").read_text())
    manifest["files"].remove("meshes/link_6.dae")
    (folder / "robot_description_manifest.json").write_text(json.dumps(manifest))
    after, count_after = description_identity(folder, "d")
    assert (folder / "meshes" / "link_6.dae").is_file()
    assert after != before and count_after == count - 1
    assert after == spec_identity(folder)


def test_identity_changes_with_one_byte(tmp_path: Path) -> None:
    folder = tmp_path / "lbr_iiwa_14_r820"
    shutil.copytree(REPO / "build" / "robots" / "lbr_iiwa_14_r820", folder)
    before, _ = description_identity(folder, "d")
    mesh = folder / "meshes" / "link_1.stl"
    data = bytearray(mesh.read_bytes())
    data[100] ^= 1
    mesh.write_bytes(bytes(data))
    assert description_identity(folder, "d")[0] != before


def test_file_unreadable_file_digest_reads_in_chunks_and_refuses_what_changed_under_it(
    tmp_path: Path,
) -> None:
    """It read each file whole (memory as large as the file); an OSError was a traceback.

    The manifest's checks run first, so a link or a FIFO here is one swapped in since.
    """
    from pipeline.findings import ContractError
    from pipeline.identity import file_digest

    big = tmp_path / "big.stl"
    big.write_bytes(bytes(range(256)) * 12_289)  # over 3 MiB: several chunks
    assert file_digest(big, "d/big.stl") == hashlib.sha256(big.read_bytes()).digest()
    (tmp_path / "link.stl").symlink_to(big)
    os.mkfifo(tmp_path / "fifo.stl")
    for name in ("link.stl", "fifo.stl", "gone.stl"):
        with pytest.raises(ContractError) as caught:
            file_digest(tmp_path / name, f"d/{name}")
        assert [(f.code, f.file) for f in caught.value.findings] == [
            ("file_unreadable", f"d/{name}")
        ]
