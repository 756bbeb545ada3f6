"""Occasional collusion (``burst``): a directed pair's few extreme favour hands, against the actor's others.

A partner-aware actor in a minority of hands shifts the mean favour little but leaves a few hands far
out; the statistics here read the per-hand favour (from the centred links of ``signals``) and ask
whether the pair holds more of the actor's extreme hands than its hands with everyone else would give.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special, stats

#: Occasional collusion (``burst``): a directed pair's hands are counted above these upper quantiles of
#: the actor's hands with everyone else; each count is a binomial tail (Bonferroni over the levels).
BURST_LEVELS = (0.2, 0.1, 0.05, 0.02, 0.01)
#: The per-hand favour the burst statistic reads (the exact immediate one: least noise per hand).
BURST_SIGNAL = "imm_marginal"
#: Fewer of the actor's hands with others than this and the room's pool sets the quantiles instead.
BURST_MIN_POOL = 200


def hand_scores(lk: pd.DataFrame, col: str = BURST_SIGNAL) -> pd.DataFrame:
    """Per directed pair and hand: the hand's sum of ``col`` in units of the actor's spread per hand
    (the root mean square of the actor's per-hand sums over all seats: its null spread).
    Columns: actor, other, hand_id, x.
    """
    per_hand = lk.groupby(["actor", "other", "hand_id"], sort=False)[col].sum()
    rms = np.sqrt((per_hand ** 2).groupby(level="actor").mean())
    scale = rms.reindex(per_hand.index.get_level_values("actor")).to_numpy()
    x = np.where(scale > 0, per_hand.to_numpy() / np.where(scale > 0, scale, 1.0), 0.0)
    return per_hand.index.to_frame(index=False).assign(x=x)


def binom_logsf(k: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    """log P(Bin(n, p) > k), exact in log space (scipy's logsf underflows to -inf far out in the tail)."""
    out = np.asarray(stats.binom.logsf(k, n, p), np.float64)
    for i in np.flatnonzero(~np.isfinite(out) & (np.asarray(k) < n)):
        ks = np.arange(int(k[i]) + 1, n + 1)
        out[i] = float(special.logsumexp(stats.binom.logpmf(ks, n, p[i])))
    return out


def _burst_one(scores: pd.DataFrame) -> pd.DataFrame:
    """The burst statistic of one reading of the per-hand favour (see :func:`_burst`)."""
    cols = ["actor", "other", "logp", "hands", "above", "expected", "level"]
    if scores.empty:
        return pd.DataFrame(columns=cols).set_index(["actor", "other"])
    room = scores["x"].to_numpy(np.float64)
    room_cut = np.quantile(room, [1 - t for t in BURST_LEVELS])
    room_rate = np.array([(room > c).mean() for c in room_cut])
    rows = []
    for actor, g in scores.groupby("actor", sort=False):
        x, other = g["x"].to_numpy(np.float64), g["other"].to_numpy(object)
        for o in np.unique(other):
            mine, pool = x[other == o], x[other != o]
            if len(pool) >= BURST_MIN_POOL:
                cut = np.quantile(pool, [1 - t for t in BURST_LEVELS])
                rate = np.array([(pool > c).mean() for c in cut])
            else:
                cut, rate = room_cut, room_rate
            rate = np.clip(rate, 1.0 / max(len(pool), 1), 1.0)
            above = np.array([(mine > c).sum() for c in cut])
            logp = binom_logsf(above - 1, len(mine), rate)
            k = int(np.argmin(logp))
            rows.append((actor, o, float(min(0.0, logp[k] + np.log(len(BURST_LEVELS)))), len(mine), int(above[k]),
                         float(rate[k] * len(mine)), BURST_LEVELS[k]))
    return pd.DataFrame(rows, columns=cols).set_index(["actor", "other"])


def _burst(lk: pd.DataFrame) -> pd.DataFrame:
    """Occasional collusion: does the pair have more extreme favour hands than the actor's others?

    A partner-aware actor in a minority of hands shifts the mean little but leaves a few hands far
    out. For each level t of BURST_LEVELS the actor's upper t-quantile is read from its hands with
    everyone *except* this other (the room's pool when it has fewer than BURST_MIN_POOL of them), the
    pair's hands above it are counted, and the count is a binomial tail against the pool's own rate
    above it (exact, so a few hands cannot look like many); the best level, times the number of
    levels, is the directed log p. As for the other favour signals, the per-hand favour is read
    plainly and with the actor's own seat habit removed, and the weaker of the two readings counts.
    Index (actor, other); columns logp, hands, above, expected, level.
    """
    plain = _burst_one(hand_scores(lk, BURST_SIGNAL))
    free_col = f"{BURST_SIGNAL}_habit_free"
    if free_col not in lk.columns:
        return plain
    free = _burst_one(hand_scores(lk, free_col)).reindex(plain.index)
    out = plain.copy()
    weaker_free = (free["logp"].fillna(0.0) > plain["logp"]).to_numpy()
    out.loc[weaker_free] = free.loc[weaker_free].to_numpy()
    return out
