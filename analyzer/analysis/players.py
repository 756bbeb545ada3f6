"""Per-player table from decision rows: match rate, regret, accuracy 0-100, a Regan-style skill model and z-scores.

The model (after Regan's work on chess): at each decision a player of sensitivity ``beta`` picks
option k with probability proportional to ``exp(-beta * gap_k)``, gap_k being the points option k
loses against the best by the actor's own information. A player's level is the ``beta`` fitted to
their choices (maximum likelihood, with a confidence interval from the Fisher information).
Two z-scores come from the model, never from raw averages:

- ``z``: the player's total regret against what the model predicts on *these* decisions for players
  of similar level (the pooled fit of the other players in the same level band); positive = plays
  better than peers would on the same decisions.
- ``z_dd``: how often the player chose the option best *by the true deal* beyond what a player of their
  own fitted level would (a player who sees hidden cards scores high; the pooled-information signal).
"""

from __future__ import annotations

import math

import numpy as np
import orjson
import pandas as pd
from scipy.optimize import minimize_scalar
from scipy.stats import spearmanr

from analyzer.analysis.decisions import MAX_OPTIONS

BETA_MAX = 20.0  # per point; beyond this the model is "always the best option"
Z_95 = 1.959964
LEVEL_BANDS = 5  # level bands for peers (fewer when there are fewer players)
MIN_TIMED = 5  # decisions with think times needed before think time is set against difficulty

COLUMNS = ("player", "decisions", "hands", "match_rate", "mean_regret", "regret_lo", "regret_hi", "accuracy",
           "accuracy_lo", "accuracy_hi", "level", "level_lo", "level_hi", "z", "z_dd", "mean_think_ms",
           "think_difficulty_rho", "think_ms_per_difficulty")


def gaps_matrix(frame: pd.DataFrame, *, dd: bool = False) -> np.ndarray:
    """(rows, 13): points each option loses against the best for the actor (inf in the padding)."""
    key = "ev_dd" if dd else "ev"
    out = np.full((len(frame), MAX_OPTIONS), np.inf)
    for i, (text, seat) in enumerate(zip(frame["options"].tolist(), frame["seat"].tolist())):
        vals = [o[key][seat] for o in orjson.loads(text)]
        top = max(vals)
        out[i, : len(vals)] = [top - v for v in vals]
    return out


def _probs(gaps: np.ndarray, beta: float) -> np.ndarray:
    w = np.exp(-beta * gaps)  # gaps >= 0, padding inf -> 0
    return w / w.sum(axis=1, keepdims=True)


def _chosen_index(frame: pd.DataFrame) -> np.ndarray:
    out = np.zeros(len(frame), np.int64)
    for i, (text, chosen) in enumerate(zip(frame["options"].tolist(), frame["chosen"].tolist())):
        out[i] = [o["card"] for o in orjson.loads(text)].index(chosen)
    return out


def fit_level(gaps: np.ndarray, chosen_gap: np.ndarray) -> tuple[float, float]:
    """Maximum-likelihood sensitivity beta and its standard error for one set of decisions."""
    if len(gaps) == 0:
        return math.nan, math.nan

    def nll(log_beta: float) -> float:
        b = math.exp(log_beta)
        z = -b * gaps
        m = z.max(axis=1, keepdims=True)
        lse = (m[:, 0] + np.log(np.exp(z - m).sum(axis=1)))
        return float((b * chosen_gap + lse).sum())

    res = minimize_scalar(nll, bounds=(math.log(1e-4), math.log(BETA_MAX)), method="bounded")
    beta = math.exp(res.x)
    p = _probs(gaps, beta)
    g = np.where(np.isfinite(gaps), gaps, 0.0)
    info = float(((p * g * g).sum(axis=1) - (p * g).sum(axis=1) ** 2).sum())
    return beta, (1.0 / math.sqrt(info) if info > 0 else math.inf)


