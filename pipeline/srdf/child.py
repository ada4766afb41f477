"""Child-process side of running a `gen_srdf()` source; run as a script, imports no pipeline code.

Usage: PYTHONHASHSEED=0 python -s -B child.py SOURCE RESULT_JSON [REPO_ROOT [ALLOWED_FOLDER ...]]
(environment: run_child.py), RESULT_JSON.meshes holding a JSON list of the files of meshes/
beside SOURCE that the build lists (paths relative to SOURCE's folder). Writes one JSON object to
RESULT_JSON:
{"status": "ok" | "raised" | "exited" | "no_function" | "takes_arguments", ...}, and ends at
once: the interpreter's own exit would wait for the threads a generator left running. Once
gen_srdf() returns, RESULT_JSON.returned holds a byte: what ends or holds the process later (a
method of what it returned) is not its not returning.
An audit hook refuses file writes and process spawns while the source runs, and reads of files
that are no input of the srdf step: in the robot's folder anything but its modules, robot.urdf
and those files of meshes/ (inputs of the urdf step, whose stamp the srdf step's inputs hold);
in the repository anything outside the robot's folder but the interpreter's own
folders and the ALLOWED_FOLDERs (and lxml's parsers, which read files unseen by the hook, check
each file they load by the same rule). A generator computes XML and returns it; the CLI writes the
file.
A folder's listing (os.listdir, os.scandir) comes sorted by name, in reverse under a hash seed
other than 0, and the host is named gen-srdf-a, or gen-srdf-b under such a seed: generate.py
compares the two runs.
The guard (child_guard.py) and the reading of the returned XML (child_xml.py) are modules beside
this file, which it loads from their files (`_sibling`): they import no pipeline code either.
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
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import runpy  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

# the standard streams as they were before the generator ran, which may replace sys.stdout
_STDOUT, _STDERR = sys.stdout, sys.stderr


def _sibling(name: str) -> Any:
    """A module of this folder, loaded from its file: not found on sys.path (this folder is off
    it) nor imported as a part of the pipeline package (whose __init__ imports the compiler),
    and read before the guard is installed."""
    path = os.path.join(_HERE, f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_srdf_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    from pipeline.srdf import child_guard as guard
    from pipeline.srdf import child_xml as xmltext
else:
    guard, xmltext = _sibling("child_guard"), _sibling("child_xml")


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


def _decodable(source: str) -> None:
    """Raise the SyntaxError `python SOURCE` raises for a byte the source's encoding (UTF-8
    unless declared) cannot decode: runpy compiles the bytes, and compile() lets one in a
    comment pass. The message names no file: a finding names the source by its repository
    path, and the place is the line."""
    import io
    import tokenize

    with open(source, "rb") as file:
        data = file.read()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # a first line not UTF-8, or a declaration compile() then refuses
        encoding = "utf-8"
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = ascii(chr(data[exc.start]))
        declared = "but no encoding declared" if encoding == "utf-8" else f"in {encoding}"
        error = SyntaxError(f"Non-UTF-8 code starting with {byte} on line {line}, {declared}")
        error.lineno = line
        raise error from None


def _run(source: str, returned: Any) -> dict[str, Any]:
    recursion_limit = sys.getrecursionlimit()
    try:
        _decodable(source)
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
    except guard.Refused:
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
            result["xml_kind"], result["xml"] = xmltext.serialise(dict.__getitem__(envelope, "xml"))
        except Exception as exc:  # e.g. ElementTree meeting a non-string attribute value
            result["xml_kind"], result["xml"] = "unserialisable", _error_line(exc, source)[0]
        if result["xml_kind"] in ("string", "element"):
            size = xmltext.utf8_size(result["xml"])
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
    with open(f"{result_path}.meshes", encoding="utf-8") as file:
        meshes = json.load(file)
    # the source itself, whatever its name (`pipeline srdf .draft.py`), and the meshes
    inputs = [os.path.basename(os.path.realpath(source)), *meshes]
    scope = guard.Scope(os.path.dirname(os.path.realpath(source)), repo, allowed, inputs)
    sys.path.insert(0, os.path.dirname(source))
    attempts: list[str] = []
    spawns: list[str] = []
    reads: list[str] = []
    with (
        open(result_path, "w", encoding="utf-8") as out,
        open(f"{result_path}.returned", "wb", buffering=0) as returned,
    ):
        guard.install_guard(attempts, spawns, reads, scope)
        # the second run (generate.py gives it hash seed 1) lists folders in reverse order, and
        # names the host otherwise
        second = os.environ.get("PYTHONHASHSEED", "0") != "0"
        guard.order_listings(descending=second)
        guard.name_host("gen-srdf-b" if second else "gen-srdf-a")
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
