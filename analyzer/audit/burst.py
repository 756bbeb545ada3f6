"""Occasional collusion (``burst``): a directed pair's few extreme favour hands, against the actor's others.

A partner-aware actor in a minority of hands shifts the mean favour little but leaves a few hands far
out; the statistics here read the per-hand favour (from the centred links of ``signals``) and ask
whether the pair holds more of the actor's extreme hands than its hands with everyone else would give.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd
from scipy import special

from analyzer.analysis.dist import NORM_PDF0, betabinom_pmf, chi2_ppf, norm_isf, norm_sf, rank_average
from analyzer.analysis.skill import choice_probabilities, loss_matrices, padded

if TYPE_CHECKING:
    from analyzer.analysis.options import OptionArrays

#: Occasional collusion (``burst``): a directed pair's hands are counted above these upper quantiles of the
#: actor's hands with everyone else (each count an exact beta-binomial tail).
BURST_LEVELS = (0.2, 0.1, 0.05, 0.02, 0.01)
#: The statistic's two looks, each paid for (Bonferroni): the mean of the pair's normal scores among the actor's
#: hands at the same seat offset (a stratified permutation z: many hands a little favoured) and the best count
#: (a few hands far out; its own BURST_LEVELS looks are paid for inside it).
BURST_LOOKS = 2
#: A seat-offset stratum is read on its own only when the actor had at least this many hands in it without the
#: other player (else the pair's hands there are ranked among all the actor's: see ``_mean_look``).
MIN_STRATUM_OTHERS = 30
#: Fewer (actor, seat offset) strata than this in a room and the spread of personal seat habits is not estimated
#: (:func:`habit_variance`; taken as 0).
MIN_HABIT_STRATA = 12
#: A directed pair whose burst z exceeds this in the first reading is the actor's partner in the second: the actor's
#: other pairs are read on his hands without it (:func:`_burst`).
BURST_HOT_Z = 4.0
#: The burst statistic's second reading also reads an actor's pairs on all his hands, the presence of his other
#: standing-out partners a stratum of its own, the mean look the better of that and the reading without their hands
#: (x 2): see :func:`_burst`, :func:`_by_presence`, :func:`_better_reading`. Off: the reading without their hands
#: alone.
BURST_STRATA = True
#: Added to a link's seat offset (1-3) in the hands where one of the actor's other standing-out partners sat: the
#: strata of :func:`_by_presence` (offset x presence).
PRESENCE_STRATUM = 4
#: The per-hand favour the burst statistic reads (the exact immediate one: least noise per hand), each decision
#: weighted by how far the actor's own choice model could not foresee the choice (:func:`choice_weights`).
BURST_SIGNAL = "imm_marginal"
#: The values each of the actor's two choice-model sensitivities (a on the options' losses, b on the reference
#: policy's, ``analysis.skill``) is read at: a grid, so that a room read in chunks (``audit.stream``) and read whole
#: fit the same model from per-player sums of log-likelihoods.
CHOICE_GRID = np.array([0.0, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 15.0, 50.0])
#: Whether ``burst`` weighs each decision by the actor's choice model (:func:`choice_weights`).
CHOICE_WEIGHTS = True
#: Each weight is mixed with 1, w' = f + (1 - f) w (:func:`weights_of`): the fitted model is a guess, so no decision
#: weighs more than (2 - f) / f = 7 times another. Unmixed (f = 0), a near-deterministic player's hand scores rest on
#: the few of his choices his model cannot explain, where a misfit of the model meets whatever a co-player's style
#: makes those choices give (enough to flag an honest pair of the shipped demo room).
CHOICE_WEIGHT_FLOOR = 0.25
#: The choice model is fitted on one decision in FIT_EVERY, chosen by a fixed hash of (hand_id, action): the same
#: decisions whichever way the room is chunked (the fit stays a sum over chunks), at 1 / FIT_EVERY of the cost; two
#: parameters per player need far fewer decisions than a player has.
FIT_EVERY = 4


#: The options' keys the choice weights read (``skill.loss_matrices``).
CHOICE_KEYS = ("loss", "loss_ref")


def choice_inputs(df: pd.DataFrame, parsed: OptionArrays | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per decision row: every option's normalised loss and reference-policy loss ((rows, 13), inf padding)
    and the chosen option's index (``skill.loss_matrices``); None when the rows carry no options. ``parsed``: the
    rows' options already parsed with CHOICE_KEYS."""
    if "options" not in df.columns or not len(df):
        return None
    mats, chosen = loss_matrices(df, CHOICE_KEYS, parsed)
    return mats["loss"], mats["loss_ref"], chosen


