"""Where the per-batch decision analysis runs: in this process, in worker processes, or on Dask; results in input order.

The unit of work is a batch of whole hands (:class:`HandBatch`). Each decision's random stream comes
from the run's seed, the hand id and the action (``decisions.decision_seed``), never from the worker
or the batch, so the rows are the same however many workers run them and however the hands are cut.
Batches travel as canonical JSON lines (small, and nothing but msgspec is needed to read them back);
at most a few batches per worker are in flight, so memory does not grow with the input.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from functools import cache, partial
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.running.dask import DaskConnection
    from analyzer.validate import Checked

T = TypeVar("T")
R = TypeVar("R")

#: Hands per task: ~3-5 s of work on one core at the audit's settings, so a task's overhead (pickling,
#: scheduling: milliseconds) is lost in it, while 1,000 hands still make enough tasks for 2-4 workers.
DEFAULT_BATCH_HANDS = 256


#: The largest count a setting of the analysis takes (the command line's ``--samples`` / ``--max-samples`` /
#: ``--dd-samples`` bound, ``commands.common.MAX_COUNT``): a store's metadata asking for more was not written here.
MAX_SETTING_COUNT = 1_000_000


def _shown(v: Any, width: int = 60) -> str:
    """``repr(v)`` for a message, cut to about ``width`` characters (a value read from a file may be huge)."""
    r = repr(v)
    return r if len(r) <= width else f"{r[:width - 3]}..."


def _json_kind(v: Any) -> str:
    """What a JSON value is, for a message (``a list``, ``the string 'x'``)."""
    if isinstance(v, str):
        return f"the string {_shown(v)}"
    return {list: "a list", dict: "an object", bool: "a boolean", type(None): "null"}.get(type(v),
                                                                                         f"the number {_shown(v)}")


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the decision rows depend on besides the hands themselves (``decisions.analyse``'s options)."""

    samples: int
    dd_samples: int
    seed: int
    noise: float
    policy: str
    max_samples: int | None  # adaptive sampling's ceiling; None: exactly ``samples``

    @classmethod
    def of(cls, samples: int, dd_samples: int, seed: int = 0, *, noise: float | None = None,
           policy: str | None = None, max_samples: int | None | str = "default") -> Settings:
        """Settings with ``decisions.analyse``'s defaults for what is not given."""
        from analyzer.analysis.decisions import DEFAULT_MAX_SAMPLES, DEFAULT_NOISE, DEFAULT_POLICY

        return cls(samples, dd_samples, seed, DEFAULT_NOISE if noise is None else noise,
                   DEFAULT_POLICY if policy is None else policy,
                   DEFAULT_MAX_SAMPLES if max_samples == "default" else max_samples)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> Settings:
        """Settings as :meth:`to_dict` wrote them (a decision store's metadata); :class:`ValueError` saying what is
        wrong when ``d`` is not such a mapping (a missing key, a value of another type or out of the options' range)."""
        import math

        from analyzer.analysis.decisions import POLICIES

        if not isinstance(d, dict):
            raise ValueError(f"settings: expected an object, not {_json_kind(d)}")
        missing = [k for k in ("samples", "dd_samples", "seed", "noise", "policy") if k not in d]
        if missing:
            raise ValueError(f"settings: missing {', '.join(repr(k) for k in missing)}")

        def count(key: str, low: int, high: int = MAX_SETTING_COUNT) -> int:
            v = d[key]
            if type(v) is not int or not low <= v <= high:  # bool is not a count
                raise ValueError(f"settings: {key!r} must be an integer from {low} to {high}, not {_shown(v)}")
            return v

        noise = d["noise"]
        if type(noise) not in (int, float) or not math.isfinite(noise) or noise < 0:
            raise ValueError(f"settings: 'noise' must be a finite number >= 0, not {_shown(noise)}")
        policy = d["policy"]
        if not isinstance(policy, str) or policy not in POLICIES:
            raise ValueError(f"settings: 'policy' must be one of {', '.join(POLICIES)}, not {_shown(policy)}")
        ms = d.get("max_samples")
        return cls(count("samples", 1), count("dd_samples", 0), count("seed", -(2**63), 2**63 - 1), float(noise),
                   policy, None if ms is None else count("max_samples", 1))

    def describe(self) -> str:
        """The options that give these settings, as a user would type them."""
        return (f"--samples {self.samples} --max-samples {self.max_samples or self.samples} "
                f"--dd-samples {self.dd_samples} --seed {self.seed} --noise {self.noise:g} --policy {self.policy}")


