"""Child-process side of running a `gen_srdf()` source; run as a script, imports no pipeline code.

Usage: PYTHONHASHSEED=0 python -s -B child.py SOURCE RESULT_JSON [REPO_ROOT [ALLOWED_FOLDER ...]]
(environment: generate.py). Writes one JSON object to RESULT_JSON:
{"status": "ok" | "raised" | "exited" | "no_function" | "takes_arguments", ...}, and ends at
once: the interpreter's own exit would wait for the threads a generator left running. Once
gen_srdf() returns, RESULT_JSON.returned holds a byte: what ends or holds the process later (a
method of what it returned) is not its not returning.
An audit hook refuses file writes and process spawns while the source runs, and reads of files
that are no input of the srdf step: in the robot's folder anything but its modules and
robot.urdf; in the repository anything outside the robot's folder but the interpreter's own
folders and the ALLOWED_FOLDERs (and lxml's parsers, which read files unseen by the hook, check
each file they load by the same rule). A generator computes XML and returns it; the CLI writes the
file.
A folder's listing (os.listdir, os.scandir) comes sorted by name, in reverse under a hash seed
other than 0: generate.py compares the two runs.
"""

from __future__ import annotations

import os  # already loaded at start-up: never looked up in this folder
import sys

# Run as a script without -I (which would ignore PYTHONHASHSEED): drop this script's folder,
# which Python put first on sys.path, before importing anything else, so that neither this
# file's imports nor a generator find the compiler's modules by their bare names.
_HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != _HERE]

import contextlib  # noqa: E402
import importlib.abc  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import runpy  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

# the standard streams as they were before the generator ran, which may replace sys.stdout
_STDOUT, _STDERR = sys.stdout, sys.stderr

# pipeline.strict_io.XML_LIMIT, the most XML a file of the compiler's may hold: a larger text
# returned is not sent (through the result JSON, by both runs) but its size
_XML_LIMIT = 32 * 1024 * 1024

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
    "shutil.rmtree",
    "shutil.move",
}
_SPAWNING = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"}


class _Refused(PermissionError):
    """A write or spawn the guard refused; reported as such, not as the generator raising."""


# What a generator may read in its robot's folder: the srdf step's inputs (its modules and
# robot.urdf), and the cache of a module, which Python reads only while it matches its .py. Any
# other file there (a tcps.json, a module only compiled, tcps.pyc) is no input: a change to it
# would leave the built SRDF stale and `pipeline check` saying current.
_READABLE = ".py"
_CACHE = f"{os.sep}__pycache__{os.sep}"


class _Scope:
    """Where a generator may read: the robot's folder (its inputs only), and in the repository
    nothing else but the allowed folders (an interpreter or virtual environment kept there)."""

    def __init__(self, folder: str, repo: str | None, allowed: list[str]) -> None:
        self.folder = folder
        self.repo = repo
        self.allowed = tuple(a + os.sep for a in allowed)

    def untracked(self, path: str) -> str | None:
        """The file that reading `path` reads when it is no srdf-step input, relative to the
        repository (to the robot's folder when no repository was given); None otherwise."""
        # a module file of the folder may be a link (its digest follows what it points to): the
        # folder's rules apply to the path as named, the repository's to where it leads
        full = os.path.abspath(path)
        if not full.startswith(self.folder + os.sep):
            full = os.path.realpath(path)
        if full.startswith(self.folder + os.sep):
            if full.endswith(_READABLE) or full == os.path.join(self.folder, "robot.urdf"):
                return None
            if full.endswith(".pyc") and _CACHE in full[len(self.folder) :]:
                return None
        elif self.repo is None or not full.startswith(self.repo + os.sep):
            return None  # outside the repository: installed libraries, the system's files
        elif full.startswith(self.allowed):
            return None  # the interpreter's folders, the compiler's package
        return os.path.relpath(full, self.folder if self.repo is None else self.repo)


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


