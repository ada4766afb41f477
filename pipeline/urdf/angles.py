"""An `<origin rpy>`: its bound, and the warning of an angle that looks typed in degrees."""

from __future__ import annotations

import math

from pipeline.findings import Finding, Severity
from pipeline.urdf.joints import ANGLE_LIMIT

# Past a full turn by more than a written 2 pi's rounding (6.2832, 6.284): URDF angles are
# radians, and a 90, 180 or 45 there is likelier degrees than a turn and a quarter.
FULL_TURN = 2 * math.pi
_ROUNDING = 1e-3


def rpy_finding(
    rpy: tuple[float, ...], text: str, tag: str, display: str, line: int
) -> Finding | None:
    """An error when an rpy angle is beyond ANGLE_LIMIT rad (what no revolute joint reaches,
    as xyz is bounded at 1e6 m), else a warning when one is past a full turn."""
    worst = max((abs(v) for v in rpy), default=0.0)
    if worst > ANGLE_LIMIT:
        return Finding(
            "origin_out_of_range",
            display,
            str(line),
            f'<{tag} rpy="{text}"> has an angle of {worst:g} rad, beyond {ANGLE_LIMIT:.0e} rad',
            "give roll, pitch and yaw in radians, within a turn (degrees need converting: "
            "90 degrees is 1.5708 rad)",
        )
    if worst > FULL_TURN + _ROUNDING:
        return Finding(
            "rpy_likely_degrees",
            display,
            str(line),
            f'<{tag} rpy="{text}"> has an angle of {worst:g} rad, past a full turn '
            f"({FULL_TURN:.4f} rad), as an angle in degrees would be",
            f"give rpy in radians ({worst:g} degrees is {math.radians(worst):.6g} rad); an "
            "angle of more than a turn as meant needs no change (Tesseract reads it)",
            Severity.WARNING,
        )
    return None
