"""Misspelt and misplaced URDF tags and attributes: every URDF reader ignores them in silence.

An `<orgin>` in a `<collision>`, or an `<origin>` put in the `<link>` instead of its
`<collision>`, leaves the collision geometry at the link frame; `ryp=` for `rpy=` leaves it
unrotated. urdfdom, Tesseract and this compiler all read past them, so the spheres cover
geometry where it is not. Simulator extensions (pybullet's `<contact>`, Gazebo's `<surface>`)
are neither a near miss of a URDF name nor a URDF tag out of place, and pass without a word.
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree

from pipeline.findings import Finding, Severity
from pipeline.strict_xml import source_line

# What each element of the URDF schema holds, as every URDF reader reads it.
URDF_CHILDREN: dict[str, tuple[str, ...]] = {
    # with the extensions URDFs hold beside links and joints (Gazebo's, iCub's sensors)
    "robot": ("link", "joint", "material", "transmission", "gazebo", "sensor"),
    "link": ("visual", "collision", "inertial"),
    "joint": (
        "origin",
        "parent",
        "child",
        "axis",
        "limit",
        "dynamics",
        "calibration",
        "mimic",
        "safety_controller",
    ),
    "visual": ("origin", "geometry", "material"),
    "collision": ("origin", "geometry"),
    "inertial": ("origin", "mass", "inertia"),
    "material": ("color", "texture"),
}
_ATTRIBUTES = {
    "link": ("name",),
    "joint": ("name", "type"),
    "visual": ("name",),
    "collision": ("name",),
    "origin": ("xyz", "rpy"),
    "mesh": ("filename", "scale"),
    "box": ("size",),
    "cylinder": ("radius", "length"),
    "sphere": ("radius",),
    "parent": ("link",),
    "child": ("link",),
    "axis": ("xyz",),
    # acceleration and jerk: Tesseract's own
    "limit": ("lower", "upper", "effort", "velocity", "acceleration", "jerk"),
    "mimic": ("joint", "multiplier", "offset"),
    "dynamics": ("damping", "friction"),
    "calibration": ("rising", "falling"),
    "safety_controller": ("soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity"),
    "mass": ("value",),
    "inertia": ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
    "material": ("name",),
    "color": ("rgba",),
    "texture": ("filename",),
}
# Elements that place or size geometry: any attribute beyond theirs is a likely mistake.
_PLACING = frozenset({"origin", "mesh", "box", "cylinder", "sphere"})
# Where a URDF tag found elsewhere belongs (`<material>` out of place changes nothing seen).
_HOME = {
    "origin": "the <joint>, <visual>, <collision> or <inertial> it places",
    "geometry": "a <visual> or <collision>",
    "visual": "a <link>",
    "collision": "a <link>",
    "inertial": "a <link>",
    "mass": "the link's <inertial>",
    "inertia": "the link's <inertial>",
    "link": "the <robot>",
    "joint": "the <robot>",
    **{tag: "a <joint>" for tag in URDF_CHILDREN["joint"][1:]},
    **{shape: "the <geometry> of a <visual> or <collision>" for shape in _PLACING - {"origin"}},
}
SHAPES = ("mesh", "box", "cylinder", "sphere")
# What the walk descends into: the schema's elements and the shape a <geometry> holds (what
# else a <geometry> holds is invalid_geometry, an error of its own, or _geometry_findings').
_HELD = {**URDF_CHILDREN, "geometry": SHAPES}


def lone_shape_first(held: list[etree._Element]) -> bool:
    """Whether a <geometry>'s elements are one shape and after it none: every URDF reader
    (Tesseract, urdfdom) reads the first element alone, so what follows does nothing, as the
    <material> in a visual's <geometry> of pybullet_data's racecar. A shape not first, or a
    second shape, is invalid_geometry: Tesseract refuses the one, ignores the other."""
    return bool(held) and held[0].tag in SHAPES and all(n.tag not in SHAPES for n in held[1:])


def unknown_findings(root: etree._Element, display: str) -> list[Finding]:
    """A warning per misspelt or misplaced tag or attribute in the URDF's own elements."""
    out = _child_findings(root, display)
    for node in _urdf_elements(root):
        out += _child_findings(node, display) + _attribute_findings(node, display)
        out += _geometry_findings(node, display) if node.tag == "geometry" else []
    return out


def _geometry_findings(node: etree._Element, display: str) -> list[Finding]:
    """What follows the one shape of a <geometry> (a namespaced extension aside)."""
    held = [n for n in node if isinstance(n.tag, str)]
    if not lone_shape_first(held):
        return []
    parent, shape = node.getparent(), held[0].tag
    holder = "" if parent is None else str(parent.tag)
    out = []
    for child in held[1:]:
        tag = str(child.tag)
        if tag.startswith("{"):
            continue
        if tag == "material":
            hint = "move it into the <visual>" if holder == "visual" else "remove it"
            hint += "" if holder == "visual" else f" (a <{holder}> is not drawn)"
        else:
            hint = "remove it: URDF readers read a <geometry>'s first element alone"
        message = f"<geometry> holds <{_shown(tag)}> after its <{shape}>, which URDF readers ignore"
        out.append(_warning("unknown_element", display, child, message, hint))
    return out


