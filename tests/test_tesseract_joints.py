"""What the URDF joint findings say Tesseract does, measured: the types it refuses, how it reads
a <limit> without a bound, and that an SRDF virtual joint moves nothing in it."""

from __future__ import annotations

import pytest

pytest.importorskip("tesseract_robotics")

from tesseract_robotics.tesseract_common import GeneralResourceLocator
from tesseract_robotics.tesseract_environment import Environment

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
