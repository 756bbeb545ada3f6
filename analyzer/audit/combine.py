"""The pair's p-value from its signals: learned linear contrasts of the directed z's, with the exact null of
their maximum under the room's own covariance, and the two count statistics beside them (weighted Bonferroni).

Per pair, x is the vector of the directed z's of SIGNALS, a -> b then b -> a, each centred on the room's
median. Three contrasts are read: the help of a to b (w_dir . x), of b to a (w_dir with the directions
swapped), and help both ways (w_both). Under the null x has mean 0 and the room's covariance S, so a contrast
w . x has variance w'Sw, known, and the three have a known correlation: the pair's linear p is the chance that
the largest of three such normals reaches the pair's, computed exactly (Hunter's bound in the tail, where it is
exact to far below the alarm; a seeded Monte Carlo of the maximum in the body). The weights are learned on
simulated rooms (benchmarks/fit_combine.py: linear discriminants, non-negative, the colluders' shift per
sqrt(hand) of many styles against honest pairs' covariance) and shipped in analyzer/data/combine.json.

S is the room's: the covariance of x over the pairs with enough hands, both orders, read again without the
pairs the first reading puts above TRIM_Z (so that a room's colluders cannot widen its null), each signal's
variance then raised to at least 1, its theoretical null (the room's correlations kept). Each contrast is then
read against the room's median and robust spread, which may widen it, never narrow it.

The burst statistic's count look (a few hands far out) and the deviation-together count ``codev`` are not
normal (most honest pairs sit at p = 1), so they stay outside the linear sum: the pair's p is
min(p_linear / w_linear, p_count / w_count, p_codev / w_codev), the weights summing to 1.

Every contrast is a sum over hands: a directed z is the signal's per-hand sum over its standard error, so
w . x = sum over the pair's hands of sum_k w_k s_k,h / se_k, a per-hand score whose null variance over the pair's
hands is w'Sw (:func:`per_hand_weights`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from analyzer.analysis.dist import mad_normal, norm_logsf

#: The directed signals in the linear contrasts, and their z columns in the pair table ({t}: ab or ba).
SIGNAL_COLUMNS = {"imm_marginal": "imm_marginal_{t}_z", "burst": "burst_{t}_z_mean", "think": "think_{t}_z",
                  "dd_marginal": "dd_marginal_{t}_z"}
#: Signals read on their own too, each direction a contrast of its own beside the learned ones: the exact favour and
#: the rank of the per-hand favour, the two that carry one-way help alone.
SINGLE = ("imm_marginal", "burst")
#: Signals whose null variance is the room's even below 1: think time's z is 0 wherever the rows carry no times.
ROOM_VARIANCE = ("think",)
#: Fewer pairs with enough hands than this and the room cannot estimate its own covariance: the honest
#: covariance of the rooms the weights were fitted on is used, and no room centring or spread.
MIN_PAIRS_ROOM = 30
#: A pair whose largest contrast exceeds this in the first reading is left out of the room's covariance.
TRIM_Z = 3.5
#: The contrasts' tail: below this p the union bound less the joints along the tree of the largest correlations
#: (Hunter's bound, an upper bound, exact to a relative 1e-3 there); above it a Monte Carlo of the maximum.
TAIL_P = 1e-3
MONTE_CARLO = 200_000
#: The parameter file (benchmarks/fit_combine.py writes it).
PARAMS = "combine.json"
#: log p of a contrast at no evidence (keeps z finite for a p of 1).
LOG_P_MAX = math.log1p(-1e-12)


@dataclass(frozen=True)
class Params:
    """The learned weights. ``w_dir``: a -> b help (the helper's z's first, then the helped's), ``w_both``: per
    signal, applied to both directions alike; ``weights``: the Bonferroni weights of the linear part, the burst
    count look and codev; ``null_cov``: the honest covariance of x on the fitting rooms (for small rooms)."""

    signals: tuple[str, ...]
    w_dir: np.ndarray
    w_both: np.ndarray
    weights: dict[str, float]
    null_cov: np.ndarray
    meta: dict[str, Any]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Params:
        k = len(d["signals"])
        p = cls(tuple(d["signals"]), np.asarray(d["w_dir"], np.float64), np.asarray(d["w_both"], np.float64),
                {str(a): float(b) for a, b in d["weights"].items()}, np.asarray(d["null_cov"], np.float64),
                dict(d.get("meta", {})))
        if p.w_dir.shape != (2 * k,) or p.w_both.shape != (k,) or p.null_cov.shape != (2 * k, 2 * k):
            raise ValueError(f"{PARAMS}: weights do not match its {k} signals")
        if abs(sum(p.weights.values()) - 1.0) > 1e-9 or set(p.weights) != {"linear", "burst_count", "codev"}:
            raise ValueError(f"{PARAMS}: the weights of linear, burst_count and codev must sum to 1")
        unknown = set(p.signals) - set(SIGNAL_COLUMNS)
        if unknown:
            raise ValueError(f"{PARAMS}: unknown signals {sorted(unknown)}")
        return p

    def to_dict(self) -> dict[str, Any]:
        return {"signals": list(self.signals), "w_dir": self.w_dir.round(6).tolist(),
                "w_both": self.w_both.round(6).tolist(), "weights": self.weights,
                "null_cov": self.null_cov.round(6).tolist(), "meta": self.meta}


@lru_cache(maxsize=1)
def shipped() -> Params:
    """The weights shipped in analyzer/data/combine.json."""
    text = resources.files("analyzer").joinpath("data").joinpath(PARAMS).read_text(encoding="utf-8")
    return Params.from_dict(json.loads(text))


def multiplicity(params: Params | None = None) -> float:
    """What the combination pays in the tail for looking: the contrasts, over the linear part's Bonferroni weight
    (a pair's p there is about this times one contrast's one-sided normal p)."""
    params = params or shipped()
    return len(contrasts(params)) / params.weights["linear"]


def contrasts(params: Params) -> np.ndarray:
    """(3 + 2 x len(SINGLE), 2k) over x = (z's a -> b, z's b -> a): the learned a -> b, b -> a and both-ways
    contrasts, then each SINGLE signal's own z a -> b and b -> a (so a pair is never weaker than its strongest
    one of them, less what the maximum costs)."""
    k = len(params.signals)
    swap = np.r_[params.w_dir[k:], params.w_dir[:k]]
    rows = [params.w_dir, swap, np.r_[params.w_both, params.w_both]]
    for name in SINGLE:
        if name in params.signals:
            for side in (0, k):
                e = np.zeros(2 * k)
                e[side + params.signals.index(name)] = 1.0
                rows.append(e)
    return np.vstack(rows)


def features(pairs: pd.DataFrame, signals: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """x in a -> b order and in b -> a order, (pairs, 2k), the z's as the table has them (NaN: 0, no evidence)."""
    def col(name: str) -> np.ndarray:
        return np.nan_to_num(pairs[name].to_numpy(np.float64)) if name in pairs.columns else np.zeros(len(pairs))

    ab = np.column_stack([col(SIGNAL_COLUMNS[s].format(t="ab")) for s in signals]) if len(signals) else np.zeros(
        (len(pairs), 0))
    ba = np.column_stack([col(SIGNAL_COLUMNS[s].format(t="ba")) for s in signals]) if len(signals) else np.zeros(
        (len(pairs), 0))
    return np.hstack([ab, ba]), np.hstack([ba, ab])


