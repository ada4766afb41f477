"""The deterministic SRDF writer: same model, same bytes."""

from __future__ import annotations

import math

from pipeline.srdf.model import (
    TCAD_NS,
    ChainMember,
    CollisionMargins,
    DisableCollisions,
    Element,
    EndEffector,
    Group,
    GroupState,
    GroupTcps,
    JointMember,
    LinkMember,
    PassiveJoint,
    PluginConfig,
    Quat,
    Srdf,
    SubgroupMember,
    Tcp,
    VirtualJoint,
)

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;"}
_ESCAPES["\t"] = "&#9;"


def number(value: float) -> str:
    """A float written so that it reads back exactly (shortest round-trip repr)."""
    return repr(float(value))


def numbers(values: tuple[float, ...]) -> str:
    """Space-separated round-trip floats."""
    return " ".join(number(v) for v in values)


def normalised(wxyz: Quat) -> Quat:
    """The unit quaternion of a non-zero one."""
    # hypot scales: a sum of squares underflows to 0 for 1e-200 (a division by zero) and
    # overflows to inf for 1e200 (every component written as 0.0, no rotation at all)
    norm = math.hypot(*wxyz)
    return (wxyz[0] / norm, wxyz[1] / norm, wxyz[2] / norm, wxyz[3] / norm)


def _tag(name: str, attrs: list[tuple[str, str | None]], depth: int, close: bool) -> str:
    text = "".join(
        f' {key}="{"".join(_ESCAPES.get(ch, ch) for ch in value)}"'
        for key, value in attrs
        if value is not None
    )
    return f"{'  ' * depth}<{name}{text}{'/' if close else ''}>\n"


def _block(name: str, attrs: list[tuple[str, str | None]], children: list[str]) -> list[str]:
    if not children:
        return [_tag(name, attrs, 1, True)]
    return [_tag(name, attrs, 1, False), *children, f"  </{name}>\n"]


def _tcp(tcp: Tcp) -> str:
    attrs: list[tuple[str, str | None]] = [("name", tcp.name), ("xyz", numbers(tcp.xyz))]
    if tcp.rpy is not None:
        attrs.append(("rpy", numbers(tcp.rpy)))
    if tcp.wxyz is not None:
        attrs.append(("wxyz", numbers(normalised(tcp.wxyz))))
    return _tag("tcp", attrs, 2, True)


def _group(group: Group) -> list[str]:
    children = []
    for m in group.members:
        if isinstance(m, ChainMember):
            children.append(_tag("chain", [("base_link", m.base), ("tip_link", m.tip)], 2, True))
        else:
            tag = {LinkMember: "link", JointMember: "joint", SubgroupMember: "group"}[type(m)]
            children.append(_tag(tag, [("name", m.name)], 2, True))
    return _block("group", [("name", group.name)], children)


def _element(e: Element) -> list[str]:
    if isinstance(e, Group):
        return _group(e)
    if isinstance(e, GroupState):
        values = [
            _tag(
                "joint",
                [("name", v.name), ("value_deg" if v.degrees else "value", number(v.value))],
                2,
                True,
            )
            for v in e.values
        ]
        return _block("group_state", [("name", e.name), ("group", e.group)], values)
    if isinstance(e, GroupTcps):
        return _block("group_tcps", [("group", e.group)], [_tcp(t) for t in e.tcps])
    if isinstance(e, EndEffector):
        attrs = [
            ("name", e.name),
            ("group", e.group),
            ("parent_link", e.parent_link),
            ("parent_group", e.parent_group),
        ]
        return _block("end_effector", attrs, [])
    if isinstance(e, VirtualJoint):
        attrs = [
            ("name", e.name),
            ("type", e.type),
            ("parent_frame", e.parent_frame),
            ("child_link", e.child_link),
        ]
        return _block("virtual_joint", attrs, [])
    if isinstance(e, PassiveJoint):
        return _block("passive_joint", [("name", e.name)], [])
    if isinstance(e, DisableCollisions):
        attrs = [("link1", e.link1), ("link2", e.link2), ("reason", e.reason)]
        return _block("disable_collisions", attrs, [])
    if isinstance(e, CollisionMargins):
        pairs = [
            _tag(
                "pair_margin",
                [("link1", p.link1), ("link2", p.link2), ("margin", number(p.margin))],
                2,
                True,
            )
            for p in e.pairs
        ]
        return _block("collision_margins", [("default_margin", number(e.default))], pairs)
    assert isinstance(e, PluginConfig)
    return _block(e.tag, [("filename", e.filename)], [])


def write_srdf(srdf: Srdf, urdf_path: str | None) -> bytes:
    """The SRDF as bytes: XML declaration, two-space indent, LF, `tcad:urdf` first."""
    attrs: list[tuple[str, str | None]] = [("name", srdf.name), ("version", srdf.version)]
    lines = ['<?xml version="1.0" encoding="UTF-8"?>\n']
    if urdf_path is not None:
        attrs.append(("xmlns:tcad", TCAD_NS))
    lines.append(_tag("robot", attrs, 0, False))
    if urdf_path is not None:
        lines.append(_tag("tcad:urdf", [("path", urdf_path)], 1, True))
    for element in srdf.elements:
        lines.extend(_element(element))
    lines.append("</robot>\n")
    return "".join(lines).encode("utf-8")
