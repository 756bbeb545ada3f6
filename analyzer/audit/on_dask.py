"""The pair signals' passes as a reduction on Dask: chunks built and kept on the workers, passes merged by a tree of tasks.

The same passes as :class:`analyzer.audit.stream.StreamedSignals` (its per-chunk functions ``pass_means``,
``pass_spread``, ``pass_top``, ``pass_habits``, ``pass_pairs`` and their merges), only where they run differs: each
analysed batch's chunk of links is built by a task that follows the batch's analysis on the worker holding its rows
and stays there (a future); rows that reach the client another way (a decision store's parts) are sent to a worker to
be chunked. Before the passes the chunks' own player and kind codes are put in the room's (sorted names) and the hands
numbered in input order; every pass is then one task a chunk plus merges of ``FANIN`` adjacent results at a time (so
the per-hand pieces concatenate in chunk order) or, when the chunks are files every worker reads and more than
``LOCAL_PARTS`` of them, one task a group of ``FANIN`` adjacent chunks that merges them itself (the tree's first level
made without sending a chunk's sums from task to task: the same groups, the same sums to the last bit), and only the
merged sums (sizes set by players, pairs and situations) and the per-hand deviation hands come back to the client; the
last pass E's per-hand burst scores stay on the workers, where the burst statistic is read in parts of whole actors
(:meth:`DaskSignals._start_burst`). Each analysed batch's think-time sums are made next to its rows as well and merged
in a tree (``ThinkStats.merge``), and, when the workers share the client's folder, the batch's rows are written into
the players' spill there (``audit.rows.write_batch``): only a summary comes back; the batch's chunk is then written
into that folder too (``stream.write_chunk``; the future holds the file's name and the chunk's own names), so the
workers' memory, like this process', holds no chunk and does not grow with the hands. The result equals the
single-process one to float rounding (a tree adds in another order than a loop; ``tests/dask/test_dask_reduce.py``).
"""

from __future__ import annotations

import dataclasses
import functools
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analyzer.running.dask import FOLLOWER, DaskConnection, lost_retried, share
from analyzer.audit import burst, ledger
from analyzer.audit.rows import PlayerSpill, WrittenBatch, write_batch
from analyzer.audit.signals import (
    BURST_COLUMNS,
    Baselines,
    HabitSums,
    PairSums,
    Room,
    RoomCodes,
    SignalOptions,
    add_choices,
    build_chunk,
    chunk_choices,
    chunk_pairs,
    pass_pairs,
    positive_regrets,
    regret_edges,
)
from analyzer.audit.stream import (
    CHUNK_HANDS,
    Chunk,
    ChunkFile,
    StreamedSignals,
    chunk_names,
    on_chunk,
    recode_chunk,
    write_chunk,
)
from analyzer.audit.think import ThinkStats

#: Results merged by one task of the tree (adjacent ones, in chunk order).
FANIN = 8
#: At most this many results of a pass are gathered and merged here (the tree's last level); more are merged on the
#: workers first, in the same groups. Each chunk's result holds sums sized by its pairs (with 64 players every chunk
#: sees most of the room's ~4,000 directed pairs): gathering every chunk's makes the client receive ~0.4 MB a chunk
#: and pass, ~380 MB at 16,000 hands (63 chunks) with ``FANIN * FANIN``; one level merged on the workers cuts that
#: to ~70 MB and the client's CPU by ~15%, the same sums to the last bit (the same groups).
LOCAL_PARTS = FANIN
#: Parts of the room's actors a worker for the burst statistic's tasks (:meth:`DaskSignals._burst`): a few, so a worker
#: busy with a player-table task when they come does not hold the last one up.
BURST_PARTS = 3
#: Prefix of the keys of the tasks this module submits (``bieqi-signals-<pass>-...``).
KEY_PREFIX = "bieqi-signals"


def _apply(fn: Any, chunk: Chunk, args: tuple[Any, ...]) -> Any:
    return on_chunk(fn, chunk, *args)


def _merge(merge: Any, *parts: Any) -> Any:
    return functools.reduce(merge, parts)