def _regret_z(gaps: np.ndarray, chosen_gap: np.ndarray, beta: float) -> float:
    """z of the total regret against the model at ``beta``; positive = less regret than predicted."""
    p = _probs(gaps, beta)
    g = np.where(np.isfinite(gaps), gaps, 0.0)
    mean = (p * g).sum(axis=1)
    var = (p * g * g).sum(axis=1) - mean ** 2
    sd = math.sqrt(float(var.sum()))
    return float((mean.sum() - chosen_gap.sum()) / sd) if sd > 0 else 0.0


def _dd_z(gaps: np.ndarray, dd_best: np.ndarray, chosen: np.ndarray, beta: float) -> float:
    """z of how often the true-deal best was chosen, against the model at the player's own level."""
    p = _probs(gaps, beta)[np.arange(len(gaps)), dd_best]
    sd = math.sqrt(float((p * (1 - p)).sum()))
    return float(((chosen == dd_best).sum() - p.sum()) / sd) if sd > 0 else 0.0


def player_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per player (columns ``COLUMNS``), best accuracy first."""
    if frame.empty:
        return pd.DataFrame({c: [] for c in COLUMNS})
    gaps = gaps_matrix(frame)
    dd_best = gaps_matrix(frame, dd=True).argmin(axis=1)
    chosen = _chosen_index(frame)
    chosen_gap = gaps[np.arange(len(frame)), chosen]
    finite = np.where(np.isfinite(gaps), gaps, np.nan)
    random_regret = np.nanmean(finite, axis=1)  # what a uniformly random choice loses on average
    players = frame["player"].to_numpy()
    names = sorted(set(players.tolist()))
    idx = {p: np.flatnonzero(players == p) for p in names}
    levels = {p: fit_level(gaps[i], chosen_gap[i]) for p, i in idx.items()}
    band = _bands({p: levels[p][0] for p in names})
    rows = []
    for p in names:
        i = idx[p]
        n = len(i)
        reg = chosen_gap[i]
        mean = float(reg.mean())
        half = Z_95 * float(reg.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
        base = float(random_regret[i].mean())

        def acc(r: float, base: float = base) -> float:
            return float(np.clip(100.0 * (1.0 - r / base), 0.0, 100.0)) if base > 0 else 100.0

        beta, beta_se = levels[p]
        peers = np.concatenate([idx[q] for q in names if q != p and band[q] == band[p]] or [np.zeros(0, np.int64)])
        peer_beta = fit_level(gaps[peers], chosen_gap[peers])[0] if len(peers) else beta
        sub = frame.iloc[i]
        think = sub["think_ms"].to_numpy()
        diff = sub["difficulty"].to_numpy()
        ok = np.isfinite(think)
        rho = slope = math.nan
        if ok.sum() >= MIN_TIMED and np.ptp(diff[ok]) > 0 and np.ptp(think[ok]) > 0:
            rho = float(spearmanr(diff[ok], think[ok]).statistic)
            slope = float(np.polyfit(diff[ok], think[ok], 1)[0])
        rows.append({
            "player": p, "decisions": n, "hands": int(sub["hand_id"].nunique()),
            "match_rate": float((chosen[i] == gaps[i].argmin(axis=1)).mean()), "mean_regret": mean,
            "regret_lo": max(mean - half, 0.0), "regret_hi": mean + half, "accuracy": acc(mean),
            "accuracy_lo": acc(mean + half), "accuracy_hi": acc(max(mean - half, 0.0)), "level": beta,
            "level_lo": max(beta - Z_95 * beta_se, 0.0), "level_hi": beta + Z_95 * beta_se,
            "z": _regret_z(gaps[i], reg, peer_beta), "z_dd": _dd_z(gaps[i], dd_best[i], chosen[i], beta),
            "mean_think_ms": float(np.nanmean(think)) if ok.any() else math.nan,
            "think_difficulty_rho": rho, "think_ms_per_difficulty": slope,
        })
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    return out.sort_values(["accuracy", "player"], ascending=[False, True], ignore_index=True)


def _bands(levels: dict[str, float]) -> dict[str, int]:
    """Level band of each player: equal-count bands of the fitted level (peers = same band)."""
    order = sorted(levels, key=lambda p: (levels[p], p))
    k = max(1, min(LEVEL_BANDS, len(order) // 4))
    return {p: j * k // len(order) for j, p in enumerate(order)}
