"""Crafted mesh files of 0.2 m cubes along x, in parts as Tesseract 0.5's reader (assimp 5.2)
reads them apart from the URDF's resource, measured with its `createConvexMeshFromResource`
(tests/test_tesseract_env.py)."""

from __future__ import annotations

from collections.abc import Sequence

import trimesh


def cube_obj(spec: Sequence[str | float]) -> str:
    """An OBJ of `spec`'s lines, each number a cube centred at that x (its vertices and faces)."""
    lines, base = [], 0
    for item in spec:
        if isinstance(item, str):
            lines.append(item)
            continue
        cube = trimesh.creation.box((0.2, 0.2, 0.2))
        cube.apply_translation((item, 0.0, 0.0))
        lines += [f"v {a!r} {b!r} {c!r}" for a, b, c in cube.vertices.tolist()]
        lines += [f"f {a + base + 1} {b + base + 1} {c + base + 1}" for a, b, c in cube.faces]
        base += len(cube.vertices)
    return "\n".join(lines) + "\n"


_DAE_HEAD = """<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="meter" meter="1"/><up_axis>{up}</up_axis></asset>
  <library_effects>
    <effect id="e0"><profile_COMMON><technique sid="t"><lambert><diffuse><color>1 0 0 1</color>
    </diffuse></lambert></technique></profile_COMMON></effect>
    <effect id="e1"><profile_COMMON><technique sid="t"><lambert><diffuse><color>0 1 0 1</color>
    </diffuse></lambert></technique></profile_COMMON></effect>
  </library_effects>
  <library_materials>
    <material id="mat0"><instance_effect url="#e0"/></material>
    <material id="mat1"><instance_effect url="#e1"/></material>
  </library_materials>
  <library_geometries>
"""


# the six sides of trimesh's box, each around its corners (vertex 4x + 2y + z of bits x, y, z)
_QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]


def _faces(kind: str, cube: trimesh.Trimesh, base: int) -> tuple[int, str]:
    """A cube's faces as a COLLADA block of `kind` holds them: its count and its <p>s (a
    polylist's <vcount> in front); each quad a <p> of <polygons>, a fan, a strip."""
    if kind == "triangles":
        return len(cube.faces), f"<p>{' '.join(map(str, (cube.faces + base).ravel()))}</p>"
    quads = _QUADS
    if kind == "tristrips":  # a quad a, b, c, d as the strip a b d c
        quads = [(a, b, d, c) for a, b, c, d in quads]
    words = [" ".join(str(i + base) for i in quad) for quad in quads]
    if kind == "polylist":
        counts = " ".join("4" for _ in quads)
        return len(quads), f"<vcount>{counts}</vcount><p>{' '.join(words)}</p>"
    return len(quads), "".join(f"<p>{w}</p>" for w in words)


def _geometry(
    gid: str, blocks: Sequence[tuple[str | None, float] | tuple[str | None, float, str]]
) -> str:
    """A <geometry> of one vertex source and a block per (material symbol, cube x[, kind]): a
    <triangles> block, or a <polygons>, <polylist>, <trifans> or <tristrips> of its quads."""
    corners: list[list[float]] = []
    blocks_xml = []
    for symbol, x, *kind in blocks:
        cube = trimesh.creation.box((0.2, 0.2, 0.2))
        cube.apply_translation((x, 0.0, 0.0))
        tag = kind[0] if kind else "triangles"
        count, lists = _faces(tag, cube, len(corners))
        corners += cube.vertices.tolist()
        material = f' material="{symbol}"' if symbol else ""
        blocks_xml.append(
            f'<{tag} count="{count}"{material}><input semantic="VERTEX" '
            f'source="#{gid}-vtx" offset="0"/>{lists}</{tag}>'
        )
    flat = " ".join(repr(v) for corner in corners for v in corner)
    return (
        f'<geometry id="{gid}"><mesh><source id="{gid}-pos">'
        f'<float_array id="{gid}-arr" count="{3 * len(corners)}">{flat}</float_array>'
        f'<technique_common><accessor source="#{gid}-arr" count="{len(corners)}" stride="3">'
        '<param name="X" type="float"/><param name="Y" type="float"/>'
        '<param name="Z" type="float"/></accessor></technique_common></source>'
        f'<vertices id="{gid}-vtx"><input semantic="POSITION" source="#{gid}-pos"/></vertices>'
        + "".join(blocks_xml)
        + "</mesh></geometry>\n"
    )


