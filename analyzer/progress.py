"""Progress of long runs on standard error, only on a terminal: phase, count, total, rate and ETA (tqdm).

Commands open one ``Progress`` and move it through their phases (reading, analysing, signals,
writing); the layers below only ever see a plain ``on_progress(n)`` callback. When standard error
is not a terminal (a pipe, a log file, CI) nothing is printed at all.
"""

from __future__ import annotations

import gzip
import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import IO, Any

#: Phases in the order a command goes through them, as they are shown.
PHASES = ("reading", "analysing", "signals", "writing")
#: Phases that count nothing: shown with their elapsed time only.
UNCOUNTED = ("signals", "writing")
#: Inputs larger than this are not pre-counted (the count would cost more than it tells).
COUNT_LIMIT_BYTES = 512 * 1024 * 1024


def count_lines(files: Iterable[str], limit: int = COUNT_LIMIT_BYTES) -> int | None:
    """Lines in ``files`` (gzip read through), or None when unknown: standard input, unreadable, too big, or not a
    regular file. A named pipe (``<(zcat log.gz)``), a device or ``/dev/stdin`` is read once, by the command: counting
    its lines first took the stream, and the command then read nothing ("0 hands"), or waited for ever for a
    writer that was gone."""
    total = 0
    seen = 0
    for path in files:
        if path == "-":
            return None
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            opener: Callable[..., IO[bytes]] = gzip.open if path.endswith(".gz") else open  # type: ignore[assignment]
            with opener(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    total += chunk.count(b"\n")
                    seen += len(chunk)
                    if seen > limit:
                        return None
        except (OSError, EOFError, ValueError, zlib.error):
            return None  # the command reports the unreadable file itself
    return total


class Progress:
    """A tqdm bar on standard error when it is a terminal; every method is a no-op otherwise."""

    def __init__(self, command: str, *, unit: str = "hands", stream: IO[str] | None = None,
                 enabled: bool | None = None, min_interval: float = 0.25) -> None:
        self.command = command
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.min_interval = min_interval  # seconds between redraws
        self._bar: Any = None

    def phase(self, name: str, total: int | None = None, unit: str | None = None) -> Callable[[int], None] | None:
        """Start phase ``name`` (a fresh count towards ``total`` when known); returns the callback
        ``on_progress(n_done)`` for the layer doing the work, or None when nothing is shown."""
        self.close()
        if not self.enabled:
            return None
        from tqdm import tqdm

        self._bar = tqdm(total=total, desc=f"{self.command}: {name}", unit=" " + (unit or self.unit),
                         file=self.stream, dynamic_ncols=True, leave=False, mininterval=self.min_interval,
                         miniters=1 if self.min_interval == 0 else None,
                         bar_format="{desc} [{elapsed}]" if name in UNCOUNTED and total is None else None)
        return self.update_to

    def start(self, name: str) -> None:
        """Start phase ``name`` that reports no counts (for ``on_phase`` callbacks)."""
        self.phase(name)

    def update_to(self, n: int) -> None:
        """The phase has done ``n`` units in all (the layers report running counts)."""
        bar = self._bar
        if bar is not None and n > bar.n:
            bar.update(n - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:  # typing.Self is 3.11+; the package supports 3.10
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