def _apply_group(fn: Any, merge: Any, chunks: list[Chunk], args: tuple[Any, ...]) -> Any:
    """``fn`` over a group of adjacent chunks (files every worker reads), merged as the tree's first level merges
    them (:func:`_merge_group`): one task where a task a chunk and one merging them made the same value."""
    return merge(*[on_chunk(fn, ch, *args) for ch in chunks])


def _merge_group(merge: Any, parts: list[Any]) -> Any:
    """``merge(*parts)`` (a tree's task: ``parts``, a list of futures, arrive as their results)."""
    return merge(*parts)


def _merge_here(merge: Any, parts: list[Any]) -> Any:
    """``parts`` (results) merged ``FANIN`` adjacent ones at a time, level by level, as the tree's tasks group them."""
    while len(parts) > 1:
        groups = [parts[i:i + FANIN] for i in range(0, len(parts), FANIN)]
        parts = [_merge_group(merge, g) if len(g) > 1 else g[0] for g in groups]
    return parts[0]


class _Tree:
    """A merge tree of ``FANIN`` adjacent parts a task, grown as its leaves (futures) arrive: a group is merged on the
    workers as soon as it is full (e.g. while the analysis goes on), and :meth:`finish` merges the rest as
    :meth:`DaskSignals._tree` groups them, the last level here (a handful of results: one round trip, not a task
    that waits for a free worker and then for its result). The same groups in the same order as a tree made of
    every leaf at once, so the same sums to the last bit."""

    def __init__(self, owner: DaskSignals, name: str, merge: Any) -> None:
        self.owner, self.name, self.merge = owner, name, merge
        self.levels: list[list[Any]] = []  # per level, its parts not yet merged into the next (fewer than FANIN)
        self.leaves = 0

    def add(self, part: Any) -> None:
        self.leaves += 1
        self._push(0, part)

    def _push(self, level: int, part: Any) -> None:
        while True:
            if len(self.levels) <= level:
                self.levels.append([])
            self.levels[level].append(part)
            if len(self.levels[level]) < FANIN:
                return
            group, self.levels[level] = self.levels[level], []
            part = self.owner._submit(self.name, _merge_group, self.merge, group)
            level += 1

    def detach(self) -> None:
        """The merged results (levels above the leaves) finished on the workers, brought here as values (small sums:
        one gather): the futures go, and with them the scheduler's lineage back to every batch's analysis (it keeps
        a finished task's inputs, a batch's hands, while a result made from it is wanted). The groups and their order
        stay as they were: the same sums."""
        done = [(lv, i) for lv in range(1, len(self.levels)) for i, p in enumerate(self.levels[lv]) if _finished(p)]
        if done:
            got = self.owner.client.gather([self.levels[lv][i] for lv, i in done])
            for (lv, i), value in zip(done, got):
                self.levels[lv][i] = value

    def finish(self) -> Any:
        """The merged result (its value; None without leaves)."""
        level = 0
        while level < len(self.levels):
            parts = self.levels[level]
            if any(self.levels[level + 1:]):  # not the top: this level's tail is one more group
                self.levels[level] = []
                if len(parts) > 1:
                    parts = [self.owner._submit(self.name, _merge_group, self.merge, parts)]
                for p in parts:
                    self._push(level + 1, p)
                level += 1
                continue
            self.levels = []
            if not parts:
                return None
            got = self.owner.client.gather(parts)
            return got[0] if len(got) == 1 else self.merge(*got)
        self.levels = []
        return None


def _is_future(part: Any) -> bool:
    """Whether ``part`` is a Dask future, not a value (known by its class's name: distributed is not imported here)."""
    return type(part).__name__ == "Future"


def _finished(part: Any) -> bool:
    """Whether ``part`` is a Dask future whose result is ready (not a value, not pending, not failed)."""
    return _is_future(part) and getattr(part, "status", None) == "finished"


def _union(*codes: np.ndarray) -> np.ndarray:
    return np.unique(np.concatenate(codes))


def _joined(*arrays: np.ndarray) -> np.ndarray:
    return np.concatenate(arrays)


