"""Reading a repo file for its SHA-256 and remembering it by its stat signature (for this process
only while the file is racily clean), and the state pipeline/digests.py answers from: the
remembered digests (pipeline/digestcache.py's files), the bytes kept to compare copies against,
git's index on a fresh clone (pipeline/gitindex.py) and what was read ahead or answered by a
child (pipeline/readahead.py, pipeline/buildahead.py).
"""

from __future__ import annotations

import errno
import hashlib
import os
import time
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING

from pipeline import digestcache
from pipeline.digestcache import BUILT_CACHE_NAME, OUTPUTS
from pipeline.filesig import RACY_SECONDS, changed_at, hash_fd, signature_now, stat_signature
from pipeline.gitindex import Checkout, read_checkout, tracks_file_mode
from pipeline.strict_io import EXECUTE_BITS, read_fd

# Files up to this size are read whole (and may be kept); larger ones are hashed in blocks.
READ_WHOLE = 64 << 20
# A symbolic link is never read as the file it points to: every reader refuses a source that is
# one, and a build writes regular files. A link's digest is its bytes' under this prefix, so a
# file replaced by a link to the same bytes is a change, and a link's bytes are still followed.
LINKED = "symlink:"
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
OPEN_FLAGS = os.O_RDONLY | _NONBLOCK | _NOFOLLOW

if TYPE_CHECKING:  # forking is imported where it is used, not by every doit run
    from pipeline.readahead import Forked


