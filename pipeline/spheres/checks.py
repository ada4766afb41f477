"""Verification of spheres.json: proven coverage per link and the Monte Carlo excess volume."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.findings import Finding, json_pointer
from pipeline.spheres.geometry import Array, LinkGeometry
from pipeline.spheres.prove import prove

EXCESS_SAMPLES = 100_000
EXCESS_SEED = 20_240_601


@dataclass(frozen=True)
class LinkCheck:
    """The verification of one link's spheres."""

    link: str
    count: int
    proven: bool
    gap: float  # upper bound on the uncovered distance, metres (0 when proven)
    excess: float | None = None  # union outside the solid / solid volume
    excess_se: float | None = None  # its Monte Carlo standard error

    def as_json(self) -> dict[str, Any]:
        """The check as a JSON-ready mapping."""
        return {
            "link": self.link,
            "spheres": self.count,
            "proven": self.proven,
            "gap_bound_m": self.gap,
            "excess_ratio": self.excess,
            "excess_se": self.excess_se,
        }


@dataclass(frozen=True)
class VerifyReport:
    """Per link checks and the findings for links that are not proven covered."""

    links: tuple[LinkCheck, ...]
    findings: tuple[Finding, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Whether every link is proven covered."""
        return not self.findings

    def link(self, name: str) -> LinkCheck:
        """The check of one link."""
        return next(check for check in self.links if check.link == name)


def check_link(
    geometry: LinkGeometry, centers: Array, radii: Array, samples: int = EXCESS_SAMPLES
) -> LinkCheck:
    """Prove coverage of one link; estimate its excess ratio when `samples` > 0."""
    proof = prove(geometry, centers, radii)
    excess: float | None = None
    se: float | None = None
    if samples > 0:
        excess, se = excess_ratio(geometry, centers, radii, samples)
        if not math.isfinite(excess):  # a surface that encloses no volume: no ratio
            excess = se = None
    return LinkCheck(geometry.link, len(radii), proof.proven, proof.gap, excess, se)


def not_covering(check: LinkCheck, display: str) -> Finding:
    """The finding for a link whose coverage could not be proven."""
    return Finding(
        "spheres_not_covering",
        display,
        json_pointer(["links", check.link]),
        f"link {check.link!r}: the spheres do not provably cover the collision surface "
        f"(a surface point may lie up to {check.gap * 1000:.3f} mm outside them)",
        "refit the link: delete its entry (or the file) and rebuild",
    )


def excess_ratio(
    geometry: LinkGeometry, centers: Array, radii: Array, samples: int, seed: int = EXCESS_SEED
) -> tuple[float, float]:
    """Volume of the union outside the solid over the solid's volume, and its standard error.

    Uniform samples over the bounding box of the union and the geometry; the ratio of two
    means, its standard error by the delta method.
    """
    lo, hi = geometry.bounds()
    lo = np.minimum(lo, (centers - radii[:, None]).min(axis=0))
    hi = np.maximum(hi, (centers + radii[:, None]).max(axis=0))
    points = np.random.default_rng(seed).uniform(lo, hi, size=(samples, 3))
    solid = geometry.inside(points)
    union = np.zeros(samples, dtype=bool)
    for c, r in zip(centers, radii, strict=True):
        d = points - c
        union |= np.einsum("ij,ij->i", d, d) <= r * r
    x = (union & ~solid).astype(float)
    y = solid.astype(float)
    if y.sum() == 0:
        return math.inf, math.inf
    ratio = x.mean() / y.mean()
    se = float(np.sqrt(np.var(x - ratio * y) / samples) / y.mean())
    return float(ratio), se


def link_set_findings(missing: list[str], extra: list[str], display: str) -> list[Finding]:
    """Findings for collision links without spheres and spheres of links without collision."""
    out = [
        Finding(
            "spheres_missing_link",
            display,
            json_pointer(["links"]),
            f"link {name!r} has collision geometry but no spheres",
            "rebuild the spheres (doit spheres) to fit it",
        )
        for name in missing
    ]
    out += [
        Finding(
            "unknown_link",
            display,
            json_pointer(["links", name]),
            f"link {name!r} has no collision geometry in the URDF",
            "rebuild the spheres (doit spheres) to drop it",
        )
        for name in extra
    ]
    return out