def batch_think(df: pd.DataFrame) -> ThinkStats:
    """A batch's think-time sums (next to its rows, on the worker)."""
    out = ThinkStats()
    out.add_decisions(df)
    return out


def _merge_think(*parts: ThinkStats) -> ThinkStats:
    return functools.reduce(ThinkStats.merge, parts)


#: The file a client writes into the spill's folder for the workers to find (with its run's token).
PROBE = ".shared"


def _sees(folder: str, token: str) -> bool:
    """Whether this worker sees the client's folder itself (not just a folder of the same name)."""
    try:
        with open(f"{folder}/{PROBE}") as f:
            return f.read() == token
    except OSError:
        return False


def pass_pairs_kept(ch_packed: dict[str, np.ndarray], room: Room, fit: Baselines, habits: HabitSums
                    ) -> tuple[PairSums, pd.DataFrame]:
    """Pass E with its per-hand numbers (``signals.pass_pairs``, ``extras``), the burst statistic's piece apart: the
    sums (with the piece's number of links of each actor, ``burst_links``) go to the merge tree, the piece stays on
    its worker for the burst statistic's tasks (:meth:`DaskSignals._start_burst`)."""
    return pass_pairs(ch_packed, room, fit, habits, True).without_burst(room.n_players)


def _sums(part: Any) -> Any:
    """A pass E result's sums (:func:`pass_pairs_kept` gives them with a piece)."""
    return part[0] if isinstance(part, tuple) else part


def _merge_kept(*parts: Any) -> PairSums:
    """The sums of :func:`pass_pairs_kept`'s results (or of merged ones) merged in order."""
    return functools.reduce(PairSums.merge, [_sums(p) for p in parts])


def _piece(part: tuple[Any, Any]) -> Any:
    """The burst piece of a pass E result (:func:`pass_pairs_kept`), or a group's list of them (:func:`_kept_pieces`)."""
    return part[1]


def _kept_pieces(*leaves: tuple[PairSums, pd.DataFrame]) -> tuple[PairSums, list[pd.DataFrame]]:
    """A group's :func:`pass_pairs_kept` results (:func:`_apply_group`): their sums merged as the tree's first level
    merges them (:func:`_merge_kept`), and each chunk's burst piece, in chunk order."""
    return _merge_kept(*leaves), [leaf[1] for leaf in leaves]


def _each_piece(pieces: Any) -> list[pd.DataFrame]:
    """Pass E's burst pieces in chunk order, from a piece a chunk or a list of them a group of chunks."""
    return [q for p in pieces for q in (p if isinstance(p, list) else [p])]


def part_links(group: np.ndarray, k: int, names: np.ndarray, *pieces: pd.DataFrame) -> pd.DataFrame:
    """The burst statistic's links of part ``k`` of the room's actors (``group``: each actor code's part): its actors'
    rows of every chunk's piece, in the room's order, indexed by their places among the room's links, the codes
    turned into names: the frame ``burst.by_actors`` cuts from the room's links (``stream.StreamedSignals``)."""
    frames, start = [], 0
    for p in _each_piece(pieces):
        at = np.flatnonzero(group[p["actor"].to_numpy(np.int64)] == k)
        frames.append(p.iloc[at].set_axis(pd.Index(start + at)))
        start += len(p)
    lk = pd.concat(frames)
    lk["actor"] = names[lk["actor"].to_numpy(np.int64)]
    lk["other"] = names[lk["other"].to_numpy(np.int64)]
    return lk[list(BURST_COLUMNS)]


def _habit_var(*looks: tuple[np.ndarray, np.ndarray, dict[Any, int]]) -> float:
    """The room's habit spread from its parts' terms (``burst.part_look``)."""
    return burst.habit_variance_of(np.concatenate([m for m, _, _ in looks]), np.concatenate([v for _, v, _ in looks]))