@dataclass(slots=True)
class HandBatch:
    """Hands of one task: each one's place in the input (``hand_seq``) and its record as a canonical JSON line."""

    seqs: list[int] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)
    hand_ids: list[str] = field(default_factory=list)
    fingerprints: list[str] = field(default_factory=list)
    #: the decoded records, for a batch analysed in this process (never pickled: a worker decodes the lines)
    records: list[Any] | None = None

    def __len__(self) -> int:
        return len(self.seqs)

    def __getstate__(self) -> tuple[Any, ...]:
        return self.seqs, self.lines, self.hand_ids, self.fingerprints

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.seqs, self.lines, self.hand_ids, self.fingerprints = state
        self.records = None


def fingerprint_line(line: bytes) -> str:
    """A hand's fingerprint: 64 bits of BLAKE2b of its canonical JSON line (``logs.format_record``), so the
    same hand written with other spacing or key order has the same one."""
    return hashlib.blake2b(line, digest_size=8).hexdigest()


def analyse_batch(batch: HandBatch, settings: Settings, reasons: bool = False) -> pd.DataFrame:
    """The decision rows of one batch (runs in a worker); ``hand_seq`` is the hand's place in the whole input."""
    import numpy as np

    from analyzer.analysis.decisions import analyse
    from analyzer.logs import parse_record
    from analyzer.validate import Checked
    from analyzer.variants.base import HandCheck

    # in this process the records read are reused (the line is their canonical form: decoding it gives them back)
    recs = batch.records if batch.records is not None else [parse_record(line) for line in batch.lines]
    batch.records = None  # held no longer than the analysis (the caller keeps the batch for its ids)
    items = [Checked("", 0, rec.hand_id, rec, HandCheck()) for rec in recs]
    frame = analyse(items, samples=settings.samples, dd_samples=settings.dd_samples, seed=settings.seed,
                    noise=settings.noise, policy=settings.policy, max_samples=settings.max_samples, reasons=reasons)
    frame["hand_seq"] = np.asarray(batch.seqs, np.int64)[frame["hand_seq"].to_numpy()]
    return frame


