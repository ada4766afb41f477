"""The SRDF writer (pipeline/srdf/write.py): a TCP's wxyz is written as a unit quaternion."""

from __future__ import annotations

import math

import pytest

from pipeline.srdf.model import GroupTcps, Quat, Srdf, Tcp
from pipeline.srdf.read import parse_srdf
from pipeline.srdf.write import write_srdf
from pipeline.strict_xml import parse_xml

HALF = math.sqrt(0.5)


@pytest.mark.parametrize(
    ("case", "wxyz", "unit"),
    [
        ("ordinary", (2.0, 0.0, 0.0, 2.0), (HALF, 0.0, 0.0, HALF)),
        # the squares underflow to 0: was a ZeroDivisionError traceback
        ("tiny", (1e-200, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)),
        # the squares underflow to subnormals: was written 1e-5 away from unit length
        ("subnormal_squares", (1e-160, 0.0, 0.0, 1e-160), (HALF, 0.0, 0.0, HALF)),
        # the squares overflow to inf: was written 0 0 0 0, no rotation at all
        ("huge", (1e200, 1e200, 0.0, 0.0), (HALF, HALF, 0.0, 0.0)),
    ],
)
def test_tcp_wxyz_is_written_normalised_at_any_magnitude(case: str, wxyz: Quat, unit: Quat) -> None:
    srdf = Srdf("r", None, (GroupTcps("g", (Tcp("t", (0.0, 0.0, 0.1), None, wxyz, ""),), ""),))
    back, findings = parse_srdf(parse_xml(write_srdf(srdf, None), "x"), "x")
    assert findings == []
    block = back.elements[0]
    assert isinstance(block, GroupTcps)
    written = block.tcps[0].wxyz
    assert written == pytest.approx(unit, abs=1e-15)
    assert written is not None and math.fsum(q * q for q in written) == pytest.approx(1, abs=1e-15)
