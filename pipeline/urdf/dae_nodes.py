"""COLLADA <instance_node>s that Tesseract's mesh reader (assimp) cannot expand.

A <node> that instances itself, directly or through other nodes, made assimp recurse until
Tesseract's URDF parser crashed (SIGSEGV), visual mesh or collision; a chain of 10-fold instance
nodes in a 7 kB file made it allocate 8 GB and fail (std::bad_alloc).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.findings import Finding
from pipeline.strict_xml import source_line

if TYPE_CHECKING:
    from lxml import etree


# The geometry instances a COLLADA scene may expand to through <instance_node>: far more than a
# robot part's file holds, far fewer than the 10^7 (seven nodes of 10 instances each, chained in
# a 7 kB file) with which Tesseract's mesh reader (assimp) allocated 8 GB and failed.
INSTANCE_LIMIT = 100_000

_Edge = tuple["etree._Element", "etree._Element | None"]


def _local(element: etree._Element) -> str:
    """An element's name without its namespace ('' for a comment or processing instruction)."""
    return element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""


def below(node: etree._Element, by_id: dict[str, etree._Element]) -> list[_Edge]:
    """The nodes a COLLADA <node> holds, and those its <instance_node url="#id">s name (each
    with that <instance_node>); a URL into another file is not followed."""
    found: list[_Edge] = []
    for child in node:
        if _local(child) == "node":
            found.append((child, None))
        elif _local(child) == "instance_node" and child.get("url", "").startswith("#"):
            target = by_id.get(child.get("url", "")[1:])
            if target is not None:
                found.append((target, child))
    return found


def dae_instancing(root: etree._Element, display: str) -> list[Finding]:
    """A finding on a COLLADA node that instances itself through <instance_node>s (assimp
    recurses into it until Tesseract's process crashes), or on a scene that they expand past
    INSTANCE_LIMIT geometry instances. Walked without recursion: nodes nest 2,048 deep."""
    if next(root.iter("{*}instance_node"), None) is None:
        return []
    nodes = list(root.iter("{*}node"))  # held, so that each element keeps its id()
    by_id = {str(node.get("id")): node for node in nodes if node.get("id")}
    count: dict[int, int] = {}  # id(node) -> the geometry instances it expands to
    for start in nodes:
        if id(start) in count:
            continue
        path = {id(start)}  # the nodes being walked, the start's down to the top of the stack
        stack = [(start, iter(below(start, by_id)))]
        while stack:
            node, rest = stack[-1]
            for child, via in rest:
                if via is not None and id(child) in path:  # a node's own children are a tree
                    message = (
                        f"is a COLLADA file whose <node id={child.get('id')!r}> instances "
                        f"itself through <instance_node url={via.get('url')!r}>: Tesseract's "
                        "mesh reader (assimp) recurses into it until the planner crashes"
                    )
                    hint = (
                        "remove the <instance_node> that closes the loop, or export the mesh again"
                    )
                    return [
                        Finding("mesh_not_a_mesh", display, str(source_line(via)), message, hint)
                    ]
                if id(child) not in count:
                    path.add(id(child))
                    stack.append((child, iter(below(child, by_id))))
                    break
            else:
                stack.pop()
                path.discard(id(node))
                own = sum(_local(child) == "instance_geometry" for child in node)
                count[id(node)] = own + sum(count[id(c)] for c, _ in below(node, by_id))
    for scene in root.iter("{*}visual_scene"):
        tops = [child for child in scene if _local(child) == "node"]
        total = sum(count[id(top)] for top in tops)
        if total > INSTANCE_LIMIT:
            largest = max(tops, key=lambda top: count[id(top)])
            message = (
                f"is a COLLADA file whose <instance_node>s expand its scene to {total:,} "
                f"instances of its geometries (more than {INSTANCE_LIMIT:,}): Tesseract's mesh "
                "reader (assimp) copies each one and runs out of memory"
            )
            hint = "export the mesh again with repeated parts joined into one geometry"
            line = str(source_line(largest))
            return [Finding("mesh_not_a_mesh", display, line, message, hint)]
    return []