@dataclass(frozen=True, slots=True)
class Execution:
    """How to run the batches: ``jobs`` worker processes (1: this process), or Dask when ``dask`` is set
    (``"local"`` for a LocalCluster of ``jobs`` workers, else a scheduler address such as ``tcp://host:8786``)."""

    jobs: int = 1
    dask: str | None = None
    batch_hands: int = DEFAULT_BATCH_HANDS
    #: an open Dask client shared by the whole command (:func:`dask_connection`), else each map opens its own
    connection: DaskConnection | None = field(default=None, compare=False, repr=False)
    #: modules a LocalCluster's workers import as they start (the code their tasks run), not on the first task
    preload: tuple[str, ...] = ()
    #: modules imported, after ``preload``, once by the process a LocalCluster's workers are forked from (e.g. one
    #: that warms their caches at import: ``analyzer.audit.prewarm``), not by each worker
    prefork: tuple[str, ...] = ()

    def map(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        """``fn`` over ``tasks``, results in task order, a bounded number in flight."""
        if self.connection is not None:
            from analyzer.running.dask import connection_map

            return connection_map(fn, tasks, self.connection, self.jobs)
        if self.dask is not None:
            from analyzer.running.dask import dask_map

            return dask_map(fn, tasks, self.dask, self.jobs, self.preload, self.prefork)
        if self.jobs <= 1:
            return map(fn, tasks)
        from analyzer.running.pools import ordered_map

        return ordered_map(fn, tasks, self.jobs)


def dask_connection(execution: Execution) -> Execution:
    """``execution`` with an open :class:`analyzer.running.dask.DaskConnection` (when it runs on Dask; close it with
    ``.connection.close()``)."""
    from dataclasses import replace

    from analyzer.running.dask import DaskConnection

    if execution.dask is None or execution.connection is not None:
        return execution
    return replace(execution, connection=DaskConnection(execution.dask, execution.jobs, preload=execution.preload,
                                                  prefork=execution.prefork))


def hand_batches(items: Iterable[Checked], size: int, *, on_hand: Callable[[Checked, int, str], bool] | None = None
                 ) -> Iterator[HandBatch]:
    """Valid standard-game hands (other variants are left out) in batches of ``size``; ``on_hand(item,
    seq, fingerprint)`` may return False to leave a hand out (e.g. already in a decision store). ``seq`` counts every item, as
    ``decisions.analyse`` does."""
    from analyzer.logs import format_record
    from analyzer.variants.bieqi import NAME

    batch = HandBatch(records=[])
    for seq, item in enumerate(items):
        if type(item.record).__struct_config__.tag != NAME:  # other variants have no decision rows here
            continue
        line = format_record(item.record)
        fp = fingerprint_line(line)
        if on_hand is not None and not on_hand(item, seq, fp):
            continue
        batch.seqs.append(seq)
        batch.lines.append(line)
        batch.hand_ids.append(str(item.record.hand_id))
        batch.fingerprints.append(fp)
        batch.records.append(item.record)  # type: ignore[union-attr]
        if len(batch) >= size:
            yield batch
            batch = HandBatch(records=[])
    if batch:
        yield batch


def analysed_batches(items: Iterable[Checked], settings: Settings, execution: Execution = Execution(), *,
                     reasons: bool = False, on_hand: Callable[[Checked, int, str], bool] | None = None,
                     on_progress: Callable[[int], None] | None = None) -> Iterator[tuple[HandBatch, pd.DataFrame]]:
    """Each batch of hands with its decision rows, in input order, computed on ``execution``."""
    sent: deque[HandBatch] = deque()

    def remembered() -> Iterator[HandBatch]:
        for b in hand_batches(items, execution.batch_hands, on_hand=on_hand):
            sent.append(b)
            yield b

    done = 0
    for frame in execution.map(partial(analyse_batch, settings=settings, reasons=reasons), remembered()):
        batch = sent.popleft()
        done += len(batch)
        if on_progress is not None:
            on_progress(done)
        yield batch, frame


def release_memory() -> None:
    """Hand freed heap pages back to the system (glibc's ``malloc_trim``; nothing elsewhere). Millions of
    freed strings of a few hundred bytes leave holes glibc keeps for reuse: the memory is free for this
    process but still counted as resident, and the next phase's peak adds to it."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, looked up once a process (``find_library`` may run ``ldconfig``), or None."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return getattr(libc, "malloc_trim", None)
    except OSError:  # no C library to load: nothing to trim
        return None


def shared_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with each text column's repeated values as one object each (in place; returned).

    Read from Parquet (or unpickled), every row gets its own copy of a player's name, the hand id and the
    cards: about half a row's memory. The values are the same; only the copies go."""
    import numpy as np
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):  # e.g. a batch settled on a Dask worker (only its summary is here)
        return frame
    for c in frame.columns:
        if frame[c].dtype == object and c != "options":  # options differ row by row: nothing to share
            codes, uniq = pd.factorize(frame[c], use_na_sentinel=False)
            if len(uniq) < len(frame) // 2:
                frame[c] = pd.Series(np.asarray(uniq, dtype=object)[codes], index=frame.index, dtype=object)
    return frame


def analyse_items(items: Iterable[Checked], settings: Settings, execution: Execution = Execution(), *,
                  reasons: bool = False, on_hand: Callable[[Checked, int, str], bool] | None = None,
                  on_progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Decision rows of standard-game hands, batch by batch on ``execution``; equal to
    ``decisions.analyse`` on the same hands whatever the workers."""
    import pandas as pd

    from analyzer.analysis.decisions import analyse

    # each batch's repeated texts (names, ids, cards) as one object each: the rows are held to the end
    frames = [shared_strings(f) for _, f in analysed_batches(items, settings, execution, reasons=reasons,
                                                             on_hand=on_hand, on_progress=on_progress) if len(f)]
    if not frames:
        return analyse([])  # the typed empty frame
    return pd.concat(frames, ignore_index=True)
