"""Which file names are not sources: hidden files, editors' backups and locks, OS metadata.

Finder writes `.DS_Store` in every folder a Mac user opens, Explorer `Thumbs.db` and
`desktop.ini`, Emacs `#file#`, `file~` and `.#file`, Vim `.file.swp`. None is a source on any
machine: were one an input of a step, the stamps committed from one machine would be stale on a
clean clone of another. So the build lists none of them, and a URDF mesh or a calibration pin
naming one is refused.
"""

from __future__ import annotations

# compared case-blind: Windows and macOS file systems are
_METADATA = frozenset({"thumbs.db", "ehthumbs.db", "desktop.ini", "icon\r", "__pycache__"})


def ignored(name: str) -> bool:
    """Whether a file or folder name is one the build never reads as a source."""
    return (
        name.startswith(".")
        or name.endswith("~")
        or (len(name) > 1 and name.startswith("#") and name.endswith("#"))
        or name.casefold() in _METADATA
    )


def ignored_part(path: str) -> str | None:
    """The first segment of a '/'-separated path that `ignored` names, or None."""
    return next(
        (part for part in path.split("/") if part not in ("", ".", "..") and ignored(part)), None
    )
