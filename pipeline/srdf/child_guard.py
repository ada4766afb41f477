"""The guard of the srdf child (child.py) while a `gen_srdf()` source runs: an audit hook that
refuses file writes and process spawns, and reads of files that are no input of the srdf step
(lxml's parsers, which read files unseen by the hook, check each file they load by the same
rule); and folder listings sorted by name, in reverse on the second run.

Imports no pipeline code: child.py loads it from its file (see child.py), in a process that
must not import the compiler.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_MUTATING = {
    "os.remove",
    "os.rename",
    "os.rmdir",
    "os.mkdir",
    "os.symlink",
    "os.link",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "os.utime",
    "os.setxattr",
    "os.removexattr",
    "os.chflags",
    "shutil.rmtree",
    "shutil.move",
}
_SPAWNING = {
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
}


class Refused(PermissionError):
    """A write or spawn the guard refused; reported as such, not as the generator raising."""


# What a generator may read in its robot's folder: the srdf step's inputs (its modules,
# robot.urdf, and the files of meshes/ the build lists, through the urdf step's stamp), and the
# cache of a module, which Python reads only while it matches its .py. Any other file there (a
# tcps.json, a module only compiled, tcps.pyc, a hidden module, .tcps.py) is no input: a change
# to it would leave the built SRDF stale and `pipeline check` saying current.
_READABLE = ".py"
_CACHE = f"{os.sep}__pycache__{os.sep}"

# sourcenames._METADATA and ignored(), the names the build lists no source by
_METADATA = frozenset({"thumbs.db", "ehthumbs.db", "desktop.ini", "icon\r", "__pycache__"})


def ignored(name: str) -> bool:
    """Whether a file or folder name is one the build never reads as a source."""
    return (
        name.startswith(".")
        or name.endswith("~")
        or (len(name) > 1 and name.startswith("#") and name.endswith("#"))
        or name.casefold() in _METADATA
    )


def _module(folder: str, full: str) -> bool:
    """Whether `full`, a file of `folder`, is a module the build lists (a .py named by no
    ignored name, nor in a folder so named)."""
    parts = full[len(folder) + 1 :].split(os.sep)
    return full.endswith(_READABLE) and not any(ignored(part) for part in parts)


class Scope:
    """Where a generator may read: the robot's folder (its inputs only: `inputs` names, relative
    to it, those that are no module nor robot.urdf, the source itself and its meshes), and in the
    repository nothing else but the allowed folders (an interpreter or virtual environment kept
    there)."""

    def __init__(
        self, folder: str, repo: str | None, allowed: list[str], inputs: list[str]
    ) -> None:
        self.folder = folder
        self.repo = repo
        self.allowed = tuple(a + os.sep for a in allowed)
        self.inputs = frozenset(os.path.join(folder, i.replace("/", os.sep)) for i in inputs)

    def untracked(self, path: str) -> str | None:
        """The file that reading `path` reads when it is no srdf-step input, relative to the
        repository (to the robot's folder when no repository was given); None otherwise."""
        # a module file of the folder may be a link (its digest follows what it points to): the
        # folder's rules apply to the file as named in the folder it is in, the repository's to
        # where it leads
        full = _named(path)
        if not full.startswith(self.folder + os.sep):
            full = os.path.realpath(path)
        if full.startswith(self.folder + os.sep):
            if _module(self.folder, full) or full in self.inputs:
                return None
            if full == os.path.join(self.folder, "robot.urdf"):
                return None
            if full.endswith(".pyc") and _CACHE in full[len(self.folder) :]:
                return None
        elif self.repo is None or not full.startswith(self.repo + os.sep):
            return None  # outside the repository: installed libraries, the system's files
        elif full.startswith(self.allowed):
            return None  # the interpreter's folders, the compiler's package
        return os.path.relpath(full, self.folder if self.repo is None else self.repo)


def _named(path: str) -> str:
    """The absolute path of the file `path` names, its folders resolved as the system resolves
    them (a `..` after a linked folder climbs out of where the link leads: os.path.abspath took
    meshes/sub/../link_6.stl for meshes/link_6.stl), its last part as named."""
    raw = os.path.join(os.getcwd(), path)
    head, tail = os.path.split(raw)
    if tail in ("", ".", ".."):
        return os.path.realpath(raw)
    return os.path.join(os.path.realpath(head), tail)


def _file_of_url(url: str) -> str:
    """The local path a URL lxml loads names (a path, or a file: URL)."""
    if url.startswith("file:"):
        from urllib.parse import unquote, urlsplit

        return unquote(urlsplit(url).path)
    return url


class _OnImport(importlib.abc.MetaPathFinder):
    """Runs `patch` on module `name` once it is imported, however it is (an import statement,
    importlib.import_module), and not before: a generator that does not use it pays nothing."""

    def __init__(self, name: str, patch: Callable[[Any], None]) -> None:
        self.name, self.patch = name, patch

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            loader: Any = spec.loader
            exec_module, patch = loader.exec_module, self.patch

            def exec_and_patch(module: Any) -> None:
                exec_module(module)
                patch(module)

            loader.exec_module = exec_and_patch
        return spec


def _guard_lxml(etree: Any, check: Callable[[str], None]) -> None:
    """lxml reads a file named by path (etree.parse(path), XMLSchema(file=...), an XInclude) in
    libxml2, where the audit hook does not see it: every parser (the default one, and each made
    later) gets a resolver, which libxml2 asks for every file it loads, that checks it."""

    class Guard(etree.Resolver):  # type: ignore[misc]
        def resolve(self, url: str | None, pubid: str | None, context: Any) -> None:
            if url:
                check(_file_of_url(url))

    guard = Guard()

    def guarded(cls: Any) -> Any:
        class Guarded(cls):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.resolvers.add(guard)

        Guarded.__name__ = Guarded.__qualname__ = cls.__name__
        return Guarded

    for name in ("XMLParser", "ETCompatXMLParser", "HTMLParser", "XMLPullParser", "HTMLPullParser"):
        if hasattr(etree, name):
            setattr(etree, name, guarded(getattr(etree, name)))
    etree.set_default_parser(etree.XMLParser())


def _guard_extensions(check: Callable[[str], None]) -> None:
    """An extension module (`.so`, `.pyd`) is loaded by the dynamic linker, where the audit hook
    sees no open: its loader checks the file first, by the same rule (one beside srdf.py is no
    input, as a sourceless .pyc is not)."""
    from importlib.machinery import ExtensionFileLoader

    create = ExtensionFileLoader.create_module

    def checked(self: Any, spec: Any) -> Any:
        check(str(self.path))
        return create(self, spec)

    ExtensionFileLoader.create_module = checked  # type: ignore[method-assign]


def _guard_fork_exec(refuse: Callable[[str], None]) -> None:
    """_posixsubprocess.fork_exec, which starts a process without an audit event of its own
    (subprocess.Popen raises one first; multiprocessing's spawn and forkserver call it through
    multiprocessing.util.spawnv_passfds, which raises none), is refused as a process start."""
    import _posixsubprocess

    def refused(*args: Any, **kwargs: Any) -> Any:
        refuse("_posixsubprocess.fork_exec")

    _posixsubprocess.fork_exec = refused


def _guard_file_makers(refuse: Callable[[Any], None]) -> None:
    """os.mkfifo and os.mknod make a file without an audit event (a FIFO was made beside
    srdf.py): each is refused as a write, before it makes anything (as os's and as posix's)."""

    def refused(path: Any, *args: Any, **kwargs: Any) -> None:
        refuse(path)

    for module in {os, sys.modules.get(os.name, os)}:
        for name in ("mkfifo", "mknod"):
            if hasattr(module, name):
                setattr(module, name, refused)


def _temporary() -> str | None:
    """What a write refused is when the tempfile module makes it, named by the function the
    generator called (`tempfile.mkstemp()`): the file's name is drawn at random and its folder
    is absolute, so a finding naming the path would differ on every run; None otherwise."""
    tempfile = sys.modules.get("tempfile")
    made = None
    frame = sys._getframe(2)  # the frame that caused the audit event, past the hook's
    while frame is not None and tempfile is not None:
        if frame.f_code.co_filename == tempfile.__file__:
            code = frame.f_code  # co_qualname from Python 3.11, which names a method's class
            made = getattr(code, "co_qualname", code.co_name).removesuffix(".__init__")
            if made == "__init__" and "self" in frame.f_locals:  # Python 3.10
                made = type(frame.f_locals["self"]).__name__
        elif made is not None:
            break
        frame = frame.f_back  # type: ignore[assignment]
    return None if made is None else f"a temporary file or folder (tempfile.{made}())"


def install_guard(attempts: list[str], spawns: list[str], reads: list[str], scope: Scope) -> None:
    def check_read(path: str) -> None:
        untracked = scope.untracked(path)
        if untracked is not None:
            reads.append(untracked)
            raise Refused(f"gen_srdf() may not read {untracked}")

    sys.meta_path.insert(0, _OnImport("lxml.etree", lambda etree: _guard_lxml(etree, check_read)))
    _guard_extensions(check_read)

    def refuse_spawn(event: str) -> None:
        spawns.append(event)
        raise Refused(f"gen_srdf() may not start processes ({event})")

    _guard_fork_exec(refuse_spawn)

    def refuse_write(path: Any) -> None:
        attempts.append(_temporary() or os.fsdecode(path))
        raise Refused(f"gen_srdf() may not write files ({os.fsdecode(path)})")

    _guard_file_makers(refuse_write)
    # tempfile's first call would try a file in each candidate folder (/tmp, /var/tmp, ...),
    # each refused, and raise naming them all: it is given the working folder at once
    if "tempfile" in sys.modules:
        setattr(sys.modules["tempfile"], "tempdir", os.getcwd())  # noqa: B010
    else:
        sys.meta_path.insert(0, _OnImport("tempfile", lambda m: setattr(m, "tempdir", os.getcwd())))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and len(args) >= 3:
            path, mode, flags = args[0], args[1], args[2]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writes and isinstance(path, (str, bytes, os.PathLike)):
                refuse_write(path)
            if isinstance(path, (str, bytes, os.PathLike)):
                check_read(os.fsdecode(path))
        elif event == "socket.bind" and len(args) >= 2 and _socket_file(args[1]):
            refuse_write(args[1])  # a Unix socket bound to a path makes a file there
        elif event == "sqlite3.connect" and args:
            database = _sqlite_file(args[0])  # sqlite opens it in C, unseen by the hook
            if database is not None:
                (check_read if database[1] else refuse_write)(database[0])
        elif event == "ctypes.dlopen" and args and isinstance(args[0], (str, bytes)):
            check_read(os.fsdecode(args[0]))  # a shared library loaded by path
        elif event in _MUTATING:
            attempts.append(_temporary() or f"{event} {args[0] if args else ''}")
            raise Refused(f"gen_srdf() may not change files ({event})")
        elif event in _SPAWNING:
            refuse_spawn(event)

    sys.addaudithook(hook)


def _socket_file(address: Any) -> bool:
    """Whether a socket address is a file's path (a Unix socket's, not in the abstract
    namespace, whose name starts with a NUL)."""
    return isinstance(address, (str, bytes)) and address[:1] not in ("", b"", "\0", b"\0")


def _sqlite_file(database: Any) -> tuple[str, bool] | None:
    """The file an sqlite3.connect opens, and whether only to read it (a `file:` URI's
    mode=ro); None for a database in memory or a private temporary one ('')."""
    name = os.fsdecode(database) if isinstance(database, (str, bytes, os.PathLike)) else ""
    if name in ("", ":memory:"):
        return None
    if not name.startswith("file:"):  # read as a URI: the event does not say if uri=True
        return name, False
    from urllib.parse import parse_qs, unquote, urlsplit

    parts = urlsplit(name)
    mode = parse_qs(parts.query).get("mode", [""])[-1]
    path = unquote(parts.path)
    if mode == "memory" or path in ("", ":memory:"):
        return None
    return path, mode == "ro"


class _Listing:
    """What os.scandir gave, in the order given: an iterator and a context manager, as
    os.scandir's own is (glob, pathlib and os.walk use it both ways)."""

    def __init__(self, entries: list[Any]) -> None:
        self._entries = iter(entries)

    def __iter__(self) -> _Listing:
        return self

    def __next__(self) -> Any:
        return next(self._entries)

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._entries = iter(())


def order_listings(descending: bool) -> None:
    """Make os.listdir and os.scandir (so glob, pathlib, os.walk) list a folder sorted by name,
    the second run in reverse: in the file system's order, a generator iterating a listing made
    the same bytes twice here and other bytes on another clone (ext4 orders names by a hash
    seeded per file system), which the two runs could not tell."""
    listdir, scandir = os.listdir, os.scandir

    def ordered_listdir(*args: Any, **kwargs: Any) -> list[Any]:
        return sorted(listdir(*args, **kwargs), reverse=descending)

    def ordered_scandir(*args: Any, **kwargs: Any) -> _Listing:
        with scandir(*args, **kwargs) as entries:
            return _Listing(sorted(entries, key=lambda e: e.name, reverse=descending))

    os.listdir, os.scandir = ordered_listdir, ordered_scandir  # type: ignore[assignment]


def name_host(name: str) -> None:
    """Make the host's name (socket.gethostname, os.uname, so platform.node) `name`, another in
    each run: a generator writing it made the same bytes twice here and other bytes on another
    machine, which the two runs could not tell."""
    import socket

    uname = os.uname
    socket.gethostname = lambda: name

    def named_uname() -> Any:
        real = uname()
        return type(real)((real.sysname, name, real.release, real.version, real.machine))

    os.uname = named_uname
