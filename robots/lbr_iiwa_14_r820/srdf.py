"""Semantic description of the KUKA LBR iiwa 14 R820: the arm as a chain and as a joint list."""

import xml.etree.ElementTree as ET

ROBOT = "lbr_iiwa_14_r820"
ARM_JOINTS = [f"joint_a{i}" for i in range(1, 8)]
LINKS = ["base_link"] + [f"link_{i}" for i in range(1, 8)]

# The same arm twice: as a chain (for Tesseract's kinematic solvers) and as a joint group.
CHAINS = {"manipulator": ("base_link", "tool0")}
JOINT_GROUPS = {"manipulator_joint_group": ARM_JOINTS}

# (group, state name) -> joint values in rad
STATES = {("manipulator", "all-zeros"): {joint: 0.0 for joint in ARM_JOINTS}}

# Named TCP offsets, relative to tool0: xyz in m, rpy in rad or wxyz; the same for both groups.
TCPS = {
    "laser": {"xyz": "1 .1 1", "rpy": "0 1.57 0"},
    "welder": {"xyz": ".1 1 .2", "wxyz": "1 0 0 0"},
}
TCP_GROUPS = ["manipulator", "manipulator_joint_group"]

# Links along the serial arm: neighbours touch ("Adjacent"); links up to three apart never
# meet, nor do any two links above link_1 that are not adjacent.
NEVER_FROM_BASE = 4


def allowed_collisions():
    pairs = []
    for i, first in enumerate(LINKS):
        for j in range(i + 1, len(LINKS)):
            if j == i + 1:
                pairs.append((first, LINKS[j], "Adjacent"))
            elif i > 0 or j <= NEVER_FROM_BASE:
                pairs.append((first, LINKS[j], "Never"))
    return pairs


def gen_srdf():
    robot = ET.Element("robot", {"name": ROBOT})
    for group, (base, tip) in CHAINS.items():
        element = ET.SubElement(robot, "group", {"name": group})
        ET.SubElement(element, "chain", {"base_link": base, "tip_link": tip})
    for group, joints in JOINT_GROUPS.items():
        element = ET.SubElement(robot, "group", {"name": group})
        for joint in joints:
            ET.SubElement(element, "joint", {"name": joint})
    for (group, name), values in STATES.items():
        state = ET.SubElement(robot, "group_state", {"name": name, "group": group})
        for joint, value in values.items():
            ET.SubElement(state, "joint", {"name": joint, "value": repr(value)})
    for group in TCP_GROUPS:
        tcps = ET.SubElement(robot, "group_tcps", {"group": group})
        for name, pose in TCPS.items():
            ET.SubElement(tcps, "tcp", {"name": name, **pose})
    for link1, link2, reason in allowed_collisions():
        ET.SubElement(
            robot, "disable_collisions", {"link1": link1, "link2": link2, "reason": reason}
        )
    return {"xml": robot, "urdf": "robot.urdf"}
