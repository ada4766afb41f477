"""Virtual and passive joints (pipeline/srdf/validate_more.py), through compile_srdf."""

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
