"""A robot's optional JSON sources (config.json, rtcore_definition.json, spheres.settings.json),
each checked in the same run as its URDF, whatever the URDF's own findings."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pipeline.config import CONFIG_FILE, config_findings
from pipeline.findings import ContractError, Finding
from pipeline.plan import SPHERES_SETTINGS
from pipeline.rtcore import DEFINITION_FILE, definition_findings
from pipeline.strict_io import JSON_LIMIT, read_bytes
from pipeline.urdf import Robot

SETTINGS_FILE = SPHERES_SETTINGS
JSON_SOURCES = (CONFIG_FILE, DEFINITION_FILE, SETTINGS_FILE)
# a file's bytes, the model id, the URDF's model (None: no valid one) and the file's display
Check = Callable[[bytes, str, Robot | None, str], list[Finding]]


def _settings(data: bytes, model_id: str, robot: Robot | None, display: str) -> list[Finding]:
    # imported here: the spheres package imports numpy, and most runs never get here
    from pipeline.spheres.provenance import settings_findings

    return settings_findings(data, robot, display)


CHECKS: dict[str, Check] = {
    CONFIG_FILE: config_findings,
    DEFINITION_FILE: definition_findings,
    SETTINGS_FILE: _settings,
}


def json_source_findings(root: Path, model_id: str, robot: Robot | None) -> list[Finding]:
    """Every finding of the robot's optional JSON sources, file by file, in JSON_SOURCES order.

    `robot` is the URDF's model when it passed the URDF's own rules, else None. The rules that
    name the URDF's joints and links cannot be judged against a URDF that did not pass (a joint
    it misspells would make the config's correct name look unknown): without a model they are
    skipped, and each file's syntax, schema and own rules still run, so a broken URDF hides
    none of them.
    """
    folder = f"robots/{model_id}"
    findings: list[Finding] = []
    for name in JSON_SOURCES:
        path = root / folder / name
        if not os.path.lexists(path):
            continue  # optional; a folder, FIFO or dangling link is read, and refused
        display = f"{folder}/{name}"
        try:
            data = read_bytes(path, display, JSON_LIMIT)
            findings += CHECKS[name](data, model_id, robot, display)
        except ContractError as exc:  # not readable, or not JSON: nothing more to say of it
            findings += exc.findings
    return findings
