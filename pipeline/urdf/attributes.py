"""A URDF element's attributes read as numbers and names, and the <origin> any element may
hold, collecting findings on the way: what the reader of every tag family builds on."""

from __future__ import annotations

import math

from lxml import etree

from pipeline.findings import Finding, Severity
from pipeline.strict_xml import NUMBER, source_line
from pipeline.urdf.angles import rpy_finding
from pipeline.urdf.extras import comma_spaced
from pipeline.urdf.meshuri import MeshesFolder
from pipeline.urdf.model import Origin, Vec3


class AttributeReader:
    """Collects findings while reading an element's attributes into numbers and names."""

    def __init__(self, display: str, model_id: str, meshes: MeshesFolder | None) -> None:
        self.display = display
        self.model_id = model_id
        self.meshes = meshes
        self.findings: list[Finding] = []

    def add(self, code: str, line: int | None, message: str, hint: str) -> None:
        self.findings.append(Finding(code, self.display, str(line or 1), message, hint))

    def floats(
        self, node: etree._Element, attr: str, count: int, default: tuple[float, ...] | None
    ) -> tuple[float, ...] | None:
        text = node.get(attr)
        if text is None:
            if default is None:
                self.add(
                    "missing_attribute",
                    source_line(node),
                    f"<{node.tag}> has no {attr!r} attribute",
                    f'add {attr}="..."',
                )
            return default
        # split on spaces only: the parser has turned tabs and newlines in attributes into spaces
        parts = [part for part in text.split(" ") if part]
        values = tuple(float(p) for p in parts if NUMBER.fullmatch(p))
        numbers = len(values) == len(parts) and all(math.isfinite(v) for v in values)
        if not numbers or len(values) != count:
            # finite numbers, too many or too few (pybullet's microtaur: rpy="0 1.57079 0 0"):
            # say how many, which a long attribute does not show at a glance
            held = {0: "no number", 1: "1 number"}.get(len(values), f"{len(values)} numbers")
            spaced, comma = comma_spaced(text, count), "separates its numbers with a comma"
            self.add(
                "invalid_number",
                source_line(node),
                f'<{node.tag} {attr}="{text}"> '
                + (f"holds {held}, not {count}" if numbers else f"is not {count} finite number(s)")
                + (f": it {comma}" if spaced else ""),
                f"write {count} finite decimal number(s) (ASCII digits) separated by spaces"
                + (f': {attr}="{spaced}"' if spaced else ""),
            )
            return default
        return values

    def scalar(self, node: etree._Element, attr: str) -> float | None:
        if node.get(attr) is None:
            return None
        values = self.floats(node, attr, 1, (math.nan,))
        return values[0] if values else None

    def name(self, node: etree._Element) -> str:
        name = node.get("name")
        if not name:
            self.add(
                "missing_attribute",
                source_line(node),
                f"<{node.tag}> has no name",
                'give it a unique name="..."',
            )
            return ""
        return name

    def origin(self, parent: etree._Element) -> Origin:
        node = parent.find("origin")
        if node is None:
            return Origin()
        xyz = self.floats(node, "xyz", 3, (0.0, 0.0, 0.0))
        rpy = self.floats(node, "rpy", 3, (0.0, 0.0, 0.0))
        if rpy is not None and node.get("rpy") is not None:
            text, line = node.get("rpy", ""), source_line(node) or 1
            found = rpy_finding(rpy, text, str(node.tag), self.display, line)
            if found is not None:
                self.findings.append(found)
                if found.severity is Severity.ERROR:
                    rpy = (0.0, 0.0, 0.0)  # refused: no knock-on finding computes with it
        return Origin(vec3(xyz), vec3(rpy))


def vec3(values: tuple[float, ...] | None) -> Vec3:
    assert values is not None and len(values) == 3
    return (values[0], values[1], values[2])
