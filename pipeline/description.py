"""Compiling one description directory: validated copies, the manifest, the identity index."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import CONFIG_FILE, config_from_bytes
from pipeline.findings import (
    ContractError,
    Finding,
    Severity,
    errors,
    folded,
    raise_if_errors,
    render,
)
from pipeline.identity import description_identity
from pipeline.manifest import (
    MANIFEST_NAME,
    is_registered,
    manifest_bytes,
)
from pipeline.robotinputs import json_source_findings
from pipeline.rtcore import DEFINITION_FILE, definition_from_bytes
from pipeline.stamps import read_stamp
from pipeline.strict_io import JSON_LIMIT, MESH_LIMIT, SOURCE_LIMIT, XML_LIMIT, read_bytes
from pipeline.strict_json import dump_json
from pipeline.urdf import Collision, Mesh, Robot, Visual, load_robot
from pipeline.urdf.companions import companion_files, urdf_texture_files
from pipeline.urdf.framenames import frame_name_findings
from pipeline.urdf.mesh_bytes import mesh_findings
from pipeline.urdf.rules import model_id_findings, robot_findings
from pipeline.urdf.scales import scale_findings
from pipeline.urdf.uncollided import uncollided_findings
from pipeline.winnames import unportable_part, uri_unsafe_part

INDEX_PATH = "build/index.json"


def source_dir(model_id: str) -> str:
    """Repo-relative folder of a robot's sources."""
    return f"robots/{model_id}"


def build_dir(model_id: str) -> str:
    """Repo-relative folder of a robot's compiled description."""
    return f"build/robots/{model_id}"


@dataclass(frozen=True)
class UrdfSources:
    """A robot's valid URDF model, the bytes of it and its meshes by build path, its warnings."""

    robot: Robot
    copies: dict[str, bytes]
    warnings: tuple[Finding, ...]


def make_urdf_copies(root: Path, model_id: str) -> dict[str, bytes]:
    """Validate the URDF and the meshes it names, then copy them byte for byte; print the
    warnings on stderr (as doit shows a step's stderr), which change no output."""
    sources = read_urdf_sources(root, model_id)
    if sources.warnings:
        print(render(sources.warnings), file=sys.stderr)
    return sources.copies


def read_urdf_sources(root: Path, model_id: str) -> UrdfSources:
    """The valid URDF model, the bytes of it and its meshes by their build paths, and the
    warnings about them.

    Every check runs before any finding stops it (DESIGN: errors are for people): a missing
    mesh does not hide another mesh's bytes, nor a refused number another link's extent. A
    finding stops only the checks of what it is about: a mesh file refused by name or bytes is
    not parsed, and a link with a refused element or mesh is not judged by its extent. Nor does
    a refused URDF or mesh hide the robot's JSON sources: their findings are raised with these
    (robotinputs.json_source_findings), so that the config and spheres steps, which the build
    runs only after this one passed, hide nothing either.
    """
    src = root / source_dir(model_id)
    # alone: every other finding would name the file through the unprintable folder name, and
    # nothing is read in a folder that is a link
    raise_if_errors(model_id_findings(src, root))
    try:
        found = robot_findings(src, root)
    except ContractError as exc:  # no model at all (no URDF, not XML)
        raise ContractError([*exc.findings, *json_source_findings(root, model_id, None)]) from None
    robot, refused = found.robot, found.refused
    findings = [*found.own, *found.meshes]
    # warnings, printed with any error so that none hides them
    findings += scale_findings(robot) + uncollided_findings(robot) + frame_name_findings(robot)
    out = {
        f"{build_dir(model_id)}/robot.urdf": read_bytes(
            src / "robot.urdf", f"{source_dir(model_id)}/robot.urdf", XML_LIMIT
        )
    }
    meshes = {}
    for mesh in robot.mesh_paths():
        if mesh in refused:
            continue
        display = f"{source_dir(model_id)}/{mesh}"
        try:
            data = read_bytes(src / mesh, display, MESH_LIMIT)
        except ContractError as exc:
            findings += exc.findings
            continue
        problems = mesh_findings(data, display)
        findings += problems
        if not errors(problems):
            meshes[mesh] = data
    # Material libraries and textures the meshes and the URDF name, so a visual keeps its look.
    urdf = out[f"{build_dir(model_id)}/robot.urdf"]
    try:
        textures, unserved = urdf_texture_files(src, urdf, model_id, source_dir(model_id))
        meshes |= textures
        findings += unserved
    except ContractError as exc:
        findings += exc.findings
    try:
        companions, unserved = companion_files(src, meshes, source_dir(model_id))
        meshes |= companions
        findings += unserved
    except ContractError as exc:
        findings += exc.findings
    findings += case_collision_findings(robot, meshes, model_id)
    findings += unportable_name_findings(robot, meshes, model_id)
    out |= {f"{build_dir(model_id)}/{path}": data for path, data in sorted(meshes.items())}
    findings += collision_mesh_findings(robot, out, model_id)
    if errors(findings):
        # the JSON sources' joints and links are checked against the model when the URDF's own
        # rules passed (a mesh they do not name is what failed), else skipped
        model = None if errors(found.own) else robot
        raise ContractError([*findings, *json_source_findings(root, model_id, model)])
    return UrdfSources(robot, out, tuple(findings))  # warnings alone


