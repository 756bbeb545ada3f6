"""The per-player choice model: how closely a player's choices follow the options' values, fitted by maximum likelihood.

After Regan's intrinsic performance ratings for chess. The evaluator gives every option of a decision
its loss against the best option, in units of the decision's own spread (``loss`` in the decision
rows, :func:`analyzer.analysis.decisions.decision_scale`), and the reference policy its own
judgement (``loss_ref``: the strategy features' preference, normalised the same way).

- The one-parameter model (:func:`fit_skill`): a player of sensitivity ``s`` picks option k with
  probability ``exp(-s * loss_k) / sum_j exp(-s * loss_j)``; 0 is a uniformly random player. Its 95%
  interval comes from the profile likelihood (1.92 below the maximum). The per-player signal reads it.
- The rating (:func:`rate`, the headline ``skill``): each player's choices are fitted by a
  two-direction model, probability ∝ ``exp(-(a * loss_k + b * loss_ref_k))`` (a conditional logit,
  convex in ``a, b >= 0``): a player may follow the values, the policy's preferences, or a mix, as
  sharply as their choices show. That fitted policy's expected loss over a fixed reference set of
  decisions (:func:`reference`, shipped package data) is then read back as the sensitivity of the
  one-parameter model that loses as much there: the "intrinsic performance" on one common set of
  positions, in the one-parameter model's units (0 = random, larger = better). The reference set
  removes the luck of which decisions a player met, the second direction separates players whose
  judgement is a heuristic's from one another (the evaluator alone cannot: it disagrees with any good
  heuristic in about half of the decisions), and a player who follows the values (a search expert)
  is rated by the values. Interval: delta method on the fit's covariance (the inverse observed
  information), mapped through the same reading.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.optimize import brentq, minimize_scalar

from analyzer.analysis.dist import chi2_ppf
from analyzer.kernels.rollout import MAX_OPTIONS

if TYPE_CHECKING:
    from analyzer.analysis.options import OptionArrays

SKILL_MIN = 1e-3
SKILL_MAX = 50.0  # per unit of normalised loss; beyond this the model is "always the best option"
Z95 = 1.959964
PROFILE_DROP = chi2_ppf(0.95, 1) / 2.0  # 1.92: the 95% profile-likelihood interval
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
    per-option loss (``loss_ref``: the reference policy's).
    """
    key = key or ("loss_dd" if dd else "loss")
    losses, chosen = loss_matrices(frame, (key,))
    return losses[key], chosen


def loss_matrices(frame: pd.DataFrame, keys: tuple[str, ...] = ("loss", "loss_ref", "loss_dd"),
                  parsed: OptionArrays | None = None) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """:func:`loss_matrix` for several per-option losses at once, each row's options parsed once (the
    parse is most of the player table's cost): ``({key: (rows, 13) losses}, chosen index)``. ``parsed``: the
    rows' options already parsed with (at least) ``keys`` (``options.option_arrays``)."""
    from analyzer.analysis.options import option_arrays

    n = len(frame)
    out = {k: np.full((n, MAX_OPTIONS), np.inf) for k in keys}
    cards = frame["chosen"].tolist()
    # the options of every row read at once (options.option_arrays: the typed column's buffers) and placed by
    # array indexing
    oa = parsed if parsed is not None else option_arrays(frame["options"], keys)
    rows, col = oa.row, np.arange(len(oa.card)) - np.repeat(oa.start, oa.count)
    for key, m in out.items():
        m[rows, col] = oa.values[key]
    none = oa.count == 0  # no options recorded: one certain choice, no information about skill
    for m in out.values():
        m[none, 0] = 0.0
    chosen = np.maximum(oa.index_of(cards), 0)  # not among the options: the first
    return out, chosen


def probabilities(losses: np.ndarray, skill: float | np.ndarray) -> np.ndarray:
    """Choice probabilities of every option (rows of ``losses``; inf padding gets 0)."""
    s = np.asarray(skill, float).reshape(-1, 1) if np.ndim(skill) else skill
    fin = np.isfinite(losses)
    return _policy(fin, np.where(fin, losses, 0.0), 0.0, s, 0.0)[0]


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


# --- the rating: a two-direction choice model read on a common reference set --------------------------

