"""doit's extensions: a reporter printing refused input as findings; a content-based checker."""

from __future__ import annotations

import atexit
import functools
import os
import time
from pathlib import Path
from typing import Any

from doit.dependency import FileChangedChecker
from doit.exceptions import TaskError, UnmetDependency
from doit.globals import Globals
from doit.reporter import ConsoleReporter

from pipeline.digestcache import OUTPUTS
from pipeline.digests import COPY_BUDGET, Digests
from pipeline.doitdb import DatabaseChanges
from pipeline.failures import reader_left
from pipeline.filesig import RACY_SECONDS, changed_at, stat_signature
from pipeline.outputs import OutputRecord


class ContractFailure(TaskError):  # type: ignore[misc]
    """A task refused bad input; its message is the finding lines."""


class FindingsReporter(ConsoleReporter):  # type: ignore[misc]
    """doit's console reporter, printing refused input as finding lines without a traceback."""

    desc = "console, with bad input printed as finding lines"

    def __init__(self, outstream: Any, options: Any) -> None:
        """doit's console reporter; its run may answer doit's checks with the output record's
        stats, since this reporter says when a step ran (another --reporter does not)."""
        super().__init__(outstream, options)
        output_record(os.getcwd()).reported = True

    def write(self, text: str) -> None:
        """Write as doit does; once the reader is gone (`doit | head -1`), the build goes on
        without a report rather than stopping with a BrokenPipeError traceback (exit 3)."""
        try:
            super().write(text)
        except BrokenPipeError:
            reader_left(self.outstream)

    def execute_task(self, task: Any) -> None:
        """Report as doit does; from here on, outputs are stated afresh (see outputs.py). A
        group (no actions) runs on every doit, after its steps, and writes nothing."""
        super().execute_task(task)
        if task.actions:
            output_record(os.getcwd()).step_ran()

    def add_success(self, task: Any) -> None:
        """Report as doit does; remember what a build step left (here, in the parent process,
        since with `doit -n` the step itself runs in a worker)."""
        super().add_success(task)
        record = output_record(os.getcwd())
        if task.actions:
            record.step_ran()
        stamp = (task.meta or {}).get("stamp")
        if stamp is not None:
            record.note(task.name, stamp, _saved_digests(task))

    def add_failure(self, task: Any, fail: Any) -> None:
        """Print refused input as finding lines, skip its knock-on failures, others as doit does."""
        if task.actions:  # a failed step may have written some of its outputs
            output_record(os.getcwd()).step_ran()
        if isinstance(fail, ContractFailure):
            self.write(f"{fail.message}\n")
        elif isinstance(fail, UnmetDependency):
            # a cell whose robot failed: what is wrong in its own files is said now, not
            # only once the robot is mended
            own_checks = (task.meta or {}).get("own_checks")
            findings = [] if own_checks is None else own_checks(Path.cwd())
            if findings:
                from pipeline.findings import render

                self.write(f"{render(findings)}\n")
        else:
            super().add_failure(task, fail)


def _saved_digests(task: Any) -> dict[str, str]:
    """The digest doit just saved for each of a task's file_dep (read after the step ran)."""
    manager = Globals.dep_manager
    out: dict[str, str] = {}
    for dep in task.file_dep if manager is not None else ():
        state = manager._get(task.name, dep)
        if isinstance(state, (list, tuple)) and len(state) == 3:
            out[dep] = state[2]
    return out


# the stat of an input this user may not stat: matches no saved state (size 0, no times)
UNSTATED = os.stat_result((0,) * 10)
# the stat of an input that is gone (a removed srdf.py or robot.urdf): changed from any state
ABSENT = os.stat_result((0,) * 10)


