"""Shared fixtures: the real robots, copied into a scratch repo so tests can break them."""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, TypeVar

import pytest

from tests.cellrepo import add_two_arm_cell, copy_repo, review_off_zero

REPO = Path(__file__).resolve().parent.parent
ROBOTS = ("abb_irb2400", "lbr_iiwa_14_r820")

T = TypeVar("T")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A scratch repository holding copies of the shipped robots' sources."""
    for model_id in ROBOTS:
        shutil.copytree(REPO / "robots" / model_id, tmp_path / "robots" / model_id)
    if (REPO / "cells").is_dir():
        shutil.copytree(REPO / "cells", tmp_path / "cells")
    return tmp_path


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` with its bytes, for byte-identity comparisons."""
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def project(repo: Path) -> Path:
    """A scratch checkout: sources, code, dodo.py and the committed build/."""
    shutil.copytree(
        REPO / "pipeline", repo / "pipeline", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy2(REPO / "dodo.py", repo / "dodo.py")
    shutil.copy2(REPO / ".gitignore", repo / ".gitignore")
    if (REPO / "build").is_dir():
        shutil.copytree(REPO / "build", repo / "build")
    return repo


@pytest.fixture(scope="session")
def off_zero(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, float]]:
    """A repository copy, built by `doit`, whose abb_irb2400 (weld_cell_a's robot) is reviewed
    off zero, and the joint positions its review must be at (cellrepo.review_off_zero)."""
    root = copy_repo(tmp_path_factory.mktemp("off_zero"))
    positions = review_off_zero(root)
    result = run_doit(root)
    assert result.returncode == 0, result.stdout + result.stderr
    return root, positions


@pytest.fixture(scope="session")
def two_arms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository copy, built by `doit`, with a two-arm robot and a cell whose calibration
    corrects joints of its second arm (cellrepo.add_two_arm_cell)."""
    root = copy_repo(tmp_path_factory.mktemp("two_arms"))
    add_two_arm_cell(root)
    result = run_doit(root)
    assert result.returncode == 0, result.stdout + result.stderr
    return root


def run_doit(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run doit in a scratch checkout, as a user would."""
    return run_python(project, "-m", "doit", *args)


def run_python(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with `args` in a scratch checkout, its code first on the path."""
    env = {**os.environ, "PYTHONPATH": str(project)}
    return subprocess.run(
        [sys.executable, *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def peak_memory(call: Callable[[], T]) -> tuple[T, int]:
    """What `call` returns, and the most memory (bytes) Python held while it ran."""
    tracemalloc.start()
    try:
        return call(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def clock_ahead(monkeypatch: pytest.MonkeyPatch, seconds: float, *modules: ModuleType) -> None:
    """Run the clock of `modules` `seconds` ahead: files written now look that old to their
    racy-window rule (judged by the ctime, which a test cannot set back as it can the mtime)."""
    for module in modules:
        monkeypatch.setattr(module, "time", SimpleNamespace(time=lambda: time.time() + seconds))


def refuse_under(monkeypatch: pytest.MonkeyPatch, call: str, folder: Path) -> None:
    """Make `os.<call>` refuse (EACCES) every path at or below `folder`, as for another user."""
    monkeypatch.setattr(os, call, _refusing(getattr(os, call), folder))
    # Python 3.10's pathlib calls through an accessor holding its own references (io.open
    # for open), which patching os does not reach
    accessor = getattr(pathlib, "_NormalAccessor", None)
    if accessor is not None and hasattr(accessor, call):
        real = getattr(accessor, call)
        monkeypatch.setattr(accessor, call, staticmethod(_refusing(real, folder)))


def _refusing(real: Any, folder: Path) -> Any:
    def refused(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path) == str(folder) or os.fspath(path).startswith(f"{folder}{os.sep}"):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    return refused
