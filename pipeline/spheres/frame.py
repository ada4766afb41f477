"""A rigid placement in a link's frame: a URDF `<origin>`'s rotation and translation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.urdf import Origin

Array = np.ndarray


def rpy_matrix(rpy: tuple[float, float, float]) -> Array:
    """Rotation matrix of URDF roll-pitch-yaw (fixed axes X, then Y, then Z)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


@dataclass(frozen=True)
class Frame:
    """A rigid placement: link-frame point = rotation @ local point + translation."""

    rotation: Array
    translation: Array

    @staticmethod
    def of(origin: Origin) -> Frame:
        """The frame a URDF `<origin>` describes."""
        return Frame(rpy_matrix(origin.rpy), np.array(origin.xyz, dtype=float))

    def apply(self, points: Array) -> Array:
        """Local points (..., 3) into the link frame."""
        return points @ self.rotation.T + self.translation

    def local(self, points: Array) -> Array:
        """Link-frame points (..., 3) into the local frame."""
        return (points - self.translation) @ self.rotation