def log_combine_directions(z_ab: np.ndarray, z_ba: np.ndarray, rho: float = 0.0) -> np.ndarray:
    """log p per pair from its two directed z's: the better of 'either side' and 'both sides', x 2. ``rho``: the
    directions' correlation under the null (``calibrate.direction_correlation``); 'both sides' is their sum over its
    standard deviation, sqrt(2 (1 + rho))."""
    z_ab, z_ba = np.asarray(z_ab, np.float64), np.asarray(z_ba, np.float64)
    log_one = norm_logsf(np.maximum(z_ab, z_ba))
    log_either = log_one + np.log(2.0 - np.exp(log_one))  # 1 - (1 - p)^2 = p (2 - p)
    log_both = norm_logsf((z_ab + z_ba) / np.sqrt(2.0 * (1.0 + rho)))
    return np.minimum(np.log(2.0) + np.minimum(log_either, log_both), 0.0)


def orthant(t: np.ndarray, rho: float) -> np.ndarray:
    """P(X > t, Y > t) of a standard bivariate normal with correlation rho (Owen's T function)."""
    rho = min(max(rho, -1 + 1e-12), 1 - 1e-12)
    return special.ndtr(-t) - 2.0 * special.owens_t(t, math.sqrt((1.0 - rho) / (1.0 + rho)))


