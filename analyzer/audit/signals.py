"""Pair signals from decision rows: a map over batches into chunks, passes that reduce chunks to small mergeable
statistics, and a finish that turns the merged statistics into the pair table.

Every signal is generic (no model of a particular cheat). Each decision is seen three times, once per other seat:
a *link* from the actor to that seat. A link's statistic is centred on what the whole room does in the same
situation (offset round the table, play or cover, how costly the decision was), so position effects and skill do
not look like favouritism. Links are summed per hand, and a directed pair's z divides the sum by the spread of the
actor's per-hand sums over all the seats it sat with; hands are the unit, so decisions in one hand may be
correlated.

The work has three parts, and every way of running it (one process: :mod:`analyzer.audit.stream`; a Dask cluster:
:mod:`analyzer.audit.on_dask`) calls the same functions here:

- **map**: :func:`build_chunk` turns a batch of whole hands into a compact numeric *chunk* (its links: player codes,
  seat offset and the five raw effects; per decision the hand, play or cover, the regret and burst's choice
  inputs). Chunks are kept (on disk or on the workers) because the passes read them more than once.
- **passes**: each reads one chunk and returns a statistic whose ``merge`` adds another chunk's (adding in chunk
  order gives the floats of one loop over the chunks):

  A. :class:`SituationSums` (:func:`pass_means`): per situation the room's sums for the baselines;
  B. :class:`SituationSpread` (:func:`pass_spread`): per situation the spread of ``total``'s covariate (regret);
  C. :class:`LargestResiduals` (:func:`pass_top`): per signal the largest |residuals|, for the 99.5% clip cap (an
     exact quantile from the largest values: the count is known after pass A);
  D. :class:`HabitSums` (:func:`pass_habits`): per (actor, offset) and (actor, co-player, offset) the seat-habit
     sums;
  E. :class:`PairSums` (:func:`pass_pairs`): per directed pair hands, decisions and the sum and sum of squares of
     its per-hand sums (the z's), and, kept per hand because their statistics need them, burst's per-hand favour
     scores and the hands where a pair deviated.

  Besides the passes, the room's regret band edges (quantiles of every positive regret), its directed pairs, the
  choice model's per-player grid sums (:func:`chunk_choices`) and the think-time sums
  (:class:`analyzer.audit.think.ThinkStats`) are read once from the chunks or the rows.
- **finish**: :func:`pair_table` reads the merged statistics (the directed z's: :func:`directed`), the think-time
  fit, co-deviation (:func:`codeviation_of`) and burst (:mod:`analyzer.audit.burst`) into one row per pair.

Not every step is a sum over hands. The regret bands are room-wide quantiles; passes B-E read the baselines
that passes A-C fit from the whole room; the baselines are fitted twice, the second time without the decisions of
directed pairs that stand out after the first (:func:`hot_pairs`); the seat habit of pass D is subtracted link by
link before pass E squares the per-hand sums; burst ranks each pair's hands among the actor's others (a permutation
test over per-hand scores, weighted by a choice model fitted on all of the actor's decisions); co-deviation tests
against the room's favour rates. So a room is read in up to ten passes over its chunks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from analyzer.analysis.dist import poisson_logsf
from analyzer.analysis.options import OptionArrays, option_arrays
from analyzer.audit import burst
from analyzer.audit.burst import (BURST_SIGNAL, CHOICE_GRID, CHOICE_KEYS, choice_inputs, choice_loglik, fit_rows,
                                  weights_of)
from analyzer.audit.think import P_MAX, ThinkStats

SEATS = 4
#: Hands of the pair's own spread that weigh as much as the actor's spread over everyone.
SHRINK_HANDS = 30.0
#: Per-link statistics are clipped at this quantile of their room-wide absolute values, so one
#: hand with a 三通 or 独头七 multiplier cannot carry a pair on its own.
CLIP_QUANTILE = 0.995
REGRET_BINS = 4
#: Favour signals also read with the actor's own seat-offset habit removed.
HABIT_CHECKED = ("marginal", "dd_marginal", "imm_marginal")
#: Links (decisions seen from one seat) below which an actor's own habit towards a seat offset
#: is shrunk towards none.
HABIT_LINKS = 100.0
#: A directed pair this far out on the first fit is left out of the room's baselines in the second.
SUSPECT_Z = 4.0

#: Rows whose options ``seat_effects`` parses at once (bounded memory, whatever the rows).
OPTION_BLOCK = 512

#: Directed per-hand signals (name -> what a link contributes); co-deviation is per pair.
LINK_SIGNALS = ("marginal", "dd_marginal", "imm_marginal", "total", "pooled")
#: The per-pair columns pass E sums per hand: the signals and the seat-habit-free ones.
PAIR_COLUMNS = (*LINK_SIGNALS, *(f"{s}_habit_free" for s in HABIT_CHECKED))
#: The columns of the burst statistic's per-hand links (``burst._burst``), as pass E's pieces give them.
BURST_COLUMNS = ("actor", "other", "hand_id", "offset", BURST_SIGNAL, f"{BURST_SIGNAL}_habit_free")
#: Fields of a directed signal table (:func:`directed`'s columns).
FIELDS = ("hands", "decisions", "z", "per_hand", "se_per_hand", "raw_per_hand")
_EFFECTS = ("own", "dd", "own_avg", "dd_avg", "imm")


@dataclass(frozen=True, slots=True)
class SignalOptions:
    """Thresholds of the signals; defaults are generic, not tuned to a style."""

    deviation_regret: float = 2.0  # points: a decision this costly (and > 2 s.e.) is a deviation
    deviation_se: float = 2.0


@dataclass(frozen=True, slots=True)
class SeatEffects:
    """Per decision and seat (rows, 4): the chosen option's value minus a reference option's.

    ``own``/``dd``: against the sensible choice (own information / true deal). ``own_avg`` /
    ``dd_avg``: against the average option, which uses every option the actor passed over, not
    only the best one (more decisions carry information, and less of the deal's luck remains).
    ``imm``: the exact immediate effect on the true deal against the average option (the
    ``imm`` columns; zeros for rows without them).
    """

    own: np.ndarray
    dd: np.ndarray
    own_avg: np.ndarray
    dd_avg: np.ndarray
    imm: np.ndarray


def seat_effects(df: pd.DataFrame, parsed: OptionArrays | None = None) -> SeatEffects:
    """Read every option's values from ``options`` when the rows carry them (``parsed``: the rows' options already
    parsed, by a caller that reads them for something else too).

    The ``dd_delta`` columns compare with the option best under the true deal; the audit needs
    the same reference as the own-information deltas (what a sensible player would have done).
    Without ``options`` the delta columns stand in for everything.
    """
    own = df[[f"delta{s}" for s in range(SEATS)]].to_numpy(np.float64)
    dd = df[[f"dd_delta{s}" for s in range(SEATS)]].to_numpy(np.float64)
    cols = [f"imm{s}" for s in range(SEATS)]
    # rows of a source without the columns (another variant) carry no immediate effect
    imm = df[cols].to_numpy(np.float64) if set(cols) <= set(df.columns) else np.zeros((len(df), SEATS))
    imm = np.nan_to_num(imm)
    if "options" not in df.columns:
        return SeatEffects(own, dd, own, dd, imm)
    dd, own_avg, dd_avg = dd.copy(), own.copy(), dd.copy()
    # the options of a block of rows parsed at once (analysis.options), then array indexing: row by row this costs
    # a tenth of a whole audit's CPU; a block at a time, so the arrays held at once do not grow with the rows
    # (a caller's own parse is of a bounded frame: a chunk of CHUNK_HANDS hands)
    options, chosen, best = df["options"], df["chosen"].tolist(), df["best"].tolist()
    spans = ([(0, len(df))] if parsed is not None
             else [(lo, min(lo + OPTION_BLOCK, len(df))) for lo in range(0, len(df), OPTION_BLOCK)])
    for lo, hi in spans:
        oa = parsed if parsed is not None else option_arrays(options.iloc[lo:hi])
        c_at, b_at = oa.index_of(chosen[lo:hi]), oa.index_of(best[lo:hi])
        ok = np.flatnonzero((oa.count > 0) & (c_at >= 0) & (b_at >= 0))  # the others keep the delta columns
        if not len(ok):
            continue
        both = np.concatenate([oa.ev, oa.ev_dd], axis=1)
        # per row the sum of its options in order, over their count (the rows with options: reduceat sums
        # from one start to the next, and a row without options has none to add)
        nonempty = np.flatnonzero(oa.count > 0)
        at = np.zeros(len(oa.count), np.int64)
        at[nonempty] = np.arange(len(nonempty))
        mean = np.add.reduceat(both, oa.start[nonempty], axis=0)[at[ok]] / oa.count[ok][:, None]
        c, b = both[oa.start[ok] + c_at[ok]], both[oa.start[ok] + b_at[ok]]
        dd[lo + ok] = c[:, SEATS:] - b[:, SEATS:]
        own_avg[lo + ok] = c[:, :SEATS] - mean[:, :SEATS]
        dd_avg[lo + ok] = c[:, SEATS:] - mean[:, SEATS:]
    return SeatEffects(own, dd, own_avg, dd_avg, imm)


def hands_together(seating: pd.DataFrame) -> pd.Series:
    """Hands each unordered pair sat at one table, from a frame with hand_id, p0..p3."""
    names = seating[["p0", "p1", "p2", "p3"]].to_numpy(object)
    pairs: dict[tuple[str, str], int] = {}
    for row in names:
        ps = sorted(map(str, row))
        for i in range(SEATS):
            for j in range(i + 1, SEATS):
                key = (ps[i], ps[j])
                pairs[key] = pairs.get(key, 0) + 1
    idx = pd.MultiIndex.from_tuples(list(pairs), names=["a", "b"]) if pairs else pd.MultiIndex.from_tuples(
        [], names=["a", "b"])
    return pd.Series(list(pairs.values()), index=idx, dtype=np.int64, name="hands_together")




# --- the map: a batch of whole hands into a chunk -------------------------------------------------------------

def _raw_links(ch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A chunk's links (each decision once per other seat, offsets 1, 2, 3 in turn) and their raw effects."""
    seat = ch["seat"]
    n = len(seat)
    rows = np.arange(n)
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("actor", "other", "offset", *LINK_SIGNALS)}
    for k in (1, 2, 3):
        o = (seat + k) % SEATS
        r1, r2 = (seat + (k % 3) + 1) % SEATS, (seat + ((k + 1) % 3) + 1) % SEATS  # the two remaining seats
        v: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for tag, name in (("d", "own"), ("dd", "dd"), ("a", "own_avg"), ("add", "dd_avg"), ("imm", "imm")):
            m = ch[name]
            v[tag] = (m[rows, seat], m[rows, o], (m[rows, r1] + m[rows, r2]) / 2)  # actor, other, the rest
        parts["actor"].append(ch["names"][rows, seat])
        parts["other"].append(ch["names"][rows, o])
        parts["offset"].append(np.full(n, k, np.int64))
        # how the actor treats this seat compared with the two others (Bowling's marginal impact), the chosen
        # option against the average one, by the actor's own information
        parts["marginal"].append(v["a"][1] - v["a"][2])
        # the same judged with the true deal: favour that only someone who saw the partner's hand could aim
        parts["dd_marginal"].append(v["add"][1] - v["add"][2])
        # the same favour measured exactly and at once (cards made live or dead, no rollouts): far less noise
        parts["imm_marginal"].append(v["imm"][1] - v["imm"][2])
        # what the decision did for the pair against the sensible choice (total impact); weak players lose
        # more, so the room's line in regret is its baseline, not zero
        parts["total"].append(v["d"][0] + v["d"][1])
        # true-deal value for the pair beyond what the actor's own information promised: zero on average for
        # anyone deciding from their own hand (a martingale), positive with pooled hands
        parts["pooled"].append((v["add"][0] + v["add"][1]) - (v["a"][0] + v["a"][1]))
    return {k: np.concatenate(p) for k, p in parts.items()}


