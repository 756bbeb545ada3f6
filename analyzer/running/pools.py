"""Process pools: their workers' start, their work in input order with a bounded number in flight, and their end.

A pool is a ``concurrent.futures.ProcessPoolExecutor`` used through its documented API only. Its workers leave
Ctrl-C to the parent and end themselves once the parent is gone (:func:`worker_start`). Every ``submit`` runs with
the stops deferred (:func:`analyzer.running.stops.deferred`): a submit may fork workers and start the pool's manager
thread, and a stop between the two would leave workers that nobody tells to stop (the command then waits for them
at its exit). So a stop always finds the pool either unstarted or whole, and :func:`shut_down` (``shutdown`` with the
queued work cancelled) ends it."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

from analyzer.running import stops

T = TypeVar("T")
R = TypeVar("R")

#: How often a pool worker looks whether its parent is still there (seconds).
PARENT_WATCH_S = 1.0


def worker_start() -> None:
    """A pool worker's start (the pool's ``initializer``): Ctrl-C is the parent's to handle, SIGTERM and SIGHUP end
    the worker (:func:`analyzer.running.stops.worker_defaults`), and the worker ends itself once its parent is gone
    (:func:`_end_with_parent`)."""
    stops.worker_defaults()
    _end_with_parent()


def _end_with_parent() -> None:
    """A thread of the worker that ends the process when its parent is gone (killed with SIGKILL, or by a signal it
    could not unwind from): the worker's result pipe is shared with its siblings, so it would never see the pipe
    close and would wait forever, holding its memory. Polls ``getppid`` (portable, unlike Linux's
    ``PR_SET_PDEATHSIG``, which fires when the *thread* that forked the worker ends)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(PARENT_WATCH_S)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


def new_pool(jobs: int, mp_context: Any = None) -> ProcessPoolExecutor:
    """A pool of ``jobs`` workers started with :func:`worker_start` (none forked before the first :func:`submit`)."""
    return ProcessPoolExecutor(max_workers=jobs, initializer=worker_start, mp_context=mp_context)


def submit(pool: ProcessPoolExecutor, fn: Callable[..., R], *args: Any) -> Future[R]:
    """``pool.submit(fn, *args)`` whole: a stop that arrives meanwhile acts once it returns."""
    with stops.deferred():
        return pool.submit(fn, *args)


def shut_down(pool: ProcessPoolExecutor) -> None:
    """End ``pool``: the work not started is dropped, the work started is waited for, the workers end."""
    pool.shutdown(wait=True, cancel_futures=True)


def ordered_map(fn: Callable[[T], R], tasks: Iterable[T], jobs: int) -> Iterator[R]:
    """``fn`` over ``tasks`` in a pool of ``jobs`` workers, results in task order, at most ``2 * jobs`` in flight
    (memory stays flat however many tasks). On an error, or a consumer that stops early, the tasks not started are
    dropped."""
    pool = new_pool(jobs)
    try:
        pending: deque[Future[R]] = deque()
        for t in tasks:
            pending.append(submit(pool, fn, t))
            while len(pending) > 2 * jobs:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        shut_down(pool)