def log_sf_max(t: np.ndarray, corr: np.ndarray, seed: int = 0) -> np.ndarray:
    """log P(max_i X_i > t) for X ~ N(0, corr), per value of t: Hunter's bound in the tail (p < TAIL_P), where the
    joints it subtracts are exact (:func:`orthant`); above it a seeded Monte Carlo of the maximum."""
    t = np.asarray(t, np.float64)
    k = len(corr)
    sf = special.ndtr(-t)
    edges = sorted(((corr[i, j], i, j) for i in range(k) for j in range(i + 1, k)), reverse=True)
    comp, joint = list(range(k)), np.zeros_like(t)
    for r, i, j in edges:  # the tree of the largest correlations (Kruskal)
        if comp[i] != comp[j]:
            old = comp[j]
            comp = [comp[i] if c == old else c for c in comp]
            joint = joint + orthant(t, float(r))
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.clip(k - joint / np.where(sf > 0, sf, 1.0), 1.0, float(k))
    out = norm_logsf(t) + np.log(factor)
    body = out > math.log(TAIL_P)
    if body.any():
        rng = np.random.default_rng(seed)
        chol = np.linalg.cholesky(corr + 1e-12 * np.eye(k))
        m = np.sort((rng.standard_normal((MONTE_CARLO, k)) @ chol.T).max(axis=1))
        surv = 1.0 - np.searchsorted(m, t[body], side="left") / MONTE_CARLO
        out[body] = np.log(np.maximum(surv, TAIL_P))
    return np.minimum(out, 0.0)


@dataclass(frozen=True)
class Room:
    """What the combination read from the room: its centre of x, covariance S, the contrasts' spread and their
    correlation, and whether the room was large enough to read its own."""

    centre: np.ndarray
    cov: np.ndarray
    sd: np.ndarray
    shift: np.ndarray
    spread: np.ndarray
    corr: np.ndarray
    own: bool

    def t(self, x: np.ndarray, W: np.ndarray) -> np.ndarray:
        """The contrasts of x, (pairs, contrasts), each a standard normal under the room's null."""
        return ((x - self.centre) @ W.T / self.sd - self.shift) / self.spread


def read_room(xa: np.ndarray, xb: np.ndarray, use: np.ndarray, params: Params, W: np.ndarray) -> Room:
    """The room's null of x and of the contrasts (see the module's docstring)."""
    n2 = xa.shape[1]
    if use.sum() < MIN_PAIRS_ROOM:
        cov = floored(params.null_cov, variance_floor(params.signals))
        sd = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", W, cov, W), 1e-12))
        return Room(np.zeros(n2), cov, sd, np.zeros(len(W)), np.ones(len(W)), _corr(W, cov), False)
    both = np.vstack([xa[use], xb[use]])
    centre = np.median(both, axis=0)
    ca, cb = xa[use] - centre, xb[use] - centre
    keep = np.ones(int(use.sum()), bool)
    cov = np.cov(np.vstack([ca, cb]), rowvar=False)
    for _ in range(2):
        sd = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", W, cov, W), 1e-12))
        top = np.max(ca @ W.T / sd, axis=1) < TRIM_Z
        if top.sum() >= MIN_PAIRS_ROOM:
            keep = top
            cov = np.cov(np.vstack([ca[keep], cb[keep]]), rowvar=False)
    cov = floored(np.atleast_2d(cov), variance_floor(params.signals))
    sd = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", W, cov, W), 1e-12))
    # each contrast read in both orders (a contrast and its mirror are one contrast: one centre and spread for both)
    one = np.vstack([ca @ W.T / sd, cb @ W.T / sd])
    shift = np.median(one, axis=0)
    spread = np.array([max(mad_normal(c), 1.0) for c in one.T])  # widened, never narrowed
    return Room(centre, cov, sd, shift, spread, _corr(W, cov), True)


def floored(cov: np.ndarray, floor: np.ndarray | None = None) -> np.ndarray:
    """The covariance with each signal's variance raised to at least ``floor`` (default 1, its theoretical null),
    its correlations kept: the room may widen a signal's null, never narrow it. A signal with no spread at all
    (no evidence in the room) is uncorrelated with the rest."""
    cov = np.array(cov, np.float64)
    sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
    live = sd > 1e-9
    corr = np.eye(len(cov))
    corr[np.ix_(live, live)] = cov[np.ix_(live, live)] / np.outer(sd[live], sd[live])
    wide = np.maximum(sd, 1.0 if floor is None else np.sqrt(floor))
    return corr * np.outer(wide, wide)


def variance_floor(signals: tuple[str, ...]) -> np.ndarray:
    """Per element of x, the least variance the room may give it: 1 (the theoretical null), but for think time,
    whose z is 0 for every pair without times (no evidence), the room's own."""
    one = np.array([0.0 if s in ROOM_VARIANCE else 1.0 for s in signals])
    return np.r_[one, one]


