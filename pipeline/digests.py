"""File digests remembered by stat signature, as git's index does, so unchanged files are not
re-read. The cache is local (git-ignored) and only ever a shortcut: a missing, unreadable or
mismatching entry means the file is hashed again, and a fresh clone simply hashes everything.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

CACHE_NAME = ".pipeline-cache.json"
CACHE_VERSION = 1
# A file modified this recently could change again within the clock's granularity without its
# stat changing ("racily clean" in git's terms), so its digest is not remembered.
RACY_SECONDS = 2.0


def sha256_file(path: Path | str) -> str:
    """Hex SHA-256 of a file's bytes."""
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()


class Digests:
    """SHA-256 of repo files, reusing remembered digests whose stat signature still matches."""

    def __init__(self, root: Path, remember: bool = True) -> None:
        self.root = root
        self.prefix = os.path.join(root, "")
        self.remember = remember
        self.entries: dict[str, list[int | str]] = {}
        self.fresh: dict[str, list[int | str]] = {}
        self.dirty = False
        if remember:
            self.entries = _load(root / CACHE_NAME)

    def of(self, rel: str) -> str:
        """The hex digest of `root/rel`, or `missing` when it is not a readable file."""
        path = self.prefix + rel
        try:
            info = os.stat(path)
        except OSError:
            return "missing"
        signature: list[int | str] = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
        entry = self.entries.get(rel) or self.fresh.get(rel)
        if entry is not None and entry[:4] == signature:
            return str(entry[4])
        try:
            digest = sha256_file(path)
        except OSError:
            return "missing"
        if self.remember and time.time() - info.st_mtime_ns / 1e9 > RACY_SECONDS:
            self.entries[rel] = [*signature, digest]
            self.dirty = True
        else:
            self.fresh[rel] = [*signature, digest]
        return digest

    def save(self) -> None:
        """Write the remembered digests back, when anything new was learnt."""
        if not (self.remember and self.dirty):
            return
        path = self.root / CACHE_NAME
        tmp = path.with_name(f"{CACHE_NAME}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps({"version": CACHE_VERSION, "entries": self.entries}))
            os.replace(tmp, path)
            self.dirty = False
        except OSError:
            tmp.unlink(missing_ok=True)


def _load(path: Path) -> dict[str, list[int | str]]:
    try:
        data = json.loads(path.read_text())
        if data.get("version") == CACHE_VERSION and isinstance(data.get("entries"), dict):
            return {k: v for k, v in data["entries"].items() if isinstance(v, list) and len(v) == 5}
    except (OSError, ValueError, AttributeError):
        pass
    return {}
