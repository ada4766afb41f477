"""build/'s files digested by a forked child while a check plans, when nothing remembers them.

A check with no digest cache (a fresh clone, an export) spends a third to half of its work on
build/: on a fresh clone it states each of its 14,000 files (at 100 robots and 500 cells) against
git's index and reads each distinct blob once (pipeline/gitindex.py); without git it reads every
file, comparing copies with the bytes of the first. None of that needs the plan, so a child forked
before planning does it on the second core, while the check plans, reads the stamps and digests the
sources (without git, the child leaves a fourth of build/ to the check, which reads it once the
sources are done). It writes build/'s digest cache itself and sends back each distinct digest once,
with the paths holding it. A file it cannot vouch for (not a plain file, executable, larger than
the check reads whole, changed while read; on a fresh clone also one git's index does not vouch
for: untracked, its stat unlike the index's or within the index's own timestamp) is left out, for
the check's usual path.
"""

from __future__ import annotations

import hashlib
import os
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISREG

from pipeline.gitindex import Checkout, read_checkout, stat_key
from pipeline.readahead import Forked, collect, fork_work, may_fork
from pipeline.records import write_records
from pipeline.strict_io import EXECUTE_BITS

# Fewer robot and cell folders than this in build/ (about 250 files) are not worth a child.
FOLDERS_MIN = 12
# Copies are compared with the bytes of earlier files of their size, up to this many of a size
# and this many bytes in all; any other file is hashed.
SAME_SIZE = 4
KEEP_BYTES = 128 << 20
# Without git's index the child reads three of every four files of build/ (by a hash of the
# path, left_to_check): reading them all alone would take it longer than the check takes to
# plan and digest the sources, after which the check reads the fourth itself.
SHARES = 4
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)

Found = Iterator[tuple[str, os.stat_result, str]]  # path, its stat, hex SHA-256


def start(
    root: Path, under: str, cache: Path | None, header: str, racy_s: float, limit: int
) -> Forked | None:
    """A child digesting the files below `root/under` (a folder of robots/ and cells/
    folders), remembering them in `cache` (with `header`) unless changed within `racy_s` of
    being read; None where no child may be forked or too few folders are worth one."""
    folders = 0
    for kind in ("robots", "cells"):
        try:
            folders += len(os.listdir(os.path.join(root, under, kind)))
        except OSError:
            continue
    if folders < FOLDERS_MIN or not may_fork():
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
    """`digest NUL count NUL path NUL...` for the plain files below `under`: by git's index on
    a fresh clone, else by reading each; what is not racily clean is also written to `cache`."""
    started = time.time()  # each file is stated at this time or later
    prefix = os.path.join(root, "")
    checkout = read_checkout(root, under)
    if checkout is None:
        found = _by_content(prefix, under.rstrip("/"), limit)
    else:
        found = _by_index(prefix, checkout, limit)
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


def _by_content(prefix: str, under: str, limit: int) -> Found:
    """Each plain file below `under` not left_to_check, read; a copy of an earlier file's bytes
    is compared with them, not hashed."""
    kept: dict[int, list[tuple[bytes, str]]] = {}
    budget = KEEP_BYTES
    for rel in _files(prefix, under):
        if left_to_check(rel):
            continue
        try:
            info = os.lstat(prefix + rel)
        except OSError:
            continue
        if not S_ISREG(info.st_mode) or info.st_mode & EXECUTE_BITS or info.st_size > limit:
            continue
        data = _read(prefix + rel, info)
        if data is None:
            continue
        alike = kept.setdefault(info.st_size, [])
        digest = next((known for held, known in alike if held == data), None)
        if digest is None:
            digest = hashlib.sha256(data).hexdigest()
            if len(alike) < SAME_SIZE and len(data) <= budget:
                alike.append((data, digest))
                budget -= len(data)
        yield rel, info, digest


def left_to_check(rel: str) -> bool:
    """Whether a child reading build/ without git's index leaves the file `rel` to the check."""
    return SHARES > 1 and zlib.crc32(rel.encode("utf-8", "surrogateescape")) % SHARES == 0


def _files(prefix: str, top: str) -> Iterator[str]:
    """Every file (not folder, not followed link) below `top`, repo-relative."""
    folders = [top]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(prefix + folder) as entries:
                for entry in entries:
                    rel = f"{folder}/{entry.name}"
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(rel)
                    else:
                        yield rel
        except OSError:
            continue


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
