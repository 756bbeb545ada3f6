"""From pair signals to calibrated verdicts: per-pair p-values in log space, Benjamini-Hochberg q-values,
the alarm (``flagged``) and the review tier.

Each signal gets its own p, read against the room itself (Efron's empirical null: most pairs in a
room are honest, so the spread of their z's shows how far the theoretical N(0, 1) can be trusted;
the null is only ever widened, never narrowed), its two directions combined so that one-way help
(feeding) and two-way help (hand sharing) both count. The pair's p-value is the combination's
(analyzer/audit/combine.py: learned contrasts of the directed z's with the exact null of their
maximum under the room's covariance, and the two count statistics beside them). Everything is
carried as log p (``scipy.special.log_ndtr``, ``scipy.special.ndtri_exp``), so the strongest cases
keep their order instead of meeting a floor of 1e-300.

Two verdicts are drawn from one p-value: **flagged** (family-wise: p <= alpha, 1e-5 by default, a false
alarm well under once in 10,000 honest pairs) and **review** (a false-discovery tier: Benjamini-Hochberg
q <= fdr over the room's pairs, for a person to look at); the rest are **clear**.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from analyzer.analysis.dist import bh_adjust, log_bh_adjust, mad_normal, norm_isf, norm_logsf
from analyzer.audit.burst import BURST_LOOKS
from analyzer.audit.combine import combine, log_combine_directions, multiplicity

#: Signals in the pair score (analyzer/audit/combine.py: the directed ones in learned linear contrasts, burst's count
#: look and codev beside them). Every signal's own p is reported too (``<signal>_p``), ``favour`` (the Stouffer sum of
#: the favour signals) among them, but the score is the combination's. Think time counts only when the rows carry
#: times (else its z is 0).
SCORE_SIGNALS = ("imm_marginal", "burst", "think", "dd_marginal", "codev")
DIRECTED = ("marginal", "dd_marginal", "imm_marginal", "total", "pooled", "think")
#: Directed signals summed into ``favour``: true-deal favour to the partner (rollouts, and the exact
#: immediate effect) and the pair's gain beyond the actor's own information.
FAVOUR = ("dd_marginal", "imm_marginal", "pooled")
#: Fewer pairs than this and the room cannot estimate its own null; the theoretical one is used.
MIN_PAIRS_EMPIRICAL = 30
#: log p of a z that nothing at all points to (keeps z finite for a p of 1).
LOG_P_MAX = math.log1p(-1e-12)
VERDICTS = ("flagged", "review", "clear")


#: The per-pair alarm threshold (well under one false alarm in 10,000 honest pairs: docs/methods/verdicts.md).
DEFAULT_ALPHA = 1e-5


@dataclass(frozen=True, slots=True)
class Alarm:
    """When a pair is flagged (p <= alpha), or marked for review (q <= fdr); both need min_hands.
    The default alpha gives well under one false alarm per 10,000 honest pairs (a per-pair p of 1e-5)."""

    alpha: float = DEFAULT_ALPHA
    fdr: float = 0.05
    min_hands: int = 10


def empirical_null(z: pd.Series, weights: pd.Series | None = None) -> tuple[float, float]:
    """(centre, scale) of a z column read from the room: median and MAD, only ever conservative."""
    z = z.dropna()
    if len(z) < MIN_PAIRS_EMPIRICAL:
        return 0.0, 1.0
    med = float(np.median(z))
    mad = mad_normal(z.to_numpy(np.float64))
    return max(med, 0.0), max(mad, 1.0)


def z_of_logp(logp: np.ndarray | float) -> np.ndarray:
    """The one-sided normal z of a log p-value, without ceiling (p = 1e-400 gives z ~ 42.8)."""
    return -special.ndtri_exp(np.minimum(np.asarray(logp, np.float64), LOG_P_MAX))


def combine_directions(z_ab: np.ndarray, z_ba: np.ndarray) -> np.ndarray:
    """One p per pair from its two directed z's (see :func:`log_combine_directions`)."""
    return np.exp(log_combine_directions(z_ab, z_ba))


def burst_logp(pairs: pd.DataFrame) -> np.ndarray:
    """The pair's log p of the burst statistic: its mean look and its count look, each over both directions
    (:func:`log_combine_directions`), the better one x ``BURST_LOOKS``. Tables without the looks' columns
    (older pair tables) read the directed ``burst_*_z``; tables without burst at all give log p 0."""
    def col(name: str) -> np.ndarray:
        return pairs[name].to_numpy(np.float64) if name in pairs.columns else np.zeros(len(pairs))

    if "burst_ab_z_mean" not in pairs.columns:
        return log_combine_directions(col("burst_ab_z"), col("burst_ba_z"))
    mean = log_combine_directions(col("burst_ab_z_mean"), col("burst_ba_z_mean"))
    count = log_combine_directions(col("burst_ab_z_count"), col("burst_ba_z_count"))
    return np.minimum(np.minimum(mean, count) + np.log(BURST_LOOKS), 0.0)


