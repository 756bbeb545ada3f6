"""Occasional collusion (``burst``): a directed pair's few extreme favour hands, against the actor's others.

A partner-aware actor in a minority of hands shifts the mean favour little but leaves a few hands far
out; the statistics here read the per-hand favour (from the centred links of ``signals``) and ask
whether the pair holds more of the actor's extreme hands than its hands with everyone else would give.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special, stats

#: Occasional collusion (``burst``): a directed pair's hands are counted above these upper quantiles of the
#: actor's hands with everyone else (each count an exact beta-binomial tail), next to the mean of their
#: normal scores among all the actor's hands (a permutation z).
BURST_LEVELS = (0.2, 0.1, 0.05, 0.02, 0.01)
#: Looks the statistic takes: the mean of the normal scores and one count per level (Bonferroni).
BURST_LOOKS = len(BURST_LEVELS) + 1
#: The per-hand favour the burst statistic reads (the exact immediate one: least noise per hand).
BURST_SIGNAL = "imm_marginal"


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


def betabinom_logsf(k: np.ndarray, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log P(X > k) for X ~ BetaBinomial(n, a, b), per entry of k, a, b: the log of the summed pmf, exact in
    log space however far out (scipy's sf is 1 - cdf there, which loses every digit below 1e-16)."""
    k, a, b = (np.atleast_1d(np.asarray(v, np.float64)) for v in (k, a, b))
    ks = np.arange(n + 1, dtype=np.float64)
    log_pmf = (special.gammaln(n + 1) - special.gammaln(ks + 1) - special.gammaln(n - ks + 1)
               + special.betaln(ks + a[:, None], n - ks + b[:, None]) - special.betaln(a, b)[:, None])
    tail = np.where(ks[None, :] > k[:, None], log_pmf, -np.inf)
    return np.minimum(np.asarray(special.logsumexp(tail, axis=1), np.float64), 0.0)


def normal_scores(x: np.ndarray) -> np.ndarray:
    """Upper-tail normal scores of a sample within itself: Phi^-1 of the mid-rank over n (ties share one)."""
    r = stats.rankdata(x, method="average")
    return np.asarray(stats.norm.ppf((r - 0.5) / len(x)), np.float64)


def _burst_one(scores: pd.DataFrame) -> pd.DataFrame:
    """The burst statistic of one reading of the per-hand favour (see :func:`_burst`)."""
    cols = ["actor", "other", "logp", "hands", "above", "expected", "level", "z_mean"]
    if scores.empty:
        return pd.DataFrame(columns=cols).set_index(["actor", "other"])
    rows = []
    levels = np.array(BURST_LEVELS)
    for actor, g in scores.groupby("actor", sort=False):
        # rounded so that hands equal up to the order of a float sum tie exactly: ranks and counts must not
        # depend on how the rows were chunked or ordered (the streamed audit sums them in another order)
        x, other = np.round(g["x"].to_numpy(np.float64), 9), g["other"].to_numpy(object)
        total = len(x)
        z = normal_scores(x)
        spread = float(z.var())
        for o in np.unique(other):
            m = other == o
            n = int(m.sum())
            # the mean of the pair's normal scores against a random n of the actor's hands (finite population)
            fpc = (total - n) / max(total - 1, 1)
            var = n * spread * fpc
            z_mean = float(z[m].sum() / np.sqrt(var)) if var > 1e-12 else 0.0
            logp_mean = float(stats.norm.logsf(z_mean))
            pool = np.sort(x[~m])
            mine = x[m]
            if len(pool) == 0:
                rows.append((actor, o, logp_mean + np.log(BURST_LOOKS), n, 0, 0.0, BURST_LEVELS[0], z_mean))
                continue
            # per level t, the pool's order statistic with j of its hands above: under no favour a hand of the
            # pair lies above it with probability Beta(j + 1, m - j), so the count is beta-binomial (exact
            # for any distribution: the pool's own sampling error is in it)
            j = np.minimum(np.floor(levels * len(pool)).astype(np.int64), len(pool) - 1)
            above = np.array([int((mine > c).sum()) for c in pool[len(pool) - 1 - j]])
            a, b = j + 1.0, len(pool) - j.astype(np.float64)
            lp = np.where(above > 0, betabinom_logsf(above - 1, n, a, b), 0.0)
            k = int(np.argmin(lp))
            rows.append((actor, o, float(min(0.0, min(logp_mean, float(lp[k])) + np.log(BURST_LOOKS))), n,
                         int(above[k]), float(n * a[k] / (a[k] + b[k])), BURST_LEVELS[k], z_mean))
    return pd.DataFrame(rows, columns=cols).set_index(["actor", "other"])


def _burst(lk: pd.DataFrame) -> pd.DataFrame:
    """Occasional collusion: does the pair have more extreme favour hands than the actor's others?

    A partner-aware actor in a minority of hands shifts the mean little but leaves a few hands far
    out. The pair's hands are compared with *all* the actor's hands (every seat it faced, this partner
    included) as a permutation test: under no favour, the pair's hands are a random n of them. Two
    readings: the mean of the pair's normal scores (ranks turned into N(0, 1) quantiles, so heavy tails
    weigh no more than a normal's; its finite-population variance is exact), and for each level t of
    BURST_LEVELS the count of the pair's hands above the actor's upper t-quantile, an exact
    hypergeometric tail (Fisher's test: the quantile's own uncertainty is part of it, so a pair that
    holds a third of the actor's hands is not read against a pool taken as exact). The best of the
    BURST_LOOKS readings, times their number, is the directed log p. As for the other favour signals,
    the per-hand favour is read plainly and with the actor's own seat habit removed, and the weaker of
    the two readings counts. Index (actor, other); columns logp, hands, above, expected, level (the best
    count's), z_mean.
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
