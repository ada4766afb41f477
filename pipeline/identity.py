"""The description identity: a domain-separated SHA-256 over the manifest and its files."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from pathlib import Path

from pipeline.manifest import MANIFEST_NAME, read_manifest

DOMAIN = b"rosie.robot-description.identity.v1\x00"


def identity_of(entries: Iterable[tuple[str, bytes]]) -> str:
    """The identity of (path, 32-byte SHA-256 digest) entries, in `sha256:<hex>` form."""
    ordered = sorted(
        ((path.encode("utf-8"), digest) for path, digest in entries), key=lambda entry: entry[0]
    )
    hasher = hashlib.sha256(DOMAIN)
    hasher.update(struct.pack(">Q", len(ordered)))
    for path, digest in ordered:
        hasher.update(struct.pack(">Q", len(path)))
        hasher.update(path)
        hasher.update(digest)
    return "sha256:" + hasher.hexdigest()


def description_identity(
    folder: Path, display_folder: str, model_id: str | None = None
) -> tuple[str, int]:
    """Check the manifest of `folder`, then return its identity and registered file count."""
    manifest = read_manifest(folder, display_folder, model_id)
    names = [MANIFEST_NAME, *manifest.files]
    entries = [(name, hashlib.sha256((folder / name).read_bytes()).digest()) for name in names]
    return identity_of(entries), len(manifest.files)
