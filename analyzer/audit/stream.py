"""Pair signals in bounded memory: decision rows pass through batch by batch; only sums per pair, actor and situation stay.

The same statistics as :func:`analyzer.audit.signals.pair_signals` (equal to float rounding,
``tests/test_audit_stream.py``), computed without the frame of every link. Each batch of whole hands
is reduced at once to a compact numeric *chunk* (its links: player codes, seat offset and the five raw
effects; per decision the hand, play or cover and the regret), written to a temporary folder; the
room-wide quantities are then read off the chunks in a few passes, each of which keeps only sums whose
size is set by the players and pairs:

A. per situation (offset x play/cover x regret band): the room's sums for the baselines;
B. per situation: the spread of the ``total`` signal's covariate (regret) around its mean;
C. per signal: the 99.5% clip cap, an exact quantile from the largest values only (the count is known
   after pass A, so the top ``n - floor(0.995 (n - 1))`` suffice);
D. per (actor, offset) and (actor, co-player, offset): the seat-habit sums;
E. per directed pair: hands, decisions and the sum and sum of squares of its per-hand sums (the z's),
   and, kept per hand because the statistics need them, the burst signal's per-hand favour scores
   (12 numbers a hand) and the hands where a pair deviated (co-deviation).

The room's baselines are fitted twice (the second time without the decisions of directed pairs that
stand out after the first, as ``signals._fit_links`` does), so the passes run at most twice. The
chunks take about 170 bytes a decision on disk and are deleted at the end; memory holds one chunk, the
per-pair sums and the per-hand burst scores.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analyzer.analysis.options import OptionArrays, option_arrays
from analyzer.audit import burst
from analyzer.audit.burst import (BURST_SIGNAL, CHOICE_GRID, CHOICE_KEYS, _burst, choice_inputs, choice_loglik,
                                  fit_rows, grid_fit, weights_of)
from analyzer.audit.signals import (
    CLIP_QUANTILE,
    HABIT_CHECKED,
    HABIT_LINKS,
    LINK_SIGNALS,
    REGRET_BINS,
    SEATS,
    SHRINK_HANDS,
    SUSPECT_Z,
    SignalOptions,
    ThinkStats,
    _by_direction,
    codeviation_of,
    deviation_hands,
    hands_together,
    seat_effects,
)


#: Hands a chunk holds when a whole frame is cut into chunks (the decision analysis' batch size).
CHUNK_HANDS = 256
#: Fields of a directed signal table (``signals._directed``'s columns).
FIELDS = ("hands", "decisions", "z", "per_hand", "se_per_hand", "raw_per_hand")
_EFFECTS = ("own", "dd", "own_avg", "dd_avg", "imm")


@dataclass
class _Fit:
    """One fit of the room's baselines: per situation the line of each signal, and its clip cap."""

    mean_y: dict[str, np.ndarray]
    mean_x: np.ndarray  # regret, for ``total``'s line
    slope: np.ndarray
    cap: dict[str, float]


