"""The pair signals over a stream of decision rows, in one process: rows pass through batch by batch, each batch of
whole hands becomes a chunk on disk (:func:`analyzer.audit.signals.build_chunk`), and the passes of
:mod:`analyzer.audit.signals` read the chunks in a loop, merging their statistics in chunk order.

:class:`StreamedSignals` holds the order of the passes (the room's baselines fitted, the seat habits, the pair
sums, the baselines fitted again without the pairs that stand out) and the ways to feed it; how a pass is run over
the chunks is its ``_map_reduce`` (a loop here; tasks next to the chunks and a tree of merges on Dask,
:class:`analyzer.audit.on_dask.DaskSignals`). Memory holds one chunk, the room's sums and the per-hand burst
scores; the chunks take about 170 bytes a decision on disk and are deleted at the end.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from analyzer.audit.burst import CHOICE_GRID, _burst, grid_fit
from analyzer.audit.signals import (
    Baselines,
    HabitSums,
    LargestResiduals,
    PairSums,
    Room,
    RoomCodes,
    SignalOptions,
    SituationSpread,
    SituationSums,
    add_choices,
    build_chunk,
    burst_links,
    chunk_choices,
    chunk_pairs,
    fit_baselines,
    hot_pairs,
    pair_table,
    pass_habits,
    pass_means,
    pass_pairs,
    pass_spread,
    pass_top,
    positive_regrets,
    recode,
    regret_edges,
)
from analyzer.audit.think import ThinkStats

#: Hands a chunk holds when rows are regrouped into chunks (the decision analysis' batch size).
CHUNK_HANDS = 256
#: The pair signals' steps, in passes over the chunks (``StreamedSignals.on_step`` counts a chunk of a pass a step):
#: the first fit (3), the seat habits (1), pass E (1), the second fit without the pairs that stand out (3) with its
#: habits (1) and pass E (1) -- or pass E with its extras only (1) when no pair stands out --, and the pair table (1).
SIGNAL_PASSES = 11


@dataclass(frozen=True)
class ChunkFile:
    """A chunk kept in a file of a folder every Dask worker sees (:func:`write_chunk`), not in a worker's memory:
    what the client's future holds instead of the arrays (~9 KB a hand), so the workers' memory does not grow with
    the hands. It carries the chunk's own names and kinds (the room's codes are made from every chunk's before the
    passes, without reading the files) and, once recoded (:func:`recode_chunk`), the room's codes it is read in."""

    path: str
    names: np.ndarray
    kinds: np.ndarray
    codes: tuple[np.ndarray, np.ndarray, int] | None = None  # recode's players, kinds and hand_base


#: A chunk as the per-chunk functions take it: its arrays, or the file holding them.
Chunk = dict[str, np.ndarray] | ChunkFile


def write_chunk(df: pd.DataFrame, folder: str, name: str) -> ChunkFile:
    """:func:`build_chunk` of ``df`` written to ``folder``/``name``.chunk (replaced whole: a task computed again
    after a worker's loss writes the same file); the handle comes back. Runs on a worker, next to the rows."""
    ch = build_chunk(df)
    names, kinds = ch.pop("names"), ch.pop("kinds")
    path = Path(folder) / f"{name}.chunk"
    tmp = path.with_suffix(f".tmp-{os.getpid()}")
    with open(tmp, "wb") as f:  # a temporary folder of this run's own (the players' spill)
        pickle.dump(ch, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)
    return ChunkFile(str(path), names, kinds)


def load_chunk(ch: Chunk) -> dict[str, np.ndarray]:
    """The chunk's arrays (read from its file, in the room's codes once recoded; a dict as it is)."""
    if not isinstance(ch, ChunkFile):
        return ch
    with open(ch.path, "rb") as f:
        arrays = dict(pickle.load(f))
    if ch.codes is None:
        return {**arrays, "names": ch.names, "kinds": ch.kinds}
    return recode(arrays, *ch.codes)


