"""The digest cache's files: what Digests remembers between runs, by stat signature.

Two files: the sources' (every path outside build/) and build/'s, a sixth and five sixths of it
at 100 robots. A run that meets only touched sources (a touch, a checkout of a branch) loads
and writes the first alone; build/'s is loaded when a path in it is looked up. Local
(git-ignored) and only ever a shortcut: see pipeline/records.py for what a torn file reads as.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pipeline.records import read_columns, write_records

OUTPUTS = "build/"  # every step writes there and nowhere else
CACHE_NAME = ".pipeline-digests"
BUILT_CACHE_NAME = ".pipeline-digests-build"
# Each file: its header, then `path NUL signature NUL digest NUL` per file. Paths cannot hold
# NUL, so one split reads it.
CACHE_HEADER = "pipeline digests 3\0"
BUILT_CACHE_HEADER = "pipeline digests of build/ 3\0"

Entries = dict[str, tuple[str, str]]  # path -> (stat signature, digest)


def load_sources(root: Path) -> Entries:
    """The remembered digests of the sources; none when the file is missing, foreign or torn."""
    return _load(root / CACHE_NAME, CACHE_HEADER)


def load_built(root: Path) -> Entries:
    """The remembered digests of build/'s files; none when the file is missing, foreign or torn."""
    return _load(root / BUILT_CACHE_NAME, BUILT_CACHE_HEADER)


def save(root: Path, entries: Mapping[str, tuple[str, str]], built_whole: bool) -> bool:
    """Write `entries` back: the sources' file, and build/'s. `built_whole`: the entries hold
    all of build/'s file (it was loaded); else what they hold of build/ is added to what the
    file holds, and the file is left as it is when they hold nothing of build/. False when a
    file could not be written."""
    sources: list[tuple[str, str, str]] = []
    built: list[tuple[str, str, str]] = []
    for rel, (signature, digest) in entries.items():  # one pass: 16,000 at scale
        (built if rel.startswith(OUTPUTS) else sources).append((rel, signature, digest))
    written = write_records(root / CACHE_NAME, CACHE_HEADER, sources)
    if not built_whole:
        if not built:
            return written
        merged = load_built(root)
        merged.update((rel, (signature, digest)) for rel, signature, digest in built)
        built = [(rel, *entry) for rel, entry in merged.items()]
    return write_records(root / BUILT_CACHE_NAME, BUILT_CACHE_HEADER, built) and written


def _load(path: Path, header: str) -> Entries:
    rels, signatures, digests = read_columns(path, header, 3)
    return dict(zip(rels, zip(signatures, digests, strict=True), strict=True))
