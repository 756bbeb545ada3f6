"""Progress of long runs on standard error, only on a terminal: phase, count, total, rate and ETA (tqdm).

Commands open one ``Progress`` and move it through their phases (reading, analysing, signals,
writing); the layers below only ever see a plain ``on_progress(n)`` callback, or ``on_steps(phase, done, total)``
(:meth:`Progress.steps`) for work that names its own phases and totals. Every phase the audit shows has a total, so
tqdm shows its rate and ETA. When standard error is not a terminal (a pipe, a log file, CI) nothing is printed at all;
a ``listener`` sees every phase and count either way (the tests read the bar's events through it).
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


def count_lines(files: Iterable[str], limit: int = COUNT_LIMIT_BYTES,
                on_progress: Callable[[int], None] | None = None) -> int | None:
    """Lines in ``files`` (gzip read through), or None when unknown: standard input, unreadable, too big, or not a
    regular file. A named pipe (``<(zcat log.gz)``), a device or ``/dev/stdin`` is read once, by the command: counting
    its lines first took the stream, and the command then read nothing ("0 hands"), or waited for ever for a
    writer that was gone. ``on_progress(bytes)``: the files' bytes read so far (of a gzip file, its compressed
    bytes), towards :func:`input_bytes`."""
    total = 0
    seen = 0
    base = 0
    for path in files:
        if path == "-":
            return None
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            with open(path, "rb") as raw:
                f: IO[bytes] = gzip.GzipFile(fileobj=raw) if path.endswith(".gz") else raw  # type: ignore[assignment]
                while chunk := f.read(1 << 20):
                    total += chunk.count(b"\n")
                    seen += len(chunk)
                    if seen > limit:
                        return None
                    if on_progress is not None:
                        on_progress(base + raw.tell())
                base += raw.tell()
        except (OSError, EOFError, ValueError, zlib.error):
            return None  # the command reports the unreadable file itself
    return total


def input_bytes(files: Iterable[str]) -> int | None:
    """The bytes :func:`count_lines` reads of ``files`` (regular files only; None for standard input or another
    kind of file, whose size is unknown)."""
    total = 0
    for path in files:
        try:
            st = os.stat(path) if path != "-" else None
        except OSError:
            return None
        if st is None or not stat.S_ISREG(st.st_mode):
            return None
        total += st.st_size
    return total


class Progress:
    """A tqdm bar on standard error when it is a terminal; every method is a no-op otherwise."""

    def __init__(self, command: str, *, unit: str = "hands", stream: IO[str] | None = None,
                 enabled: bool | None = None, min_interval: float = 0.25,
                 listener: Callable[[str, int, int | None], None] | None = None) -> None:
        self.command = command
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.min_interval = min_interval  # seconds between redraws
        self.listener = listener  # (phase, done, total) at every start and count, shown or not
        self._bar: Any = None
        self._name: str | None = None
        self._n = 0
        self._total: int | None = None

    @property
    def watched(self) -> bool:
        """Whether anything sees the counts (a bar on a terminal, or a listener)."""
        return self.enabled or self.listener is not None

    def phase(self, name: str, total: int | None = None, unit: str | None = None) -> Callable[[int], None] | None:
        """Start phase ``name`` (a fresh count towards ``total`` when known); returns the callback
        ``on_progress(n_done)`` for the layer doing the work, or None when nothing is shown."""
        self.close()
        self._name, self._n, self._total = name, 0, total
        if self.listener is not None:
            self.listener(name, 0, total)
        if not self.watched:
            return None
        if self.enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=f"{self.command}: {name}", unit=" " + (unit or self.unit),
                             file=self.stream, dynamic_ncols=True, leave=False, mininterval=self.min_interval,
                             miniters=1 if self.min_interval == 0 else None,
                             bar_format="{desc} [{elapsed}]" if name in UNCOUNTED and total is None else None)
        return self.update_to

    def count_input(self, files: Iterable[str]) -> int | None:
        """The lines of ``files`` (the hands to come: the next phase's total, so its ETA), counted in phase "reading"
        towards the files' bytes; None when nothing sees the counts (a cron job pays no count) or the input is not
        countable (:func:`count_lines`)."""
        if not self.watched:
            return None
        files = list(files)
        return count_lines(files, on_progress=self.phase("reading", input_bytes(files), unit="bytes"))

    def done(self, name: str, total: int, unit: str) -> Callable[[], None]:
        """Start phase ``name`` of ``total`` units done at once (the files written, one store committed); returns
        the call that marks them done."""
        tick = self.phase(name, total, unit)
        return (lambda: tick(total)) if tick is not None else (lambda: None)

    def start(self, name: str) -> None:
        """Start phase ``name`` that reports no counts (for ``on_phase`` callbacks)."""
        self.phase(name)

    def steps(self, name: str, done: int, total: int | None, unit: str = "steps") -> None:
        """``on_steps``: phase ``name`` has done ``done`` of ``total`` steps (started when it is not the current
        phase; its total set anew when it changes)."""
        if name != self._name or (self._total is None and total is not None):  # a bar with a total, so an ETA
            self.phase(name, total, unit)
        elif total != self._total:
            self._total = total
            if self._bar is not None:
                self._bar.total = total
                self._bar.refresh()
        self.update_to(done)

    def update_to(self, n: int) -> None:
        """The phase has done ``n`` units in all (the layers report running counts)."""
        if n <= self._n:
            return
        self._n = n
        if self.listener is not None and self._name is not None:
            self.listener(self._name, n, self._total)
        bar = self._bar
        if bar is not None and n > bar.n:
            bar.update(n - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._name = None

    def __enter__(self) -> Progress:  # typing.Self is 3.11+; the package supports 3.10
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