def recode_chunk(ch: Chunk, players: np.ndarray, kinds: np.ndarray, hand_base: int) -> Chunk:
    """:func:`recode` of a chunk; of a :class:`ChunkFile`, the handle with the codes it is then read in (the file
    stays as it is)."""
    if isinstance(ch, ChunkFile):
        return ChunkFile(ch.path, ch.names, ch.kinds, (np.asarray(players), np.asarray(kinds), int(hand_base)))
    return recode(ch, players, kinds, hand_base)


def on_chunk(fn: Any, ch: Chunk, *args: Any) -> Any:
    """``fn(chunk's arrays, *args)``: a per-chunk function on a chunk held either way."""
    return fn(load_chunk(ch), *args)


def chunk_names(ch: Chunk) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's own player names and kinds (before :func:`recode`; a :class:`ChunkFile`'s without reading it)."""
    if isinstance(ch, ChunkFile):
        return ch.names, ch.kinds
    return ch["names"], ch["kinds"]


class StreamedSignals:
    """Feed decision rows (:meth:`feed` or :meth:`add`, whole hands per call) and get the pair table
    (:meth:`result`).

    Use as a context manager (or call :meth:`close`): the chunks live in a temporary folder until then.
    """

    def __init__(self, options: SignalOptions = SignalOptions(), spill_dir: str | None = None,
                 chunk_hands: int = CHUNK_HANDS) -> None:
        self.options = options
        self.chunk_hands = chunk_hands
        self._tmp = tempfile.TemporaryDirectory(prefix="bieqi-signals-", dir=spill_dir)
        self.chunks: list[Any] = []  # here the chunks' files; on Dask futures or file handles
        self.codes = RoomCodes()
        self.think = ThinkStats()
        self._regret_pos: list[np.ndarray] = []
        self._pairs: list[np.ndarray] = []
        self.rows = 0
        self.hands = 0
        self._buffer: list[pd.DataFrame] = []
        self._buffered = 0
        # burst's choice weights: per acting player, the choice model's log-likelihood on its grid (summed over
        # chunks; the decisions' losses are kept in the chunks for the weights, see burst.choice_weights)
        self._choice_ll = np.zeros((0, len(CHOICE_GRID) ** 2))
        #: ``on_step(done, total)`` as :meth:`result` goes through its passes (:data:`SIGNAL_PASSES` a chunk each)
        self.on_step: Callable[[int, int], None] | None = None
        self._steps = 0
        # each chunk's hand ids in the order its hands are numbered (build_chunk's): burst names its hands by number
        self._hand_ids: list[np.ndarray] = []

    def note_hands(self, ids: Any) -> None:
        """The hand ids of the next chunk, in the order build_chunk numbers them (first appearance)."""
        self._hand_ids.append(np.asarray(pd.unique(pd.Series(ids).astype(str)), object))

    def hand_names(self) -> np.ndarray:
        """Every hand id by the room's hand number (the chunks' numbers: ``hand_base`` + the chunk's own)."""
        return np.concatenate(self._hand_ids) if self._hand_ids else np.zeros(0, object)

    def __enter__(self) -> StreamedSignals:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._tmp.cleanup()

    def add(self, df: pd.DataFrame) -> None:
        """Reduce decision rows of whole hands to a chunk (a hand must not be split over two calls)."""
        if not len(df):
            return
        ch = build_chunk(df)
        self.note_hands(df["hand_id"])
        players, kinds = self.codes.add(ch.pop("names"), ch.pop("kinds"))
        ch = recode(ch, players, kinds, self.hands)
        self._add_choices(ch)
        path = Path(self._tmp.name) / f"chunk-{len(self.chunks):06d}.pickle"
        with open(path, "wb") as f:  # our own temporary file, read back by this process only
            pickle.dump(ch, f, protocol=pickle.HIGHEST_PROTOCOL)
        self.chunks.append(path)
        self._regret_pos.append(positive_regrets(ch))
        # the directed pairs that sat together and decided something
        self._pairs.append(chunk_pairs(ch))
        if len(self._pairs) > 64:
            self._pairs = [np.unique(np.concatenate(self._pairs))]
        self.think.add_decisions(df)
        self.rows += len(df)
        self.hands += int(ch["n_hands"][0])

    def _add_choices(self, ch: dict[str, np.ndarray]) -> None:
        """burst's choice weights: the chunk's per-player grid log-likelihoods added to the room's (in the room's
        codes); the chunk keeps each decision's option losses for pass E's weights (``burst.choice_weights``)."""
        if "choice_ll" in ch:
            self._choice_ll = add_choices(self._choice_ll, chunk_choices(ch, len(self.codes.players)))
            del ch["choice_ll"], ch["choice_players"]

    def _choice_fit(self) -> tuple[np.ndarray, np.ndarray]:
        """Per player of the room (``self._names`` order) the choice model's grid fit."""
        return grid_fit(add_choices(self._choice_ll, np.zeros((len(self._names), self._choice_ll.shape[1]))))

    def feed(self, df: pd.DataFrame) -> None:
        """Add rows of whole hands as they come (batches of any size): they are regrouped into the chunks
        :func:`hand_chunks` cuts the whole frame into (``self.chunk_hands`` hands each, in order of arrival), so
        the result is the same, to the last bit, as :func:`pair_signals` on the concatenated rows."""
        if not len(df):
            return
        self._buffer.append(df)
        self._buffered += int(df["hand_id"].nunique())
        if self._buffered > self.chunk_hands:
            chunks = list(hand_chunks(pd.concat(self._buffer), self.chunk_hands))
            rest = chunks.pop()  # the last chunk may not be full yet: it waits for the next rows
            for part in chunks:
                self.add(part)
            self._buffer = [rest]
            self._buffered = int(rest["hand_id"].nunique())

    def flush(self) -> None:
        """Add what :meth:`feed` still holds (called by :meth:`result`)."""
        if self._buffer:
            for part in hand_chunks(pd.concat(self._buffer), self.chunk_hands):
                self.add(part)
        self._buffer, self._buffered = [], 0

    # --- the passes ------------------------------------------------------------------------------------------

    def _chunk(self, ref: Any) -> dict[str, np.ndarray]:
        with open(ref, "rb") as f:
            return dict(pickle.load(f))

    def _map_reduce(self, name: str, fn: Any, merge: Any, *args: Any) -> Any:
        """``fn(chunk, *args)`` over the chunks, merged in chunk order (``merge(earlier, later)``)."""
        out = None
        for ref in self.chunks:
            r = fn(self._chunk(ref), *args)
            out = r if out is None else merge(out, r)
            self._stepped()
        return out

    def _prepare(self) -> None:
        """The room's player names by code, its directed pairs, the regret band edges and the choice model's fit
        (``self._room``)."""
        self._names = self.codes.names()
        pairs = np.unique(np.concatenate(self._pairs))
        a, b = self._choice_fit()
        self._room = Room(len(self._names), max(len(self.codes.kinds), 1), regret_edges(self._regret_pos), pairs,
                          self.options, a, b)

    def _reach(self, passes: int) -> None:
        """Progress: ``passes`` passes over the chunks done (a pass whose chunks did not count themselves, on Dask,
        counts whole here; one not run counts as done)."""
        if self.on_step is not None:
            n = max(len(self.chunks), 1)
            self._steps = max(self._steps, passes * n)
            self.on_step(self._steps, SIGNAL_PASSES * n)

    def _stepped(self) -> None:
        """Progress: one chunk of a pass done."""
        if self.on_step is not None:
            total = SIGNAL_PASSES * max(len(self.chunks), 1)
            self._steps = min(self._steps + 1, total)
            self.on_step(self._steps, total)

    def result(self, seating: pd.DataFrame | None = None) -> pd.DataFrame:
        """The pair table (:func:`analyzer.audit.signals.pair_table`) over every row added."""
        self.flush()
        if not self.rows:
            raise ValueError("no decision rows were added")
        self._steps = 0
        self._reach(0)
        self._prepare()
        first = self._fit(None)
        self._reach(3)
        habits = self._map_reduce("habits", pass_habits, HabitSums.merge, self._room, None, first)
        self._reach(4)
        # the first fit's z's tell the pairs that stand out; its per-hand numbers (burst's scores, the deviation
        # hands: most of pass E's cost) are wanted only when none does, so they are made then, not always
        hot = hot_pairs(self._pass_e(first, habits, extras=False), self._room)
        self._reach(5)
        if hot.any():
            second = self._fit(hot)
            self._reach(8)
            habits = self._map_reduce("habits", pass_habits, HabitSums.merge, self._room, hot, second)
            self._reach(9)
            final = self._pass_e(second, habits, extras=True)
        else:
            final = self._pass_e(first, habits, extras=True)
        self._reach(SIGNAL_PASSES - 1)
        table = self._table(final, seating)
        self._reach(SIGNAL_PASSES)
        return table

    def _fit(self, hot: np.ndarray | None) -> Baselines:
        """Passes A, B, C: the room's line per situation and signal, and the clip caps (all links, or without the
        decisions of the ``hot`` pairs)."""
        room = self._room
        return fit_baselines(
            self._map_reduce("means", pass_means, SituationSums.merge, room, hot),
            lambda mean_x, mean_total: self._map_reduce("spread", pass_spread, SituationSpread.merge, room, hot,
                                                        mean_x, mean_total),
            lambda fit, keep: self._map_reduce("top", pass_top, LargestResiduals.merge, room, hot, fit, keep))

    def _pass_e(self, fit: Baselines, habits: HabitSums, extras: bool) -> PairSums:
        """Pass E (the seat-habit sums made)."""
        return self._map_reduce("pairs", pass_pairs, PairSums.merge, self._room, fit, habits, extras)

    def _burst(self, lk: pd.DataFrame) -> pd.DataFrame:
        """The burst statistic of the room's per-hand favour scores (``burst._burst``)."""
        return _burst(lk)

    def _start_burst(self, st: PairSums) -> Callable[[], pd.DataFrame]:
        """The burst statistic of pass E's per-hand pieces (``st.burst``), started; the call returned gives it. Here
        it is read when called, from the pieces this process holds (on Dask its tasks run on the workers, where the
        pieces stay, while this process makes the rest of the pair table: ``audit.on_dask``)."""
        links = burst_links(st.burst, self._names)
        return lambda: self._burst(links)

    def _table(self, st: PairSums, seating: pd.DataFrame | None) -> pd.DataFrame:
        """The pair table from pass E's sums, the think-time sums and the burst statistic."""
        if seating is None:
            raise ValueError("the streamed pair signals need the seating (hand_id, p0..p3 per hand)")
        burst = self._start_burst(st)  # first: on Dask it is read on the workers while the rest is made here
        return named_hands(pair_table(seating, self._names, self._room, st, self.think, burst), self.hand_names())


