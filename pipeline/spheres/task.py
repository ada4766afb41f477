"""The spheres build step of one robot: previous output in, new spheres.json bytes out."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.findings import ContractError
from pipeline.spheres.build import build_spheres, status
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


def describe_status(root: Path, model_id: str) -> str:
    """`; links: ...` summarising which links a rebuild would refit or restamp (no fitting)."""
    folder = root / "robots" / model_id
    target = f"build/robots/{model_id}/{FILE}"
    try:
        robot = load_robot(folder, root)
        previous = None
        if os.path.lexists(root / target):
            previous = read_bytes(root / target, target, JSON_LIMIT)
        states = status(robot, folder, previous)
    except ContractError:
        return ""
    parts = []
    for state in ("refit", "restamp"):
        names = [name for name, s in states.items() if s == state]
        if names:
            parts.append(f"{state} {', '.join(names)}")
    return f"; links: {'; '.join(parts)}" if parts else ""
