"""The spec's URDF rules and the structural checks any URDF linter makes."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pipeline.findings import Closest, Finding, escaped, raise_if_errors, unshowable_name
from pipeline.strict_io import (
    XML_LIMIT,
    case_collisions,
    linked_folder,
    read_bytes,
    require_source,
    twin_hint,
)
from pipeline.urdf.joints import Add, joint_findings, mimic_findings
from pipeline.urdf.meshuri import MeshesFolder
from pipeline.urdf.model import Collision, Joint, Mesh, Robot, Visual
from pipeline.urdf.read import parse_urdf
from pipeline.winnames import unportable_id, unportable_part


def check_rules(robot: Robot) -> list[Finding]:
    """Every URDF rule of the spec and the usual structural checks, all at once."""
    out: list[Finding] = []

    def add(code: str, line: int, message: str, hint: str) -> None:
        out.append(Finding(code, robot.file, str(line), message, hint))

    link_names: set[str] = set()
    for link in robot.links:
        if link.name in link_names:
            add(
                "duplicate_name",
                link.line,
                f"link {link.name!r} is defined twice",
                "give every link a unique name",
            )
        link_names.add(link.name)
    joint_names: set[str] = set()
    near_link = Closest(link_names)
    parents: dict[str, Joint] = {}
    for joint in robot.joints:
        if joint.name in joint_names:
            add(
                "duplicate_name",
                joint.line,
                f"joint {joint.name!r} is defined twice",
                "give every joint a unique name",
            )
        joint_names.add(joint.name)
        joint_findings(joint, link_names, add, near_link)
        if joint.child in parents:
            add(
                "link_has_two_parents",
                joint.line,
                f"link {joint.child!r} is the child of {parents[joint.child].name!r} "
                f"and {joint.name!r}",
                "a URDF is a tree: give each link one parent joint",
            )
        parents.setdefault(joint.child, joint)
    roots = robot.roots()
    if not robot.links:
        add(
            "no_links",
            1,
            "the URDF has no <link>: a robot needs at least one (urdfdom refuses it too)",
            "describe the robot's links and the joints between them",
        )
    elif not robot.joints and len(robot.links) == 1:
        add(
            "no_joints",
            1,
            f"the URDF has one link ({robot.links[0].name!r}) and no <joint>: Tesseract's "
            "parser refuses a robot without joints",
            "describe the robot's joints (a robot model has at least one)",
        )
    elif len(roots) != 1:
        # the first ten, then how many more: 2,000 lone links made a message of 24,950 characters
        names = ", ".join(repr(r) for r in roots[:10]) or "none (the joints form a cycle)"
        names += f" and {len(roots) - 10} more" if len(roots) > 10 else ""
        line, fix = _join_root(robot, roots)
        add(
            "not_single_rooted",
            line,
            f"the tree must have exactly one root link; roots: {names}",
            fix,
        )
    _cycle_rules(parents, add)
    mimic_findings(robot, add)
    for kind, named in (("link", robot.links), ("joint", robot.joints)):
        for element in named:
            _name_characters(kind, element.name, element.line, add)
    return out


def _join_root(robot: Robot, roots: list[str]) -> tuple[int, str]:
    """Where not_single_rooted is told, and its fix: the first root, in the file's order, of
    other than the largest tree (a lone link, as a base_footprint left behind, or a second tree)
    and how to join it; line 1 when the joints form a cycle (kinematic_cycle names it)."""
    if not roots:
        return 1, "connect every link to one root link through joints"
    below: dict[str, list[str]] = {}
    for joint in robot.joints:
        below.setdefault(joint.parent, []).append(joint.child)
    # each link counted in the first root's tree that reaches it: roots above one shared link
    # (link_has_two_parents) walked it once per root, 8,000 above a chain of 8,000 links 6.3 s
    seen: set[str] = set()

    def size(root: str) -> int:
        count, todo = 1, [root]
        seen.add(root)
        while todo:
            for child in below.get(todo.pop(), []):
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
                    count += 1
        return count

    sizes = {root: size(root) for root in roots}
    main = max(roots, key=lambda r: sizes[r])  # the first of the largest, in the file's order
    other = next(r for r in roots if r != main)
    line = next((link.line for link in robot.links if link.name == other), 1)
    if other not in below:  # a root is no joint's child: in no joint unless one's parent
        return line, (
            f'link {other!r} is in no <joint>: join it to the tree with one (type="fixed" where '
            "it does not move), or remove it"
        )
    return line, (
        f"join link {other!r} to a link of the tree of {main!r} with a <joint> whose child it is"
    )


def _name_characters(kind: str, name: str, line: int, add: Add) -> None:
    """invalid_text_character for a name holding a character a line does not print as itself
    (findings.unshowable_name)."""
    found = unshowable_name(kind, name)
    if found is not None:
        add("invalid_text_character", line, *found)


def _cycle_rules(parents: dict[str, Joint], add: Add) -> None:
    # Each link is walked once: a walk stops at a link an earlier walk settled (linear time;
    # walking every link up to its root was quadratic, minutes for a chain of 20,000 links).
    settled: set[str] = set()
    for start in parents:
        seen: dict[str, None] = {}
        link = start
        while link in parents and link not in seen and link not in settled:
            seen[link] = None
            link = parents[link].parent
        if link in seen:
            path = list(seen)
            cycle = path[path.index(link) :]
            # the first ten, then how many more: a cycle of 2,000 made 12,907 characters
            named = ", ".join(cycle[:10]) + (
                f" and {len(cycle) - 10} more" if len(cycle) > 10 else ""
            )
            add(
                "kinematic_cycle",
                parents[link].line,
                f"links {named} form a cycle",
                "a URDF is a tree: break the cycle",
            )
        settled.update(seen)


# What the sphere fitter reads (through trimesh). Others trimesh would take include archives
# (.zip, .tar.gz, unpacked without a limit) and glTF (which names further files).
COLLISION_MESH_SUFFIXES = (".stl", ".obj", ".dae", ".ply")


def check_meshes(robot: Robot, folder: Path) -> list[Finding]:
    """Each named mesh is a regular file inside `folder/meshes`, not a link out of it."""
    return mesh_file_findings(robot, folder)[0]


def mesh_file_findings(robot: Robot, folder: Path) -> tuple[list[Finding], set[str]]:
    """check_meshes' findings, and the mesh paths not to read: each one they are about (every
    one when meshes/ itself is refused)."""
    display = f"{PurePosixPath(robot.file).parent}/meshes"
    linked = linked_folder(folder / "meshes", display, "meshes")
    if linked:
        return linked, set(robot.mesh_paths())
    out = []
    refused: set[str] = set()
    # Not (folder / "meshes").resolve(): a link below meshes/ must not move the root either.
    meshes = folder.resolve() / "meshes"
    listing = MeshesFolder(meshes)  # walked once, when a mesh is missing
    for link in robot.links:
        elements: tuple[Collision | Visual, ...] = (*link.collisions, *link.visuals)
        for element in elements:
            geometry = element.geometry
            if not isinstance(geometry, Mesh):
                continue
            suffix = PurePosixPath(geometry.path).suffix.lower()
            if isinstance(element, Collision) and suffix not in COLLISION_MESH_SUFFIXES:
                kind = f"is a {suffix} file" if suffix else "is a file with no extension"
                message = f"{kind}; a collision mesh is STL, OBJ, COLLADA (.dae) or PLY"
                hint = "export the collision mesh as binary STL (a visual may be any format)"
                if suffix.rstrip() in COLLISION_MESH_SUFFIXES:  # pasted with a space after it
                    message = (
                        f"ends in white space after its {suffix.rstrip()} extension "
                        f"({suffix!a}), so it is no {suffix.rstrip()} file"
                    )
                    name = PurePosixPath(geometry.path).name.rstrip()
                    hint = f"write the file name without it: {name!r}"
                refused.add(geometry.path)
                out.append(
                    Finding(
                        "mesh_format_unsupported",
                        robot.file,
                        str(geometry.line),
                        f"collision mesh {geometry.path!r} {message}",
                        hint,
                    )
                )
                continue
            path = folder / geometry.path
            code, message, hint = "", "", "put the mesh file itself in meshes/"
            try:
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode):
                    code, message = "mesh_is_symlink", "is a symbolic link"
                elif not stat.S_ISREG(info.st_mode):
                    code, message = "mesh_missing", "is not a regular file"
                elif not path.resolve().is_relative_to(meshes):
                    code, message = "mesh_uri_outside_meshes", "resolves outside meshes/"
            except PermissionError as exc:  # it may well exist: not `mesh_missing`
                code, message = "file_unreadable", f"cannot be looked up ({exc.strerror})"
                hint = "give the user who builds read and search permission on meshes/ (chmod a+rx)"
            except OSError:
                code, message = "mesh_missing", "does not exist"
                hint = (
                    twin_hint(path) or _elsewhere_hint(geometry.path, listing, folder.name) or hint
                )
            if code:
                refused.add(geometry.path)
                out.append(
                    Finding(
                        code,
                        robot.file,
                        str(geometry.line),
                        f"mesh {geometry.path!r} {message}",
                        hint,
                    )
                )
    return out, refused


def _elsewhere_hint(missing: str, meshes: MeshesFolder, model_id: str) -> str:
    """When meshes/ holds a file at an end of the missing mesh's path (the longest), else the
    path in folders of its own (the shortest), else one file of its name (or, failing that,
    one in another case) in another folder: the URI that names it."""
    end = meshes.end_of(missing)
    if end is not None:
        return f"meshes/ holds {end!r}, the end of that path: name it package://{model_id}/{end}"
    below = meshes.below(missing)
    if below is not None:
        folder = below[: -len(missing.removeprefix("meshes"))]
        return (
            f"meshes/ holds {below!r}, that path in a folder of its own (a folder copied into "
            f"meshes/, not its contents?): move what {folder}/ holds up into meshes/, or name it "
            f"package://{model_id}/{below}"
        )
    only = meshes.only(PurePosixPath(missing).name)
    if only is None:
        return ""
    path, other_case = only
    cased = " in another case" if other_case else ""
    return (
        f"meshes/ holds one file of that name{cased}, {path!r}: name it package://{model_id}/{path}"
    )


# The model id is the folder's name: it is a path segment, a package:// name and part of doit
# task names and finding lines, so it is held to the pattern of a cell id (machine-config schema),
# and is a name a folder on Windows can have: no device's (`CON`, `nul.v2`), no trailing dot.
MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", re.ASCII)


def is_model_id(name: str) -> bool:
    """Whether `name` is a valid model id: of MODEL_ID's form and a name Windows can hold."""
    return MODEL_ID.fullmatch(name) is not None and unportable_part(name) is None


