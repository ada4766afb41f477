"""build/'s files stated against git's index by a forked child while a check plans.

A check of a fresh clone has no digest cache: it states each of build/'s 14,000 files (at 100
robots and 500 cells) against git's index and reads each distinct blob once (pipeline/gitindex.py),
a third of its work. None of that needs the plan, so a child forked before planning does it on the
second core, while the check plans, reads the stamps and digests the sources. It writes build/'s
digest cache itself and sends back each distinct digest once, with the paths holding it. A file it
cannot vouch for (untracked, its stat unlike the index's or within the index's own timestamp, not a
plain file, executable, larger than the check reads whole, changed while read) is left out, for the
check's usual path. Without git's index no child is forked: reading build/ by content in one while
the check planned gained nothing over the check's own read-ahead on two cores once planned
(pipeline/readahead.py; measured in docs/performance.md).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pipeline.gitindex import Checkout, has_index, read_checkout, stat_key
from pipeline.readahead import Forked, collect, fork_work, may_fork
from pipeline.records import write_records
from pipeline.strict_io import EXECUTE_BITS

# Fewer robot and cell folders than this in build/ (about 250 files) are not worth a child.
FOLDERS_MIN = 12
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)

Found = Iterator[tuple[str, os.stat_result, str]]  # path, its stat, hex SHA-256


def start(
    root: Path, under: str, cache: Path | None, header: str, racy_s: float, limit: int
) -> Forked | None:
    """A child answering the files below `root/under` (a folder of robots/ and cells/ folders)
    from git's index, remembering them in `cache` (with `header`) unless changed within
    `racy_s` of being read; None without a git index, where no child may be forked, or where
    too few folders are worth one."""
    folders = 0
    for kind in ("robots", "cells"):
        try:
            folders += len(os.listdir(os.path.join(root, under, kind)))
        except OSError:
            continue
    if folders < FOLDERS_MIN or not has_index(root) or not may_fork():
        return None
    return fork_work(lambda: answer(root, under, cache, header, racy_s, limit))


def answers(child: Forked) -> dict[str, str] | None:
    """Repo-relative path -> hex SHA-256 of each file the child vouched for; None when it
    failed."""
    data = collect(child)
    if data is None:
        return None
    fields = data.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, str] = {}
    at, end = 0, len(fields) - 1
    try:
        while at < end:  # a digest, how many files hold it, their paths
            count = int(fields[at + 1])
            found.update(dict.fromkeys(fields[at + 2 : at + 2 + count], fields[at]))
            at += 2 + count
    except (IndexError, ValueError):
        return None
    return found if at == end else None


def answer(
    root: Path, under: str, cache: Path | None, header: str, racy_s: float, limit: int
) -> bytes:
    """`digest NUL count NUL path NUL...` for the files below `under` whose stat matches git's
    index, each distinct blob read once; what is not racily clean is also written to `cache`."""
    started = time.time()  # each file is stated at this time or later
    prefix = os.path.join(root, "")
    checkout = read_checkout(root, under)
    found = () if checkout is None else _by_index(prefix, checkout, limit)
    holding: dict[str, list[str]] = {}  # digest -> the paths holding it
    remembered: list[tuple[str, str, str]] = []
    for rel, info, digest in found:
        holding.setdefault(digest, []).append(rel)
        if started - max(info.st_ctime_ns, info.st_mtime_ns) / 1e9 > racy_s:
            signature = f"{info.st_size} {info.st_mtime_ns} {info.st_ctime_ns} {info.st_ino}"
            remembered.append((rel, signature, digest))
    if cache is not None:
        write_records(cache, header, remembered)
    fields: list[str] = []
    for digest, paths in holding.items():
        fields += (digest, str(len(paths)), *paths)
    fields.append("")  # so that the last field ends with NUL too
    return "\0".join(fields).encode("utf-8", "surrogateescape")


def _by_index(prefix: str, checkout: Checkout, limit: int) -> Found:
    """Each tracked file whose stat says git's index holds it, each distinct blob read once."""
    blobs: dict[tuple[bytes, int], str] = {}
    for rel, (_key, blob) in checkout.entries.items():
        try:
            info = os.lstat(prefix + rel)  # a link is not the regular file the index records
        except (OSError, ValueError):
            continue
        size = info.st_size
        if size > limit or info.st_mode & EXECUTE_BITS or checkout.blob(rel, info) is None:
            continue
        digest = blobs.get((blob, size))
        if digest is None:
            data = _read(prefix + rel, info)
            if data is None:
                continue
            digest = blobs[blob, size] = hashlib.sha256(data).hexdigest()
        yield rel, info, digest


def _read(path: str, stated: os.stat_result) -> bytes | None:
    """The bytes of a file that is still the one stated, read whole; None otherwise."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if stat_key(info) != stat_key(stated):
            return None
        data = os.read(fd, info.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == info.st_size else None
