"""The parts of a collision mesh file as the planner's reader cuts it (pipeline/meshsplit.py)."""

from __future__ import annotations

import pytest

from pipeline import meshsplit
from pipeline.meshsplit import part_points
from tests.meshfiles import cube_obj


def test_an_objs_group_changes_without_faces_make_no_mesh_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A `g` line between no faces starts no part: an 8 MB OBJ of 2 million such lines beside
    two triangles made 2 million meshes, 11 s and 1.6 GB in `pipeline validate` and the urdf
    step (trimesh read it in 0.2 s), so the 256 MiB a mesh may hold asked some 50 GB."""
    made: list[object] = []

    class Counted(meshsplit._ObjMesh):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(meshsplit, "_ObjMesh", Counted)
    text = cube_obj(["o first", 0.0, *["g a", "g b"] * 5_000, "usemtl m", "g c", 0.4])
    parts = part_points(text.encode(), "obj")
    assert parts is not None
    assert sorted((count, len(points)) for count, points in parts) == [(12, 8), (12, 8)]
    assert len(made) == 2
