"""Reproducible tar.gz archives and their identity, a digest of a canonical listing of entries.

The archive holds regular files only, sorted by path bytes, each with mtime 0, uid/gid 0, no
user or group name and mode 0644; the gzip header carries no file name and time 0. So the same
files give the same archive bytes wherever the same zlib compresses them. Deflate output may
differ between zlib builds, so the bundle's identity is not a hash of the `.gz` bytes but the
SHA-256 of the listing: a domain line, then one `<mode> <sha256> <path>` line per entry.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import tarfile
from collections.abc import Mapping
from typing import Any

from pipeline.findings import FINDINGS_SHOWN
from pipeline.winnames import windows_problem

FILE_MODE = 0o644
MTIME = 0
LISTING_DOMAIN = "rosie.cell-bundle.listing.v1"
# What a bundle's entries may hold together, unpacked (bundle-identity reads at most this much).
UNPACKED_LIMIT = 4 * 1024 * 1024 * 1024
# How many entries it may hold: tarfile keeps every header read, and 2 MB of gzip holds 300,000.
ENTRY_LIMIT = 10_000
# Zero padding a tar may hold after its last entry beyond that (records of up to 1 MiB).
PADDING_LIMIT = 1024 * 1024
# The largest `.tar.gz` bundle-identity reads (it holds the file in memory).
BUNDLE_LIMIT = 1024 * 1024 * 1024
# The bytes of an entry's file or folder name (Linux's NAME_MAX; Windows holds 255 UTF-16 units,
# never fewer characters than 255 UTF-8 bytes are) and of its whole path (Linux's PATH_MAX, 4096
# with the NUL that ends it: a longer one cannot be opened to unpack it).
NAME_BYTES = 255
PATH_BYTES = 4095
# The problems of entries that do not unpack as themselves told one a line, at most; the rest are
# counted (10 000 entries of 1 000 device names each, a 150 KB bundle, were 10 million lines):
# with the line counting the rest, as many as the lines of findings every command prints.
PROBLEMS_SHOWN = FINDINGS_SHOWN - 1
# The words for what a mode other than 0644 has, or lacks, in a bad_archive line: (bits, whether
# having them is wrong, words)
_MODE_WORDS = (
    (~0o7777, True, "file type bits"),
    (0o4000, True, "set-user-ID"),
    (0o2000, True, "set-group-ID"),
    (0o1000, True, "sticky"),
    (0o400, False, "unreadable by its owner"),
    (0o020, True, "group-writable"),
    (0o002, True, "world-writable"),
    (0o111, True, "executable"),
)


def _check_path(path: str) -> None:
    parts = path.split("/")
    try:  # tarfile gives bytes that are no UTF-8 as lone surrogates, which the listing cannot hold
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"archive entry name {path!r} is not UTF-8") from None
    if (
        not path
        or path.startswith("/")
        or any(part in ("", ".", "..") for part in parts)
        or any(ord(ch) < 0x20 or ch in "\\\x7f" for ch in path)
    ):
        raise ValueError(f"not a clean relative archive path: {path!r}")


def entry_problems(path: str, mode: int = FILE_MODE) -> list[str]:
    """Why a clean relative archive path and mode do not unpack as themselves on Linux, macOS
    and Windows, one reason per problem: a part Windows cannot hold, a name or path longer than
    Linux opens, a mode other than 0644 (set-ID bits, writable by others...)."""
    parts = list(dict.fromkeys(path.split("/")))  # each told once: `CON/CON/x`
    found = [why for part in parts if (why := windows_problem(part)) is not None]
    found += [
        f"{part!a} is {size} bytes long, over the {NAME_BYTES} a file name may hold"
        for part in parts
        if (size := len(part.encode("utf-8"))) > NAME_BYTES
    ]
    if (size := len(path.encode("utf-8"))) > PATH_BYTES:
        found.append(f"the path is {size} bytes long, over the {PATH_BYTES} Linux opens (PATH_MAX)")
    if mode != FILE_MODE:
        words = [word for bits, wrong, word in _MODE_WORDS if bool(mode & bits) is wrong]
        what = f" ({', '.join(words)})" if words else ""
        found.append(f"it has mode {mode:04o}{what}, where a bundle's files have {FILE_MODE:04o}")
    return found


# The one pax record the compiler writes: a name longer than a tar header holds, or not ASCII.
_PAX_KEYS = {"path"}


def owner_problems(info: tarfile.TarInfo) -> list[str]:
    """Why an entry would not unpack as the compiler wrote it, as root unpacks it: an owner
    (uid, gid or their names: the file would be that user's, who could change it), or pax
    records the compiler never writes (extended attributes, ACLs), one reason per problem."""
    found = [f"it is owned by user {info.uid}, where a bundle's files have 0"] if info.uid else []
    if info.gid:
        found.append(f"it is owned by group {info.gid}, where a bundle's files have 0")
    if info.uname:
        found.append(f"it names its owner {info.uname!a}, where a bundle's files name none")
    if info.gname:
        found.append(f"it names its group {info.gname!a}, where a bundle's files name none")
    extra = sorted(set(info.pax_headers) - _PAX_KEYS)
    if extra:
        found.append(
            f"it carries pax records {', '.join(ascii(k) for k in extra[:5])} (extended "
            "attributes, ACLs), which a bundle's files do not"
        )
    return found


class EntryProblems(ValueError):
    """Entries that no machine unpacks as themselves: (entry, why) per problem, the first
    PROBLEMS_SHOWN, and how many more there are."""

    def __init__(self, problems: list[tuple[str, str]], more: int = 0) -> None:
        told = "; ".join(f"entry {entry!a}: {why}" for entry, why in problems)
        super().__init__(told + (f"; {more} more" if more else ""))
        self.problems = problems
        self.more = more


def _ordered(files: Mapping[str, bytes]) -> list[str]:
    for path in files:
        _check_path(path)
    return sorted(files, key=lambda p: p.encode("utf-8"))


def tar_bytes(files: Mapping[str, bytes]) -> bytes:
    """An uncompressed POSIX tar of `files` (archive path -> bytes) with fixed metadata."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in _ordered(files):
            data = files[path]
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mtime = MTIME
            info.mode = FILE_MODE
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.type = tarfile.REGTYPE
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def gzip_bytes(data: bytes) -> bytes:
    """Gzip with no file name and time 0 in the header (tarfile's 'w:gz' writes both)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(data)
    return buffer.getvalue()


def archive_bytes(files: Mapping[str, bytes]) -> bytes:
    """The reproducible `.tar.gz` of `files` (archive path -> bytes)."""
    return gzip_bytes(tar_bytes(files))


def over_limits(files: Mapping[str, bytes], archive: bytes) -> str | None:
    """Why `listing_of_archive` would refuse this bundle, or None: a bundle must read back."""
    if len(files) > ENTRY_LIMIT:
        return f"it holds {len(files)} files, over {ENTRY_LIMIT}"
    total = sum(len(data) for data in files.values())
    if total > UNPACKED_LIMIT:
        return f"its files hold {total} bytes, over {UNPACKED_LIMIT}"
    if len(archive) > BUNDLE_LIMIT:
        return f"it compresses to {len(archive)} bytes, over {BUNDLE_LIMIT}"
    return None


def listing(files: Mapping[str, bytes]) -> str:
    """The canonical listing: the domain line, then `<mode> <sha256> <path>` per entry, sorted."""
    lines = [LISTING_DOMAIN]
    for path in _ordered(files):
        digest = hashlib.sha256(files[path]).hexdigest()
        lines.append(f"{FILE_MODE:04o} {digest} {path}")
    return "\n".join(lines) + "\n"


def listing_of_archive(data: bytes, limit: int | None = None) -> str:
    """The canonical listing of a `.tar.gz`, read back from its entries (mode as stored).

    Each entry is hashed as it is decompressed, never held whole, and the entries together may
    hold at most `limit` (default UNPACKED_LIMIT) bytes: a small gzip of zeros unpacks to gigabytes.
    Entries that do not unpack as themselves (`entry_problems`) are refused together, once the
    whole archive is read: EntryProblems.
    """
    limit = UNPACKED_LIMIT if limit is None else limit
    lines = [LISTING_DOMAIN]
    entries: list[tuple[bytes, str]] = []
    problems: list[tuple[str, str]] = []
    more = 0
    total = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for info in tar:
            if not info.isfile():
                raise ValueError(f"archive entry {info.name!r} is not a regular file")
            _check_path(info.name)
            found = entry_problems(info.name, info.mode) + owner_problems(info)
            taken = found[: PROBLEMS_SHOWN - len(problems)]
            problems += [(info.name, why) for why in taken]
            more += len(found) - len(taken)
            total += info.size
            if len(entries) >= ENTRY_LIMIT:
                raise ValueError(f"it holds over {ENTRY_LIMIT} entries")
            if total > limit:
                raise ValueError(f"its entries hold over {limit} bytes")
            handle = tar.extractfile(info)
            digest = hashlib.sha256()
            while handle is not None and (chunk := handle.read(1 << 20)):
                digest.update(chunk)
            line = f"{info.mode:04o} {digest.hexdigest()} {info.name}"
            entries.append((info.name.encode("utf-8"), line))
        _refuse_clashes([info.name for info in tar.getmembers()])
        if tar.pax_headers:  # records for every entry: none a bundle has
            keys = ", ".join(ascii(k) for k in sorted(tar.pax_headers)[:5])
            raise ValueError(f"it holds global pax records ({keys}), which a bundle does not")
        _check_end(tar.fileobj, limit - total + PADDING_LIMIT)
    if problems:
        raise EntryProblems(problems, more)
    lines.extend(line for _, line in sorted(entries))
    return "\n".join(lines) + "\n"


def _refuse_clashes(paths: list[str]) -> None:
    """Refuse a path named twice, or a file's path that another entry uses as a folder.

    Unpacking keeps the last of two copies (the listing would name both), and no folder can hold
    both a file `d` and a file `d/x`. Sorted by path and `/`, the entries lying in `d` follow
    `d/` at once (nothing sorts between a string and those it begins), so one pass over
    neighbours finds every clash: a tree of folders took 2 GB for 10 000 entries 1 000 deep.
    """
    order = sorted(range(len(paths)), key=lambda i: (paths[i] + "/", i))
    for first, then in itertools.pairwise(order):
        path, other = paths[first], paths[then]
        if other == path:
            raise ValueError(f"archive entry {path!r} appears more than once")
        if other.startswith(path + "/"):
            if first < then:  # the file came first: the later entry lies in it
                raise ValueError(f"archive entry {other!r} lies in {path!r}, a file entry")
            raise ValueError(f"archive entry {path!r} is also a folder of entries")


def _check_end(stream: Any, budget: int) -> None:
    """After the end-of-archive block: only zero padding, then the gzip stream's own end.

    Reading to the end checks the gzip trailer (CRC and length), so a cut download is refused;
    anything but zeros after the last entry would be content the identity does not cover.
    """
    while stream is not None and (chunk := stream.read(1 << 20)):
        if chunk.count(0) != len(chunk):
            raise ValueError("it holds data after the end of the archive")
        budget -= len(chunk)
        if budget < 0:
            raise ValueError("it holds more zero padding after the last entry than a tar writes")


def names_of_listing(text: str) -> list[str]:
    """The path of each entry of a listing (one may hold U+2028 or U+0085, never a line feed)."""
    return [line.split(" ", 2)[2] for line in text.split("\n")[1:-1]]


def identity_of_listing(text: str) -> str:
    """The bundle identity: `sha256:` + SHA-256 of the listing's UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
