"""An OBJ's material library and textures, a COLLADA file's images: copied with the mesh."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.description import make_urdf_copies, read_urdf_sources
from pipeline.findings import Finding, Severity

ABB = "robots/abb_irb2400"
OUT = "build/robots/abb_irb2400"
L1_VISUAL = "package://abb_irb2400/meshes/link_1.dae"
# A visual OBJ as pybullet_data's franka_panda ships them: a mtllib beside it, a texture map.
OBJ = b"mtllib link_1.mtl\no body\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl skin\nf 1 2 3\n"
MTL = b"newmtl skin\nKd 1 1 1\nmap_Kd -s 1 1 1 textures/skin.png\nbump ../../outside.png\n"


def with_obj_visual(repo: Path, obj: bytes = OBJ, mtl: bytes = MTL) -> Path:
    """The ABB with link_1's visual an OBJ in meshes/visual/, its .mtl and texture beside it."""
    folder = repo / ABB / "meshes" / "visual"
    (folder / "textures").mkdir(parents=True)
    (folder / "link_1.obj").write_bytes(obj)
    (folder / "link_1.mtl").write_bytes(mtl)
    (folder / "textures" / "skin.png").write_bytes(b"\x89PNG not really")
    (repo / ABB / "meshes" / "unnamed.png").write_bytes(b"not named by anything")
    urdf = repo / ABB / "robot.urdf"
    text = urdf.read_text()
    urdf.write_text(text.replace(L1_VISUAL, "package://abb_irb2400/meshes/visual/link_1.obj"))
    return folder


def test_obj_material_library_and_its_textures_are_copied(repo: Path) -> None:
    """Before: the compiled OBJ named `mtllib link_1.mtl`, which build/ did not hold."""
    folder = with_obj_visual(repo)
    (repo / "outside.png").write_bytes(b"outside the robot")
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert copies[f"{OUT}/meshes/visual/link_1.mtl"] == MTL
    assert (
        copies[f"{OUT}/meshes/visual/textures/skin.png"]
        == (folder / "textures" / "skin.png").read_bytes()
    )
    # Files nothing names stay provenance; a reference out of meshes/ is not followed.
    assert f"{OUT}/meshes/unnamed.png" not in copies
    assert not [path for path in copies if "outside" in path]


@pytest.mark.parametrize(
    "reference",
    ["missing.mtl", "/etc/passwd", "C:\\model\\link_1.mtl", "../../robot.urdf", "http://x/y.mtl"],
)
def test_a_reference_that_is_not_a_file_in_meshes_is_not_followed(
    repo: Path, reference: str
) -> None:
    with_obj_visual(repo, obj=OBJ.replace(b"link_1.mtl", reference.encode()))
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert f"{OUT}/meshes/visual/link_1.obj" in copies
    assert sorted(p for p in copies if "visual/" in p) == [f"{OUT}/meshes/visual/link_1.obj"]


