"""trimesh, imported with Ctrl-C and SIGTERM held until it is loaded.

trimesh guards its optional imports with `except BaseException`: a Ctrl-C met while they ran
(the first half second of a spheres step) was swallowed there, and the build went on to its
end. Held across the import, such a signal is raised once it is loaded, as if it had come a
moment later. Held twice: blocked in this thread, and, in the main thread, its Python handler
replaced by one that only notes it, since the kernel hands a process's signal to any thread
that does not block it (numpy's OpenBLAS threads, started earlier), and Python then runs the
handler in the main thread all the same.
"""

from __future__ import annotations

import signal
from types import FrameType

_HELD = (signal.SIGINT, signal.SIGTERM)
_met: list[int] = []


def _note(signum: int, frame: FrameType | None) -> None:
    _met.append(signum)


def _hold() -> dict[int, object]:
    """Replace the held signals' Python handlers by `_note`; the handlers replaced."""
    replaced: dict[int, object] = {}
    for held in _HELD:
        handler = signal.getsignal(held)
        if handler is None:  # set outside Python: it could not be put back
            continue
        try:
            signal.signal(held, _note)
        except ValueError:  # not the main thread, which alone may set handlers
            break
        replaced[held] = handler
    return replaced


_replaced = _hold()
_before = (
    signal.pthread_sigmask(signal.SIG_BLOCK, _HELD) if hasattr(signal, "pthread_sigmask") else None
)
try:
    import trimesh
finally:
    for _signum, _handler in _replaced.items():
        signal.signal(_signum, _handler)  # type: ignore[arg-type]
    if _before is not None:  # a blocked signal met meanwhile is delivered here
        signal.pthread_sigmask(signal.SIG_SETMASK, _before)
    for _signum in dict.fromkeys(_met):  # a noted one, to the handler it was meant for
        signal.raise_signal(_signum)

__all__ = ["trimesh"]
