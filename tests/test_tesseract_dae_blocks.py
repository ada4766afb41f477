"""COLLADA blocks of faces as Tesseract's mesh reader reads them (tests/meshfiles.py): refused,
aborting or crashing its process, read otherwise than pycollada, or read alike; each as the
compiler judges it (pipeline/urdf/dae_blocks.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tesseract_robotics")

from pipeline.findings import ContractError
from pipeline.spheres.triangles import mesh_parts
from pipeline.urdf import Mesh
from pipeline.urdf.mesh_bytes import mesh_findings
from tests.meshfiles import (
    DAE_LINES_OTHERWISE,
    DAE_LINES_READ,
    DAE_READ_ALIKE,
    DAE_READ_OTHERWISE,
    DAE_REFUSED,
    block_dae,
)

# the parts (their vertex counts) Tesseract's reader reads of a file, in a process of its own
_READ = """
import sys
from pathlib import Path
from tesseract_robotics.tesseract_common import GeneralResourceLocator
from tesseract_robotics.tesseract_geometry import createConvexMeshFromResource
resource = GeneralResourceLocator().locateResource(Path(sys.argv[1]).resolve().as_uri())
print(*[m.getVertexCount() for m in createConvexMeshFromResource(resource)])
"""
ENDS = {"aborts (SIGABRT)": -signal.SIGABRT, "crashes (SIGSEGV)": -signal.SIGSEGV}


def _tesseract_reads(tmp_path: Path, text: str) -> tuple[int, list[int]]:
    """The exit status of a process reading `text` with Tesseract's reader, and the vertex
    count of each part it read."""
    path = tmp_path / "x.dae"
    path.write_text(text)
    done = subprocess.run(
        [sys.executable, "-c", _READ, str(path)], capture_output=True, text=True, timeout=60
    )
    words = done.stdout.split()
    return done.returncode, [int(w) for w in words] if done.returncode == 0 else []


@pytest.mark.parametrize("name", sorted(DAE_REFUSED))
def test_blocks_tesseract_refuses_or_crashes_on(tmp_path: Path, name: str) -> None:
    """Tesseract's reader refuses the file (no part), or its process ends by the signal; the
    compiler refuses it as any mesh, saying which."""
    block, does = DAE_REFUSED[name]
    text = block_dae(block)
    status, parts = _tesseract_reads(tmp_path, text)
    assert (status, parts) == (ENDS.get(does, 0), [])
    [finding] = mesh_findings(text.encode(), "robots/r/meshes/x.dae")
    assert finding.code == "mesh_not_a_mesh"
    assert f"Tesseract's mesh reader {does}" in finding.message


def _parts(text: str) -> int:
    """The parts the compiler collides of a collision mesh."""
    from pipeline.meshsplit import part_points

    found = part_points(text.encode(), "dae")
    return 1 if found is None else len(found)


@pytest.mark.parametrize("name", sorted(DAE_READ_OTHERWISE))
def test_blocks_read_otherwise_are_refused_in_a_collision_mesh(tmp_path: Path, name: str) -> None:
    """Tesseract loads the file (a visual mesh passes), reading the block otherwise than
    pycollada; a collision mesh holding it is refused (mesh_unreadable)."""
    _refused_in_a_collision_mesh(tmp_path, *DAE_READ_OTHERWISE[name], "mesh_unreadable")


def _refused_in_a_collision_mesh(tmp_path: Path, block: str, theirs: int, code: str) -> None:
    """Tesseract loads the file with `theirs` parts, a visual mesh passes, and a collision mesh
    is refused with `code`."""
    text = block_dae(block)
    status, parts = _tesseract_reads(tmp_path, text)
    assert status == 0 and len([n for n in parts if n]) == theirs
    assert mesh_findings(text.encode(), "robots/r/meshes/x.dae") == []
    with pytest.raises(ContractError) as caught:
        mesh_parts(text.encode(), Mesh("x.dae", "meshes/x.dae"), "robots/r/meshes/x.dae")
    assert [f.code for f in caught.value.findings] == [code]


@pytest.mark.parametrize("name", sorted(DAE_READ_ALIKE))
def test_blocks_read_alike_pass(tmp_path: Path, name: str) -> None:
    """A count the reader does not check, or reads as C's atoi: both read the two parts."""
    text = block_dae(DAE_READ_ALIKE[name])
    status, parts = _tesseract_reads(tmp_path, text)
    assert status == 0 and len([n for n in parts if n]) == 2
    assert mesh_findings(text.encode(), "robots/r/meshes/x.dae") == []
    read = mesh_parts(text.encode(), Mesh("x.dae", "meshes/x.dae"), "robots/r/meshes/x.dae")
    assert len(read.triangles) > 12 and np.isfinite(read.triangles).all()
    assert _parts(text) == 2