#: Signals that corroborate but never raise the alarm alone: being slower together has innocent causes (friends who
#: talk while they play, a shared room or connection; an independent simulator's honest "chatty friends", 1.4x slower
#: together and playing as always, were flagged on think alone). A pair whose strongest signal is one of these is
#: for review at most, unless a play signal backs it (its Bonferroni p over the play signals <= BACKING_P).
CORROBORATING = ("think",)
BACKING_P = 0.05

#: Directed signals whose two directions share noise under the null: think time, where both players' times carry
#: the pace of the tables they shared (a laggy connection, a slow evening), so honest pairs' two z's go together
#: (correlation ~0.75 across pairs under a lag per sitting) and their sum is wider than sqrt(2).
SHARED_NOISE = ("think",)


def direction_correlation(z_ab: np.ndarray, z_ba: np.ndarray) -> float:
    """The room's correlation of a signal's two directions across its pairs (those with evidence both ways: a z of
    exactly 0 is no evidence), counted upwards only (a negative estimate counts as 0; colluders only raise it); with
    fewer than MIN_PAIRS_EMPIRICAL such pairs, 1 (the two directions taken as one: their mean)."""
    z_ab, z_ba = np.asarray(z_ab, np.float64), np.asarray(z_ba, np.float64)
    both = np.isfinite(z_ab) & np.isfinite(z_ba) & (z_ab != 0) & (z_ba != 0)
    if both.sum() < MIN_PAIRS_EMPIRICAL:
        return 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        r = float(np.corrcoef(z_ab[both], z_ba[both])[0, 1])
    return float(np.clip(r, 0.0, 1.0)) if np.isfinite(r) else 1.0


def stouffer_variance(z: np.ndarray) -> float:
    """Variance of the sum of a row of z's, (pairs, signals), from their correlation across pairs.

    Correlations are only counted upwards (a negative estimate counts as 0) and colluding pairs in
    the room only raise them, so the sum's null is, if anything, too wide. Signals that are all
    zero (no data) count as perfectly correlated with the rest; with too few pairs to estimate
    anything, all of them do.
    """
    k = z.shape[1]
    if len(z) < MIN_PAIRS_EMPIRICAL:
        return float(k * k)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.corrcoef(z, rowvar=False)
    r = np.where(np.isfinite(r), np.clip(r, 0.0, 1.0), 1.0)
    np.fill_diagonal(r, 1.0)
    return float(r.sum())


