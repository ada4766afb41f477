"""The code lists: each stage's outputs depend on every module that makes them."""

from __future__ import annotations

import inspect
import os
import sys
from types import FrameType

import pytest

from pipeline.plan import plan
from pipeline.stagecode import CODE, SPHERES_CODE, SRDF_CODE
from tests.conftest import REPO


def test_srdf_step_depends_on_every_module_that_makes_the_srdf() -> None:
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "pipeline/srdf").glob("*.py")}
    # the commands', not the step's: `pipeline srdf`'s targets and `pipeline template srdf`
    commands = ("targets", "starter", "jointtree", "wheels")
    assert modules - set(SRDF_CODE) == {f"pipeline/srdf/{name}.py" for name in commands}


def test_spheres_step_depends_on_every_module_that_makes_the_spheres() -> None:
    """winding_tree.py, which only a mesh without welded edges calls (no shipped robot has
    one, so the test below, which records what the makes call, cannot see it), was left out."""
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "pipeline/spheres").glob("*.py")}
    commands = {"pipeline/spheres/commands.py", "pipeline/spheres/picture.py"}
    assert modules - set(SPHERES_CODE) == commands  # the commands', not the step's


@pytest.mark.parametrize("stage", list(CODE))
def test_code_list_of_a_stage_names_every_module_its_make_calls(stage: str) -> None:
    """A module a stage's outputs depend on but its code list omits: editing it rebuilt nothing.

    The make of the stage's first step runs on the shipped sources (makes are pure: they return
    bytes and write nothing) while every function called in a pipeline module is recorded.
    """
    step = next(s for s in plan(REPO) if s.name.startswith(f"{stage}:"))
    called: set[str] = set()
    package = str(REPO / "pipeline") + os.sep

    def profile(frame: FrameType, event: str, arg: object) -> None:
        # functions only: a class body or a module run on import is not the stage's code
        if event == "call" and frame.f_code.co_flags & inspect.CO_OPTIMIZED:
            name = frame.f_code.co_filename
            if name.startswith(package):
                called.add("pipeline/" + name[len(package) :].replace(os.sep, "/"))

    sys.setprofile(profile)
    try:
        step.make(REPO)
    finally:
        sys.setprofile(None)
    assert called, "the trace saw no pipeline code"
    assert called - {"pipeline/plan.py"} <= set(CODE[stage])