class ContentChecker(FileChangedChecker):  # type: ignore[misc]
    """doit's md5 checker logic (stat, then size, then content) on the shared SHA-256 cache.

    doit's own MD5Checker hashes a touched file once for every task that depends on it and never
    refreshes the state of tasks it skips, so one `touch` costs a re-hash on every later run.
    Here the content hash comes from the process-wide, stat-keyed digest cache the stamps use,
    and a touched but unchanged file gets its saved stat signature refreshed.
    """

    def __init__(self) -> None:
        super().__init__()
        self.changes: DatabaseChanges | None = None  # told when a saved state is refreshed
        # A source (outside build/) is an input of many steps (a URDF of 14) and no step writes
        # it, so one stat serves them all; an output of one step, read by the next, is not kept.
        self.sources: dict[str, os.stat_result] = {}
        # But until a step of this run is reported run (the record then empties it), an output
        # is as the output record stated it while doit loaded the tasks: a no-op states each
        # target and stamp once, not three times.
        # (only with this FindingsReporter: `doit -r executed-only` would never empty them)
        self.record = output_record(os.getcwd())
        self.outputs = self.record.stats
        # path -> (the stat given, its signature): a source's one stat serves up to 14 steps
        self.signatures: dict[str, tuple[os.stat_result, str]] = {}
        self.digests: Digests | None = None  # the process's digest cache, once first needed
        # path -> (the stat given, the digest found, whether out of the racy window): a touched
        # source's content is looked up once for the up to 14 steps that read it
        self.contents: dict[str, tuple[os.stat_result, str, bool]] = {}

    def signature(self, path: str, info: os.stat_result) -> str:
        """stat_signature(info), made once per stat taken (a touched source's, three times per
        step that reads it before)."""
        known = self.signatures.get(path)
        if known is not None and known[0] is info:
            return known[1]
        found = stat_signature(info)
        self.signatures[path] = (info, found)
        return found

    def known_digests(self) -> Digests:
        """The digest cache of the checkout doit runs in (asked for once, not per file)."""
        if self.digests is None:
            self.digests = digest_cache(os.getcwd())
        return self.digests

    def exists(self, path: str) -> bool:
        """Whether a target exists (a step's own targets are checked before it runs)."""
        return (self.record.reported and path in self.outputs) or os.path.exists(path)

    def info(self, path: str) -> Any:
        """The stat of a dependency; a dangling link's own, so that its step runs and refuses it.

        doit would otherwise stop the whole run with its own error ("does not exist").
        """
        known = self.sources.get(path)
        if known is None and self.record.reported:
            known = self.outputs.get(path)
        if known is not None:
            return known
        try:
            found = os.stat(path)
            if not path.startswith(OUTPUTS):
                self.sources[path] = found
            return found
        except OSError:
            try:
                return os.lstat(path)
            except PermissionError:  # in a folder this user may not search: not "does not
                return UNSTATED  # exist"; a stat no state holds, so its step runs and says why
            except FileNotFoundError:  # gone since doit saved its state: the step runs and
                return ABSENT  # says file_missing, as it does on a run with no saved state
            except OSError as exc:
                raise self.CheckerError(str(exc)) from exc

    def check_modified(self, file_path: str, file_stat: Any, state: Any) -> bool:
        """Whether a dependency changed since `state` was saved."""
        if file_stat is ABSENT:
            return True
        timestamp, size, digest = state
        # the stat signature, not the mtime alone: a same-size edit whose mtime was put back
        # (cp -p, rsync -t, tar) still changes the ctime, so it is not taken for the saved state
        signature = self.signature(file_path, file_stat)
        if signature == timestamp:
            return False
        if file_stat.st_size != size:
            return True
        known = self.contents.get(file_path)
        if known is None or known[0] is not file_stat:
            # `digest` lets a copy of bytes this run already read be compared, not hashed again
            found = self.known_digests().of(file_path, file_stat, digest)
            settled = time.time() - changed_at(file_stat) / 1e9 > RACY_SECONDS
            known = self.contents[file_path] = (file_stat, found, settled)
        if known[1] != digest:
            return True
        if isinstance(state, list) and known[2]:
            # Same bytes, new stat. doit saves no state for a task it skips, so the next
            # run would prove this again; the json backend hands out the stored list and writes
            # it back at exit, so refreshing the signature here puts later runs on the fast path.
            # Not for a file changed this recently: it could change again within the clock's
            # granularity without its stat changing (as for the digest cache).
            state[0] = signature
            if self.changes is not None:
                self.changes.made = True
        return False

    def get_state(self, dep: str, current_state: Any) -> Any:
        """The (stat signature, size, SHA-256) of a dependency after its task ran."""
        info = os.stat(dep)
        if current_state and current_state[0] == stat_signature(info):
            return None
        return stat_signature(info), info.st_size, self.known_digests().of(dep, info)


@functools.cache
def digest_cache(root: str) -> Digests:
    """This process's digest cache, written back when doit exits."""
    known = Digests(Path(root), keep_bytes=COPY_BUDGET)
    atexit.register(known.save)
    return known


@functools.cache
def output_record(root: str) -> OutputRecord:
    """This process's record of what each step left in build/, written back when doit exits."""
    record = OutputRecord(Path(root))
    atexit.register(record.save)
    return record


def doit_workers_die_with_the_run() -> None:
    """Have the worker processes `doit -n` forks (its MRunner's) die with the run that forked
    them: killed with SIGKILL, doit cannot stop them, and they went on building without the lock.
    """
    from doit.runner import MRunner, Process

    from pipeline.parentdeath import die_with_parent

    work = MRunner.execute_task_subprocess
    if getattr(work, "dies_with_the_run", False):
        return

    def execute_task_subprocess(self: Any, *args: Any) -> Any:
        if self.Child is Process:  # a forked process, not one of `doit -P thread`'s threads
            import multiprocessing

            parent = multiprocessing.parent_process()  # the pid recorded before the fork
            if parent is not None and parent.pid is not None:
                die_with_parent(parent.pid)
        return work(self, *args)

    execute_task_subprocess.dies_with_the_run = True  # type: ignore[attr-defined]
    MRunner.execute_task_subprocess = execute_task_subprocess
