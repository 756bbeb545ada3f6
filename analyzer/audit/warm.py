"""Warm a Dask worker for the audit before its first task: the compiled kernels loaded, the per-process caches made.

A worker's first decision batch loads the analysis' compiled kernels from numba's cache, and its first player-table
task computes the skill scale's curve over the reference set (~1 s of CPU each process, the same every
time). On a LocalCluster that first player task ran while the client waited for the
pair signals' small tasks, so it held up the pair table by ~3 s. :func:`warm` does all of it on a few shipped hands,
in a thread of its own started as the worker starts (``dask_setup``: the audit's LocalCluster preloads this module,
``commands.audit.AUDIT_MODULES``): the worker takes its first batch at once (warming before it registered held the
whole cluster's start up by the warm-up's second), and the warm-up shares the core with the first batches, long before
the first player task. Caches only: no result depends on it, and a failure leaves the caches to the tasks.
"""

from __future__ import annotations

import os
import threading
from importlib import resources
from typing import Any

#: A few valid hands of the demo room (the data: analyzer/data), enough for every kernel of a batch and a player row.
WARMUP_FILE = "warmup-hands.jsonl"

#: Times :func:`warm` ran in this process (a test checks that every worker of a cluster ran it once).
warmed = 0
#: The process that ran :func:`warm` last (a worker forked from a warmed process has its parent's id here).
warmed_by: int | None = None
#: Set when the warm-up thread of :func:`dask_setup` is over (done or failed).
over = threading.Event()


def _warmup_items() -> list[Any]:
    """The shipped warm-up hands, checked (the valid ones)."""
    from analyzer.validate import generate_checked

    with resources.as_file(resources.files("analyzer") / "data" / WARMUP_FILE) as path:
        return [it for it in generate_checked([str(path)]) if it.ok]


def warm() -> None:
    """Analyse the shipped hands at the default settings and run the audit's per-batch and per-player steps on them."""
    global warmed, warmed_by
    import pandas as pd

    from analyzer.analysis.decisions import analyse
    from analyzer.analysis.players import REF_WEIGHT, player_rows
    from analyzer.audit.outcomes import SEATING_COLUMNS, outcome_row
    from analyzer.audit.signals import ThinkStats
    from analyzer.audit.stream import build_chunk
    items = _warmup_items()
    rows = analyse(items)  # the defaults every command uses (docs/methods/decisions.md)
    build_chunk(rows)  # the pair signals' chunk of a batch (audit.on_dask: next to the batch's rows)
    ThinkStats().add_decisions(rows)
    seated = pd.DataFrame([outcome_row(it) for it in items], columns=list(SEATING_COLUMNS))
    me = rows["player"].iloc[0]
    player_rows(rows[rows["player"] == me], seated, whole=True, ref_weight=0.0 if REF_WEIGHT is None else REF_WEIGHT)
    warmed += 1
    warmed_by = os.getpid()


def warm_quietly() -> None:
    """:func:`warm`, its failure ignored (caches only); sets :data:`over`."""
    try:
        warm()
    except Exception:  # noqa: BLE001  # caches only: the tasks make them as before
        pass
    finally:
        over.set()


def warm_reasons() -> None:
    """Load, in this process, the kernel the shown rows' reasons are scored with (``strategy.score``, as
    :func:`analyzer.analysis.reasons.fill_reasons` does at the audit's end). Where the analysis runs on Dask
    workers, the command's own process never loads it, and its first reason would wait ~0.75 s for numba (its first
    kernel in that process) while every worker is idle."""
    from analyzer.strategy import score
    from analyzer.variants.bieqi import DEFAULT_RULES, VARIANT, State

    rec = _warmup_items()[0].record
    deal = VARIANT.deal_masks(rec, [])
    if deal is not None:
        score(State(deal, rec.rules or DEFAULT_RULES))


def warm_reasons_soon() -> threading.Thread:
    """:func:`warm_reasons` in a thread of its own, its failure ignored (a cache only); join it before exiting.
    While numba's modules import they hide the scipy modules not yet loaded from every thread (``analyzer.kernels``),
    so an import of scipy in another thread meanwhile would fail: the modules it needs are imported here first, on
    the calling thread, scipy's linear algebra among them (already imported by the audit: then nothing is hidden)."""
    import scipy.linalg  # noqa: F401

    import analyzer.strategy  # noqa: F401

    def run() -> None:
        try:
            warm_reasons()
        except Exception:  # noqa: BLE001  # the reasons load the kernel themselves, as before
            pass

    thread = threading.Thread(target=run, name="bieqi-warm-reasons", daemon=True)
    thread.start()
    return thread


def dask_setup(worker: Any) -> None:
    """distributed's preload hook: warm the worker in a thread of its own (the worker takes tasks meanwhile), unless
    it was forked from a process warmed already (:mod:`analyzer.audit.prewarm`)."""
    if warmed:
        return
    # scipy's linear algebra first, here: the warm-up imports numba, whose modules hide the scipy modules not yet
    # loaded from every thread while they import (analyzer.kernels): a task importing scipy.stats meanwhile would fail
    import scipy.linalg  # noqa: F401

    threading.Thread(target=warm_quietly, name="bieqi-warm", daemon=True).start()
