"""What git's index knows about a checkout's files: per path, the stat data git recorded when it
last wrote the file (or looked at it) and the id of the blob it holds.

On a fresh clone the digest cache is empty, but git's index already says which files are
unchanged since checkout and which of them hold the same blob. build/ is mostly copies (each
cell holds its description), and sources may be (robots made from one another), so a check reads
each distinct blob once instead of every copy. Only what can be trusted is returned: index
versions 2 and 3 of a SHA-1 or SHA-256 repository, no split index, entries at stage 0 without
assume-valid, skip-worktree or intent-to-add flags, regular files, and never an entry whose file
git could have seen change within the index's own timestamp (git's "racily clean" case).
Anything else reads as unknown, and the caller reads the file as it would without git.

An entry whose stat matches says only that the file, converted as git converts on `git add`, is
its blob: with attributes (eol, `ident`, `working-tree-encoding`, filters) two copies of one blob
can be checked out as different bytes of one size, and with eol conversion two different files
of one size can be cleaned into one blob. So the index is read only when nothing git reads could
ask for a conversion: no `.gitattributes` in the index but the project's own when it only turns
conversion off (`* -text`, as this repository's does), no `info/attributes`, no global or system
attributes file, and no git config file naming `autocrlf`, `attributesFile` or an include.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path
from typing import NamedTuple

from pipeline.strict_io import read_regular

_HEADER = struct.Struct(">4sII")
_FLAG_ASSUME_VALID = 0x8000
_FLAG_EXTENDED = 0x4000
_FLAG_STAGE = 0x3000
_EXTENDED_UNTRUSTED = 0x6000  # skip-worktree, intent-to-add
_GIT_ENV = (
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_ATTR_SOURCE",
)
# config keys that can make git convert files between blob and work tree (an include may too)
_CONVERTING_KEYS = (b"autocrlf", b"attributesfile", b"include")
_ATTRIBUTES = ".gitattributes"
_WORD = 1 << 32
_WORD_NS = _WORD * 10**9  # a 32-bit count of seconds, in nanoseconds
_S_IFMT = 0o170000  # the file-type bits of a mode

StatKey = tuple[int, int, int, int, int]  # ctime ns, mtime ns, inode, size, file type
Entries = dict[str, tuple[StatKey, bytes]]  # repo-relative path -> (stat key, blob id)


class Checkout(NamedTuple):
    """Per repo-relative path under one folder: (stat key, blob id) from git's index."""

    entries: Entries
    index_mtime_ns: int

    def blob(self, rel: str, info: os.stat_result) -> bytes | None:
        """The blob `rel` holds, when its stat `info` shows it unchanged since git recorded it."""
        entry = self.entries.get(rel)
        if entry is None or info.st_mtime_ns >= self.index_mtime_ns:
            return None  # not tracked, or changed too close to the index's write to tell
        key, blob = entry
        return blob if key == stat_key(info) else None


def stat_key(info: os.stat_result) -> StatKey:
    """What of a stat git's index holds and a rewrite always changes (32-bit fields)."""
    return (
        info.st_ctime_ns % _WORD_NS,
        info.st_mtime_ns % _WORD_NS,
        info.st_ino % _WORD,
        info.st_size % _WORD,
        info.st_mode & _S_IFMT,
    )


def read_checkout(root: Path, under: str, outside: str = "") -> Checkout | None:
    """git's index entries below `root/under` but not below `root/outside` (both repo-relative
    to `root`), or None without one."""
    if any(name in os.environ for name in _GIT_ENV):
        return None  # git is pointed elsewhere than the folder layout says
    found = _git_dir(root)
    if found is None:
        return None
    git_dir, top = found
    common = _common_dir(git_dir)
    if _may_convert(git_dir, common):
        return None
    index = _read_file(git_dir / "index")
    try:
        prefix = root.resolve().relative_to(top).as_posix()
    except (OSError, ValueError):
        return None
    if index is None:
        return None
    data, mtime_ns = index
    prefix = "" if prefix == "." else prefix + "/"
    allowed = prefix + _ATTRIBUTES if _converts_nothing(root / _ATTRIBUTES) else None
    entries = _parse(data, _oid_size(common), prefix, prefix + under, allowed, outside)
    return None if entries is None else Checkout(entries, mtime_ns)


def has_index(root: Path) -> bool:
    """Whether the git work tree holding `root` has an index file (it may still not be read)."""
    found = _git_dir(root)
    return found is not None and os.path.isfile(found[0] / "index")


def tracks_file_mode(root: Path) -> bool:
    """Whether git would record an execute bit set on a file below `root`: not when the
    repository's `core.fileMode` is false (git sets that on a file system without modes, such as
    a Windows drive under WSL); outside a git work tree, True (a build never sets one)."""
    found = _git_dir(root)
    config = None if found is None else _read_file(_common_dir(found[0]) / "config", 1 << 20)
    if config is None:
        return True
    words = config[0].replace(b" ", b"").replace(b"\t", b"").lower()
    return not any(b"filemode=" + value in words for value in (b"false", b"no", b"off", b"0"))


