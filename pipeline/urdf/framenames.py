"""Link names ROS's frame tools refuse: a name beginning with `/`.

tf2 refuses a frame id that begins with `/` (robot_state_publisher, RViz and MoveIt look every
link up by its name), though Tesseract reads it. xacro writes such names when a prefix argument
is left empty (`${robot_name}/base_link`). A warning: a planner on Tesseract alone is served.
"""

from __future__ import annotations

from pipeline.findings import Finding, Severity
from pipeline.urdf.model import Robot


def frame_name_findings(robot: Robot) -> list[Finding]:
    """A warning per link whose name begins with `/`, at its `<link>` line."""
    return [
        Finding(
            "frame_name_leading_slash",
            robot.file,
            str(link.line),
            f"link {link.name!r} begins with '/': ROS's tf2 refuses it as a frame id "
            "(robot_state_publisher, RViz and MoveIt look links up by name), though Tesseract "
            "reads it",
            f"name it {link.name.lstrip('/')!r}, in the joints and the SRDF that name it too "
            "(an empty xacro prefix argument writes such names: give it a value)",
            Severity.WARNING,
        )
        for link in robot.links
        if link.name.startswith("/")
    ]