REFERENCE_FILE = "skill_reference.npz"
#: Points of the tabulated one-parameter curve (log-spaced sensitivities) the rating is read back on.
_GRID = 400
#: Sensitivities of the curve's grid evaluated at once (a block is _CURVE_BLOCK x the reference's options).
_CURVE_BLOCK = 50


@dataclass(frozen=True, slots=True, eq=False)  # hashed by identity: the curve cache keys on it
class Reference:
    """A fixed set of decisions: each option's loss (``loss``, inf padding) and the reference
    policy's loss (``ref``, 0 where absent), made by ``benchmarks/make_skill_reference.py``."""

    loss: np.ndarray
    ref: np.ndarray
    meta: str = ""


@dataclass(frozen=True, slots=True)
class Choice:
    """A player's fitted two-direction model: sensitivity to the values (``a``) and to the reference
    policy's preferences (``b``), their covariance (inverse observed information) and the decisions."""

    a: float
    b: float
    cov: np.ndarray
    decisions: int


def padded(loss: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The choice model's inputs of padded decision rows: the offered options (finite losses), the losses and the
    reference losses with 0 where padded or missing (C-contiguous, as the compiled sums of ``kernels.choice`` take)."""
    fin = np.ascontiguousarray(np.isfinite(loss))
    x = np.ascontiguousarray(np.where(fin, loss, 0.0))
    return fin, x, np.ascontiguousarray(np.where(fin, np.nan_to_num(ref, nan=0.0, posinf=0.0, neginf=0.0), 0.0))


def _policy(fin: np.ndarray, x: np.ndarray, y: np.ndarray | float, a: float | np.ndarray, b: float | np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """Choice probabilities of the model (a, b) and each row's log normaliser (max-shifted); ``a``, ``b``
    scalars or one per row (shape (n, 1)). The one softmax behind every choice probability here."""
    z = np.where(fin, -(a * x + b * y), -np.inf)
    m = z.max(axis=1)
    e = np.exp(z - m[:, None])
    s = e.sum(axis=1)
    return e / s[:, None], m + np.log(s)


def fit_choice(losses: np.ndarray, ref_losses: np.ndarray, chosen: np.ndarray,
               start: tuple[float, float] | None = None) -> Choice:
    """Maximum-likelihood (a, b) >= 0 of P(k) ∝ exp(-(a loss_k + b ref_k)) for one player's decisions.

    The negative log-likelihood is convex in (a, b) (a conditional logit): a projected Newton method
    with the exact Hessian (the observed information) and step halving finds it in a few steps, from ``start``
    when given (a fit of similar decisions: fewer steps to the same optimum), else from (0.5, 0.5)."""
    n = len(losses)
    if n == 0:
        return Choice(math.nan, math.nan, np.full((2, 2), math.nan), 0)
    fin, x, y = padded(losses, ref_losses)
    ar = np.arange(n)
    cx, cy = float(x[ar, chosen].sum()), float(y[ar, chosen].sum())
    has_ref = bool(np.any(y != 0))  # rows without the policy's losses: b cannot be told, keep it 0
    hi = np.array([SKILL_MAX, SKILL_MAX if has_ref else 0.0])

    # the model's sums at the point last evaluated (one compiled pass over the options: kernels.choice): a step
    # taken is evaluated (``value``), then differentiated at the same point
    last: dict[tuple[float, float], tuple[float, float, float, float, float, float]] = {}
    fit_terms = _fit_terms()

    def terms(t: np.ndarray) -> tuple[float, float, float, float, float, float]:
        key = (float(t[0]), float(t[1]))
        if key not in last:
            last.clear()
            last[key] = fit_terms(x, y, fin, *key)
        return last[key]

    def value(t: np.ndarray) -> float:
        return float(t[0] * cx + t[1] * cy + terms(t)[0])

    def derivatives(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, ex, ey, hxx, hxy, hyy = terms(t)
        # the observed information: the sum over decisions of the covariance of (loss, ref) under the model
        return np.array([cx - ex, cy - ey]), np.array([[hxx, hxy], [hxy, hyy]])

    t = np.array([0.5, 0.5 if has_ref else 0.0])
    if start is not None and all(math.isfinite(v) for v in start):
        t = np.clip(np.array(start, np.float64), 0.0, hi)
    f = value(t)
    for _ in range(60):
        g, h = derivatives(t)
        # coordinates held at a bound by the gradient stay there
        free = ~(((t <= 0.0) & (g > 0)) | ((t >= hi) & (g < 0)))
        free &= hi > 0
        if not free.any() or float(np.abs(g[free]).max()) < 1e-7 * n:
            break
        step = np.zeros(2)
        hf = h[np.ix_(free, free)] + 1e-9 * np.eye(int(free.sum()))
        step[free] = np.linalg.solve(hf, g[free])
        if float(g @ step) <= 0:  # not a descent direction (numerically flat): fall back to the gradient
            step = np.where(free, g, 0.0)
        k = 1.0
        while k > 1e-10:
            new = np.clip(t - k * step, 0.0, hi)
            fn = value(new)
            if fn <= f:
                break
            k *= 0.5
        else:
            break
        done = float(np.abs(new - t).max()) < 1e-9
        t, f = new, fn
        if done:
            break
    _, h = derivatives(t)
    if h[0, 0] <= 1e-9 or (has_ref and h[1, 1] <= 1e-9):  # a direction the decisions say nothing about
        cov = np.full((2, 2), math.inf)
    elif not has_ref:
        cov = np.zeros((2, 2))
        cov[0, 0] = 1.0 / h[0, 0]
    else:
        cov = np.linalg.pinv(h)
    return Choice(float(t[0]), float(t[1]), cov, n)


def _fit_terms() -> Callable[..., tuple[float, float, float, float, float, float]]:
    """The compiled sums of the model at a point (``kernels.choice.fit_terms``), loaded once a process."""
    from analyzer.kernels import choice

    choice.ready("fit_terms")
    return choice.fit_terms  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1)
def _shipped_reference() -> Reference:
    with resources.as_file(resources.files("analyzer") / "data" / REFERENCE_FILE) as p:
        return load_reference(p)


def reference(path: str | Path | None = None) -> Reference:
    """The reference set of decisions the rating is read on (default: the one shipped in the package)."""
    return _shipped_reference() if path is None else load_reference(path)


def load_reference(path: str | Path) -> Reference:
    """A reference set from an ``.npz`` (``loss``, ``ref`` as (n, 13) arrays, inf padding; ``meta``)."""
    with np.load(path, allow_pickle=False) as z:
        loss, ref = np.asarray(z["loss"], float), np.asarray(z["ref"], float)
        meta = str(z["meta"]) if "meta" in z.files else ""
    if loss.ndim != 2 or loss.shape != ref.shape or len(loss) == 0:
        raise ValueError(f"{path}: a skill reference needs two (n, {MAX_OPTIONS}) arrays 'loss' and 'ref'")
    return Reference(loss, ref, meta)


def save_reference(path: str | Path, ref: Reference) -> None:
    """Write a reference set as plain arrays (np.savez, no pickle), whole or not at all."""
    path = Path(path)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, loss=ref.loss.astype(np.float32), ref=ref.ref.astype(np.float32),
                        meta=np.array(ref.meta))
    tmp.replace(path)


def expected_loss(refset: Reference, a: float, b: float, weight: float = 0.0) -> tuple[float, np.ndarray]:
    """Mean expected loss over the reference decisions of the model (a, b), on the yardstick
    (1 - weight) x loss + weight x ref, and its gradient in (a, b)."""
    fin, x, y, yard = _yardstick(refset, weight)
    p, _ = _policy(fin, x, y, a, b)
    e = (p * yard).sum(1)
    # d E_p[yard] / d a = -Cov_p(yard, loss); / d b = -Cov_p(yard, ref)
    g = np.array([-((p * yard * x).sum(1) - e * (p * x).sum(1)).mean(), -((p * yard * y).sum(1) - e * (p * y).sum(1)).mean()])
    return float(e.mean()), g


@functools.lru_cache(maxsize=8)
def _yardstick(refset: Reference, weight: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reference set's padded losses and its yardstick, made once (every player's rating reads them)."""
    fin, x, y = padded(refset.loss, refset.ref)
    return fin, x, y, (1.0 - weight) * x + weight * y


@functools.lru_cache(maxsize=8)
def _curve(refset: Reference, weight: float) -> tuple[np.ndarray, np.ndarray]:
    """The one-parameter model's mean expected loss on the reference set (on the yardstick), on a
    log grid of sensitivities: decreasing in the sensitivity.

    The model at sensitivity s is a softmax of -s x yardstick over each decision's options; the grid is
    evaluated a block of sensitivities at a time over the options alone (no padding: ~4 of 13 columns)."""
    fin, x, y = padded(refset.loss, refset.ref)
    yard = (1.0 - weight) * x + weight * y
    logs = np.linspace(math.log(SKILL_MIN), math.log(SKILL_MAX), _GRID)
    counts = fin.sum(1)
    if not counts.all():  # a decision without options: the softmax is undefined (nan), as every row's would be
        return logs, np.full(_GRID, math.nan)
    # the options row by row; shifted by their row's least (the softmax's max-shift): every exponent <= 0
    least = np.where(fin, yard, np.inf).min(1)
    v = yard[fin]
    d = v - np.repeat(least, counts)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    e = np.empty(_GRID)
    for lo in range(0, _GRID, _CURVE_BLOCK):
        s = np.exp(logs[lo:lo + _CURVE_BLOCK])
        w = np.exp(-s[:, None] * d[None, :])
        e[lo:lo + len(s)] = (np.add.reduceat(w * v, starts, axis=1) / np.add.reduceat(w, starts, axis=1)).mean(1)
    return logs, np.minimum.accumulate(e)  # monotone against float noise at the flat ends


def equivalent_skill(refset: Reference, target: float, weight: float = 0.0) -> float:
    """The sensitivity of the one-parameter model whose expected loss on the reference set is ``target``."""
    logs, e = _curve(refset, weight)
    if not math.isfinite(target):
        return math.nan
    if target >= e[0]:
        return SKILL_MIN
    if target <= e[-1]:
        return SKILL_MAX
    # e decreases with log s: interpolate on the reversed arrays
    return float(math.exp(np.interp(target, e[::-1], logs[::-1])))


def rate(losses: np.ndarray, ref_losses: np.ndarray, chosen: np.ndarray, refset: Reference | None = None,
         weight: float = 0.0) -> tuple[Fit, Choice]:
    """The headline rating of one player's decisions with its 95% interval, and the fit behind it."""
    refset = refset or reference()
    c = fit_choice(losses, ref_losses, chosen)
    if c.decisions == 0:
        return Fit(math.nan, math.nan, math.nan, 0), c
    e, g = expected_loss(refset, c.a, c.b, weight)
    var = float(g @ np.where(np.isfinite(c.cov), c.cov, 0.0) @ g) if np.isfinite(c.cov).all() else math.inf
    sd = math.sqrt(max(var, 0.0))
    s = equivalent_skill(refset, e, weight)
    if not math.isfinite(sd):  # no information on the sensitivity (every option always equal)
        return Fit(s, SKILL_MIN, SKILL_MAX, c.decisions), c
    lo = equivalent_skill(refset, e + Z95 * sd, weight)
    hi = equivalent_skill(refset, e - Z95 * sd, weight)
    return Fit(s, min(lo, s), max(hi, s), c.decisions), c


def rate_by(losses: np.ndarray, ref_losses: np.ndarray, chosen: np.ndarray, groups: np.ndarray,
            refset: Reference | None = None, weight: float = 0.0) -> dict[str, tuple[Fit, Choice]]:
    """One rating (and the fit behind it) per value of ``groups`` (e.g. the player column)."""
    refset = refset or reference()
    order = np.argsort(groups, kind="stable")
    keys, starts = np.unique(groups[order], return_index=True)
    bounds = list(starts[1:]) + [len(order)]
    return {str(k): rate(losses[order[a:b]], ref_losses[order[a:b]], chosen[order[a:b]], refset, weight)
            for k, a, b in zip(keys, starts, bounds)}


def choice_probabilities(losses: np.ndarray, ref_losses: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each option's probability under the two-direction model (per-row a, b; inf padding gets 0)."""
    fin, x, y = padded(losses, ref_losses)
    return _policy(fin, x, y, np.asarray(a, float)[:, None], np.asarray(b, float)[:, None])[0]