class DigestReader:
    """The digests known of repo files and the reading of one file for its digest; Digests
    (pipeline/digests.py) asks it."""

    def __init__(
        self, root: Path, remember: bool = True, keep_bytes: int = 0, settled: bool = False
    ) -> None:
        """`settled`: no file changes while this object is used (a check), so a file's digest
        is looked up once per process rather than once per step that reads it."""
        self.root = root
        self.memo: dict[str, str] | None = {} if settled else None
        self.prefix = os.path.join(root, "")
        self.remember = remember
        self.entries: dict[str, tuple[str, str]] = {}  # path -> (stat signature, digest)
        self.fresh: dict[str, tuple[str, str]] = {}  # the same, for racily clean files
        self.dirty = False
        self.budget = keep_bytes
        self.kept: dict[str, bytes] = {}  # digest -> the bytes hashed to it
        self.checkout: Checkout | None = None  # git's index, read when first needed
        self.blobs: dict[tuple[bytes, int], str] = {}  # (git blob, size) -> digest, read here
        self.modes: bool | None = None  # whether git records execute bits here; asked once
        # path -> (stat signature, digest, changed_at), found by read_ahead, each taken once
        self.ahead: dict[str, tuple[str, str, int]] = {}
        # when read_ahead began: its files are judged racily clean as of then, not when taken
        self.ahead_at = 0.0
        self.built_loaded = not remember  # whether build/'s remembered digests are in entries
        self.answering: Forked | None = None  # a child stating build/ against git's index
        self.answered: dict[str, str] = {}  # what it vouched for, path -> digest (settled)
        self.built_elsewhere = False  # whether the child wrote build/'s cache file
        if remember:
            self.entries = digestcache.load_sources(root)
        # only a checkout without a digest cache yet (a fresh clone) asks git's index
        self.fresh_clone = (
            remember and not self.entries and not os.path.exists(root / BUILT_CACHE_NAME)
        )

    def _read_blob(
        self,
        rel: str,
        path: str,
        info: os.stat_result,
        signature: str,
        expected: str,
        plain: bool = False,
    ) -> str | None:
        """As _read, but a file git's index says is unchanged since checkout and holds a blob
        already read here is not read again (robots copied from one another, cells' copies)."""
        blob = (self.checkout or self._checkout()).blob(rel, info)
        found = self.blobs.get((blob, info.st_size)) if blob else None
        if found is not None:  # changed_at, inline: once per copy of 11,000 on a fresh clone
            self._learn(rel, signature, found, max(info.st_ctime_ns, info.st_mtime_ns))
            return found
        found = self._read(rel, path, expected, plain)
        # the blob's digest is what was read only if the file did not change meanwhile
        if blob and found and signature_now(path) == signature:
            self.blobs[blob, info.st_size] = found
        return found

    def _read(self, rel: str, path: str, expected: str = "", plain: bool = False) -> str | None:
        """Read and remember the digest of a file; None when it is not a readable file (with
        `plain`, nor an executable one or a symbolic link: an output never is). A link's
        digest is its bytes' under LINKED.

        A file holding the kept bytes of `expected` is compared with them instead of hashed.
        Opened before its stat is taken (fstat), which saves a path lookup per file; a FIFO is
        opened without waiting for a writer and then refused.
        """
        got = self.ahead.pop(rel, None)
        if got is not None:
            self._learn(rel, got[0], got[1], got[2], self.ahead_at)
            return got[1]
        linked = ""
        try:
            fd = os.open(path, OPEN_FLAGS)
        except OSError as exc:
            if plain or exc.errno != errno.ELOOP or not os.path.islink(path):
                return None
            linked = LINKED
            try:
                fd = os.open(path, os.O_RDONLY | _NONBLOCK)
            except OSError:
                return None  # a dangling link: missing, as a reader finds it
        if linked:
            expected = expected.removeprefix(LINKED)
        try:
            info = os.fstat(fd)
            mode = info.st_mode
            if not S_ISREG(mode) or (plain and mode & EXECUTE_BITS and self.executable(info)):
                return None
            if info.st_size > READ_WHOLE:
                digest = hash_fd(fd)
            else:
                data = read_fd(fd, info.st_size, READ_WHOLE)
                if data is None:
                    return None  # it grew past READ_WHOLE while read: being written now
                digest = expected if self.kept.get(expected) == data else self._keep(data)
        except OSError:
            return None
        finally:
            os.close(fd)
        digest = linked + digest
        signature = stat_signature(info)
        if self.remember and time.time() - changed_at(info) / 1e9 > RACY_SECONDS:
            self.entries[rel] = (signature, digest)  # as _learn, inline: once per file read
            self.dirty = True
        else:
            self.fresh[rel] = (signature, digest)
        return digest

    def executable(self, info: os.stat_result) -> bool:
        """Whether a file has an execute bit that git would record (core.fileMode)."""
        if not info.st_mode & EXECUTE_BITS:
            return False
        if self.modes is None:
            self.modes = tracks_file_mode(self.root)
        return self.modes

    def _checkout(self) -> Checkout:
        if self.checkout is None:
            # what a child answers (or has answered) is not looked up here as well
            outside = OUTPUTS if self.answering is not None or self.answered else ""
            found = read_checkout(self.root, "", outside) if self.fresh_clone else None
            self.checkout = found or Checkout({}, 0)
        return self.checkout

    def _keep(self, data: bytes, digest: str | None = None) -> str:
        digest = digest or hashlib.sha256(data).hexdigest()
        if len(data) <= self.budget and digest not in self.kept:
            self.kept[digest] = data
            self.budget -= len(data)
        return digest

    def _learn(
        self, rel: str, signature: str, digest: str, changed_ns: int, read_at: float = 0.0
    ) -> None:
        """Remember a digest found when the file was read (`read_at`; by default, now), unless
        the file changed (`changed_ns`, see changed_at) within RACY_SECONDS of that."""
        if self.remember and (read_at or time.time()) - changed_ns / 1e9 > RACY_SECONDS:
            self.entries[rel] = (signature, digest)
            self.dirty = True
        else:
            self.fresh[rel] = (signature, digest)

    def _load_built(self) -> None:
        """Add build/'s remembered digests to the entries; one learnt here since is newer."""
        self.built_loaded = True
        loaded = digestcache.load_built(self.root)
        loaded.update(self.entries)
        self.entries.update(loaded)  # in place: a caller may hold the dict

    def save(self) -> None:
        """Write the remembered digests back, when anything new was learnt: the sources' file,
        and build/'s when it was loaded."""
        if not (self.remember and self.dirty):
            return
        whole = self.built_loaded and not self.built_elsewhere
        if digestcache.save(self.root, self.entries, whole):
            self.dirty = False
