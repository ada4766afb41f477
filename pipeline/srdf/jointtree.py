"""A URDF's joints as a tree, walked without recursion (the SRDF starter's)."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.urdf import Joint


class Tree:
    """The URDF's joints as a tree: each link's joints below it, the joint above it, and the
    links in depth-first order from the root (children in the URDF's order)."""

    def __init__(self, joints: Sequence[Joint], root: str) -> None:
        self.below: dict[str, list[Joint]] = {}
        self.above: dict[str, Joint] = {}
        for joint in joints:
            self.below.setdefault(joint.parent, []).append(joint)
            self.above[joint.child] = joint
        self.order: list[str] = []
        stack = [root]
        while stack:  # not recursive: a chain of thousands of links is a valid URDF
            link = stack.pop()
            self.order.append(link)
            stack.extend(j.child for j in reversed(self.below.get(link, [])))

    def path(self, link: str) -> list[Joint]:
        """The joints from the root down to `link`."""
        out = []
        while link in self.above:
            out.append(self.above[link])
            link = self.above[link].parent
        return out[::-1]

    def subtree(self, link: str) -> list[str]:
        """`link` and every link below it, depth first."""
        out, stack = [], [link]
        while stack:
            top = stack.pop()
            out.append(top)
            stack.extend(j.child for j in reversed(self.below.get(top, [])))
        return out
