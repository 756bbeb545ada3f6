"""A stop the command received (SIGTERM or SIGHUP), kept as data the layers can read.

The command line's handler raises :class:`Terminated` in the main thread, so the clean-up Ctrl-C gets runs (no partial
output, no temporary folder left, the worker processes stopped). But CPython swallows an exception raised while it runs
a Python callback from C ("Exception ignored in ..."): a SIGTERM that landed in ``logging``'s after-fork hook while a
pool forked its workers was lost, and the command went on to write its outputs and exit 0 or 1. So the handler also
notes the signal here (:func:`note`), :class:`analyzer.logs.OutputSet` publishes nothing once one was noted, and the
command line's exit code says it (:func:`received`)."""

from __future__ import annotations

import faulthandler
import sys

_received: int | None = None
#: Seconds a stopped command has to finish its clean-up before every thread's stack is written to standard error
#: (:func:`note`): a clean-up that hangs then says where, instead of waiting in silence for the scheduler's SIGKILL
#: (one did: a pool's workers nobody told to stop, now ended by ``validate.shut_down``; docs/design.md).
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
