"""Strict XML: no DTD, no entities, no network; the line each element starts on."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml import etree

from pipeline.strict_io import XML_LIMIT, read_bytes, refusal

# A number as C++ URDF/SRDF readers parse it: ASCII digits, an optional exponent. Python's
# float() also takes "1_0", "\u0661" (an Arabic-Indic one), "infinity" and surrounding spaces.
DECIMAL = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
# The same, whole: what urdfdom and Tesseract parse as a URDF number.
NUMBER = re.compile(DECIMAL, re.ASCII)
# How many lines up a start tag that closes on one line may have opened.
_START_TAG_LINES = 200


def source_line(node: etree._Element) -> int:
    """The line an element starts on (1 when lxml does not know it)."""
    line = getattr(node, "sourceline", None)
    return line if isinstance(line, int) else 1


def _xml_parser(huge_text: bool) -> etree.XMLParser:
    from lxml import etree

    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=huge_text,
        remove_pis=True,
    )


# libxml2's messages whose fix is one edit; pybullet_data's URDFs meet both
_XML_HINTS = (
    ("Unsupported version", 'write <?xml version="1.0"?>: XML has no version 0.0'),
    (
        "XML declaration allowed only at the start",
        "remove what stands before <?xml ...?> (blank lines too): it must open the file",
    ),
)


_EXTRA_CONTENT = "Extra content at the end of the document"

# libxml2's message for an element, or an attribute, of a prefix no xmlns: declares
_UNDECLARED = re.compile(r"Namespace prefix (\S+) (?:for (\S+) )?on (\S+) is not defined")
# Gazebo's extensions in old URDFs (roboschool's fetch.urdf <sensor:camera>): the namespaces
# PR2's URDF declares them in; any absolute URI declares a prefix no reader looks up
_GAZEBO = frozenset({"sensor", "controller", "interface", "body", "geom"})
_GAZEBO_URI = "http://playerstage.sourceforge.net/gazebo/xmlschema/#"
_ROOT = re.compile(rb"<!--.*?-->|<\?.*?\?>|<!\[CDATA\[.*?\]\]>|<([^\s/>!?]+)", re.S)


def undeclared_prefix(message: str) -> str | None:
    """The prefix an invalid_xml finding's message says no xmlns: declares, else None."""
    match = re.match(r"the namespace prefix (\S+): ", message)
    return match.group(1) if match else None


def _undeclared(message: str, data: bytes) -> tuple[str, str] | None:
    """Message and hint for an element or attribute of an undeclared namespace prefix: the
    declaration to add on the root element (named from `data`), or what to remove."""
    match = _UNDECLARED.match(message)
    if match is None:
        return None
    prefix, attribute, element = match.groups()
    what = f"the attribute {prefix}:{attribute} of <{element}>" if attribute else ""
    what = what or f"the <{prefix}:{element}> element"
    root = next((m.group(1) for m in _ROOT.finditer(data) if m.group(1)), b"").decode(
        "utf-8", "replace"
    )
    uri = f"{_GAZEBO_URI}{prefix}" if prefix in _GAZEBO else f"urn:{prefix}"
    return (
        f"the namespace prefix {prefix}: of {what} is declared by no xmlns:{prefix}, which "
        "namespace-aware XML readers require",
        f'declare it on the root element, <{root or "..."} xmlns:{prefix}="{uri}" ...> (any '
        f"absolute URI), or remove {what}",
    )


def _extra_content(data: bytes, line: int, column: int) -> tuple[str, str]:
    """Message and hint naming what follows the root element, which may be invisible (NUL).

    libxml2 counts the column in characters of the line, from 1.
    """
    lines = data.split(b"\n")[line - 1 :]
    first = lines[0].decode("utf-8", "replace")[max(0, column - 1) :].encode() if lines else b""
    rest = b"\n".join([first, *lines[1:]]).lstrip(b" \t\r\n")
    if rest[:1] == b"\0":
        count = rest.count(b"\0")
        only = rest.strip(b"\0 \t\r\n") == b"" and count > 1
        what = f"{count} NUL bytes" if only else "a NUL byte"
    elif rest[:1] == b"<":
        what = "a second element, " + rest[:40].split(b">")[0].decode("utf-8", "replace") + ">"
    elif rest[:1] and rest[0] < 0x20:
        what = f"the control byte 0x{rest[0]:02x}"
    else:
        what = repr(rest[:20].decode("utf-8", "replace"))  # '' when libxml2's place is off
    return (
        f"{_EXTRA_CONTENT}: {what} after the root element's end tag",
        "delete everything after the root element's end tag: an XML document holds one root "
        "element and nothing but comments and blank space after it",
    )


