"""Virtual and passive joints (validate_more.py) and mimic joints in group states, compiled."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.findings import ContractError
from pipeline.srdf.compile import compile_srdf
from tests.test_srdf_output import minimal_source

VIRTUAL = """
ET.SubElement(robot, "virtual_joint", {"name": "world_joint", "type": "floating",
              "parent_frame": "world", "child_link": "base_link"})
"""


@pytest.mark.parametrize(
    ("case", "passive", "codes"),
    [
        # srdfdom (MoveIt) and Tesseract's SRDF reader both accept a passive virtual joint
        ("virtual_joint", "world_joint", []),
        ("urdf_joint", "joint_6", []),
        ("unknown_joint", "joint_99", ["unknown_joint"]),
    ],
)
def test_unknown_joint_passive_joint_names_a_urdf_or_virtual_joint(
    case: str, passive: str, codes: list[str], repo: Path
) -> None:
    line = f'ET.SubElement(robot, "passive_joint", {{"name": "{passive}"}})\n'
    source = minimal_source(repo, VIRTUAL + line)
    try:
        data = compile_srdf(source, repo / "o.srdf", repo)
    except ContractError as exc:
        found = [(f.code, f.file, f.place) for f in exc.findings]
        assert found == [(c, "robots/abb_irb2400/gen.py", "/robot/passive_joint[1]") for c in codes]
        return
    assert codes == []
    assert f'<passive_joint name="{passive}"/>'.encode() in data


J6_LIMIT = '<limit effort="0" lower="-6.9813" upper="6.9813" velocity="7.854"/>'
MIMIC_STATE = """
state = ET.SubElement(robot, "group_state", {"name": "open", "group": "manipulator"})
for name in JOINTS:
    ET.SubElement(state, "joint", {"name": name, "value": "0.5"})
"""


@pytest.mark.parametrize(
    ("joints", "hint"),
    [
        # a Panda hand's `open` state written with both fingers, as its SRDFs often are
        (
            ["joint_5", "joint_6"],
            "remove it: it follows 'joint_5' (multiplier * q + offset), which the state sets",
        ),
        (["joint_6"], "remove it and set 'joint_5', which it follows (multiplier * q + offset)"),
    ],
    ids=["followed-joint-set", "followed-joint-not-set"],
)
def test_group_state_mimic_joint_says_whether_the_state_sets_the_joint_followed(
    repo: Path, joints: list[str], hint: str
) -> None:
    """The fix was "set the joint it mimics instead", also to a state that set both."""
    urdf = repo / "robots/abb_irb2400/robot.urdf"
    text = urdf.read_text()
    assert text.count(J6_LIMIT) == 1
    urdf.write_text(text.replace(J6_LIMIT, J6_LIMIT + '<mimic joint="joint_5"/>'))
    source = minimal_source(repo, f"JOINTS = {joints!r}\n" + MIMIC_STATE)
    with pytest.raises(ContractError) as raised:
        compile_srdf(source, repo / "o.srdf", repo)
    [finding] = raised.value.findings
    assert (finding.code, finding.hint) == ("group_state_mimic_joint", hint), finding.line()
