"""doit entry point: the compiler's task graph lives in pipeline.tasks."""

from pipeline.tasks import (
    doit_config,
    task_cell,
    task_cellbuild,
    task_check,
    task_code,
    task_config,
    task_index,
    task_manifest,
    task_prune,
    task_spheres,
    task_srdf,
    task_urdf,
)

# Holds the checkout's build lock from here on, before doit opens its database.
DOIT_CONFIG = doit_config()

__all__ = [
    "DOIT_CONFIG",
    "task_cell",
    "task_cellbuild",
    "task_check",
    "task_code",
    "task_config",
    "task_index",
    "task_manifest",
    "task_prune",
    "task_spheres",
    "task_srdf",
    "task_urdf",
]