def instance(gid: str, symbols: Sequence[str] = ()) -> str:
    """An <instance_geometry> of `gid` binding each symbol `mN` to material `matN`."""
    if not symbols:
        return f'<instance_geometry url="#{gid}"/>'
    binds = "".join(f'<instance_material symbol="{s}" target="#mat{s[1:]}"/>' for s in symbols)
    return (
        f'<instance_geometry url="#{gid}"><bind_material><technique_common>{binds}'
        "</technique_common></bind_material></instance_geometry>"
    )


def cube_dae(
    geometries: dict[str, Sequence[tuple[str | None, float] | tuple[str | None, float, str]]],
    nodes: Sequence[str],
    up: str = "Z_UP",
) -> str:
    """A COLLADA file of `geometries` (id: blocks) and the visual scene's top `nodes`."""
    return (
        _DAE_HEAD.format(up=up)
        + "".join(_geometry(gid, blocks) for gid, blocks in geometries.items())
        + '  </library_geometries>\n  <library_visual_scenes><visual_scene id="s" name="s">\n'
        + "".join(f"    {node}\n" for node in nodes)
        + "  </visual_scene></library_visual_scenes>\n"
        + '  <scene><instance_visual_scene url="#s"/></scene>\n</COLLADA>\n'
    )


def lines_dae(
    geometries: dict[str, list[tuple[str | None, float]]], gid: str, ends: str, faces: bool = True
) -> str:
    """A COLLADA file of `geometries` (each instanced in a node of its own) whose geometry `gid`
    holds a <lines> of the corners `ends` after its blocks of faces (or instead: `faces` False)."""
    nodes = [f'<node id="n{i}">{instance(g)}</node>' for i, g in enumerate(geometries)]
    text = cube_dae(geometries, nodes)
    start = text.index(f'<geometry id="{gid}">')
    end = text.index("</mesh>", start)
    lines = (
        f'<lines count="{len(ends.split()) // 2}"><input semantic="VERTEX" source="#{gid}-vtx" '
        f'offset="0"/><p>{ends}</p></lines>'
    )
    mesh = text[start:end]
    if not faces:
        mesh = mesh[: mesh.index("<triangles")]
    return text[:start] + mesh + lines + text[end:]


def cubes_ply(extra: Sequence[tuple[float, float, float]], short: Sequence[Sequence[int]]) -> str:
    """An ASCII PLY of cubes at x = -0.6 and 0.6 (vertices 0-15), the vertices `extra` after
    them, and faces of one or two corners `short` after the cubes' triangles."""
    cubes = [
        trimesh.creation.box((0.2, 0.2, 0.2)).apply_translation((x, 0, 0)) for x in (-0.6, 0.6)
    ]
    both = trimesh.util.concatenate(cubes)
    corners = both.vertices.tolist() + [list(v) for v in extra]
    faces = [f"3 {a} {b} {c}" for a, b, c in both.faces.tolist()]
    faces += [f"{len(f)} {' '.join(map(str, f))}" for f in short]
    head = [
        "ply",
        "format ascii 1.0",
        f"element vertex {len(corners)}",
        *(f"property float {axis}" for axis in "xyz"),
        f"element face {len(faces)}",
        "property list uchar int vertex_indices",
        "end_header",
    ]
    return "\n".join(head + [f"{a!r} {b!r} {c!r}" for a, b, c in corners] + faces) + "\n"


