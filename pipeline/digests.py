"""File digests remembered by stat signature, as git's index does, so unchanged files are not
re-read. The cache is local (git-ignored) and only ever a shortcut: a missing, unreadable or
mismatching entry means the file is hashed again.

Most of build/ is copies (meshes in each description, each description in its cells). With
`keep_bytes`, the bytes of files hashed in this process are kept up to that budget, so that a
file recorded with the same digest (an output, or an input by its stamp) is checked by comparing
bytes instead of hashing it again. A checkout without a cache yet (a fresh clone) reads each
distinct blob once, sources and build/ alike, taking from git's index which files are unchanged
since checkout and which hold the same blob (pipeline/gitindex.py). A check of a fresh clone
has build/ stated by a forked child while it plans (pipeline/buildahead.py). The cache's files are
pipeline/digestcache.py's; the reading of one file and the digests known, pipeline/digestread.py's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from stat import S_ISREG

from pipeline.digestcache import BUILT_CACHE_HEADER, BUILT_CACHE_NAME, OUTPUTS
from pipeline.digestread import OPEN_FLAGS, READ_WHOLE, DigestReader
from pipeline.filesig import RACY_SECONDS, stat_signature
from pipeline.strict_io import EXECUTE_BITS

# Bytes of hashed files a build or check keeps to compare copies against (see above).
COPY_BUDGET = 128 << 20


class Digests(DigestReader):
    """SHA-256 of repo files, reusing remembered digests whose stat signature still matches."""

    def of(self, rel: str, info: os.stat_result | None = None, expected: str = "") -> str:
        """The hex digest of `root/rel`, or `missing` when it is not a readable file.

        `info` is the file's stat when the caller has just taken it; `expected` the digest it
        had when last recorded (a stamp's), so that a copy of bytes kept here is compared with
        them rather than hashed.
        """
        if self.memo is None:
            return self._of(rel, info, expected)
        digest = self.memo.get(rel)
        if digest is None:
            digest = self.memo[rel] = self._of(rel, info, expected)
        return digest

    def _of(self, rel: str, info: os.stat_result | None, expected: str) -> str:
        if self.answering is not None and rel.startswith(OUTPUTS):
            self._take_answers()
        answered = self.answered.get(rel)
        if answered is not None:
            return answered
        if not self.built_loaded and rel.startswith(OUTPUTS):
            self._load_built()
        path = self.prefix + rel
        entry = self.fresh.get(rel) or self.entries.get(rel)  # a fresh entry is newer
        if entry is None and rel not in (self.checkout or self._checkout()).entries:
            return self._read(rel, path, expected) or "missing"  # nothing to look up
        try:
            info = info or os.stat(path)
        except OSError:
            return "missing"
        signature = stat_signature(info)
        if entry is not None and entry[0] == signature:
            return entry[1]
        return self._read_blob(rel, path, info, signature, expected) or "missing"

    def holds(self, rel: str, digest: str) -> bool:
        """Whether `root/rel` holds the bytes whose SHA-256 is `digest`.

        A file whose remembered digest still matches its stat is not read. Nor, on a fresh clone,
        is a file that git's index says is unchanged since checkout and holds a blob already read
        here (build/ is mostly copies). A file whose digest was kept from this process's hashing
        is compared byte for byte; any other is hashed. When settled, a file read or looked up in
        git's index to find it holding `digest` is not looked up again as a later step's input (a
        cell reads its robot's outputs).
        """
        if self.answering is not None and rel.startswith(OUTPUTS):
            self._take_answers()
        answered = self.answered.get(rel)
        if answered is not None:
            return answered == digest
        if not self.built_loaded and rel.startswith(OUTPUTS):
            self._load_built()
        path = self.prefix + rel
        entry = self.fresh.get(rel) or self.entries.get(rel)  # a fresh entry is newer
        if entry is None and rel not in (self.checkout or self._checkout()).entries:
            found = self._read(rel, path, digest, plain=True)  # nothing to look up
            return self._held(rel, found, digest)
        try:
            info = os.stat(path)
        except OSError:
            return False
        if info.st_mode & EXECUTE_BITS and self.executable(info):
            return False  # an output is never executable (see strict_io.EXECUTE_BITS)
        signature = stat_signature(info)
        if entry is not None and signature == entry[0]:
            return entry[1] == digest  # as cheap to find again as to memoise
        found = self._read_blob(rel, path, info, signature, digest, plain=True)
        return self._held(rel, found, digest)

    def unheld(self, outputs: Mapping[str, str]) -> list[str]:
        """The paths of `outputs` (path -> digest) that do not hold their digest, sorted.

        As `holds` for each, with its commonest case inline: a file with no remembered digest
        and not in git's index that is regular, not executable and not growing is opened,
        stated, read and compared here (a check without git or a cache reads 11,000 outputs at
        100 robots and 500 cells, where the calls per file cost a tenth of the reading). Any
        other goes to `holds`.
        """
        if self.answering is not None:
            self._take_answers()
        if not self.built_loaded:
            self._load_built()
        out: list[str] = []
        fresh, entries, kept, memo = self.fresh, self.entries, self.kept, self.memo
        ahead, answered = self.ahead, self.answered
        tracked = (self.checkout or self._checkout()).entries
        for rel, digest in sorted(outputs.items()):
            found = answered.get(rel)
            if found is not None:  # the child stated it against git's index
                if found != digest:
                    out.append(rel)
                continue
            if rel in fresh or rel in entries or rel in tracked:  # looked up, not read
                if not self.holds(rel, digest):
                    out.append(rel)
                continue
            got = ahead.pop(rel, None)
            if got is not None:
                signature, found, changed = got
                read_at = self.ahead_at
            else:
                try:
                    fd = os.open(self.prefix + rel, OPEN_FLAGS)
                except OSError:
                    out.append(rel)  # not a readable file, as holds finds
                    continue
                try:
                    info = os.fstat(fd)
                    mode = info.st_mode
                    plain = S_ISREG(mode) and not mode & EXECUTE_BITS and info.st_size <= READ_WHOLE
                    data = os.read(fd, info.st_size + 1) if plain else b""
                except OSError:
                    out.append(rel)  # as holds: a file that cannot be read is not held
                    continue
                finally:
                    os.close(fd)
                if not plain or len(data) > info.st_size:  # not a plain file, large, or growing
                    if not self.holds(rel, digest):
                        out.append(rel)
                    continue
                found = digest if kept.get(digest) == data else self._keep(data)
                # stat_signature and changed_at, inline: once per file of 11,000
                signature = f"{info.st_size} {info.st_mtime_ns} {info.st_ctime_ns} {info.st_ino}"
                changed = max(info.st_ctime_ns, info.st_mtime_ns)
                read_at = time.time()
            if self.remember and read_at - changed / 1e9 > RACY_SECONDS:
                entries[rel] = (signature, found)
                self.dirty = True
            else:
                fresh[rel] = (signature, found)
            if found != digest:
                out.append(rel)
            elif memo is not None:
                memo[rel] = digest
        return out

    def read_ahead(self, wanted: Mapping[str, str]) -> None:
        """Digest at once, on two cores where there are, the files of `wanted` (path -> digest
        last recorded) that no remembered digest or git index entry answers; settled use only
        (pipeline/readahead.py). `_read` and `unheld` then take what was found, once.

        While a child states build/ against git's index (buildahead.py), the sources are
        digested here first, before what it found is taken."""
        if self.memo is None:
            return
        if self.answering is not None:
            self._while_answered(wanted)
        if not self.built_loaded:
            self._load_built()
        tracked = (self.checkout or self._checkout()).entries
        fresh, entries = self.fresh, self.entries
        answered = self.answered
        todo = [
            item
            for item in wanted.items()
            if item[0] not in fresh
            and item[0] not in entries
            and item[0] not in tracked
            and item[0] not in answered
        ]
        if not todo:
            return
        from pipeline.readahead import digest_on_two_cores

        self.ahead_at = time.time()  # before any file is read: each is read at this time or later
        found = digest_on_two_cores(self.prefix, todo, self.kept, self._keep, READ_WHOLE)
        self.ahead.update(found)

    def _while_answered(self, wanted: Mapping[str, str]) -> None:
        """Digest the sources of `wanted` while a child states build/, then take what it
        found."""
        for rel, expected in wanted.items():
            if not rel.startswith(OUTPUTS):
                self.of(rel, None, expected)
        self._take_answers()

    def _held(self, rel: str, found: str | None, digest: str) -> bool:
        if found != digest:
            return False
        if self.memo is not None:
            self.memo[rel] = digest
        return True

    def answer_build_elsewhere(self) -> None:
        """On a fresh clone (settled, no cache at all), have a forked child state build/ against
        git's index while this process plans (pipeline/buildahead.py); what it found is taken
        when first needed."""
        if self.memo is None or not self.fresh_clone or self.checkout is not None:
            return
        from pipeline.buildahead import start

        cache = self.root / BUILT_CACHE_NAME if self.remember else None
        header, limit = BUILT_CACHE_HEADER, READ_WHOLE
        self.answering = start(self.root, OUTPUTS, cache, header, RACY_SECONDS, limit)

    def _take_answers(self) -> None:
        child, self.answering = self.answering, None
        if child is None:
            return
        from pipeline.buildahead import answers

        found = answers(child)
        if found is None:  # it failed: git's index is read here for build/ too
            self.checkout = None
            return
        self.answered = found
        self.built_loaded = self.built_elsewhere = True

    def close(self) -> None:
        """Stop a child still answering, when what it finds is no longer wanted."""
        child, self.answering = self.answering, None
        if child is not None:
            from pipeline.readahead import stop

            stop(child)
