"""Local cache files (git-ignored, never a source of truth): a header, then NUL-separated fields.

Paths cannot hold NUL, so one split reads a whole file; a missing, foreign or torn file reads as
empty, and a write goes through a temporary file renamed into place. The file ends with a seal,
the SHA-256 of the rest of it, so a corrupted one (a flipped bit in a remembered digest, which
a stat signature still matches) reads as empty too rather than vouching for the wrong bytes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

# the seal: 64 hex digits of the SHA-256 of everything before it, then NUL
SEAL_SIZE = 65


def _seal(body: bytes) -> bytes:
    return hashlib.sha256(body).hexdigest().encode("ascii") + b"\0"


def read_columns(path: Path, header: str, width: int) -> list[list[str]]:
    """The records of `width` fields each, as `width` columns (the first fields, the second
    fields...); empty columns when the file is missing, foreign or torn.

    Columns, because a caller builds its mapping from them with zip, in C: 14,000 digests load
    in half the time that records taken apart one by one took.
    """
    empty: list[list[str]] = [[] for _ in range(width)]
    try:
        data = path.read_bytes()
    except OSError:
        return empty
    body, seal = data[:-SEAL_SIZE], data[-SEAL_SIZE:]
    if len(data) < SEAL_SIZE or seal != _seal(body):
        return empty
    text = body.decode("utf-8", errors="surrogateescape")
    if not text.startswith(header) or not text.endswith("\0"):
        return empty
    fields = text[len(header) : -1].split("\0")
    if len(fields) % width:
        return empty
    return [fields[i::width] for i in range(width)]


def write_records(path: Path, header: str, records: Iterable[Iterable[str]]) -> bool:
    """Write the records atomically; False when the file could not be written."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fields: list[str] = []
    for record in records:  # one join over every field: 2 ms less for 14,000 digests
        fields.extend(record)
    fields.append("")  # so that the last field ends with NUL too
    text = header + "\0".join(fields)
    body = text.encode("utf-8", errors="surrogateescape")
    try:
        tmp.write_bytes(body + _seal(body))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return True