# name: (file text, each part's x extent as Tesseract reads it); every file's cubes at x = -0.6
# and 0.6 (and 0): one hull of them all spans the middle, where a link between them sits
_A, _B, _C = (-0.7, -0.5), (0.5, 0.7), (-0.1, 0.1)
_AC, _CB, _AB = (-0.7, 0.1), (-0.1, 0.7), (-0.7, 0.7)
_O, _AO, _A5 = "v 0 0 0", (-0.7, 0.0), (-0.7, 0.05)  # the origin, a line from _A's corner to it
PARTED: dict[str, tuple[str, list[tuple[float, float]]]] = {
    # OBJ: a mesh per material change once the mesh has faces and a material
    "usemtl_a_b.obj": (cube_obj(["usemtl A", -0.6, "usemtl B", 0.6]), [_A, _B]),
    "usemtl_a_b_a.obj": (
        cube_obj(["usemtl A", -0.6, "usemtl B", 0.0, "usemtl A", 0.6]),
        [_A, _C, _B],
    ),
    "usemtl_a_a.obj": (cube_obj(["usemtl A", -0.6, "usemtl A  ", 0.6]), [_AB]),
    "usemtl_after_none.obj": (cube_obj([-0.6, "usemtl A", 0.0, "usemtl B", 0.6]), [_AC, _B]),
    "usemtl_unnamed.obj": (cube_obj(["usemtl A", -0.6, "usemtl", 0.6]), [_AB]),
    "usemtl_default.obj": (cube_obj(["usemtl DefaultMaterial", -0.6, "usemtl B", 0.6]), [_A, _B]),
    # objects: a mesh per new name (its first word); a name seen before: the mesh goes on
    "o_a_b_a.obj": (cube_obj(["o a", -0.6, "o b", 0.0, "o a", 0.6]), [_A, _CB]),
    "o_first_word.obj": (cube_obj(["o a b", -0.6, "o\ta c", 0.6]), [_AB]),
    "o_unnamed.obj": (cube_obj([-0.6, "o", 0.6]), [_AB]),
    "o_then_usemtl.obj": (
        cube_obj(["o a", "usemtl A", -0.6, "o b", "usemtl B", 0.0, "o c", "usemtl A", 0.6]),
        [_A, _C, _B],
    ),
    # groups: a mesh at each change of name (the line's rest, spaces and all)
    "g_a_b_a.obj": (cube_obj(["g a", -0.6, "g b", 0.0, "g a", 0.6]), [_A, _C, _B]),
    "g_a_a.obj": (cube_obj(["g a", -0.6, "g a", 0.6]), [_AB]),
    "g_whole_line.obj": (cube_obj(["g a b", -0.6, "g c b", 0.6]), [_A, _B]),
    "g_trailing_space.obj": (cube_obj(["g a", -0.6, "g a ", 0.6]), [_A, _B]),
    "g_unnamed.obj": (cube_obj(["g a", -0.6, "g", 0.6]), [_A, _B]),
    "g_names_an_object.obj": (cube_obj(["g a", -0.6, "o a", 0.6]), [_AB]),
    "o_then_g_same_name.obj": (cube_obj(["o a", -0.6, "g a", 0.6]), [_A, _B]),
    "smoothing_groups.obj": (cube_obj(["s 1", -0.6, "s 2", 0.6]), [_AB]),
    # PLY: one mesh
    "two_cubes.ply": (
        trimesh.exchange.ply.export_ply(
            trimesh.util.concatenate(
                [
                    trimesh.creation.box((0.2, 0.2, 0.2)).apply_translation((x, 0, 0))
                    for x in (-0.6, 0.6)
                ]
            ),
            encoding="ascii",
        ).decode(),
        [_AB],
    ),
    # OBJ lines and points: a mesh whose elements are of several kinds (`l`, `p`, `f`) is cut by
    # them (assimp's SortByPType): its lines (each `l`, a face of two corners) a mesh of their
    # own, its points (each `p`, a face of one corner) another, collided as their corners' hull;
    # the line from the first cube's corner (vertex 1) to the origin (vertex 17, or 9 after one
    # cube) reaches base_link's box alone
    "l_beside_faces.obj": (cube_obj([-0.6, _O, "l 1 9"]), [_A, _AO]),
    "l_of_three_corners.obj": (cube_obj([-0.6, _O, "v 0.05 0.02 0.01", "l 1 9 10"]), [_A, _A5]),
    "l_in_an_object_of_its_own.obj": (
        cube_obj(["o a", -0.6, "o b", 0.6, _O, "o c", "l 1 17"]),
        [_A, _B, _AO],
    ),
    "l_in_the_cubes_object.obj": (cube_obj(["o a", -0.6, "o b", 0.6, _O, "l 1 17"]), [_A, _B, _AO]),
    "l_before_an_object.obj": (cube_obj([-0.6, _O, "o c", "l 1 9"]), [_A, _AO]),
    "l_in_a_group_of_its_own.obj": (
        cube_obj(["g a", -0.6, "g b", 0.6, _O, "g c", "l 1 17"]),
        [_A, _B, _AO],
    ),
    "l_in_the_cubes_group.obj": (cube_obj(["g a", -0.6, "g b", 0.6, _O, "l 1 17"]), [_A, _B, _AO]),
    "l_in_a_material_of_its_own.obj": (
        cube_obj(["usemtl A", -0.6, "usemtl B", 0.6, _O, "usemtl C", "l 1 17"]),
        [_A, _B, _AO],
    ),
    "l_in_the_cubes_material.obj": (
        cube_obj(["usemtl A", -0.6, "usemtl B", 0.6, _O, "l 1 17"]),
        [_A, _B, _AO],
    ),
    "two_l_in_the_cubes_object.obj": (
        cube_obj(["o a", -0.6, "o b", 0.6, _O, "l 1 17", "l 9 16"]),
        [_A, _B, _AB],
    ),
    # a `p` of one vertex: Tesseract's contact manager crashes on it (SIGSEGV), so none here
    "p_of_two_corners.obj": (cube_obj(["o a", -0.6, "o b", 0.6, _O, "p 17 1"]), [_A, _B, _AO]),
    "l_and_p_in_the_cubes_object.obj": (
        cube_obj(["o a", -0.6, "o b", 0.6, _O, "p 17 1", "l 9 16"]),
        [_A, _B, _AO, _B],
    ),
    # faces of one or two corners among faces alone stay in their mesh (its hull holds them);
    # beside an `l` or a `p`, a line or a point of it
    "f_of_two_corners.obj": (cube_obj([-0.6, _O, "f 1 9"]), [_AO]),
    "f_of_one_corner.obj": (cube_obj([-0.6, _O, "f 9"]), [_AO]),
    "f_of_two_corners_in_an_object.obj": (
        cube_obj(["o a", -0.6, "o b", 0.6, _O, "f 1 17"]),
        [_A, _AB],
    ),
    "f_of_two_corners_beside_l.obj": (
        cube_obj(["o a", -0.6, "o b", 0.6, _O, "l 9 16", "f 1 17"]),
        [_A, _B, _AB],
    ),
    # PLY faces of two corners: a mesh of their own (of one corner, a point, crashes Tesseract)
    "two_cubes_and_a_line.ply": (cubes_ply([(0.0, 0.0, 0.0)], [[0, 16]]), [_AB, _AO]),
    "two_cubes_and_two_lines.ply": (
        cubes_ply([(0.0, 0.0, 0.0), (0.0, 0.3, 0.0)], [[0, 16], [8, 17]]),
        [_AB, (-0.7, 0.5)],
    ),
    # COLLADA: a mesh per <triangles> block of each geometry instance, at its nodes' transform
    "two_geometries.dae": (
        cube_dae(
            {"g0": [("m0", -0.6)], "g1": [("m0", 0.6)]},
            [
                f'<node id="n0">{instance("g0", ["m0"])}</node>',
                f'<node id="n1">{instance("g1", ["m0"])}</node>',
            ],
        ),
        [_A, _B],
    ),
    "two_geometries_one_node.dae": (
        cube_dae(
            {"g0": [(None, -0.6)], "g1": [(None, 0.6)]},
            [f'<node id="n0">{instance("g0")}{instance("g1")}</node>'],
        ),
        [_A, _B],
    ),
    "two_blocks_two_materials.dae": (
        cube_dae(
            {"g0": [("m0", -0.6), ("m1", 0.6)]},
            [f'<node id="n0">{instance("g0", ["m0", "m1"])}</node>'],
        ),
        [_A, _B],
    ),
    "two_blocks_one_material.dae": (
        cube_dae(
            {"g0": [("m0", -0.6), ("m0", 0.6)]}, [f'<node id="n0">{instance("g0", ["m0"])}</node>']
        ),
        [_A, _B],
    ),
    "instanced_twice.dae": (
        cube_dae(
            {"g0": [("m0", 0.0)]},
            [
                f'<node id="n0"><translate>-0.6 0 0</translate>{instance("g0", ["m0"])}</node>',
                f'<node id="n1"><translate>0.6 0 0</translate>{instance("g0", ["m0"])}</node>',
            ],
        ),
        [_A, _B],
    ),
    # nested nodes: turned 90 degrees about z (x = 0.6 to y = 0.6), then moved by (0.3, 0, 1),
    # and a Y_UP file's matrix kept as it is (the reader resets the root's up-axis turn alone)
    "nested_nodes.dae": (
        cube_dae(
            {"g0": [("m0", 0.6)]},
            [
                '<node id="n0"><translate>0.3 0 1</translate>'
                '<node id="n1"><rotate>0 0 1 90</rotate>'
                f"{instance('g0', ['m0'])}</node></node>"
            ],
        ),
        [(0.2, 0.4)],
    ),
    "y_up_matrix.dae": (
        cube_dae(
            {"g0": [("m0", -0.6), ("m0", 0.6)]},
            [
                '<node id="n0"><matrix>1 0 0 1 0 1 0 0 0 0 1 0 0 0 0 1</matrix>'
                f"{instance('g0', ['m0'])}</node>"
            ],
            up="Y_UP",
        ),
        [(0.3, 0.5), (1.5, 1.7)],
    ),
    # every block of faces a part, whatever its kind: <polygons>, <trifans> and <tristrips> too
    # (each fan's <p> one polygon to the reader, each strip's its triangles); one block of
    # several <p>s one part
    **{
        f"triangles_and_{kind}.dae": (
            cube_dae(
                {"g0": [(None, -0.6), (None, 0.6, kind)]},
                [f'<node id="n0">{instance("g0")}</node>'],
            ),
            [_A, _B],
        )
        for kind in ("polygons", "polylist", "trifans", "tristrips")
    },
    **{
        f"two_{kind}_blocks.dae": (
            cube_dae(
                {"g0": [(None, -0.6, kind), (None, 0.6, kind)]},
                [f'<node id="n0">{instance("g0")}</node>'],
            ),
            [_A, _B],
        )
        for kind in ("polygons", "trifans", "tristrips")
    },
    # a <lines> block: a mesh of its own (its ends' hull), in the <mesh> of the faces or in a
    # geometry of its own; the line from the first cube's corner to the second's far one runs
    # through the middle, where the box beside the mesh touches it alone
    "lines_beside_triangles.dae": (
        lines_dae({"g0": [(None, -0.6), (None, 0.6)]}, "g0", "0 15"),
        [_A, _B, _AB],
    ),
    "lines_beside_one_block.dae": (lines_dae({"g0": [(None, -0.6)]}, "g0", "0 7"), [_A, _A]),
    "lines_in_a_geometry_of_their_own.dae": (
        lines_dae({"g0": [(None, -0.6), (None, 0.6)], "g1": [(None, 0.0)]}, "g1", "0 7", False),
        [_A, _B, _C],
    ),
}

