"""exp and log of basic operations: accurate, and the fitter's spheres the same on every CPU."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline.spheres import portable
from tests.conftest import REPO

# (function, reference, arguments): the fitter's ranges and their ends
CASES = [
    ("exp", math.exp, [-745.0, -708.3, -40.0, -1e-300, 0.0, 1e-17, 0.34657, 0.5, 40.0, 709.0]),
    ("log", math.log, [5e-324, 1e-300, 0.5, 0.7071067811865476, 1.0, 1.0 + 2**-52, 2.0, 1e300]),
]


@pytest.mark.parametrize(("name", "reference", "args"), CASES, ids=[c[0] for c in CASES])
def test_portable_functions_are_within_a_few_ulps(name: str, reference, args) -> None:  # type: ignore[no-untyped-def]
    got = getattr(portable, name)(np.array(args))
    for x, value in zip(args, got, strict=True):
        want = reference(x)
        assert abs(value - want) <= 4 * math.ulp(want), (name, x, value, want)


def test_portable_exp_underflows_to_zero_below_the_smallest_double() -> None:
    assert portable.exp(np.array([-800.0, -1e300]))[0] == 0.0


FIT = """
import json, sys
from pipeline.spheres.fit import FitParams, fit_link
from pipeline.spheres.geometry import load_link_geometry
from pipeline.urdf import load_robot
from pathlib import Path
folder = Path("robots/lbr_iiwa_14_r820")
link = load_robot(folder, Path(".")).link("link_7")
geometry = load_link_geometry(link, folder, "robots/lbr_iiwa_14_r820")
centers, radii = fit_link(geometry, FitParams())
print(json.dumps([centers.tolist(), radii.tolist()]))
"""


def _dispatched_features() -> list[str]:
    """numpy's CPU features beyond its baseline that this machine has (each has its own code)."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]
    return [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]


def _fit(disabled: list[str]) -> list[object]:
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(disabled)}
    run = subprocess.run(
        [sys.executable, "-c", FIT], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return list(json.loads(run.stdout))


def test_spheres_are_the_same_on_every_numpy_cpu_feature_level() -> None:
    """Two machines (AVX-512, AVX2, baseline) fit the same spheres: np.exp/np.log did not."""
    features = _dispatched_features()
    if not features:
        pytest.skip("numpy dispatches no CPU feature on this machine: one code path only")
    native = _fit([])
    assert _fit(features) == native