def _git_dir(root: Path) -> tuple[Path, Path] | None:
    """The git directory of the work tree holding `root`, and that work tree's top folder."""
    try:
        top = root.resolve()
    except OSError:
        return None
    for folder in (top, *top.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot, folder
        if os.path.lexists(dot):  # a linked work tree or a submodule: "gitdir: <path>"
            pointer = _read_file(dot)
            text = "" if pointer is None else pointer[0].decode("utf-8", "replace").strip()
            if not text.startswith("gitdir: "):
                return None
            return (folder / text[len("gitdir: ") :]).resolve(), folder
    return None


def _common_dir(git_dir: Path) -> Path:
    """The git directory holding config and info/ (a linked work tree shares its main one's)."""
    pointer = _read_file(git_dir / "commondir")
    if pointer is None:
        return git_dir
    return git_dir / pointer[0].decode("utf-8", "replace").strip()


def _may_convert(git_dir: Path, common: Path) -> bool:
    """Whether an attributes file or a config file other than the index could convert files."""
    try:
        home = Path.home()
    except RuntimeError:  # no home folder to look in: its config cannot be ruled out
        return True
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    attributes = (
        common / "info" / "attributes",
        git_dir / "info" / "attributes",
        config_home / "git" / "attributes",
        Path("/etc/gitattributes"),
    )
    if any(os.path.lexists(path) for path in attributes):
        return True
    configs = (
        common / "config",
        git_dir / "config.worktree",
        home / ".gitconfig",
        config_home / "git" / "config",
        Path("/etc/gitconfig"),
    )
    return any(_mentions(path, _CONVERTING_KEYS) for path in configs)


def _mentions(path: Path, words: tuple[bytes, ...]) -> bool:
    """Whether a file exists and names one of `words` (or cannot be read to tell)."""
    if not os.path.lexists(path):
        return False
    found = _read_file(path, 1 << 20)
    return found is None or any(word in found[0].lower() for word in words)


def _converts_nothing(path: Path) -> bool:
    """Whether an attributes file only turns every conversion off: `* -text` and comments."""
    found = _read_file(path, 1 << 16)
    if found is None:
        return False
    lines = found[0].splitlines()
    rules = [line.split() for line in lines if line.strip() and not line.lstrip().startswith(b"#")]
    return bool(rules) and all(rule == [b"*", b"-text"] for rule in rules)


def _oid_size(common: Path) -> int:
    """20 bytes for a SHA-1 repository, 32 for a SHA-256 one (its config says so)."""
    config = _read_file(common / "config")
    words = b"" if config is None else config[0].replace(b" ", b"").replace(b"\t", b"").lower()
    # a wrong guess only makes the index unreadable (its layout no longer adds up): no shortcut
    return 32 if b"objectformat=sha256" in words else 20


def _read_file(path: Path, limit: int = 1 << 30) -> tuple[bytes, int] | None:
    """A regular file's bytes and mtime; None for anything else (a FIFO is never waited on)."""
    found = read_regular(path, limit)
    return None if found is None else (found[0], found[1].st_mtime_ns)


def _parse(
    data: bytes,
    oid_size: int,
    prefix: str,
    wanted: str,
    allowed: str | None = None,
    outside: str = "",
) -> Entries | None:
    """Trusted entries whose path starts with `wanted` and not with `prefix` + `outside` (when
    given), keyed without `prefix`.

    None when the index holds a `.gitattributes` other than `allowed` (one converting nothing).
    """
    allowed_bytes = None if allowed is None else allowed.encode("utf-8", "surrogateescape")
    if len(data) < _HEADER.size:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3):
        return None  # version 4 compresses paths; reading it is not worth its rarity
    wanted_bytes = wanted.encode("utf-8", "surrogateescape")
    # never a path's start: what nothing is left out by
    outside_bytes = (prefix + outside).encode("utf-8", "surrogateescape") if outside else b"\0"
    skip = len(prefix.encode("utf-8", "surrogateescape"))
    attributes, after = _ATTRIBUTES.encode(), -len(_ATTRIBUTES) - 1
    out: Entries = {}
    # ctime s, ns; mtime s, ns; dev; ino; mode; uid; gid; size; blob id; flags
    layout = struct.Struct(f">10I{oid_size}sH")
    entry, fixed = layout.unpack_from, layout.size
    pos, end = _HEADER.size, len(data) - oid_size  # the trailing checksum
    untrusted = _FLAG_ASSUME_VALID | _FLAG_STAGE
    # one pass over 15,000 entries at 100 robots: locals and no per-entry calls it can spare
    for _ in range(count):
        if pos + fixed > end:
            return None
        c_s, c_ns, m_s, m_ns, _dev, ino, mode, _uid, _gid, size, oid, flags = entry(data, pos)
        name_at = pos + fixed
        extended = 0
        if flags & _FLAG_EXTENDED:
            extended = int.from_bytes(data[name_at : name_at + 2], "big")
            name_at += 2
        length = flags & 0xFFF
        name_end = name_at + length if length < 0xFFF else data.find(b"\0", name_at, end)
        if name_end < 0 or name_end >= end or data[name_end] != 0:
            return None
        name = data[name_at:name_end]
        if (
            name.endswith(attributes)
            and (len(name) == len(attributes) or name[after] == 0x2F)  # "/"
            and name != allowed_bytes
        ):
            return None  # attributes may check out one blob differently at two paths
        # entries are padded with 1-8 NULs to a multiple of 8 bytes from the entry's start
        pos += (name_end - pos + 8) & ~7
        if (
            flags & untrusted
            or extended & _EXTENDED_UNTRUSTED
            or mode & _S_IFMT != stat.S_IFREG
            or not name.startswith(wanted_bytes)
            or name.startswith(outside_bytes)
        ):
            continue
        key = (c_s * 10**9 + c_ns, m_s * 10**9 + m_ns, ino, size, stat.S_IFREG)
        out[(name[skip:] if skip else name).decode("utf-8", "surrogateescape")] = (key, oid)
    return _checked_extensions(data, pos, end, out)


def _checked_extensions(
    data: bytes,
    pos: int,
    end: int,
    entries: Entries,
) -> Entries | None:
    """The entries, unless an extension says the index file is not the whole index."""
    while pos + 8 <= end:
        name, size = struct.unpack_from(">4sI", data, pos)
        if name == b"link":  # a split index: entries live in a shared file too
            return None
        pos += 8 + size
    return entries if pos == end else None
