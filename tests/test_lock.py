"""The checkout's build lock: a second holder waits for the first."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from pipeline.lock import hold_build_lock

WAITER = """
import sys
from pathlib import Path
from pipeline.lock import hold_build_lock
with hold_build_lock(Path(sys.argv[1])):
    print("held")
"""


def test_second_holder_waits_with_a_message(tmp_path: Path) -> None:
    with hold_build_lock(tmp_path):
        waiter = subprocess.Popen(
            [sys.executable, "-c", WAITER, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)
        assert waiter.poll() is None  # still waiting while the lock is held
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0 and out == "held\n"
    assert "another build is running in this checkout; waiting" in err
