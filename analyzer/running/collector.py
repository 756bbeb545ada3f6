"""The cyclic garbage collector's settings: for the long commands (``audit``, ``players``, ``decisions``: :func:`settle`),
the command line's start (:func:`relax`) and the validator's loop (:func:`few_collections`).

CPython collects its youngest generation every 700 container allocations, the middle one every 10th time and the whole
heap every 10th time of that (subject to its own rule: only once the objects that survived since the last full
collection are a quarter of the heap). The whole heap of an audit is mostly what its imports made (pandas, scipy,
numba, distributed: ~1 million objects that are never garbage), so each full collection re-scanned them: in the
audit's own process at 4,000 hands, ~1.0 CPU-s of full collections and ~1.4 s of collecting in all
(``benchmarks/bench_gc.py``). :func:`settle` moves what exists when it is called (the imports) out of every later
collection (``gc.freeze``) and collects the youngest generation every :data:`YOUNG` allocations, the middle and the
whole heap at the default ratios after it. Garbage is still collected: reference counting frees every acyclic object
at once, and cycles wait a little longer (a full collection every ~1 million allocations instead of every
~70,000). Nothing the commands compute depends on when the collector runs.

Importing those packages is itself ~300 young and 3 full collections at CPython's default (~0.5 CPU-s), so the
command line relaxes the collector (:func:`relax`: the thresholds alone) before any command imports its layers, and
so does the process a LocalCluster's workers are forked from, before its imports (:mod:`analyzer.running.relaxed_gc`).
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Container allocations between two collections of the youngest generation (CPython's default: 700).
YOUNG = 10_000


#: Whether :func:`settle` ran in this process (it runs once: a process that runs commands in turn, as the tests do,
#: freezes the first one's imports only).
settled = False


def relax() -> None:
    """Collect the youngest generation every :data:`YOUNG` allocations (the middle and the whole heap at CPython's
    ratios after it)."""
    gc.set_threshold(YOUNG, 10, 10)


def settle() -> None:
    """Once a process, when the command's imports are done: collect what is garbage already, freeze the rest (so it is
    never frozen unreachable), and collect the youngest generation every :data:`YOUNG` allocations from now on."""
    global settled
    if settled:
        return
    settled = True
    gc.collect()
    gc.freeze()
    relax()


#: The validator's thresholds while it checks (:func:`few_collections`).
FEW = (100_000, 20, 100)


@contextmanager
def few_collections() -> Iterator[None]:
    """Run the cyclic GC rarely (:data:`FEW`) inside the block: a batch of checked lines holds ~100k small acyclic
    objects, and the default thresholds make the collector re-scan them so often that it costs a third of the run.
    The thresholds before are put back after it."""
    old = gc.get_threshold()
    gc.set_threshold(*FEW)
    try:
        yield
    finally:
        gc.set_threshold(*old)


#: Whether :func:`freeze_at_exit` registered its hook in this process.
_freeze_registered = False


def freeze_at_exit() -> None:
    """Freeze the heap when the interpreter exits, before its last collections: they walk every object numpy and
    numba made (hundreds of thousands), ~0.1-0.3 s of wall time after a command's last line. Nothing is skipped that
    matters: outputs are written and closed and the workers stopped before; only objects held in cycles are left for
    the operating system to free. Registered once a process (a test runner calling a command keeps its collector as
    it is until it exits)."""
    global _freeze_registered
    if not _freeze_registered:
        atexit.register(gc.freeze)
        _freeze_registered = True
