"""COLLADA <instance_node>s that Tesseract's mesh reader (assimp) cannot expand, on any mesh.

A node that instances itself crashed Tesseract's URDF parser (SIGSEGV, 2026-12-05, a visual DAE
that `pipeline validate` accepted); a chain of 10-fold instance nodes in a 7 kB file made it
allocate 8 GB and fail with std::bad_alloc.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from tests.meshfiles import cube_dae, instance

ABB = "robots/abb_irb2400"
VISUAL = "package://abb_irb2400/meshes/link_1.dae"
COLLISION = "package://abb_irb2400/meshes/link_1.stl"


def with_library(nodes: list[str], top: str = '<instance_node url="#top"/>') -> str:
    """A cube DAE whose scene instances library node `top`, with `nodes` in <library_nodes>."""
    text = cube_dae({"g": [(None, 0.0)]}, [f'<node id="scene_node">{top}</node>'])
    library = "  <library_nodes>" + "".join(nodes) + "</library_nodes>\n"
    return text.replace("  <library_visual_scenes>", library + "  <library_visual_scenes>", 1)


def fold(levels: int) -> list[str]:
    """Library nodes n0 (the cube) .. n<levels>, each instancing the one below 10 times; top."""
    nodes = ['<node id="n0">' + instance("g") + "</node>"]
    for k in range(1, levels + 1):
        kids = "".join(
            f'<node><translate>{i} 0 0</translate><instance_node url="#n{k - 1}"/></node>'
            for i in range(10)
        )
        nodes.append(f'<node id="n{k}">{kids}</node>')
    return [*nodes, f'<node id="top"><instance_node url="#n{levels}"/></node>']


CYCLE = with_library(['<node id="top">' + instance("g") + '<instance_node url="#top"/></node>'])
# top -> a -> b -> a: the loop closes at b's <instance_node>
LOOP = with_library(
    [
        '<node id="top"><instance_node url="#a"/></node>',
        '<node id="a">' + instance("g") + '<node><instance_node url="#b"/></node></node>',
        '<node id="b"><instance_node url="#a"/></node>',
    ]
)


def validate(repo: Path, uri: str, name: str, text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """Make the link_1 mesh at `uri` the file `name` holding `text`; `pipeline validate`."""
    (repo / ABB / "meshes" / name).write_text(text)
    urdf = repo / ABB / "robot.urdf"
    urdf.write_text(urdf.read_text().replace(uri, f"package://abb_irb2400/meshes/{name}", 1))
    monkeypatch.chdir(repo)
    return main(["validate", "abb_irb2400"])


def line_of(text: str, needle: str) -> int:
    """The line of `text` holding the first `needle`."""
    return text.count("\n", 0, text.index(needle)) + 1


@pytest.mark.parametrize("uri", [VISUAL, COLLISION], ids=["visual", "collision"])
@pytest.mark.parametrize(
    ("text", "node", "url", "closer"),
    [(CYCLE, "top", "#top", "top"), (LOOP, "a", "#a", "b")],
    ids=["mesh_not_a_mesh-dae-node-instances-itself", "mesh_not_a_mesh-dae-instance-loop"],
)
def test_an_instance_node_cycle_is_refused(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    uri: str,
    text: str,
    node: str,
    url: str,
    closer: str,
) -> None:
    """One line naming the node instanced again and the <instance_node> that closes the loop
    (in the library node `closer`)."""
    assert validate(repo, uri, "loop.dae", text, monkeypatch) == 2
    closing = text.index(f'<instance_node url="{url}"/>', text.index(f'<node id="{closer}">'))
    line = text.count("\n", 0, closing) + 1
    assert capsys.readouterr().err.splitlines() == [
        f"{ABB}/meshes/loop.dae:{line}: mesh_not_a_mesh: is a COLLADA file whose <node "
        f"id='{node}'> instances itself through <instance_node url='{url}'>: Tesseract's mesh "
        "reader (assimp) recurses into it until the planner crashes; remove the <instance_node> "
        "that closes the loop, or export the mesh again"
    ]


@pytest.mark.parametrize("uri", [VISUAL, COLLISION], ids=["visual", "collision"])
def test_instance_nodes_expanding_past_the_limit_are_refused(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], uri: str
) -> None:
    """Six 10-fold levels are 10^6 instances of the cube, over the 100,000 a robot part needs."""
    text = with_library(fold(6))
    assert validate(repo, uri, "fold.dae", text, monkeypatch) == 2
    line = line_of(text, '<node id="scene_node">')
    assert capsys.readouterr().err.splitlines() == [
        f"{ABB}/meshes/fold.dae:{line}: mesh_not_a_mesh: is a COLLADA file whose "
        "<instance_node>s expand its scene to 1,000,000 instances of its geometries (more than "
        "100,000): Tesseract's mesh reader (assimp) copies each one and runs out of memory; "
        "export the mesh again with repeated parts joined into one geometry"
    ]


def test_instance_nodes_within_the_limit_and_shared_nodes_are_read(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """10^4 instances, and one node instanced from two places (no loop), are a mesh as any."""
    text = with_library(fold(4))
    shared = with_library(
        [
            '<node id="top"><instance_node url="#a"/><instance_node url="#a"/></node>',
            '<node id="a">' + instance("g") + "</node>",
        ]
    )
    assert validate(repo, VISUAL, "fold.dae", text, monkeypatch) == 0
    assert validate(repo, COLLISION, "shared.dae", shared, monkeypatch) == 0
    assert "validate: abb_irb2400 ok" in capsys.readouterr().out