def choice_loglik(loss: np.ndarray, ref: np.ndarray, chosen: np.ndarray, groups: np.ndarray, n_groups: int
                  ) -> np.ndarray:
    """Per group (the acting player) the log-likelihood of its choices under P(k) ∝ exp(-(a loss_k + b ref_k))
    at every (a, b) of CHOICE_GRID x CHOICE_GRID (columns a-major): sums, so chunks add up.

    One compiled pass over the rows (``kernels.choice.grid_loglik``): each decision's exponentials are its n offered
    options' (the rows are padded to 13, most decisions have 2-4), not 13; a decision with one option adds 0 (its
    choice is certain)."""
    from analyzer.kernels import choice

    g = len(CHOICE_GRID)
    out = np.zeros((n_groups, g * g))
    fin, x, y = padded(loss, ref)
    chosen, groups = np.asarray(chosen, np.int64), np.asarray(groups, np.int64)
    # the kernel indexes without bounds checks: an index out of range is an error here, as numpy's would be
    for name, v, top in (("chosen", chosen, x.shape[1]), ("groups", groups, n_groups)):
        if len(v) != len(x) or (len(v) and (int(v.min()) < 0 or int(v.max()) >= top)):
            raise IndexError(f"choice_loglik: {name} out of range for {len(x)} rows")
    choice.ready("grid_loglik")
    choice.grid_loglik(x, y, fin, chosen, groups, CHOICE_GRID.astype(np.float64), out)
    return out


