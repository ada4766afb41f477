"""The URDF model: one frozen data class per tag."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

Vec3 = tuple[float, float, float]
BOUNDED_TYPES = ("revolute", "prismatic")
UNBOUNDED_TYPES = ("continuous", "planar", "floating")
JOINT_TYPES = ("fixed", *BOUNDED_TYPES, *UNBOUNDED_TYPES)


@dataclass(frozen=True)
class Origin:
    """A `<origin>`: translation in metres, roll-pitch-yaw in radians."""

    xyz: Vec3 = (0.0, 0.0, 0.0)
    rpy: Vec3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Mesh:
    """A `<mesh>`: `path` is relative to the description folder (`meshes/...`)."""

    filename: str
    path: str
    scale: Vec3 = (1.0, 1.0, 1.0)
    # where the URDF names the file (its findings' place); not part of the geometry's identity
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Box:
    """A `<box>` with its full edge lengths in metres."""

    size: Vec3


@dataclass(frozen=True)
class Cylinder:
    """A `<cylinder>` along the local z axis, centred on the origin."""

    radius: float
    length: float


@dataclass(frozen=True)
class Sphere:
    """A `<sphere>` centred on the origin."""

    radius: float


Geometry = Mesh | Box | Cylinder | Sphere


@dataclass(frozen=True)
class Collision:
    """A `<collision>` element: geometry placed by an origin in the link frame."""

    origin: Origin
    geometry: Geometry
    line: int


@dataclass(frozen=True)
class Visual:
    """A `<visual>` element (only its geometry matters to the compiler)."""

    origin: Origin
    geometry: Geometry
    line: int


@dataclass(frozen=True)
class Inertial:
    """An `<inertial>`: its frame, mass (kg) and inertia (kg m^2: ixx ixy ixz iyy iyz izz)."""

    origin: Origin
    mass: float
    inertia: tuple[float, float, float, float, float, float]
    line: int


@dataclass(frozen=True)
class Link:
    """A `<link>` with its collision and visual elements and its inertial, when it has one."""

    name: str
    collisions: tuple[Collision, ...]
    visuals: tuple[Visual, ...]
    line: int
    inertial: Inertial | None = None
    # a <collision> of it had a finding when read (dropped, or a number read as its default):
    # its collision geometry is not all known, so it is not judged as a whole (its extent)
    collisions_refused: bool = field(default=False, compare=False)
    # how many of its <visual>s had a finding when read and were dropped: the link is still
    # drawn (visual_without_collision judges it by its <visual> elements, not their geometry)
    visuals_refused: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Limit:
    """A `<limit>`: position bounds (rad or m), velocity (rad/s or m/s), effort (N m or N)."""

    lower: float | None
    upper: float | None
    velocity: float | None
    # None when missing or not a number too: extras.py reports those, as Tesseract reads it
    effort: float | None = None
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Mimic:
    """A `<mimic>`: this joint follows `joint` as multiplier * q + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Joint:
    """A `<joint>` between a parent and a child link."""

    name: str
    type: str
    parent: str
    child: str
    origin: Origin
    axis: Vec3
    limit: Limit | None
    mimic: Mimic | None
    line: int


@dataclass(frozen=True)
class Robot:
    """A parsed URDF `<robot>` in document order."""

    name: str
    links: tuple[Link, ...]
    joints: tuple[Joint, ...]
    file: str = field(default="", compare=False)

    def link(self, name: str) -> Link | None:
        """The link of that name, if any."""
        return self._links.get(name)

    def joint(self, name: str) -> Joint | None:
        """The joint of that name, if any."""
        return self._joints.get(name)

    def parent_joint(self, link: str) -> Joint | None:
        """The joint whose child is `link`, if any (the first in the URDF)."""
        return self._above.get(link)

    @cached_property
    def _above(self) -> dict[str, Joint]:
        # a lookup per call scanned every joint: walking a chain of n joints took n^2 steps, and
        # a cell whose review walks each link's chain n^3 (5,000 joints: minutes)
        above: dict[str, Joint] = {}
        for joint in self.joints:
            above.setdefault(joint.child, joint)
        return above

    @cached_property
    def _links(self) -> dict[str, Link]:
        # the first of each name, as a scan finds it: an SRDF of 10,000 group states looks up
        # each of their joints (a scan per lookup of a robot of thousands of joints: minutes)
        return {link.name: link for link in reversed(self.links)}

    @cached_property
    def _joints(self) -> dict[str, Joint]:
        return {joint.name: joint for joint in reversed(self.joints)}

    def roots(self) -> list[str]:
        """Links that are no joint's child."""
        children = {joint.child for joint in self.joints}
        return [link.name for link in self.links if link.name not in children]

    def root(self) -> str:
        """The single root link (the model must have passed validation)."""
        return self.roots()[0]

    def chain(self, base: str, tip: str) -> list[Joint] | None:
        """Joints from `base` down to `tip`, or None when tip is not below base."""
        path: list[Joint] = []
        link = tip
        seen: set[str] = set()
        while link != base:
            joint = self.parent_joint(link)
            if joint is None or link in seen:
                return None
            seen.add(link)
            path.append(joint)
            link = joint.parent
        path.reverse()
        return path

    def mesh_paths(self) -> list[str]:
        """Every distinct mesh file named by visual or collision geometry, sorted."""
        geometries: list[Geometry] = [
            element.geometry for link in self.links for element in link.collisions
        ]
        geometries += [element.geometry for link in self.links for element in link.visuals]
        return sorted({g.path for g in geometries if isinstance(g, Mesh)})
