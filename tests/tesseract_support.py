"""What the Tesseract conformance tests share: the committed descriptions and their loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tesseract_robotics.tesseract_common import GeneralResourceLocator
from tesseract_robotics.tesseract_srdf import SRDFModel
from tesseract_robotics.tesseract_urdf import parseURDFString

from pipeline.findings import Severity
from pipeline.urdf import Robot, parse_urdf
from tests.conftest import REPO

DESCRIPTIONS = sorted(
    [p for p in (REPO / "build" / "robots").iterdir() if (p / "robot.srdf").is_file()]
    + [p for p in (REPO / "build" / "cells").glob("*/description") if p.is_dir()]
)
# Tesseract's JointType enum: FIXED, REVOLUTE, CONTINUOUS, PRISMATIC, ... (scene_graph/joint.h)
JOINT_TYPES = {"fixed": 6, "revolute": 1, "continuous": 2, "prismatic": 3}


def tesseract_urdf(folder: Path, text: str, model_id: str) -> Any:
    """Parse URDF text, with package://<model_id>/ pointing at `folder`."""
    mapped = text.replace(f"package://{model_id}/", folder.resolve().as_uri() + "/")
    return parseURDFString(mapped, GeneralResourceLocator()).release()


def load(folder: Path) -> tuple[Robot, Any, Any]:
    """Our URDF model, Tesseract's scene graph and SRDF model of one description directory."""
    urdf = (folder / "robot.urdf").read_bytes()
    name = parse_urdf(urdf, "robot.urdf", "")[0].name
    robot, findings = parse_urdf(urdf, "robot.urdf", name)
    # a warning (an element URDF readers ignore) is built as any other description: loaded too
    errors = [f for f in findings if f.severity is Severity.ERROR]
    assert not [f for f in errors if f.code != "robot_name_mismatch"], errors
    graph = tesseract_urdf(folder, urdf.decode("utf-8"), name)
    srdf = SRDFModel()
    srdf.initString(graph, (folder / "robot.srdf").read_text(), GeneralResourceLocator())
    return robot, graph, srdf