def _raw_links(ch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A chunk's links (each decision once per other seat, offsets 1, 2, 3 in turn) and their raw effects,
    computed as ``signals.links`` and ``signals.link_statistics`` do."""
    seat = ch["seat"]
    n = len(seat)
    rows = np.arange(n)
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("actor", "other", "offset", *LINK_SIGNALS)}
    for k in (1, 2, 3):
        o = (seat + k) % SEATS
        r1, r2 = (seat + (k % 3) + 1) % SEATS, (seat + ((k + 1) % 3) + 1) % SEATS
        v: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for tag, name in (("d", "own"), ("dd", "dd"), ("a", "own_avg"), ("add", "dd_avg"), ("imm", "imm")):
            m = ch[name]
            v[tag] = (m[rows, seat], m[rows, o], (m[rows, r1] + m[rows, r2]) / 2)
        parts["actor"].append(ch["names"][rows, seat])
        parts["other"].append(ch["names"][rows, o])
        parts["offset"].append(np.full(n, k, np.int64))
        parts["marginal"].append(v["a"][1] - v["a"][2])
        parts["dd_marginal"].append(v["add"][1] - v["add"][2])
        parts["imm_marginal"].append(v["imm"][1] - v["imm"][2])
        parts["total"].append(v["d"][0] + v["d"][1])
        parts["pooled"].append((v["add"][0] + v["add"][1]) - (v["a"][0] + v["a"][1]))
    return {k: np.concatenate(p) for k, p in parts.items()}


def build_chunk(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """A chunk of decision rows of whole hands: its links with the raw effects, and per decision the hand,
    kind and regret (runs where the rows are: this process, or a Dask worker next to the batch's analysis).

    Player and kind codes are the chunk's own (indices into its sorted ``names`` and ``kinds``) and the hands
    are numbered from 0: :func:`recode` puts them in the room's codes and numbering before the passes."""
    # the options' texts parsed once for both readers (the seat effects and burst's choice weights)
    parsed = (option_arrays(df["options"].tolist(), CHOICE_KEYS if burst.CHOICE_WEIGHTS else ())
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
    """burst's choice weights' inputs (one small, separate place): each decision's option losses, kept for pass
    E's weights, and the chunk's per-player grid log-likelihoods (chunk codes; summed over the room's chunks
    before the passes, :func:`chunk_choices`). Empty when the rows carry no options."""
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


def chunk_names(ch: dict[str, np.ndarray] | ChunkFile) -> tuple[np.ndarray, np.ndarray]:
    """A chunk's own player names and kinds (before :func:`recode`; a :class:`ChunkFile`'s without reading it)."""
    if isinstance(ch, ChunkFile):
        return ch.names, ch.kinds
    return ch["names"], ch["kinds"]


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
        """Offset x kind x regret band, as ``signals.link_statistics`` groups links."""
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


# --- the passes, chunk by chunk: each returns sums that merge by addition (:func:`add_up`) ---------------------

def pass_means(ch_packed: dict[str, np.ndarray], room: Room, hot: np.ndarray | None) -> dict[str, Any]:
    """Pass A: per situation the links in use and the sums of each signal and of the regret."""
    ch, links = unpack(ch_packed)
    g_n = room.n_sit
    grp = room.situation(ch, links)
    w = room.use(ch, links, hot).astype(np.float64)
    regret = np.tile(ch["regret"], 3)
    return {"used": int(w.sum()), "w": np.bincount(grp, w, g_n), "x": np.bincount(grp, w * regret, g_n),
            "y": {s: np.bincount(grp, w * links[s], g_n) for s in LINK_SIGNALS}}


def pass_spread(ch_packed: dict[str, np.ndarray], room: Room, hot: np.ndarray | None, mean_x: np.ndarray,
                mean_total: np.ndarray) -> dict[str, np.ndarray]:
    """Pass B: per situation the sums of the covariate's squared deviation and its product with ``total``'s."""
    ch, links = unpack(ch_packed)
    g_n = room.n_sit
    grp = room.situation(ch, links)
    w = room.use(ch, links, hot).astype(np.float64)
    dx = np.tile(ch["regret"], 3) - mean_x[grp]
    return {"sxx": np.bincount(grp, w * dx ** 2, g_n),
            "sxy": np.bincount(grp, w * dx * (links["total"] - mean_total[grp]), g_n)}


def pass_top(ch_packed: dict[str, np.ndarray], room: Room, hot: np.ndarray | None, fit: _Fit,
             keep: int) -> dict[str, Any]:
    """Pass C: per signal the ``keep`` largest |residuals| of the links in use and how many are finite."""
    ch, links = unpack(ch_packed)
    use = room.use(ch, links, hot)
    res = _residuals(room, fit, ch, links)
    out: dict[str, Any] = {"top": {}, "finite": {}}
    for s in LINK_SIGNALS:
        a = np.abs(res[s][use])
        a = a[~np.isnan(a)]
        out["finite"][s] = len(a)
        out["top"][s] = _largest(a, keep)
    return out


def merge_top(a: dict[str, Any], b: dict[str, Any], keep: int) -> dict[str, Any]:
    """Two of :func:`pass_top`'s results as one: the counts added, the ``keep`` largest of both kept."""
    return {"finite": {s: a["finite"][s] + b["finite"][s] for s in LINK_SIGNALS},
            "top": {s: _largest(np.concatenate([a["top"][s], b["top"][s]]), keep) for s in LINK_SIGNALS}}


def _largest(values: np.ndarray, keep: int) -> np.ndarray:
    return np.partition(values, len(values) - keep)[len(values) - keep:] if len(values) > keep else values


def _residuals(room: Room, fit: _Fit, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    grp = room.situation(ch, links)
    out = {}
    for s in LINK_SIGNALS:
        f = fit.mean_y[s][grp]
        if s == "total":
            f = f + fit.slope[grp] * (np.tile(ch["regret"], 3) - fit.mean_x[grp])
        out[s] = links[s] - f
    return out


def _centred(room: Room, fit: _Fit, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    res = _residuals(room, fit, ch, links)
    return {s: (np.clip(r, -fit.cap[s], fit.cap[s]) if fit.cap[s] > 0 else r) for s, r in res.items()}


def pass_habits(ch_packed: dict[str, np.ndarray], room: Room, hot: np.ndarray | None, fit: _Fit) -> dict[str, Any]:
    """Pass D: the seat-habit sums, per (actor, offset) and per (actor, co-player, offset) over their hands
    together: the centred value's sum and the links in use."""
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
        v = np.where(use, np.nan_to_num(val[s], nan=0.0), 0.0)  # pandas' sums skip NaN
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
    return {"tot": tot, "mine": mine}


#: The per-pair columns pass E sums per hand: the signals and the seat-habit-free ones.
PAIR_COLUMNS = (*LINK_SIGNALS, *(f"{s}_habit_free" for s in HABIT_CHECKED))


#: The columns of the burst statistic's per-hand links (``burst._burst``), as pass E's pieces give them.
BURST_COLUMNS = ("actor", "other", "hand_id", "offset", BURST_SIGNAL, f"{BURST_SIGNAL}_habit_free")


def pass_pairs(ch_packed: dict[str, np.ndarray], room: Room, fit: _Fit, habits: dict[str, Any],
               extras: bool) -> dict[str, Any]:
    """Pass E: per directed pair its hands, decisions, the sum and sum of squares of its per-hand sums and
    the raw sums; with ``extras`` also the per-hand numbers (lists, concatenated in chunk order by
    :func:`add_up`): the burst statistic's per-hand favour scores and the hands where a pair deviated.
    (A new per-hand quantity goes here: one more list in the result, read in ``StreamedSignals._table``.)"""
    ch, links = unpack(ch_packed)
    n_pairs = len(room.pair_codes)
    val = _centred(room, fit, ch, links)
    pair = room.pair_index(links["actor"], links["other"])
    hand = np.tile(ch["hand"], 3)
    n_h = int(hand.max()) + 1
    key3 = pair * 3 + links["offset"] - 1
    ao = links["actor"] * 3 + links["offset"] - 1
    tot, mine = habits["tot"], habits["mine"]
    for s in HABIT_CHECKED:
        t, m = tot[s][ao], mine[s][key3]
        habit = (t[:, 0] - m[:, 0]) / np.maximum(t[:, 1] - m[:, 1], HABIT_LINKS)
        val[f"{s}_habit_free"] = val[s] - habit
    ph, ph_idx = np.unique(pair * n_h + hand, return_inverse=True)
    ph_idx = ph_idx.ravel()
    ph_pair = ph // n_h
    sums = {c: np.bincount(ph_idx, np.nan_to_num(val[c], nan=0.0), len(ph)) for c in PAIR_COLUMNS}
    out: dict[str, Any] = {
        "hands": np.bincount(ph_pair, minlength=n_pairs).astype(np.float64),
        "decisions": np.bincount(pair, minlength=n_pairs).astype(np.float64),
        "acc": {c: np.stack([np.bincount(ph_pair, sums[c], n_pairs), np.bincount(ph_pair, sums[c] ** 2, n_pairs)],
                            axis=1) for c in PAIR_COLUMNS},
        "raw": {s: np.bincount(pair, np.nan_to_num(links[s], nan=0.0), n_pairs) for s in LINK_SIGNALS},
        "burst": [], "deviations": []}
    if not extras:
        return out
    codes = room.pair_codes[ph_pair]
    base = int(ch["hand_base"][0])
    free = f"{BURST_SIGNAL}_habit_free"
    w = room.weights(ch, links)
    out["burst"] = [pd.DataFrame({"actor": codes >> 32, "other": codes & 0xFFFFFFFF, "hand_id": base + ph % n_h,
                                  **{c: np.bincount(ph_idx, w * np.nan_to_num(val[c], nan=0.0), len(ph))
                                     for c in (BURST_SIGNAL, free)},
                                  # the seat offset (one per pair and hand): burst's strata
                                  "offset": np.bincount(ph_idx, links["offset"], len(ph)).astype(np.int64)
                                  // np.bincount(ph_idx, minlength=len(ph))})]
    regret, se = np.tile(ch["regret"], 3), np.tile(ch["regret_se"], 3)
    dev = (regret > room.options.deviation_regret) & (regret > room.options.deviation_se * se)
    out["deviations"] = [deviation_hands(pd.DataFrame({
        "actor": links["actor"][dev], "other": links["other"][dev], "hand_id": base + hand[dev],
        "offset": links["offset"][dev], "regret": regret[dev], "regret_se": se[dev],
        "dd_marginal": val["dd_marginal"][dev], "dd_marginal_habit_free": val["dd_marginal_habit_free"][dev]}),
        room.options)]
    return out


def add_up(a: Any, b: Any) -> Any:
    """Two chunks' (or two merged runs of chunks') pass results as one: arrays and counts added, lists (per-hand
    pieces) concatenated in order, dicts merged key by key. Adding in chunk order gives the floats of one loop."""
    if isinstance(a, dict):
        return {k: add_up(a[k], b[k]) for k in a}
    return a + b  # arrays and counts add; lists concatenate


class StreamedSignals:
    """Feed decision rows (:meth:`add`, whole hands per call) and get the pair table (:meth:`result`).

    Use as a context manager (or call :meth:`close`): the chunks live in a temporary folder until then.
    """

    def __init__(self, options: SignalOptions = SignalOptions(), spill_dir: str | None = None,
                 chunk_hands: int = CHUNK_HANDS) -> None:
        self.options = options
        self.chunk_hands = chunk_hands
        self._tmp = tempfile.TemporaryDirectory(prefix="bieqi-signals-", dir=spill_dir)
        self.chunks: list[Path] = []
        self.players: dict[str, int] = {}
        self.kinds: dict[str, int] = {}
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

    def __enter__(self) -> StreamedSignals:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._tmp.cleanup()

    def _codes(self, values: np.ndarray, table: dict[str, int]) -> np.ndarray:
        uniq, inv = np.unique(values.astype(str), return_inverse=True)
        for u in uniq.tolist():
            table.setdefault(u, len(table))
        return np.array([table[u] for u in uniq.tolist()], np.int64)[inv.ravel()].reshape(values.shape)

    def add(self, df: pd.DataFrame) -> None:
        """Reduce decision rows of whole hands to a chunk (a hand must not be split over two calls)."""
        if not len(df):
            return
        ch = build_chunk(df)
        # the room's codes in order of appearance (each chunk's names are sorted, as np.unique gives them)
        ch = recode(ch, self._codes(ch.pop("names"), self.players), self._codes(ch.pop("kinds"), self.kinds),
                    self.hands)
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
            self._choice_ll = add_choices(self._choice_ll, chunk_choices(ch, len(self.players)))
            del ch["choice_ll"], ch["choice_players"]

    def _choice_fit(self) -> tuple[np.ndarray, np.ndarray]:
        """Per player of the room (``self._names`` order) the choice model's grid fit."""
        return grid_fit(add_choices(self._choice_ll, np.zeros((len(self._names), self._choice_ll.shape[1]))))

    def feed(self, df: pd.DataFrame) -> None:
        """Add rows of whole hands as they come (batches of any size): they are regrouped into the chunks
        :func:`hand_chunks` cuts the whole frame into (``self.chunk_hands`` hands each, in order of arrival), so
        the result is the same, to the last bit, as :func:`streamed_pair_signals` on the concatenated rows."""
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
        """``fn(chunk, *args)`` over the chunks, merged in chunk order (here: a loop over the chunks on disk;
        on Dask, :class:`analyzer.audit.dask.DaskSignals`, tasks next to the chunks and a tree of merges)."""
        out = None
        for ref in self.chunks:
            r = fn(self._chunk(ref), *args)
            out = r if out is None else merge(out, r)
        return out

    def _prepare(self) -> None:
        """The room's player and kind codes, its directed pairs and the regret band edges (``self._room``)."""
        self._names = np.array(sorted(self.players, key=self.players.__getitem__), dtype=object)
        pairs = np.unique(np.concatenate(self._pairs))
        a, b = self._choice_fit()
        self._room = Room(len(self._names), max(len(self.kinds), 1), regret_edges(self._regret_pos), pairs,
                          self.options, a, b)

    def result(self, seating: pd.DataFrame | None = None) -> pd.DataFrame:
        """The pair table of :func:`signals.pair_signals` (``Signals.pairs``) over every row added."""
        self.flush()
        if not self.rows:
            raise ValueError("no decision rows were added")
        self._prepare()
        self._pair_codes = self._room.pair_codes
        self._n_players = self._room.n_players
        first = self._fit(None)
        habits = self._map_reduce("habits", pass_habits, add_up, self._room, None, first)
        # the first fit's z's tell the pairs that stand out; its per-hand numbers (burst's scores, the deviation
        # hands: most of pass E's cost) are wanted only when none does, so they are made then, not always
        stats1 = self._pass_e(first, habits, extras=False)
        hot = np.zeros(len(self._pair_codes), bool)
        for name in LINK_SIGNALS:
            hot |= self._directed(stats1, name)["z"].to_numpy() > SUSPECT_Z
        if hot.any():
            second = self._fit(hot)
            final = self._sums(second, hot, extras=True)
        else:
            final = self._pass_e(first, habits, extras=True)
        return self._table(final, seating)

    def _fit(self, hot: np.ndarray | None) -> _Fit:
        """Passes A, B, C: the room's line per situation and signal, and the clip caps."""
        room = self._room
        a = self._map_reduce("means", pass_means, add_up, room, hot)
        used = a["used"]
        den = np.maximum(a["w"], 1e-12)
        mean_y = {s: a["y"][s] / den for s in LINK_SIGNALS}
        mean_x = a["x"] / den
        b = self._map_reduce("spread", pass_spread, add_up, room, hot, mean_x, mean_y["total"])
        sxx, sxy = b["sxx"] / den, b["sxy"] / den
        slope = np.where(sxx > 1e-12, sxy / np.where(sxx > 1e-12, sxx, 1.0), 0.0)
        fit = _Fit(mean_y, mean_x, slope, {})
        # C: the cap is the CLIP_QUANTILE quantile of |residual| over the links in use; with n of them it
        # reads the values of ranks floor(q (n - 1)) and the next, so the largest n - floor(q (n - 1)) do
        keep = used - int(np.floor(CLIP_QUANTILE * (used - 1))) if used else 0
        c = self._map_reduce("top", pass_top, partial(merge_top, keep=keep), room, hot, fit, keep)
        for s in LINK_SIGNALS:
            fit.cap[s] = _upper_quantile(np.sort(c["top"][s]), c["finite"][s], CLIP_QUANTILE) if used else 0.0
        return fit

    def _sums(self, fit: _Fit, hot: np.ndarray | None, *, extras: bool) -> dict[str, Any]:
        """Passes D and E: the seat-habit sums, then per directed pair the sums its z's need (and, with
        ``extras``, the per-hand burst scores and the deviation hands)."""
        habits = self._map_reduce("habits", pass_habits, add_up, self._room, hot, fit)
        return self._pass_e(fit, habits, extras)

    def _pass_e(self, fit: _Fit, habits: dict[str, Any], extras: bool) -> dict[str, Any]:
        """Pass E alone (the seat-habit sums made)."""
        return dict(self._map_reduce("pairs", pass_pairs, add_up, self._room, fit, habits, extras))

    def _directed(self, st: dict[str, Any], name: str) -> pd.DataFrame:
        """``signals._directed`` from the per-pair sums: index (actor, other) codes in pair order."""
        hands, s2 = st["hands"], st["acc"]
        actor = self._pair_codes >> 32

        def z_of(col: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            total, sq = s2[col][:, 0], s2[col][:, 1]
            # the actor's mean square per (other, hand) over all its seats: its null spread per hand
            a_sq = np.bincount(actor, sq, self._n_players) / np.maximum(np.bincount(actor, hands, self._n_players), 1)
            h = np.maximum(hands, 1)
            var = (hands * (sq / h) + SHRINK_HANDS * a_sq[actor]) / (hands + SHRINK_HANDS)
            se_sum = np.sqrt(hands * var)
            z = np.where(se_sum > 0, total / np.where(se_sum > 0, se_sum, 1.0), 0.0)
            return z, se_sum, total

        z, se_sum, total = z_of(name)
        if name in HABIT_CHECKED:
            z = np.minimum(z, z_of(f"{name}_habit_free")[0])
        h = np.maximum(hands, 1)
        return pd.DataFrame({"hands": hands, "decisions": st["decisions"], "z": z, "per_hand": total / h,
                             "se_per_hand": se_sum / h, "raw_per_hand": st["raw"][name] / h})

    def _burst(self, lk: pd.DataFrame) -> pd.DataFrame:
        """The burst statistic of the room's per-hand favour scores (``burst._burst``)."""
        return _burst(lk)

    def _start_burst(self, st: dict[str, Any]) -> Callable[[], pd.DataFrame]:
        """The burst statistic of pass E's per-hand pieces (``st["burst"]``), started; the call returned gives it. Here
        it is read when called, from the pieces this process holds (on Dask its tasks run on the workers, where the
        pieces stay, while this process makes the rest of the pair table: ``audit.on_dask``)."""
        names = self._names
        per_hand = pd.concat(st["burst"], ignore_index=True)
        per_hand["actor"] = names[per_hand["actor"].to_numpy()]
        per_hand["other"] = names[per_hand["other"].to_numpy()]
        links = per_hand[list(BURST_COLUMNS)]
        return lambda: self._burst(links)

    def _named(self, frame: pd.DataFrame) -> pd.DataFrame:
        """A per-pair frame indexed by the players' names."""
        idx = pd.MultiIndex.from_arrays([self._names[self._pair_codes >> 32], self._names[self._pair_codes & 0xFFFFFFFF]],
                                        names=["actor", "other"])
        return frame.set_axis(idx)

    def _table(self, st: dict[str, Any], seating: pd.DataFrame | None) -> pd.DataFrame:
        """The pair table, assembled as ``signals.pair_signals`` does."""
        if seating is None:
            raise ValueError("the streamed pair signals need the seating (hand_id, p0..p3 per hand)")
        burst = self._start_burst(st)  # first: on Dask it is read on the workers while the rest is made here
        out = hands_together(seating).to_frame()
        for name in LINK_SIGNALS:
            _by_direction(out, self._named(self._directed(st, name)), name, {f: f for f in FIELDS})
        _by_direction(out, self.think.result().set_index(["actor", "other"]), "think",
                      {"z": "z", "hands_with": "hands", "slower_ms_ratio": "ratio"})
        names = self._names
        from analyzer.audit.signals import finish_pairs

        dev = pd.concat(st["deviations"], ignore_index=True)
        dev["actor"] = names[dev["actor"].to_numpy(np.int64)] if len(dev) else dev["actor"].astype(object)
        dev["other"] = names[dev["other"].to_numpy(np.int64)] if len(dev) else dev["other"].astype(object)
        codeviation = codeviation_of(dev)
        finish_pairs(out, burst(), codeviation)
        return out.reset_index()


def qcut_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """The edges ``pd.qcut(values, bins, retbins=True, duplicates="drop")`` returns, without the labels of
    every value (which cost ~5x the values' memory); equal to the last bit (``tests/test_audit_rows.py``)."""
    q = np.linspace(0, 1, bins + 1)
    np.putmask(q, bins * q != np.arange(bins + 1), np.nextafter(q, 1))  # as qcut: round up, not to nearest
    return np.asarray(pd.unique(pd.Series(values).quantile(q).to_numpy()), np.float64)


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


def hand_chunks(df: pd.DataFrame, hands: int = CHUNK_HANDS) -> Iterator[pd.DataFrame]:
    """A frame of decision rows cut into frames of ``hands`` whole hands (rows keep their order within a hand)."""
    codes = pd.factorize(df["hand_id"])[0]
    order = np.argsort(codes, kind="stable")
    bounds: Any = np.searchsorted(codes[order], np.arange(0, int(codes.max()) + 1 + hands, hands)) if len(df) else []
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b > a:
            yield df.iloc[order[a:b]]


def streamed_pair_signals(df: pd.DataFrame, seating: pd.DataFrame | None = None, *,
                          options: SignalOptions = SignalOptions(), chunk_hands: int = CHUNK_HANDS) -> pd.DataFrame:
    """:func:`signals.pair_signals`' pair table, computed chunk by chunk (see the module doc)."""
    if seating is None:
        seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    with StreamedSignals(options) as acc:
        for part in hand_chunks(df, chunk_hands):
            acc.add(part)
        return acc.result(seating)
