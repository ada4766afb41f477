"""A PLY's header counts the records its body holds, on a visual mesh too.

Measured with Tesseract 0.5.1's URDF parser (2026-12-05): a binary PLY declaring 5 vertices and
holding 3 crashed the process (SIGSEGV), a PLY holding a face of no corner, binary or ASCII,
aborted it (assimp's `ai_assert` in TriangulateProcess.cpp, SIGABRT), and an ASCII PLY declaring
2,000,000,000 vertices failed with std::bad_alloc; `pipeline validate` accepted each as a visual
mesh.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pipeline.cli import main

ABB = "robots/abb_irb2400"
HEAD = (
    "ply\nformat {fmt} 1.0\nelement vertex {n}\nproperty float x\nproperty float y\n"
    "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
)
CORNERS = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0)


def ascii_ply(declared: int) -> bytes:
    """An ASCII PLY of one triangle whose header declares `declared` vertices."""
    body = "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"
    return (HEAD.format(fmt="ascii", n=declared) + body).encode()


def binary_ply(declared: int, cornerless: bool = False) -> bytes:
    """A little-endian binary PLY of one triangle whose header declares `declared` vertices
    (and, `cornerless`, a second face of no corner)."""
    head = HEAD.format(fmt="binary_little_endian", n=declared).encode()
    if cornerless:
        head = head.replace(b"element face 1", b"element face 2")
    tail = struct.pack("<B", 0) if cornerless else b""
    return head + struct.pack("<9f", *CORNERS) + struct.pack("<B3i", 3, 0, 1, 2) + tail


def validate(repo: Path, data: bytes, monkeypatch: pytest.MonkeyPatch) -> int:
    """Make `data` link_1's visual mesh, vis.ply; `pipeline validate abb_irb2400`."""
    (repo / ABB / "meshes" / "vis.ply").write_bytes(data)
    urdf = repo / ABB / "robot.urdf"
    urdf.write_text(urdf.read_text().replace("meshes/link_1.dae", "meshes/vis.ply", 1))
    monkeypatch.chdir(repo)
    return main(["validate", "abb_irb2400"])


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (
            binary_ply(5),
            "is a binary PLY whose body (49 bytes) ends before the records its header declares "
            "(vertex 5, face 1)",
        ),
        (binary_ply(3, cornerless=True), "is a binary PLY whose face 2 has no corner"),
        (
            ascii_ply(3).replace(b"element face 1", b"element face 2") + b"0\n",
            "is an ASCII PLY whose face 2 has no corner",
        ),
        (
            ascii_ply(2_000_000_000),
            "is an ASCII PLY whose header declares 2,000,000,001 records (vertex 2000000000, "
            "face 1), but its body holds 4 lines",
        ),
    ],
    ids=[
        "mesh_not_a_mesh-ply-binary-short",
        "mesh_not_a_mesh-ply-binary-face-of-no-corner",
        "mesh_not_a_mesh-ply-ascii-face-of-no-corner",
        "mesh_not_a_mesh-ply-ascii-count-it-lacks",
    ],
)
def test_a_ply_body_shorter_than_its_header_declares_is_refused(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    data: bytes,
    says: str,
) -> None:
    """One line at the header's first element line (line 3), for a visual mesh."""
    assert validate(repo, data, monkeypatch) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{ABB}/meshes/vis.ply:3: mesh_not_a_mesh: {says}: Tesseract's mesh reader (assimp) "
        "trusts the header, and crashes the planner on a short binary PLY or a face of no "
        "corner, or runs out of memory allocating a large count the file does not hold; export "
        "the mesh again (its header counts each vertex and face its body holds)"
    ]


@pytest.mark.parametrize("data", [ascii_ply(3), binary_ply(3)], ids=["ascii", "binary"])
def test_a_ply_whose_body_holds_what_its_header_declares_is_read(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data: bytes
) -> None:
    """The same triangle with its count right is a visual mesh as any."""
    assert validate(repo, data, monkeypatch) == 0
    assert capsys.readouterr().err == ""