# An OBJ with the material library it names beside it (name: text): Tesseract's reader as a
# planner calls it (from the URDF's resource) opens a library only relative to the process's
# working folder, not the OBJ's, so it reads each as if it had none: one part. Read from its
# path (createConvexMeshFromPath), the library's last new material would be the faces' first
# and each would be two parts.
_LIBRARY = "newmtl A\nKd 1 0 0\nnewmtl B\nKd 0 1 0\n"
WITH_LIBRARY: dict[str, tuple[str, dict[str, str], list[tuple[float, float]]]] = {
    "faces_before_usemtl.obj": (
        cube_obj(["mtllib m.mtl", -0.6, "usemtl A", 0.6]),
        {"m.mtl": _LIBRARY},
        [_AB],
    ),
    "library_after_faces.obj": (
        cube_obj([-0.6, "mtllib m.mtl", 0.0, "usemtl A", 0.6]),
        {"m.mtl": _LIBRARY},
        [_AB],
    ),
    "library_under_the_objs_name.obj": (
        cube_obj(["mtllib gone.mtl", -0.6, "usemtl A", 0.6]),
        {"library_under_the_objs_name.mtl": _LIBRARY},
        [_AB],
    ),
}


# A cube's <triangles> at x = -0.6 and one more block of faces or lines on the same 8 corners
# (each quad's corners 0 1 3 2 in order; {v}: the block's VERTEX input, {n}: a second input)
_V = '<input semantic="VERTEX" source="#g0-vtx" offset="0"/>'
_N = '<input semantic="NORMAL" source="#g0-pos" offset="1"/>'


