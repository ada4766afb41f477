"""Content stamps: what each build step was made from, kept in build/ beside its outputs.

A stamp records the SHA-256 of every input (sources and the code that makes the outputs) and of
every output. A step is current when its inputs hash to the recorded digests and its outputs
still hold the recorded bytes, so staleness is decided by content, not by doit's database.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pipeline.digests import Digests
from pipeline.strict_io import JSON_LIMIT, atomic_write, dump_json, read_regular

STAMP_ROOT = "build/stamps"
Make = Callable[[Path], Mapping[str, bytes]]


@dataclass(frozen=True)
class Step:
    """One build step: the files it reads and the function that makes its outputs."""

    name: str
    doc: str
    inputs: tuple[str, ...]
    make: Make
    targets: tuple[str, ...] = ()

    @property
    def stamp(self) -> str:
        """Repo-relative path of this step's stamp."""
        return stamp_path(self.name)


@dataclass(frozen=True)
class Stamp:
    """The recorded digests of a step's inputs and outputs."""

    step: str
    inputs: dict[str, str]
    outputs: dict[str, str]


def stamp_path(step: str) -> str:
    """Repo-relative path of the stamp of the step called `step` (`group:name`)."""
    group, _, name = step.partition(":")
    return f"{STAMP_ROOT}/{group}/{name or group}.json"


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def hash_inputs(root: Path, paths: Iterable[str], digests: Digests | None = None) -> dict[str, str]:
    """Digest of each input; a missing input is recorded as `missing`."""
    known = digests or Digests(root, remember=False)
    return {path: known.of(path) for path in paths}


def read_stamp(root: Path, step: str) -> Stamp | None:
    """The stamp of a step, or None when there is none or it is unreadable."""
    found = read_regular(os.path.join(root, stamp_path(step)), JSON_LIMIT)
    if found is None:
        return None
    try:
        data = json.loads(found[0])
        return Stamp(data["step"], dict(data["inputs"]), dict(data["outputs"]))
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


def changed_inputs(stamp: Stamp | None, digests: Mapping[str, str]) -> list[str]:
    """Inputs whose digest differs from the stamp (all of them when there is no stamp)."""
    if stamp is None:
        return sorted(digests)
    keys = set(digests) | set(stamp.inputs)
    return sorted(k for k in keys if digests.get(k) != stamp.inputs.get(k))


def changed_outputs(root: Path, stamp: Stamp, digests: Digests | None = None) -> list[str]:
    """Recorded outputs that are missing or no longer hold the recorded bytes."""
    known = digests or Digests(root, remember=False)
    return [path for path, digest in sorted(stamp.outputs.items()) if not known.holds(path, digest)]


def run_step(root: Path, step: Step, known: Digests | None = None) -> bool:
    """Bring a step's outputs up to date; True when anything was made."""
    digests = hash_inputs(root, step.inputs, known)
    stamp = read_stamp(root, step.name)
    if (
        stamp is not None
        and not changed_inputs(stamp, digests)
        and not changed_outputs(root, stamp, known)
    ):
        return False
    outputs = dict(step.make(root))
    for path in sorted(outputs):
        atomic_write(root / path, outputs[path])
    if stamp is not None:
        for path in sorted(set(stamp.outputs) - set(outputs)):
            (root / path).unlink(missing_ok=True)
    record = {
        "step": step.name,
        "inputs": digests,
        "outputs": {path: sha256_bytes(data) for path, data in outputs.items()},
    }
    atomic_write(root / step.stamp, dump_json(record))
    return True
