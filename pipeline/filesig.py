"""What of a file's stat says it is unchanged, and its SHA-256 read in blocks."""

from __future__ import annotations

import hashlib
import os

# A file changed this recently (its ctime, see changed_at) could change again within the
# clock's granularity without its stat changing ("racily clean" in git's terms), so its digest
# is not remembered.
RACY_SECONDS = 2.0


def hash_fd(fd: int) -> str:
    """Hex SHA-256 of what remains to be read from an open file, read in blocks."""
    hasher = hashlib.sha256()
    for block in iter(lambda: os.read(fd, 1 << 20), b""):
        hasher.update(block)
    return hasher.hexdigest()


def stat_signature(info: os.stat_result) -> str:
    """A file's stat signature: size, mtime, ctime and inode (ctime cannot be set back)."""
    return f"{info.st_size} {info.st_mtime_ns} {info.st_ctime_ns} {info.st_ino}"


def changed_at(info: os.stat_result) -> int:
    """The latest time a file's bytes can have changed, in ns: its ctime, which the kernel sets
    on every write and no one can set back (unlike the mtime: cp -p, tar, rsync -t), or its
    mtime when that is later (a clock set back)."""
    return max(info.st_ctime_ns, info.st_mtime_ns)


def signature_now(path: str) -> str | None:
    """The stat signature of a path now; None when it is gone."""
    try:
        return stat_signature(os.stat(path))
    except OSError:
        return None