def test_a_symlinked_material_library_is_not_followed(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = with_obj_visual(repo)
    outside = tmp_path_factory.mktemp("outside") / "link_1.mtl"
    outside.write_bytes(MTL)
    (folder / "link_1.mtl").unlink()
    os.symlink(outside, folder / "link_1.mtl")
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert f"{OUT}/meshes/visual/link_1.mtl" not in copies


@pytest.mark.parametrize("padding", [0, 11 * 2**20], ids=["small", "float_array-over-10-mb"])
def test_collada_images_are_copied(repo: Path, padding: int) -> None:
    """COLLADA 1.4 names an image as <init_from> text, 1.5 in a <ref> child.

    A mesh whose <float_array> holds over 10 MB (libxml2's default text limit; Unitree B1's
    trunk) has its images copied too: they were silently left out of the description.
    """
    dae = repo / ABB / "meshes" / "link_1.dae"
    text = dae.read_text()
    start = text.index(">", text.index('<float_array id="Link_1-mesh-positions-array"')) + 1
    text = text[:start] + " " * padding + text[start:]
    images = (
        "<library_images>"
        '<image id="a"><init_from>./tex%20a.png</init_from></image>'
        '<image id="b"><init_from><ref>sub/b.jpg</ref></init_from></image>'
        "</library_images>"
    )
    head, sep, tail = text.partition("<library_")
    dae.write_text(head + images + sep + tail)
    (repo / ABB / "meshes" / "tex a.png").write_bytes(b"a")
    (repo / ABB / "meshes" / "sub").mkdir()
    (repo / ABB / "meshes" / "sub" / "b.jpg").write_bytes(b"b")
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert copies[f"{OUT}/meshes/tex a.png"] == b"a"
    assert copies[f"{OUT}/meshes/sub/b.jpg"] == b"b"


def test_urdf_material_textures_are_copied(repo: Path) -> None:
    """The Interbotix arms name a texture in a URDF <material>: build/ did not hold it."""
    meshes = repo / ABB / "meshes"
    (meshes / "textures").mkdir()
    (meshes / "textures" / "black.png").write_bytes(b"\x89PNG black")
    (meshes / "grey.png").write_bytes(b"\x89PNG grey")
    (repo / "outside.png").write_bytes(b"outside the robot")
    urdf = repo / ABB / "robot.urdf"
    materials = (
        '<material name="black"><texture filename="package://abb_irb2400/meshes/textures/'
        'black.png"/></material>'
        '<material name="other"><texture filename="package://other_robot/meshes/grey.png"/>'
        '</material><material name="out"><texture filename="package://abb_irb2400/meshes/../../'
        '../outside.png"/></material><material name="gone"><texture filename="package://'
        'abb_irb2400/meshes/missing.png"/></material><texture filename="package://abb_irb2400/'
        'meshes/grey.png"/>'
    )
    text = urdf.read_text()
    urdf.write_text(text.replace('<link name="base_link">', materials + '<link name="base_link">'))
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert copies[f"{OUT}/meshes/textures/black.png"] == b"\x89PNG black"
    # another package's texture, one out of meshes/, a missing one and a <texture> that is
    # no material's are not followed, as a mesh's own references are not
    assert sorted(path for path in copies if path.endswith(".png")) == [
        f"{OUT}/meshes/textures/black.png"
    ]


GLTF_URIS = {"buffers": [{"uri": "link_1%20geo.bin"}], "images": [{"uri": "tex/skin.png"}]}


@pytest.mark.parametrize(
    ("gltf", "copied"),
    [
        pytest.param(GLTF_URIS, ["link_1 geo.bin", "tex/skin.png"], id="buffers-and-images"),
        pytest.param(
            {
                "buffers": [{"uri": "data:application/octet-stream;base64,AAAA"}, {"uri": 3}, 4],
                "images": [{"uri": "../../../outside.png"}, {"uri": "/etc/passwd"}],
            },
            [],
            id="data-uri-and-outside-not-followed",
        ),
        pytest.param([1, 2], [], id="not-an-object"),
        pytest.param("[" * 100_000, [], id="not-json"),
    ],
)
def test_gltf_buffers_and_images_are_copied(repo: Path, gltf: object, copied: list[str]) -> None:
    """Before: a .gltf visual was copied without its .bin, so build/ served no geometry."""
    meshes = repo / ABB / "meshes"
    text = gltf if isinstance(gltf, str) else json.dumps(gltf)
    (meshes / "link_1.gltf").write_text(text)
    (meshes / "link_1 geo.bin").write_bytes(b"geometry")
    (meshes / "tex").mkdir()
    (meshes / "tex" / "skin.png").write_bytes(b"\x89PNG skin")
    (repo / "outside.png").write_bytes(b"outside the robot")
    urdf = repo / ABB / "robot.urdf"
    urdf.write_text(urdf.read_text().replace(L1_VISUAL, "package://abb_irb2400/meshes/link_1.gltf"))
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert copies[f"{OUT}/meshes/link_1.gltf"] == text.encode()
    named = sorted(
        p.removeprefix(f"{OUT}/meshes/") for p in copies if "link_1 " in p or "tex/" in p
    )
    assert named == copied
    assert not [path for path in copies if "outside" in path]


MTL_IN = MTL.replace(b"bump ../../outside.png\n", b"")  # every reference a file in meshes/
MISSING = "add the file at robots/abb_irb2400/meshes/visual/{}, or remove the reference"
RENAME = "rename the file to a plain name and name that, or remove the reference"
COPY_IN = "copy the file into meshes/ and name it by its path from meshes/visual/, or remove the "


def unserved(repo: Path) -> list[Finding]:
    """The companion_missing warnings of the ABB's sources, as validate and the build give them."""
    warnings = read_urdf_sources(repo, "abb_irb2400").warnings
    return [f for f in warnings if f.code == "companion_missing"]


# (obj, mtl, a file of meshes/visual/ to remove, (file in meshes/visual/, line, message, hint))
COMPANION_CASES = [
    pytest.param(
        OBJ,
        MTL_IN,
        "link_1.mtl",
        ("link_1.obj", "1", "mtllib names 'link_1.mtl', which does not exist", MISSING),
        id="material-library-missing",
    ),
    pytest.param(
        OBJ,
        MTL_IN,
        "textures/skin.png",
        ("link_1.mtl", "3", "map_Kd names 'textures/skin.png', which does not exist", MISSING),
        id="texture-missing",
    ),
    # PartNet's textured_objs/*.mtl name ../images/texture_0.jpg
    pytest.param(
        OBJ,
        MTL,
        "",
        ("link_1.mtl", "4", "bump names '../../outside.png', which is outside meshes/", COPY_IN),
        id="texture-outside-meshes",
    ),
    pytest.param(
        OBJ,
        MTL_IN + b"map_Ks C:\\tex\\s.png\n",
        "",
        (
            "link_1.mtl",
            "4",
            "map_Ks names 'C:\\\\tex\\\\s.png', which is an absolute path",
            COPY_IN,
        ),
        id="texture-absolute",
    ),
    # pybullet_data's Panda: its collision link6.mtl names D:\\dev\\pybullet_robots\\...\\
    # visual\\colors.png, the file copied in as meshes/visual/colors.png: the fix names it so
    pytest.param(
        OBJ,
        MTL_IN + b"map_Ks D:\\dev\\robot\\meshes\\unnamed.png\n",
        "",
        (
            "link_1.mtl",
            "4",
            "map_Ks names 'D:\\\\dev\\\\robot\\\\meshes\\\\unnamed.png', which is an absolute path",
            "name it '../unnamed.png', the one file of that name in meshes/ (meshes/unnamed.png), "
            "or remove the reference",
        ),
        id="texture-absolute-of-a-file-in-meshes",
    ),
    pytest.param(
        OBJ,
        MTL_IN + b"bump ../../../unnamed.png\n",
        "",
        (
            "link_1.mtl",
            "4",
            "bump names '../../../unnamed.png', which is outside meshes/",
            "name it '../unnamed.png', the one file of that name in meshes/",
        ),
        id="texture-outside-of-a-file-in-meshes",
    ),
    pytest.param(
        OBJ,
        MTL_IN + b"map_Ks .s.png\n",
        "",
        ("link_1.mtl", "4", "map_Ks names '.s.png', which is a name the build never", RENAME),
        id="texture-name-not-a-source",
    ),
]


@pytest.mark.parametrize(("obj", "mtl", "remove", "expected"), COMPANION_CASES)
def test_companion_missing_names_the_referring_line_and_the_fix(
    repo: Path, obj: bytes, mtl: bytes, remove: str, expected: tuple[str, str, str, str]
) -> None:
    """Before: a missing .mtl or texture was left out of the description without a word
    (`pipeline validate` said ok), so the planner's viewer drew the mesh untextured."""
    folder = with_obj_visual(repo, obj, mtl)
    if remove:
        (folder / remove).unlink()
    name, line, message, hint = expected
    [finding] = unserved(repo)
    assert (finding.file, finding.place) == (f"{ABB}/meshes/visual/{name}", line)
    assert finding.message.startswith(message), finding.message
    assert finding.hint.startswith(hint.format(remove)), finding.hint
    assert finding.severity is Severity.WARNING


def test_companion_missing_fixes_followed_serve_the_file(repo: Path) -> None:
    """The fixes work: the missing file added; the file out of meshes/ copied in and named by
    its path from the .mtl's folder."""
    folder = with_obj_visual(repo, mtl=MTL.replace(b"textures/skin.png", b"gone.png"))
    assert len(unserved(repo)) == 2
    (folder / "gone.png").write_bytes(b"added")
    (folder / "textures" / "outside.png").write_bytes(b"copied in")
    mtl = MTL.replace(b"textures/skin.png", b"gone.png").replace(
        b"../../outside.png", b"textures/outside.png"
    )
    (folder / "link_1.mtl").write_bytes(mtl)
    assert unserved(repo) == []
    copies = make_urdf_copies(repo, "abb_irb2400")
    assert copies[f"{OUT}/meshes/visual/gone.png"] == b"added"
    assert copies[f"{OUT}/meshes/visual/textures/outside.png"] == b"copied in"


def test_companion_missing_is_one_warning_per_file_however_often_named(repo: Path) -> None:
    """Atlas's COLLADA meshes name each texture outside meshes/ up to 16 times: one line each."""
    with_obj_visual(repo, mtl=MTL_IN + b"map_Ks gone.png\nmap_Ka gone.png\nbump ./gone.png\n")
    [finding] = unserved(repo)
    assert finding.place == "4"
    assert "(as are 2 other references to it)" in finding.message


def test_companion_missing_of_a_gltf_buffer_and_not_of_embedded_data(repo: Path) -> None:
    """A glTF file has no lines: the warning names the file. A data: URI is no file's name."""
    gltf = {"buffers": [{"uri": "data:application/octet-stream;base64,AAAA"}, {"uri": "g.bin"}]}
    (repo / ABB / "meshes" / "link_1.gltf").write_text(json.dumps(gltf))
    urdf = repo / ABB / "robot.urdf"
    urdf.write_text(urdf.read_text().replace(L1_VISUAL, "package://abb_irb2400/meshes/link_1.gltf"))
    [finding] = unserved(repo)
    assert (finding.file, finding.place) == (f"{ABB}/meshes/link_1.gltf", "")
    assert finding.message.startswith("\"uri\" names 'g.bin', which does not exist")


YELLOW = '<material name="yellow">\n        <color rgba="1 1 0 1"/>'


@pytest.mark.parametrize(
    ("filename", "message", "hint"),
    [
        (
            "package://abb_irb2400/meshes/tex/skin.png",
            "<texture filename> names 'package://abb_irb2400/meshes/tex/skin.png', which does "
            "not exist",
            "add the file at robots/abb_irb2400/meshes/tex/skin.png, or remove the reference",
        ),
        (
            "package://other_arm/meshes/skin.png",
            "<texture filename> names 'package://other_arm/meshes/skin.png', which is not "
            "package://abb_irb2400/meshes/<file>",
            "copy the file into meshes/ and name it package://abb_irb2400/meshes/<file>, or ",
        ),
    ],
    ids=["urdf-texture-missing", "urdf-texture-other-package"],
)
def test_companion_missing_a_urdf_texture_the_description_cannot_serve(
    repo: Path, filename: str, message: str, hint: str
) -> None:
    """A <material><texture> naming a missing file or another package's was left as it was
    without a word, and the compiled URDF named a texture no consumer could find."""
    urdf = repo / ABB / "robot.urdf"
    text = urdf.read_text()
    assert text.count(YELLOW) >= 1
    urdf.write_text(text.replace(YELLOW, f'{YELLOW}<texture filename="{filename}"/>', 1))
    line = text[: text.index(YELLOW)].count("\n") + 2  # the <color> line holds the <texture>
    [finding] = unserved(repo)
    assert (finding.file, finding.place) == (f"{ABB}/robot.urdf", str(line))
    assert finding.message.startswith(message), finding.message
    assert finding.hint.startswith(hint), finding.hint
    assert finding.severity is Severity.WARNING


def test_companion_missing_of_another_package_names_the_copy_in_meshes(repo: Path) -> None:
    """An Interbotix arm's <texture> still names its ROS package once its file is copied into
    meshes/: the fix gave `package://<model_id>/meshes/<file>` as it stood, not the URI to write."""
    (repo / ABB / "meshes" / "tex").mkdir()
    (repo / ABB / "meshes" / "tex" / "interbotix_black.png").write_bytes(b"\x89PNG black")
    urdf = repo / ABB / "robot.urdf"
    filename = "package://trossen_descriptions/meshes/interbotix_black.png"
    urdf.write_text(
        urdf.read_text().replace(YELLOW, f'{YELLOW}<texture filename="{filename}"/>', 1)
    )
    [finding] = unserved(repo)
    assert finding.hint == (
        "copy the file into meshes/ and name it package://abb_irb2400/meshes/<file> "
        "(package://abb_irb2400/meshes/tex/interbotix_black.png for "
        "meshes/tex/interbotix_black.png), or remove the <texture>"
    )
