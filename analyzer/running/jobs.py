"""How many worker processes a command starts.

The rule, for every command: one process (this one) for a stream or an input smaller than the command's threshold
(starting workers costs more than they save there), else every core this process may run on (its CPU affinity, as a
job scheduler or ``taskset`` sets it), capped by the command's most. The results never depend on the number: the
same input gives the same bytes with 1 or 16 workers."""

from __future__ import annotations

import os
from collections.abc import Iterable

#: ``validate``: worth workers from 32 MB of logs, at most 4 (its work per byte is small: more workers wait on the
#: reading and on the parent that merges their results).
VALIDATE_MIN_BYTES = 32 << 20
VALIDATE_MOST = 4
#: The decision analysis (``decisions``, ``players``, ``audit``): worth workers from 256 KB (a few hundred hands:
#: each worker loads numba's compiled kernels, ~1 s), on every core.
ANALYSIS_MIN_BYTES = 256 << 10


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def default_jobs(paths: Iterable[str], min_bytes: int, most: int | None = None) -> int:
    """Worker processes for ``paths`` (``"-"``: standard input): 1 when they hold less than ``min_bytes`` or are
    read from a stream, else :func:`usable_cores`, at most ``most``."""
    paths = list(paths)
    size = sum(os.path.getsize(p) for p in paths if p != "-" and os.path.exists(p))
    if size < min_bytes or "-" in paths:
        return 1
    return usable_cores() if most is None else min(most, usable_cores())