def model_id_findings(folder: Path, display_root: Path) -> list[Finding]:
    """A finding when the folder's name is not a valid model id (shown escaped), the folder is a
    symbolic link, or its name is another robot's in another case."""
    found = invalid_model_ids([folder.name], display_path(folder.parent, display_root))
    display = display_path(folder, display_root)
    return found or linked_folder(folder, display, "robot") or case_collisions(folder, display)


def invalid_model_ids(names: Iterable[str], parent: str = "robots") -> list[Finding]:
    """One finding per name that is not a model id (a command's arguments, a folder's name)."""
    out = []
    for name in names:
        if is_model_id(name):
            continue
        shown = escaped(name)
        if MODEL_ID.fullmatch(name):  # of the form, but no name of a folder on Windows
            out.append(
                Finding(
                    "invalid_model_id",
                    f"{parent}/{shown}",
                    "",
                    f"{unportable_id(name, shown)}, so a checkout there would fail",
                    "rename the folder, and its <robot name>, to a model id Windows can hold, "
                    f"such as {shown.split('.')[0].lower() or 'my'}_robot",
                )
            )
            continue
        out.append(
            Finding(
                "invalid_model_id",
                f"{parent}/{shown}",
                "",
                f"'{shown}' is not a model id: letters, digits, '.', '_' and '-', starting "
                "with a letter or digit, at most 128 characters",
                "name a folder of robots/ (rename it, and its <robot name>, to a valid model "
                "id such as my_robot_v1)",
            )
        )
    return out


