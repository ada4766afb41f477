"""A throwaway copy of the repository for cell tests: sources, code and the committed build/."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
COPIED = ("robots", "cells", "build", "pipeline")


def copy_repo(dest: Path) -> Path:
    """Copy what a build reads and writes into `dest` (a fresh checkout, minus git)."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in COPIED:
        shutil.copytree(REPO / name, dest / name, ignore=ignore, symlinks=True)
    for name in ("dodo.py", "pyproject.toml"):
        shutil.copy2(REPO / name, dest / name)
    return dest


def snapshot(folder: Path) -> dict[str, str]:
    """Digest of every file under `folder`, by relative path."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def read_doc(path: Path) -> dict[str, Any]:
    """A JSON document as a dict."""
    doc: dict[str, Any] = json.loads(path.read_bytes())
    return doc


def write_doc(path: Path, doc: dict[str, Any]) -> bytes:
    """Write a JSON document (indent 2, final newline); return its bytes."""
    data = (json.dumps(doc, indent=2) + "\n").encode()
    path.write_bytes(data)
    return data


def repin(root: Path, cell_id: str) -> None:
    """Set a cell's pin to the SHA-256 of its calibration file's current bytes."""
    machine_path = root / "cells" / cell_id / "machine.json"
    machine = read_doc(machine_path)
    pin = machine["robot"]["machine_planning_calibration"]
    pin["sha256"] = hashlib.sha256(
        (root / "cells" / cell_id / pin["path"]).read_bytes()
    ).hexdigest()
    write_doc(machine_path, machine)


def edit_calibration(root: Path, cell_id: str, change: Any) -> None:
    """Apply `change(doc)` to the pinned calibration of a cell, then re-pin it."""
    path = root / "cells" / cell_id / "machine_planning_calibration.json"
    doc = read_doc(path)
    change(doc)
    write_doc(path, doc)
    repin(root, cell_id)


ABB_J3_LIMIT = '<limit effort="0" lower="-1.0472" upper="1.1345" velocity="2.618"/>'
ABB_STATES = 'STATES = {("manipulator", "all-zeros"): {joint: 0.0 for joint in ARM_JOINTS}}'


def review_off_zero(root: Path) -> dict[str, float]:
    """Make a copy's abb_irb2400 reviewed off zero; return the joint positions it must be at.

    joint_3's limits are shifted to exclude 0 (as a Unitree A1 knee's [-2.7, -0.9] rad), so its
    0 is clamped to the lower limit, 0.2 rad (config.json's reset pose moves there too); the
    SRDF's `home` state of `manipulator` (which replaces the all-zeros state joint_3 could no
    longer take) sets joint_2 and joint_5.
    """
    urdf = root / "robots/abb_irb2400/robot.urdf"
    text = urdf.read_text()
    assert text.count(ABB_J3_LIMIT) == 1
    urdf.write_text(text.replace(ABB_J3_LIMIT, ABB_J3_LIMIT.replace('"-1.0472"', '"0.2"')))
    config = root / "robots/abb_irb2400/config.json"
    doc = read_doc(config)
    doc["reset_pose"]["joint_3"] = 0.2  # reset_pose_outside_limits at 0
    write_doc(config, doc)
    source = root / "robots/abb_irb2400/srdf.py"
    text = source.read_text()
    assert ABB_STATES in text
    home = 'STATES = {("manipulator", "home"): {"joint_2": 0.5, "joint_5": -0.25}}'
    source.write_text(text.replace(ABB_STATES, home))
    return {
        "joint_1": 0.0,
        "joint_2": 0.5,
        "joint_3": 0.2,
        "joint_4": 0.0,
        "joint_5": -0.25,
        "joint_6": 0.0,
    }


PAIR = "abb_irb2400_pair"
SIDES = ("left", "right")
# each arm's base on a common `pedestal`, 0.8 m to either side; the right arm turned to face left
MOUNTS = {"left": "0 0.8 0", "right": "0 -0.8 0"}
MOUNT_RPY = {"left": "0 0 0", "right": "0 0 3.141592653589793"}
PAIR_CHAINS = "".join(f'<chain base_link="pedestal" tip_link="{side}_tool0"/>' for side in SIDES)


def two_arm_urdf(model_id: str = PAIR) -> str:
    """The shipped abb_irb2400 twice, every link and joint named `left_...` and `right_...`,
    each arm's base_link fixed to a common root link `pedestal`."""
    text = (REPO / "robots/abb_irb2400/robot.urdf").read_text()
    start, end = text.index("  <link "), text.rindex("</robot>")
    named = re.compile(r'(<(?:link|joint) name="|<(?:parent|child) link=")([^"]+)"')
    arms = "".join(named.sub(rf'\g<1>{side}_\g<2>"', text[start:end]) for side in SIDES)
    mounts = "".join(
        f'  <joint name="{side}_mount" type="fixed"><parent link="pedestal"/>'
        f'<child link="{side}_base_link"/><origin xyz="{MOUNTS[side]}" rpy="{MOUNT_RPY[side]}"/>'
        "</joint>\n"
        for side in SIDES
    )
    head = text[:start].replace('name="abb_irb2400"', f'name="{model_id}"')
    body = '  <link name="pedestal"/>\n' + mounts + arms
    return head + body.replace("package://abb_irb2400/", f"package://{model_id}/") + "</robot>\n"


