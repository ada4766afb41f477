"""Content stamps: what each build step was made from, kept in build/ beside its outputs.

A stamp records the SHA-256 of every input (sources and the code that makes the outputs) and of
every output. A step is current when its inputs hash to the recorded digests and its outputs
still hold the recorded bytes, so staleness is decided by content, not by doit's database.

build/ is committed, so git merges stamps line by line: two branches that changed different
lines of one stamp (one a source, the other the code) would merge into a stamp vouching for
inputs no step ever ran on. Each stamp therefore carries a seal, the SHA-256 of the rest of it:
the seal line differs on both sides whenever the stamp does, so git reports a conflict, and a
stamp whose seal does not match (merged, or edited by hand) is not read.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from pipeline.digests import Digests
from pipeline.findings import ContractError, Finding, raise_if_errors
from pipeline.gitindex import tracks_file_mode
from pipeline.strict_io import EXECUTE_BITS, JSON_LIMIT, is_utf8, read_regular
from pipeline.strict_json import dump_json
from pipeline.writing import atomic_write, write_fix

STAMP_ROOT = "build/stamps"
Make = Callable[[Path], Mapping[str, bytes]]
Checks = Callable[[Path], list[Finding]]


class Step(NamedTuple):
    """One build step: the files it reads and the function that makes its outputs."""

    name: str
    doc: str
    inputs: tuple[str, ...]
    make: Make
    targets: tuple[str, ...] = ()
    # steps that must succeed first though none of their outputs is read (order, not staleness)
    after: tuple[str, ...] = ()
    # (source folder, output folder) pairs: an output below the output folder is a byte copy of
    # the file at the same path below the source folder
    mirrors: tuple[tuple[str, str], ...] = ()
    # what can still be said of the step's own sources when a step it reads from failed
    own_checks: Checks | None = None

    @property
    def stamp(self) -> str:
        """Repo-relative path of this step's stamp."""
        return stamp_path(self.name)

    def source_of(self, output: str) -> str | None:
        """The file an output is a byte copy of, when the step copies it verbatim."""
        for source, folder in self.mirrors:
            if output.startswith(folder):
                return source + output[len(folder) :]
        return None


class Stamp(NamedTuple):
    """The recorded digests of a step's inputs and outputs."""

    step: str
    inputs: dict[str, str]
    outputs: dict[str, str]
    # read from bytes git converted to CRLF line endings: what it records holds, but the file is
    # not what the step wrote, so the step is not current until it writes the stamp again
    crlf: bool = False
    # a stamp file with an execute bit: git would record that mode, which a build never makes
    executable: bool = False


def stamp_path(step: str) -> str:
    """Repo-relative path of the stamp of the step called `step` (`group:name`)."""
    group, _, name = step.partition(":")
    return f"{STAMP_ROOT}/{group}/{name or group}.json"


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def unrecordable_names(paths: Iterable[str]) -> list[Finding]:
    """Inputs whose names are not UTF-8 (a stamp, a JSON document, cannot record them)."""
    return [
        Finding(
            "invalid_path_character",
            path,
            "",
            "the file name is not UTF-8 text, so no stamp can record it",
            "rename the file to a UTF-8 name, or move it out of the sources",
        )
        for path in paths
        if not is_utf8(path)
    ]


