"""Which names Windows cannot hold as a file or folder: git for Windows refuses to check out a
path holding one, and a bundle does not unpack there; and which a URI names as another file."""

from __future__ import annotations

# the characters a Windows file name cannot hold
_CHARACTERS = frozenset('<>:"|?*') | {chr(c) for c in range(32)}
# the names Windows keeps for its devices, whatever their case and extension (`nul.stl`)
_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL", *(f"{kind}{n}" for kind in ("COM", "LPT") for n in range(10))]
)
DEVICES_IN_WORDS = "CON, PRN, AUX, NUL, COM0-COM9 or LPT0-LPT9, in any case, with any extension"


def device_name(name: str) -> bool:
    """Whether Windows takes the name for a device's (`CON`, `prn`, `Lpt3.v2`, `nul.txt`)."""
    return name.split(".")[0].rstrip(" ").upper() in _DEVICES


def _refusal(part: str) -> tuple[str, str] | None:
    """What about a file or folder name Windows refuses, and the rule (from its comma or
    bracket on); None when nothing."""
    odd = sorted({c for c in part if c in _CHARACTERS})
    if odd:
        return (
            f"{part!a} holds {', '.join(repr(c) for c in odd)}",
            ", which no Windows file name can hold",
        )
    if part.endswith((".", " ")):
        return (
            f"{part!a} ends in a dot or a space",
            ", which Windows strips from a name",
        )
    if device_name(part):
        return f"{part!a} is the name of a Windows device", f" ({DEVICES_IN_WORDS})"
    return None


def unportable_part(path: str) -> str | None:
    """Why a '/'-separated path cannot be a Windows path, or None."""
    for part in path.split("/"):
        found = _refusal(part)
        if found is not None:
            return found[0]
    return None


def windows_problem(part: str) -> str | None:
    """Why Windows cannot hold a file or folder named `part`, with the rule, or None."""
    found = _refusal(part)
    return None if found is None else "".join(found)


def unportable_id(name: str, shown: str) -> str | None:
    """Why a model or cell id (`shown` as findings show it) can be no folder on Windows, as the
    start of a finding's message; None when it can be one."""
    why = unportable_part(name)
    if why is not None and why.endswith("device"):
        why = f"'{shown}' is the name of a Windows device ({DEVICES_IN_WORDS})"
    return None if why is None else f"{why}: no folder on Windows can have that name"


# what a URI reader decodes (`%xx`), cuts at (`#` a fragment, `?` a query) or refuses (a space)
_URI_CHARACTERS = frozenset("%#? ")


def uri_unsafe_part(path: str) -> str | None:
    """Why a '/'-separated path named in a URI is read as another by a URI reader, or None."""
    for part in path.split("/"):
        odd = sorted({c for c in part if c in _URI_CHARACTERS})
        if odd:
            return f"{part!a} holds {', '.join(repr(c) for c in odd)}"
    return None
