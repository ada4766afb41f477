"""The bad-input catalogue: hostile and broken inputs, end to end through doit and `pipeline`.

Each case breaks one thing in a scratch checkout whose build/ is current, runs the real command
in a subprocess (`doit`, or `python -m pipeline ...`) and asserts what DESIGN.md's "Errors are for
people" asks: exit status 2; exactly one finding line, naming the file and the code; no
traceback and no other output than doit's task lines; build/ byte for byte as before; and no
file created or changed anywhere else in the checkout. Every case id starts with its code.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.strict_io import JSON_LIMIT, MESH_LIMIT, SOURCE_LIMIT, XML_LIMIT
from tests.conftest import run_doit, run_python, tree_bytes

ABB = "robots/abb_irb2400"
LBR = "robots/lbr_iiwa_14_r820"
URDF = f"{ABB}/robot.urdf"
SRDF_PY = f"{ABB}/srdf.py"
CONFIG = f"{ABB}/config.json"
SETTINGS = f"{ABB}/spheres.settings.json"
RTCORE = f"{ABB}/rtcore_definition.json"
BUILT = "build/robots/abb_irb2400"
L1_MESH = "package://abb_irb2400/meshes/link_1.stl"
CELL = "cells/weld_cell_a"
MACHINE = f"{CELL}/machine.json"
CALIBRATION = f"{CELL}/machine_planning_calibration.json"
MANIFEST = f"{BUILT}/robot_description_manifest.json"
# Caches and the lock: doit and the digest cache may write these on any run.
VOLATILE = {
    ".doit.db",
    ".doit.lock",
    ".pipeline-digests",
    ".pipeline-digests-build",
    ".pipeline-outputs",
}

FINDING = re.compile(r"^(?P<file>[\w./@+-]+?)(?::(?P<place>.+?))?: (?P<code>[a-z][a-z0-9_]*): \S")
TASK_LINE = re.compile(r"^(\.  |-- |!! )\S+$")  # ran, up to date, ignored

Break = Callable[[Path, Path], None]


@dataclass(frozen=True)
class Case:
    """One bad input: what to break, the command to run, and the one finding it must give."""

    code: str
    file: str
    breaks: Break
    command: tuple[str, ...] = ("doit",)
    also: tuple[str, ...] = ()  # knock-on findings the same break rightly gives (same file)


# ---- ways to break a scratch checkout (project root, a folder outside it) ----


def replace(rel: str, old: str, new: str, count: int = 1) -> Break:
    """Replace text in a file of the checkout (the text must be there)."""

    def apply(project: Path, outside: Path) -> None:
        path = project / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, count), encoding="utf-8")

    return apply


def write(rel: str, data: bytes) -> Break:
    """Overwrite a file of the checkout with these bytes."""

    def apply(project: Path, outside: Path) -> None:
        (project / rel).write_bytes(data)

    return apply


def transform(rel: str, change: Callable[[bytes], bytes]) -> Break:
    """Rewrite a file of the checkout from its own bytes."""

    def apply(project: Path, outside: Path) -> None:
        path = project / rel
        path.write_bytes(change(path.read_bytes()))

    return apply


def oversize(rel: str, limit: int) -> Break:
    """Make a file one byte over its limit (sparse, so the test stays cheap)."""

    def apply(project: Path, outside: Path) -> None:
        with (project / rel).open("r+b") as handle:
            handle.truncate(limit + 1)

    return apply


def link_outside(rel: str, change: Callable[[bytes], bytes] = lambda b: b + b"\n") -> Break:
    """Replace a file (or a folder) by a symlink to a changed copy outside the checkout."""

    def apply(project: Path, outside: Path) -> None:
        path = project / rel
        target = outside / path.name
        if path.is_dir():
            target.mkdir()
            for item in sorted(path.iterdir()):
                (target / item.name).write_bytes(change(item.read_bytes()))
                item.unlink()
            path.rmdir()
        else:
            target.write_bytes(change(path.read_bytes()))
            path.unlink()
        path.symlink_to(target)

    return apply


def dangling(rel: str) -> Break:
    """Replace a file by a symlink to a path outside the checkout that does not exist."""

    def apply(project: Path, outside: Path) -> None:
        (project / rel).unlink()
        (project / rel).symlink_to(outside / "gone" / Path(rel).name)

    return apply


def folder_linked_in(rel: str) -> Break:
    """A package folder outside the checkout, linked into it as `rel`."""

    def apply(project: Path, outside: Path) -> None:
        (outside / "pkg").mkdir()
        (outside / "pkg" / "__init__.py").write_text("")
        (project / rel).symlink_to(outside / "pkg")

    return apply


def copy_file(rel: str, to: str) -> Break:
    """Copy a file of the checkout to another name in it."""

    def apply(project: Path, outside: Path) -> None:
        shutil.copy(project / rel, project / to)

    return apply


def folder_instead(rel: str) -> Break:
    """Replace a file of the checkout with an empty folder of its name."""

    def apply(project: Path, outside: Path) -> None:
        path = project / rel
        if os.path.lexists(path):
            path.unlink()
        path.mkdir()

    return apply


def copy_robot(name: str) -> Break:
    """A copy of the abb robot in robots/<name>/, its <robot name> and mesh URIs renamed."""

    def apply(project: Path, outside: Path) -> None:
        shutil.copytree(project / ABB, project / "robots" / name)
        urdf = project / "robots" / name / "robot.urdf"
        urdf.write_text(urdf.read_text().replace("abb_irb2400", name))

    return apply


def both(*breaks: Break) -> Break:
    """Apply several breaks in order."""

    def apply(project: Path, outside: Path) -> None:
        for one in breaks:
            one(project, outside)

    return apply


def in_gen_srdf(statement: str) -> Break:
    """Run a statement first thing in the ABB generator's gen_srdf()."""
    return replace(SRDF_PY, "def gen_srdf():\n", f"def gen_srdf():\n    {statement}\n")


