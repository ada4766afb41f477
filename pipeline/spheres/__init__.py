"""Collision spheres: conservative fitting, proven coverage, per-link refit and restamp.

The entry points load lazily so that the command line starts without numpy and trimesh.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "build_spheres": "pipeline.spheres.build",
    "status": "pipeline.spheres.build",
    "verify": "pipeline.spheres.build",
    "SpheresReport": "pipeline.spheres.build",
    "LinkCheck": "pipeline.spheres.checks",
    "VerifyReport": "pipeline.spheres.checks",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import an entry point on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'pipeline.spheres' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
