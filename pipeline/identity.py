"""The description identity: a domain-separated SHA-256 over the manifest and its files."""

from __future__ import annotations

import hashlib
import os
import stat
import struct
from collections.abc import Iterable
from pathlib import Path

from pipeline.filesig import hash_fd
from pipeline.findings import ContractError, Finding
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
    return registered_identity(folder, display_folder, manifest.files), len(manifest.files)


def registered_identity(folder: Path, display_folder: str, files: Iterable[str]) -> str:
    """The identity of `folder`'s manifest (already checked) and the files it registers."""
    names = [MANIFEST_NAME, *files]
    entries = [(name, file_digest(folder / name, f"{display_folder}/{name}")) for name in names]
    return identity_of(entries)


def file_digest(path: Path, display: str) -> bytes:
    """The SHA-256 of a regular file (not a link), read in chunks: a registered file may be huge."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _unreadable(display, exc.strerror) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _unreadable(display, "not a regular file")
        return bytes.fromhex(hash_fd(fd))
    except OSError as exc:
        raise _unreadable(display, exc.strerror) from None
    finally:
        os.close(fd)


def _unreadable(display: str, why: str | None) -> ContractError:
    # the manifest's checks passed a moment ago: the file changed since, or cannot be read
    message = f"cannot be read ({why})"
    return ContractError([Finding("file_unreadable", display, "", message, "check the file")])