# the pair's compiled SRDF: `manipulator` one chain per arm, its home off zero on both arms
PAIR_HOME = {"left_joint_2": 0.3, "right_joint_3": -0.2}
PAIR_SRDF_PY = f"""import xml.etree.ElementTree as ET


def gen_srdf():
    robot = ET.Element("robot", {{"name": "{PAIR}"}})
    group = ET.SubElement(robot, "group", {{"name": "manipulator"}})
    for side in ("left", "right"):
        ET.SubElement(group, "chain", {{"base_link": "pedestal", "tip_link": side + "_tool0"}})
    home = ET.SubElement(robot, "group_state", {{"name": "home", "group": "manipulator"}})
    for joint, value in {PAIR_HOME!r}.items():
        ET.SubElement(home, "joint", {{"name": joint, "value": repr(value)}})
    return {{"xml": robot, "urdf": "robot.urdf"}}
"""
# the pair's cell: its calibration corrects two joints of the second (right) arm only
PAIR_CELL = "pair_cell"
PAIR_CORRECTIONS = {
    "right_joint_2": {"xyz_m": [0.0004, 0, -0.0002], "rpy_rad": [0, 0.0008, 0]},
    "right_joint_3": {"xyz_m": [0, 0, 0.0003], "rpy_rad": [0, -0.0005, 0]},
}


def add_two_arm_cell(root: Path) -> None:
    """Add the pair (two_arm_urdf) as robots/abb_irb2400_pair and a cell `pair_cell` running it,
    whose pinned calibration corrects joints of the right arm (PAIR_CORRECTIONS)."""
    folder = root / "robots" / PAIR
    shutil.copytree(REPO / "robots/abb_irb2400/meshes", folder / "meshes")
    (folder / "robot.urdf").write_text(two_arm_urdf())
    (folder / "srdf.py").write_text(PAIR_SRDF_PY)
    joints = [f"{side}_joint_{i}" for side in SIDES for i in range(1, 7)]
    cap = {"xyz_m": [0.002] * 3, "rpy_rad": [0.005] * 3}
    config = {
        "schema": "rosie.robot-config.v1",
        "model_id": PAIR,
        "planning": {"joints": joints},
        "calibration_caps": dict.fromkeys(joints, cap),
    }
    write_doc(folder / "config.json", config)
    cell = root / "cells" / PAIR_CELL
    cell.mkdir()
    calibration = {
        "schema": "rosie.machine-planning-calibration.v1",
        "model_id": PAIR,
        "kinematics": PAIR_CORRECTIONS,
    }
    write_doc(cell / "machine_planning_calibration.json", calibration)
    pin = {"path": "machine_planning_calibration.json", "sha256": "0" * 64, "source": "a test"}
    machine = {"schema": "rosie.machine-config.v1", "cell_id": PAIR_CELL}
    write_doc(
        cell / "machine.json",
        {**machine, "robot": {"model_id": PAIR, "machine_planning_calibration": pin}},
    )
    repin(root, PAIR_CELL)