class DaskSignals(StreamedSignals):
    """:class:`StreamedSignals` whose chunks live on the workers of ``connection`` and whose passes run there.

    Analysed batches (results of ``connection``'s map, marked in ``attrs``) are chunked by a task that follows
    their analysis; other rows fed (a store's) are regrouped into chunks of ``chunk_hands`` hands here and
    sent to a worker. Each analysed batch's think-time sums are made next to its rows too (merged in a tree
    before the pair table, after the sums of the rows fed here), and with :meth:`write_spill` its rows are written
    into the players' spill there, so they never come back. The client keeps the hand count and the futures.
    ``tasks`` lists ``(pass, key)`` of every task submitted.
    """

    def __init__(self, connection: DaskConnection, options: SignalOptions = SignalOptions(), spill_dir: str | None = None,
                 chunk_hands: int = CHUNK_HANDS) -> None:
        super().__init__(options, spill_dir, chunk_hands)
        self.connection = connection
        self._run = uuid.uuid4().hex[:12]
        self._bases: list[int] = []  # the room's number of each chunk's first hand
        self.tasks: list[tuple[str, str]] = []
        # each analysed batch's think-time sums, kept on its worker, merged in a tree as they come
        self._thinks = _Tree(self, "think-merge", _merge_think)
        self._own: list[Any] = []  # each chunk's own names and kinds (futures made as the chunks are, or from handles)
        self._spill: tuple[str, tuple[str, ...]] | None = None  # the players' spill's folder and the columns it skips
        self._pieces: list[Any] | None = None  # pass E's burst pieces (futures), until the burst statistic reads them
        self._kept: tuple[Any, Any] | None = None  # the fit and habits pass E read (to make its pieces again)
        self._open: list[int] = []  # the chunks (places) whose handles are not here yet (:meth:`_detach`)
        connection.follow = self._follow

    @property
    def client(self) -> Any:
        """The connection's client, when first used (a cluster starting in the background is waited for then: the
        logs are read into the first batches meanwhile, ``running.dask.connection_map``)."""
        return self.connection.client

    def _key(self, name: str) -> str:
        key = f"{KEY_PREFIX}-{name}-{self._run}-{len(self.tasks)}"
        self.tasks.append((name, key))
        return key

    def _submit(self, name: str, fn: Any, *args: Any) -> Any:
        return self.client.submit(fn, *args, key=self._key(name))

    def _follow(self, rows: Any) -> Any:
        """The chunk of a batch being analysed and its think-time sums, made next to its rows (``rows``: the
        analysis' future)."""
        return self._build(rows), self._submit("think", batch_think, rows)

    def _build(self, rows: Any) -> Any:
        """A task making the chunk of ``rows`` (a future or a frame): into a file of the spill's folder when the
        workers share it (:func:`analyzer.audit.stream.write_chunk`: the workers' memory then holds no chunk, as
        this process holds none in :class:`StreamedSignals`), else kept in the worker's memory."""
        if self._spill is None:
            return self._submit("chunk", build_chunk, rows)
        return self._submit("chunk", write_chunk, rows, self._spill[0], f"chunk-{self._run}-{len(self.tasks):06d}")

    def write_spill(self, spill: PlayerSpill) -> bool:
        """Have the workers write each analysed batch's rows into ``spill``'s folder themselves, so the rows never
        come back to this process (the map then gives :class:`analyzer.audit.rows.WrittenBatch` summaries), when
        every worker sees that folder (a LocalCluster, or workers sharing the file system); else False and the
        rows come back as before."""
        if not getattr(self.connection, "local", False):  # a LocalCluster's workers share this machine's folders
            with open(f"{spill.folder}/{PROBE}", "w") as f:
                f.write(self._run)
            try:
                seen = self.client.run(_sees, spill.folder, self._run)
            except Exception:  # noqa: BLE001  # a scheduler that refuses run(): the rows come back
                return False
            if not seen or not all(seen.values()):
                return False
        self._spill = (spill.folder, tuple(sorted(spill.skip)))
        self.connection.settle = self._settle
        return True

    def _settle(self, rows: Any) -> Any:
        """The batch's rows written into the spill's folder on their worker; its summary comes back."""
        assert self._spill is not None
        folder, skip = self._spill
        return self._submit("spill", write_batch, rows, folder, f"batch-{self._run}-{len(self.tasks):06d}", skip)

    def close(self) -> None:
        self._pieces = None
        self._open = []
        self.connection.follow = None
        self.connection.settle = None
        self.chunks = []  # the futures: the workers drop the chunks
        self._thinks = _Tree(self, "think-merge", _merge_think)
        self._own = []
        if self._spill is not None:  # the chunks' files (the spill's folder itself stays until the audit's end)
            for f in Path(self._spill[0]).glob(f"chunk-{self._run}-*"):
                f.unlink(missing_ok=True)
        super().close()

    def _count(self, rows: int, hands: int, df: pd.DataFrame | None = None) -> None:
        self._bases.append(self.hands)
        if df is not None:  # rows here (a store's): their think-time sums too
            self.think.add_decisions(df)
        self.rows += rows
        self.hands += hands

    def _take(self, follower: Any) -> None:
        chunk, think = self.connection.take(int(follower))
        self.flush()  # the rows fed before it (a store's) come first, in their order
        self._chunk_made(chunk)
        self._thinks.add(think)
        self._detach()

    def _detach(self, wait: bool = False) -> None:
        """Chunks written into the shared folder, and merged think-time sums, that are ready: their values (a file's
        handle with the chunk's own names; small sums) brought here in one gather, in place of their futures. The
        scheduler keeps a finished task's inputs while any result made from it is wanted (to make it again): each
        batch's analysis task, with its hands' lines, would stay in this process (the LocalCluster's scheduler runs
        here) until the pair table is made, ~6 KB a hand (and as much in the allocator's holes). A handle's file is on the
        shared folder, not on a worker: a worker lost later costs nothing. Chunks kept in the workers' memory (a
        folder the workers do not share) stay futures: their lineage is the only way to make them again. ``wait``:
        every chunk's handle, waited for (before the passes)."""
        if self._spill is not None:
            # only the chunks not yet brought here (each looked at until it is: not every chunk at every batch)
            at = [i for i in self._open if (_is_future if wait else _finished)(self.chunks[i])]
            if at:
                for i, handle in zip(at, self.client.gather([self.chunks[i] for i in at])):
                    self.chunks[i] = handle
                    self._own[i] = chunk_names(handle)  # the handle carries them
                done = set(at)
                self._open = [i for i in self._open if i not in done]
        self._thinks.detach()

    def _chunk_made(self, chunk: Any) -> None:
        """A chunk's future, and (unless the chunk is written into the shared folder, whose handle carries them) a task
        for its own names and kinds next to it, run while the analysis goes on (the room's codes need every chunk's:
        gathered at once before the passes, not computed then)."""
        self.chunks.append(chunk)
        self._open.append(len(self.chunks) - 1)
        # a chunk written into the shared folder comes back as a handle that carries them (:meth:`_detach`)
        self._own.append(None if self._spill is not None else self._submit("names", chunk_names, chunk))

    def feed(self, df: pd.DataFrame) -> None:
        if not len(df):
            return
        follower = df.attrs.get(FOLLOWER)
        if follower is None:  # rows the workers have not seen: regrouped here, chunked on a worker
            super().feed(df)
            return
        self._take(follower)
        self.note_hands(df["hand_id"])
        self._count(len(df), int(df["hand_id"].nunique()))

    def feed_written(self, batch: WrittenBatch) -> None:
        """An analysed batch the worker wrote into the spill: its chunk and think-time sums are on the workers."""
        self._take(batch.attrs[FOLLOWER])
        self.note_hands(batch.hand_ids)
        self._count(batch.rows, batch.hands)

    def add(self, df: pd.DataFrame) -> None:
        if not len(df):
            return
        self._chunk_made(self._build(df))
        self.note_hands(df["hand_id"])
        self._count(len(df), int(df["hand_id"].nunique()), df)

    def _map(self, name: str, fn: Any, *iterables: list[Any]) -> list[Any]:
        """``fn`` over the iterables, one task each, submitted as one graph (one message to the scheduler, not one a
        task: the client's own CPU per task is most of a small task's cost)."""
        n = len(iterables[0])
        return self.client.map(fn, *iterables, key=[self._key(name) for _ in range(n)]) if n else []

    def _map_reduce(self, name: str, fn: Any, merge: Any, *args: Any) -> Any:
        """``fn(chunk, *args)`` as a task next to each chunk, merged ``FANIN`` adjacent results a task."""
        def run(attempt: int) -> Any:
            # once, not once a task (running.dask.share: a worker fetches it once; a worker lost with it is a new attempt,
            # lost_retried); held here until the pass is merged
            shared = share(self.client, args)
            n = len(self.chunks)
            joined = functools.partial(_merge, merge)
            if self._grouped():
                groups = self._groups()
                m = len(groups)
                parts = self._map(name, _apply_group, [fn] * m, [joined] * m, groups, [shared] * m)
            else:
                parts = self._map(name, _apply, [fn] * n, self.chunks, [shared] * n)
            return self._tree(f"{name}-merge", parts, joined)

        return lost_retried(self.client, run)

    def _groups(self) -> list[list[Any]]:
        """The chunks in groups of ``FANIN`` adjacent ones (the tree's first level)."""
        return [self.chunks[i:i + FANIN] for i in range(0, len(self.chunks), FANIN)]

    def _grouped(self) -> bool:
        """Whether a pass runs as a task a group of ``FANIN`` adjacent chunks: the chunks are files of the shared
        folder (handles here, any worker reads them) and more than ``LOCAL_PARTS`` (fewer are merged here as they
        are)."""
        return len(self.chunks) > LOCAL_PARTS and self._on_files()

    def _on_files(self) -> bool:
        """Whether every chunk is a file of the shared folder whose handle is here (not a future)."""
        return all(isinstance(c, ChunkFile) for c in self.chunks)

    def _tree(self, name: str, parts: list[Any], merge: Any) -> Any:
        """The futures ``parts`` merged ``FANIN`` adjacent ones a task (``merge(*some)``), level by level, to one
        result; the last level (from at most :data:`LOCAL_PARTS` results) is merged here, in the same groups by
        the same call (the same sums): a pass then ends with one gather of a few results, not with a last task that
        waits for a free worker (the player table's tasks share them) and then for its result."""
        while len(parts) > LOCAL_PARTS:
            groups = [parts[i:i + FANIN] for i in range(0, len(parts), FANIN)]
            many = [g for g in groups if len(g) > 1]
            merged = iter(self._map(name, _merge_group, [merge] * len(many), many))
            parts = [next(merged) if len(g) > 1 else g[0] for g in groups]
        return _merge_here(merge, self.client.gather(parts))

    def _pass_e(self, fit: Baselines, habits: HabitSums, extras: bool) -> PairSums:
        """Pass E; with ``extras``, its per-hand burst pieces kept on the workers (:func:`pass_pairs_kept`): they
        never come here (~0.6 KB a hand, and as much again for their copies on their way back to the workers)."""
        if not extras:
            return super()._pass_e(fit, habits, extras)

        def run(attempt: int) -> tuple[PairSums, list[Any]]:
            st, self._pieces = self._pass_e_kept(fit, habits)
            return st, self._pieces

        st, _ = lost_retried(self.client, run)
        self._kept = (fit, habits)
        return st

    def _pass_e_kept(self, fit: Baselines, habits: HabitSums) -> tuple[PairSums, list[Any]]:
        """Pass E's tasks (:func:`pass_pairs_kept`), their sums merged in a tree, and each chunk's burst piece (a
        future on its worker)."""
        shared = share(self.client, (self._room, fit, habits))
        n = len(self.chunks)
        if self._grouped():  # a task a group of chunks; its pieces stay on its worker, its sums go to the tree
            groups = self._groups()
            m = len(groups)
            kept = self._map("pairs", _apply_group, [pass_pairs_kept] * m, [_kept_pieces] * m, groups, [shared] * m)
            pieces = self._map("burst-piece", _piece, kept)
            firsts = self._map("pairs-sums", _sums, kept)
            return _sums(self._tree("pairs-merge", firsts, _merge_kept)), pieces
        leaves = self._map("pairs", _apply, [pass_pairs_kept] * n, self.chunks, [shared] * n)
        pieces = self._map("burst-piece", _piece, leaves)
        # the first level of merges on the workers, always: the leaves hold the pieces too, which stay there
        groups = [leaves[i:i + FANIN] for i in range(0, n, FANIN)]
        firsts = self._map("pairs-merge", _merge_group, [_merge_kept] * len(groups), groups)
        return _sums(self._tree("pairs-merge", firsts, _merge_kept)), pieces

    def _start_burst(self, st: PairSums) -> Callable[[], pd.DataFrame]:
        """The burst statistic read on the workers from pass E's pieces, which stay there: the room's actors cut into
        parts of whole actors (:data:`BURST_PARTS` a worker, ``burst.actor_parts`` of their numbers of links), and
        for each part a task gathering its links from every piece (:func:`part_links`), one reading its habit terms
        and hot actors (``burst.part_look``), one merging those into the room's habit spread, and one reading the
        part (``burst._burst``): one graph, submitted now, gathered when the call returned is made (this process
        makes the rest of the pair table meanwhile). The same frame as ``burst._burst`` of the room's links, bit for
        bit (each actor's reading is his own links' and the room's habit spread's). A worker lost with pieces Dask
        cannot make again: pass E's pieces are made anew, and the parts read again."""
        pieces, self._pieces = self._pieces, None
        if pieces is None or self._kept is None:
            return super()._start_burst(st)
        sizes = np.asarray(st.burst_links if st.burst_links is not None else np.zeros(0), np.int64)
        if not sizes.any():  # no link at all: the (empty) pieces read here
            return super()._start_burst(dataclasses.replace(st, burst=_each_piece(self.client.gather(pieces))))
        workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        group = burst.actor_parts(sizes, BURST_PARTS * workers)
        parts = int(group.max()) + 1
        names, kept = self._names, self._kept

        def submit(pieces: list[Any]) -> tuple[list[Any], list[Any]]:
            links = [self._submit("burst-links", part_links, group, k, names, *pieces) for k in range(parts)]
            looks = self._map("burst-look", burst.part_look, links)
            tau2 = self._submit("burst-habits", _habit_var, *looks)
            return looks, self._map("burst", burst._burst, links, [tau2] * parts)

        futures = submit(pieces)

        def read() -> pd.DataFrame:
            def gather(attempt: int) -> tuple[list[Any], list[Any]]:
                nonlocal futures
                if attempt:
                    assert kept is not None
                    futures = submit(self._pass_e_kept(*kept)[1])
                return self.client.gather(futures[0]), self.client.gather(futures[1])

            looks, read = lost_retried(self.client, gather)
            first: dict[Any, int] = {}
            for _, _, f in looks:
                first.update(f)
            return burst.in_order_of(read, first)

        return read

    def _prepare(self) -> None:
        """The room's codes (``RoomCodes``, from every chunk's own names in chunk order, as the chunks made here
        are numbered), the chunks recoded on their workers, the directed pairs (a tree of unions) and the band edges
        (one task over every chunk's positive regrets)."""
        # the batches' think-time sums (a tree of merges on the workers, mostly done during the analysis), after the
        # rows read here
        think = self._thinks.finish()
        if think is not None:
            self.think = self.think.merge(think)
        self._detach(wait=True)  # the shared folder's chunks: their handles (with their names) here
        own = self.client.gather(self._own)  # made as the chunks were
        self._own = []
        self.codes = RoomCodes()
        coded = [self.codes.add(n, k) for n, k in own]
        players, codes = [p for p, _ in coded], [k for _, k in coded]
        names = self.codes.names()
        if self._on_files():  # handles: recoded here (the files stay as they are)
            handles: list[Any] = list(self.chunks)
            recoded: list[Any] = [recode_chunk(c, p, k, b) for c, p, k, b in zip(handles, players, codes, self._bases)]
            self.chunks = recoded
        else:
            self.chunks = self._map("recode", recode_chunk, self.chunks, players, codes, list(self._bases))
        n = len(self.chunks)
        if self._grouped():  # a task a group of chunks: its pairs' union, its positive regrets one after another
            groups = self._groups()
            m = len(groups)
            pairs_of = self._map("pairs-of", _apply_group, [chunk_pairs] * m, [_union] * m, groups, [()] * m)
            pos = self._map("regrets", _apply_group, [positive_regrets] * m, [_joined] * m, groups, [()] * m)
        else:
            pairs_of = self._map("pairs-of", on_chunk, [chunk_pairs] * n, self.chunks)
            pos = self._map("regrets", on_chunk, [positive_regrets] * n, self.chunks)
        edges = self._submit("edges", regret_edges, pos)
        self._names = names
        if burst.CHOICE_WEIGHTS:  # off: the chunks carry no choice log-likelihoods, no pass over them is needed
            self._choice_ll = self._map_reduce("choices", chunk_choices, add_choices, len(names))
        a, b = self._choice_fit()
        pairs = self._tree("pairs-union", pairs_of, _union)
        self._room = Room(len(names), max(len(self.codes.kinds), 1), edges.result(), pairs, self.options, a, b)