# name: (file, the line or face whose part is one point): Tesseract's reader gives each a mesh
# of one corner, on which its contact manager crashes (SIGSEGV, "The mesh is empty!") as the
# environment is built (measured with Tesseract 0.5); a compiler accepted each
LONE_POINT = {
    "p_of_one_corner.obj": (cube_obj([-0.6, _O, "p 9"]), "p 9"),
    "p_of_one_corner_twice.obj": (cube_obj([-0.6, _O, "p 9 9"]), "p 9 9"),
    "l_of_equal_ends.obj": (cube_obj([-0.6, _O, "l 9 9"]), "l 9 9"),
    "f_of_one_corner_beside_an_l.obj": (cube_obj([-0.6, _O, "l 1 9", "f 9"]), "f 9"),
    "l_of_two_vertices_at_one_place.obj": (cube_obj([-0.6, _O, _O, "l 9 10"]), "l 9 10"),
    "face_of_one_corner.ply": (cubes_ply([(0.0, 0.0, 0.0)], [[16]]), "face 24"),
}


def block_dae(block: str) -> str:
    """A cube DAE (a <triangles> at x = -0.6) with `block` after its <triangles>."""
    text = cube_dae({"g0": [(None, -0.6)]}, [f'<node id="n0">{instance("g0")}</node>'])
    return text.replace("</mesh>", block.format(v=_V, n=_N) + "</mesh>", 1)


