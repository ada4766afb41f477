"""The source files and folders the build plan lists: every file below a folder, the robot or
cell folders, the Python helpers beside a robot's srdf.py.

Planning runs for every robot and cell on every doit run, so these work on strings (os.scandir,
os.path) rather than pathlib objects, which cost several times more.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.sourcenames import ignored
from pipeline.strict_io import folder_refused, refusal


def files_under(root: Path, folder: str) -> list[str]:
    """Every source file below `folder`, repo-relative, sorted (a linked folder is not entered,
    `folder` itself neither: its step refuses it; names sourcenames.ignored gives, such as
    `.DS_Store`, are left out, and so are links to nothing: doit ends the whole run on a step's
    input that does not exist, "Dependent file ... does not exist", after the step succeeded).

    As os.walk lists them, without its per-folder lstat: scandir's entry types say it.
    """
    out: list[str] = []
    base = os.path.join(root, "")
    pending = [] if os.path.islink(base + folder) else [folder]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(base + rel) as entries:
                for entry in entries:
                    if ignored(entry.name):  # .DS_Store, link_3.stl~: no machine's source
                        continue
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        # a link's target stat'ed alone: the entry's type says it is one
                        if not entry.is_symlink() or os.path.exists(entry.path):
                            out.append(f"{rel}/{entry.name}")
                    elif not entry.is_symlink():
                        pending.append(f"{rel}/{entry.name}")
        except OSError:
            continue  # unreadable or gone: as os.walk, nothing below it
    return sorted(out)


def folders_holding(root: Path, top: str, name: str) -> list[str]:
    """The folders directly under `top` that hold `name` or any other source.

    A folder a person put files in is meant as one more robot or cell: one without `name` (a
    `My_Robot.urdf`, a `Machine.json`) is planned, so that its step names the missing file
    rather than the build skipping it without a word. The names sourcenames.ignored gives (hidden
    entries, `__pycache__`, `Thumbs.db`, ...) are not sources: git leaves a removed robot's
    `__pycache__` behind, and that folder is not planned.
    """
    base = os.path.join(root, top)
    if not os.path.isdir(base):
        if os.path.lexists(base):  # planning nothing would prune every output of `top`
            raise refusal(
                "not_a_folder",
                top,
                "",
                f"is not a folder, so the {top} in it cannot be listed",
                f"make {top}/ a folder holding one folder per {top[:-1]} (or remove the file)",
            )
        return []
    try:
        # listing `top` needs its r bit, reaching what it lists its x bit: without it, each
        # folder in it would be named unreadable for want of a permission on `top`
        os.stat(os.path.join(base, "."))
        with os.scandir(base) as entries:
            return sorted(e.name for e in entries if _holds(e, name))
    except PermissionError as exc:  # planning nothing would prune every output of `top`
        raise folder_refused(top, exc) from None


def _holds(entry: os.DirEntry[str], name: str) -> bool:
    # a folder this user may not search or list is planned, not taken for one removed (which
    # would prune its outputs): its step names the permission to fix
    hidden = ignored(entry.name)
    if entry.is_symlink():  # to anything, dangling too: planned, so that its step refuses it
        return not hidden
    try:
        os.lstat(os.path.join(entry.path, name))  # a dangling link counts: the step refuses it
        return True
    except PermissionError:
        return not hidden
    except OSError:
        pass
    if hidden or not entry.is_dir():
        return False
    try:
        with os.scandir(entry.path) as inside:
            return any(not ignored(e.name) for e in inside)
    except PermissionError:
        return True
    except OSError:
        return False


def helper_modules(root: Path, src: str, linked: bool = False) -> tuple[list[str], list[str]]:
    """Python files beside a robot's srdf.py (and below, but for meshes/), and the folders there
    that are symbolic links, each sorted; none hidden.

    gen_srdf() may import them (its folder leads its sys.path), so they make the SRDF as much
    as srdf.py does: a change to one must make the step stale. A linked folder is not entered
    (its files could be anywhere, or the folder itself): its step refuses it
    (strict_io.linked_helper_folders).
    """
    out: list[str] = []
    links: list[str] = []
    skip = len(os.path.join(root, ""))
    # os.walk enters no linked folder below `src`; a linked `src` is not walked either
    for dirpath, dirnames, filenames in [] if linked else os.walk(os.path.join(root, src)):
        rel = dirpath[skip:].replace(os.sep, "/")
        top = rel == src
        dirnames[:] = sorted(d for d in dirnames if not ignored(d) and not (top and d == "meshes"))
        links.extend(f"{rel}/{d}" for d in dirnames if os.path.islink(os.path.join(dirpath, d)))
        # no import reaches a hidden module (`.#srdf.py` is Emacs's lock) nor a link to nothing
        # (doit would end the build on it: "Dependent file ... does not exist")
        names = (
            n
            for n in filenames
            if n.endswith(".py")
            and not ignored(n)
            and not (top and n == "srdf.py")
            and os.path.exists(os.path.join(dirpath, n))
        )
        out.extend(f"{rel}/{name}" for name in names)
    return sorted(out), sorted(links)