def srdf_returns(value: str) -> Break:
    """Make the ABB generator return `value` (an expression using `robot`) instead."""
    return replace(SRDF_PY, 'return {"xml": robot, "urdf": "robot.urdf"}', f"return {value}")


def srdf_urdf(path: str) -> Break:
    """Make the ABB generator link another `urdf` path."""
    return srdf_returns(f'{{"xml": robot, "urdf": {path!r}}}')


def outside_urdf_linked_as(rel: str) -> Break:
    """A copy of the ABB URDF outside the checkout, linked into it as `rel`."""

    def apply(project: Path, outside: Path) -> None:
        (outside / "linked.urdf").write_bytes((project / URDF).read_bytes())
        (project / rel).symlink_to(outside / "linked.urdf")

    return apply


def srdf_adds(xml: str) -> Break:
    """Append raw SRDF XML to the ABB generator's document."""
    return replace(
        SRDF_PY,
        '    return {"xml": robot, "urdf": "robot.urdf"}',
        f"    robot.append(ET.fromstring({xml!r}))\n"
        '    return {"xml": robot, "urdf": "robot.urdf"}',
    )


def manifest_files(change: Callable[[list[str]], list[object]]) -> Break:
    """Rewrite the `files` list of the built ABB manifest."""

    def apply(project: Path, outside: Path) -> None:
        import json

        path = project / MANIFEST
        data = json.loads(path.read_text(encoding="utf-8"))
        data["files"] = change(data["files"])
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    return apply


def pin(field: str, value: str) -> Break:
    """Set a field of the weld cell's calibration pin in machine.json."""

    def apply(project: Path, outside: Path) -> None:
        import json

        path = project / MACHINE
        data = json.loads(path.read_text(encoding="utf-8"))
        data["robot"]["machine_planning_calibration"][field] = value
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    return apply


def calibration(change: Callable[[bytes], bytes]) -> Break:
    """Change the weld cell's calibration file and pin its new bytes (so only the change shows)."""

    def apply(project: Path, outside: Path) -> None:
        import hashlib

        path = project / CALIBRATION
        path.write_bytes(change(path.read_bytes()))
        pin("sha256", hashlib.sha256(path.read_bytes()).hexdigest())(project, outside)

    return apply


def calibration_in_linked_folder(project: Path, outside: Path) -> None:
    """Move the calibration file into a folder outside, linked into the cell as `cal/`."""
    (outside / "cal").mkdir()
    (outside / "cal" / "c.json").write_bytes((project / CALIBRATION).read_bytes())
    (project / CELL / "cal").symlink_to(outside / "cal")
    pin("path", "cal/c.json")(project, outside)


def json_set(rel: str, path: list[str], value: object) -> Break:
    """Set one value (by key path) in a JSON file of the checkout."""

    def apply(project: Path, outside: Path) -> None:
        import json

        file = project / rel
        data = json.loads(file.read_text(encoding="utf-8"))
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        file.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    return apply


def json_drop(rel: str, path: list[str]) -> Break:
    """Delete one key (by key path) from a JSON file of the checkout."""

    def apply(project: Path, outside: Path) -> None:
        import json

        file = project / rel
        data = json.loads(file.read_text(encoding="utf-8"))
        node = data
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        file.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    return apply


def add_built_mesh(project: Path, outside: Path) -> None:
    """A file in the built description's meshes/ that the manifest does not list."""
    (project / BUILT / "meshes" / "extra.stl").write_bytes(b"solid extra\nendsolid extra\n")


def not_utf8(data: bytes) -> bytes:
    """Latin-1 bytes in a document that says nothing about its encoding (so UTF-8)."""
    return (
        data.replace(b"\n", b"\n<!-- caf\xe9 -->\n", 1) if data.startswith(b"<") else b"\xe9" + data
    )


def truncate_mid_element(data: bytes) -> bytes:
    """Cut the file off in the middle of an element's attributes."""
    return data[: data.index(b"<joint") + 20]


EXTERNAL_ENTITY = (
    b'<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
    b'<robot name="abb_irb2400">&x;</robot>\n'
)
BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
    + b"".join(
        b'<!ENTITY lol%d "%s">\n'
        % (i, b"".join([b"&lol%d;" % (i - 1) if i > 1 else b"&lol;"] * 10))
        for i in range(1, 10)
    )
    + b']>\n<robot name="abb_irb2400">&lol9;</robot>\n'
)


def dae_with_external_entity(data: bytes) -> bytes:
    """A COLLADA file whose DOCTYPE declares an external entity that its <asset> uses."""
    head = data.index(b"?>") + 2
    opening = data.index(b">", data.index(b"<COLLADA")) + 1
    return (
        data[:head]
        + b'\n<!DOCTYPE COLLADA [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
        + data[head:opening]
        + b"<asset><contributor><author>&x;</author></contributor></asset>"
        + data[opening:]
    )


def utf16(document: bytes) -> bytes:
    """The same document declared and encoded as UTF-16."""
    declared = document.replace(b'version="1.0"?>', b'version="1.0" encoding="UTF-16"?>', 1)
    return declared.decode("utf-8").encode("utf-16")


DEEP = b'<robot name="abb_irb2400">' + b"<a>" * 10_000 + b"</a>" * 10_000 + b"</robot>\n"
MESH = "package://abb_irb2400/meshes/link_1.stl"


