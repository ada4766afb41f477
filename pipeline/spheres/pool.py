"""The fitting pool: worker processes that fit links in parallel and stop with the run."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from pipeline.failures import WorkerDied
from pipeline.parentdeath import die_with_parent

Job = TypeVar("Job")
Result = TypeVar("Result")


def pool_map(
    function: Callable[[Job], Result],
    jobs: Sequence[Job],
    workers: int,
    done: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Each job's result, computed in `workers` worker processes; stopped, they are killed.

    `done` is called with each result as it is taken, in the order of the jobs.

    No future is ever cancelled: Python 3.11's pool thread, finding a worker dead while a
    cancelled future was pending, printed `InvalidStateError: CANCELLED` and a stack beside the
    run's `doit: interrupted` (pool.map cancels them when Ctrl-C meets it). Ctrl-C reaches only
    this process (the workers ignore it), which kills the workers itself: a pending future then
    fails as BrokenProcessPool, which no one waits for.
    """
    pool = fitting_pool(workers)
    try:
        futures = [pool.submit(function, job) for job in jobs]
        results = []
        for future in futures:
            results.append(future.result())
            if done is not None:
                done(results[-1])
        pool.shutdown()
    except BrokenProcessPool:  # a worker killed (out of memory): said, not a traceback
        _kill(pool)
        raise WorkerDied from None
    except BaseException:  # Ctrl-C, SIGTERM's SystemExit, a fit's own error: stop at once
        _kill(pool)
        raise
    return results


def _kill(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers and wait until its thread has failed their pending futures."""
    for process in list((pool._processes or {}).values()):
        try:
            process.kill()
        except ValueError:  # closed: it was joined already
            continue
    pool.shutdown()


class _FittingPool(ProcessPoolExecutor):
    """A ProcessPoolExecutor whose workers are started with Ctrl-C held back.

    A worker is started in submit(); a SIGINT met before its initializer set Ctrl-C aside
    printed `Process ForkProcess-1:` and a stack. Held (blocked) across the start, it waits in
    the worker until _worker_start has set it aside, and is then dropped.
    """

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Submit as ProcessPoolExecutor does, with SIGINT blocked while it starts workers."""
        if not hasattr(signal, "pthread_sigmask"):
            return super().submit(fn, *args, **kwargs)
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            return super().submit(fn, *args, **kwargs)
        finally:  # a Ctrl-C met meanwhile is raised here, in the run, as it would have been
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def fitting_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of fitting worker processes that ignore Ctrl-C and die with their parent."""
    # forked on Linux (what _worker_start's parent check counts on), as before Python 3.14
    context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
    return _FittingPool(
        max_workers=workers, mp_context=context, initializer=_worker_start, initargs=(os.getpid(),)
    )


def _worker_start(parent: int) -> None:
    """In a new fitting worker: ignore Ctrl-C, and die with the process that forked it.

    Ctrl-C signals the whole process group: the run says `interrupted` once and kills its
    workers (pool_map), and a worker that died of it as well raced the pool's own thread into
    a stack. doit -n's own workers, stopped with the run, are killed (SIGTERM) before they can
    end their pools: their fitting workers would wait for the next link forever.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C held back until now is dropped
    if hasattr(signal, "pthread_sigmask"):  # held back by _FittingPool.submit until now
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    die_with_parent(parent)
