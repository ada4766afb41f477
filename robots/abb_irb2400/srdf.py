"""Semantic description of the ABB IRB 2400: one arm chain, a zero pose, two named TCPs."""

import xml.etree.ElementTree as ET

ROBOT = "abb_irb2400"
ARM_JOINTS = ["joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6"]

# group name -> (base_link, tip_link)
CHAINS = {"manipulator": ("base_link", "tool0")}

# (group, state name) -> joint values in rad
STATES = {("manipulator", "all-zeros"): {joint: 0.0 for joint in ARM_JOINTS}}

# Named TCP offsets of the manipulator group, relative to tool0: xyz in m, rpy in rad or wxyz.
TCPS = {
    "laser": {"xyz": "1 .1 1", "rpy": "0 1.57 0"},
    "welder": {"xyz": ".1 1 .2", "wxyz": "1 0 0 0"},
}

VIRTUAL_JOINT = {
    "name": "FixedBase",
    "type": "fixed",
    "parent_frame": "world",
    "child_link": "base_link",
}

# Link pairs that never need a collision check, with the reason (as the setup assistant found).
ALLOWED_COLLISIONS = [
    ("base_link", "link_1", "Adjacent"),
    ("base_link", "link_2", "Never"),
    ("base_link", "link_3", "Never"),
    ("link_1", "link_2", "Adjacent"),
    ("link_1", "link_3", "Never"),
    ("link_2", "link_3", "Adjacent"),
    ("link_2", "link_4", "Never"),
    ("link_2", "link_5", "Never"),
    ("link_2", "link_6", "Never"),
    ("link_3", "link_4", "Adjacent"),
    ("link_3", "link_5", "Never"),
    ("link_3", "link_6", "Never"),
    ("link_4", "link_5", "Adjacent"),
    ("link_4", "link_6", "Default"),
    ("link_5", "link_6", "Adjacent"),
]


def gen_srdf():
    robot = ET.Element("robot", {"name": ROBOT})
    for group, (base, tip) in CHAINS.items():
        element = ET.SubElement(robot, "group", {"name": group})
        ET.SubElement(element, "chain", {"base_link": base, "tip_link": tip})
    for (group, name), values in STATES.items():
        state = ET.SubElement(robot, "group_state", {"name": name, "group": group})
        for joint, value in values.items():
            ET.SubElement(state, "joint", {"name": joint, "value": repr(value)})
    tcps = ET.SubElement(robot, "group_tcps", {"group": "manipulator"})
    for name, pose in TCPS.items():
        ET.SubElement(tcps, "tcp", {"name": name, **pose})
    ET.SubElement(robot, "virtual_joint", VIRTUAL_JOINT)
    for link1, link2, reason in ALLOWED_COLLISIONS:
        ET.SubElement(
            robot, "disable_collisions", {"link1": link1, "link2": link2, "reason": reason}
        )
    return {"xml": robot, "urdf": "robot.urdf"}
