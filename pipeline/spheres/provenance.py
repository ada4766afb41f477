"""Provenance of spheres: per-link geometry digests, fitter settings, refit/restamp decisions."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pipeline.findings import (
    ContractError,
    Finding,
    json_pointer,
    listed_and_closest,
    raise_if_errors,
)
from pipeline.plan import SPHERES_SETTINGS
from pipeline.schemas import check_schema, one_per_value
from pipeline.spheres.fit import FITTER_NAME, FITTER_VERSION, FitParams
from pipeline.strict_io import JSON_LIMIT, MESH_LIMIT, XML_LIMIT, read_bytes
from pipeline.strict_json import dump_json, parse_json
from pipeline.urdf import Box, Collision, Cylinder, Mesh, Robot, Sphere

SETTINGS_FILE = SPHERES_SETTINGS
SETTINGS_SCHEMA = "spheres-settings"
CURRENT, RESTAMP, REFIT = "current", "restamp", "refit"


def sha256(data: bytes) -> str:
    """`sha256:` and the lowercase hex digest of bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Sources:
    """What the spheres of a robot are made from, read once."""

    robot: Robot
    folder_display: str
    urdf: str  # digest of robot.urdf
    settings: str | None  # digest of the settings file, None when absent
    meshes: dict[str, str]  # collision mesh path (relative to the robot folder) -> digest
    params: dict[str, FitParams]  # per collision link
    geometry: dict[str, str]  # per collision link: digest of its canonical collision geometry

    def made_from(self) -> dict[str, Any]:
        """The file-level provenance: every source's digest and the fitter's identity."""
        files = {"robot.urdf": self.urdf, **self.meshes}
        if self.settings is not None:
            files[SETTINGS_FILE] = self.settings
        return {"files": files, "fitter": {"name": FITTER_NAME, "version": FITTER_VERSION}}

    def link_provenance(self, link: str) -> dict[str, Any]:
        """The provenance recorded with one link's spheres."""
        return {
            "geometry_sha256": self.geometry[link],
            "fitter": {
                "name": FITTER_NAME,
                "version": FITTER_VERSION,
                "parameters": self.params[link].as_json(),
            },
        }


def folder_display(robot: Robot) -> str:
    """The robot source folder as findings name it (the folder of its URDF)."""
    return PurePosixPath(robot.file).parent.as_posix() if robot.file else "."


def read_sources(robot: Robot, robot_folder: Path) -> Sources:
    """Digest the URDF, the collision meshes and the settings; validate the settings."""
    display = folder_display(robot)
    urdf = sha256(read_bytes(robot_folder / "robot.urdf", f"{display}/robot.urdf", XML_LIMIT))
    mesh_digests: dict[str, str] = {}
    for link in robot.links:
        for element in link.collisions:
            g = element.geometry
            if isinstance(g, Mesh) and g.path not in mesh_digests:
                data = read_bytes(robot_folder / g.path, f"{display}/{g.path}", MESH_LIMIT)
                mesh_digests[g.path] = sha256(data)
    settings_digest, params = _settings(robot, robot_folder, display)
    geometry = {
        link.name: geometry_digest(link.collisions, mesh_digests)
        for link in robot.links
        if link.collisions
    }
    return Sources(
        robot, display, urdf, settings_digest, dict(sorted(mesh_digests.items())), params, geometry
    )


def geometry_digest(collisions: tuple[Collision, ...], meshes: dict[str, str]) -> str:
    """SHA-256 of a link's canonical collision geometry (origins, shapes, sizes, mesh bytes)."""
    canonical = []
    for element in collisions:
        g = element.geometry
        shape: dict[str, Any]
        if isinstance(g, Mesh):
            shape = {"type": "mesh", "scale": list(g.scale), "sha256": meshes[g.path]}
        elif isinstance(g, Box):
            shape = {"type": "box", "size": list(g.size)}
        elif isinstance(g, Cylinder):
            shape = {"type": "cylinder", "radius": g.radius, "length": g.length}
        else:
            assert isinstance(g, Sphere)
            shape = {"type": "sphere", "radius": g.radius}
        origin = {"xyz": list(element.origin.xyz), "rpy": list(element.origin.rpy)}
        canonical.append({"origin": origin, "geometry": shape})
    return sha256(dump_json({"collisions": canonical}))


def settings_findings(data: bytes, robot: Robot | None, display: str) -> list[Finding]:
    """The findings of spheres.settings.json bytes; without `robot`, only the rules that need
    no URDF."""
    return check_settings(parse_json(data, display), robot, display)


def check_settings(document: dict[str, Any], robot: Robot | None, display: str) -> list[Finding]:
    """Every spheres.settings.json rule: the schema, whole counts and (given the URDF's model,
    `robot`) links that have collision geometry; one finding per value, in the file's order."""
    findings = check_schema(document, SETTINGS_SCHEMA, display)
    per_link = document.get("links", {})
    if not isinstance(per_link, dict):
        per_link = {}  # the schema's finding says so
    if robot is not None:
        links = [link.name for link in robot.links if link.collisions]
        findings += [
            _unknown_link(name, robot, links, display)
            for name in sorted(per_link)
            if name not in links
        ]
    return one_per_value(document, findings)


def _unknown_link(name: str, robot: Robot, links: list[str], display: str) -> Finding:
    """A settings key that is no link with collision geometry: no link at all (with the closest
    one, as `spheres show --link` names it), or one without geometry."""
    listed, close = listed_and_closest(name, links)
    exists = robot.link(name) is not None
    return Finding(
        "unknown_link",
        display,
        json_pointer(["links", name]),
        f"link {name!r} "
        + ("has no collision geometry in the URDF" if exists else "is not in the URDF"),
        (f"did you mean {close!r}? " if close and not exists else "") + f"use one of: {listed}",
    )


def _settings(robot: Robot, folder: Path, display: str) -> tuple[str | None, dict[str, FitParams]]:
    path = folder / SETTINGS_FILE
    links = [link.name for link in robot.links if link.collisions]
    if not os.path.lexists(path):
        return None, {name: FitParams() for name in links}
    shown = f"{display}/{SETTINGS_FILE}"
    data = read_bytes(path, shown, JSON_LIMIT)
    document = parse_json(data, shown)
    raise_if_errors(check_settings(document, robot, shown))
    defaults, per_link = document.get("defaults", {}), document.get("links", {})
    params = {name: FitParams(**{**defaults, **per_link.get(name, {})}) for name in links}
    return sha256(data), params


def link_status(sources: Sources, previous: dict[str, Any] | None) -> dict[str, str]:
    """Per collision link: current, restamp (provenance only) or refit, from `previous`."""
    out: dict[str, str] = {}
    old_links = previous.get("links", {}) if previous else {}
    file_current = previous is not None and previous.get("made_from") == sources.made_from()
    for link in sources.geometry:
        entry = old_links.get(link)
        want = sources.link_provenance(link)
        # the link's provenance is its geometry digest and its fitter (name, version, parameters)
        if not isinstance(entry, dict) or entry.get("provenance") != want:
            out[link] = REFIT
        else:
            out[link] = CURRENT if file_current else RESTAMP
    return out


def parse_previous(data: bytes | None, display: str) -> dict[str, Any] | None:
    """A previous spheres.json, or None when there is none or it cannot be used."""
    if data is None:
        return None
    try:
        document = parse_json(data, display)
    except ContractError:
        return None
    if check_schema(document, "spheres", display):
        return None
    return document