def _corr(W: np.ndarray, cov: np.ndarray) -> np.ndarray:
    c = W @ cov @ W.T
    d = np.sqrt(np.maximum(np.diag(c), 1e-12))
    return np.clip(c / np.outer(d, d), -1.0, 1.0)


@dataclass(frozen=True)
class Combined:
    """Per pair: the contrasts' t (:func:`contrasts`' rows: a -> b, b -> a, both, then the single signals), the
    linear part's log p, the pair's log p, which part and signal carry it; and the room's reading."""

    t: np.ndarray
    logp_linear: np.ndarray
    logp: np.ndarray
    main_signal: np.ndarray
    room: Room


def combine(pairs: pd.DataFrame, min_hands: int, params: Params | None = None,
            without: tuple[str, ...] = ()) -> Combined:
    """The combination over a calibrated pair table (``codev_logp``, ``burst_{ab,ba}_z_count`` read as they are).
    ``without``: signals whose weights are set to 0 (the think-time rule reads the play signals alone)."""
    params = params or shipped()
    W = contrasts(params)
    if without:
        k = len(params.signals)
        off = [i for i, s in enumerate(params.signals) if s in without]
        W = W.copy()
        W[:, off] = 0.0
        W[:, [k + i for i in off]] = 0.0
    n = len(pairs)
    xa, xb = features(pairs, params.signals)
    use = pairs["hands_together"].to_numpy() >= min_hands if n else np.zeros(0, bool)
    room = read_room(xa, xb, use, params, W)
    t = room.t(xa, W) if n else np.zeros((0, len(W)))
    live = room.sd > 1e-6
    best = np.max(np.where(live, t, -np.inf), axis=1) if n and live.any() else np.full(n, -np.inf)
    corr = room.corr[np.ix_(live, live)] if live.any() else np.ones((1, 1))
    logp_lin = log_sf_max(np.where(np.isfinite(best), best, -40.0), corr) if n else np.zeros(0)
    logp_lin = np.minimum(logp_lin, LOG_P_MAX) if live.any() else np.zeros(n)

    def col(name: str) -> np.ndarray:
        return np.nan_to_num(pairs[name].to_numpy(np.float64)) if name in pairs.columns else np.zeros(n)

    count = (log_combine_directions(col("burst_ab_z_count"), col("burst_ba_z_count")) if "burst_ab_z_count" in
             pairs.columns else np.zeros(n))
    codev = col("codev_logp") if "codev_logp" in pairs.columns else np.zeros(n)
    w = params.weights
    parts = np.vstack([logp_lin - math.log(w["linear"]), count - math.log(w["burst_count"]),
                       codev - math.log(w["codev"])]) if n else np.zeros((3, 0))
    logp = np.minimum(parts.min(axis=0), 0.0) if n else np.zeros(0)
    # the signal that carries the pair: the count part's or codev's name when one of them wins, else the signal with
    # the largest term in the winning contrast
    k = len(params.signals)
    which = np.argmax(np.where(live, t, -np.inf), axis=1) if n else np.zeros(0, np.int64)
    xc = xa - room.centre
    terms = W[which] * xc if n else np.zeros((0, 2 * k))
    per_signal = terms[:, :k] + terms[:, k:]
    lead = np.array(params.signals, dtype=object)[np.argmax(per_signal, axis=1)] if n and k else np.full(n, "burst")
    winner = parts.argmin(axis=0) if n else np.zeros(0, np.int64)
    main = np.where(winner == 1, "burst", np.where(winner == 2, "codev", lead))
    return Combined(t, logp_lin, logp, main.astype(object), room)


def per_hand_weights(params: Params | None = None) -> pd.DataFrame:
    """The contrasts' weights per signal and direction: a pair's contrast is the sum over its hands of
    sum_k w_k s_k,h / se_k (s_k,h the signal's sum in hand h, se_k the standard error of its sum over the pair's
    hands), with null mean 0 and null variance w'Sw over the pair's hands (S: :class:`Room` ``cov``)."""
    params = params or shipped()
    W = contrasts(params)
    cols = [f"{s}_ab" for s in params.signals] + [f"{s}_ba" for s in params.signals]
    return pd.DataFrame(W, index=contrast_names(params), columns=cols)


def contrast_names(params: Params | None = None) -> list[str]:
    """The contrasts' names, in :func:`contrasts`' order."""
    params = params or shipped()
    return ["a_to_b", "b_to_a", "both"] + [f"{s}_{t}" for s in SINGLE if s in params.signals for t in ("ab", "ba")]