def named_hands(pairs: pd.DataFrame, names: np.ndarray) -> pd.DataFrame:
    """The pair table with burst's extreme hands (``burst_<dir>_extreme``: JSON of [hand number, favour]) named by
    their hand ids (a number the room does not know is left out)."""
    for col in [c for c in pairs.columns if c.startswith("burst_") and c.endswith("_extreme")]:
        pairs[col] = [orjson.dumps([[str(names[int(h)]), x] for h, x in orjson.loads(v)
                                    if 0 <= int(h) < len(names)]).decode() for v in pairs[col]]
    return pairs


def hand_chunks(df: pd.DataFrame, hands: int = CHUNK_HANDS) -> Iterator[pd.DataFrame]:
    """A frame of decision rows cut into frames of ``hands`` whole hands (rows keep their order within a hand)."""
    codes = pd.factorize(df["hand_id"])[0]
    order = np.argsort(codes, kind="stable")
    bounds: Any = np.searchsorted(codes[order], np.arange(0, int(codes.max()) + 1 + hands, hands)) if len(df) else []
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            yield df.iloc[order[a:b]]


def pair_signals(df: pd.DataFrame, seating: pd.DataFrame | None = None, *,
                 options: SignalOptions = SignalOptions(), chunk_hands: int = CHUNK_HANDS) -> pd.DataFrame:
    """The pair table of a frame of decision rows, read chunk by chunk as the audit reads it (``seating``: hand_id,
    p0..p3 per hand, default the hands with decision rows)."""
    if seating is None:
        seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    with StreamedSignals(options) as acc:
        for part in hand_chunks(df, chunk_hands):
            acc.add(part)
        return acc.result(seating)
