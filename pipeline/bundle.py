"""Cell bundles: a compiled cell packed as dist/<cell_id>.tar.gz beside its identity."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pipeline.archive import (
    archive_bytes,
    entry_problems,
    identity_of_listing,
    listing,
    over_limits,
)
from pipeline.cell import cell_build_dir, cell_dir
from pipeline.findings import ContractError, Finding, folded
from pipeline.stamps import changed_outputs, read_stamp
from pipeline.writing import file_in_the_way, replace_all, stage_write, temp_prefix, write_fix


def bundle_files(root: Path, cell_id: str) -> dict[str, bytes]:
    """The files of a compiled cell by archive path (`<cell_id>/...`), as its stamp records them."""
    step = f"cellbuild:{cell_id}"
    stamp = read_stamp(root, step)
    if stamp is None or changed_outputs(root, stamp):
        raise ContractError(
            [
                Finding(
                    "cell_not_built",
                    cell_build_dir(cell_id),
                    "",
                    "the compiled cell is missing or differs from what its build recorded",
                    f"run `doit cellbuild:{cell_id}` (or `pipeline cell {cell_dir(cell_id)}`)",
                )
            ]
        )
    prefix = "build/cells/"
    return {path.removeprefix(prefix): (root / path).read_bytes() for path in stamp.outputs}


def package_cell(root: Path, cell_id: str) -> str:
    """Write dist/<cell_id>.tar.gz and dist/<cell_id>.identity; return the bundle identity."""
    files = bundle_files(root, cell_id)
    unportable = unportable_findings(cell_id, files)
    if unportable:
        raise ContractError(unportable)
    identity = identity_of_listing(listing(files))
    bundle = archive_bytes(files)
    problem = over_limits(files, bundle)
    if problem is not None:
        raise ContractError(
            [
                Finding(
                    "bundle_too_large",
                    cell_build_dir(cell_id),
                    "",
                    f"`pipeline bundle-identity` could not read this bundle back: {problem}",
                    "serve fewer or smaller mesh files (visual meshes are the usual bulk)",
                )
            ]
        )
    bundle_path = f"dist/{cell_id}.tar.gz"
    for target in (bundle_path, f"dist/{cell_id}.identity"):
        if _is_folder(root / target):  # not removed: dist/ is the user's, not generated
            raise ContractError(
                [
                    Finding(
                        "output_unwritable",
                        target,
                        "",
                        "cannot be written: a folder is in its place",
                        f"move the folder {target} away (a file goes there) and run again",
                    )
                ]
            )
    try:  # both or neither: a bundle beside the identity of another is worse than the old pair
        write_pair(root / bundle_path, bundle, root / "dist" / f"{cell_id}.identity", identity)
    except OSError as exc:  # a full disk, a read-only dist/: a finding, not a traceback
        raise ContractError(
            [
                Finding(
                    "output_unwritable",
                    bundle_path,
                    "",
                    f"cannot be written: {_why(root, bundle_path, exc)}",
                    write_fix(exc, "dist/", root / "dist", "the checkout root"),
                )
            ]
        ) from None
    return identity


def unportable_findings(cell_id: str, files: dict[str, bytes]) -> list[Finding]:
    """An error per problem of a file whose name `pipeline bundle-identity` refuses in a bundle.

    The URDF step copies a mesh of such a name with an `unportable_file_name` warning (a build
    used on Linux alone may hold it); a bundle is unpacked on the cell's machine, whatever its
    system, and must read back, so it is not packed.
    """
    return [
        Finding(
            "unportable_file_name",
            f"build/cells/{path}",
            "",
            f"cannot be packed: {why}, and a bundle unpacks on Linux, macOS and Windows",
            "rename the source file the description copies (and the <mesh> or file that names "
            f"it) to letters, digits, '-', '_' and '.', and run `doit cell:{cell_id}` again",
        )
        for path in sorted(files, key=lambda p: p.encode("utf-8"))
        for why in entry_problems(path)
    ]


def write_pair(bundle_path: Path, bundle: bytes, identity_path: Path, identity: str) -> None:
    """Write a bundle and its identity so that no kill leaves a bundle beside another's identity.

    Both are staged first, so a full disk leaves the old pair whole. Then the old identity is
    set aside under a temporary name, the bundle is renamed into place, and the new identity
    last: a kill in between leaves a bundle without an identity (the next `doit cell:<cell_id>`
    packs it again, its target missing) and temporary files (the next doit removes them). A
    refused rename puts the old pair back.
    """
    staged: list[tuple[str, Path]] = []
    aside: str | None = None
    try:
        staged.append((str(stage_write(bundle_path, bundle, always=True)), bundle_path))
        data = f"{identity}\n".encode()
        staged.append((str(stage_write(identity_path, data, always=True)), identity_path))
        aside = _set_aside(identity_path)
        replace_all(staged)
    except BaseException:
        if aside is not None:
            os.replace(aside, identity_path)
            aside = None
        raise
    finally:  # what is still staged (a renamed file's temporary name is gone), the old identity
        for tmp in [tmp for tmp, _ in staged] + ([aside] if aside else []):
            if os.path.lexists(tmp):
                os.unlink(tmp)


def _set_aside(path: Path) -> str | None:
    """Rename the file at `path` to a temporary name beside it (`.<name>.<8 hex>.tmp`, as
    writing.py's); None when there is none, or a folder is there (its rename is refused later)."""
    import secrets

    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return None
    except FileNotFoundError:
        return None
    while True:
        aside = os.path.join(path.parent, f"{temp_prefix(path.name)}{secrets.token_hex(4)}.tmp")
        if not os.path.lexists(aside):
            os.rename(path, aside)
            return aside


def _is_folder(path: Path) -> bool:
    """Whether a real folder (not a link to one, which a rename replaces) is at `path`."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _why(root: Path, path: str, exc: OSError) -> str:
    """What the system refused, or the file standing where a folder of `path` must be."""
    blocker = file_in_the_way(root / path)
    if blocker is not None:
        return f"{blocker.relative_to(root).as_posix()} is a file, not a folder"
    return str(exc.strerror or exc)


def bundle_shape_problem(names: list[str]) -> str | None:
    """Why archive entries are no cell bundle's (`<cell_id>/cell.json`, all in that folder, no
    two names one file where case or Unicode form is ignored), or None."""
    tops = sorted({name.split("/", 1)[0] for name in names if "/" in name})
    if not names or len(tops) != 1 or any("/" not in name for name in names):
        return "a bundle's entries all lie in one folder, <cell_id>/" + (
            f" (it has {len(names)} entries, folders {', '.join(map(repr, tops[:3]))})"
            if names
            else " (it has none)"
        )
    if f"{tops[0]}/cell.json" not in names:
        return f"it holds no {tops[0]}/cell.json"
    seen: dict[str, str] = {}
    for name in sorted(names):
        key = folded(name)
        if key in seen:
            return (
                f"entries {seen[key]!a} and {name!a} differ only in case or Unicode form: macOS "
                "and Windows unpack them as one file"
            )
        seen[key] = name
    return None


# What no file or folder a cell serves may have (a bundle's files are 0644, and its folders are
# made as unpacking makes any): a set-ID or sticky bit, or a write bit for every user, which
# lets another user of the machine change the cell once it is checked. Group-writable is not
# refused: a clone of build/ under a user-private group's umask (002) makes files 0664.
_UNSAFE_BITS = (
    (stat.S_ISUID, "set-user-ID"),
    (stat.S_ISGID, "set-group-ID"),
    (stat.S_ISVTX, "sticky"),
    (stat.S_IWOTH, "world-writable"),
)


def unsafe_mode_findings(folder: Path, display: str, served: list[str]) -> list[Finding]:
    """A finding per file `served` (paths in the cell `folder`), or folder holding one (the cell
    folder itself too), whose mode has an unsafe bit; one that cannot be read, or is a link, is
    left to the read that says so."""
    paths = {""} | {
        "/".join(path.split("/")[:depth])
        for path in served
        for depth in range(1, path.count("/") + 2)
    }
    found = []
    for path in sorted(paths):
        try:  # the cell folder where a link to it points (`--cell /srv/cell-current`)
            mode = os.stat(folder / path, follow_symlinks=not path).st_mode
        except OSError:
            continue
        if stat.S_ISLNK(mode):  # a link's own mode is 0777 and grants nothing: refused as one
            continue
        mode = stat.S_IMODE(mode)
        words = [word for bits, word in _UNSAFE_BITS if mode & bits]
        if words:
            found.append(
                Finding(
                    "unsafe_file_mode",
                    f"{display}/{path}" if path else display,
                    "",
                    f"has mode {mode:04o} ({', '.join(words)}): what a cell serves has no set-ID "
                    "or sticky bit and is writable by its owner (and group) alone",
                    "chmod it (a file 644, a folder 755), or unpack a bundle "
                    "`pipeline bundle-identity` accepts again",
                )
            )
    return found
