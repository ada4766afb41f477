"""trimesh, imported with Ctrl-C and SIGTERM held until it is loaded.

trimesh guards its optional imports with `except BaseException`: a Ctrl-C met while they ran
(the first half second of a spheres step) was swallowed there, and the build went on to its
end. Held (blocked) across the import, such a signal is raised once it is loaded, as if it
had come a moment later.
"""

from __future__ import annotations

import signal

_HELD = {signal.SIGINT, signal.SIGTERM}

if hasattr(signal, "pthread_sigmask"):
    _before = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        import trimesh
    finally:  # a signal met meanwhile is delivered here, in this module's importer
        signal.pthread_sigmask(signal.SIG_SETMASK, _before)
else:  # Windows: no signal masks, and no process-group Ctrl-C to hold
    import trimesh

__all__ = ["trimesh"]