def _urdf_elements(root: etree._Element) -> Iterator[etree._Element]:
    """The elements of the URDF schema: links and joints of the robot, and what they hold."""
    for node in root:
        if node.tag in ("link", "joint", "material"):
            yield from _with_parts(node)


def _with_parts(node: etree._Element) -> Iterator[etree._Element]:
    yield node
    for child in node:
        if child.tag in _HELD.get(str(node.tag), ()):
            yield from _with_parts(child)


def _child_findings(node: etree._Element, display: str) -> list[Finding]:
    known = URDF_CHILDREN.get(str(node.tag))
    if known is None:
        return []
    out = []
    for child in node:
        tag = child.tag
        if not isinstance(tag, str) or tag.startswith("{") or tag in known:
            continue
        # a shape without its <geometry> is invalid_geometry already, an error
        unwrapped = tag in _HELD["geometry"] and node.tag in ("visual", "collision")
        # a URDF tag out of place first: an <inertia> in a <link> belongs in its <inertial>,
        # though it is one slip from that too
        near = None if tag in _HOME else _near_miss(tag, known)
        if tag in _HOME and not unwrapped:
            message = f"<{node.tag}> holds <{tag}>, which URDF readers ignore there"
            hint = f"move it into {_HOME[tag]}"
            if tag == "origin" and _identity(child):
                hint = "remove it: it is the identity (xyz and rpy 0), which places nothing"
        elif near:
            message = f"<{node.tag}> holds <{_shown(tag)}>, which URDF readers ignore"
            hint = f"did you mean <{near}>? rename it"
        else:
            continue
        out.append(_warning("unknown_element", display, child, message, hint))
    return out


def _identity(origin: etree._Element) -> bool:
    """Whether an `<origin>` is the identity: its xyz and rpy 0 or absent, and nothing else."""
    if set(origin.attrib) - {"xyz", "rpy"}:
        return False
    for value in origin.attrib.values():
        try:
            if any(float(word) != 0.0 for word in str(value).split()):
                return False
        except ValueError:
            return False
    return True


def _attribute_findings(node: etree._Element, display: str) -> list[Finding]:
    tag = str(node.tag)
    known = _ATTRIBUTES.get(tag)
    if known is None:
        return []
    out = []
    # a name the element already has is not the one meant (iyx= beside ixx= is ixy)
    missing = tuple(k for k in known if k not in node.attrib)
    # lxml finds a value by its name, so reading every value of an element of thousands of
    # attributes (a hostile URDF's) is quadratic: the values are shown only for a few
    names = list(node.attrib)
    shown = len(names) <= _SHOWN_VALUES
    for key in names:
        name = str(key)
        if name.startswith("{") or name in known:
            continue
        near = _near_miss(name, missing)
        if not near and tag not in _PLACING:
            continue
        value = f"={str(node.get(key))[:40]!r}" if shown else ""
        message = f"<{tag}> has {_shown(name)}{value}, which URDF readers ignore"
        article = "an" if tag[0] in "aeiou" else "a"
        reads = f"{article} <{tag}> reads {' and '.join(known)} only"
        hint = f"did you mean {near}? rename it" if near else reads
        out.append(_warning("unknown_attribute", display, node, message, hint))
    return out


# An element holding more attributes than this has its unknown ones named without values.
_SHOWN_VALUES = 64


def _warning(code: str, display: str, node: etree._Element, message: str, hint: str) -> Finding:
    return Finding(code, display, str(source_line(node)), message, hint, Severity.WARNING)


def _shown(name: str) -> str:
    """A tag or attribute name for a message, cut short when long."""
    return name if len(name) <= 40 else f"{name[:40]}... ({len(name)} characters)"


def _near_miss(name: str, known: tuple[str, ...]) -> str | None:
    """The known name `name` is one slip from: another case, or one letter added, dropped,
    changed or swapped with its neighbour (two in a name of more than five letters)."""
    for candidate in known:
        allowed = 1 if len(candidate) <= 5 else 2
        # a length that far off is more slips than allowed: no table to fill (a hostile
        # URDF's names may be thousands of letters long)
        if (
            abs(len(name) - len(candidate)) <= allowed
            and _slips(name.lower(), candidate) <= allowed
        ):
            return candidate
    return None


def _slips(a: str, b: str) -> int:
    """Optimal-string-alignment distance: insertions, deletions, substitutions, transpositions."""
    rows = [list(range(len(b) + 1))]
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            cost = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, rows[-2][j - 2] + 1)
            row.append(cost)
        rows.append(row)
    return rows[-1][-1]