def solids_stl(solids: Sequence[Sequence[tuple[float, float, float]]]) -> str:
    """An ASCII STL of a `solid` per list of corners, three by three a facet each."""
    out = []
    for number, corners in enumerate(solids):
        out.append(f"solid s{number}")
        for i in range(0, len(corners), 3):
            out += ["facet normal 0 0 0", "outer loop"]
            out += [f"vertex {x!r} {y!r} {z!r}" for x, y, z in corners[i : i + 3]]
            out += ["endloop", "endfacet"]
        out.append(f"endsolid s{number}")
    return "\n".join(out) + "\n"


_CUBE = [
    tuple(float(x) for x in corner)
    for corner in trimesh.creation.box((0.2, 0.2, 0.2)).triangles.reshape(-1, 3) - (0.6, 0, 0)
]
_NM = 0.500000001  # 1 nm from 0.5: the same number in single precision, as assimp reads it
# name: (file, the point, in single precision, of a part of triangles (or a COLLADA <lines>)
# whose corners are all there): Tesseract's contact manager crashes on it as on a lone point
# (measured with Tesseract 0.5)
ONE_POINT_PARTS = {
    "f_of_one_point_in_an_object.obj": (cube_obj([-0.6, "o b", _O, "f 9 9 9"]), "0.0, 0.0, 0.0"),
    "f_of_three_vertices_at_one_place.obj": (
        cube_obj([-0.6, "g b", _O, _O, _O, "f 9 10 11"]),
        "0.0, 0.0, 0.0",
    ),
    "object_a_nanometre_across.obj": (
        cube_obj(
            [-0.6, "o b", "v 0.5 0.5 0.5", f"v {_NM} 0.5 0.5", f"v 0.5 {_NM} 0.5", "f 9 10 11"]
        ),
        "0.5, 0.5, 0.5",
    ),
    "solid_of_one_point.stl": (solids_stl([_CUBE, [(0.5, 0.0, 0.0)] * 3]), "0.5, 0.0, 0.0"),
    "a_nanometre_across.stl": (
        solids_stl([[(0.5, 0.5, 0.5), (_NM, 0.5, 0.5), (0.5, _NM, 0.5)]]),
        "0.5, 0.5, 0.5",
    ),
    "block_of_one_point.dae": (
        block_dae('<triangles count="1">{v}<p>0 0 0</p></triangles>'),
        "-0.7, -0.1, -0.1",
    ),
    "lines_of_equal_ends.dae": (
        block_dae('<lines count="1">{v}<p>0 0</p></lines>'),
        "-0.7, -0.1, -0.1",
    ),
    # a PLY of double vertices: a line 1 nm long, one point in single precision
    "line_a_nanometre_long.ply": (
        cubes_ply([(0.5, 0.5, 0.5), (_NM, 0.5, 0.5)], [[16, 17]]).replace(
            "property float", "property double"
        ),
        "face 24",
    ),
}
LONE_POINT.update(ONE_POINT_PARTS)