def check_robot_sources(root: Path, model_id: str) -> UrdfSources:
    """Every source of the robot `pipeline validate` checks (the URDF, its meshes, the JSON
    sources), all in one run; raise ContractError with every error, return the URDF's sources.

    With them, what the build refuses in the robot's folder whatever gen_srdf() returns (a
    name no stamp records, a linked folder beside srdf.py: plan.robot_folder_findings; srdf.py
    itself, read as the srdf step reads it), though `validate` runs no srdf.py.
    """
    from pipeline.plan import robot_folder_findings

    # alone, as read_urdf_sources raises it: each path below would name the folder again
    raise_if_errors(model_id_findings(root / source_dir(model_id), root))
    folder = robot_folder_findings(root, model_id) + srdf_source_findings(root, model_id)
    try:
        sources = read_urdf_sources(root, model_id)  # raises the JSON sources' findings too
    except ContractError as exc:
        raise ContractError([*folder, *exc.findings]) from None
    json_sources = json_source_findings(root, model_id, sources.robot)
    raise_if_errors([*folder, *sources.warnings, *json_sources])
    return sources


def srdf_source_findings(root: Path, model_id: str) -> list[Finding]:
    """srdf.py read as the srdf step reads it before running it (srdf/compile.checked_srdf): a
    regular file, not a link, of at most SOURCE_LIMIT; nothing when there is none yet (the
    build's file_missing, which `validate` does not ask: it comes before srdf.py is written)."""
    path = root / source_dir(model_id) / "srdf.py"
    if not os.path.lexists(path):
        return []
    try:
        read_bytes(path, f"{source_dir(model_id)}/srdf.py", SOURCE_LIMIT)
    except ContractError as exc:
        return list(exc.findings)
    return []


def _copy_order(robot: Robot, copies: Iterable[str]) -> tuple[list[str], dict[str, int]]:
    """The copied paths in URDF order, then the companions (material libraries, textures) by
    name; and each mesh path by the line of the first <mesh> naming it."""
    named: dict[str, int] = {}
    for link in robot.links:
        elements: tuple[Collision | Visual, ...] = (*link.collisions, *link.visuals)
        for element in elements:
            if isinstance(element.geometry, Mesh):
                named.setdefault(element.geometry.path, element.geometry.line)
    return sorted(named, key=lambda path: named[path]) + sorted(set(copies) - set(named)), named


def _where(robot: Robot, named: Mapping[str, int], path: str, model_id: str) -> tuple[str, str]:
    """The <mesh> naming a copied file, or the file itself for a companion no line names."""
    return (
        (robot.file, str(named[path])) if path in named else (f"{source_dir(model_id)}/{path}", "")
    )


def case_collision_findings(robot: Robot, copies: Iterable[str], model_id: str) -> list[Finding]:
    """A copied file whose path an earlier one repeats in another case or Unicode normal form
    (one file on macOS and Windows: a checkout of build/ or an unpacked bundle holds one)."""
    order, named = _copy_order(robot, copies)
    seen: dict[str, str] = {}
    findings = []
    for path in order:
        twin = seen.setdefault(folded(path), path)
        if twin == path:
            continue
        findings.append(
            Finding(
                "case_collision",
                *_where(robot, named, path, model_id),
                f"{twin!a} and {path!a} differ only in case (or in how an accent is encoded): "
                "a file system that ignores that (macOS, Windows) checks them out as one file",
                "rename one of them (and the name that refers to it) so that no two files the "
                "description copies differ only in case",
            )
        )
    return findings


_RENAME = "rename the file (and the name that refers to it) to letters, digits, '-', '_' and '.'"


