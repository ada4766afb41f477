"""Local cache files (git-ignored, never a source of truth): a header, then NUL-separated fields.

Paths cannot hold NUL, so one split reads a whole file; a missing, foreign or torn file reads as
empty, and a write goes through a temporary file renamed into place.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def read_records(path: Path, header: str, width: int) -> list[list[str]]:
    """The records of `width` fields each; none when the file is missing, foreign or torn."""
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return []
    if not text.startswith(header) or not text.endswith("\0"):
        return []
    fields = text[len(header) : -1].split("\0")
    if len(fields) % width:
        return []
    return [fields[i : i + width] for i in range(0, len(fields), width)]


def write_records(path: Path, header: str, records: Iterable[Iterable[str]]) -> bool:
    """Write the records atomically; False when the file could not be written."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    text = header + "".join(f"{chr(0).join(record)}\0" for record in records)
    try:
        tmp.write_text(text, encoding="utf-8", errors="surrogateescape")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return True
