"""COLLADA <instance_node>s that Tesseract's mesh reader (assimp) cannot expand.

A <node> that instances itself, directly or through other nodes, made assimp recurse until
Tesseract's URDF parser crashed (SIGSEGV), visual mesh or collision; a chain of 10-fold instance
nodes in a 7 kB file made it allocate 8 GB and fail (std::bad_alloc).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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


def local_name(element: etree._Element) -> str:
    """An element's name without its namespace ('' for a comment or processing instruction)."""
    return element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""


def below(node: etree._Element, by_id: dict[str, etree._Element]) -> list[_Edge]:
    """The nodes a COLLADA <node> holds, and those its <instance_node url="#id">s name (each
    with that <instance_node>); a URL into another file is not followed."""
    found: list[_Edge] = []
    for child in node:
        if local_name(child) == "node":
            found.append((child, None))
        elif local_name(child) == "instance_node" and child.get("url", "").startswith("#"):
            target = by_id.get(child.get("url", "")[1:])
            if target is not None:
                found.append((target, child))
    return found


def expansions(
    root: etree._Element, own: Callable[[etree._Element], int]
) -> tuple[dict[etree._Element, int], _Edge | None]:
    """What each <node> of a COLLADA file expands to (node -> the sum of `own` over it and
    every node it holds or instances, as often as it does), and the first <instance_node> found
    closing a loop (a node instancing itself, counted once), or None. Walked without recursion:
    nodes nest 2,048 deep."""
    nodes = list(root.iter("{*}node"))
    by_id = {str(node.get("id")): node for node in nodes if node.get("id")}
    count: dict[etree._Element, int] = {}  # holding each node, which keeps its proxy
    loop: _Edge | None = None
    for start in nodes:
        if start in count:
            continue
        path = {start}  # the nodes being walked, the start's down to the top of the stack
        # (node, its edges not yet walked, the <instance_node> it was reached by)
        stack: list[tuple[etree._Element, Iterator[_Edge], etree._Element | None]]
        stack = [(start, iter(below(start, by_id)), None)]
        while stack:
            node, rest, _ = stack[-1]
            for child, via in rest:
                if child in path:  # a loop: closed by the first instance on it
                    if loop is None:
                        at = [n for n, _, _ in stack].index(child)
                        ring = [(child, via), *((n, v) for n, _, v in stack[at + 1 :])]
                        loop = next((n, v) for n, v in ring if v is not None)
                elif child not in count:
                    path.add(child)
                    stack.append((child, iter(below(child, by_id)), via))
                    break
            else:
                stack.pop()
                path.discard(node)
                inner = sum(count.get(c, 0) for c, _ in below(node, by_id))
                count[node] = own(node) + inner
    return count, loop


def dae_instancing(root: etree._Element, display: str) -> list[Finding]:
    """A finding on a COLLADA node that instances itself through <instance_node>s (assimp
    recurses into it until Tesseract's process crashes), or on a scene that they expand past
    INSTANCE_LIMIT geometry instances."""
    if next(root.iter("{*}instance_node"), None) is None:
        return []
    count, loop = expansions(
        root, lambda node: sum(local_name(child) == "instance_geometry" for child in node)
    )
    if loop is not None:
        child, via = loop
        assert via is not None
        message = (
            f"is a COLLADA file whose <node id={child.get('id')!r}> instances itself through "
            f"<instance_node url={via.get('url')!r}>: Tesseract's mesh reader (assimp) recurses "
            "into it until the planner crashes"
        )
        hint = "remove the <instance_node> that closes the loop, or export the mesh again"
        return [Finding("mesh_not_a_mesh", display, str(source_line(via)), message, hint)]
    for scene in root.iter("{*}visual_scene"):
        tops = [child for child in scene if local_name(child) == "node"]
        total = sum(count[top] for top in tops)
        if total > INSTANCE_LIMIT:
            largest = max(tops, key=lambda top: count[top])
            message = (
                f"is a COLLADA file whose <instance_node>s expand its scene to {total:,} "
                f"instances of its geometries (more than {INSTANCE_LIMIT:,}): Tesseract's mesh "
                "reader (assimp) copies each one and runs out of memory"
            )
            hint = "export the mesh again with repeated parts joined into one geometry"
            line = str(source_line(largest))
            return [Finding("mesh_not_a_mesh", display, line, message, hint)]
    return []