def _install_guard(attempts: list[str], spawns: list[str], reads: list[str], scope: _Scope) -> None:
    def check_read(path: str) -> None:
        untracked = scope.untracked(path)
        if untracked is not None:
            reads.append(untracked)
            raise _Refused(f"gen_srdf() may not read {untracked}")

    sys.meta_path.insert(0, _OnImport("lxml.etree", lambda etree: _guard_lxml(etree, check_read)))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and len(args) >= 3:
            path, mode, flags = args[0], args[1], args[2]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writes and isinstance(path, (str, bytes, os.PathLike)):
                attempts.append(os.fsdecode(path))
                raise _Refused(f"gen_srdf() may not write files ({os.fsdecode(path)})")
            if isinstance(path, (str, bytes, os.PathLike)):
                check_read(os.fsdecode(path))
        elif event in _MUTATING:
            attempts.append(f"{event} {args[0] if args else ''}")
            raise _Refused(f"gen_srdf() may not change files ({event})")
        elif event in _SPAWNING:
            spawns.append(event)
            raise _Refused(f"gen_srdf() may not start processes ({event})")

    sys.addaudithook(hook)


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


def _order_listings(descending: bool) -> None:
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


def _serialise(xml: Any) -> tuple[str, str]:
    """(kind, text) of the envelope's xml value."""
    import xml.etree.ElementTree as ET

    if isinstance(xml, str):
        return "string", str.__str__(xml)
    if isinstance(xml, ET.ElementTree):
        xml = xml.getroot()
    if isinstance(xml, ET.Element):
        looped = _inside_itself(xml)
        if looped == _TOO_DEEP:  # ET.tostring recurses: a RecursionError past about 1000
            return "deep", str(_XML_DEPTH)
        if looped is not None:  # ET.tostring would walk it without end
            return "cyclic", f"<{looped[0]}> is within its own <{looped[1]}>"
        return "element", ET.tostring(xml, encoding="unicode")
    if "lxml" in sys.modules:
        from lxml import etree

        if isinstance(xml, etree._ElementTree):
            xml = xml.getroot()
        if isinstance(xml, etree._Element):
            return "element", etree.tostring(xml, encoding="unicode")
    return "other", type(xml).__name__


def _utf8_size(text: str) -> str | None:
    """How many bytes `text` takes in UTF-8 when over the limit, None when not; a text of more
    characters than that is not encoded to count them (each takes one byte or more)."""
    if len(text) > _XML_LIMIT:
        return str(len(text)) if text.isascii() else f"more than {len(text)}"
    size = len(text.encode("utf-8", "surrogatepass"))
    return str(size) if size > _XML_LIMIT else None


# libxml2's nesting limit, which the XML reader keeps (pipeline.strict_xml)
_XML_DEPTH = 256
_TOO_DEEP = ("", "")