@pytest.mark.parametrize("name", sorted(DAE_LINES_READ))
def test_lines_beside_faces_are_read_as_tesseract_reads_them(tmp_path: Path, name: str) -> None:
    """Tesseract's reader reads a <lines> as a mesh of its own, its contact manager collides
    it (tests/test_tesseract_env.py), exporters write edges so: read, its segments covered by
    the spheres and its ends collided as a part of their own (it was mesh_lines_or_points)."""
    block, segments = DAE_LINES_READ[name]
    text = block_dae(block)
    status, parts = _tesseract_reads(tmp_path, text)
    assert status == 0 and len([n for n in parts if n]) == 2
    assert mesh_findings(text.encode(), "robots/r/meshes/x.dae") == []
    read = mesh_parts(text.encode(), Mesh("x.dae", "meshes/x.dae"), "robots/r/meshes/x.dae")
    assert (len(read.triangles), len(read.segments)) == (12, segments)
    from pipeline.meshsplit import hull_parts

    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "x.dae").write_text(text)
    assert len(hull_parts(tmp_path, Mesh("x.dae", "meshes/x.dae"), "robots/r")) == 2


@pytest.mark.parametrize("name", sorted(DAE_LINES_OTHERWISE))
def test_lines_read_otherwise_are_refused_in_a_collision_mesh(tmp_path: Path, name: str) -> None:
    """Tesseract loads the file (a visual mesh passes), pycollada reads its lines otherwise (or
    drops the geometry holding them): a collision mesh holding them is mesh_lines_or_points."""
    _refused_in_a_collision_mesh(tmp_path, *DAE_LINES_OTHERWISE[name], "mesh_lines_or_points")


def test_a_file_of_lines_alone_is_mesh_empty(tmp_path: Path) -> None:
    """Tesseract's reader reads a file of lines alone (one part, no face); a collision mesh
    without a triangle is refused all the same, saying so (a visual one passes)."""
    text = block_dae('<lines count="1">{v}<p>0 6</p></lines>')
    start = text.index("<triangles")
    text = text[:start] + text[text.index("</triangles>") + len("</triangles>") :]
    assert _tesseract_reads(tmp_path, text) == (0, [2])
    assert mesh_findings(text.encode(), "robots/r/meshes/x.dae") == []
    with pytest.raises(ContractError) as caught:
        mesh_parts(text.encode(), Mesh("x.dae", "meshes/x.dae"), "robots/r/meshes/x.dae")
    [finding] = caught.value.findings
    assert (finding.code, finding.message) == ("mesh_empty", "holds no triangles")


# Tesseract's reader reads each <p> of a <trifans> as one polygon (pycollada: its fan's
# triangles): of two corners, a line it collides as a part, refused; of four not in one plane, a
# polygon a triangulating consumer splits otherwise than the fan, covered by every triangle of
# its corners
_FACES = """
import sys
from pathlib import Path
from tesseract_robotics.tesseract_common import GeneralResourceLocator
from tesseract_robotics.tesseract_geometry import createConvexMeshFromResource
resource = GeneralResourceLocator().locateResource(Path(sys.argv[1]).resolve().as_uri())
for mesh in createConvexMeshFromResource(resource):
    faces, sizes = [int(f) for f in mesh.getFaces().ravel()], []
    while faces:
        sizes.append(faces[0])
        faces = faces[faces[0] + 1 :]
    print(mesh.getVertexCount(), *sizes)
"""


@pytest.mark.parametrize(
    ("fan", "theirs", "code"),
    [
        ("0 6", ["8 3 3 3 3 3 3 3 3 3 3 3 3", "2"], "mesh_lines_or_points"),
        ("0 1 3 6", ["8 3 3 3 3 3 3 3 3 3 3 3 3", "4 4"], ""),
    ],
    ids=["fan-of-two", "fan-of-four-not-in-one-plane"],
)
def test_a_fan_is_a_polygon_to_tesseracts_reader(
    tmp_path: Path, fan: str, theirs: list[str], code: str
) -> None:
    path = tmp_path / "x.dae"
    path.write_text(block_dae(f'<trifans count="1">{{v}}<p>{fan}</p></trifans>'))
    done = subprocess.run(
        [sys.executable, "-c", _FACES, str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.splitlines() == theirs
    if not code:  # its four corners' four triangles, beside trimesh's two
        parts = mesh_parts(path.read_bytes(), Mesh("x.dae", "meshes/x.dae"), "x.dae")
        assert len(parts.polygons) == 4
        assert len(np.unique(parts.polygons.reshape(-1, 3), axis=0)) == 4
        return
    with pytest.raises(ContractError) as caught:
        mesh_parts(path.read_bytes(), Mesh("x.dae", "meshes/x.dae"), "robots/r/meshes/x.dae")
    assert [f.code for f in caught.value.findings] == [code]
