"""The invalid_number message says what is wrong with the numbers an attribute holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.findings import ContractError
from pipeline.urdf import load_robot
from tests.test_urdf import ABB, J2_ORIGIN, break_urdf

# (the joint_2 <origin> written, the message's end expected)
CASES = [
    # pybullet_data's microtaur: a fourth number in a joint's rpy, which Tesseract refuses
    ('<origin rpy="-3.14159 1.57079 0 0" xyz="0.1 0 0.615"/>', "holds 4 numbers, not 3"),
    ('<origin rpy="0 0 0" xyz="0.1 0.615"/>', "holds 2 numbers, not 3"),
    ('<origin rpy="" xyz="0.1 0 0.615"/>', "holds no number, not 3"),
    # not numbers at all, or not finite: the count is not the matter
    ('<origin rpy="0 0 pi" xyz="0.1 0 0.615"/>', "is not 3 finite number(s)"),
    ('<origin rpy="0 0 inf" xyz="0.1 0 0.615"/>', "is not 3 finite number(s)"),
    ('<origin rpy="0 0 nan 0" xyz="0.1 0 0.615"/>', "is not 3 finite number(s)"),
]


@pytest.mark.parametrize(("origin", "end"), CASES, ids=[c[1] for c in CASES])
def test_invalid_number_says_how_many_numbers_were_written(
    repo: Path, origin: str, end: str
) -> None:
    path = break_urdf(repo, [(J2_ORIGIN, origin)])
    with pytest.raises(ContractError) as exc:
        load_robot(repo / ABB, repo)
    (finding,) = exc.value.findings
    assert finding.code == "invalid_number"
    assert origin in path.read_text().splitlines()[int(finding.place) - 1]
    assert finding.message.endswith(end), finding.message
    assert finding.hint.startswith("write 3 finite decimal number(s)")