def _inside_itself(root: Any) -> tuple[str, str] | None:
    """(tag, tag of its child holding it) of an ElementTree element found inside itself, None
    when the elements form a tree (lxml refuses such an append; ElementTree takes it);
    _TOO_DEEP when they nest deeper than the XML reader reads."""
    done: set[int] = set()  # elements walked to the end: met again, they hold no loop
    path = {id(root)}
    stack = [(root, iter(root))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            path.discard(id(node))
            done.add(id(node))
        elif id(child) in path:
            below = stack[[id(n) for n, _ in stack].index(id(child)) + 1 :] or [(node, None)]
            return str(child.tag), str(below[0][0].tag)
        elif id(child) not in done:
            if len(stack) >= _XML_DEPTH:
                return _TOO_DEEP
            path.add(id(child))
            stack.append((child, iter(child)))
    return None


def _error_line(exc: BaseException, source: str) -> tuple[str, int | None]:
    text = traceback.format_exception_only(type(exc), exc)[-1].strip()
    line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == source:
            line = frame.lineno
    return text, line


def _threads_left() -> list[str]:
    """The names of the threads still running but the main one, which the interpreter would
    wait for at exit; daemon threads end with the process, once the result is written."""
    main = threading.main_thread()
    return sorted(t.name for t in threading.enumerate() if t is not main and not t.daemon)


def _settle(recursion_limit: int) -> None:
    """Undo what a generator set that would act in this file's code after it returned: a
    recursion limit too low for it (a RecursionError here), a timer (SIGALRM ending it)."""
    sys.setrecursionlimit(recursion_limit)
    for timer, number in (
        (signal.ITIMER_REAL, signal.SIGALRM),
        (signal.ITIMER_VIRTUAL, signal.SIGVTALRM),
        (signal.ITIMER_PROF, signal.SIGPROF),
    ):
        signal.setitimer(timer, 0)
        signal.signal(number, signal.SIG_IGN)


def _run(source: str, returned: Any) -> dict[str, Any]:
    recursion_limit = sys.getrecursionlimit()
    try:
        namespace = runpy.run_path(source, run_name="__gen_srdf__")
        function = namespace.get("gen_srdf")
        if not callable(function):
            return {"status": "no_function"}
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            signature = None
        if signature is not None and any(
            p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            for p in signature.parameters.values()
        ):
            return {"status": "takes_arguments", "signature": str(signature)}
        envelope = function()
        returned.write(b"1")
        _settle(recursion_limit)
        left = _threads_left()
    except SystemExit as exc:
        return {"status": "exited", "code": repr(exc.code)}
    except _Refused:
        return {"status": "refused"}
    except BaseException as exc:
        text, line = _error_line(exc, source)
        return {"status": "raised", "error": text, "line": line}
    if not isinstance(envelope, dict):
        if inspect.iscoroutine(envelope):
            envelope.close()  # never run: no "never awaited" RuntimeWarning naming this file
        return {"status": "ok", "envelope": type(envelope).__name__, "threads_left": left}
    # read as the dict it is, through dict's own methods: a subclass's __getitem__ or __iter__,
    # a key's __str__, is the generator's code, and would run here, after it returned
    keys = list(dict.__iter__(envelope))
    result: dict[str, Any] = {
        "status": "ok",
        "envelope": "dict",
        "keys": sorted(str.__str__(k) for k in keys if isinstance(k, str)),
        "other_keys": sorted({type(k).__name__ for k in keys if not isinstance(k, str)}),
        "threads_left": left,
    }
    if dict.__contains__(envelope, "xml"):
        try:
            result["xml_kind"], result["xml"] = _serialise(dict.__getitem__(envelope, "xml"))
        except Exception as exc:  # e.g. ElementTree meeting a non-string attribute value
            result["xml_kind"], result["xml"] = "unserialisable", _error_line(exc, source)[0]
        if result["xml_kind"] in ("string", "element"):
            size = _utf8_size(result["xml"])
            if size is not None:
                result["xml_kind"], result["xml"] = "too_large", size
    if dict.__contains__(envelope, "urdf"):
        urdf = dict.__getitem__(envelope, "urdf")
        result["urdf"] = str.__str__(urdf) if isinstance(urdf, str) else None
        result["urdf_type"] = type(urdf).__name__
    return result


def main() -> None:
    """Run the source, write the result JSON, exit 0."""
    source, result_path = os.path.abspath(sys.argv[1]), sys.argv[2]
    repo = os.path.realpath(sys.argv[3]) if len(sys.argv) > 3 else None
    # the interpreter's folders are code, not data: a virtual environment in the checkout
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    allowed = [os.path.realpath(p) for p in [*prefixes, *sys.argv[4:]]]
    scope = _Scope(os.path.dirname(os.path.realpath(source)), repo, allowed)
    sys.path.insert(0, os.path.dirname(source))
    attempts: list[str] = []
    spawns: list[str] = []
    reads: list[str] = []
    with (
        open(result_path, "w", encoding="utf-8") as out,
        open(f"{result_path}.returned", "wb", buffering=0) as returned,
    ):
        _install_guard(attempts, spawns, reads, scope)
        # the second run (generate.py gives it hash seed 1) lists folders in reverse order
        _order_listings(descending=os.environ.get("PYTHONHASHSEED", "0") != "0")
        result = _run(source, returned)
        result["write_attempts"] = attempts
        result["spawn_attempts"] = spawns
        result["read_attempts"] = reads
        json.dump(result, out)
        out.flush()


def _exit(status: int) -> None:
    """End the process now: not waiting for the threads a generator left running (the finding
    names them) nor running the exit handlers it registered, which could print or hang."""
    for stream in (_STDOUT, _STDERR):
        with contextlib.suppress(Exception):  # a closed stream: nothing left to flush
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    try:
        main()
    except BaseException:
        traceback.print_exc(file=_STDERR)
        _exit(1)
    _exit(0)