def grid_fit(loglik: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group (rows of :func:`choice_loglik`'s sums) the grid's most likely (a, b). Exact ties (a player
    whose rows carry no reference losses: b changes nothing) go to the smallest b."""
    best = np.argmax(loglik, axis=1)
    g = len(CHOICE_GRID)
    return CHOICE_GRID[best // g], CHOICE_GRID[best % g]


def weights_of(loss: np.ndarray, ref: np.ndarray, chosen: np.ndarray, a: np.ndarray, b: np.ndarray,
               floor: float | None = None) -> np.ndarray:
    """Per decision: (1 - P(chosen)) n / (n - 1) under the actor's fitted choice model (per-row a, b), 1 for a
    decision with one option (nothing to weigh), mixed with 1 by ``floor`` (default CHOICE_WEIGHT_FLOOR).

    Why: the locally most powerful test of "choices also pull towards the partner's true-deal gain g" (the
    alternative P(k) ∝ exp(-(a loss_k + b ref_k) + t g_k), its score at t = 0) sums g_chosen - E_P[g]. With two
    options that is exactly 2 (1 - P(chosen)) times the rows' chosen-minus-average g; with more, it is so when
    the model spreads the rest evenly. A choice the actor's own model was sure of says nothing about the partner
    (an honest player would have made it too), so its share of the deal's luck is left out."""
    f = CHOICE_WEIGHT_FLOOR if floor is None else floor
    n = np.isfinite(loss).sum(axis=1)
    if not len(n):
        return np.ones(0)
    p = choice_probabilities(loss, ref, a, b)[np.arange(len(n)), chosen]
    return f + (1.0 - f) * np.where(n > 1, (1.0 - p) * n / np.maximum(n - 1, 1), 1.0)


def fit_rows(df: pd.DataFrame) -> np.ndarray:
    """The decision rows the choice model is fitted on: one in FIT_EVERY, by a fixed hash of (hand_id, action)
    (pandas' seeded row hash), so a row's share in the fit does not depend on the chunk it arrives in."""
    if FIT_EVERY <= 1 or "action" not in df.columns:
        return np.ones(len(df), bool)
    h = pd.util.hash_pandas_object(df[["hand_id", "action"]].astype({"hand_id": str, "action": np.int64}), index=False).to_numpy()
    return np.asarray(h % np.uint64(FIT_EVERY) == 0, bool)


def choice_weights(df: pd.DataFrame) -> np.ndarray:
    """:func:`weights_of` for every decision row of a whole room, each player's model fitted on its own rows
    (ones when the rows carry no options)."""
    inputs = choice_inputs(df) if CHOICE_WEIGHTS else None
    if inputs is None:
        return np.ones(len(df))
    loss, ref, chosen = inputs
    codes, players = pd.factorize(df["player"].astype(str))
    m = fit_rows(df)
    a, b = grid_fit(choice_loglik(loss[m], ref[m], chosen[m], codes[m], len(players)))
    return weights_of(loss, ref, chosen, a[codes], b[codes])


def weighted_links(lk: pd.DataFrame, weights: np.ndarray) -> pd.DataFrame:
    """The links' burst columns times their decision's weight (``weights`` per decision row, ``lk["row"]``)."""
    w = np.asarray(weights, np.float64)[lk["row"].to_numpy()]
    out = lk[[c for c in ("actor", "other", "hand_id", "offset") if c in lk.columns]].copy()
    for col in (BURST_SIGNAL, f"{BURST_SIGNAL}_habit_free"):
        if col in lk.columns:
            out[col] = lk[col].to_numpy(np.float64) * w
    return out


def hand_scores(lk: pd.DataFrame, col: str = BURST_SIGNAL) -> pd.DataFrame:
    """Per directed pair and hand: the hand's sum of ``col`` in units of the actor's spread per hand
    (the root mean square of the actor's per-hand sums over all seats: its null spread).
    Columns: actor, other, hand_id, x (and offset, when the links carry it).
    """
    g = lk.groupby(["actor", "other", "hand_id"], sort=False)
    per_hand = g[col].sum()
    rms = np.sqrt((per_hand ** 2).groupby(level="actor").mean())
    scale = rms.reindex(per_hand.index.get_level_values("actor")).to_numpy()
    x = np.where(scale > 0, per_hand.to_numpy() / np.where(scale > 0, scale, 1.0), 0.0)
    out = per_hand.index.to_frame(index=False).assign(x=x)
    if "offset" in lk.columns:  # one seat offset per (actor, other, hand): the seats stay put within a hand
        out["offset"] = g["offset"].first().to_numpy(np.int64)
    return out


def betabinom_logsf(k: np.ndarray, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log P(X > k) for X ~ BetaBinomial(n, a, b), per entry of k, a, b: the log of the summed pmf, exact in
    log space however far out (scipy's sf is 1 - cdf there, which loses every digit below 1e-16)."""
    k, a, b = (np.atleast_1d(np.asarray(v, np.float64)) for v in (k, a, b))
    ks = np.arange(n + 1, dtype=np.float64)
    log_pmf = (special.gammaln(n + 1) - special.gammaln(ks + 1) - special.gammaln(n - ks + 1)
               + special.betaln(ks + a[:, None], n - ks + b[:, None]) - special.betaln(a, b)[:, None])
    tail = np.where(ks[None, :] > k[:, None], log_pmf, -np.inf)
    return np.minimum(_logsumexp_rows(tail), 0.0)


def _logsumexp_rows(t: np.ndarray) -> np.ndarray:
    """``scipy.special.logsumexp(t, axis=1)`` for real rows, without its per-call overhead (a third of the burst
    statistic's time, called once a pair): the largest terms are taken out of the sum for precision, as scipy
    does (log1p of the rest over them); a row of -inf gives -inf."""
    top = t.max(axis=1, keepdims=True)
    at_top = t == top
    count = at_top.sum(axis=1, keepdims=True).astype(np.float64)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(invalid="ignore"):
        rest = np.exp(np.where(at_top, -np.inf, t) - shift).sum(axis=1, keepdims=True)
        out = np.log1p(np.where(rest == 0, rest, rest / count)) + np.log(count) + top
    return np.asarray(out[:, 0], np.float64)


def _normal_scores(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of ``v`` as N(0, 1) quantiles, and as shares in (0, 1) (average ranks for ties)."""
    q = (rank_average(v) - 0.5) / len(v)
    return np.asarray(special.ndtri(q), np.float64), q  # stats.norm.ppf's own function, without its checks


def habit_variance(scores: pd.DataFrame) -> float:
    """The room's spread of personal seat habits, tau^2, in the mean look's units (normal scores per hand).

    Per actor and seat offset k, the mean normal score of the actor's hands at k (ranked among all his hands)
    is his habit towards k plus sampling noise of known variance (the permutation variance of a mean of N_k of T
    scores); tau^2 is the variance of the habits beyond that noise, read robustly: the tau^2 at which the median of
    m_k^2 / (tau^2 + var_k) is the chi-square(1) median (colluders' strata, a minority, cannot carry it). 0 without
    offsets or with fewer than MIN_HABIT_STRATA strata.

    Why: where an actor had (almost) no hands without the other at that offset (a table that never re-formed), the
    mean look cannot tell favour for the other from a habit towards the seat, and reads the pair's hands there
    against all the actor's hands; taking the habit as none there reads such pairs as favour (an honest pair of 49
    hands, all the actor's hands, would be marked for review). A habit nobody could learn counts as one of the
    room's typical size (:func:`_mean_look`)."""
    return habit_variance_of(*habit_terms(scores))


def habit_terms(scores: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """:func:`habit_variance`'s terms: per actor and seat offset k (not all of the actor's hands), the mean normal
    score m_k of the actor's hands at k and its null variance var_k. Each actor's terms read his own scores only, so
    the terms of parts of the room (whole actors) are the room's, in another order (:func:`habit_variance_of` reads
    them through a median: the same variance, bit for bit)."""
    if scores.empty or "offset" not in scores.columns:
        return np.zeros(0), np.zeros(0)
    ms: list[float] = []
    vs: list[float] = []
    for _actor, g in scores.groupby("actor", sort=False):
        x = np.round(g["x"].to_numpy(np.float64), 9)
        t = len(x)
        if t < 2:
            continue
        z, _ = _normal_scores(x)
        v = float(z.var())
        off = g["offset"].to_numpy(np.int64)
        for k in np.unique(off):
            m = off == k
            n = int(m.sum())
            if n == t or v <= 0:
                continue
            ms.append(float(z[m].mean()))
            vs.append(v * (t - n) / ((t - 1) * n))
    return np.asarray(ms, np.float64), np.asarray(vs, np.float64)


def habit_variance_of(ms: np.ndarray, vs: np.ndarray) -> float:
    """:func:`habit_variance` from its terms (:func:`habit_terms`, of the whole room or its parts concatenated)."""
    if len(ms) < MIN_HABIT_STRATA:
        return 0.0
    m2, v0 = np.square(ms), np.asarray(vs, np.float64)
    target = chi2_ppf(0.5, 1)

    def excess(tau2: float) -> float:
        return float(np.median(m2 / (tau2 + v0))) - target

    if excess(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, float(m2.max())
    for _ in range(60):  # bisection: the median falls as tau^2 grows
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    return 0.5 * (lo + hi)


def _mean_look(x: np.ndarray, other: np.ndarray, strata: np.ndarray, habit_var: float = 0.0
               ) -> tuple[dict[Any, float], dict[Any, float], dict[Any, float], dict[Any, int]]:
    """Per other seat: the permutation z of the sum of the pair's normal scores, stratified (each hand ranked
    among the actor's hands of its stratum, the seat offset; exact finite-population variance per stratum),
    and the pair's mean percentile among those hands with its null standard error; and per other seat the number
    of its hands in weak strata (below).

    A stratum where the actor had fewer than MIN_STRATUM_OTHERS hands *without* this other (tables that seldom
    re-form: the partner always in the same seat) cannot tell a seat habit from favour; the pair's hands there
    are ranked among all the actor's hands of its pool instead (``strata // PRESENCE_STRATUM``: all his hands for
    seat offsets; with or without his other standing-out partners at the table in :func:`_by_presence`'s strata,
    whose hands beside a colluder's partner would otherwise make an honest table that never re-forms read as
    favoured), and a habit nobody could learn counts as one of the room's typical size: ``habit_var``
    (:func:`habit_variance`) times the square of those hands is added to the null variance of the sum (an unknown
    shift of every one of those hands' scores)."""
    num: dict[Any, float] = {}
    var: dict[Any, float] = {}
    pct: dict[Any, float] = {}
    pvar: dict[Any, float] = {}
    codes, inv = np.unique(other, return_inverse=True)
    inv = inv.ravel()
    k = len(codes)
    total = len(x)

    scores = _normal_scores
    # each hand's scores among the hands of its pool (the weak strata's reading), and the pools' sizes and spreads
    pool_ids, pool = np.unique(strata // PRESENCE_STRATUM, return_inverse=True)
    pool = pool.ravel()
    z_all, q_all = np.empty(total), np.empty(total)
    size, z_var_all, q_var_all = np.zeros(len(pool_ids)), np.zeros(len(pool_ids)), np.zeros(len(pool_ids))
    for p in range(len(pool_ids)):
        m = pool == p
        z_all[m], q_all[m] = scores(x[m])
        size[p], z_var_all[p], q_var_all[p] = m.sum(), z_all[m].var(), q_all[m].var()
        q_all[m] -= q_all[m].mean()
    # the pooled reading, per other: sums over its hands in weak strata (per pool: filled below) and its variance
    weak_n, weak_z, weak_q = np.zeros((k, len(pool_ids))), np.zeros(k), np.zeros(k)
    for s_ in np.unique(strata):
        m = strata == s_
        t = int(m.sum())
        n = np.bincount(inv[m], minlength=k).astype(np.float64)
        z, q = scores(x[m])
        z_var, q_var = z.var(), q.var()
        sz, sq = np.bincount(inv[m], z, k), np.bincount(inv[m], q - q.mean(), k)
        az, aq = np.bincount(inv[m], z_all[m], k), np.bincount(inv[m], q_all[m], k)
        fpc = (t - n) / max(t - 1, 1)
        strong = (t - n) >= MIN_STRATUM_OTHERS
        p = pool[np.flatnonzero(m)[0]]  # a stratum lies in one pool
        for j in np.flatnonzero(n > 0):
            o = codes[j]
            if strong[j]:
                num[o] = num.get(o, 0.0) + float(sz[j])
                var[o] = var.get(o, 0.0) + float(n[j] * z_var * fpc[j])
                pct[o] = pct.get(o, 0.0) + float(sq[j])
                pvar[o] = pvar.get(o, 0.0) + float(n[j] * q_var * fpc[j])
            else:
                weak_n[j, p] += n[j]
                weak_z[j] += az[j]
                weak_q[j] += aq[j]
    # the habit's shift in percentile units: a normal score's shift h moves a percentile by about h phi(0)
    pdf0_sq = NORM_PDF0 ** 2
    for j in np.flatnonzero(weak_n.sum(axis=1) > 0):
        o = codes[j]
        wn = weak_n[j]
        fpc_all = (size - wn) / np.maximum(size - 1, 1)
        habit = wn.sum() ** 2 * habit_var  # one habit towards the seat, whichever pool its hands are in
        num[o] = num.get(o, 0.0) + float(weak_z[j])
        var[o] = var.get(o, 0.0) + float((wn * z_var_all * fpc_all).sum() + habit)
        pct[o] = pct.get(o, 0.0) + float(weak_q[j])
        pvar[o] = pvar.get(o, 0.0) + float((wn * q_var_all * fpc_all).sum() + habit * pdf0_sq)
    counts = {o: float(c) for o, c in zip(codes, np.bincount(inv, minlength=k))}
    z_mean = {o: (num[o] / np.sqrt(var[o]) if var[o] > 1e-12 else 0.0) for o in num}
    mean_pct = {o: 50.0 + 100.0 * pct[o] / counts[o] for o in num}
    pct_se = {o: 100.0 * float(np.sqrt(pvar[o])) / counts[o] for o in num}
    weak = {codes[j]: int(weak_n[j].sum()) for j in range(k)}
    return z_mean, mean_pct, pct_se, weak


#: Gauss-Hermite nodes of the unknown seat habit in the count look's tail (:func:`_habit_count_logsf`).
HABIT_NODES = 16


def _habit_count_logsf(above: np.ndarray, n_strong: int, n_weak: int, a: np.ndarray, b: np.ndarray, tau2: float
                       ) -> np.ndarray:
    """Per level, log P(count >= above) when n_weak of the pair's hands sit at a seat whose habit nobody could learn.

    The count look's hands in strong strata are beta-binomial as before (Beta(a, b): the pool's quantile and its
    sampling error); a hand in a weak stratum carries the actor's unknown habit h ~ N(0, tau2) towards that seat
    (:func:`habit_variance`, in normal-score units), so it lies above the pool's level-t quantile with probability
    sf(isf(t) - h), beta-binomial around it with the pool's concentration a + b. The tail is averaged over h
    (Gauss-Hermite): the same "a habit of the room's typical size" as the mean look's. log 0 is 0 (above 0)."""
    nodes, w = np.polynomial.hermite_e.hermegauss(HABIT_NODES)
    w = w / w.sum()
    h = nodes * np.sqrt(tau2)
    out = np.zeros(len(above))
    ks = np.arange(n_strong + 1)
    kw = np.arange(n_weak + 1)
    for i, k in enumerate(np.asarray(above, np.int64)):
        if k <= 0:
            continue
        c = float(a[i] + b[i])
        pmf_s = betabinom_pmf(ks, n_strong, a[i], b[i]) if n_strong > 0 else np.ones(1)
        p = norm_sf(norm_isf(a[i] / c) - h)
        tail = 0.0
        for p_h, w_h in zip(p, w):
            pmf = np.convolve(pmf_s, betabinom_pmf(kw, n_weak, c * p_h, c * (1.0 - p_h)))
            tail += w_h * float(pmf[k:].sum())
        # far out the sum underflows: the habit-free tail is then the (smaller, stricter) bound it cannot pass
        out[i] = math.log(min(tail, 1.0)) if tail > 0 else float(betabinom_logsf(np.array([k - 1]), n_strong + n_weak,
                                                                                   a[i:i + 1], b[i:i + 1])[0])
    return out


def _burst_one(scores: pd.DataFrame, habit_var: float | None = None) -> pd.DataFrame:
    """The burst statistic of one reading of the per-hand favour (see :func:`_burst`). ``scores``: actor, other,
    hand_id, x and optionally offset (the mean look is then stratified by it). ``habit_var``: the room's spread of
    seat habits (:func:`habit_variance`; by default read from ``scores``, which should then be the whole room's)."""
    cols = ["actor", "other", "logp", "hands", "above", "expected", "level", "z_mean", "logp_mean", "logp_count",
            "mean_percentile", "percentile_se", "expected_sd", "extreme"]
    if scores.empty:
        return pd.DataFrame(columns=cols).set_index(["actor", "other"])
    rows = []
    levels = np.array(BURST_LEVELS)
    log_looks = np.log(BURST_LOOKS)
    tau2 = habit_variance(scores) if habit_var is None else habit_var
    for actor, g in scores.groupby("actor", sort=False):
        # rounded so that hands equal up to the order of a float sum tie exactly: ranks and counts must not
        # depend on how the rows were chunked or ordered (the streamed audit sums them in another order)
        x, other = np.round(g["x"].to_numpy(np.float64), 9), g["other"].to_numpy(object)
        hand_ids = g["hand_id"].to_numpy()  # the room's hand numbers (ints): no object a hand
        strata = g["offset"].to_numpy(np.int64) if "offset" in g.columns else np.zeros(len(x), np.int64)
        z_means, pcts, pct_ses, weak = _mean_look(x, other, strata, tau2)
        # the actor's hands sorted once: each other's hands and its pool (the actor's other hands) are then the two
        # sides of one mask over them, both sorted, instead of a sort a pair
        codes, inv = np.unique(other, return_inverse=True)
        order = np.argsort(x, kind="stable")
        xs, who, hs = x[order], inv.ravel()[order], hand_ids[order]
        # stats.norm.logsf's own function (log_ndtr of -z), once for the actor's pairs
        logp_means = special.log_ndtr(-np.array([z_means[o] for o in codes], np.float64))
        for i, o in enumerate(codes):
            m = who == i
            n = int(m.sum())
            z_mean = z_means[o]
            logp_mean = float(logp_means[i])
            pool = xs[~m]
            mine = xs[m]
            extra = (z_mean, logp_mean, pcts[o], pct_ses[o])
            if len(pool) == 0:
                rows.append((actor, o, min(0.0, logp_mean + log_looks), n, 0, 0.0, BURST_LEVELS[0], z_mean, logp_mean,
                             0.0, pcts[o], pct_ses[o], 0.0, "[]"))
                continue
            # per level t, the pool's order statistic with j of its hands above: under no favour a hand of the
            # pair lies above it with probability Beta(j + 1, m - j), so the count is beta-binomial (exact
            # for any distribution: the pool's own sampling error is in it)
            j = np.minimum(np.floor(levels * len(pool)).astype(np.int64), len(pool) - 1)
            above = n - np.searchsorted(mine, pool[len(pool) - 1 - j], side="right")  # the pair's hands above each
            a, b = j + 1.0, len(pool) - j.astype(np.float64)
            if tau2 > 0 and weak[o] > 0:  # hands at a seat whose habit nobody could learn: see _habit_count_logsf
                lp = _habit_count_logsf(above, n - weak[o], weak[o], a, b, tau2)
            else:
                lp = np.where(above > 0, betabinom_logsf(above - 1, n, a, b), 0.0)
            k = int(np.argmin(lp))
            logp_count = float(min(0.0, float(lp[k]) + np.log(len(BURST_LEVELS))))
            c = a[k] + b[k]  # the beta-binomial count's spread: what a typical pair's count varies by
            sd = float(np.sqrt(n * a[k] * b[k] * (c + n) / (c * c * (c + 1))))
            # the hands the count counts, largest favour first, with their per-hand favour (the case file's evidence)
            top = np.flatnonzero(m)[n - int(above[k]):][::-1]
            extreme = orjson.dumps([[str(hs[i]), round(float(xs[i]), 3)] for i in top]).decode()
            rows.append((actor, o, float(min(0.0, min(logp_mean, logp_count) + log_looks)), n, int(above[k]),
                         float(n * a[k] / c), BURST_LEVELS[k], *extra[:2], logp_count, *extra[2:], sd, extreme))
    return pd.DataFrame(rows, columns=cols).set_index(["actor", "other"])


def _hot(scores: pd.DataFrame) -> set[Any]:
    """The actors with a pair that stands out (z > BURST_HOT_Z) when the habits are read as none."""
    plain = _burst_one(scores, 0.0)
    if plain.empty:
        return set()
    z = -special.ndtri_exp(np.minimum(plain["logp"].to_numpy(np.float64), np.log(0.5)))
    return set(plain.index[z > BURST_HOT_Z].get_level_values("actor"))


def hot_actors(lk: pd.DataFrame) -> set[Any]:
    """:func:`room_habit_variance`'s actors left out, read from links: each actor's answer depends on his own links
    only, so the links of any set of actors (whole actors: :func:`by_actors`) give those actors' answer."""
    return set() if lk.empty else _hot(hand_scores(lk, BURST_SIGNAL))


def room_habit_variance(lk: pd.DataFrame, hot: set[Any] | None = None) -> float:
    """:func:`habit_variance` of a whole room's links, leaving out the actors with a pair that stands out (z >
    BURST_HOT_Z) when the habits are read as none (one more reading of the room; ``hot``: those
    actors, when already known, e.g. :func:`hot_actors` of parts of the room read elsewhere)."""
    if lk.empty:
        return 0.0
    scores = hand_scores(lk, BURST_SIGNAL)
    if hot is None:
        hot = _hot(scores)
    return habit_variance(scores[~scores["actor"].isin(hot)] if hot else scores)


def by_actors(lk: pd.DataFrame, parts: int) -> list[pd.DataFrame]:
    """``lk`` cut into at most ``parts`` frames of whole actors (each actor's links in one, in their order), of about
    equal numbers of links (the largest actors first, each to the part with fewest links so far): :func:`_burst`
    reads each actor from his own links and the room's habit spread, so the parts' readings, put back in the room's
    order (:func:`in_room_order`), are the room's, bit for bit."""
    actors, sizes = np.unique(lk["actor"].to_numpy(object), return_counts=True)
    group = actor_parts(sizes, parts)
    of = group[np.searchsorted(actors, lk["actor"].to_numpy(object))]
    return [lk[of == k] for k in range(int(group.max()) + 1)] if len(group) else []


def actor_parts(sizes: np.ndarray, parts: int) -> np.ndarray:
    """Each actor's part (0 .. at most ``parts`` - 1, every part used) from the actors' numbers of links, in the
    actors' order: the largest actors first, each to the part with fewest links so far (ties: the earlier actor,
    the earlier part). Actors without links get -1."""
    sizes = np.asarray(sizes, np.int64)
    group = np.full(len(sizes), -1, np.int64)
    some = np.flatnonzero(sizes > 0)
    parts = max(1, min(parts, len(some)))
    load = np.zeros(parts, np.int64)
    for i in some[np.argsort(-sizes[some], kind="stable")]:
        group[i] = k = int(np.argmin(load))
        load[k] += sizes[i]
    return group


def in_room_order(lk: pd.DataFrame, read: list[pd.DataFrame]) -> pd.DataFrame:
    """The readings of :func:`by_actors`' parts as one frame in the order :func:`_burst` of the whole ``lk`` gives
    (its actors as they first appear in ``lk``, each actor's rows as his part gave them)."""
    return in_order_of(read, {a: i for i, a in enumerate(pd.unique(lk["actor"]))})


def in_order_of(read: list[pd.DataFrame], first: Mapping[Any, int]) -> pd.DataFrame:
    """Readings of parts of whole actors as one frame, the actors by ``first`` (e.g. each one's first link's place in
    the room), each actor's rows as his part gave them."""
    out = pd.concat(read)
    rank = np.array([first[a] for a in out.index.get_level_values("actor")], np.int64)
    return out.iloc[np.argsort(rank, kind="stable")]


def part_look(lk: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, dict[Any, int]]:
    """What a part of whole actors (:func:`by_actors`) gives the room's habit spread: the terms of
    :func:`habit_terms` without its actors who stand out when habits are read as none (:func:`hot_actors`: an actor's
    answer is his own), and each actor's first link's place (``lk``'s index: its rows' places in the room), for
    :func:`in_order_of`. :func:`habit_variance_of` of every part's terms is :func:`room_habit_variance` of the room."""
    if lk.empty:
        return np.zeros(0), np.zeros(0), {}
    scores = hand_scores(lk, BURST_SIGNAL)
    hot = _hot(scores)
    ms, vs = habit_terms(scores[~scores["actor"].isin(hot)] if hot else scores)
    actors = lk["actor"].to_numpy(object)
    _, at = np.unique(actors, return_index=True)
    index = lk.index.to_numpy()
    return ms, vs, {actors[i]: int(index[i]) for i in at}


def _burst(lk: pd.DataFrame, habit_var: float | None = None) -> pd.DataFrame:
    """Occasional collusion (:func:`_burst_read`), read twice: when some of an actor's directed pairs stand out in
    the first reading (z > BURST_HOT_Z), each of the actor's pairs is read again on his hands **without the other**
    standing-out partners (pair and pool alike; a pair that stood out is read without the others that did), and,
    with BURST_STRATA, also on all his hands with those partners' presence a stratum of its own
    (:func:`_by_presence`); the mean look then takes the better reading, paid for twice (:func:`_better_reading`).

    Why: a colluder's hands with the partner hold his disfavour towards the two others of the table; in the pool of
    his hands they make his ordinary hands with anyone else look favourable (review marks for honest pairs that
    sat with a colluder, in the cuts where the colluders are flagged; such a bystander can itself pass BURST_HOT_Z,
    hence "the other" partners). The room baselines leave standing-out pairs out the same way
    (:func:`analyzer.audit.signals.hot_pairs`). Leaving those hands out loses every hand of a pair that always sat
    with one of them (a ring of three at one table); the stratified reading keeps them and still compares like with
    like. Actors without a standing-out pair are read once. Each actor's answer depends on his own links only (and
    ``habit_var``), so :func:`by_actors`' parts read apart give the whole room's frame. ``habit_var``: the room's
    spread of seat habits when known (:func:`room_habit_variance`; then ``lk`` may hold only some actors' links)."""
    # the room's spread of seat habits, read once on the whole room (an actor's re-reading alone has too few strata),
    # without the actors who already stand out when habits are taken as none: a colluder's favour to the partner's
    # seat and disfavour to the others' are no habit, and they made the room's estimate 2-7 times the honest actors'
    tau2 = room_habit_variance(lk) if habit_var is None else habit_var
    first = _burst_read(lk, tau2)
    if first.empty:
        return first
    hot = first.index[-special.ndtri_exp(np.minimum(first["logp"].to_numpy(np.float64), np.log(0.5))) > BURST_HOT_Z]
    if not len(hot):
        return first
    partners: dict[Any, set[Any]] = {}
    for actor, other in hot:
        partners.setdefault(actor, set()).add(other)
    # hands as integer codes (numpy's isin compares object arrays element by element: an actor's hands against his
    # hands with a partner would be quadratic), and each actor's rows found once (not every row's name compared
    # again for each actor who stands out)
    others = lk["other"].to_numpy(object)
    hands = pd.factorize(lk["hand_id"], sort=False)[0]
    rows_of = pd.RangeIndex(len(lk)).groupby(lk["actor"].to_numpy(object))
    out = first.copy()
    for actor, ps in partners.items():
        mine = np.asarray(rows_of[actor], np.int64)
        my_others, my_hands = others[mine], hands[mine]
        # the actor's pairs by the partners their second reading leaves out: the others' for a partner, all of them
        # for everyone else (nothing for the only partner: its first reading is already without the others)
        plan: dict[frozenset[Any], list[Any]] = {}
        for o in first.loc[actor].index:
            if ps - {o}:
                plan.setdefault(frozenset(ps - {o}), []).append(o)
        for left_out, pairs in plan.items():
            toward = np.isin(my_others, list(left_out))
            with_them = np.isin(my_hands, my_hands[toward])  # links of hands where one of them sat
            apart = _burst_read(lk.iloc[mine[~with_them]], tau2)
            by_presence = _burst_read(_by_presence(lk.iloc[mine[~toward]], with_them[~toward]), tau2) \
                if BURST_STRATA else None
            for o in pairs:
                row = (apart.loc[(actor, o), out.columns] if (actor, o) in apart.index
                       else _nothing_left(out.loc[(actor, o)]))
                if by_presence is not None:
                    row = _better_reading(row, by_presence.loc[(actor, o), out.columns])
                for col in out.columns:  # a column at a time: the hands' text and the numbers are not one array
                    out.at[(actor, o), col] = row[col]
    return out


def _by_presence(links: pd.DataFrame, present: np.ndarray) -> pd.DataFrame:
    """An actor's links (those towards his other standing-out partners already left out) with the seat offset made
    a stratum of offset x ``present`` (one of those partners sat at the table in that hand).

    Why: the mean look ranks each hand among the actor's hands of its stratum, so a pair's hands played beside a
    partner are compared with his other hands beside that partner (where a colluder disfavours every non-partner),
    and its hands apart with his hands apart: neither can pass for favour, and a pair that always sat with a partner
    (a ring of three at one table) keeps its hands, which the reading without them loses."""
    shift = PRESENCE_STRATUM * np.asarray(present, np.int64)
    offset = links["offset"].to_numpy(np.int64) if "offset" in links.columns else np.zeros(len(links), np.int64)
    return links.assign(offset=offset + shift)


def _nothing_left(row: pd.Series) -> pd.Series:
    """A pair's reading when every hand together had a standing-out partner at the table: no evidence either way."""
    row = row.copy()
    row[["logp", "z_mean", "logp_mean", "logp_count", "above", "expected", "mean_percentile", "expected_sd"]] = \
        [0.0, 0.0, 0.0, 0.0, 0, 0.0, 50.0, 0.0]
    row["extreme"] = "[]"
    return row


def _better_reading(apart: pd.Series, by_presence: pd.Series) -> pd.Series:
    """One directed pair's two second readings as one: the mean look's log p the better of the reading without the
    other partners' hands (``apart``) and the one with their presence a stratum (``by_presence``), x 2 (Bonferroni:
    two tries at one question); the count look as ``apart`` read it.

    Only the mean look is ranked within strata; the count look's pool is all of the actor's hands, so with those
    partners' hands kept in it, a colluder's disfavour of every non-partner there sinks the pool's levels and a
    bystander who never sat with them reads as favoured (a seeded null of such actors, tests/audit/test_burst_strat.py:
    taking the better count too puts the count look at p <= 0.01 for 3.6% of the bystander pairs).

    The mean look's z is that of its paid-for p, read as 0 when that p passes 1/2 (paying twice turns "no favour"
    into a strongly negative z): that can only raise the pair's "both directions" sum (``calibrate``) where this
    direction is no evidence at all, and there the other direction's "either" reading wins as soon as its z passes
    ~1.4 (2 sf(z) < sf(z / sqrt 2)). The figures a case states go with the look that is stronger here (the mean's
    percentiles from its better reading, and its hands when the mean look is the stronger one)."""
    out = apart.copy()
    mean = apart if apart["logp_mean"] <= by_presence["logp_mean"] else by_presence
    out["logp_mean"] = min(0.0, float(mean["logp_mean"]) + float(np.log(2.0)))
    out["z_mean"] = max(0.0, float(-special.ndtri_exp(min(out["logp_mean"], float(np.log(0.5))))))
    out[["mean_percentile", "percentile_se"]] = mean[["mean_percentile", "percentile_se"]].to_numpy()
    if out["logp_mean"] < out["logp_count"]:
        out["hands"] = mean["hands"]
    out["logp"] = min(0.0, min(out["logp_mean"], out["logp_count"]) + float(np.log(BURST_LOOKS)))
    return out


def _burst_read(lk: pd.DataFrame, habit_var: float | None = None) -> pd.DataFrame:
    """Occasional collusion: does the pair have more extreme favour hands than the actor's others?

    A partner-aware actor in a minority of hands shifts the mean little but leaves a few hands far
    out. The pair's hands are compared with the actor's other hands as permutation tests: under no favour,
    the pair's hands are a random n of them. Two looks, each paid for (BURST_LOOKS):

    - **mean**: the mean of the pair's normal scores (ranks turned into N(0, 1) quantiles, so heavy tails
      weigh no more than a normal's), each hand ranked among the actor's hands *at the same seat offset*
      (a stratified permutation test: an actor's own habit towards a seat cannot pass for favour, whoever
      sits there most; its finite-population variance is exact per stratum);
    - **count**: for each level t of BURST_LEVELS the count of the pair's hands above the upper t-quantile
      of the actor's hands with everyone else, an exact beta-binomial tail (the quantile's own uncertainty is
      part of it, so a pair that holds a third of the actor's hands is not read against a pool taken as
      exact); the best level, times their number. The counts are read plainly and with the actor's own
      seat habit removed, and the weaker reading counts.

    Index (actor, other); columns logp (the directed best look, x BURST_LOOKS), z_mean, logp_mean, logp_count,
    hands, above, expected, level (the best count's), mean_percentile and percentile_se (the pair's hands'
    mean percentile among the actor's, and its null standard error). The pair's p combines both directions
    of each look (``calibrate``): sharing pairs favour each other in the same hands.
    """
    plain_scores = hand_scores(lk, BURST_SIGNAL)
    tau2 = habit_variance(plain_scores) if habit_var is None else habit_var
    plain = _burst_one(plain_scores, tau2)
    free_col = f"{BURST_SIGNAL}_habit_free"
    if free_col not in lk.columns or "offset" not in lk.columns:
        # without seat offsets the mean look cannot be stratified: both looks take the weaker reading
        if free_col not in lk.columns:
            return plain
        free = _burst_one(hand_scores(lk, free_col), tau2).reindex(plain.index)
        out = plain.copy()
        weaker = (free["logp"].fillna(0.0) > plain["logp"]).to_numpy()
        for col in out.columns:
            out.loc[weaker, col] = free.loc[weaker, col].to_numpy()
        return out
    free = _burst_one(hand_scores(lk, free_col), tau2).reindex(plain.index)
    out = plain.copy()
    count_cols = ["logp_count", "above", "expected", "level", "expected_sd", "extreme"]
    weaker = (free["logp_count"].fillna(0.0) > plain["logp_count"]).to_numpy()
    for col in count_cols:  # a column at a time: the hands' text and the numbers do not make one array
        out.loc[weaker, col] = free.loc[weaker, col].to_numpy()
    out["logp"] = np.minimum(0.0, np.minimum(out["logp_mean"], out["logp_count"]) + np.log(BURST_LOOKS))
    return out
