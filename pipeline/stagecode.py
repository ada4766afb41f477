"""The code each stage's outputs are made by: a change to any module listed makes them stale."""

from __future__ import annotations

from pipeline.stamps import stamp_path

BASE_CODE = (
    "pipeline/findings.py",
    "pipeline/strict_io.py",
    "pipeline/strict_json.py",
    "pipeline/stamps.py",
    "pipeline/writing.py",
)
URDF_CODE = (
    *BASE_CODE,
    "pipeline/strict_xml.py",
    "pipeline/sourcenames.py",
    "pipeline/winnames.py",
    "pipeline/urdf/__init__.py",
    "pipeline/urdf/model.py",
    "pipeline/urdf/read.py",
    "pipeline/urdf/attributes.py",
    "pipeline/urdf/shapes.py",
    "pipeline/urdf/angles.py",
    "pipeline/urdf/meshuri.py",
    "pipeline/urdf/extras.py",
    "pipeline/urdf/joints.py",
    "pipeline/urdf/rules.py",
    "pipeline/urdf/mesh_bytes.py",
    "pipeline/urdf/dae_blocks.py",
    "pipeline/urdf/dae_nodes.py",
    "pipeline/urdf/ply_counts.py",
    "pipeline/urdf/companions.py",
    "pipeline/urdf/scales.py",
    "pipeline/urdf/uncollided.py",
    "pipeline/urdf/framenames.py",
    "pipeline/urdf/unknown.py",
    "pipeline/urdf/xacro.py",
    # The urdf step reads every collision mesh as the spheres step does (description.py).
    "pipeline/spheres/__init__.py",
    "pipeline/spheres/geometry.py",
    "pipeline/spheres/frame.py",
    "pipeline/spheres/patches.py",
    "pipeline/spheres/rows.py",
    "pipeline/spheres/meshlib.py",
    "pipeline/spheres/triangles.py",
    "pipeline/spheres/dae_count.py",
    "pipeline/spheres/dae_scene.py",
    "pipeline/spheres/loose.py",
    "pipeline/spheres/polygons.py",
    "pipeline/spheres/winding.py",
    "pipeline/spheres/extent.py",
    # and cuts it into the parts the planner collides, none of one point
    "pipeline/meshsplit.py",
    "pipeline/objparts.py",
    "pipeline/objlines.py",
    "pipeline/description.py",
)
CONFIG_CODE = (
    *URDF_CODE,
    "pipeline/schemas.py",
    "pipeline/annotated_templates.py",
    "pipeline/schemas/robot-config.schema.json",
    "pipeline/schemas/robot-definition.schema.json",
    "pipeline/config.py",
    "pipeline/rtcore.py",
)
SRDF_CODE = (
    *URDF_CODE,
    # group states collided (srdf/contact_check.py)
    "pipeline/contacts.py",
    "pipeline/homepose.py",
    "pipeline/kinematics.py",
    # the meshes gen_srdf() may read (srdf/generate.py)
    "pipeline/sourcefiles.py",
    *(
        f"pipeline/srdf/{name}.py"
        for name in (
            "__init__",
            "checker",
            "child",
            "child_guard",
            "child_xml",
            "compile",
            "contact_check",
            "envelope",
            "generate",
            "groups",
            "jointgroups",
            "model",
            "read",
            "run_child",
            "units",
            "validate",
            "validate_more",
            "view",
            "write",
        )
    ),
)
SPHERES_CODE = (
    *URDF_CODE,
    "pipeline/schemas.py",
    "pipeline/schemas/spheres.schema.json",
    "pipeline/schemas/spheres-settings.schema.json",
    *(
        f"pipeline/spheres/{name}.py"
        for name in (
            "__init__",
            "adam",
            "ball",
            "primitives",
            "build",
            "checks",
            "dae_scene",
            "document",
            "fit",
            "frame",
            "geometry",
            "loose",
            "patches",
            "plate",
            "polygons",
            "polish",
            "finish",
            "pool",
            "portable",
            "prove",
            "provenance",
            "rows",
            "task",
            "triangles",
            "winding",
            "winding_tree",  # a triangle soup's inside test: no shipped mesh calls it
        )
    ),
)
MANIFEST_CODE = (*BASE_CODE, "pipeline/manifest.py", "pipeline/description.py")
# identity.py hashes each registered file with filesig.hash_fd
INDEX_CODE = (*MANIFEST_CODE, "pipeline/identity.py", "pipeline/filesig.py")
CELL_CODE = (
    *URDF_CODE,
    "pipeline/manifest.py",
    "pipeline/identity.py",
    "pipeline/filesig.py",
    "pipeline/schemas.py",
    "pipeline/annotated_templates.py",
    "pipeline/schemas/machine-config.schema.json",
    "pipeline/schemas/machine-planning-calibration.schema.json",
    "pipeline/config.py",
    "pipeline/kinematics.py",
    "pipeline/homepose.py",
    "pipeline/calibration.py",
    "pipeline/review.py",
    "pipeline/machine.py",
    "pipeline/cell.py",
    # the review's tips are the SRDF manipulator group's, their pose the group's home state
    "pipeline/srdf/model.py",
    "pipeline/srdf/read.py",
    "pipeline/srdf/groups.py",
    "pipeline/srdf/units.py",
)
# the code that writes dist/<cell_id>.tar.gz beyond what the cellbuild step reads
PACKAGE_CODE = ("pipeline/archive.py", "pipeline/bundle.py")


CODE: dict[str, tuple[str, ...]] = {
    "urdf": URDF_CODE,
    "config": CONFIG_CODE,
    "srdf": SRDF_CODE,
    "spheres": SPHERES_CODE,
    "manifest": MANIFEST_CODE,
    "index": INDEX_CODE,
    "cellbuild": CELL_CODE,
}


def code(stage: str) -> str:
    """The stamp recording the digests of the code that makes one stage's outputs.

    Steps depend on it rather than on each module, so that a build of hundreds of steps checks
    each module once, and a code change still makes every output of the stage stale.
    """
    return stamp_path(f"code:{stage}")
