"""What the URDF joint findings say Tesseract does, measured: the types it refuses, how it reads
a <limit> without a bound, and that an SRDF virtual joint moves nothing in it."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("tesseract_robotics")

from tesseract_robotics.tesseract_common import GeneralResourceLocator
from tesseract_robotics.tesseract_environment import Environment
from tesseract_robotics.tesseract_urdf import parseURDFString

URDF = """<robot name="r"><link name="base_footprint"/><link name="base_link"/><link name="arm"/>
<joint name="base_joint" type="fixed"><parent link="base_footprint"/><child link="base_link"/>
</joint>
<joint name="j1" type="revolute"><parent link="base_link"/><child link="arm"/>
<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""

SRDF = """<robot name="r">{virtual}
<group name="arm"><chain base_link="base_link" tip_link="arm"/></group></robot>"""


@pytest.mark.parametrize("kind", ["planar", "floating"])
def test_a_virtual_joint_moves_nothing_in_tesseract(kind: str) -> None:
    """unbounded_joint_type's fix for a mobile base: made fixed, its planar (floating) motion
    is not given back by the SRDF's virtual_joint in Tesseract, as it is in MoveIt: the
    environment has the joints and active joints it has without one."""
    virtual = (
        f'<virtual_joint name="v" type="{kind}" parent_frame="world" child_link="base_footprint"/>'
    )
    found = []
    for text in (SRDF.format(virtual=virtual), SRDF.format(virtual="")):
        env = Environment()
        assert env.init(URDF, text, GeneralResourceLocator())
        found.append((sorted(env.getJointNames()), list(env.getActiveJointNames())))
    assert found[0] == found[1] == (["base_joint", "j1"], ["j1"])


JOINT = """<robot name="r"><link name="a"/><link name="b"/>
<joint name="j" type="{kind}"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>{limit}
</joint></robot>"""


def _joint(kind: str, limit: str) -> Any:
    return parseURDFString(JOINT.format(kind=kind, limit=limit), GeneralResourceLocator())


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
@pytest.mark.parametrize("drop", ["effort", "velocity"])
def test_a_limit_of_lower_and_upper_alone_is_refused(kind: str, drop: str) -> None:
    """The fixes that write new joints (a ball joint's three, a planar or floating joint's
    chain) say <limit lower upper effort velocity>: one of lower and upper alone, as they said,
    Tesseract's URDF parser refuses."""
    limit = {"lower": "-1", "upper": "1", "effort": "1", "velocity": "1"}
    del limit[drop]
    text = "<limit " + " ".join(f'{k}="{v}"' for k, v in limit.items()) + "/>"
    with pytest.raises(RuntimeError, match="Error parsing 'joint' element"):
        _joint(kind, text)
    _joint(kind, '<limit lower="-1" upper="1" effort="1" velocity="1"/>')


@pytest.mark.parametrize("kind", ["spherical", "ball", "hinge", "Revolute"])
def test_a_type_urdf_does_not_define_is_refused(kind: str) -> None:
    """unknown_joint_type says Tesseract's URDF parser refuses the type: pybullet's
    spherical, SDF's and MuJoCo's ball, a word of another format, a type in another case."""
    with pytest.raises(RuntimeError, match="Error parsing 'joint' element"):
        _joint(kind, '<limit lower="-1" upper="1" effort="1" velocity="1"/>')


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ("", (0.0, 0.0)),
        ('lower="-1"', (-1.0, 0.0)),
        ('upper="1"', (0.0, 1.0)),
    ],
)
@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_a_missing_bound_is_read_as_zero(kind: str, given: str, read: tuple[float, float]) -> None:
    """missing_joint_limit says Tesseract reads a bound the <limit> lacks as 0: both lacking,
    a joint that cannot move (pybullet_data's minitaur's knees, <limit effort velocity>)."""
    graph = _joint(kind, f'<limit {given} effort="1" velocity="1"/>').release()
    limits = graph.getJoint("j").limits
    assert (limits.lower, limits.upper) == read
