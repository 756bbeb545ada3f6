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

import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analyzer.audit.burst import BURST_SIGNAL, CHOICE_GRID, _burst, choice_inputs, choice_loglik, grid_fit, weights_of
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
        eff = seat_effects(df)
        names = self._codes(df[[f"p{s}" for s in range(SEATS)]].to_numpy(object), self.players)
        hand = pd.factorize(df["hand_id"].astype(str))[0].astype(np.int64)
        regret = df["regret"].to_numpy(np.float64)
        seat = df["seat"].to_numpy(np.int64)
        links = _raw_links({"names": names, "seat": seat, **{k: getattr(eff, k) for k in _EFFECTS}})
        ch = {"hand": hand.astype(np.int32), "hand_base": np.array([self.hands], np.int64),
              "kind": self._codes(df["kind"].to_numpy(object), self.kinds).astype(np.int16), "regret": regret,
              "regret_se": df["regret_se"].to_numpy(np.float64),
              # the links themselves, so the passes read them instead of rebuilding them
              "actor": links["actor"].astype(np.int32), "other": links["other"].astype(np.int32),
              "offset": links["offset"].astype(np.int8), **{k: links[k] for k in LINK_SIGNALS}}
        self._add_choices(df, names[np.arange(len(seat)), seat], ch)
        path = Path(self._tmp.name) / f"chunk-{len(self.chunks):06d}.pickle"
        with open(path, "wb") as f:  # our own temporary file, read back by this process only
            pickle.dump(ch, f, protocol=pickle.HIGHEST_PROTOCOL)
        self.chunks.append(path)
        self._regret_pos.append(regret[regret > 1e-9])
        # the directed pairs that sat together and decided something
        self._pairs.append(np.unique(links["actor"] * (1 << 32) + links["other"]))
        if len(self._pairs) > 64:
            self._pairs = [np.unique(np.concatenate(self._pairs))]
        self.think.add_decisions(df)
        self.rows += len(df)
        self.hands += int(hand.max()) + 1

    def _add_choices(self, df: pd.DataFrame, actor: np.ndarray, ch: dict[str, np.ndarray]) -> None:
        """burst's choice weights (one small, separate place): the chunk keeps each decision's option losses and
        the actor's grid log-likelihoods are summed, so that pass E weighs as ``burst.choice_weights`` does."""
        inputs = choice_inputs(df)
        if inputs is None:
            return
        loss, ref, chosen = inputs
        n_p = len(self.players)
        if len(self._choice_ll) < n_p:
            self._choice_ll = np.vstack([self._choice_ll, np.zeros((n_p - len(self._choice_ll), self._choice_ll.shape[1]))])
        self._choice_ll += choice_loglik(loss, ref, chosen, actor, n_p)
        ch.update(choice_loss=loss.astype(np.float32), choice_ref=ref.astype(np.float32), choice_chosen=chosen)

    def _weights(self, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> np.ndarray:
        """Per link, its decision's burst weight (1 for chunks without options)."""
        n = len(ch["regret"])
        if "choice_loss" not in ch:
            return np.ones(3 * n)
        actor = links["actor"][:n]  # the links of offset 1 come first, one per decision
        a, b = self._choice_a[actor], self._choice_b[actor]
        w = weights_of(ch["choice_loss"].astype(np.float64), ch["choice_ref"].astype(np.float64), ch["choice_chosen"],
                       a, b)
        return np.tile(w, 3)

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

    def _read(self) -> Iterator[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
        for path in self.chunks:
            with open(path, "rb") as f:
                ch = pickle.load(f)
            links = {k: ch.pop(k) for k in ("actor", "other", "offset", *LINK_SIGNALS)}
            for k in ("actor", "other", "offset"):
                links[k] = links[k].astype(np.int64)
            ch["hand"] = ch["hand"].astype(np.int64)
            ch["kind"] = ch["kind"].astype(np.int64)
            yield ch, links

    # --- the passes ------------------------------------------------------------------------------------------

    def result(self, seating: pd.DataFrame | None = None) -> pd.DataFrame:
        """The pair table of :func:`signals.pair_signals` (``Signals.pairs``) over every row added."""
        self.flush()
        if not self.rows:
            raise ValueError("no decision rows were added")
        names = np.array(sorted(self.players, key=self.players.__getitem__), dtype=object)
        self._names = names
        codes = np.unique(np.concatenate(self._pairs))
        self._pair_codes = codes
        self._n_players = len(names)
        kinds = max(len(self.kinds), 1)
        self._n_sit = 3 * kinds * (REGRET_BINS + 1)
        self._kinds_n = kinds
        pos = np.concatenate(self._regret_pos)
        self._edges: np.ndarray | None = None
        if 3 * len(pos) >= REGRET_BINS * 10:  # the links hold each decision three times
            self._edges = qcut_edges(np.repeat(pos, 3), REGRET_BINS)
        del pos

        ll = self._choice_ll
        if len(ll) < len(names):
            ll = np.vstack([ll, np.zeros((len(names) - len(ll), ll.shape[1]))])
        self._choice_a, self._choice_b = grid_fit(ll)
        first = self._fit(None)
        stats1 = self._sums(first, None, extras=True)
        hot = np.zeros(len(codes), bool)
        for name in LINK_SIGNALS:
            hot |= self._directed(stats1, name)["z"].to_numpy() > SUSPECT_Z
        final = stats1
        if hot.any():
            bad = [self._bad_rows(ch, links, hot) for ch, links in self._read()]
            second = self._fit(bad)
            final = self._sums(second, bad, extras=True)
        return self._table(final, seating)

    def _pair_index(self, actor: np.ndarray, other: np.ndarray) -> np.ndarray:
        return np.searchsorted(self._pair_codes, actor * (1 << 32) + other)

    def _bad_rows(self, ch: dict[str, np.ndarray], links: dict[str, np.ndarray], hot: np.ndarray) -> np.ndarray:
        """Rows (decisions) with a link of a suspect directed pair: left out of the second fit's baselines."""
        n = len(ch["regret"])
        flag = hot[self._pair_index(links["actor"], links["other"])].reshape(3, n)
        return np.asarray(flag.any(axis=0))

    def _situation(self, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> np.ndarray:
        """Offset x kind x regret band, as ``signals.link_statistics`` groups links."""
        regret = np.tile(ch["regret"], 3)
        rbin = np.zeros(len(regret), np.int64)
        pos = regret > 1e-9
        if self._edges is None:
            rbin[pos] = 1
        else:  # pd.qcut's bins: right-closed, the lowest edge included
            ids = np.searchsorted(self._edges, regret[pos], side="left")
            ids[regret[pos] == self._edges[0]] = 1
            rbin[pos] = ids
        kind = np.tile(ch["kind"], 3)
        return np.asarray(((links["offset"] - 1) * self._kinds_n + kind) * (REGRET_BINS + 1) + rbin, np.int64)

    def _use(self, bad: list[np.ndarray] | None, i: int, n: int) -> np.ndarray:
        return np.ones(3 * n, bool) if bad is None else np.tile(~bad[i], 3)

    def _fit(self, bad: list[np.ndarray] | None) -> _Fit:
        """Passes A, B, C: the room's line per situation and signal, and the clip caps."""
        g_n = self._n_sit
        w_sum = np.zeros(g_n)
        y_sum = {s: np.zeros(g_n) for s in LINK_SIGNALS}
        x_sum = np.zeros(g_n)
        used = 0
        for i, (ch, links) in enumerate(self._read()):
            grp = self._situation(ch, links)
            w = self._use(bad, i, len(ch["regret"])).astype(np.float64)
            used += int(w.sum())
            w_sum += np.bincount(grp, w, g_n)
            for s in LINK_SIGNALS:
                y_sum[s] += np.bincount(grp, w * links[s], g_n)
            x_sum += np.bincount(grp, w * np.tile(ch["regret"], 3), g_n)
        den = np.maximum(w_sum, 1e-12)
        mean_y = {s: y_sum[s] / den for s in LINK_SIGNALS}
        mean_x = x_sum / den
        sxx, sxy = np.zeros(g_n), np.zeros(g_n)
        for i, (ch, links) in enumerate(self._read()):  # B: the covariate's spread about its mean
            grp = self._situation(ch, links)
            w = self._use(bad, i, len(ch["regret"])).astype(np.float64)
            dx = np.tile(ch["regret"], 3) - mean_x[grp]
            sxx += np.bincount(grp, w * dx ** 2, g_n)
            sxy += np.bincount(grp, w * dx * (links["total"] - mean_y["total"][grp]), g_n)
        sxx, sxy = sxx / den, sxy / den
        slope = np.where(sxx > 1e-12, sxy / np.where(sxx > 1e-12, sxx, 1.0), 0.0)
        fit = _Fit(mean_y, mean_x, slope, {})
        # C: the cap is the CLIP_QUANTILE quantile of |residual| over the links in use; with n of them it
        # reads the values of ranks floor(q (n - 1)) and the next, so the largest n - floor(q (n - 1)) do
        keep = used - int(np.floor(CLIP_QUANTILE * (used - 1))) if used else 0
        top: dict[str, np.ndarray] = {s: np.zeros(0) for s in LINK_SIGNALS}
        finite = dict.fromkeys(LINK_SIGNALS, 0)
        for i, (ch, links) in enumerate(self._read()):
            use = self._use(bad, i, len(ch["regret"]))
            res = self._residuals(fit, ch, links)
            for s in LINK_SIGNALS:
                a = np.abs(res[s][use])
                a = a[~np.isnan(a)]
                finite[s] += len(a)
                cand = np.concatenate([top[s], a])
                top[s] = np.partition(cand, len(cand) - keep)[len(cand) - keep:] if len(cand) > keep else cand
        for s in LINK_SIGNALS:
            fit.cap[s] = _upper_quantile(np.sort(top[s]), finite[s], CLIP_QUANTILE) if used else 0.0
        return fit

    def _residuals(self, fit: _Fit, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        grp = self._situation(ch, links)
        out = {}
        for s in LINK_SIGNALS:
            f = fit.mean_y[s][grp]
            if s == "total":
                f = f + fit.slope[grp] * (np.tile(ch["regret"], 3) - fit.mean_x[grp])
            out[s] = links[s] - f
        return out

    def _centred(self, fit: _Fit, ch: dict[str, np.ndarray], links: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        res = self._residuals(fit, ch, links)
        return {s: (np.clip(r, -fit.cap[s], fit.cap[s]) if fit.cap[s] > 0 else r) for s, r in res.items()}

    def _sums(self, fit: _Fit, bad: list[np.ndarray] | None, *, extras: bool) -> dict[str, Any]:
        """Passes D and E: the seat-habit sums, then per directed pair the sums its z's need (and, with
        ``extras``, the per-hand burst scores and the deviation hands)."""
        n_p, n_pairs = self._n_players, len(self._pair_codes)
        tot = {s: np.zeros((n_p * 3, 2)) for s in HABIT_CHECKED}  # (actor, offset): sum v, links in use
        mine = {s: np.zeros((n_pairs * 3, 2)) for s in HABIT_CHECKED}  # (actor, other, offset), hands together
        for i, (ch, links) in enumerate(self._read()):
            use = self._use(bad, i, len(ch["regret"]))
            val = self._centred(fit, ch, links)
            hand = np.tile(ch["hand"], 3)
            n_h = int(hand.max()) + 1
            ao = links["actor"] * 3 + links["offset"] - 1
            # the (actor, hand) pairs and, for each, the co-players it had links to
            ah, ah_idx = np.unique(links["actor"] * n_h + hand, return_inverse=True)
            pair = self._pair_index(links["actor"], links["other"])
            co, co_first = np.unique(pair * n_h + hand, return_index=True)
            co_pair, co_ah = co // n_h, ah_idx.ravel()[co_first]
            for s in HABIT_CHECKED:
                v = np.where(use, np.nan_to_num(val[s], nan=0.0), 0.0)  # pandas' sums skip NaN
                u = use.astype(np.float64)
                tot[s][:, 0] += np.bincount(ao, v, n_p * 3)
                tot[s][:, 1] += np.bincount(ao, u, n_p * 3)
                # per (actor, hand, offset), then added to every co-player of that hand
                key = ah_idx.ravel() * 3 + links["offset"] - 1
                ph_v = np.bincount(key, v, len(ah) * 3).reshape(-1, 3)
                ph_n = np.bincount(key, u, len(ah) * 3).reshape(-1, 3)
                for off in range(3):
                    mine[s][:, 0] += np.bincount(co_pair * 3 + off, ph_v[co_ah, off], n_pairs * 3)
                    mine[s][:, 1] += np.bincount(co_pair * 3 + off, ph_n[co_ah, off], n_pairs * 3)
        cols = [*LINK_SIGNALS, *(f"{s}_habit_free" for s in HABIT_CHECKED)]
        acc = {c: np.zeros((n_pairs, 2)) for c in cols}  # sum of per-hand sums, sum of their squares
        raw = {s: np.zeros(n_pairs) for s in LINK_SIGNALS}
        hands = np.zeros(n_pairs)
        decisions = np.zeros(n_pairs)
        burst: list[pd.DataFrame] = []
        deviations: list[pd.DataFrame] = []
        for ch, links in self._read():
            val = self._centred(fit, ch, links)
            pair = self._pair_index(links["actor"], links["other"])
            hand = np.tile(ch["hand"], 3)
            n_h = int(hand.max()) + 1
            key3 = pair * 3 + links["offset"] - 1
            ao = links["actor"] * 3 + links["offset"] - 1
            for s in HABIT_CHECKED:
                t, m = tot[s][ao], mine[s][key3]
                habit = (t[:, 0] - m[:, 0]) / np.maximum(t[:, 1] - m[:, 1], HABIT_LINKS)
                val[f"{s}_habit_free"] = val[s] - habit
            ph, ph_idx = np.unique(pair * n_h + hand, return_inverse=True)
            ph_idx = ph_idx.ravel()
            ph_pair = ph // n_h
            hands += np.bincount(ph_pair, minlength=n_pairs)
            decisions += np.bincount(pair, minlength=n_pairs)
            sums = {c: np.bincount(ph_idx, np.nan_to_num(val[c], nan=0.0), len(ph)) for c in cols}
            for c in cols:
                acc[c][:, 0] += np.bincount(ph_pair, sums[c], n_pairs)
                acc[c][:, 1] += np.bincount(ph_pair, sums[c] ** 2, n_pairs)
            for s in LINK_SIGNALS:
                raw[s] += np.bincount(pair, np.nan_to_num(links[s], nan=0.0), n_pairs)
            if not extras:
                continue
            codes = self._pair_codes[ph_pair]
            base = int(ch["hand_base"][0])
            free = f"{BURST_SIGNAL}_habit_free"
            w = self._weights(ch, links)
            burst.append(pd.DataFrame({"actor": codes >> 32, "other": codes & 0xFFFFFFFF, "hand_id": base + ph % n_h,
                                       **{c: np.bincount(ph_idx, w * np.nan_to_num(val[c], nan=0.0), len(ph))
                                          for c in (BURST_SIGNAL, free)},
                                       # the seat offset (one per pair and hand): burst's strata
                                       "offset": np.bincount(ph_idx, links["offset"], len(ph)).astype(np.int64)
                                       // np.bincount(ph_idx, minlength=len(ph))}))
            regret, se = np.tile(ch["regret"], 3), np.tile(ch["regret_se"], 3)
            dev = (regret > self.options.deviation_regret) & (regret > self.options.deviation_se * se)
            deviations.append(deviation_hands(pd.DataFrame({
                "actor": links["actor"][dev], "other": links["other"][dev], "hand_id": base + hand[dev],
                "offset": links["offset"][dev], "regret": regret[dev], "regret_se": se[dev],
                "dd_marginal": val["dd_marginal"][dev], "dd_marginal_habit_free": val["dd_marginal_habit_free"][dev]}),
                self.options))
        return {"acc": acc, "raw": raw, "hands": hands, "decisions": decisions, "burst": burst,
                "deviations": deviations}

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

    def _named(self, frame: pd.DataFrame) -> pd.DataFrame:
        """A per-pair frame indexed by the players' names."""
        idx = pd.MultiIndex.from_arrays([self._names[self._pair_codes >> 32], self._names[self._pair_codes & 0xFFFFFFFF]],
                                        names=["actor", "other"])
        return frame.set_axis(idx)

    def _table(self, st: dict[str, Any], seating: pd.DataFrame | None) -> pd.DataFrame:
        """The pair table, assembled as ``signals.pair_signals`` does."""
        if seating is None:
            raise ValueError("the streamed pair signals need the seating (hand_id, p0..p3 per hand)")
        out = hands_together(seating).to_frame()
        for name in LINK_SIGNALS:
            _by_direction(out, self._named(self._directed(st, name)), name, {f: f for f in FIELDS})
        _by_direction(out, self.think.result().set_index(["actor", "other"]), "think",
                      {"z": "z", "hands_with": "hands", "slower_ms_ratio": "ratio"})
        names = self._names
        free = f"{BURST_SIGNAL}_habit_free"
        per_hand = pd.concat(st["burst"], ignore_index=True)
        per_hand["actor"] = names[per_hand["actor"].to_numpy()]
        per_hand["other"] = names[per_hand["other"].to_numpy()]
        burst = _burst(per_hand[["actor", "other", "hand_id", "offset", BURST_SIGNAL, free]])

        from analyzer.audit.signals import finish_pairs

        dev = pd.concat(st["deviations"], ignore_index=True)
        dev["actor"] = names[dev["actor"].to_numpy(np.int64)] if len(dev) else dev["actor"].astype(object)
        dev["other"] = names[dev["other"].to_numpy(np.int64)] if len(dev) else dev["other"].astype(object)
        finish_pairs(out, burst, codeviation_of(dev))
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
