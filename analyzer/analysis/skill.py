"""The per-player choice model: P(option) ∝ exp(-skill x normalised loss), skill fitted by maximum likelihood.

After Regan's intrinsic ratings for chess: the evaluator gives every option of a decision its loss
against the best option, in units of the decision's own spread (``loss`` in the decision rows,
:func:`analyzer.analysis.decisions.decision_scale`), and a player of sensitivity ``skill`` picks
option k with probability ``exp(-skill * loss_k) / sum_j exp(-skill * loss_j)``. 0 is a uniformly
random player; the larger, the more closely the player follows the options' values. The fit is
one-dimensional (scipy's bounded scalar minimiser on log skill) and its 95% interval comes from the
profile likelihood (where the log-likelihood falls 1.92 below its maximum), which stays honest
near the bounds where a Fisher interval would not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import orjson
import pandas as pd
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import chi2

from analyzer.kernels.rollout import MAX_OPTIONS

SKILL_MIN = 1e-3
SKILL_MAX = 50.0  # per unit of normalised loss; beyond this the model is "always the best option"
PROFILE_DROP = float(chi2.ppf(0.95, 1)) / 2.0  # 1.92: the 95% profile-likelihood interval
#: At most this weight on the reference policy's losses: the rollouts' values always count, so a room
#: whose players share a systematic error cannot teach the model that the error is good play.
MAX_REF_WEIGHT = 0.75


@dataclass(frozen=True, slots=True)
class Fit:
    """A fitted sensitivity with its 95% profile-likelihood interval and the decisions behind it."""

    skill: float
    lo: float
    hi: float
    decisions: int


def loss_matrix(frame: pd.DataFrame, *, dd: bool = False, key: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, 13) normalised loss of every option (inf in the padding) and the chosen option's index.

    ``dd``: the losses on the true deal (``loss_dd``), on the same per-decision scale; ``key`` another
    per-option loss (``loss_ref``: the reference policy's). Rows written before losses were stored
    are rebuilt from the options' expected scores (``loss_ref`` then reads as 0: no information).
    """
    n = len(frame)
    out = np.full((n, MAX_OPTIONS), np.inf)
    chosen = np.zeros(n, np.int64)
    key = key or ("loss_dd" if dd else "loss")
    texts = frame["options"].tolist()
    cards = frame["chosen"].tolist()
    seats = frame["seat"].tolist()
    for i, (text, card, seat) in enumerate(zip(texts, cards, seats)):
        opts = orjson.loads(text)
        if not opts:  # no options recorded: one certain choice, no information about skill
            out[i, 0] = 0.0
            continue
        if key in opts[0]:
            vals = [o[key] if o[key] is not None else 0.0 for o in opts]
        elif key == "loss_ref":
            vals = [0.0] * len(opts)
        else:  # older rows: points, scaled here as decisions.decision_scale does
            from analyzer.analysis.decisions import decision_scale

            own = np.array([o["ev"][seat] for o in opts], float)
            pts = np.array([o["ev_dd" if dd else "ev"][seat] for o in opts], float)
            vals = ((pts.max() - pts) / decision_scale(own[None, :])[0]).tolist()
        out[i, : len(vals)] = vals
        chosen[i] = next((j for j, o in enumerate(opts) if o["card"] == card), 0)
    return out, chosen


