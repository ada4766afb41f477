"""What Tesseract's SRDFModel reads from SRDF bytes: its kinematics information, ACM and margins.

This reader follows tesseract_srdf's parser rule by rule (groups of one member kind,
wxyz over rpy, Rz*Ry*Rx, normalised quaternions, unordered ACM pairs, the first
collision_margins only) and is independent of `read.py`, so that comparing its result
with `tesseract_view.json` checks that the writer kept the meaning of the source.
"""

from __future__ import annotations

import math
import re
from typing import Any

from lxml import etree

from pipeline.strict_xml import parse_xml
from pipeline.urdf import Robot

Matrix = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]


class TesseractParseError(Exception):
    """An SRDF that Tesseract's parser would refuse with an exception."""


def quat_multiply(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, float, float, float]:
    """Hamilton product of two wxyz quaternions."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def rpy_to_wxyz(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """Quaternion of Rz(yaw) * Ry(pitch) * Rx(roll)."""
    qx = (math.cos(roll / 2), math.sin(roll / 2), 0.0, 0.0)
    qy = (math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0)
    qz = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
    return quat_multiply(quat_multiply(qz, qy), qx)


def wxyz_to_matrix(q: tuple[float, ...]) -> Matrix:
    """Rotation matrix of a unit wxyz quaternion."""
    w, x, y, z = q
    return (
        (1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
        (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
        (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)),
    )


def matrix_to_xyzw(m: Matrix) -> list[float]:
    """Quaternion (x, y, z, w) of a rotation matrix, as Eigen computes it."""
    trace = m[0][0] + m[1][1] + m[2][2]
    if trace > 0:
        t = math.sqrt(trace + 1.0)
        w = 0.5 * t
        t = 0.5 / t
        return [(m[2][1] - m[1][2]) * t, (m[0][2] - m[2][0]) * t, (m[1][0] - m[0][1]) * t, w]
    i = 0
    if m[1][1] > m[0][0]:
        i = 1
    if m[2][2] > m[i][i]:
        i = 2
    j, k = (i + 1) % 3, (i + 2) % 3
    t = math.sqrt(m[i][i] - m[j][j] - m[k][k] + 1.0)
    q = [0.0, 0.0, 0.0, 0.0]
    q[i] = 0.5 * t
    t = 0.5 / t
    q[3] = (m[k][j] - m[j][k]) * t
    q[j] = (m[j][i] + m[i][j]) * t
    q[k] = (m[k][i] + m[i][k]) * t
    return q


def _required(node: etree._Element, attr: str, what: str) -> str:
    value = node.get(attr)
    if not value:
        raise TesseractParseError(f"{what}: missing or failed to parse attribute {attr!r}")
    return value


def _floats(text: str, count: int, what: str) -> list[float]:
    tokens = [t for t in text.split(" ") if t]
    try:
        values = [float(t) for t in tokens]
    except ValueError:
        values = []
    if len(values) != count:
        raise TesseractParseError(f"{what}: failed to parse {text!r}")
    return values


def _children(node: etree._Element, tag: str) -> list[etree._Element]:
    return [c for c in node if c.tag == tag]


def _groups(root: etree._Element, robot: Robot, view: dict[str, Any]) -> None:
    for group in _children(root, "group"):
        name = _required(group, "name", "Group")
        links = [_required(n, "name", name) for n in _children(group, "link")]
        joints = [_required(n, "name", name) for n in _children(group, "joint")]
        chains = [
            [_required(n, "base_link", name), _required(n, "tip_link", name)]
            for n in _children(group, "chain")
        ]
        for link in links + [end for chain in chains for end in chain]:
            if robot.link(link) is None:
                raise TesseractParseError(f"Group {name!r}: link {link!r} is not known")
        for joint in joints:
            if robot.joint(joint) is None:
                raise TesseractParseError(f"Group {name!r}: joint {joint!r} is not known")
        kinds = [(chains, "chain_groups"), (joints, "joint_groups"), (links, "link_groups")]
        filled = [(members, key) for members, key in kinds if members]
        if len(filled) != 1:
            raise TesseractParseError(f"Group {name!r} is empty or multiple types were provided")
        view[filled[0][1]][name] = filled[0][0]
        view["group_names"].add(name)


def _states(root: etree._Element, robot: Robot, view: dict[str, Any]) -> None:
    for state in _children(root, "group_state"):
        group = _required(state, "group", "GroupStates")
        name = _required(state, "name", "GroupStates")
        if group not in view["group_names"]:
            raise TesseractParseError(f"GroupStates: state {name!r} group {group!r} does not exist")
        values: dict[str, float] = {}
        for joint in _children(state, "joint"):
            joint_name = _required(joint, "name", name)
            if robot.joint(joint_name) is None:
                raise TesseractParseError(f"GroupStates: joint {joint_name!r} is not known")
            values[joint_name] = _floats(_required(joint, "value", name), 1, name)[0]
        if not values:
            raise TesseractParseError(f"GroupStates: state {name!r} has no joint elements")
        view["group_states"].setdefault(group, {})[name] = values


def _tcps(root: etree._Element, view: dict[str, Any]) -> None:
    for block in _children(root, "group_tcps"):
        group = _required(block, "group", "GroupTCPs")
        tcps = view["group_tcps"].setdefault(group, {})
        for tcp in _children(block, "tcp"):
            name, xyz = tcp.get("name"), tcp.get("xyz")
            rpy, wxyz = tcp.get("rpy"), tcp.get("wxyz")
            if name is None or xyz is None or (rpy is None and wxyz is None):
                raise TesseractParseError(f"GroupTCPs: invalid tcp definition for {group!r}")
            if wxyz is not None:
                q = _floats(wxyz, 4, name)
                norm = math.sqrt(sum(v * v for v in q))
                rotation = wxyz_to_matrix(tuple(v / norm for v in q))
            else:
                assert rpy is not None
                r, p, y = _floats(rpy, 3, name)
                rotation = wxyz_to_matrix(rpy_to_wxyz(r, p, y))
            tcps[name] = {"quat_xyzw": matrix_to_xyzw(rotation), "xyz": _floats(xyz, 3, name)}
        if not tcps:
            raise TesseractParseError(f"GroupTCPs: no tool center points for group {group!r}")


def _collisions(root: etree._Element, robot: Robot, view: dict[str, Any]) -> None:
    acm: dict[tuple[str, str], str] = {}
    for entry in _children(root, "disable_collisions"):
        link1, link2 = entry.get("link1"), entry.get("link2")
        if not link1 or not link2:
            continue
        unknown = [link for link in (link1, link2) if robot.link(link) is None]
        if unknown:
            view["warnings"].append(f"Link {unknown[0]!r} is not known to URDF")
            continue
        acm[(min(link1, link2), max(link1, link2))] = entry.get("reason", "")
    view["allowed_collisions"] = [[a, b, reason] for (a, b), reason in sorted(acm.items())]
    blocks = _children(root, "collision_margins")
    if not blocks:
        return
    block = blocks[0]
    default = _floats(_required(block, "default_margin", "CollisionMargins"), 1, "margin")[0]
    pairs: dict[tuple[str, str], float] = {}
    for pair in _children(block, "pair_margin"):
        link1 = _required(pair, "link1", "CollisionMargins")
        link2 = _required(pair, "link2", "CollisionMargins")
        for link in (link1, link2):
            if robot.link(link) is None:
                view["warnings"].append(f"parseCollisionMargins: Link {link!r} is not known")
        margin = _floats(_required(pair, "margin", "CollisionMargins"), 1, "margin")[0]
        pairs[(min(link1, link2), max(link1, link2))] = margin
    view["collision_margin_data"] = {
        "default_margin": default,
        "pair_margins": [[a, b, m] for (a, b), m in sorted(pairs.items())],
    }


def _version(root: etree._Element) -> list[int]:
    text = root.get("version")
    if text is None:
        return [1, 0, 0]
    tokens = [t for t in text.split(".") if t]
    if not 2 <= len(tokens) <= 3 or not all(re.fullmatch(r"[+-]?\d+", t) for t in tokens):
        raise TesseractParseError("SRDF: failed to parse attribute 'version'")
    return [int(t) for t in tokens] + ([0] if len(tokens) == 2 else [])


def tesseract_view(data: bytes, robot: Robot) -> dict[str, Any]:
    """Read SRDF bytes as Tesseract's SRDFModel would, into the tesseract_view.json shape."""
    root = parse_xml(data, "srdf")
    if root.tag != "robot":
        raise TesseractParseError("SRDF: missing 'robot' element")
    view: dict[str, Any] = {
        "name": _required(root, "name", "SRDF"),
        "version": _version(root),
        "group_names": set(),
        "chain_groups": {},
        "joint_groups": {},
        "link_groups": {},
        "group_states": {},
        "group_tcps": {},
        "allowed_collisions": [],
        "collision_margin_data": None,
        "kinematics_plugin_info": None,
        "warnings": [],
    }
    if view["name"] != robot.name:
        view["warnings"].append("Semantic description is not specified for the same robot")
    _groups(root, robot, view)
    _states(root, robot, view)
    _tcps(root, view)
    _collisions(root, robot, view)
    if _children(root, "kinematics_plugin_config"):
        raise TesseractParseError("kinematics_plugin_config: this reader resolves no files")
    view["group_names"] = sorted(view["group_names"])
    return view