def _over_limit(message: str) -> tuple[str, str]:
    """Message and hint for libxml2's size and depth limits, without its parser option."""
    if message.startswith("Excessive depth"):
        # the depth libxml2 states: 256, or 2048 with huge_text (a COLLADA mesh)
        depth = re.search(r"\d+", message)
        return (
            f"nests elements more than {depth.group() if depth else 256} deep",
            "nest elements less deeply: a robot description needs a few levels",
        )
    return (
        "holds a text or attribute value longer than 10 MB",
        "keep each text and attribute value under 10 MB: a robot description needs none that long",
    )


def parse_xml(data: bytes, display: str, *, huge_text: bool = False) -> etree._Element:
    """Parse XML resolving no entities, loading no DTD, reading no network.

    `huge_text` lifts libxml2's 10 MB limit on one text node (and its nesting limit from 256 to
    2048 levels), for COLLADA meshes: an exporter writes all of a mesh's coordinates into one
    <float_array>, and a real robot's trunk mesh (Unitree B1, Go1) holds more than 10 MB there.
    Entities and DTDs, what the limits guard against, are refused before parsing either way.
    """
    from lxml import etree

    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        index = data.find(b"<!DOCTYPE")
        index = data.find(b"<!ENTITY") if index < 0 else index
        line = data.count(b"\n", 0, index) + 1
        raise refusal(
            "doctype_refused",
            display,
            f"{line}",
            "contains a DOCTYPE or entity declaration",
            "remove the DOCTYPE; robot descriptions need no DTD or entities",
        )
    try:
        root = etree.fromstring(data, _xml_parser(huge_text))
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or 1
        message = str(exc.msg).split(", line ")[0]
        hint = next((h for m, h in _XML_HINTS if message.startswith(m)), "fix the XML syntax")
        if message.startswith(_EXTRA_CONTENT):
            message, hint = _extra_content(data, line, exc.position[1] if exc.position else 1)
        elif "XML_PARSE_HUGE" in message:  # libxml2's option, which a user cannot set
            message, hint = _over_limit(message)
        else:
            message, hint = _undeclared(message, data) or (message, hint)
        raise refusal("invalid_xml", display, f"{line}", message, hint) from None
    if root is None:
        raise refusal("invalid_xml", display, "1", "the document is empty", "write an XML document")
    docinfo = root.getroottree().docinfo
    if getattr(docinfo, "doctype", "") or docinfo.internalDTD is not None:
        # the byte search above misses a DOCTYPE in another encoding (UTF-16, say)
        raise refusal(
            "doctype_refused",
            display,
            "1",
            "contains a DOCTYPE or entity declaration",
            "remove the DOCTYPE; robot descriptions need no DTD or entities",
        )
    _mark_start_lines(root, data)
    for node in root.iter():
        if isinstance(node, etree._Entity):
            raise refusal(
                "entity_refused",
                display,
                f"{source_line(node)}",
                f"uses the entity &{node.name};",
                "write the text out in full",
            )
    return root


def _mark_start_lines(root: etree._Element, data: bytes) -> None:
    """Point each element at the line its start tag opens on: lxml gives the line it closes on.

    A start tag holds no other `<` (XML escapes it in attribute values), so the nearest line at
    or above lxml's that holds `<name` is where it opens. A document not in an ASCII-compatible
    encoding (UTF-16) keeps lxml's lines.
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\0" in data[:4]:
        return
    lines = data.split(b"\n")
    for node in root.iter():
        line = node.sourceline
        if not isinstance(node.tag, str) or not isinstance(line, int) or line > len(lines):
            continue
        local = node.tag.rpartition("}")[2]
        name = f"{node.prefix}:{local}" if node.prefix else local
        opening = re.compile(b"<" + re.escape(name.encode()) + rb"(?=[\s/>]|$)")
        for start in range(line, max(0, line - _START_TAG_LINES), -1):
            if opening.search(lines[start - 1]):
                node.sourceline = start
                break


def load_xml(path: Path, display: str, limit: int = XML_LIMIT) -> etree._Element:
    """Read and strictly parse an XML file."""
    return parse_xml(read_bytes(path, display, limit), display)