def mesh_uri(uri: str) -> Break:
    """Point the ABB URDF's first link_1.stl mesh at another URI."""
    return replace(URDF, f'filename="{MESH}"', f'filename="{uri}"')


def doit(code: str, file: str, breaks: Break, *ids: str, also: tuple[str, ...] = ()) -> object:
    """A catalogue entry run through a full `doit`."""
    return pytest.param(Case(code, file, breaks, also=also), id="-".join((code, *ids)))


def cli(code: str, file: str, breaks: Break, command: tuple[str, ...], *ids: str) -> object:
    """A catalogue entry run through `python -m pipeline ...`."""
    return pytest.param(Case(code, file, breaks, ("pipeline", *command)), id="-".join((code, *ids)))


CATALOGUE = [
    # ---- strict XML input (DESIGN: no DTD, no entities, no network; strict_xml, strict_io) ----
    doit("doctype_refused", URDF, write(URDF, EXTERNAL_ENTITY), "urdf-external-entity"),
    doit("doctype_refused", URDF, write(URDF, BILLION_LAUGHS), "urdf-entity-expansion-bomb"),
    doit(
        "doctype_refused",
        URDF,
        transform(URDF, lambda d: d.replace(b"<robot ", b"<!DOCTYPE robot>\n<robot ", 1)),
        "urdf-doctype",
    ),
    # In UTF-16 the byte search for "<!DOCTYPE" sees nothing; the parsed document is checked too.
    doit(
        "doctype_refused", URDF, write(URDF, utf16(EXTERNAL_ENTITY)), "urdf-utf16-external-entity"
    ),
    doit(
        "invalid_xml", URDF, write(URDF, utf16(BILLION_LAUGHS)), "urdf-utf16-entity-expansion-bomb"
    ),
    doit("invalid_xml", URDF, write(URDF, DEEP), "urdf-nesting-10000-deep"),
    doit("invalid_xml", URDF, write(URDF, b""), "urdf-empty-file"),
    doit("invalid_xml", URDF, transform(URDF, not_utf8), "urdf-not-utf8"),
    doit("invalid_xml", URDF, transform(URDF, truncate_mid_element), "urdf-truncated-mid-element"),
    doit("file_too_large", URDF, oversize(URDF, XML_LIMIT), "urdf-over-xml-limit"),
    doit("symlink_refused", URDF, link_outside(URDF), "urdf-symlink-outside"),
    # Regression: a dangling robot.urdf link made the robot vanish from the plan (index rewritten
    # without it), and once planned, doit stopped on the missing file_dep with its own error.
    doit("symlink_refused", URDF, dangling(URDF), "urdf-dangling-link"),
    doit("not_a_urdf", URDF, write(URDF, b'<srdf name="abb_irb2400"/>\n'), "urdf-root-element"),
    # ---- robot.urdf rules (robot-description-files.md) ----
    doit(
        "robot_name_mismatch",
        URDF,
        replace(URDF, 'name="abb_irb2400" tesseract:', 'name="irb2400" tesseract:'),
        "urdf-name-is-model-id",
    ),
    doit(
        "missing_joint_limit",
        URDF,
        transform(URDF, lambda d: re.sub(rb'(<limit [^>]*)lower="[^"]*"', rb"\1", d, count=1)),
        "urdf-movable-joint-bounded",
    ),
    doit(
        "unbounded_joint_type",
        URDF,
        replace(URDF, 'type="revolute"', 'type="continuous"'),
        "urdf-continuous-joint",
    ),
    doit(
        "invalid_joint_velocity",
        URDF,
        transform(URDF, lambda d: re.sub(rb'velocity="[^"]*"', b'velocity="-1"', d, count=1)),
        "urdf-velocity-rad-s",
    ),
    # ---- mesh references: package://<id>/meshes/<file>, never out of meshes/ ----
    doit(
        "mesh_uri_outside_meshes",
        URDF,
        mesh_uri("package://abb_irb2400/meshes/../../../../etc/passwd"),
        "dot-dot",
    ),
    doit(
        "mesh_uri_outside_meshes",
        URDF,
        mesh_uri("package://abb_irb2400/meshes/..\\..\\robot.urdf"),
        "backslash",
    ),
    doit("mesh_uri_not_package", URDF, mesh_uri("/etc/passwd"), "absolute"),
    doit("mesh_uri_not_package", URDF, mesh_uri("file:///etc/passwd"), "file-uri"),
    doit(
        "mesh_uri_not_package",
        URDF,
        mesh_uri("package://lbr_iiwa_14_r820/meshes/link_1.stl"),
        "other-package",
    ),
    doit("mesh_missing", URDF, mesh_uri("package://abb_irb2400/meshes/nope.stl"), "no-file"),
    # a ROS package's .urdf.xacro copied in unexpanded: one line, not no_links
    doit(
        "xacro_not_expanded",
        URDF,
        replace(
            URDF, "</robot>", '<xacro:include filename="$(find abb)/urdf/macro.xacro"/>\n</robot>'
        ),
        "xacro-include",
    ),
    doit("mesh_is_symlink", URDF, link_outside(f"{ABB}/meshes/link_1.stl"), "mesh-link-outside"),
    doit("mesh_is_symlink", URDF, dangling(f"{ABB}/meshes/link_1.stl"), "mesh-dangling-link"),
    doit("symlink_refused", CONFIG, dangling(CONFIG), "config-dangling-link"),
    # Regression: meshes/ itself a link out of the robot folder was followed and copied.
    doit(
        "symlink_refused",
        f"{ABB}/meshes",
        link_outside(f"{ABB}/meshes"),
        "meshes-folder-link-outside",
    ),
    # Regression: a package folder beside srdf.py linked in from outside was importable, yet
    # nothing in it was an input: a change there left robot.srdf current.
    doit(
        "symlink_refused",
        f"{ABB}/abbdata",
        folder_linked_in(f"{ABB}/abbdata"),
        "helper-folder-link-outside",
    ),
    doit(
        "file_too_large",
        f"{ABB}/meshes/link_1.stl",
        oversize(f"{ABB}/meshes/link_1.stl", MESH_LIMIT),
        "mesh-over-mesh-limit",
    ),
    # A mesh that is not a mesh: the URDF stage checks the bytes before copying them into build/
    # (it used to copy them, leaving the spheres stage to refuse them after build/ had changed).
    doit(
        "mesh_not_a_mesh",
        f"{ABB}/meshes/link_1.stl",
        write(f"{ABB}/meshes/link_1.stl", b"this is not a mesh\n" * 20),
        "stl-text",
    ),
    doit(
        "mesh_not_a_mesh",
        f"{ABB}/meshes/link_1.stl",
        write(f"{ABB}/meshes/link_1.stl", bytes(range(256)) * 4),
        "stl-garbage-bytes",
    ),
    doit(
        "mesh_not_a_mesh",
        f"{ABB}/meshes/link_1.stl",
        transform(f"{ABB}/meshes/link_1.stl", lambda d: d[:-10]),
        "stl-truncated",
    ),
    doit(
        "mesh_empty",
        f"{ABB}/meshes/link_1.stl",
        write(f"{ABB}/meshes/link_1.stl", bytes(80) + (0).to_bytes(4, "little")),
        "stl-no-triangles",
    ),
    doit(
        "mesh_not_a_mesh",
        f"{ABB}/meshes/link_1.stl",
        transform(f"{ABB}/meshes/link_1.stl", lambda d: d[:96] + b"\x00\x00\xc0\x7f" + d[100:]),
        "stl-nan-corner",
    ),
    doit(
        "doctype_refused",
        f"{ABB}/meshes/link_1.dae",
        transform(f"{ABB}/meshes/link_1.dae", dae_with_external_entity),
        "dae-external-entity",
    ),
    doit(
        "mesh_not_a_mesh",
        f"{ABB}/meshes/link_1.dae",
        write(f"{ABB}/meshes/link_1.dae", b'<robot name="abb_irb2400"/>\n'),
        "dae-not-collada",
    ),
    doit(
        "invalid_xml",
        f"{ABB}/meshes/link_1.dae",
        transform(f"{ABB}/meshes/link_1.dae", lambda d: d[: len(d) // 2]),
        "dae-truncated",
    ),
    # Regression: meshes trimesh cannot read passed the urdf step, which copied them into build/
    # before the spheres step refused them (build/ half-updated on a failed doit).
    doit(
        "mesh_empty",
        f"{ABB}/meshes/link_1.obj",
        both(
            write(f"{ABB}/meshes/link_1.obj", b"this is not an obj\n"),
            mesh_uri("package://abb_irb2400/meshes/link_1.obj"),
        ),
        "obj-garbage",
    ),
    doit(
        "mesh_unreadable",
        f"{ABB}/meshes/link_1_collision.dae",
        both(
            write(
                f"{ABB}/meshes/link_1_collision.dae",
                b'<?xml version="1.0"?>\n<COLLADA xmlns="http://www.collada.org/2005/11/'
                b'COLLADASchema" version="1.4.1"><library_geometries><geometry id="g"><mesh/>'
                b"</geometry></library_geometries></COLLADA>\n",
            ),
            mesh_uri("package://abb_irb2400/meshes/link_1_collision.dae"),
        ),
        "dae-no-geometry",
    ),
    # ---- strict JSON input: config.json and rtcore_definition.json ----
    doit("invalid_json", CONFIG, write(CONFIG, b""), "config-empty-file"),
    doit("invalid_json", CONFIG, transform(CONFIG, lambda d: d[: len(d) // 2]), "config-truncated"),
    doit("not_utf8", CONFIG, transform(CONFIG, not_utf8), "config-not-utf8"),
    doit("byte_order_mark", CONFIG, transform(CONFIG, lambda d: b"\xef\xbb\xbf" + d), "config-bom"),
    doit("root_not_object", CONFIG, write(CONFIG, b"[]\n"), "config-array"),
    doit(
        "duplicate_key",
        CONFIG,
        replace(CONFIG, '"schema":', '"schema": "x",\n  "schema":'),
        "config-duplicate-key",
    ),
    doit(
        "non_finite_number",
        CONFIG,
        transform(CONFIG, lambda d: re.sub(rb"0\.005", b"NaN", d, count=1)),
        "config-nan",
    ),
    doit(
        "nesting_too_deep",
        CONFIG,
        write(CONFIG, b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        "config-nesting-100000-deep",
    ),
    # Regression: nesting between ~330 and ~1000 levels passed json.loads, then overflowed the
    # recursive duplicate-key and NaN checks (a RecursionError traceback).
    doit(
        "nesting_too_deep",
        CONFIG,
        write(CONFIG, b'{"a": ' + b"[" * 900 + b"]" * 900 + b"}"),
        "config-nesting-900-deep",
    ),
    doit("file_too_large", CONFIG, oversize(CONFIG, JSON_LIMIT), "config-over-json-limit"),
    doit("symlink_refused", CONFIG, link_outside(CONFIG), "config-symlink-outside"),
    # config.json and rtcore_definition.json rules (robot-description-files.md)
    doit("unexpected_field", CONFIG, json_set(CONFIG, ["comment"], "x"), "config-unknown-field"),
    doit(
        "joint_not_revolute",
        CONFIG,
        json_set(CONFIG, ["axes", "joint_6-tool0"], {"controller_axis": "rax_9", "sign": 1}),
        "config-fixed-joint",
    ),
    doit(
        "restates_urdf",
        CONFIG,
        json_set(CONFIG, ["axes", "joint_2", "velocity_rad_s"], 2.618),
        "config-restates-velocity",
    ),
    doit(
        "missing_source",
        RTCORE,
        json_drop(RTCORE, ["joints", "joint_1", "gear_ratio_unverified"]),
        "rtcore-number-without-source",
    ),
    doit(
        "unexpected_field",
        RTCORE,
        json_set(RTCORE, ["joints", "joint_1", "bus"], "ecat0"),
        "rtcore-unknown-field",
    ),
    doit(
        "duplicate_key",
        RTCORE,
        replace(RTCORE, '"direction": 1,', '"direction": 1,\n      "direction": 1,'),
        "rtcore-duplicate-key",
    ),
    # ---- spheres.settings.json (read strictly, bounded by its schema, before any fitting) ----
    doit(
        "duplicate_key",
        SETTINGS,
        write(SETTINGS, b'{"defaults": {"seed": 1, "seed": 2}}\n'),
        "spheres-settings-duplicate-key",
    ),
    doit(
        "unexpected_field",
        SETTINGS,
        write(SETTINGS, b'{"defaults": {"seeds": 1}}\n'),
        "spheres-settings-unknown-field",
    ),
    doit(
        "out_of_range",
        SETTINGS,
        write(SETTINGS, b'{"defaults": {"grid_points": 1000000000}}\n'),
        "spheres-settings-unbounded-work",
    ),
    doit(
        "unknown_link",
        SETTINGS,
        write(SETTINGS, b'{"links": {"link_9": {"seed": 1}}}\n'),
        "spheres-settings-link",
    ),
    doit(
        "symlink_refused",
        SETTINGS,
        both(write(SETTINGS, b"{}\n"), link_outside(SETTINGS)),
        "spheres-settings-link-outside",
    ),
    # ---- the SRDF generator contract (srdf-generator-contract.md) ----
    doit("generator_raised", SRDF_PY, in_gen_srdf("raise RuntimeError('boom')"), "raises"),
    doit("generator_exited", SRDF_PY, in_gen_srdf("raise SystemExit(3)"), "sys-exit"),
    doit("generator_exited", SRDF_PY, in_gen_srdf("import os; os._exit(0)"), "os-exit"),
    doit(
        "generator_wrote_files",
        SRDF_PY,
        in_gen_srdf(
            "import contextlib, pathlib\n    with contextlib.suppress(OSError):\n"
            "        pathlib.Path(__file__).with_name('robot.srdf').write_text('<robot/>')"
        ),
        "writes-beside-source",
    ),
    doit(
        "generator_spawned_process",
        SRDF_PY,
        in_gen_srdf(
            "import contextlib, subprocess\n    with contextlib.suppress(OSError):\n"
            "        subprocess.run(['true'])"
        ),
        "spawns",
    ),
    doit("generator_printed", SRDF_PY, in_gen_srdf("print('hello')"), "prints"),
    doit(
        "missing_gen_srdf",
        SRDF_PY,
        replace(SRDF_PY, "def gen_srdf():", "def make_srdf():"),
        "no-function",
    ),
    doit(
        "gen_srdf_takes_arguments",
        SRDF_PY,
        replace(SRDF_PY, "def gen_srdf():", "def gen_srdf(model):"),
        "arguments",
    ),
    doit("envelope_not_dict", SRDF_PY, srdf_returns("[robot]"), "list"),
    doit(
        "envelope_missing_key",
        SRDF_PY,
        srdf_returns('{"xml": robot}'),
        "no-urdf",
    ),
    doit(
        "envelope_unknown_key",
        SRDF_PY,
        srdf_returns('{"xml": robot, "urdf": "robot.urdf", "name": "x"}'),
        "extra-field",
    ),
    doit("urdf_path_not_string", SRDF_PY, srdf_returns('{"xml": robot, "urdf": 3}'), "int"),
    doit("urdf_path_empty", SRDF_PY, srdf_urdf(""), "empty"),
    doit("urdf_path_absolute", SRDF_PY, srdf_urdf("/etc/robot.urdf"), "absolute"),
    doit("urdf_path_backslash", SRDF_PY, srdf_urdf("..\\abb_irb2400\\robot.urdf"), "backslash"),
    doit("urdf_path_not_urdf", SRDF_PY, srdf_urdf("robot.xml"), "suffix"),
    doit(
        "urdf_path_outside_repo",
        SRDF_PY,
        srdf_urdf("../" * 12 + "etc/robot.urdf"),
        "dot-dot-out-of-repo",
    ),
    doit("urdf_path_missing", SRDF_PY, srdf_urdf("file:///etc/robot.urdf"), "file-uri"),
    # Regression: these two were tracebacks (ValueError from the path resolution).
    doit("urdf_path_missing", SRDF_PY, srdf_urdf("robot\x00.urdf"), "nul-byte"),
    doit("urdf_path_missing", SRDF_PY, srdf_urdf("\ud800.urdf"), "lone-surrogate"),
    # Regression: another robot's URDF was accepted, and its SRDF served beside this robot's.
    doit(
        "urdf_path_other_robot",
        SRDF_PY,
        both(
            replace(SRDF_PY, 'ROBOT = "abb_irb2400"', 'ROBOT = "lbr_iiwa_14_r820"'),
            srdf_urdf("../lbr_iiwa_14_r820/robot.urdf"),
        ),
        "dot-dot-other-robot",
    ),
    doit(
        "urdf_path_outside_repo",
        SRDF_PY,
        both(srdf_urdf("linked.urdf"), outside_urdf_linked_as(f"{ABB}/linked.urdf")),
        "symlink-outside",
    ),
    doit(
        "root_not_robot",
        SRDF_PY,
        srdf_returns('{"xml": "<srdf name=\\"abb_irb2400\\"/>", "urdf": "robot.urdf"}'),
        "root",
        also=("missing_manipulator_group",),
    ),
    doit(
        "doctype_refused",
        SRDF_PY,
        srdf_returns(
            '{"xml": "<!DOCTYPE r [<!ENTITY x SYSTEM \\"file:///etc/passwd\\">]>'
            '<robot name=\\"abb_irb2400\\">&x;</robot>", "urdf": "robot.urdf"}'
        ),
        "srdf-external-entity",
    ),
    doit(
        "robot_name_mismatch",
        SRDF_PY,
        replace(SRDF_PY, 'ROBOT = "abb_irb2400"', 'ROBOT = "irb2400"'),
        "srdf-name-is-urdf-name",
    ),
    doit("symlink_refused", SRDF_PY, link_outside(SRDF_PY), "source-symlink-outside"),
    doit("file_too_large", SRDF_PY, oversize(SRDF_PY, SOURCE_LIMIT), "source-over-limit"),
    # ---- SRDF semantics a Tesseract consumer relies on (tesseract-srdf-python.md) ----
    doit(
        "group_state_above_limit",
        SRDF_PY,
        replace(
            SRDF_PY,
            "{joint: 0.0 for joint in ARM_JOINTS}",
            '{**{joint: 0.0 for joint in ARM_JOINTS}, "joint_1": 90.0}',
        ),
        "degrees-stored",
    ),
    doit(
        "unknown_link",
        SRDF_PY,
        srdf_adds('<disable_collisions link1="base_link" link2="link_9" reason="Never"/>'),
        "disable-collisions",
    ),
    doit(
        "duplicate_name",
        SRDF_PY,
        srdf_adds('<group name="manipulator"><joint name="joint_1"/></group>'),
        "group",
    ),
    doit(
        "missing_manipulator_group",
        SRDF_PY,
        replace(SRDF_PY, 'CHAINS = {"manipulator":', 'CHAINS = {"arm":'),
        "no-manipulator-group",
        also=("unknown_group", "unknown_group"),
    ),
    doit(
        "tcp_needs_one_rotation",
        SRDF_PY,
        replace(SRDF_PY, '"rpy": "0 1.57 0"}', '"rpy": "0 1.57 0", "wxyz": "1 0 0 0"}'),
        "tcp",
    ),
    # ---- cells: machine config, calibration pin and calibration file ----
    doit(
        "pin_path_outside_cell",
        MACHINE,
        pin("path", "../../robots/abb_irb2400/config.json"),
        "dot-dot",
    ),
    doit("pin_path_outside_cell", MACHINE, pin("path", "/etc/passwd"), "absolute"),
    doit("pin_path_outside_cell", MACHINE, pin("path", "file:///etc/passwd"), "file-uri"),
    doit("pin_path_outside_cell", MACHINE, pin("path", "..\\weld_cell_a\\c.json"), "backslash"),
    doit("symlink_refused", MACHINE, link_outside(CALIBRATION), "pinned-file-link-outside"),
    doit("symlink_refused", MACHINE, calibration_in_linked_folder, "pinned-folder-link-outside"),
    doit("symlink_refused", MACHINE, link_outside(MACHINE), "machine-json-link-outside"),
    doit("symlink_refused", MACHINE, dangling(MACHINE), "machine-json-dangling-link"),
    doit(
        "pin_mismatch",
        MACHINE,
        transform(CALIBRATION, lambda d: d.replace(b"2.0,", b"1.9,", 1)),
        "calibration-changed-unpinned",
    ),
    doit(
        "invalid_json",
        CALIBRATION,
        calibration(lambda d: d[: len(d) // 2]),
        "calibration-truncated",
    ),
    doit("invalid_json", CALIBRATION, calibration(lambda d: b""), "calibration-empty-file"),
    doit("not_utf8", CALIBRATION, calibration(not_utf8), "calibration-not-utf8"),
    doit(
        "duplicate_key",
        CALIBRATION,
        calibration(lambda d: d.replace(b'"held": {}', b'"held": {}, "held": {}', 1)),
        "calibration-duplicate-key",
    ),
    doit(
        "non_finite_number",
        CALIBRATION,
        calibration(
            lambda d: d.replace(
                b'"speed_ceiling_rad_s": 2.0', b'"speed_ceiling_rad_s": Infinity', 1
            )
        ),
        "calibration-infinity",
    ),
    doit(
        "unexpected_field",
        CALIBRATION,
        calibration(lambda d: d.replace(b'"held": {}', b'"held": {}, "note": "x"', 1)),
        "calibration-unknown-field",
    ),
    doit(
        "limit_widens",
        CALIBRATION,
        calibration(lambda d: d.replace(b'"upper_rad": 1.5708', b'"upper_rad": 3.5', 1)),
        "calibration-widens-urdf-limit",
    ),
    # Regressions: each was a traceback (int() refusing 4300+ digits; os.lstat on a NUL; a name
    # longer than the system allows).
    doit(
        "non_finite_number",
        CALIBRATION,
        calibration(
            lambda d: d.replace(
                b'"speed_ceiling_rad_s": 2.0', b'"speed_ceiling_rad_s": 1' + b"0" * 5000, 1
            )
        ),
        "calibration-integer-of-5000-digits",
    ),
    doit("invalid_path_character", MACHINE, pin("path", "cal\x00.json"), "pin-nul"),
    doit("file_missing", MACHINE, pin("path", "c" * 5000), "pin-name-too-long"),
    doit(
        "cell_id_mismatch",
        MACHINE,
        replace(MACHINE, '"cell_id": "weld_cell_a"', '"cell_id": "weld_cell_b"'),
        "cell-id-is-folder",
    ),
    doit(
        "unknown_model",
        MACHINE,
        replace(MACHINE, '"model_id": "abb_irb2400"', '"model_id": "../robots/abb_irb2400"'),
        "model-id-path",
    ),
    # ---- manifest rules, through `pipeline manifest --check` on a built description ----
    cli("empty_path", MANIFEST, manifest_files(lambda f: [*f, ""]), ("manifest", "--check", BUILT)),
    cli(
        "absolute_path",
        MANIFEST,
        manifest_files(lambda f: [*f, "/etc/passwd"]),
        ("manifest", "--check", BUILT),
    ),
    cli(
        "backslash_path",
        MANIFEST,
        manifest_files(lambda f: [*f, "meshes\\link_1.stl"]),
        ("manifest", "--check", BUILT),
    ),
    cli(
        "dot_segment",
        MANIFEST,
        manifest_files(lambda f: [*f, "meshes/../../lbr_iiwa_14_r820/robot.urdf"]),
        ("manifest", "--check", BUILT),
    ),
    cli(
        "duplicate_path",
        MANIFEST,
        manifest_files(lambda f: [*f, f[0]]),
        ("manifest", "--check", BUILT),
    ),
    cli(
        "manifest_lists_itself",
        MANIFEST,
        manifest_files(lambda f: [*f, "robot_description_manifest.json"]),
        ("manifest", "--check", BUILT),
    ),
    cli(
        "manifest_lists_calibration",
        MANIFEST,
        manifest_files(lambda f: [*f, "machine_planning_calibration.json"]),
        ("manifest", "--check", BUILT),
    ),
    # Regression: a JSON escape of a lone surrogate crashed the manifest reader.
    cli(
        "invalid_path_character",
        MANIFEST,
        manifest_files(lambda f: [*f, "meshes/\ud800.stl"]),
        ("manifest", "--check", BUILT),
        "lone-surrogate",
    ),
    cli(
        "not_a_regular_file",
        MANIFEST,
        link_outside(f"{BUILT}/meshes/link_1.stl"),
        ("manifest", "--check", BUILT),
        "symlink-outside",
    ),
    cli(
        "unregistered_file",
        MANIFEST,
        add_built_mesh,
        ("manifest", "--check", BUILT),
        "mesh-not-listed",
    ),
    cli(
        "path_not_string",
        MANIFEST,
        manifest_files(lambda f: [*f, 7]),
        ("manifest", "--check", BUILT),
    ),
    cli(
        "dot_segment",
        MANIFEST,
        manifest_files(lambda f: [*f, "./robot.urdf"]),
        ("identity", BUILT),
        "identity",
    ),
    # ---- found by the hostile-input trial of robots/ (notes/hostile.md) ----
    doit(
        "lone_surrogate",
        CONFIG,
        replace(CONFIG, '"controller_axis": "rax_1"', '"controller_axis": "rax_1\\ud800"'),
        "config-string-lone-surrogate",
    ),
    doit(
        "lone_surrogate",
        RTCORE,
        transform(RTCORE, lambda d: d.replace(b'": "', b'": "\\udc00', 1)),
        "rtcore-string-lone-surrogate",
    ),
    doit(
        "invalid_number",
        URDF,
        replace(URDF, 'rpy="0 0 0" xyz="0 0 0"', 'rpy="0 0 0" xyz="1_0 0 0"'),
        "urdf-python-only-number-syntax",
    ),
    doit(
        "invalid_number",
        URDF,
        replace(URDF, 'rpy="0 0 0" xyz="0 0 0"', 'rpy="\u0661 0 0" xyz="0 0 0"'),
        "urdf-arabic-indic-digit",
    ),
    doit(
        "geometry_out_of_range",
        URDF,
        replace(
            URDF,
            '<collision>\n      <origin rpy="0 0 0" xyz="0 0 0"/>',
            '<collision>\n      <origin rpy="0 0 0" xyz="1e300 0 0"/>',
        ),
        "urdf-collision-origin-1e300",
    ),
    doit(
        "geometry_out_of_range",
        URDF,
        replace(
            URDF, f'<mesh filename="{L1_MESH}"/>', f'<mesh filename="{L1_MESH}" scale="1e300 1 1"/>'
        ),
        "urdf-mesh-scale-1e300",
    ),
    doit(
        "geometry_out_of_range",
        URDF,
        replace(URDF, f'<mesh filename="{L1_MESH}"/>', '<box size="1e-12 1e-12 1e-12"/>'),
        "urdf-box-1e-12",
    ),
    doit(
        "zero_axis",
        URDF,
        replace(URDF, '<axis xyz="0 0 1"/>', '<axis xyz="0 0 1e-320"/>'),
        "urdf-axis-underflows",
    ),
    # ---- found by the new-user and hostile-input trial 20 ----
    # Regressions: two joint origins (or calibration corrections) of 1.7e308 m made the cell's
    # forward kinematics inf, and cell.json's writer raised after build/robots/ was rewritten.
    doit(
        "origin_out_of_range",
        URDF,
        replace(URDF, 'xyz="0.1 0 0.615"', 'xyz="1.7e308 0 0.615"'),
        "urdf-joint-origin-1.7e308",
    ),
    doit(
        "out_of_range",
        CONFIG,
        json_set(CONFIG, ["calibration_caps", "joint_2", "xyz_m"], [1.7e308, 0, 0]),
        "config-calibration-cap-1.7e308",
    ),
    # Regression: meshes/LINK_1.stl beside meshes/link_1.stl was copied into build/ as two
    # files that macOS and Windows check out as one.
    doit(
        "case_collision",
        URDF,
        both(
            copy_file(f"{ABB}/meshes/link_2_whole.stl", f"{ABB}/meshes/LINK_1.stl"),
            replace(URDF, "meshes/link_1.dae", "meshes/LINK_1.stl"),
        ),
        "mesh-names-differ-only-in-case",
    ),
    # Regression: a second <limit> was silently ignored (the first wins in every reader).
    doit(
        "duplicate_element",
        URDF,
        replace(URDF, '<axis xyz="0 0 1"/>', '<axis xyz="0 0 1"/><axis xyz="1 0 0"/>'),
        "urdf-second-axis-ignored",
    ),
    # Regression: an empty visual OBJ was copied; Tesseract's parser refused the whole URDF.
    doit(
        "mesh_empty",
        f"{ABB}/meshes/link_1.obj",
        both(
            write(f"{ABB}/meshes/link_1.obj", b""),
            replace(URDF, "meshes/link_1.dae", "meshes/link_1.obj"),
        ),
        "visual-obj-empty",
    ),
    # Regression: a URDF declared and saved as UTF-16 was copied; Tesseract refuses it.
    doit(
        "not_utf8",
        URDF,
        transform(
            URDF,
            lambda d: (
                d.replace(b'encoding="UTF-8"', b'encoding="UTF-16"', 1)
                .decode("utf-8")
                .encode("utf-16")
            ),
        ),
        "urdf-declared-utf16",
    ),
    doit("not_a_regular_file", SRDF_PY, folder_instead(SRDF_PY), "srdf-py-is-a-folder"),
    doit("symlink_refused", SRDF_PY, dangling(SRDF_PY), "srdf-py-dangling-link"),
    doit("not_a_regular_file", SETTINGS, folder_instead(SETTINGS), "settings-is-a-folder"),
    doit(
        "invalid_xml",
        SRDF_PY,
        in_gen_srdf(
            "return {'xml': '<robot name=\"abb_irb2400\"><group name=\"\\ud800\"/></robot>', "
            "'urdf': 'robot.urdf'}"
        ),
        "srdf-lone-surrogate",
    ),
    doit("invalid_model_id", "robots/my@robot", copy_robot("my@robot"), "robot-folder-name"),
    # ---- a generator that hangs, through the srdf command with a short time limit ----
    cli(
        "generator_timeout",
        SRDF_PY,
        in_gen_srdf("while True: pass"),
        ("srdf", "--timeout", "1", SRDF_PY),
        "hangs",
    ),
]


def snapshot(project: Path) -> dict[str, tuple[bool, int, int]]:
    """Every path of the checkout outside build/ with (is link, size, mtime), caches aside."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(project):
        base = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and base / d != project / "build"]
        for name in [*dirnames, *filenames]:
            rel = (base / name).relative_to(project).as_posix()
            if rel in VOLATILE:
                continue
            info = os.lstat(base / name)
            out[rel] = (os.path.islink(base / name), info.st_size, info.st_mtime_ns)
    return out


def run(project: Path, command: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """Run a catalogue command in the scratch checkout."""
    if command[0] == "doit":
        return run_doit(project, *command[1:])
    return run_python(project, "-m", "pipeline", *command[1:])


def assert_refused(project: Path, outside: Path, case: Case) -> None:
    """Break, run, and check the four promises of the catalogue."""
    case.breaks(project, outside)
    build_before = tree_bytes(project / "build")
    rest_before = snapshot(project)
    result = run(project, case.command)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.strip()]
    findings = [line for line in lines if FINDING.match(line)]
    others = [line for line in lines if line not in findings and not TASK_LINE.match(line)]
    assert others == [], output
    assert len(findings) == 1 + len(case.also), output
    matches = [FINDING.match(line) for line in findings]
    named = [(m["file"], m["code"]) for m in matches if m is not None]
    assert sorted(named) == sorted((case.file, code) for code in (case.code, *case.also)), output
    assert [line for line in findings if str(project) in line] == []
    assert tree_bytes(project / "build") == build_before
    assert snapshot(project) == rest_before


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the scratch checkout, for links that point out of it."""
    return tmp_path_factory.mktemp("outside")


@pytest.mark.parametrize("case", CATALOGUE)
def test_bad_input_is_refused_cleanly(project: Path, outside: Path, case: Case) -> None:
    assert_refused(project, outside, case)


@pytest.mark.slow
def test_generator_timeout_hanging_generator_through_doit(project: Path, outside: Path) -> None:
    """Through doit the generator gets the default 60 s, then is stopped and reported."""
    assert_refused(
        project, outside, Case("generator_timeout", SRDF_PY, in_gen_srdf("while True: pass"))
    )


def test_catalogue_covers_the_issue_list() -> None:
    """The hostile inputs issue 8 names each have a case (by id)."""
    ids = {param.id for param in CATALOGUE}  # type: ignore[attr-defined]
    for needed in (
        "external-entity",
        "entity-expansion-bomb",
        "doctype",
        "nesting-10000-deep",
        "over-xml-limit",
        "empty-file",
        "not-utf8",
        "truncated-mid-element",
        "mesh-link-outside",
        "meshes-folder-link-outside",
        "raises",
        "hangs",
        "writes-beside-source",
        "sys-exit",
    ):
        assert any(needed in case_id for case_id in ids), needed
