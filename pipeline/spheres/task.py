"""The spheres build step of one robot: previous output in, new spheres.json bytes out."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path

from pipeline.findings import ContractError
from pipeline.spheres.build import build_spheres, status
from pipeline.spheres.document import FILE
from pipeline.stamps import read_stamp, sha256_bytes
from pipeline.strict_io import JSON_LIMIT, read_regular
from pipeline.urdf import load_robot

WORKERS = 2


def target_of(model_id: str) -> str:
    """The repository-relative path of a robot's spheres.json in build/."""
    return f"build/robots/{model_id}/{FILE}"


def trusted_previous(root: Path, model_id: str) -> bytes | None:
    """The spheres.json in build/ when it holds the bytes its step recorded writing, else None.

    Its spheres are reused for links whose provenance matches, so a hand edit (a radius shrunk
    or grown, spheres added) must not be taken for the step's own work: build/ is what the
    sources make, and the edited file is then refitted whole, as if it were absent.
    """
    found = read_regular(root / target_of(model_id), JSON_LIMIT)
    return found[0] if found is not None and written_by_step(root, model_id, found[0]) else None


def written_by_step(root: Path, model_id: str, data: bytes) -> bool:
    """Whether `data` are the bytes the spheres step's sealed stamp recorded writing to build/.

    A stamp of the unsealed format of older versions does not count: deleting a stamp's seal
    line made a hand-edited spheres.json reused, sealed anew and current. (Those versions
    fitted with an older fitter version, which refits every link anyway.)
    """
    stamp = read_stamp(root, f"spheres:{model_id}")
    return stamp is not None and stamp.outputs.get(target_of(model_id)) == sha256_bytes(data)


def make_spheres(root: Path, model_id: str) -> dict[str, bytes]:
    """Refit the links whose geometry changed, restamp the others, prove coverage of all."""
    folder = root / "robots" / model_id
    robot = load_robot(folder, root)
    previous = trusted_previous(root, model_id)
    data, _ = build_spheres(
        robot, folder, root, previous, workers=WORKERS, progress=_progress(model_id)
    )
    return {target_of(model_id): data}


def _progress(model_id: str) -> Callable[[str], None]:
    """Lines on standard error while links are fitted: a fit takes seconds per link."""

    def tell(line: str) -> None:
        stream = sys.stderr
        if stream is None:  # started without one
            return
        with contextlib.suppress(OSError, ValueError):  # closed, or its reader gone: no matter
            print(f"spheres:{model_id}: {line}", file=stream, flush=True)

    return tell


def describe_status(root: Path, model_id: str) -> str:
    """`; links: ...` summarising which links a rebuild would refit or restamp (no fitting)."""
    folder = root / "robots" / model_id
    try:
        robot = load_robot(folder, root)
        states = status(robot, folder, trusted_previous(root, model_id))
    except ContractError:
        return ""
    parts = []
    for state in ("refit", "restamp"):
        names = [name for name, s in states.items() if s == state]
        if names:
            parts.append(f"{state} {', '.join(names)}")
    return f"; links: {'; '.join(parts)}" if parts else ""
