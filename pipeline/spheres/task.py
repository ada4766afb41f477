"""The spheres build step of one robot: previous output in, new spheres.json bytes out."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.spheres.build import build_spheres
from pipeline.spheres.document import FILE
from pipeline.strict_io import JSON_LIMIT, read_bytes
from pipeline.urdf import load_robot

WORKERS = 2


def make_spheres(root: Path, model_id: str) -> dict[str, bytes]:
    """Refit the links whose geometry changed, restamp the others, prove coverage of all."""
    folder = root / "robots" / model_id
    robot = load_robot(folder, root)
    target = f"build/robots/{model_id}/{FILE}"
    previous = (
        read_bytes(root / target, target, JSON_LIMIT) if os.path.lexists(root / target) else None
    )
    data, _ = build_spheres(robot, folder, root, previous, workers=WORKERS)
    return {target: data}