def hash_inputs(
    root: Path,
    paths: Iterable[str],
    digests: Digests | None = None,
    recorded: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Digest of each input; a missing input is recorded as `missing`.

    `recorded`: the digests a stamp recorded, against which kept bytes are compared (a source
    copied from another, as a synthesised robot's meshes, is then compared, not hashed).
    """
    known = digests or Digests(root, remember=False)
    if recorded is None:
        return {path: known.of(path) for path in paths}
    return {path: known.of(path, None, recorded.get(path, "")) for path in paths}


# The seal's line in a stamp (top level: two spaces of indent; inputs and outputs have four).
_SEAL_LINE = b'\n  "seal": "'


def stamp_bytes(step: str, inputs: Mapping[str, str], outputs: Mapping[str, str]) -> bytes:
    """The bytes of a stamp: the digests of a step's inputs and outputs, sealed."""
    record = {"step": step, "inputs": inputs, "outputs": outputs}
    return dump_json({**record, "seal": sha256_bytes(dump_json(record))})


def unsealed(data: bytes) -> bytes | None:
    """A stamp's bytes without its seal's line, which the seal is the SHA-256 of; None if none."""
    # cut from the raw bytes rather than serialised again: a check reads 1,000 stamps at scale.
    # A stamp holds no CR of its own: one git turned into CRLF (core.autocrlf) reads as written,
    # so that a check names the sources git converted rather than every stamp.
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    start = data.find(_SEAL_LINE)
    end = data.find(b"\n", start + 1)
    return None if start < 0 or end < 0 else data[:start] + data[end:]


def read_stamp(root: Path, step: str, unsealed_ok: bool = False) -> Stamp | None:
    """The stamp of a step, or None when there is none, it is unreadable or its seal differs.

    `unsealed_ok`: a stamp without any seal (written before stamps were sealed, by an older
    version of this tool) is read too. Such a stamp never makes a step current, nor vouches for
    an output; it only lets `pipeline check` say why the step is stale.
    A symbolic link (to a stamp's very bytes, say) is none: a build writes a regular file.
    """
    found = read_regular(os.path.join(root, stamp_path(step)), JSON_LIMIT, follow=False)
    if found is None:
        return None
    body = unsealed(found[0])
    try:
        data = json.loads(found[0])
        crlf, executable = b"\r" in found[0], bool(found[1].st_mode & EXECUTE_BITS)
        executable = executable and tracks_file_mode(root)
        stamp = Stamp(data["step"], dict(data["inputs"]), dict(data["outputs"]), crlf, executable)
        if unsealed_ok and set(data) == {"step", "inputs", "outputs"} and data["step"] == step:
            return stamp
        sealed = body is not None and data["seal"] == sha256_bytes(body)
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return stamp if sealed else None


def changed_inputs(stamp: Stamp | None, digests: Mapping[str, str]) -> list[str]:
    """Inputs whose digest differs from the stamp (all of them when there is no stamp)."""
    if stamp is None:
        return sorted(digests)
    if digests == stamp.inputs:  # the usual case, decided in one comparison
        return []
    keys = set(digests) | set(stamp.inputs)
    return sorted(k for k in keys if digests.get(k) != stamp.inputs.get(k))


def behind_links(
    root: Path, paths: Iterable[str], folders: dict[str, str] | None = None
) -> dict[str, str]:
    """Each of `paths` (repo-relative, in build/) that lies in a folder a symbolic link stands
    in the place of (build/ itself or one below it, dangling or not) -> that link.

    Reading through it would take what it points at for the step's work, and writing through
    it would write there. `folders` (folder -> the link at or above it, "" for none) spares a
    folder a second look: one lstat per folder, one lookup per path.
    """
    known = {} if folders is None else folders
    base = os.path.join(root, "")
    out: dict[str, str] = {}
    for path in paths:
        parent = path.rpartition("/")[0]
        link = known.get(parent)
        if link is None:
            link = _link_at_or_above(base, parent, known)
        if link:
            out[path] = link
    return out


def _link_at_or_above(base: str, folder: str, known: dict[str, str]) -> str:
    """The outermost symbolic link among `folder` and the folders holding it, "" for none."""
    if not folder:
        return ""
    above = folder.rpartition("/")[0]
    link = known.get(above)
    if link is None:
        link = _link_at_or_above(base, above, known)
    if not link and os.path.islink(base + folder):
        link = folder
    known[folder] = link
    return link


def changed_outputs(
    root: Path,
    stamp: Stamp,
    digests: Digests | None = None,
    linked: Mapping[str, str] | None = None,
) -> list[str]:
    """Recorded outputs that are missing or no longer hold the recorded bytes, and the stamp and
    outputs in a folder a symbolic link replaced (`linked`: those, when already found)."""
    if linked is None:
        linked = behind_links(root, [stamp_path(stamp.step), *stamp.outputs])
    outputs = stamp.outputs
    if linked:  # nothing behind a link is read: what it points at is not the step's work
        outputs = {path: digest for path, digest in outputs.items() if path not in linked}
    unheld = (digests or Digests(root, remember=False)).unheld(outputs)
    return sorted([*unheld, *linked]) if linked else unheld


def clear_way(root: Path, path: str) -> None:
    """Remove what a hand edit put in an output's place in build/: a folder, or a file or a
    symbolic link as a parent (the link itself, never what it points at).

    build/ is generated (deleting it and running doit recreates it), so what stands where an
    output or its folder must go is removed rather than stopping every later build.
    """
    parts = path.split("/")
    for depth in range(1, len(parts)):  # build/ and the folders below it that hold the output
        folder = root.joinpath(*parts[:depth])
        if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
            folder.unlink(missing_ok=True)  # missing: a step beside it (`doit -n 2`) removed it
    target = root / path
    if target.is_dir() and not target.is_symlink():
        import shutil  # here: only a hand edit puts a folder in an output's place

        shutil.rmtree(target)


def run_step(root: Path, step: Step, known: Digests | None = None) -> bool:
    """Bring a step's outputs up to date; True when anything was made."""
    raise_if_errors(unrecordable_names(step.inputs))
    stamp = read_stamp(root, step.name)
    digests = hash_inputs(root, step.inputs, known, None if stamp is None else stamp.inputs)
    if (
        stamp is not None
        and not stamp.crlf
        and not stamp.executable
        and not changed_inputs(stamp, digests)
        and not changed_outputs(root, stamp, known)  # the stamp and outputs behind a link too
    ):
        return False
    outputs = dict(step.make(root))
    made = {path: sha256_bytes(data) for path, data in outputs.items()}
    # the stamp last: it vouches for the rest
    writes = {**outputs, step.stamp: stamp_bytes(step.name, digests, made)}
    gone = [] if stamp is None else sorted(set(stamp.outputs) - set(outputs))
    for path in [*sorted(outputs), *gone, step.stamp]:
        try:
            if path in writes:
                clear_way(root, path)
                atomic_write(root / path, writes[path])
            else:
                (root / path).unlink(missing_ok=True)
        except OSError as exc:  # a read-only build/, a full disk: a finding, not a traceback
            raise ContractError(
                [
                    Finding(
                        "output_unwritable",
                        path,
                        "",
                        f"cannot be written: {exc.strerror or exc}",
                        write_fix(exc, "build/ (its folders and files)"),
                    )
                ]
            ) from None
    return True
