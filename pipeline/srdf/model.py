"""The SRDF model: one frozen data class per element, in document order."""

from __future__ import annotations

from dataclasses import dataclass

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]

TCAD_NS = "https://text-to-cad.dev/srdf"
EXPLORER_NS = "https://text-to-cad.dev/explorer"
VIRTUAL_JOINT_TYPES = ("fixed", "floating", "planar")
PLUGIN_CONFIG_TAGS = (
    "kinematics_plugin_config",
    "contact_managers_plugin_config",
    "calibration_config",
)


@dataclass(frozen=True)
class LinkMember:
    """`<link name>` inside a group."""

    name: str
    place: str


@dataclass(frozen=True)
class JointMember:
    """`<joint name>` inside a group."""

    name: str
    place: str


@dataclass(frozen=True)
class ChainMember:
    """`<chain base_link tip_link>` inside a group."""

    base: str
    tip: str
    place: str


@dataclass(frozen=True)
class SubgroupMember:
    """`<group name>` inside a group: another group's contents."""

    name: str
    place: str


Member = LinkMember | JointMember | ChainMember | SubgroupMember


@dataclass(frozen=True)
class Group:
    """`<group name>` with its members in document order."""

    name: str
    members: tuple[Member, ...]
    place: str


@dataclass(frozen=True)
class JointValue:
    """`<joint name value>` in a group state; `degrees` marks a legacy `value_deg`."""

    name: str
    value: float
    degrees: bool
    place: str


@dataclass(frozen=True)
class GroupState:
    """`<group_state name group>`: named joint values of a group."""

    name: str
    group: str
    values: tuple[JointValue, ...]
    place: str


@dataclass(frozen=True)
class Tcp:
    """`<tcp name xyz rpy|wxyz>`: a named offset, rotation as rpy or scalar-first quaternion."""

    name: str
    xyz: Vec3
    rpy: Vec3 | None
    wxyz: Quat | None
    place: str


@dataclass(frozen=True)
class GroupTcps:
    """Tesseract's `<group_tcps group>`: named TCP offsets of one group."""

    group: str
    tcps: tuple[Tcp, ...]
    place: str


@dataclass(frozen=True)
class EndEffector:
    """`<end_effector name group parent_link parent_group>`."""

    name: str
    group: str
    parent_link: str
    parent_group: str | None
    place: str


@dataclass(frozen=True)
class VirtualJoint:
    """`<virtual_joint name type parent_frame child_link>`."""

    name: str
    type: str
    parent_frame: str
    child_link: str
    place: str


@dataclass(frozen=True)
class PassiveJoint:
    """`<passive_joint name>`."""

    name: str
    place: str


@dataclass(frozen=True)
class DisableCollisions:
    """`<disable_collisions link1 link2 reason>`: an allowed-collision pair."""

    link1: str
    link2: str
    reason: str | None
    place: str


@dataclass(frozen=True)
class PairMargin:
    """`<pair_margin link1 link2 margin>` inside collision_margins."""

    link1: str
    link2: str
    margin: float
    place: str


@dataclass(frozen=True)
class CollisionMargins:
    """Tesseract's `<collision_margins default_margin>` with its pair margins."""

    default: float
    pairs: tuple[PairMargin, ...]
    place: str


@dataclass(frozen=True)
class PluginConfig:
    """A plugin or calibration config reference; kept only so that it can be refused."""

    tag: str
    filename: str
    place: str


Element = (
    Group
    | GroupState
    | GroupTcps
    | EndEffector
    | VirtualJoint
    | PassiveJoint
    | DisableCollisions
    | CollisionMargins
    | PluginConfig
)


@dataclass(frozen=True)
class Srdf:
    """A parsed SRDF `<robot>`: its elements in document order and the linked URDF path, if any."""

    name: str
    version: str | None
    elements: tuple[Element, ...]
    urdf_path: str | None = None

    def groups(self) -> list[Group]:
        """The groups in document order."""
        return [e for e in self.elements if isinstance(e, Group)]

    def group(self, name: str) -> Group | None:
        """The first group of that name, if any."""
        return next((g for g in self.groups() if g.name == name), None)

    def group_states(self) -> list[GroupState]:
        """The group states in document order."""
        return [e for e in self.elements if isinstance(e, GroupState)]

    def passive_joints(self) -> set[str]:
        """Names of the joints declared passive."""
        return {e.name for e in self.elements if isinstance(e, PassiveJoint)}