# name: (block, what Tesseract's reader does with the file: "refuses" it, "aborts (SIGABRT)" or
# "crashes (SIGSEGV)" the process), each measured; the finding is at the line of the block
_QUAD = "<p>0 1 3 2</p>"
DAE_REFUSED: dict[str, tuple[str, str]] = {
    "ph_with_a_hole": (
        f'<polygons count="1">{{v}}<ph>{_QUAD}<h>0 1 2</h></ph></polygons>',
        "refuses",
    ),
    "technique_in_extra": (
        f'<polygons count="1">{{v}}{_QUAD}<extra><technique profile="x"/></extra></polygons>',
        "refuses",
    ),
    "triangles_count_too_high": ('<triangles count="2">{v}<p>0 1 2</p></triangles>', "refuses"),
    "triangles_empty_second_p": ('<triangles count="1">{v}<p>0 1 2</p><p/></triangles>', "refuses"),
    "triangles_stride_2": ('<triangles count="1">{v}{n}<p>0 1 2</p></triangles>', "refuses"),
    "polylist_few_vcounts": (
        f'<polylist count="2">{{v}}<vcount>4</vcount>{_QUAD}</polylist>',
        "refuses",
    ),
    "polylist_vcounts_disagree": (
        f'<polylist count="1">{{v}}<vcount>3</vcount>{_QUAD}</polylist>',
        "refuses",
    ),
    "tristrips_no_count": ("<tristrips>{v}<p>0 1 2 3</p></tristrips>", "refuses"),
    "linestrips_no_count": ("<linestrips>{v}<p>0 1 3</p></linestrips>", "refuses"),
    "linestrips_count_minus_1": ('<linestrips count="-1">{v}<p>0 1 3</p></linestrips>', "refuses"),
    # an index naming none of its source's items (the cube's 8 corners: 0 to 7)
    "triangles_index_past_the_end": ('<triangles count="1">{v}<p>0 1 8</p></triangles>', "refuses"),
    "normal_index_past_the_end": (
        '<triangles count="1">{v}{n}<p>0 0 1 1 2 8</p></triangles>',
        "refuses",
    ),
    "lines_index_past_the_end": ('<lines count="1">{v}<p>0 8</p></lines>', "refuses"),
    "trifans_half_a_corner": ('<trifans count="1">{v}{n}<p>0 0 1 1 2</p></trifans>', "refuses"),
    "polygons_count_too_high": (f'<polygons count="2">{{v}}{_QUAD}</polygons>', "aborts (SIGABRT)"),
    "polygons_count_0": (f'<polygons count="0">{{v}}{_QUAD}</polygons>', "aborts (SIGABRT)"),
    "polygons_empty_p": (f'<polygons count="1">{{v}}{_QUAD}<p/></polygons>', "aborts (SIGABRT)"),
    "triangles_two_p": (
        '<triangles count="1">{v}<p>0 1 2</p><p>1 3 2</p></triangles>',
        "aborts (SIGABRT)",
    ),
    "triangles_no_p": ('<triangles count="1">{v}</triangles>', "aborts (SIGABRT)"),
    "polylist_two_p": (
        f'<polylist count="1">{{v}}<vcount>4</vcount>{_QUAD}{_QUAD}</polylist>',
        "aborts (SIGABRT)",
    ),
    "polylist_p_before_vcount": (
        f'<polylist count="1">{{v}}{_QUAD}<vcount>4</vcount></polylist>',
        "crashes (SIGSEGV)",
    ),
    "polylist_no_vcount": (f'<polylist count="1">{{v}}{_QUAD}</polylist>', "crashes (SIGSEGV)"),
}
# name: (block, the parts Tesseract's reader reads with a vertex): it loads the file, but reads
# the block otherwise than pycollada (a collision mesh holding it is refused)
DAE_READ_OTHERWISE: dict[str, tuple[str, int]] = {
    # the reader reads the <ph>'s outline as a polygon, pycollada drops it
    "ph_without_a_hole": (f'<polygons count="1">{{v}}<ph>{_QUAD}</ph></polygons>', 2),
    # the reader reads no face of a block of no count above 0, pycollada reads them
    "triangles_count_0": ('<triangles count="0">{v}<p>0 1 2</p></triangles>', 1),
    "triangles_no_count": ("<triangles>{v}<p>0 1 2</p></triangles>", 1),
    "triangles_count_abc": ('<triangles count="abc">{v}<p>0 1 2</p></triangles>', 1),
    "triangles_count_minus_1": ('<triangles count="-1">{v}<p>0 1 2</p></triangles>', 1),
    "polylist_count_0": (f'<polylist count="0">{{v}}<vcount>4</vcount>{_QUAD}</polylist>', 1),
    "trifans_count_0": (f'<trifans count="0">{{v}}{_QUAD}</trifans>', 1),
    # the reader reads a negative index as another corner (a triangle of two, a line of one:
    # a part of one point, on which the contact manager crashes), pycollada counts it back
    "triangles_negative_index": ('<triangles count="1">{v}<p>0 1 -1</p></triangles>', 2),
    "lines_negative_index": ('<lines count="1">{v}<p>0 -1</p></lines>', 2),
}
# name: block: read alike, two parts (a count the reader does not check, or reads as C's atoi)
DAE_READ_ALIKE: dict[str, str] = {
    "tristrips_count_off": '<tristrips count="5">{v}<p>0 1 2 3</p></tristrips>',
    "trifans_count_off": f'<trifans count="7">{{v}}{_QUAD}</trifans>',
    "triangles_count_1x": '<triangles count="1x">{v}<p>0 1 2</p></triangles>',
    "triangles_count_plus": '<triangles count=" +1">{v}<p>0 1 2</p></triangles>',
    "polygons_two_p": f'<polygons count="2">{{v}}{_QUAD}<p>0 4 5 1</p></polygons>',
    "polylist_stride_2": (
        '<polylist count="1">{v}{n}<vcount>3</vcount><p>0 0 1 1 2 2</p></polylist>'
    ),
}

