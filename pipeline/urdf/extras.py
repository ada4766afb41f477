"""URDF elements the compiler does not model but Tesseract's URDF parser reads and refuses.

Tesseract (tesseract_urdf) throws on the whole URDF when one of these is malformed, so a
description that passed the model's rules would still not load: the `<robot version>`, a
joint's `<limit effort acceleration jerk>`, `<calibration>`, `<dynamics>`,
`<safety_controller>` and `<axis>`, the materials of visuals and of the robot, the
separators of its lists of numbers as they stand in the file, its encoding (UTF-8), and
where its processing instructions stand.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from lxml import etree

from pipeline.findings import Finding, Severity
from pipeline.strict_xml import NUMBER, source_line

_Add = Callable[..., None]  # (code, element, message, hint[, severity])


def extra_findings(root: etree._Element, display: str, data: bytes) -> list[Finding]:
    """Findings for what Tesseract parses beyond the model: version, joint tags, materials,
    list separators."""
    out: list[Finding] = []

    def add(
        code: str,
        node: etree._Element,
        message: str,
        hint: str,
        severity: Severity = Severity.ERROR,
    ) -> None:
        out.append(Finding(code, display, str(source_line(node)), message, hint, severity))

    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # lxml decodes what the XML declaration names; tinyxml2, Tesseract's, reads UTF-8 only
        declared = root.getroottree().docinfo.encoding
        out.append(
            Finding(
                "not_utf8",
                display,
                str(data.count(b"\n", 0, exc.start) + 1),
                f"is not UTF-8 (declared {declared}): Tesseract's parser reads UTF-8 only, so it "
                "refuses UTF-16 and reads Latin-1 names as other names than the SRDF's",
                'save the URDF as UTF-8, with encoding="UTF-8" or no encoding declared',
            )
        )

    version = root.get("version")
    if version is not None and not re.fullmatch(r"1(\.0*)?", version.strip()):
        add(
            "unsupported_urdf_version",
            root,
            f'<robot version="{version}">: Tesseract reads URDF version 1 only',
            'remove version, or write version="1.0"',
        )
    for joint in root.findall("joint"):
        _joint(joint, add)
    _materials(root, add)
    _separators(root, data, add)
    _instructions(data, add)
    return out


def _instructions(data: bytes, add: _Add) -> None:
    """Each `<?...?>` tinyxml2 (Tesseract's parser) refuses: it takes every one for an XML
    declaration, which may stand only at the top, before every comment and element."""
    # the document passed parse_xml's refusals; this parser keeps what that one drops
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(data, parser)
    top = list(root.itersiblings(preceding=True))[::-1]
    first_other = next((i for i, n in enumerate(top) if not _is_instruction(n)), len(top))
    misplaced = [n for n in top[first_other:] if _is_instruction(n)]
    misplaced += [n for n in root.iter() if _is_instruction(n)]
    misplaced += [n for n in root.itersiblings() if _is_instruction(n)]
    for node in misplaced:
        # lxml reads the target as str; its stubs allow bytes
        target = node.target if isinstance(node, etree._ProcessingInstruction) else ""
        target = target.decode() if isinstance(target, bytes) else target
        add(
            "misplaced_processing_instruction",
            node,
            f"<?{target} ...?> stands below a comment or an element: Tesseract's parser "
            "allows <?...?> only at the top of the file and refuses the whole URDF",
            "remove it, or move it above every comment and the <robot> element",
        )


def _is_instruction(node: etree._Element) -> bool:
    return isinstance(node, etree._ProcessingInstruction)


# Tesseract splits these on " " alone. An XML parser turns a tab or line break written in an
# attribute into a space (lxml does, so the model reads the numbers); tinyxml2, Tesseract's,
# keeps it, and refuses the whole URDF. (Written as &#9; the model reads and refuses it.)
_LISTS = {"origin": ("xyz", "rpy"), "axis": ("xyz",), "color": ("rgba",), "mesh": ("scale",)}
_LISTS |= {"box": ("size",)}
_READ = {"link", "joint", "visual", "collision", "inertial", "geometry", "material"}
_TOKENS = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<([^\s/>!?][^\s/>]*)((?:\s+[^\s=/>]+\s*=\s*"
    r"(?:\"[^\"]*\"|'[^']*'))*)\s*/?>",
    re.S,
)
_ATTRIBUTE = re.compile(r"([^\s=/>]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")


def comma_spaced(text: str, count: int) -> str | None:
    """`text` with its commas made spaces when that is `count` finite numbers, as a URDF
    exported with Python's or a spreadsheet's lists writes them (armar's ARMAR-6: rpy="1.5707963,
    1.3089969 1.5707963"), which Tesseract refuses; else None."""
    parts = text.replace(",", " ").split()
    good = "," in text and len(parts) == count and all(NUMBER.fullmatch(p) for p in parts)
    return " ".join(parts) if good and all(math.isfinite(float(p)) for p in parts) else None


def _separators(root: etree._Element, data: bytes, add: _Add) -> None:
    text = data.decode("utf-8", "replace")
    starts = [m.group(2) for m in _TOKENS.finditer(text) if m.group(1)]
    elements = [e for e in root.iter() if isinstance(e.tag, str)]
    if len(starts) != len(elements):  # not expected of a document lxml read; checked nothing
        return
    for element, attributes in zip(elements, starts, strict=True):
        # only where Tesseract reads them: not inside <gazebo>, <transmission>, ...
        outer = [str(a.tag) for a in element.iterancestors()][:-1]
        names = _LISTS.get(str(element.tag), ()) if _READ.issuperset(outer) else ()
        for m in _ATTRIBUTE.finditer(attributes if names else ""):
            raw = m.group(2) if m.group(2) is not None else m.group(3)
            if m.group(1) in names and re.search(r"[\t\r\n]", raw):
                add(
                    "invalid_number",
                    element,
                    f"<{element.tag} {m.group(1)}> separates its numbers with a tab or a line "
                    "break: Tesseract splits on spaces only and refuses the URDF",
                    "write the numbers on one line, separated by spaces",
                )


def _number(node: etree._Element, attr: str, add: _Add, required: bool = False) -> bool:
    """Whether `attr` holds one finite decimal; a finding when it does not (or is missing)."""
    text = node.get(attr)
    if text is None:
        if required:
            add(
                "missing_attribute",
                node,
                f"<{node.tag}> has no {attr!r} attribute, which Tesseract requires",
                f'add {attr}="..."',
            )
        return False
    if NUMBER.fullmatch(text.strip()) and math.isfinite(float(text)):
        return True
    add(
        "invalid_number",
        node,
        f'<{node.tag} {attr}="{text}"> is not a finite number',
        "write one decimal number (ASCII digits)",
    )
    return False


def _one_of(node: etree._Element, attrs: tuple[str, str], add: _Add) -> None:
    """Each of `attrs` present is a number, and at least one is present."""
    for attr in attrs:
        _number(node, attr, add)
    if all(node.get(attr) is None for attr in attrs):
        add(
            "missing_attribute",
            node,
            f"<{node.tag}> has neither {attrs[0]!r} nor {attrs[1]!r}: Tesseract refuses it",
            f'give {attrs[0]}="..." or {attrs[1]}="...", or remove the element',
        )


def _joint(joint: etree._Element, add: _Add) -> None:
    kind = joint.get("type", "")
    limit = joint.find("limit")
    if limit is not None and kind in ("revolute", "prismatic", "continuous"):
        # the model reads lower, upper and velocity; Tesseract also needs these
        _number(limit, "effort", add, required=True)
        for attr in ("acceleration", "jerk"):
            _number(limit, attr, add)
    axis = joint.find("axis")
    if axis is not None and axis.get("xyz") is None:
        add(
            "missing_attribute",
            axis,
            "<axis> has no 'xyz' attribute, which Tesseract requires",
            'write <axis xyz="0 0 1"/> (a unit vector), or remove <axis> for the default 1 0 0',
        )
    calibration = joint.find("calibration")
    if calibration is not None:
        _one_of(calibration, ("rising", "falling"), add)
    dynamics = joint.find("dynamics")
    if dynamics is not None:
        _one_of(dynamics, ("damping", "friction"), add)
    safety = joint.find("safety_controller")
    if safety is not None:
        _number(safety, "k_velocity", add, required=True)


def _materials(root: etree._Element, add: _Add) -> None:
    # Tesseract reads the robot's own <material>s first, then each visual's in document
    # order; a material that gives only a name must name one read before it.
    known: set[str] = set()
    for element in root.findall("material"):
        _material(element, known, add)
    for link in root.findall("link"):
        for visual in link.findall("visual"):
            first = visual.find("material")  # Tesseract reads the first one only
            if first is not None:
                _material(first, known, add)


def _material(material: etree._Element, known: set[str], add: _Add) -> None:
    name = material.get("name")
    if name is None:
        add(
            "missing_attribute",
            material,
            "<material> has no 'name' attribute, which Tesseract requires",
            'add name="..." (it may be empty when the material gives a color)',
        )
        return
    texture, color = material.find("texture"), material.find("color")
    if texture is not None and texture.get("filename") is None:
        add(
            "invalid_material",
            texture,
            f"material {name!r} has a <texture> without a filename attribute, which Tesseract "
            "refuses, and with it the URDF",
            'give <texture filename="..."/> or remove the <texture>',
        )
    elif texture is not None and not texture.get("filename"):
        # Tesseract loads it, its texture's file name empty (tests/test_tesseract_materials.py)
        add(
            "empty_texture_filename",
            texture,
            f'material {name!r} has <texture filename="">, which names no file: it is ignored',
            "name the texture file, package://<model_id>/meshes/..., or remove the <texture>",
            Severity.WARNING,
        )
    if color is not None:
        # split as Tesseract splits: a tab (written &#9;) is inside a part, not between two
        parts = [part for part in (color.get("rgba") or "").split(" ") if part]
        if len(parts) != 4 or not all(NUMBER.fullmatch(p) for p in parts):
            add(
                "invalid_material",
                color,
                f"material {name!r} has <color rgba={color.get('rgba')!r}>, not 4 numbers",
                'write rgba="r g b a", four numbers from 0 to 1',
            )
        else:
            _color_range(name, color, [float(p) for p in parts], add)
    if texture is None and color is None:
        if name not in known or not name:
            add(
                "unknown_material",
                material,
                f"material {name!r} gives only a name, and no material of that name is "
                "defined before it",
                "give it a <color rgba=...>, or define the material (with its color) in the "
                "<robot> or in an earlier visual",
            )
    elif name:
        known.add(name)


def _color_range(name: str, color: etree._Element, rgba: list[float], add: _Add) -> None:
    """A warning for a colour component outside 0 to 1, which Tesseract reads as written and a
    viewer clamps (188 89 41 255, an image editor's 8-bit values, draws white)."""
    outside = [v for v in rgba if not 0.0 <= v <= 1.0]
    if not outside:
        return
    if all(0.0 <= v <= 255.0 for v in rgba):
        alpha = rgba[3] / 255 if rgba[3] > 1.0 else rgba[3]
        fractions = " ".join(f"{v:.4g}" for v in [*(c / 255 for c in rgba[:3]), alpha])
        hint = f'divide 8-bit values by 255: rgba="{fractions}"'
    else:
        hint = "give r, g, b and a from 0 to 1"
    add(
        "color_out_of_range",
        color,
        f"material {name!r} has <color rgba={color.get('rgba')!r}>: {outside[0]:g} is outside "
        "0 to 1, where a viewer clamps it",
        hint,
        Severity.WARNING,
    )
