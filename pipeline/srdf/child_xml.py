"""The srdf child's reading of the envelope's `xml` value (child.py): serialised to text as
ElementTree or lxml writes it, an element inside itself or nested too deep told instead, a text
over the XML files' limit sent as its size.

Imports no pipeline code: child.py loads it from its file (see child.py), in a process that
must not import the compiler.
"""

from __future__ import annotations

import sys
from typing import Any

# pipeline.strict_io.XML_LIMIT, the most XML a file of the compiler's may hold: a larger text
# returned is not sent (through the result JSON, by both runs) but its size
_XML_LIMIT = 32 * 1024 * 1024


def serialise(xml: Any) -> tuple[str, str]:
    """(kind, text) of the envelope's xml value."""
    import xml.etree.ElementTree as ET

    if isinstance(xml, str):
        return "string", str.__str__(xml)
    if isinstance(xml, ET.ElementTree):
        xml = xml.getroot()
    if isinstance(xml, ET.Element):
        looped = _inside_itself(xml)
        if looped == _TOO_DEEP:  # ET.tostring recurses: a RecursionError past about 1000
            return "deep", str(_XML_DEPTH)
        if looped is not None:  # ET.tostring would walk it without end
            return "cyclic", f"<{looped[0]}> is within its own <{looped[1]}>"
        return "element", ET.tostring(xml, encoding="unicode")
    if "lxml" in sys.modules:
        from lxml import etree

        if isinstance(xml, etree._ElementTree):
            xml = xml.getroot()
        if isinstance(xml, etree._Element):
            return "element", etree.tostring(xml, encoding="unicode")
    return "other", type(xml).__name__


def utf8_size(text: str) -> str | None:
    """How many bytes `text` takes in UTF-8 when over the limit, None when not; a text of more
    characters than that is not encoded to count them (each takes one byte or more)."""
    if len(text) > _XML_LIMIT:
        return str(len(text)) if text.isascii() else f"more than {len(text)}"
    size = len(text.encode("utf-8", "surrogatepass"))
    return str(size) if size > _XML_LIMIT else None


# libxml2's nesting limit, which the XML reader keeps (pipeline.strict_xml)
_XML_DEPTH = 256
_TOO_DEEP = ("", "")


def _inside_itself(root: Any) -> tuple[str, str] | None:
    """(tag, tag of its child holding it) of an ElementTree element found inside itself, None
    when the elements form a tree (lxml refuses such an append; ElementTree takes it);
    _TOO_DEEP when they nest deeper than the XML reader reads."""
    done: set[int] = set()  # elements walked to the end: met again, they hold no loop
    path = {id(root)}
    stack = [(root, iter(root))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            path.discard(id(node))
            done.add(id(node))
        elif id(child) in path:
            below = stack[[id(n) for n, _ in stack].index(id(child)) + 1 :] or [(node, None)]
            return str(child.tag), str(below[0][0].tag)
        elif id(child) not in done:
            if len(stack) >= _XML_DEPTH:
                return _TOO_DEEP
            path.add(id(child))
            stack.append((child, iter(child)))
    return None
