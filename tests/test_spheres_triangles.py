"""A collision mesh file's triangles: empty, non-finite or unreadable meshes are refused."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.findings import ContractError
from pipeline.spheres.triangles import mesh_triangles
from pipeline.urdf import Mesh


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"# no faces\nv 0 0 0\n", "holds no triangles"),
        (b"v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2 3\n", "holds no triangles"),
        (b"v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n", "has a corner that is not a finite number"),
    ],
    ids=["no-faces", "lines-only", "nan"],
)
def test_mesh_empty_says_whether_a_mesh_is_empty_or_not_finite(data: bytes, message: str) -> None:
    """It said 'holds no finite triangles' of a mesh of thousands with one NaN corner."""
    with pytest.raises(ContractError) as caught:
        mesh_triangles(data, Mesh("x.obj", "meshes/x.obj"), "robots/r/meshes/x.obj")
    [finding] = caught.value.findings
    assert (finding.code, finding.message) == ("mesh_empty", message)


def test_obj_with_a_byte_order_mark_is_not_mesh_unreadable() -> None:
    """A UTF-8 BOM before the first vertex made trimesh fail (IndexError): mesh_unreadable."""
    obj = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"
    plain = mesh_triangles(obj, Mesh("x.obj", "meshes/x.obj"), "x.obj")
    marked = mesh_triangles(b"\xef\xbb\xbf" + obj, Mesh("x.obj", "meshes/x.obj"), "x.obj")
    assert np.array_equal(plain, marked)