def q_values(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (``analysis.dist.bh_adjust``, scipy.stats.false_discovery_control's)."""
    p = np.asarray(p, np.float64)
    return bh_adjust(p) if len(p) else p


def hands_to_alarm(log_p: np.ndarray, hands: np.ndarray, alpha: float, factor: float | None = None) -> np.ndarray:
    """More hands together the pair needs before its p could reach alpha, if its effect per hand stays.

    The pair's p is read back as the z of one contrast (undoing ``factor``, the combination's multiplicity in the
    tail: :func:`analyzer.audit.combine.multiplicity`); a z grows as the square root of the hands, so
    n' = n (z_alpha / z)^2. NaN when the pair shows no effect to scale up (its p is 1/2 or more); 0 when it is
    already there.
    """
    factor = multiplicity() if factor is None else factor
    log_p = np.asarray(log_p, np.float64)
    z = np.where(log_p < np.log(0.5), z_of_logp(log_p - np.log(factor)), 0.0)
    z_alpha = float(norm_isf(alpha / factor))
    n = np.asarray(hands, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(z > 0, np.ceil(n * (z_alpha / np.where(z > 0, z, 1.0)) ** 2 - n), np.nan)
    return np.where(np.isnan(need), np.nan, np.maximum(need, 0.0))


def calibrate(pairs: pd.DataFrame, alarm: Alarm = Alarm()) -> pd.DataFrame:
    """Add ``<signal>_p`` (and ``_logp``) for every signal, the empirical-null scales, and ``log10_p``,
    ``p_value``, ``q_value``, ``score`` (-log10 p), ``z``, ``effect_size``, ``verdict``, ``flagged``,
    ``hands_to_alarm`` to a pair-signal table (a copy)."""
    out = pairs.copy()
    for name in DIRECTED:
        zs = []
        for tag in ("ab", "ba"):
            col = f"{name}_{tag}_z"
            zs.append(out[col].to_numpy(np.float64))
        centre, scale = empirical_null(pd.Series(np.concatenate(zs)))
        out[f"{name}_null_scale"] = scale
        adj = [(z - centre) / scale for z in zs]
        out[f"{name}_ab_z_adj"], out[f"{name}_ba_z_adj"] = adj
        rho = direction_correlation(adj[0], adj[1]) if name in SHARED_NOISE else 0.0
        if name in SHARED_NOISE:
            out[f"{name}_direction_rho"] = rho
        out[f"{name}_logp"] = log_combine_directions(adj[0], adj[1], rho=rho)
    fav = [out[[f"{name}_{tag}_z_adj" for name in FAVOUR]].to_numpy(np.float64) for tag in ("ab", "ba")]
    var = stouffer_variance(np.concatenate(fav))
    out["favour_corr_factor"] = var / len(FAVOUR)  # 1 when the favour signals are uncorrelated
    zs = [f.sum(axis=1) / np.sqrt(var) for f in fav]
    centre, scale = empirical_null(pd.Series(np.concatenate(zs)))
    out["favour_null_scale"] = scale
    out["favour_ab_z"], out["favour_ba_z"] = [(z - centre) / scale for z in zs]
    out["favour_logp"] = log_combine_directions(out["favour_ab_z"].to_numpy(), out["favour_ba_z"].to_numpy())
    centre, scale = empirical_null(out["codev_z"])
    out["codev_null_scale"] = scale
    out["codev_logp"] = norm_logsf((out["codev_z"].to_numpy(np.float64) - centre) / scale)
    # burst is calibrated already (each actor against its own hands with others), so no room null here. Each
    # of its two looks combines the two directions (sharing pairs favour each other in the same hands, so the
    # mean look's Stouffer sum over both directions is where they show), then the better look, x 2
    out["burst_logp"] = burst_logp(out)
    for s in (*DIRECTED, "favour", "codev", "burst"):
        out[f"{s}_p"] = np.exp(out[f"{s}_logp"])
    comb = combine(out, alarm.min_hands)
    log_p = comb.logp
    for i, tag in enumerate(("ab", "ba", "both")):  # the learned contrasts (the single signals' are their own z's)
        out[f"combined_{tag}_t"] = comb.t[:, i] if len(out) else np.zeros(0)
    out["combined_linear_logp"] = comb.logp_linear
    out["log10_p"] = log_p / np.log(10.0)
    out["p_value"] = np.exp(log_p)  # may underflow to 0 for the strongest cases: log10_p keeps them apart
    out["score"] = -out["log10_p"] + 0.0  # + 0.0: no negative zero
    # the one-sided normal score of p, floored at 0: a p of 1/2 or more (a Bonferroni-capped 1 among them, whose
    # score would be the clamp's -7.03) is no evidence either way, not evidence of the opposite
    out["z"] = np.maximum(z_of_logp(log_p), 0.0)
    # tie-break for equal scores (many clear pairs sit at p = 1): the favour per hand together, in
    # units of an honest hand's spread (the stronger direction's room-adjusted z over sqrt(hands))
    fz = np.maximum(out["favour_ab_z"].to_numpy(np.float64), out["favour_ba_z"].to_numpy(np.float64))
    out["effect_size"] = fz / np.sqrt(np.maximum(out["hands_together"].to_numpy(np.float64), 1.0))
    out["main_signal"] = comb.main_signal.tolist()
    enough = out["hands_together"] >= alarm.min_hands
    # Benjamini-Hochberg over the pairs that can be marked at all: a pair below min_hands is no hypothesis
    # the audit tests, and counting it would only make every threshold stricter (q = 1 for it)
    q = np.ones(len(out))
    q[enough.to_numpy()] = q_values(out["p_value"].to_numpy()[enough.to_numpy()])
    out["q_value"] = q
    # and its log10, computed from log p: a q that underflows to 0 (the strongest cases) keeps its size there
    log_q = np.zeros(len(out))
    log_q[enough.to_numpy()] = log_bh_adjust(log_p[enough.to_numpy()])
    out["log10_q"] = log_q / np.log(10.0) + 0.0
    play_logp = combine(out, alarm.min_hands, without=CORROBORATING).logp
    alone = np.isin(out["main_signal"].to_numpy(object), CORROBORATING) & (play_logp > np.log(BACKING_P))
    out["corroboration_only"] = alone
    out["flagged"] = (out["p_value"] <= alarm.alpha) & (out["q_value"] <= alarm.fdr) & enough & ~alone
    review = ~out["flagged"] & (out["q_value"] <= alarm.fdr) & enough
    out["verdict"] = np.where(out["flagged"], "flagged", np.where(review, "review", "clear"))
    out["hands_to_alarm"] = np.where(alone, np.nan, hands_to_alarm(log_p, out["hands_together"].to_numpy(),
                                                                    alarm.alpha))
    out.loc[out["flagged"], "hands_to_alarm"] = 0.0
    return out


def rank_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """Calibrated pairs, most suspicious first: by score, ties by effect size, then by name."""
    return pairs.sort_values(["score", "effect_size", "a", "b"], ascending=[False, False, True, True],
                             kind="stable").reset_index(drop=True)