def unportable_name_findings(robot: Robot, copies: Iterable[str], model_id: str) -> list[Finding]:
    """A warning per copied file whose path Windows cannot hold (build/ and every bundle hold
    the copy, so a clone or an unpacked bundle there fails at that file), or a URI reader reads
    as another file's."""
    order, named = _copy_order(robot, copies)
    found = []
    for path in order:
        why = unportable_part(path)
        if why is not None:
            why += ", so Windows cannot hold the copy (git for Windows refuses to check out "
            why += "build/ at it, and a bundle does not unpack there)"
        elif (why := uri_unsafe_part(path)) is not None:
            # ROS's resource_retriever hands package:// as a file:// URL to curl: `a%20b.stl`
            # is read as `a b.stl`, `a#1.stl` as `a`; Tesseract and this build read the name
            why += ", which a URI reader decodes ('%xx'), cuts ('#', '?') or refuses (a space): "
            why += (
                "ROS's resource_retriever (RViz, MoveIt) loads another file than Tesseract, or none"
            )
        if why is not None:
            where = _where(robot, named, path, model_id)
            found.append(
                Finding(
                    "unportable_file_name", *where, f"{path!a}: {why}", _RENAME, Severity.WARNING
                )
            )
    return found


def collision_mesh_findings(
    robot: Robot, copies: Mapping[str, bytes], model_id: str
) -> list[Finding]:
    """Each collision mesh parsed from its copy as the spheres step parses it, and cut into the
    parts the planner collides (meshsplit: none may be one point); each collision link of a
    size the spheres step can fit (errors), in proportion with the joints (warnings)."""
    # Checked before anything is copied: a mesh refused by the spheres step after this step
    # had written build/ left build/ half-updated. Imported here: trimesh is slow to import.
    from pipeline.meshsplit import collided_parts
    from pipeline.spheres.extent import extent_findings
    from pipeline.spheres.triangles import mesh_parts

    findings: list[Finding] = []
    corners = {}
    parsed: set[Mesh] = set()  # a file two links name (at one scale) is read, and refused, once
    for link in robot.links:
        for collision in link.collisions:
            mesh = collision.geometry
            if not isinstance(mesh, Mesh) or mesh in parsed:
                continue
            parsed.add(mesh)
            data = copies.get(f"{build_dir(model_id)}/{mesh.path}")
            if data is None:
                continue  # refused by its name or bytes: not parsed (extent_findings skips it)
            try:
                display = f"{source_dir(model_id)}/{mesh.path}"
                read = mesh_parts(data, mesh, display)
                # a part the planner's reader reads as one point crashes its contact manager
                collided_parts(data, mesh, read, display)
                corners[mesh] = read.points()
            except ContractError as exc:
                # at another scale the same file's refusal about its bytes reads the same
                findings += [f for f in exc.findings if f not in findings]
    return findings + extent_findings(robot, corners)


def make_config_copies(root: Path, model_id: str) -> dict[str, bytes]:
    """Check config.json and rtcore_definition.json against the URDF; copy the valid bytes."""
    src = root / source_dir(model_id)
    robot = load_robot(src, root)
    checks = ((CONFIG_FILE, config_from_bytes), (DEFINITION_FILE, definition_from_bytes))
    out: dict[str, bytes] = {}
    findings: list[Finding] = []
    for name, check in checks:
        if not os.path.lexists(src / name):
            continue
        display = f"{source_dir(model_id)}/{name}"
        try:
            data = read_bytes(src / name, display, JSON_LIMIT)
            check(data, robot, display)
        except ContractError as exc:
            findings.extend(exc.findings)
            continue
        out[f"{build_dir(model_id)}/{name}"] = data
    raise_if_errors(findings)
    return out


def make_manifest(root: Path, model_id: str, steps: Iterable[str]) -> dict[str, bytes]:
    """The manifest registering every registered output of the robot's steps."""
    prefix = f"{build_dir(model_id)}/"
    files = set()
    for step in steps:
        stamp = read_stamp(root, step)
        if stamp is None:
            continue
        for path in stamp.outputs:
            rel = path.removeprefix(prefix)
            if path.startswith(prefix) and is_registered(rel):
                files.add(rel)
    return {f"{prefix}{MANIFEST_NAME}": manifest_bytes(model_id, sorted(files))}


def make_index(root: Path, model_ids: Iterable[str]) -> dict[str, bytes]:
    """The index of every compiled description's identity and registered file count."""
    models = {}
    for model_id in sorted(model_ids):
        identity, count = description_identity(root / build_dir(model_id), build_dir(model_id))
        models[model_id] = {"identity": identity, "files": count}
    return {INDEX_PATH: dump_json({"schema": "rosie.build-index.v1", "robots": models})}