def load_robot(folder: Path, display_root: Path) -> Robot:
    """Read `folder/robot.urdf`, apply every URDF rule, and return the valid model."""
    # alone: every other finding would name the file through the unprintable folder name
    raise_if_errors(model_id_findings(folder, display_root))
    found = robot_findings(folder, display_root)
    raise_if_errors([*found.own, *found.meshes])
    return found.robot


@dataclass(frozen=True)
class UrdfFindings:
    """`robot.urdf` as read: its model, the findings of the URDF's own rules and of its mesh
    files' names, and the mesh paths not to read (see mesh_file_findings)."""

    robot: Robot
    own: tuple[Finding, ...]
    meshes: tuple[Finding, ...]
    refused: frozenset[str]


def robot_findings(folder: Path, display_root: Path) -> UrdfFindings:
    """The model of `folder/robot.urdf` as read and every finding of the URDF rules and of its
    mesh files' names (the folder passed model_id_findings).

    Raises when there is no model to go on with: no URDF to read, or one that is not one."""
    path = folder / "robot.urdf"
    display = display_path(path, display_root)
    require_source(folder, "robot.urdf", display)
    data = read_bytes(path, display, XML_LIMIT)
    robot, findings = parse_urdf(data, display, folder.name, MeshesFolder(folder / "meshes"))
    meshes, refused = mesh_file_findings(robot, folder)
    return UrdfFindings(robot, (*findings, *check_rules(robot)), tuple(meshes), frozenset(refused))


def display_path(path: Path, root: Path) -> str:
    """The path relative to `root` in POSIX form, as findings name files."""
    # Normalised without following links first: a symlink is named where it is, not where it
    # points (which may be outside the repository, and absolute).
    for mapped in (os.path.abspath, os.path.realpath):
        try:
            return Path(mapped(path)).relative_to(mapped(root)).as_posix()
        except ValueError:
            continue
    return path.as_posix()