# name: (block, its segments): Tesseract's reader reads the <lines> as a mesh of its own, two
# parts in all, which its contact manager collides (its ends' hull); the compiler reads it alike
# (a count is not checked, as there, but for one of no count above 0)
DAE_LINES_READ: dict[str, tuple[str, int]] = {
    "lines": ('<lines count="1">{v}<p>0 6</p></lines>', 1),
    "lines_two": ('<lines count="2">{v}<p>0 6 6 7</p></lines>', 2),
    "lines_count_off": ('<lines count="5">{v}<p>0 6</p></lines>', 1),
    "lines_count_1x": ('<lines count="1x">{v}<p>0 6</p></lines>', 1),
    "lines_stride_2": ('<lines count="1">{v}{n}<p>0 0 6 6</p></lines>', 1),
}
# name: (block, the parts Tesseract's reader reads with a vertex): it loads the file, but the
# COLLADA reader here (pycollada) reads the lines otherwise: a collision mesh holding them is
# refused (mesh_lines_or_points)
DAE_LINES_OTHERWISE: dict[str, tuple[str, int]] = {
    # Tesseract's reader reads no line of a block of no count above 0, pycollada reads them
    "lines_count_0": ('<lines count="0">{v}<p>0 6</p></lines>', 1),
    "lines_no_count": ("<lines>{v}<p>0 6</p></lines>", 1),
    # Tesseract's reader reads every <p>; pycollada the first alone, or without one drops the
    # whole geometry (the cube's faces too)
    "lines_two_p": ('<lines count="2">{v}<p>0 6</p><p>6 7</p></lines>', 2),
    "lines_no_p": ('<lines count="1">{v}</lines>', 1),
    # pycollada drops the whole geometry
    "linestrips": ('<linestrips count="1">{v}<p>0 6 7</p></linestrips>', 2),
}
