"""The evidence ledger: per day of a decision store, the pairs' and players' sufficient statistics of the evidence,
and the anytime-valid verdicts read from them (:mod:`analyzer.audit.anytime`).

A **day** is one addition to the store: the parts one ``analyzer decisions DAY --out STORE`` run wrote (each part's
metadata names its run; parts that name none, from an older store, count as one addition together). The ledger is
the folder ``STORE/_ledger`` (a name Arrow's dataset reading skips, so ``pd.read_parquet(STORE)`` still reads the
rows alone) with one folder ``day-NNNNNN`` per day, written in a hidden folder and renamed into place: a day is there
whole or not at all, and a run killed while writing leaves the ledger as it was. A day, once written, never changes.

**What a day holds.** The day's rows are read once (only the parts of that addition) and go through the pair
signals' map and passes (:mod:`analyzer.audit.signals`) as a room of their own: the situation baselines, regret
bands, clip caps and seat habits are fitted on the day itself, so a day's statistics depend on that day's rows only.
Per directed pair: hands and decisions together and, per score column (``SCORES``), the sum and sum of squares of its
per-hand sums, and the sum over hands of the product of the two directions' per-hand sums (for the e-process of the
two directions' sum). Per player: its per-(co-player, hand) sums' count and sum of squares (its spread).

**The per-hand score** of a directed pair on day d is its per-hand favour sum divided by the actor's null spread:
the actor's root mean square of per-hand sums towards every seat it sat with, over days 1..d, shrunk towards the
room's (days 1..d) with the weight of ``PRIOR_HANDS`` hands. So the scale a day is read in is fixed when the day is
written, from that day and the days before it; an actor's favour towards one partner is a small part of its spread
over every co-player. The day adds S (the scores' sum), Q (their sum of squares) and N (hands: one unit of null
variance each) to the pair's totals; the e-process reads S and V = (Q + 2N) / 3. The two directions' sum adds BS, BQ
and BV (its null variance: 1 a direction a hand, plus 2 rho in hands where both decided, rho the room's correlation
of the directions over the days so far, counted upwards only).

**The state after each day** (the totals, the current e-value, its running maximum and the day it first reached
the ledger's alarm) is kept in that day's folder, so a look reads the last day and the new rows, never old rows;
a window of days (:func:`verdicts` ``since``) is read from the days' own contributions.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd

from analyzer.audit import anytime
from analyzer.audit.signals import (BURST_COLUMNS, HabitSums, PairSums, Room, hands_together, hot_pairs, pass_habits,
                                    pass_pairs)
from analyzer.audit.stream import StreamedSignals, hand_chunks

if TYPE_CHECKING:
    from analyzer.analysis.store import Store

#: A day's statistics from its parts (each the store seen as that part alone), the row columns and the scores.
DayReader = Callable[[list[Any], list[str], tuple[str, ...]], tuple[pd.DataFrame, pd.DataFrame]]

FORMAT = "bieqi-evidence-ledger"
VERSION = 1
LEDGER = "_ledger"
DAY_PREFIX = "day-"
#: The per-hand score columns of the pair signals' pass E (``signals.PAIR_COLUMNS``): the favour towards the partner
#: measured exactly and at once (cards made live or stranded), without the actor's own seat habit. A pair's e-value is
#: the mean of its e-processes over these columns and both directions. Another choice of columns makes another ledger
#: (``update``'s ``scores``; each day records its own); a weighted sum of columns per hand would need pass E to keep
#: the per-hand cross products, which it does not.
SCORES = ("imm_marginal_habit_free",)
#: Hands of the room's spread an actor's spread is shrunk towards (an actor seen in few hands is read by the room).
PRIOR_HANDS = 30.0
#: The alarm the ledger records the first crossing of (the audit's default alpha); other alphas read the days.
ALPHA = 1e-5
#: The decision rows' columns the signals read (``reasons`` is not read).
SKIP_COLUMNS = ("reasons",)


class LedgerError(Exception):
    """A ledger that does not belong to its store, or cannot be read (exit 2 in the CLI)."""


# --- one day's statistics -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _UnitRoom(Room):
    """A room whose decisions all weigh 1: pass E's per-hand pieces are then the plain per-hand sums (burst's pieces
    weigh each decision by the actor's choice model)."""

    def weights(self, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> np.ndarray:
        return np.ones(3 * len(ch["regret"]))


class _NoThink:
    """The think-time sums, not kept: the ledger reads no think-time signal (they would cost CPU and memory by
    co-players for nothing)."""

    def add_decisions(self, df: pd.DataFrame) -> None:
        pass


class _DaySignals(StreamedSignals):
    """The pair signals' passes over one day's rows, stopped at pass E's sums (no pair table, no burst); the pairs'
    hands together counted chunk by chunk. What it holds while the rows pass: a few chunks of rows and sums by
    players and pairs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.think = _NoThink()  # type: ignore[assignment]
        self._together: dict[tuple[str, str], int] = {}

    def note_hands(self, ids: Any) -> None:
        pass  # the ledger names no hand: no list of the day's hand ids is kept

    def add(self, df: pd.DataFrame) -> None:
        super().add(df)
        if len(df):  # whole hands (a chunk's): each hand's seating counted once
            seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
            for key, n in hands_together(seating).items():
                self._together[key] = self._together.get(key, 0) + int(n)

    def together(self) -> pd.Series:
        """Hands each unordered pair (a < b) sat at one table, over every row added."""
        idx = pd.MultiIndex.from_tuples(list(self._together), names=["a", "b"]) if self._together else \
            pd.MultiIndex.from_tuples([], names=["a", "b"])
        return pd.Series(list(self._together.values()), index=idx, dtype=np.int64, name="hands_together")

    def sums(self, scores: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, PairSums, _CrossSums]:
        """The players' names by code, the directed pairs' codes, pass E's sums (fitted twice, as the audit) and the
        two directions' cross products per pair (:class:`_CrossSums`, every decision weighing 1), summed as the
        chunks come."""
        self.flush()
        self._prepare()
        room = self._room
        fit = self._fit(None)
        habits = self._map_reduce("habits", pass_habits, HabitSums.merge, room, None, fit)
        st = self._pass_e(fit, habits, extras=False)
        hot = hot_pairs(st, room)
        if hot.any():
            fit = self._fit(hot)
            habits = self._map_reduce("habits", pass_habits, HabitSums.merge, room, hot, fit)
        unit = _UnitRoom(**{f.name: getattr(room, f.name) for f in dataclasses.fields(room)})
        st, cross = self._map_reduce("pairs", pass_cross, _merge_day, unit, fit, habits, scores)
        return self._names, room.pair_codes, st, cross.settled()


@dataclass
class _CrossSums:
    """Per directed pair (``Room.pair_codes`` order, ``n_pairs`` of them) the hands where both directions had a
    link (``both``) and, per score column of ``kept``, the sum over those hands of the product of the two
    directions' per-hand sums with its compensation (``cross``: (pairs, 2)). The products are added in hand order
    by Kahan's compensated sum, step by step as pandas sums a group, so the sums do not depend on how the day's rows
    were cut into reads. ``pending``: chunks' (pair index, products) not added yet. Merged in chunk order; a
    merge adds the later's pending products to the earlier's sums in place."""

    n_pairs: int
    kept: tuple[str, ...]
    pending: list[tuple[np.ndarray, dict[str, np.ndarray]]] = field(default_factory=list)
    both: np.ndarray | None = None
    cross: dict[str, np.ndarray] = field(default_factory=dict)

    def settled(self) -> _CrossSums:
        """These sums with the pending products added (new arrays: a merge's inputs stay as they were, as a task's
        on Dask must)."""
        if self.both is not None and not self.pending:
            return self
        both = np.zeros(self.n_pairs) if self.both is None else self.both.copy()
        cross = {c: np.zeros((self.n_pairs, 2)) if self.both is None else self.cross[c].copy() for c in self.kept}
        for index, products in self.pending:
            both += np.bincount(index, minlength=self.n_pairs)
            for c in self.kept:
                _compensated_add(cross[c], index, products[c])
        return _CrossSums(self.n_pairs, self.kept, [], both, cross)

    def merge(self, later: _CrossSums) -> _CrossSums:
        out = self.settled()
        if later.both is not None:  # sums added up elsewhere (a tree's other branch, on Dask): added whole
            assert out.both is not None
            out = _CrossSums(self.n_pairs, self.kept, [], out.both + later.both,
                             {c: np.column_stack([out.cross[c][:, 0] + later.cross[c][:, 0], out.cross[c][:, 1]])
                              for c in self.kept})
        return dataclasses.replace(out, pending=list(later.pending)).settled()


def _compensated_add(acc: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    """Add ``values`` into ``acc[index]`` (columns: sum, compensation), each index's values in their order, as
    pandas' grouped sum adds a group's (Kahan's compensated sum; a compensation that is NaN, after an infinity,
    starts again at 0). The k-th values of every index are added in one step."""
    if not len(index):
        return
    order = np.argsort(index, kind="stable")
    idx, val = index[order], values[order]
    starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
    rank = np.arange(len(idx)) - np.repeat(starts, np.diff(np.r_[starts, len(idx)]))
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[by_rank], np.arange(int(rank.max()) + 2))
    for a, b in zip(bounds[:-1], bounds[1:]):
        g, v = idx[by_rank[a:b]], val[by_rank[a:b]]
        s = acc[g, 0]
        y = v - acc[g, 1]
        t = s + y
        c = (t - s) - y
        acc[g, 1] = np.where(np.isnan(c), 0.0, c)
        acc[g, 0] = t


def pass_cross(ch: dict[str, np.ndarray], room: Room, fit: Any, habits: HabitSums,
               scores: tuple[str, ...]) -> tuple[PairSums, _CrossSums]:
    """Pass E over one chunk (``signals.pass_pairs`` with its per-hand pieces), reduced at once: its pair sums
    without the per-hand frames, and the products of the two directions' per-hand sums in each hand where both had
    a link (a hand lies in one chunk, so its pieces are matched within the chunk), pending their sum."""
    st = pass_pairs(ch, room, fit, habits, True)
    kept = tuple(c for c in scores if c in BURST_COLUMNS)
    piece = st.burst[0] if st.burst else pd.DataFrame({c: pd.Series(dtype=np.float64) for c in BURST_COLUMNS})
    both = piece.merge(piece, left_on=["actor", "other", "hand_id"], right_on=["other", "actor", "hand_id"],
                       suffixes=("", "_back"))
    index = room.pair_index(both["actor"].to_numpy(np.int64), both["other"].to_numpy(np.int64)).astype(np.int64)
    products = {c: both[c].to_numpy(np.float64) * both[f"{c}_back"].to_numpy(np.float64) for c in kept}
    return (PairSums(st.hands, st.decisions, st.acc, st.raw, [], []),
            _CrossSums(len(room.pair_codes), kept, [(index, products)]))


def _merge_day(a: tuple[PairSums, _CrossSums], b: tuple[PairSums, _CrossSums]) -> tuple[PairSums, _CrossSums]:
    return a[0].merge(b[0]), a[1].merge(b[1])


def day_statistics(rows: pd.DataFrame | Iterable[pd.DataFrame],
                   scores: tuple[str, ...] = SCORES) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One day's sufficient statistics from its decision rows: per directed pair (``actor``, ``other``) the
    ``hands_together`` (the unordered pair's), ``hands`` and ``decisions`` with a link, per score column c
    ``c_sum`` / ``c_sq`` of its per-hand sums, ``both_hands`` (hands where both directions had a link) and
    ``c_cross`` (the sum over them of the two directions' per-hand sums' product; NaN for a column pass E's
    per-hand pieces do not carry); per player (``player``) ``c_n`` / ``c_sq``: its per-(co-player, hand) sums'
    count and sum of squares. Empty frames for rows without a decision.

    ``rows``: one frame, or frames of whole hands in turn (a store's parts, read one at a time): the same
    statistics to the last bit. The rows go through the passes a chunk at a time and every sum is added as its
    chunk comes, so memory holds a few chunks of rows and sums by players and pairs, whatever the day's size."""
    acc = _DaySignals()
    try:
        if isinstance(rows, pd.DataFrame):
            for part in hand_chunks(rows) if len(rows) else ():
                acc.add(part)
        else:
            for batch in rows:
                acc.feed(batch)
        acc.flush()
        if not acc.rows:
            return _empty_pairs(scores), _empty_players(scores)
        names, codes, st, cross = acc.sums(scores)
        together = acc.together()
    finally:
        acc.close()
    return day_frames(names, codes, st, cross, together, scores)


def day_frames(names: np.ndarray, codes: np.ndarray, st: PairSums, cross: _CrossSums, together: pd.Series,
               scores: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`day_statistics`' frames from the day's passes (``_DaySignals.sums`` and ``together``)."""
    actor, other = names[codes >> 32], names[codes & 0xFFFFFFFF]
    pairs = pd.DataFrame({"actor": actor.astype(str), "other": other.astype(str),
                          "hands": st.hands, "decisions": st.decisions})
    for c in scores:
        pairs[f"{c}_sum"] = st.acc[c][:, 0]
        pairs[f"{c}_sq"] = st.acc[c][:, 1]
    assert cross.both is not None
    pairs["both_hands"] = cross.both.astype(np.float64)
    for c in scores:
        pairs[f"{c}_cross"] = cross.cross[c][:, 0] if c in cross.kept else np.nan
    # both directions of every pair (one may have had no decision with a choice towards the other): zeros
    known = set(zip(pairs["actor"], pairs["other"]))
    missing = sorted({(b, a) for a, b in known} - known)
    if missing:
        extra = pd.DataFrame(0.0, index=range(len(missing)), columns=pairs.columns[2:])
        extra.insert(0, "other", [b for _, b in missing])
        extra.insert(0, "actor", [a for a, _ in missing])
        pairs = pd.concat([pairs, extra], ignore_index=True)
    lo = np.where(pairs["actor"] < pairs["other"], pairs["actor"], pairs["other"])
    hi = np.where(pairs["actor"] < pairs["other"], pairs["other"], pairs["actor"])
    pairs["hands_together"] = together.reindex(pd.MultiIndex.from_arrays([lo, hi])).fillna(0).to_numpy(np.float64)
    players = pairs.groupby("actor", sort=True).agg(
        hands=("hands", "sum"), **{f"{c}_sq": (f"{c}_sq", "sum") for c in scores}).reset_index()
    players = players.rename(columns={"actor": "player"})
    for c in scores:
        players[f"{c}_n"] = players["hands"]
    return pairs.sort_values(["actor", "other"], ignore_index=True), players


def _empty_pairs(scores: tuple[str, ...]) -> pd.DataFrame:
    cols = ["actor", "other", "hands", "decisions", *(f"{c}_{k}" for c in scores for k in ("sum", "sq", "cross")),
            "both_hands", "hands_together"]
    return pd.DataFrame({c: pd.Series(dtype=object if c in ("actor", "other") else np.float64) for c in cols})


def _empty_players(scores: tuple[str, ...]) -> pd.DataFrame:
    cols = ["player", "hands", *(f"{c}_{k}" for c in scores for k in ("sq", "n"))]
    return pd.DataFrame({c: pd.Series(dtype=object if c == "player" else np.float64) for c in cols})


# --- the state: the totals after a day --------------------------------------------------------------------------

#: Per score column, the totals a pair keeps: its direction's scores' sum, sum of squares and hands (``S``, ``Q``,
#: ``N``), and the both-directions sum's (``BS``, ``BQ``, ``BV``: its sum, sum of squares and null variance).
KINDS = ("S", "Q", "N", "BS", "BQ", "BV")


@dataclass
class State:
    """The ledger's totals after some days: per directed pair (``pairs``, indexed by actor, other) and per player
    (``players``, indexed by player); ``day`` the last day folded in (0: none); ``room``: per score column the room's
    standardised cross products of the two directions and their hands (``[sum, hands]``), whose ratio is the null
    correlation of the directions."""

    pairs: pd.DataFrame
    players: pd.DataFrame
    day: int = 0
    scores: tuple[str, ...] = SCORES
    room: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def empty(cls, scores: tuple[str, ...] = SCORES) -> State:
        pcols: dict[str, list[float]] = {"hands_together": [], "hands": [], "decisions": [],
                                         **{f"{c}_{k}": [] for c in scores for k in KINDS},
                                         "log_e": [], "max_log_e": [], "alarm_day": []}
        pairs = pd.DataFrame({k: pd.Series(v, dtype=np.float64) for k, v in pcols.items()},
                             index=pd.MultiIndex.from_arrays([[], []], names=["actor", "other"]))
        players = pd.DataFrame({k: pd.Series([], dtype=np.float64)
                                for k in ("hands", *(f"{c}_{k}" for c in scores for k in ("sq", "n")))},
                               index=pd.Index([], name="player", dtype=object))
        return cls(pairs, players, 0, scores, {c: [0.0, 0.0] for c in scores})

    def rho(self, score: str) -> float:
        """The room's null correlation of a pair's two directions in a hand, counted upwards only (0 when unknown)."""
        cross, hands = self.room.get(score, [0.0, 0.0])
        return float(np.clip(cross / hands, 0.0, 1.0)) if hands > 0 else 0.0


def fold(state: State, day: int, pairs: pd.DataFrame, players: pd.DataFrame,
         alpha: float = ALPHA) -> tuple[State, pd.DataFrame]:
    """The state after ``day`` (its statistics from :func:`day_statistics`), and the day's contributions per directed
    pair (per score column ``c_s``, ``c_q``, ``c_n``: the standardised scores' sum, sum of squares and hands; ``c_bs``,
    ``c_bq``, ``c_bv``: the same of the two directions' sum, its null variance for ``bv``). The state given is
    unchanged."""
    scores = state.scores
    pl = state.players.add(players.set_index("player")[state.players.columns], fill_value=0.0)
    spread = {c: float(pl[f"{c}_sq"].sum()) / max(float(pl[f"{c}_n"].sum()), 1.0) for c in scores}
    contrib = pairs.set_index(["actor", "other"])
    idx = contrib.index
    rev = pd.MultiIndex.from_arrays([idx.get_level_values("other"), idx.get_level_values("actor")])
    actor = idx.get_level_values("actor")
    first = (idx.get_level_values("actor") < idx.get_level_values("other"))
    out = pd.DataFrame({"hands_together": contrib["hands_together"], "hands": contrib["hands"],
                        "decisions": contrib["decisions"]}, index=idx)
    room = {c: list(v) for c, v in state.room.items()}
    for c in scores:
        n_a, sq_a = pl[f"{c}_n"].reindex(actor).to_numpy(), pl[f"{c}_sq"].reindex(actor).to_numpy()
        var = (sq_a + PRIOR_HANDS * spread[c]) / (n_a + PRIOR_HANDS)
        sd = np.sqrt(np.where(var > 0, var, 1.0))
        sd_back = pd.Series(sd, index=idx).reindex(rev).to_numpy()
        out[f"{c}_s"] = contrib[f"{c}_sum"].to_numpy() / sd
        out[f"{c}_q"] = contrib[f"{c}_sq"].to_numpy() / sd ** 2
        out[f"{c}_n"] = contrib["hands"].to_numpy()
        cross = contrib[f"{c}_cross"].to_numpy() / (sd * sd_back)
        both = contrib["both_hands"].to_numpy()
        was = room.get(c, [0.0, 0.0])
        room[c] = [was[0] + float(np.nansum(cross[first])), was[1] + float(both[first & np.isfinite(cross)].sum())]
        rho = State(state.pairs, pl, day, scores, room).rho(c)
        back = out[[f"{c}_s", f"{c}_q", f"{c}_n"]].reindex(rev).to_numpy()
        out[f"{c}_bs"] = out[f"{c}_s"].to_numpy() + back[:, 0]
        out[f"{c}_bq"] = out[f"{c}_q"].to_numpy() + back[:, 1] + 2 * cross
        out[f"{c}_bv"] = out[f"{c}_n"].to_numpy() + back[:, 2] + 2 * rho * both
    add = pd.DataFrame({"hands_together": out["hands_together"], "hands": out["hands"],
                        "decisions": out["decisions"],
                        **{f"{c}_{k}": out[f"{c}_{k.lower()}"] for c in scores for k in KINDS}}, index=out.index)
    totals = [c for c in state.pairs.columns if c not in ("log_e", "max_log_e", "alarm_day")]
    new = state.pairs[totals].add(add[totals], fill_value=0.0)
    new["log_e"] = pair_log_e(new, scores)
    prev_max = state.pairs["max_log_e"].reindex(new.index).fillna(-np.inf).to_numpy()
    new["max_log_e"] = np.maximum(prev_max, new["log_e"].to_numpy())
    prev_day = state.pairs["alarm_day"].reindex(new.index).fillna(0.0).to_numpy()
    crossed = (prev_day == 0) & (new["log_e"].to_numpy() >= np.log(1 / alpha))
    new["alarm_day"] = np.where(crossed, float(day), prev_day)
    return State(new, pl, day, scores, room), out.reset_index()


def pair_log_e(totals: pd.DataFrame, scores: tuple[str, ...]) -> np.ndarray:
    """Per directed pair of ``totals`` (indexed by actor, other) the log of the unordered pair's e-value: the mean of
    the e-processes of each direction and of the two directions' sum, over every score column (a direction never
    seen adds an e-value of 1; a sum without its cross products, NaN, is left out)."""
    idx = totals.index
    rev = pd.MultiIndex.from_arrays([idx.get_level_values("other"), idx.get_level_values("actor")])
    logs = []
    for c in scores:
        mine = anytime.log_mixture_e(totals[f"{c}_S"].to_numpy(), anytime.robust_v(totals[f"{c}_Q"].to_numpy(),
                                                                                    totals[f"{c}_N"].to_numpy()))
        back = pd.Series(mine, index=idx).reindex(rev).fillna(0.0).to_numpy()
        logs += [mine, back]
        if np.isfinite(totals[f"{c}_BQ"].to_numpy()).all():
            logs.append(anytime.log_mixture_e(totals[f"{c}_BS"].to_numpy(),
                                              anytime.robust_v(totals[f"{c}_BQ"].to_numpy(),
                                                               totals[f"{c}_BV"].to_numpy())))
    return anytime.log_mean_e(np.stack(logs, axis=1), axis=1)


def replay(days: list[pd.DataFrame], scores: tuple[str, ...] = SCORES, alpha: float = ALPHA) -> pd.DataFrame:
    """The pairs' totals, e-values and running maxima over a run of days' contributions (``fold``'s second output,
    in day order): a window's verdicts, read from the days alone."""
    totals: pd.DataFrame | None = None
    cols = ["hands_together", "hands", "decisions", *(f"{c}_{k}" for c in scores for k in KINDS)]
    best: pd.Series | None = None
    first: pd.Series | None = None
    for i, d in enumerate(days, 1):
        add = d.set_index(["actor", "other"])
        add = add.rename(columns={f"{c}_{k.lower()}": f"{c}_{k}" for c in scores for k in KINDS})[cols]
        totals = add if totals is None else totals.add(add, fill_value=0.0)
        log_e = pd.Series(pair_log_e(totals, scores), index=totals.index)
        best = log_e if best is None else np.maximum(best.reindex(log_e.index).fillna(-np.inf), log_e)
        hit = pd.Series(np.where(log_e >= np.log(1 / alpha), float(i), 0.0), index=log_e.index)
        first = hit if first is None else first.reindex(hit.index).fillna(0.0).where(lambda s: s > 0, hit)
        last = log_e
    if totals is None:
        return State.empty(scores).pairs
    return totals.assign(log_e=last, max_log_e=best, alarm_day=first)


# --- the ledger on disk ------------------------------------------------------------------------------------------

@dataclass
class Day:
    """A day as its folder's ``day.json`` says it: its number, the store's parts it covers (name -> a digest of
    the part's hand ids), its hands, and when its addition was made (UTC, as the store's parts record it)."""

    number: int
    parts: dict[str, str]
    hands: int
    added_at: str | None
    path: Path

    @property
    def date(self) -> str | None:
        return None if self.added_at is None else self.added_at[:10]


@dataclass
class Ledger:
    """A store's ledger as read: its days in order and the state after the last (``State.empty()`` with none)."""

    path: Path
    days: list[Day] = field(default_factory=list)
    state: State = field(default_factory=State.empty)

    def contributions(self, days: list[Day]) -> list[pd.DataFrame]:
        """The days' contributions (``fold``'s second output), read from their folders."""
        return [pd.read_parquet(d.path / "contrib.parquet") for d in days]


def ledger_path(store_path: str | os.PathLike[str]) -> Path:
    return Path(store_path) / LEDGER


def _digest(hand_ids: list[str]) -> str:
    import hashlib

    return hashlib.sha256("\n".join(hand_ids).encode()).hexdigest()[:32]


def open_ledger(store: Store) -> Ledger:
    """The ledger of ``store`` (empty when it has none yet). Every day must cover parts the store holds with the
    hands they held then, and no part twice: :class:`LedgerError` naming the day otherwise."""
    root = ledger_path(store.path)
    led = Ledger(root)
    if not root.is_dir():
        return led
    held = {p.name: _digest(h) for p, h in zip(store.parts, store.part_hands)}
    seen: set[str] = set()
    names = sorted(n for n in os.listdir(root) if n.startswith(DAY_PREFIX) and n[len(DAY_PREFIX):].isdigit())
    for i, name in enumerate(names, 1):
        path = root / name
        try:
            doc = orjson.loads((path / "day.json").read_bytes())
        except (OSError, orjson.JSONDecodeError) as e:
            raise LedgerError(f"{path}: not a day of the evidence ledger ({e}); remove {root} to build it again "
                              f"from the store") from e
        if (not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION
                or doc.get("day") != i or not isinstance(doc.get("parts"), dict)):
            raise LedgerError(f"{path}: not day {i} of an evidence ledger of this version; remove {root} to build it "
                              f"again from the store")
        for part, digest in doc["parts"].items():
            if held.get(part) != digest or part in seen:
                why = ("is no longer in the store" if part not in held else "covered by two days" if part in seen
                       else "holds other hands than when the day was written")
                raise LedgerError(f"{path}: its part {part} {why}; remove {root} to build the ledger again from the "
                                  f"store")
            seen.add(part)
        led.days.append(Day(i, dict(doc["parts"]), int(doc.get("hands", 0)), doc.get("added_at"), path))
    if led.days:
        last = led.days[-1].path
        doc = orjson.loads((last / "day.json").read_bytes())
        scores = tuple(doc.get("scores", SCORES))
        want = {f"{c}_{k}" for c in scores for k in KINDS} | {"log_e", "max_log_e", "alarm_day"}
        have = set(pq_columns(last / "state-pairs.parquet"))
        if not want <= have or "room" not in doc:
            raise LedgerError(f"{last}: written by another version of the ledger (its state lacks "
                              f"{', '.join(sorted(want - have)) or 'room'}); remove {root} to build it again from "
                              f"the store")
        led.state = State(pd.read_parquet(last / "state-pairs.parquet").set_index(["actor", "other"]),
                          pd.read_parquet(last / "state-players.parquet").set_index("player"), len(led.days),
                          tuple(doc.get("scores", SCORES)), {c: list(v) for c, v in doc.get("room", {}).items()})
    return led


def pq_columns(path: Path) -> list[str]:
    """A Parquet file's column names (its footer only)."""
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except (OSError, ValueError) as e:
        raise LedgerError(f"{path}: not readable as Parquet ({e}); remove {path.parent.parent} to build the ledger "
                          f"again from the store") from e


def new_additions(store: Store, led: Ledger) -> list[list[int]]:
    """The store's parts no day covers, grouped by addition (indices into ``store.parts``, in the store's order; parts
    that name no addition form one group)."""
    covered = {p for d in led.days for p in d.parts}
    groups: dict[str, list[int]] = {}
    for i, (part, add) in enumerate(zip(store.parts, store.part_additions)):
        if part.name in covered:
            continue
        groups.setdefault(add["run"] if add else "", []).append(i)
    return list(groups.values())


def update(store: Store, *, on_day: Callable[[int, int], None] | None = None,
           scores: tuple[str, ...] = SCORES, statistics: DayReader | None = None) -> Ledger:
    """Add a day to the ledger for each addition of the store it does not cover yet, reading only those parts' rows;
    the ledger as it is then (``on_day(day, hands added so far)`` after each day). ``scores``: the per-hand score
    columns of a new ledger (any of ``signals.PAIR_COLUMNS``); a ledger keeps the scores its first day recorded. A
    day is written whole (a hidden folder renamed into place) or not at all; the ledger takes a lock while it adds,
    so two looks at once cannot write one day twice (the second waits). ``statistics``: what makes a day's
    statistics from its parts (each the store seen as that part alone), the columns to read and the scores, in place
    of reading them here (on Dask: :func:`analyzer.audit.on_dask.look_on_dask`, the parts read and the passes run on
    the workers, this process merging their sums and writing the day)."""
    from analyzer.analysis.store import read_rows

    root = ledger_path(store.path)
    root.mkdir(exist_ok=True)
    fd = _lock(root)
    try:
        led = open_ledger(store)
        if not led.days:
            led.state = State.empty(tuple(scores))
        _drop_leftovers(root)
        done = 0
        for group in new_additions(store, led):
            ids = [h for i in group for h in store.part_hands[i]]
            cols = [c for c in _row_columns() if c not in SKIP_COLUMNS]
            if statistics is not None:
                pairs, players = statistics([_one_part(store, i) for i in group], cols, led.state.scores)
            else:
                # part by part (a part holds whole hands): the day's rows are never in memory at once
                reads = (read_rows(_one_part(store, i), columns=cols) for i in group)
                pairs, players = day_statistics(reads, led.state.scores)
            number = len(led.days) + 1
            state, contrib = fold(led.state, number, pairs, players)
            add = store.part_additions[group[0]]
            parts = {store.parts[i].name: _digest(store.part_hands[i]) for i in group}
            path = _write_day(root, number, parts, len(ids), add["at"] if add else None, state, contrib)
            led.days.append(Day(number, parts, len(ids), add["at"] if add else None, path))
            led.state = state
            done += len(ids)
            if on_day is not None:
                on_day(number, done)
    finally:
        _unlock(fd)
    return led


def _one_part(store: Store, i: int) -> Store:
    """The store seen as its ``i``-th part alone (what ``read_rows`` reads of it; small, to send to a worker)."""
    return dataclasses.replace(store, hands={}, parts=[store.parts[i]], part_hands=[store.part_hands[i]],
                               part_additions=[store.part_additions[i]])


def _row_columns() -> list[str]:
    from analyzer.analysis.decisions import analyse

    return list(analyse([]).columns)


def _write_day(root: Path, number: int, parts: dict[str, str], hands: int, added_at: str | None, state: State,
               contrib: pd.DataFrame) -> Path:
    """Day ``number``'s folder: written hidden, renamed into place (never over a folder that exists)."""
    import secrets

    final = root / f"{DAY_PREFIX}{number:06d}"
    tmp = root / f".{final.name}.{secrets.token_hex(4)}.tmp"
    tmp.mkdir()
    try:
        contrib.to_parquet(tmp / "contrib.parquet", index=False)
        state.pairs.reset_index().to_parquet(tmp / "state-pairs.parquet", index=False)
        state.players.reset_index().to_parquet(tmp / "state-players.parquet", index=False)
        doc = {"format": FORMAT, "version": VERSION, "day": number, "parts": parts, "hands": hands,
               "added_at": added_at, "scores": list(state.scores), "room": state.room, "prior_hands": PRIOR_HANDS,
               "rho": anytime.RHO,
               "alarm_alpha": ALPHA}
        (tmp / "day.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        if final.exists():
            raise LedgerError(f"{final}: already written by another run; nothing written")
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _drop_leftovers(root: Path) -> None:
    """Hidden day folders a killed run left (never renamed into place): removed, under the ledger's lock."""
    for name in os.listdir(root):
        if name.startswith(f".{DAY_PREFIX}") and name.endswith(".tmp"):
            shutil.rmtree(root / name, ignore_errors=True)


def _lock(folder: Path) -> int | None:
    import fcntl

    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # no locks on this file system: the rename still never replaces a day
        os.close(fd)
        return None
    return fd


def _unlock(fd: int | None) -> None:
    if fd is None:
        return
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --- verdicts ---------------------------------------------------------------------------------------------------

def verdicts(totals: pd.DataFrame, scores: tuple[str, ...] = SCORES, *, alpha: float = ALPHA, fdr: float = 0.05,
             min_hands: int = 10, alarm_day: pd.Series | None = None) -> pd.DataFrame:
    """One row per unordered pair (a < b) from the directed totals (a state's ``pairs`` or :func:`replay`'s):
    ``hands_together``, the e-value now (``log10_e``) and its maximum over the days (``max_log10_e``), the verdict
    (``flagged``: the maximum reached 1/alpha on some day, with at least ``min_hands`` hands together now; ``review``:
    not flagged, chosen by e-BH at ``fdr`` over the current e-values of the pairs with ``min_hands``; else ``clear``)
    and ``flagged_day`` (the first day at or above 1/alpha); beside them the fixed-sample figures of the same scores:
    per direction ``z_ab``, ``z_ba`` (S / sqrt(N)), of the two directions' sum ``z_both`` (BS / sqrt(BV)), and the
    one-sided p of the largest, x 3 and x the score columns (``p_fixed``)."""
    from scipy import stats

    t = totals.reset_index()
    t = t[t["actor"] < t["other"]].rename(columns={"actor": "a", "other": "b"}) if len(t) else t.rename(
        columns={"actor": "a", "other": "b"})
    back = totals.reset_index().set_index(["other", "actor"])
    key = pd.MultiIndex.from_arrays([t["a"], t["b"]])
    out = pd.DataFrame({"a": t["a"].to_numpy(object), "b": t["b"].to_numpy(object),
                        "hands_together": t["hands_together"].to_numpy(np.int64)})
    # pairs seen in one direction only (the other never decided with a choice): the unordered row from that one
    zs = []
    for c in scores:
        n_ab = np.maximum(t[f"{c}_N"].to_numpy(), 1)
        z_ab = t[f"{c}_S"].to_numpy() / np.sqrt(n_ab)
        rev = back.reindex(key)
        z_ba = np.nan_to_num(rev[f"{c}_S"].to_numpy() / np.sqrt(np.maximum(rev[f"{c}_N"].to_numpy(), 1)))
        bv = t[f"{c}_BV"].to_numpy()
        z_both = np.where(bv > 0, t[f"{c}_BS"].to_numpy() / np.sqrt(np.where(bv > 0, bv, 1.0)), 0.0)
        out[f"{c}_z_ab"], out[f"{c}_z_ba"], out[f"{c}_z_both"] = z_ab, z_ba, np.nan_to_num(z_both)
        zs += [z_ab, z_ba, np.nan_to_num(z_both)]
    z_best = np.max(np.stack(zs, axis=1), axis=1) if zs else np.zeros(len(out))
    out["p_fixed"] = np.minimum(1.0, len(zs) * stats.norm.sf(z_best))
    out["log10_e"] = t["log_e"].to_numpy() / np.log(10)
    out["max_log10_e"] = t["max_log_e"].to_numpy() / np.log(10)
    log_max = t["max_log_e"].to_numpy()
    tested = out["hands_together"].to_numpy() >= min_hands
    flagged = tested & (log_max >= np.log(1 / alpha))
    days = t["alarm_day"].to_numpy() if alarm_day is None else alarm_day.reindex(key).fillna(0).to_numpy()
    out["flagged_day"] = np.where(flagged, days, 0).astype(np.int64)
    review = np.zeros(len(out), bool)
    review[np.flatnonzero(tested)] = anytime.e_bh(t["log_e"].to_numpy()[tested], fdr)
    out["verdict"] = np.where(flagged, "flagged", np.where(review, "review", "clear"))
    return out.sort_values(["max_log10_e", "log10_e"], ascending=False, ignore_index=True)


def first_days(led: Ledger, days: list[Day], alpha: float) -> pd.Series:
    """Per directed pair the first of ``days`` (numbered from 1 in that run) at which its e-value reached 1/alpha
    (0: never), from the days' totals as they stood: for an alarm other than the one the ledger records."""
    first: pd.Series | None = None
    for i, d in enumerate(days, 1):
        log_e = pd.read_parquet(d.path / "state-pairs.parquet", columns=["actor", "other", "log_e"]).set_index(
            ["actor", "other"])["log_e"]
        hit = pd.Series(np.where(log_e >= np.log(1 / alpha), float(i), 0.0), index=log_e.index)
        first = hit if first is None else first.reindex(hit.index).fillna(0.0).where(lambda s: s > 0, hit)
    return first if first is not None else pd.Series(dtype=np.float64)


# --- a look: the ledger brought up to date, and the verdicts of a window of days ----------------------------------

@dataclass
class Look:
    """A look at a store: its ledger (brought up to date), the days read (``window``), the days this look added
    (``added``) and the verdicts (:func:`verdicts`)."""

    ledger: Ledger
    window: list[Day]
    added: int
    pairs: pd.DataFrame
    alpha: float
    fdr: float
    min_hands: int

    def summary(self) -> dict[str, Any]:
        """The look as an audit result (``audit.json``, format ``bieqi-audit``, which the cases database reads): the
        alarm, one entry a pair (its e-values, verdict and first day flagged, and the fixed-sample figures of the
        same score: ``p_value``, ``score`` = -log10 p, ``q_value`` by Benjamini-Hochberg over the pairs tested),
        and under ``nightly`` the days, the window read and the method's constants."""
        from analyzer.audit.calibrate import q_values

        days = [{"day": d.number, "date": d.date, "added_at": d.added_at, "hands": d.hands, "parts": sorted(d.parts)}
                for d in self.ledger.days]
        by_day = {d.number: d.date for d in self.ledger.days}
        t = self.pairs
        p = np.clip(t["p_fixed"].to_numpy(np.float64), 1e-300, 1.0)
        tested = t["hands_together"].to_numpy() >= self.min_hands
        q = np.ones(len(t))
        q[tested] = q_values(p[tested])
        z_cols = [c for c in t.columns if c.endswith(("_z_ab", "_z_ba"))]
        z_best = t[z_cols].max(axis=1).to_numpy() if z_cols else np.zeros(len(t))
        pairs = []
        for i, r in enumerate(t.itertuples(index=False)):
            day = int(r.flagged_day)
            pairs.append({"players": [r.a, r.b], "hands_together": int(r.hands_together), "verdict": r.verdict,
                          "flagged": r.verdict == "flagged",
                          "log10_e": round(float(r.log10_e), 4), "max_log10_e": round(float(r.max_log10_e), 4),
                          "flagged_day": day or None, "flagged_date": by_day.get(day) if day else None,
                          "score": round(float(-np.log10(p[i])), 4), "log10_p": float(np.log10(p[i])),
                          "p_value": float(p[i]), "q_value": float(q[i]), "log10_q": float(np.log10(q[i])),
                          "effect_size": round(float(z_best[i] / np.sqrt(max(r.hands_together, 1))), 4),
                          "main_signal": "imm_marginal"})
        return {"format": "bieqi-audit", "version": 1, "hands": sum(d.hands for d in self.window),
                "alarm": {"alpha": self.alpha, "fdr": self.fdr, "min_hands": self.min_hands,
                          "e_threshold": 1 / self.alpha},
                "flagged": int((t["verdict"] == "flagged").sum()), "review": int((t["verdict"] == "review").sum()),
                "pairs": pairs,
                "nightly": {"days": days, "added_days": self.added,
                            "window": {"first_day": self.window[0].number if self.window else None,
                                       "last_day": self.window[-1].number if self.window else None},
                            "method": {"e_process": "one-sided normal mixture over per-hand scores, "
                                                    "V = (sum x^2 + 2 sum v) / 3",
                                       "scores": list(self.ledger.state.scores), "rho": anytime.RHO,
                                       "prior_hands": PRIOR_HANDS}}}


def window_days(days: list[Day], since: str | None) -> list[Day]:
    """The days of a window: all (``since`` None), those from day N on (``since`` "N"), or those added on or after
    a date (``since`` "YYYY-MM-DD", UTC; a day whose addition names no time is outside every dated window)."""
    if since is None:
        return list(days)
    if since.isdigit():
        return [d for d in days if d.number >= int(since)]
    return [d for d in days if d.date is not None and d.date >= since]


def look(store: Store, *, alpha: float = ALPHA, fdr: float = 0.05, min_hands: int = 10, since: str | None = None,
         on_day: Callable[[int, int], None] | None = None, scores: tuple[str, ...] = SCORES,
         statistics: DayReader | None = None) -> Look:
    """Bring the ledger of ``store`` up to date (reading only the new additions' rows) and read the verdicts: of
    every day from the ledger's state, or of a window of days (``since``, :func:`window_days`) from those days'
    contributions, the e-process then started at the window's first day. ``statistics``: how the new days'
    statistics are made (:func:`update`)."""
    before = len(open_ledger(store).days) if ledger_path(store.path).is_dir() else 0
    led = update(store, on_day=on_day, scores=scores, statistics=statistics)
    window = window_days(led.days, since)
    scores = led.state.scores
    if len(window) == len(led.days):
        totals = led.state.pairs
        first = None if alpha == ALPHA else first_days(led, window, alpha)
    else:
        totals = replay(led.contributions(window), scores, alpha)
        offset = window[0].number - 1 if window else 0
        first = totals["alarm_day"].where(totals["alarm_day"] == 0, totals["alarm_day"] + offset)
    pairs = verdicts(totals, scores, alpha=alpha, fdr=fdr, min_hands=min_hands, alarm_day=first)
    return Look(led, window, len(led.days) - before, pairs, alpha, fdr, min_hands)