def build_chunk(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """A chunk of decision rows of whole hands: its links with the raw effects, and per decision the hand,
    kind and regret (runs where the rows are: this process, or a Dask worker next to the batch's analysis).

    Player and kind codes are the chunk's own (indices into its sorted ``names`` and ``kinds``) and the hands
    are numbered from 0: :func:`recode` puts them in the room's codes and numbering before the passes."""
    # the options read once for both readers (the seat effects and burst's choice weights)
    parsed = (option_arrays(df["options"], CHOICE_KEYS if burst.CHOICE_WEIGHTS else ())
              if "options" in df.columns and len(df) else None)
    eff = seat_effects(df, parsed)
    names, pcode = np.unique(df[[f"p{s}" for s in range(SEATS)]].to_numpy(object).astype(str), return_inverse=True)
    pcode = pcode.reshape(len(df), SEATS).astype(np.int64)
    kinds, kcode = np.unique(df["kind"].to_numpy(object).astype(str), return_inverse=True)
    hand = pd.factorize(df["hand_id"].astype(str))[0].astype(np.int64)
    regret = df["regret"].to_numpy(np.float64)
    seat = df["seat"].to_numpy(np.int64)
    links = _raw_links({"names": pcode, "seat": seat, **{k: getattr(eff, k) for k in _EFFECTS}})
    return {**_choices(df, pcode[np.arange(len(df)), seat], len(names), parsed),
            "names": np.asarray(names, object), "kinds": np.asarray(kinds, object),
            "n_hands": np.array([int(hand.max()) + 1 if len(hand) else 0], np.int64),
            "hand": hand.astype(np.int32), "kind": kcode.ravel().astype(np.int16), "regret": regret,
            "regret_se": df["regret_se"].to_numpy(np.float64),
            # the links themselves, so the passes read them instead of rebuilding them
            "actor": links["actor"].astype(np.int32), "other": links["other"].astype(np.int32),
            "offset": links["offset"].astype(np.int8), **{k: links[k] for k in LINK_SIGNALS}}


def _choices(df: pd.DataFrame, actor: np.ndarray, n_players: int, parsed: OptionArrays | None = None
             ) -> dict[str, np.ndarray]:
    """burst's choice weights' inputs: each decision's option losses, kept for pass E's weights, and the chunk's
    per-player grid log-likelihoods (chunk codes; summed over the room's chunks before the passes,
    :func:`chunk_choices`). Empty when the rows carry no options."""
    inputs = choice_inputs(df, parsed) if burst.CHOICE_WEIGHTS else None
    if inputs is None:
        return {}
    loss, ref, chosen = inputs
    m = fit_rows(df)  # the model is fitted on a fixed share of the decisions (burst.FIT_EVERY)
    return {"choice_loss": loss.astype(np.float32), "choice_ref": ref.astype(np.float32), "choice_chosen": chosen,
            "choice_ll": choice_loglik(loss[m], ref[m], chosen[m], actor[m], n_players)}


def chunk_choices(ch: dict[str, np.ndarray], n_players: int) -> np.ndarray:
    """A recoded chunk's per-player grid log-likelihoods in the room's codes ((n_players, grid); zeros without
    options): they add up over the chunks (:func:`add_choices`)."""
    out = np.zeros((n_players, len(CHOICE_GRID) ** 2))
    if "choice_ll" in ch:
        out[ch["choice_players"]] += ch["choice_ll"]  # a chunk's own codes are distinct players
    return out


def add_choices(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two per-player log-likelihood sums, the shorter padded with players of no decision."""
    n = max(len(a), len(b))
    return np.pad(a, ((0, n - len(a)), (0, 0))) + np.pad(b, ((0, n - len(b)), (0, 0)))


def recode(ch: dict[str, np.ndarray], players: np.ndarray, kinds: np.ndarray, hand_base: int) -> dict[str, np.ndarray]:
    """The chunk in the room's codes: ``players[i]`` / ``kinds[i]`` is the room's code of the chunk's i-th
    name / kind, ``hand_base`` the room's number of the chunk's first hand (a new dict, ``ch`` unchanged)."""
    out = {k: v for k, v in ch.items() if k not in ("names", "kinds")}
    players = np.asarray(players, np.int64)
    out["actor"] = players[ch["actor"]].astype(np.int32)
    out["other"] = players[ch["other"]].astype(np.int32)
    out["kind"] = np.asarray(kinds, np.int64)[ch["kind"]].astype(np.int16)
    out["hand_base"] = np.array([hand_base], np.int64)
    if "choice_ll" in ch:
        out["choice_players"] = players
    return out


class RoomCodes:
    """The room's codes of players and kinds: in order of first appearance, each chunk's own (sorted) names in
    turn, so every way of running the passes numbers the room alike."""

    def __init__(self) -> None:
        self.players: dict[str, int] = {}
        self.kinds: dict[str, int] = {}

    @staticmethod
    def _codes(values: np.ndarray, table: dict[str, int]) -> np.ndarray:
        uniq, inv = np.unique(values.astype(str), return_inverse=True)
        for u in uniq.tolist():
            table.setdefault(u, len(table))
        return np.array([table[u] for u in uniq.tolist()], np.int64)[inv.ravel()].reshape(values.shape)

    def add(self, names: np.ndarray, kinds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The room's codes of a chunk's own names and kinds (new ones numbered after those seen)."""
        return self._codes(names, self.players), self._codes(kinds, self.kinds)

    def names(self) -> np.ndarray:
        """The players' names by code."""
        return np.array(sorted(self.players, key=self.players.__getitem__), dtype=object)


def positive_regrets(ch: dict[str, np.ndarray]) -> np.ndarray:
    """The chunk's positive regrets (the regret bands' edges are their room-wide quantiles)."""
    return ch["regret"][ch["regret"] > 1e-9]


def chunk_pairs(ch: dict[str, np.ndarray]) -> np.ndarray:
    """The directed pairs (actor << 32 | other, room codes) with a link in the chunk, sorted."""
    return np.unique(ch["actor"].astype(np.int64) * (1 << 32) + ch["other"].astype(np.int64))


def regret_edges(pos: list[np.ndarray]) -> np.ndarray | None:
    """The regret bands' edges from every chunk's positive regrets (None: too few for bands)."""
    values = np.concatenate(pos) if pos else np.zeros(0)
    if 3 * len(values) < REGRET_BINS * 10:  # the links hold each decision three times
        return None
    return qcut_edges(np.repeat(values, 3), REGRET_BINS)


def qcut_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """The edges ``pd.qcut(values, bins, retbins=True, duplicates="drop")`` returns, without the labels of
    every value (which cost ~5x the values' memory); equal to the last bit (``tests/audit/test_audit_rows.py``)."""
    q = np.linspace(0, 1, bins + 1)
    np.putmask(q, bins * q != np.arange(bins + 1), np.nextafter(q, 1))  # as qcut: round up, not to nearest
    return np.asarray(pd.unique(pd.Series(values).quantile(q).to_numpy()), np.float64)


def unpack(ch: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """A chunk as the passes read it: per decision (hand, kind, regret, ...) and per link, in int64 (``ch`` unchanged)."""
    link_keys = ("actor", "other", "offset", *LINK_SIGNALS)
    links = {k: ch[k] for k in link_keys}
    for k in ("actor", "other", "offset"):
        links[k] = links[k].astype(np.int64)
    dec = {k: v for k, v in ch.items() if k not in link_keys}
    dec["hand"] = dec["hand"].astype(np.int64)
    dec["kind"] = dec["kind"].astype(np.int64)
    return dec, links


# --- the room: what every pass needs besides its chunk --------------------------------------------------------

@dataclass(frozen=True)
class Room:
    """What every pass needs besides the chunk (small: sizes, codes of the pairs, band edges)."""

    n_players: int
    kinds: int
    edges: np.ndarray | None
    pair_codes: np.ndarray
    options: SignalOptions
    #: burst's choice weights: per player the choice model's fitted (a, b) (``burst.grid_fit``)
    choice_a: np.ndarray | None = None
    choice_b: np.ndarray | None = None

    @property
    def n_sit(self) -> int:
        return 3 * self.kinds * (REGRET_BINS + 1)

    def pair_index(self, actor: np.ndarray, other: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.pair_codes, actor * (1 << 32) + other)

    def situation(self, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> np.ndarray:
        """Offset x kind x regret band: 0 for (near) free decisions, then the bands of the costly ones."""
        regret = np.tile(ch["regret"], 3)
        rbin = np.zeros(len(regret), np.int64)
        pos = regret > 1e-9
        if self.edges is None:
            rbin[pos] = 1
        else:  # pd.qcut's bins: right-closed, the lowest edge included
            ids = np.searchsorted(self.edges, regret[pos], side="left")
            ids[regret[pos] == self.edges[0]] = 1
            rbin[pos] = ids
        kind = np.tile(ch["kind"], 3)
        return np.asarray(((links["offset"] - 1) * self.kinds + kind) * (REGRET_BINS + 1) + rbin, np.int64)

    def use(self, ch: dict[str, np.ndarray], links: dict[str, np.ndarray], hot: np.ndarray | None) -> np.ndarray:
        """Links in the baselines' fit: all, or (second fit) those of decisions without a link of a hot pair."""
        n = len(ch["regret"])
        if hot is None:
            return np.ones(3 * n, bool)
        bad = hot[self.pair_index(links["actor"], links["other"])].reshape(3, n).any(axis=0)
        return np.tile(~bad, 3)

    def weights(self, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> np.ndarray:
        """Per link, its decision's burst weight (1 for chunks without options)."""
        n = len(ch["regret"])
        if "choice_loss" not in ch or self.choice_a is None or self.choice_b is None:
            return np.ones(3 * n)
        actor = links["actor"][:n]  # the links of offset 1 come first, one per decision
        w = weights_of(ch["choice_loss"].astype(np.float64), ch["choice_ref"].astype(np.float64), ch["choice_chosen"],
                       self.choice_a[actor], self.choice_b[actor])
        return np.tile(w, 3)


@dataclass
class Baselines:
    """One fit of the room's baselines (passes A-C): per situation the line of each signal, and its clip cap."""

    mean_y: dict[str, np.ndarray]
    mean_x: np.ndarray  # regret, for ``total``'s line
    slope: np.ndarray
    cap: dict[str, float]


# --- the passes: a chunk into a statistic with a merge ----------------------------------------------------------

@dataclass
class SituationSums:
    """Pass A: per situation the links in the baselines' fit (``w``), their regrets' sum (``x``) and each signal's
    sum (``y``); ``used``: how many links. Merge: every sum added."""

    used: int
    w: np.ndarray
    x: np.ndarray
    y: dict[str, np.ndarray]

    def merge(self, later: SituationSums) -> SituationSums:
        return SituationSums(self.used + later.used, self.w + later.w, self.x + later.x,
                             {s: self.y[s] + later.y[s] for s in self.y})


def pass_means(ch_packed: dict[str, np.ndarray], room: Room, hot: np.ndarray | None) -> SituationSums:
    """Pass A: per situation the links in use and the sums of each signal and of the regret."""
    ch, links = unpack(ch_packed)
    g_n = room.n_sit
    grp = room.situation(ch, links)
    w = room.use(ch, links, hot).astype(np.float64)
    regret = np.tile(ch["regret"], 3)
    return SituationSums(int(w.sum()), np.bincount(grp, w, g_n), np.bincount(grp, w * regret, g_n),
                         {s: np.bincount(grp, w * links[s], g_n) for s in LINK_SIGNALS})


@dataclass
class SituationSpread:
    """Pass B: per situation the sum of the regret's squared deviation from its mean (``sxx``) and of its product
    with ``total``'s deviation (``sxy``): ``total``'s line in regret. Merge: added."""

    sxx: np.ndarray
    sxy: np.ndarray

    def merge(self, later: SituationSpread) -> SituationSpread:
        return SituationSpread(self.sxx + later.sxx, self.sxy + later.sxy)


def pass_spread(ch_packed: dict[str, np.ndarray], room: Room, hot: np.ndarray | None, mean_x: np.ndarray,
                mean_total: np.ndarray) -> SituationSpread:
    """Pass B: per situation the sums of the covariate's squared deviation and its product with ``total``'s."""
    ch, links = unpack(ch_packed)
    g_n = room.n_sit
    grp = room.situation(ch, links)
    w = room.use(ch, links, hot).astype(np.float64)
    dx = np.tile(ch["regret"], 3) - mean_x[grp]
    return SituationSpread(np.bincount(grp, w * dx ** 2, g_n),
                           np.bincount(grp, w * dx * (links["total"] - mean_total[grp]), g_n))


@dataclass
class LargestResiduals:
    """Pass C: per signal the ``keep`` largest |residuals| of the links in use (``top``) and how many are finite.
    Merge: the counts added, the ``keep`` largest of both kept (the same values whatever the order)."""

    finite: dict[str, int]
    top: dict[str, np.ndarray]
    keep: int

    def merge(self, later: LargestResiduals) -> LargestResiduals:
        return LargestResiduals({s: self.finite[s] + later.finite[s] for s in LINK_SIGNALS},
                                {s: _largest(np.concatenate([self.top[s], later.top[s]]), self.keep)
                                 for s in LINK_SIGNALS}, self.keep)

    def cap(self, signal: str, q: float) -> float:
        """The q-quantile of the signal's |residuals| (numpy's linear method), from the largest ones kept."""
        return _upper_quantile(np.sort(self.top[signal]), self.finite[signal], q)


def pass_top(ch_packed: dict[str, np.ndarray], room: Room, hot: np.ndarray | None, fit: Baselines,
             keep: int) -> LargestResiduals:
    """Pass C: per signal the ``keep`` largest |residuals| of the links in use and how many are finite."""
    ch, links = unpack(ch_packed)
    use = room.use(ch, links, hot)
    res = _residuals(room, fit, ch, links)
    finite: dict[str, int] = {}
    top: dict[str, np.ndarray] = {}
    for s in LINK_SIGNALS:
        a = np.abs(res[s][use])
        a = a[~np.isnan(a)]
        finite[s] = len(a)
        top[s] = _largest(a, keep)
    return LargestResiduals(finite, top, keep)


def _largest(values: np.ndarray, keep: int) -> np.ndarray:
    return np.partition(values, len(values) - keep)[len(values) - keep:] if len(values) > keep else values


def _upper_quantile(top: np.ndarray, n: int, q: float) -> float:
    """The q-quantile (numpy's linear method) of n values of which ``top`` (ascending) holds the largest."""
    if n == 0:
        return float("nan")
    pos = q * (n - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, n - 1)
    skip = n - len(top)  # ranks below the kept values
    a, b = float(top[lo - skip]), float(top[hi - skip])
    t = pos - lo
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)


def fit_baselines(means: SituationSums, spread_of: Callable[[np.ndarray, np.ndarray], SituationSpread],
                  top_of: Callable[[Baselines, int], LargestResiduals]) -> Baselines:
    """The room's baselines from pass A's sums, pass B (``spread_of(mean_x, mean_total)``) and pass C
    (``top_of(fit, keep)``): per situation the mean of each signal (``total``: a line in regret) and per signal the
    clip cap, the CLIP_QUANTILE quantile of |residual| over the links in use."""
    used = means.used
    den = np.maximum(means.w, 1e-12)
    mean_y = {s: means.y[s] / den for s in LINK_SIGNALS}
    mean_x = means.x / den
    b = spread_of(mean_x, mean_y["total"])
    sxx, sxy = b.sxx / den, b.sxy / den
    slope = np.where(sxx > 1e-12, sxy / np.where(sxx > 1e-12, sxx, 1.0), 0.0)
    fit = Baselines(mean_y, mean_x, slope, {})
    # with n links in use the quantile reads the values of ranks floor(q (n - 1)) and the next, so the largest
    # n - floor(q (n - 1)) suffice
    keep = used - int(np.floor(CLIP_QUANTILE * (used - 1))) if used else 0
    c = top_of(fit, keep)
    for s in LINK_SIGNALS:
        fit.cap[s] = c.cap(s, CLIP_QUANTILE) if used else 0.0
    return fit


def _residuals(room: Room, fit: Baselines, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]
               ) -> dict[str, np.ndarray]:
    grp = room.situation(ch, links)
    out = {}
    for s in LINK_SIGNALS:
        f = fit.mean_y[s][grp]
        if s == "total":
            f = f + fit.slope[grp] * (np.tile(ch["regret"], 3) - fit.mean_x[grp])
        out[s] = links[s] - f
    return out


def _centred(room: Room, fit: Baselines, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]
             ) -> dict[str, np.ndarray]:
    """Each link's value minus the room's baseline in its situation, clipped at the cap."""
    res = _residuals(room, fit, ch, links)
    return {s: (np.clip(r, -fit.cap[s], fit.cap[s]) if fit.cap[s] > 0 else r) for s, r in res.items()}


@dataclass
class HabitSums:
    """Pass D: the seat-habit sums of each favour signal: per (actor, offset) (``tot``: rows actor * 3 + offset - 1)
    and per (directed pair, offset) over the actor's hands with that other player (``mine``: rows pair * 3 +
    offset - 1), each the centred value's sum and the links in use. Merge: added."""

    tot: dict[str, np.ndarray]
    mine: dict[str, np.ndarray]

    def merge(self, later: HabitSums) -> HabitSums:
        return HabitSums({s: self.tot[s] + later.tot[s] for s in self.tot},
                         {s: self.mine[s] + later.mine[s] for s in self.mine})


def pass_habits(ch_packed: dict[str, np.ndarray], room: Room, hot: np.ndarray | None, fit: Baselines) -> HabitSums:
    """Pass D: the seat-habit sums, per (actor, offset) and per (actor, co-player, offset) over their hands
    together: the centred value's sum and the links in use.

    The habit is learnt from the actor's hands without the other player (not only the links to them: favour for
    a partner also shows as disfavour for the two others of that hand), so a colluder's favour stays in the
    signal, while an honest player whose friend often sits after them is not taken for one."""
    ch, links = unpack(ch_packed)
    n_p, n_pairs = room.n_players, len(room.pair_codes)
    use = room.use(ch, links, hot)
    val = _centred(room, fit, ch, links)
    hand = np.tile(ch["hand"], 3)
    n_h = int(hand.max()) + 1
    ao = links["actor"] * 3 + links["offset"] - 1
    # the (actor, hand) pairs and, for each, the co-players it had links to
    ah, ah_idx = np.unique(links["actor"] * n_h + hand, return_inverse=True)
    pair = room.pair_index(links["actor"], links["other"])
    co, co_first = np.unique(pair * n_h + hand, return_index=True)
    co_pair, co_ah = co // n_h, ah_idx.ravel()[co_first]
    tot: dict[str, np.ndarray] = {}
    mine: dict[str, np.ndarray] = {}
    for s in HABIT_CHECKED:
        v = np.where(use, np.nan_to_num(val[s], nan=0.0), 0.0)  # a missing value adds nothing
        u = use.astype(np.float64)
        tot[s] = np.stack([np.bincount(ao, v, n_p * 3), np.bincount(ao, u, n_p * 3)], axis=1)
        # per (actor, hand, offset), then added to every co-player of that hand
        key = ah_idx.ravel() * 3 + links["offset"] - 1
        ph_v = np.bincount(key, v, len(ah) * 3).reshape(-1, 3)
        ph_n = np.bincount(key, u, len(ah) * 3).reshape(-1, 3)
        m = np.zeros((n_pairs * 3, 2))
        for off in range(3):
            m[:, 0] += np.bincount(co_pair * 3 + off, ph_v[co_ah, off], n_pairs * 3)
            m[:, 1] += np.bincount(co_pair * 3 + off, ph_n[co_ah, off], n_pairs * 3)
        mine[s] = m
    return HabitSums(tot, mine)


@dataclass
class PairSums:
    """Pass E, per directed pair (rows in ``Room.pair_codes`` order): ``hands`` and ``decisions`` together, per
    column of PAIR_COLUMNS the sum and the sum of squares of its per-hand sums (``acc``: (pairs, 2)), per signal
    the raw effects' sum (``raw``); and, read per hand by their statistics, burst's per-hand favour scores
    (``burst``: frames of BURST_COLUMNS, room codes) and the hands where a pair deviated (``deviations``: frames
    of :func:`deviation_hands`). ``burst_links``: per actor the links of burst pieces kept elsewhere (on Dask,
    where the pieces stay on the workers). Merge: sums added, the per-hand frames concatenated in order."""

    hands: np.ndarray
    decisions: np.ndarray
    acc: dict[str, np.ndarray]
    raw: dict[str, np.ndarray]
    burst: list[pd.DataFrame]
    deviations: list[pd.DataFrame]
    burst_links: np.ndarray | None = None

    def merge(self, later: PairSums) -> PairSums:
        links = (self.burst_links if later.burst_links is None else later.burst_links if self.burst_links is None
                 else self.burst_links + later.burst_links)
        return PairSums(self.hands + later.hands, self.decisions + later.decisions,
                        {c: self.acc[c] + later.acc[c] for c in self.acc},
                        {s: self.raw[s] + later.raw[s] for s in self.raw},
                        self.burst + later.burst, self.deviations + later.deviations, links)

    def without_burst(self, n_players: int) -> tuple[PairSums, pd.DataFrame]:
        """These sums with the burst piece taken out (one chunk's), counted per actor in ``burst_links``, and the
        piece."""
        piece = self.burst[0]
        links = np.bincount(piece["actor"].to_numpy(np.int64), minlength=n_players)
        return (PairSums(self.hands, self.decisions, self.acc, self.raw, [], self.deviations, links), piece)


def pass_pairs(ch_packed: dict[str, np.ndarray], room: Room, fit: Baselines, habits: HabitSums,
               extras: bool) -> PairSums:
    """Pass E: per directed pair its hands, decisions, the sum and sum of squares of its per-hand sums and
    the raw sums; with ``extras`` also the per-hand numbers: the burst statistic's per-hand favour scores and the
    hands where a pair deviated.

    The seat habit is the actor's mean centred value towards the offset over its hands without the other player;
    a habit seen in fewer than HABIT_LINKS links is shrunk towards none (a player seen little in hands without the
    other is judged by the room alone), above that it is taken whole (any shrinking would leave a fixed share of a
    real habit to pile up over hands together)."""
    ch, links = unpack(ch_packed)
    n_pairs = len(room.pair_codes)
    val = _centred(room, fit, ch, links)
    pair = room.pair_index(links["actor"], links["other"])
    hand = np.tile(ch["hand"], 3)
    n_h = int(hand.max()) + 1
    key3 = pair * 3 + links["offset"] - 1
    ao = links["actor"] * 3 + links["offset"] - 1
    for s in HABIT_CHECKED:
        t, m = habits.tot[s][ao], habits.mine[s][key3]
        habit = (t[:, 0] - m[:, 0]) / np.maximum(t[:, 1] - m[:, 1], HABIT_LINKS)
        val[f"{s}_habit_free"] = val[s] - habit
    ph, ph_idx = np.unique(pair * n_h + hand, return_inverse=True)
    ph_idx = ph_idx.ravel()
    ph_pair = ph // n_h
    sums = {c: np.bincount(ph_idx, np.nan_to_num(val[c], nan=0.0), len(ph)) for c in PAIR_COLUMNS}
    out = PairSums(
        np.bincount(ph_pair, minlength=n_pairs).astype(np.float64),
        np.bincount(pair, minlength=n_pairs).astype(np.float64),
        {c: np.stack([np.bincount(ph_pair, sums[c], n_pairs), np.bincount(ph_pair, sums[c] ** 2, n_pairs)], axis=1)
         for c in PAIR_COLUMNS},
        {s: np.bincount(pair, np.nan_to_num(links[s], nan=0.0), n_pairs) for s in LINK_SIGNALS}, [], [])
    if not extras:
        return out
    codes = room.pair_codes[ph_pair]
    base = int(ch["hand_base"][0])
    free = f"{BURST_SIGNAL}_habit_free"
    w = room.weights(ch, links)
    out.burst = [pd.DataFrame({"actor": codes >> 32, "other": codes & 0xFFFFFFFF, "hand_id": base + ph % n_h,
                               **{c: np.bincount(ph_idx, w * np.nan_to_num(val[c], nan=0.0), len(ph))
                                  for c in (BURST_SIGNAL, free)},
                               # the seat offset (one per pair and hand): burst's strata
                               "offset": np.bincount(ph_idx, links["offset"], len(ph)).astype(np.int64)
                               // np.bincount(ph_idx, minlength=len(ph))})]
    regret, se = np.tile(ch["regret"], 3), np.tile(ch["regret_se"], 3)
    dev = (regret > room.options.deviation_regret) & (regret > room.options.deviation_se * se)
    out.deviations = [deviation_hands(pd.DataFrame({
        "actor": links["actor"][dev], "other": links["other"][dev], "hand_id": base + hand[dev],
        "offset": links["offset"][dev], "regret": regret[dev], "regret_se": se[dev],
        "dd_marginal": val["dd_marginal"][dev], "dd_marginal_habit_free": val["dd_marginal_habit_free"][dev]}),
        room.options)]
    return out


# --- the finish: merged statistics into the pair table ----------------------------------------------------------

def directed(st: PairSums, name: str, room: Room) -> pd.DataFrame:
    """A directed signal per pair (rows in ``room.pair_codes`` order): hands, decisions, z, and the per-hand mean,
    its standard error and the raw effects' per-hand mean.

    The z divides the pair's sum over its hands together by its spread: the pair's own per-hand second moment
    shrunk towards the actor's over all its seats (SHRINK_HANDS; the null mean is 0). For the favour signals the z
    is the smaller of the plain one and the one with the actor's own seat-offset habit removed: favour must survive
    both readings to count, so a habit cannot pass for favour and a noisy habit estimate cannot create any; the
    per-hand mean and its error are then the smaller reading's, so they never disagree with the z in sign."""
    hands, s2 = st.hands, st.acc
    actor = room.pair_codes >> 32

    def z_of(col: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        total, sq = s2[col][:, 0], s2[col][:, 1]
        # the actor's mean square per (other, hand) over all its seats: its null spread per hand
        a_sq = np.bincount(actor, sq, room.n_players) / np.maximum(np.bincount(actor, hands, room.n_players), 1)
        h = np.maximum(hands, 1)
        var = (hands * (sq / h) + SHRINK_HANDS * a_sq[actor]) / (hands + SHRINK_HANDS)
        se_sum = np.sqrt(hands * var)
        z = np.where(se_sum > 0, total / np.where(se_sum > 0, se_sum, 1.0), 0.0)
        return z, se_sum, total

    z, se_sum, total = z_of(name)
    if name in HABIT_CHECKED:  # the per-hand mean and its error are those of the reading whose z counts
        z_h, se_h, total_h = z_of(f"{name}_habit_free")
        free = z_h < z
        z, se_sum, total = np.where(free, z_h, z), np.where(free, se_h, se_sum), np.where(free, total_h, total)
    h = np.maximum(hands, 1)
    return pd.DataFrame({"hands": hands, "decisions": st.decisions, "z": z, "per_hand": total / h,
                         "se_per_hand": se_sum / h, "raw_per_hand": st.raw[name] / h})


def hot_pairs(st: PairSums, room: Room) -> np.ndarray:
    """Per directed pair: whether a signal's z passes SUSPECT_Z (its decisions then stay out of the second fit)."""
    hot = np.zeros(len(room.pair_codes), bool)
    for name in LINK_SIGNALS:
        hot |= directed(st, name, room)["z"].to_numpy() > SUSPECT_Z
    return hot


def burst_links(pieces: list[pd.DataFrame], names: np.ndarray) -> pd.DataFrame:
    """Pass E's per-hand burst pieces as the links the burst statistic reads (players by name)."""
    per_hand = pd.concat(pieces, ignore_index=True)
    per_hand["actor"] = names[per_hand["actor"].to_numpy()]
    per_hand["other"] = names[per_hand["other"].to_numpy()]
    return per_hand[list(BURST_COLUMNS)]


def pair_table(seating: pd.DataFrame, names: np.ndarray, room: Room, st: PairSums, think: ThinkStats,
               burst_of: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """One row per unordered pair (a < b) that sat together: every signal in both directions.

    Columns: ``a, b, hands_together``; for each signal S in LINK_SIGNALS ``S_ab_*`` (a acting towards b) and
    ``S_ba_*``; ``think_ab_*``/``think_ba_*``; co-deviation ``codev_*``; ``burst_ab_*``/``burst_ba_*``: occasional
    collusion (``burst._burst``, read when ``burst_of`` is called: last, so a reading started elsewhere runs
    while the rest is made). ``seating`` (hand_id, p0..p3 per hand) gives the hands together; ``names`` the
    players' names by room code."""
    out = hands_together(seating).to_frame()
    idx = pd.MultiIndex.from_arrays([names[room.pair_codes >> 32], names[room.pair_codes & 0xFFFFFFFF]],
                                    names=["actor", "other"])
    for name in LINK_SIGNALS:
        _by_direction(out, directed(st, name, room).set_axis(idx), name, {f: f for f in FIELDS})
    _by_direction(out, think.result().set_index(["actor", "other"]), "think",
                  {"z": "z", "hands_with": "hands", "slower_ms_ratio": "ratio"})
    dev = pd.concat(st.deviations, ignore_index=True)
    dev["actor"] = names[dev["actor"].to_numpy(np.int64)] if len(dev) else dev["actor"].astype(object)
    dev["other"] = names[dev["other"].to_numpy(np.int64)] if len(dev) else dev["other"].astype(object)
    codeviation = codeviation_of(dev)
    finish_pairs(out, burst_of(), codeviation)
    return out.reset_index()


def _by_direction(out: pd.DataFrame, table: pd.DataFrame, prefix: str, fields: dict[str, str]) -> None:
    """Copy a directed (actor, other) table into the pair table as ``prefix_ab_*`` and ``prefix_ba_*``."""
    for tag, (x, y) in (("ab", ("a", "b")), ("ba", ("b", "a"))):
        idx = pd.MultiIndex.from_arrays([out.index.get_level_values(x), out.index.get_level_values(y)])
        sub = table.reindex(idx)
        for src, dst in fields.items():
            out[f"{prefix}_{tag}_{dst}"] = sub[src].to_numpy(np.float64)



def deviation_hands(lk: pd.DataFrame, opts: SignalOptions) -> pd.DataFrame:
    """Per (actor, other, hand) with a deviation: the true-deal favour of the deviations, plain (``m``) and
    without the actor's seat habit (``m_free``), and the seat offset (``off``), from links of deviating decisions
    (``lk``). Hands are whole in any chunk, so the chunks' tables concatenate."""
    dev = lk[(lk["regret"] > opts.deviation_regret) & (lk["regret"] > opts.deviation_se * lk["regret_se"])]
    free = "dd_marginal_habit_free" if "dd_marginal_habit_free" in dev.columns else "dd_marginal"
    h = dev.groupby(["actor", "other", "hand_id"], sort=False).agg(
        m=("dd_marginal", "sum"), m_free=(free, "sum"), off=("offset", "first"))
    return h.reset_index()


def codeviation_of(h: pd.DataFrame) -> pd.DataFrame:
    """The seed's test: hands where both partners deviated, each in the other's favour, from
    :func:`deviation_hands`' table.

    A deviation is a costly choice by the actor's own information; its favour is judged with the true deal (which
    is where a partner's hand shows). Conditioned on both deviating in a hand, whether each favoured the other is
    close to a coin flip for honest players (weak ones deviate more, not more towards a friend), so the count of
    mutual-favour hands is tested against the room's own favour rate: a Poisson tail."""
    h = h.copy()
    h["fav"] = (h["m"] > 0) & (h["m_free"] > 0)  # favour with and without the actor's seat habit
    rate = h.groupby("off")["fav"].mean()
    h["q"] = h["off"].map(rate).astype(float)
    a, b = h["actor"].to_numpy(object), h["other"].to_numpy(object)
    h["pa"] = np.where(a < b, a, b)
    h["pb"] = np.where(a < b, b, a)
    both = h.groupby(["pa", "pb", "hand_id"], sort=False).agg(k=("fav", "size"), fav=("fav", "sum"), q=("q", "prod"))
    both = both[both["k"] == 2]
    g = both.groupby(level=["pa", "pb"])
    out = pd.DataFrame({"both_deviated": g.size(), "observed": g["fav"].apply(lambda f: int((f == 2).sum())),
                        "expected": g["q"].sum()})
    logp = poisson_logsf(out["observed"].to_numpy() - 1, out["expected"].clip(lower=1e-12).to_numpy())
    out["logp"] = np.where(out["observed"] > 0, logp, 0.0)
    out["p"] = np.exp(out["logp"])
    # the z of the tail computed from its logarithm: no ceiling however strong the case
    out["z"] = -special.ndtri_exp(np.minimum(out["logp"].to_numpy(np.float64), np.log(P_MAX)))
    return out


def finish_pairs(out: pd.DataFrame, burst: pd.DataFrame, codev: pd.DataFrame) -> None:
    """The pair table's last columns: the burst statistic by direction, co-deviation, and 0 for the z's and log p's
    of pairs a signal never saw."""
    burst = burst.copy()
    for z, logp in (("z", "logp"), ("z_count", "logp_count")):
        burst[z] = -special.ndtri_exp(np.minimum(burst[logp].to_numpy(np.float64), np.log(P_MAX)))
    _by_direction(out, burst, "burst", {"z": "z", "logp": "logp", "hands": "hands", "above": "above",
                                         "expected": "expected", "level": "level", "z_mean": "z_mean",
                                         "z_count": "z_count", "mean_percentile": "mean_percentile",
                                         "percentile_se": "percentile_se", "expected_sd": "expected_sd"})
    for tag, (x, y) in (("ab", ("a", "b")), ("ba", ("b", "a"))):  # the count's hands (JSON text: not a number)
        idx = pd.MultiIndex.from_arrays([out.index.get_level_values(x), out.index.get_level_values(y)])
        got = burst["extreme"].reindex(idx).to_numpy(object) if "extreme" in burst.columns else np.full(len(out), None)
        out[f"burst_{tag}_extreme"] = [v if isinstance(v, str) else "[]" for v in got]
    cd = codev.reindex(out.index)
    out["codev_both_deviated"] = cd["both_deviated"].fillna(0).to_numpy(np.int64)
    out["codev_observed"] = cd["observed"].fillna(0).to_numpy(np.int64)
    out["codev_expected"] = cd["expected"].fillna(0.0).to_numpy(np.float64)
    out["codev_z"] = cd["z"].fillna(0.0).to_numpy(np.float64)
    z_cols = [c for c in out.columns if c.endswith("_z")]
    out[z_cols] = out[z_cols].fillna(0.0)
    logp_cols = [c for c in out.columns if c.endswith("_logp")]
    out[logp_cols] = out[logp_cols].fillna(0.0)