# --- the evidence ledger's day on Dask --------------------------------------------------------------------------

def read_part(part: Any, columns: list[str]) -> pd.DataFrame:
    """A store's part's rows (``part``: the store seen as that part alone), read and checked on a worker."""
    from analyzer.analysis.store import read_rows

    return read_rows(part, columns=columns)


def part_together(rows: pd.DataFrame) -> dict[tuple[str, str], int]:
    """Hands each unordered pair sat at one table in a part's rows (whole hands: a part's)."""
    from analyzer.audit.signals import hands_together

    seating = rows.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    return {k: int(n) for k, n in hands_together(seating).items()}


def _merge_together(*parts: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    out = dict(parts[0])
    for p in parts[1:]:
        for k, n in p.items():
            out[k] = out.get(k, 0) + n
    return out


class DaskDaySignals(ledger._DaySignals, DaskSignals):
    """The ledger's passes over one day (``ledger._DaySignals``) on the workers of ``connection``: each of the day's
    parts read by a task (:func:`read_part`) whose rows stay there, chunked next to them (a chunk a part) and
    counted there for the pairs' hands together (:func:`part_together`, merged in a tree); every pass a task a chunk
    and a tree of merges, the cross products included (``ledger.pass_cross``). This process holds the futures and
    merges the last level of each pass' sums (sized by players and pairs)."""

    def __init__(self, connection: DaskConnection) -> None:
        super().__init__(connection)
        self._togethers = _Tree(self, "together-merge", _merge_together)

    def add_part(self, part: Any, columns: list[str]) -> None:
        """A store's part (the store seen as that part alone, ``ledger._one_part``), read on a worker."""
        hands = sum(len(h) for h in part.part_hands)
        if not hands:
            return
        rows = self._submit("read", read_part, part, columns)
        self._chunk_made(self._build(rows))
        self._togethers.add(self._submit("together", part_together, rows))
        # a part lists only hands with rows (the store checks it): its hands number its chunk's hands
        self._count(hands, hands)

    def together(self) -> pd.Series:
        merged = self._togethers.finish()
        if merged is not None:
            self._together = _merge_together(self._together, merged)
        return super().together()

    def close(self) -> None:
        self._togethers = _Tree(self, "together-merge", _merge_together)
        super().close()


def day_statistics_on(connection: DaskConnection, parts: list[Any], columns: list[str],
                      scores: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``ledger.day_statistics`` of a day's parts (each the store seen as that part alone) with the rows read and
    the passes run on Dask; the same statistics to float rounding (a tree adds in another order than a loop)."""
    acc = DaskDaySignals(connection)
    try:
        for part in parts:
            acc.add_part(part, columns)
        if not acc.rows:
            return ledger._empty_pairs(scores), ledger._empty_players(scores)
        names, codes, st, cross = acc.sums(scores)
        together = acc.together()
    finally:
        acc.close()
    return ledger.day_frames(names, codes, st, cross, together, scores)


def look_on_dask(store: Any, connection: DaskConnection, **kwargs: Any) -> ledger.Look:
    """``ledger.look`` with each new day's parts read and its passes run on the workers of ``connection``
    (:func:`day_statistics_on`)."""
    return ledger.look(store, statistics=functools.partial(day_statistics_on, connection), **kwargs)
