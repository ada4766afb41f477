"""Collision spheres: conservative fitting, proven coverage, per-link refit and restamp."""

from pipeline.spheres.build import SpheresReport, build_spheres, status, verify
from pipeline.spheres.verify import LinkCheck, VerifyReport

__all__ = ["LinkCheck", "SpheresReport", "VerifyReport", "build_spheres", "status", "verify"]
