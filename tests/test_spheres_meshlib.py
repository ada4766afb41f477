"""trimesh imported with Ctrl-C held: a Ctrl-C met during its import is not swallowed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# a stand-in for trimesh: Ctrl-C arrives while one of its optional imports runs, which it guards
# with `except BaseException`, as trimesh does
_FAKE_TRIMESH = """
import os, signal, time
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)
except BaseException:
    pass
LOADED = True
"""

_IMPORT = """
import sys
try:
    import pipeline.spheres.meshlib
except KeyboardInterrupt:
    print("interrupted", sys.modules["trimesh"].LOADED)
else:
    print("swallowed")
"""


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_a_ctrl_c_met_while_trimesh_is_imported_is_raised_once_it_is_loaded(
    tmp_path: Path,
) -> None:
    """The Ctrl-C reaches the importer (the spheres step), after trimesh has loaded."""
    assert _run_with_fake_trimesh(tmp_path, _IMPORT) == ("interrupted True\n", "")


# a thread started before the import does not block the signals: the kernel may hand it the
# process's Ctrl-C (numpy's OpenBLAS threads, in a spheres step), and Python then raises it in
# the main thread, inside trimesh's guarded import, though the main thread blocks it
_IMPORT_WITH_A_THREAD = (
    """
import threading, time
threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
"""
    + _IMPORT
)


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_a_ctrl_c_a_thread_receives_while_trimesh_is_imported_is_raised_once_it_is_loaded(
    tmp_path: Path,
) -> None:
    """hostile-input sweep: Ctrl-C or SIGTERM in the first second of a spheres step was
    swallowed (the build went on and exited 0) although the import held it blocked."""
    assert _run_with_fake_trimesh(tmp_path, _IMPORT_WITH_A_THREAD) == ("interrupted True\n", "")


def _run_with_fake_trimesh(tmp_path: Path, code: str) -> tuple[str, str]:
    """stdout and stderr of `code` run where the fake trimesh is found first."""
    (tmp_path / "trimesh").mkdir()
    (tmp_path / "trimesh" / "__init__.py").write_text(_FAKE_TRIMESH)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result.stdout, result.stderr