def probabilities(losses: np.ndarray, skill: float | np.ndarray) -> np.ndarray:
    """Choice probabilities of every option (rows of ``losses``; inf padding gets 0)."""
    s = np.asarray(skill, float).reshape(-1, 1) if np.ndim(skill) else skill
    z = -s * np.where(np.isfinite(losses), losses, 0.0)
    z = np.where(np.isfinite(losses), z, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    w = np.exp(z)
    return w / w.sum(axis=1, keepdims=True)


def _nll(log_skill: float, losses: np.ndarray, chosen_loss: np.ndarray) -> float:
    s = math.exp(log_skill)
    z = np.where(np.isfinite(losses), -s * losses, -np.inf)
    m = z.max(axis=1)
    return float((s * chosen_loss + m + np.log(np.exp(z - m[:, None]).sum(axis=1))).sum())


def fit_skill(losses: np.ndarray, chosen: np.ndarray) -> Fit:
    """Maximum-likelihood skill of one player's decisions (rows of ``losses``, chosen indices)."""
    n = len(losses)
    if n == 0:
        return Fit(math.nan, math.nan, math.nan, 0)
    cl = losses[np.arange(n), chosen]
    lo_b, hi_b = math.log(SKILL_MIN), math.log(SKILL_MAX)
    res = minimize_scalar(_nll, bounds=(lo_b, hi_b), method="bounded", args=(losses, cl),
                          options={"xatol": 1e-4})
    best = float(res.fun)

    def drop(x: float) -> float:
        return _nll(x, losses, cl) - best - PROFILE_DROP

    x = float(res.x)
    lo = brentq(drop, lo_b, x) if drop(lo_b) > 0 else lo_b
    hi = brentq(drop, x, hi_b) if drop(hi_b) > 0 else hi_b
    return Fit(math.exp(x), math.exp(lo), math.exp(hi), n)


def _best_nll(losses: np.ndarray, chosen_loss: np.ndarray) -> float:
    res = minimize_scalar(_nll, bounds=(math.log(SKILL_MIN), math.log(SKILL_MAX)), method="bounded",
                          args=(losses, chosen_loss), options={"xatol": 1e-3})
    return float(res.fun)


def mix_losses(losses: np.ndarray, ref_losses: np.ndarray, weight: float) -> np.ndarray:
    """(1 - weight) x the evaluator's losses + weight x the reference policy's (inf padding kept)."""
    return np.where(np.isfinite(losses), (1.0 - weight) * losses + weight * np.nan_to_num(ref_losses, posinf=0.0),
                    np.inf)


def fit_weight(losses: np.ndarray, ref_losses: np.ndarray, chosen: np.ndarray, groups: np.ndarray,
               max_weight: float = MAX_REF_WEIGHT) -> float:
    """The room's weight of the reference policy's losses in the loss the choice model reads: the
    weight that maximises the likelihood of everyone's choices, each group (player) with its own skill.

    Fitted on the room, never per player: it says what the players' choices follow (the rollouts'
    values, the strategy features' judgement, or a mix), and every player is then measured on that."""
    n = len(losses)
    ar = np.arange(n)
    order = np.argsort(groups, kind="stable")
    _, starts = np.unique(groups[order], return_index=True)
    parts = [order[a:b] for a, b in zip(starts, list(starts[1:]) + [n])]

    def total(w: float) -> float:
        m = mix_losses(losses, ref_losses, w)
        cl = m[ar, chosen]
        return sum(_best_nll(m[i], cl[i]) for i in parts)

    if max_weight <= 0:
        return 0.0
    res = minimize_scalar(total, bounds=(0.0, max_weight), method="bounded", options={"xatol": 0.01})
    return float(res.x) if total(float(res.x)) < total(0.0) else 0.0


def fit_by(losses: np.ndarray, chosen: np.ndarray, groups: np.ndarray) -> dict[str, Fit]:
    """One fit per value of ``groups`` (e.g. the player column)."""
    order = np.argsort(groups, kind="stable")
    keys, starts = np.unique(groups[order], return_index=True)
    bounds = list(starts[1:]) + [len(order)]
    return {str(k): fit_skill(losses[order[a:b]], chosen[order[a:b]]) for k, a, b in zip(keys, starts, bounds)}


def simulate_choices(losses: np.ndarray, skill: float, seed: int) -> np.ndarray:
    """Seeded choices of a model player of ``skill`` on decisions with these losses (for tests, benchmarks)."""
    p = probabilities(losses, skill)
    u = np.random.default_rng(seed).random(len(p))
    return np.minimum((p.cumsum(axis=1) < u[:, None]).sum(axis=1), (np.isfinite(losses)).sum(axis=1) - 1)
