"""Building spheres.json: refit links whose geometry changed, restamp the rest, verify all."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.findings import ContractError, raise_if_errors
from pipeline.spheres.checks import (
    EXCESS_SAMPLES,
    VerifyReport,
    check_link,
    link_set_findings,
    not_covering,
)
from pipeline.spheres.document import (
    FILE,
    document_bytes,
    read_document,
    sphere_list,
    spheres_of,
)
from pipeline.spheres.fit import FitParams, fit_link
from pipeline.spheres.geometry import collision_links, load_link_geometry
from pipeline.spheres.pool import pool_map
from pipeline.spheres.provenance import (
    CURRENT,
    REFIT,
    RESTAMP,
    Sources,
    link_status,
    parse_previous,
    read_sources,
)
from pipeline.urdf import Collision, Robot

# told one line of progress at a time (`fitting 7 links`, `fitted link_2 in 1.2 s (3 of 7)`)
Progress = Callable[[str], None]


@dataclass(frozen=True)
class SpheresReport:
    """Which links a build fitted, restamped, or found current."""

    fitted: tuple[str, ...]
    restamped: tuple[str, ...]
    current: tuple[str, ...]


def status(robot: Robot, robot_folder: Path, previous: bytes | None) -> dict[str, str]:
    """Per collision link: `current`, `restamp` or `refit`, decided without fitting."""
    sources = read_sources(robot, robot_folder)
    return link_status(sources, parse_previous(previous, FILE))


def _fit_one(
    job: tuple[Robot, Path, str, str, FitParams],
) -> tuple[str, list[dict[str, Any]], float]:
    """A link's spheres, and the CPU seconds its fit took (told, never written)."""
    start = time.process_time()
    robot, folder, display, name, params = job
    link = robot.link(name)
    assert link is not None
    geometry = load_link_geometry(link, folder, display)
    centers, radii = fit_link(geometry, params)
    return name, sphere_list(centers, radii), time.process_time() - start


def _fit_input(collisions: tuple[Collision, ...], params: FitParams) -> tuple[Any, ...]:
    """What a link's fit reads: its collision elements (their line aside) and parameters."""
    return (tuple((c.origin, c.geometry) for c in collisions), params)


def build_spheres(
    robot: Robot,
    robot_folder: Path,
    repo_root: Path,
    previous: bytes | None,
    workers: int = 1,
    progress: Progress | None = None,
) -> tuple[bytes, SpheresReport]:
    """The canonical bytes of spheres.json, every link proven covered, and what was done."""
    del repo_root  # display paths come from the robot model, which names its URDF
    sources = read_sources(robot, robot_folder)
    old = parse_previous(previous, FILE)
    decided = link_status(sources, old)
    refit = [name for name, state in decided.items() if state == REFIT]
    fitted = _fit(robot, robot_folder, sources, refit, workers, progress)
    data = _document(robot, sources, decided, fitted, old)
    report = verify(robot, robot_folder, data, samples=0)
    # A kept link's spheres that the proof no longer accepts (the proof was made stricter since
    # they were fitted: far-out rounding, non-planar polygons) are fitted again, not refused:
    # their geometry digest still matches, and a build must not stop on what it made itself.
    unproven = [c.link for c in report.links if not c.proven and c.link not in fitted]
    if unproven:
        fitted |= _fit(robot, robot_folder, sources, unproven, workers, progress)
        data = _document(robot, sources, decided, fitted, old)
        report = verify(robot, robot_folder, data, samples=0)
    raise_if_errors(list(report.findings))
    refit += unproven
    return data, SpheresReport(
        tuple(refit),
        tuple(n for n, s in decided.items() if s == RESTAMP and n not in unproven),
        tuple(n for n, s in decided.items() if s == CURRENT and n not in unproven),
    )


def _fit(
    robot: Robot,
    folder: Path,
    sources: Sources,
    names: list[str],
    workers: int,
    progress: Progress | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """The spheres of each named link, fitted; links with the same collision elements (a mesh
    shared by the fingers of a hand, the feet of a quadruped) and parameters are fitted once."""
    collisions = {link.name: link.collisions for link in robot.links}
    alike: dict[tuple[Any, ...], list[str]] = {}
    for name in names:
        alike.setdefault(_fit_input(collisions[name], sources.params[name]), []).append(name)
    jobs = [
        (robot, folder, sources.folder_display, group[0], sources.params[group[0]])
        for group in alike.values()
    ]
    others = {group[0]: group[1:] for group in alike.values()}
    told = _teller(progress, len(jobs), min(workers, len(jobs)), others)
    if workers > 1 and len(jobs) > 1:
        results = pool_map(_fit_one, jobs, min(workers, len(jobs)), told)
    else:
        results = []
        for job in jobs:
            results.append(_fit_one(job))
            told(results[-1])
    first = {name: spheres for name, spheres, _ in results}
    return {name: first[group[0]] for group in alike.values() for name in group}


def _teller(
    progress: Progress | None, count: int, processes: int, others: dict[str, list[str]]
) -> Callable[[tuple[str, Any, float]], None]:
    """What is called with each fitted link: a line of progress per link, after a first one;
    `others`: the links each fitted link's spheres are also given (of the same geometry)."""
    if progress is None or not count:
        return lambda _: None
    noun = "link" if count == 1 else "links"
    total = count + sum(len(alike) for alike in others.values())
    progress(
        f"fitting {count} {noun}"
        + (f" in {processes} processes" if processes > 1 else "")
        + (
            f" for {total} (a link of the same collision geometry as another is fitted once)"
            if total > count
            else ""
        )
    )
    finished = [0]

    def told(result: tuple[str, Any, float]) -> None:
        finished[0] += 1
        alike = others.get(result[0], [])
        also = (
            "; " + ", ".join(alike[:3]) + (f" and {len(alike) - 3} more" if len(alike) > 3 else "")
        )
        progress(
            f"fitted {result[0]} in {result[2]:.1f} s ({finished[0]} of {count}"
            + (f"{also} alike)" if alike else ")")
        )

    return told


def _document(
    robot: Robot,
    sources: Sources,
    decided: dict[str, str],
    fitted: dict[str, Any],
    old: dict[str, Any] | None,
) -> bytes:
    """The canonical bytes of spheres.json: fitted links' new spheres, the others' kept ones."""
    links: dict[str, dict[str, Any]] = {}
    for name in decided:
        spheres = fitted[name] if name in fitted else old["links"][name]["spheres"]  # type: ignore[index]
        links[name] = {"spheres": spheres, "provenance": sources.link_provenance(name)}
    return document_bytes(robot.name, sources.made_from(), links)


def verify(
    robot: Robot,
    robot_folder: Path,
    spheres_bytes: bytes,
    *,
    samples: int = EXCESS_SAMPLES,
    display: str = FILE,
) -> VerifyReport:
    """Prove each link's coverage against the exact collision geometry; measure the excess."""
    document = read_document(spheres_bytes, display, robot.name)
    sources_display = read_sources(robot, robot_folder).folder_display
    entries: dict[str, Any] = document["links"]
    checks = []
    findings = []
    names = [link.name for link in collision_links(robot)]
    missing = [name for name in names if name not in entries]
    extra = sorted(set(entries) - set(names))
    if missing or extra:
        raise ContractError(link_set_findings(missing, extra, display))
    for link in collision_links(robot):
        geometry = load_link_geometry(link, robot_folder, sources_display)
        centers, radii = spheres_of(entries[link.name])
        check = check_link(geometry, centers, radii, samples)
        checks.append(check)
        if not check.proven:
            findings.append(not_covering(check, display))
    return VerifyReport(tuple(checks), tuple(findings))
