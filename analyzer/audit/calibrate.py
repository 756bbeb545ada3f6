"""From pair signals to a calibrated score: per-pair p-values, Benjamini-Hochberg q-values, the alarm.

Each directed z is first read against the room itself (Efron's empirical null: most pairs in a
room are honest, so the spread of their z's shows how far the theoretical N(0, 1) can be trusted;
the null is only ever widened, never narrowed). The favour signals, which all ask whether the
actor's choices helped the partner, are summed per direction (Stouffer, with the variance of the
sum read from their correlation across the room's pairs). Each signal's two directions are
combined so that one-way help (feeding) and two-way help (hand sharing) both count; the pair's
p-value is the best signal's, Bonferroni-corrected for the number of signals, so no single style
is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

#: Signals in the pair score (directed ones are combined over both directions). Total impact is
#: reported but left out: given the regret, it carries the same information as marginal impact.
#: Think time counts only when the rows carry times (else its z is 0 and its p is 1/2 or more).
#: The exact immediate favour also counts on its own: it is far less noisy than the rollout-based
#: favour signals, and an equal-weight sum with them would dilute it.
SCORE_SIGNALS = ("favour", "imm_marginal", "marginal", "codev", "think")
DIRECTED = ("marginal", "dd_marginal", "imm_marginal", "total", "pooled", "think")
#: Directed signals summed into ``favour``: true-deal favour to the partner (rollouts, and the exact
#: immediate effect) and the pair's gain beyond the actor's own information.
FAVOUR = ("dd_marginal", "imm_marginal", "pooled")
#: Fewer pairs than this and the room cannot estimate its own null; the theoretical one is used.
MIN_PAIRS_EMPIRICAL = 30
P_FLOOR = 1e-300


@dataclass(frozen=True, slots=True)
class Alarm:
    """When a pair is flagged. The default gives well under one false alarm per 10,000 honest
    pairs (a per-pair p of 1e-5), and the q-value keeps a room's alarms mostly true."""

    alpha: float = 1e-5
    fdr: float = 0.05
    min_hands: int = 10


def empirical_null(z: pd.Series, weights: pd.Series | None = None) -> tuple[float, float]:
    """(centre, scale) of a z column read from the room: median and MAD, only ever conservative."""
    z = z.dropna()
    if len(z) < MIN_PAIRS_EMPIRICAL:
        return 0.0, 1.0
    med = float(np.median(z))
    mad = float(stats.median_abs_deviation(z, scale="normal"))
    return max(med, 0.0), max(mad, 1.0)


def _sf(z: np.ndarray) -> np.ndarray:
    return np.clip(stats.norm.sf(z), P_FLOOR, 1.0)


def combine_directions(z_ab: np.ndarray, z_ba: np.ndarray) -> np.ndarray:
    """One p per pair from its two directed z's: the better of 'either side' and 'both sides'."""
    p_either = 1 - (1 - _sf(np.maximum(z_ab, z_ba))) ** 2
    p_both = _sf((z_ab + z_ba) / np.sqrt(2))
    return np.clip(2 * np.minimum(p_either, p_both), P_FLOOR, 1.0)


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


def calibrate(pairs: pd.DataFrame, alarm: Alarm = Alarm()) -> pd.DataFrame:
    """Add ``<signal>_p`` for every signal, the empirical-null scales, and ``p_value``, ``q_value``,
    ``z``, ``score``, ``flagged`` to a pair-signal table (a copy)."""
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
        out[f"{name}_p"] = combine_directions(*adj)
    fav = [out[[f"{name}_{tag}_z_adj" for name in FAVOUR]].to_numpy(np.float64) for tag in ("ab", "ba")]
    var = stouffer_variance(np.concatenate(fav))
    out["favour_corr_factor"] = var / len(FAVOUR)  # 1 when the favour signals are uncorrelated
    zs = [f.sum(axis=1) / np.sqrt(var) for f in fav]
    centre, scale = empirical_null(pd.Series(np.concatenate(zs)))
    out["favour_null_scale"] = scale
    out["favour_ab_z"], out["favour_ba_z"] = [(z - centre) / scale for z in zs]
    out["favour_p"] = combine_directions(out["favour_ab_z"].to_numpy(), out["favour_ba_z"].to_numpy())
    centre, scale = empirical_null(out["codev_z"])
    out["codev_null_scale"] = scale
    out["codev_p"] = _sf((out["codev_z"].to_numpy(np.float64) - centre) / scale)
    p_min = out[[f"{s}_p" for s in SCORE_SIGNALS]].min(axis=1).to_numpy()
    out["p_value"] = np.clip(len(SCORE_SIGNALS) * p_min, P_FLOOR, 1.0)
    out["z"] = stats.norm.isf(out["p_value"].clip(upper=1 - 1e-12))
    out["score"] = out["z"]
    winner = out[[f"{s}_p" for s in SCORE_SIGNALS]].to_numpy().argmin(axis=1)
    out["main_signal"] = [SCORE_SIGNALS[k] for k in winner]
    out["q_value"] = multipletests(out["p_value"], method="fdr_bh")[1] if len(out) else []
    out["flagged"] = ((out["p_value"] <= alarm.alpha) & (out["q_value"] <= alarm.fdr)
                      & (out["hands_together"] >= alarm.min_hands))
    return out
