"""SRDF rules for end effectors, virtual and passive joints, allowed collisions and margins."""

from __future__ import annotations

import math

from pipeline.srdf.checker import Checker
from pipeline.srdf.model import (
    VIRTUAL_JOINT_TYPES,
    CollisionMargins,
    DisableCollisions,
    EndEffector,
    PassiveJoint,
    VirtualJoint,
)


def check_end_effectors(c: Checker, effectors: list[EndEffector]) -> None:
    """Group, parent link and parent group exist; the two groups do not overlap."""
    names: set[str] = set()
    for eef in effectors:
        where = f"end effector {eef.name!r}"
        c.unique(names, eef.name, eef.place, "end effector")
        c.shown("end effector", eef.name, eef.place)
        has_group = c.group(eef.group, eef.place, f"{where} group")
        c.link(eef.parent_link, eef.place, f"{where} parent_link")
        if eef.parent_group is None:
            continue
        if c.group(eef.parent_group, eef.place, f"{where} parent_group") and has_group:
            own, parent = c.contents[eef.group], c.contents[eef.parent_group]
            shared = sorted((own.joints & parent.joints) | (own.links & parent.links))
            if shared or eef.group == eef.parent_group:
                c.add(
                    "end_effector_overlaps_parent_group",
                    eef.place,
                    f"{where} group {eef.group!r} shares {', '.join(shared) or 'everything'} "
                    f"with its parent group {eef.parent_group!r}",
                    "the end-effector group must hold only the tool's own joints and links",
                )


def check_virtual(c: Checker, virtuals: list[VirtualJoint], passives: list[PassiveJoint]) -> None:
    """Virtual joints attach the URDF root to a non-URDF frame; passive joints name a joint."""
    names: set[str] = {j.name for j in c.robot.joints}
    root = c.robot.root() if c.robot.links else ""
    for vj in virtuals:
        where = f"virtual joint {vj.name!r}"
        if vj.name in names:
            c.add(
                "duplicate_name",
                vj.place,
                f"{where} reuses the name of a URDF or virtual joint",
                "give the virtual joint its own name",
            )
        names.add(vj.name)
        c.shown("virtual joint", vj.name, vj.place)
        if vj.type not in VIRTUAL_JOINT_TYPES:
            c.add(
                "invalid_virtual_joint_type",
                vj.place,
                f"{where} has type {vj.type!r}",
                f"use one of {', '.join(VIRTUAL_JOINT_TYPES)}",
            )
        if c.link(vj.child_link, vj.place, f"{where} child_link") and vj.child_link != root:
            c.add(
                "virtual_joint_not_root",
                vj.place,
                f"{where} child_link {vj.child_link!r} is not the URDF root {root!r}",
                f'set child_link="{root}"',
            )
        if c.robot.link(vj.parent_frame) is not None:
            c.add(
                "virtual_joint_parent_is_link",
                vj.place,
                f"{where} parent_frame {vj.parent_frame!r} is a URDF link",
                'name a frame outside the robot, e.g. parent_frame="world"',
            )
    seen: set[str] = set()
    virtual_names = {vj.name for vj in virtuals}
    for pj in passives:
        c.unique(seen, pj.name, pj.place, "passive joint")
        # a virtual joint may be passive (srdfdom and Tesseract's SRDF reader accept it)
        if c.robot.joint(pj.name) is None and pj.name not in virtual_names:
            c.unknown_joint(
                pj.name,
                pj.place,
                f"passive joint {pj.name!r} is neither a URDF joint nor a virtual joint",
                "name a URDF joint or a <virtual_joint>",
            )


def check_collisions(
    c: Checker, pairs: list[DisableCollisions], margins: list[CollisionMargins]
) -> None:
    """Allowed-collision pairs and collision margins name distinct URDF links, once each."""
    seen: set[frozenset[str]] = set()
    for pair in pairs:
        where = f"disable_collisions {pair.link1!r} {pair.link2!r}"
        ok = c.link(pair.link1, pair.place, "disable_collisions link1")
        ok = c.link(pair.link2, pair.place, "disable_collisions link2") and ok
        if ok and pair.link1 == pair.link2:
            c.add(
                "disable_collisions_same_link",
                pair.place,
                f"{where} names one link twice",
                "name two different links",
            )
        key = frozenset((pair.link1, pair.link2))
        if key in seen:
            c.add(
                "duplicate_collision_pair",
                pair.place,
                f"{where} repeats a pair (in either order)",
                "keep one entry per pair",
            )
        # `reason` is optional: Tesseract and MoveIt read a pair without one (e.g. the UR5 SRDF).
        seen.add(key)
    for index, block in enumerate(margins):
        if index > 0:
            c.add(
                "duplicate_collision_margins",
                block.place,
                "a second <collision_margins>; Tesseract reads only the first",
                "merge them into one element",
            )
        if not math.isfinite(block.default):
            c.add(
                "non_finite_margin",
                block.place,
                f"default_margin is {block.default}",
                "write a finite number in metres",
            )
        for margin in block.pairs:
            c.link(margin.link1, margin.place, "pair_margin link1")
            c.link(margin.link2, margin.place, "pair_margin link2")
            if not math.isfinite(margin.margin):
                c.add(
                    "non_finite_margin",
                    margin.place,
                    f"pair_margin {margin.link1!r} {margin.link2!r} margin is {margin.margin}",
                    "write a finite number in metres",
                )
