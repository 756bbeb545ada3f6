"""The stop signals (Ctrl-C's SIGINT, SIGTERM, SIGHUP): every handler the analyzer sets, and a stop received, kept
as data the layers can read.

The command line's handler (:func:`unwinding`) raises :class:`Terminated` in the main thread, so the clean-up Ctrl-C
gets runs (no partial output, no temporary folder left, the worker processes stopped). But CPython swallows an
exception raised while it runs a Python callback from C ("Exception ignored in ...", e.g. in ``logging``'s after-fork
hook), and the command would go on to write its outputs. So the handler also notes the signal here (:func:`note`),
:class:`analyzer.logs.OutputSet` publishes nothing once one was noted, and the command line's exit code says it
(:func:`received`). A pool's workers leave Ctrl-C to their parent (:func:`worker_defaults`); a pool's start is never
cut in half by a stop (:func:`deferred`); a store's commit, once begun, completes (:func:`ignored`)."""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_received: int | None = None
#: Seconds a stopped command has to finish its clean-up before every thread's stack is written to standard error
#: (:func:`note`): a clean-up that hangs then says where, instead of waiting in silence for the scheduler's SIGKILL
#: (a pool's workers that nobody told to stop would hang it so).
STOP_GRACE_S = 60.0


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a job scheduler's stop, ``timeout``, a closed terminal), raised in the main thread like
    Ctrl-C's KeyboardInterrupt so the same clean-up runs: no partial output, no temporary file or folder left, the
    worker processes stopped. Its exit code is 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.exit_code = 128 + signum


def note(signum: int) -> None:
    """The signal ``signum`` arrived (called by the handler before it raises). Also arms faulthandler's watchdog (a
    thread of its own in C: no Python lock the signal may have interrupted is taken): if the process still runs
    :data:`STOP_GRACE_S` seconds later, every thread's stack goes to standard error, once; the command is not ended
    by it (its exit code stays the stop's, whenever it comes)."""
    global _received
    first = _received is None
    _received = signum
    if first:
        try:  # faulthandler imported with this module: nothing is imported in the signal's handler
            faulthandler.dump_traceback_later(STOP_GRACE_S, repeat=False, file=sys.stderr, exit=False)
        except (ValueError, OSError, AttributeError, RuntimeError):  # no usable standard error: nothing to say it on
            pass


def received() -> int | None:
    """The stop signal that arrived in this process, if any."""
    return _received


def forget() -> None:
    """No stop noted (the command line's handlers are put back: a caller that goes on after it, e.g. a test)."""
    global _received
    if _received is not None:
        faulthandler.cancel_dump_traceback_later()
    _received = None


def raise_if_received() -> None:
    """:class:`Terminated` of the stop that arrived, if one did (its own exception may have been swallowed)."""
    if _received is not None:
        raise Terminated(_received)


#: The signals that stop a command: Ctrl-C, a job scheduler's or ``timeout``'s SIGTERM, a closed terminal's SIGHUP.
STOPS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _stop(signum: int, frame: Any) -> None:
    note(signum)  # kept also when CPython swallows the exception
    raise Terminated(signum)


def unwinding() -> dict[int, Any]:
    """SIGTERM and SIGHUP raise :class:`Terminated` instead of ending the process on the spot (their default action
    skips every ``finally``: temporary folders would stay behind, and the pool's workers, which never see their parent
    go, would run on). A signal the caller set to be ignored (``nohup`` ignores SIGHUP) stays ignored; only in the main
    thread (a test's runner may call the command line from another). Returns what was replaced, for
    :func:`unwinding_back`."""
    replaced: dict[int, Any] = {}
    if not _in_main_thread():
        return replaced
    for sig in STOPS:
        if sig != signal.SIGINT and signal.getsignal(sig) == signal.SIG_DFL:
            replaced[sig] = signal.signal(sig, _stop)
    if replaced:
        before = sys.unraisablehook

        def quiet(unraisable: Any) -> None:  # a stop swallowed in a callback: noted, the command stops at its outputs
            if not isinstance(unraisable.exc_value, Terminated):
                before(unraisable)

        sys.unraisablehook = quiet
        replaced[-1] = before  # put back by unwinding_back
    return replaced


def unwinding_back(replaced: dict[int, Any]) -> None:
    """The handlers :func:`unwinding` replaced, back, and no stop noted (a caller that goes on after the command)."""
    for sig, handler in replaced.items():
        if sig == -1:
            sys.unraisablehook = handler
        else:
            signal.signal(sig, handler)
    forget()


def worker_defaults() -> None:
    """In a pool's worker as it starts: Ctrl-C is left to the parent, which stops the workers quietly (no traceback
    from each worker); SIGTERM and SIGHUP, forked with the parent's handlers, end the worker at once (the pool stops
    its workers with SIGTERM: they hold nothing to clean up)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in STOPS:
        if sig != signal.SIGINT:
            signal.signal(sig, signal.SIG_DFL)


@contextmanager
def deferred() -> Iterator[None]:
    """The stops that arrive inside the block act when it ends: the block is never cut in half. For a step that must
    be whole to be undone, such as a pool's ``submit`` (which may fork workers and start the pool's manager thread: a
    stop between the two left workers that nobody told to stop). Each stop's own handler then runs, as it would have
    at once (Ctrl-C's KeyboardInterrupt, :class:`Terminated`); a stop that is ignored or left to its default action
    is not touched. In the main thread only: signals are handled there, so another thread's block is never cut."""
    if not _in_main_thread():
        yield
        return
    arrived: list[int] = []
    held: dict[int, Any] = {}

    def hold(signum: int, frame: Any) -> None:
        arrived.append(signum)

    for sig in STOPS:
        handler = signal.getsignal(sig)
        if callable(handler):
            held[sig] = handler
            signal.signal(sig, hold)
    try:
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)
        if arrived:
            held[arrived[0]](arrived[0], None)


def ignored() -> dict[int, Any]:
    """Ignore Ctrl-C, SIGTERM and SIGHUP from now on (in the main thread); the handlers they replaced, for
    :func:`restore`."""
    previous: dict[int, Any] = {}
    if not _in_main_thread():
        return previous
    for sig in STOPS:
        previous[sig] = signal.signal(sig, signal.SIG_IGN)
    return previous


def restore(previous: dict[int, Any] | None) -> None:
    """The handlers :func:`ignored` replaced, back."""
    for sig, handler in (previous or {}).items():
        signal.signal(sig, handler)
