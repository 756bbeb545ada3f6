"""Pair signals from decision rows: collusion tables, pooled information, co-deviation, think time.

Every signal is generic (no model of a particular cheat). Each decision is seen three times, once
per other seat: a *link* from the actor to that seat. A link's statistic is centred on what the
whole room does in the same situation (offset round the table, play or cover, how costly the
decision was), so position effects and skill do not look like favouritism. Links are summed per
hand, and a directed pair's z divides the sum by the spread of the actor's per-hand sums over all
the seats it sat with; hands are the unit, so decisions in one hand may be correlated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from analyzer.analysis.dist import norm_isf, poisson_logsf, t_sf
from analyzer.analysis.options import OptionArrays, option_arrays
from analyzer.audit.burst import _burst, choice_weights, weighted_links

SEATS = 4
#: Hands of the pair's own spread that weigh as much as the actor's spread over everyone.
SHRINK_HANDS = 30.0
#: Per-link statistics are clipped at this quantile of their room-wide absolute values, so one
#: hand with a 三通 or 独头七 multiplier cannot carry a pair on its own.
CLIP_QUANTILE = 0.995
REGRET_BINS = 4
#: Favour signals also read with the actor's own seat-offset habit removed.
HABIT_CHECKED = ("marginal", "dd_marginal", "imm_marginal")
#: Links (decisions seen from one seat) below which an actor's own habit towards a seat offset
#: is shrunk towards none.
HABIT_LINKS = 100.0
#: A directed pair this far out on the first pass is left out of the room's baselines.
SUSPECT_Z = 4.0
P_MAX = 1 - 1e-12  # keeps one-sided z finite when nothing at all points that way
#: Think time: a co-player's coefficient is read only when this many hands' worth of its presence
#: is not explained by the other co-players' (see ``_separable``).
MIN_SEPARATE_HANDS = 4.0
#: Think times that do not move are no evidence: an actor whose hands' mean log think times stray from its pace line
#: by less than this (root mean square, log units: a millionth of the time) has times a log fixed (a placeholder such
#: as every action a second after the last, a bot's constant delay), and its residuals are float rounding, whose t
#: values are noise over noise (once a certain "slower with this player" for every pair of such a room).
FLAT_THINK = 1e-6
#: The least residual variance, as a share of the variance around the pace line, that the fit's standard errors
#: assume: the residual sum of squares comes from the normal equations, where rounding can leave ~0 for a near
#: perfect fit and make every z infinite.
MIN_RSS_SHARE = 1e-10
#: Tables (sets of co-players) kept per actor for the tables' random effect (:func:`_between_tables`): memory stays
#: bounded by the players, however many hands. An actor past it (a room that reseats every hand: each table then
#: holds a hand or two, and the spread of tables cannot be told from the spread of hands anyway) gets the plain fit.
MAX_TABLES = 20_000
#: Tables beyond the fit's coefficients an actor needs before a co-player's effect on its think time is read: below
#: it, who sat is confounded with how slow each table was (``_between_tables``), and the think signal says nothing.
MIN_TABLE_DOF = 2

#: Rows whose options ``seat_effects`` parses at once (bounded memory, whatever the rows).
OPTION_BLOCK = 512

#: Directed per-hand signals (name -> what a link contributes); co-deviation is per pair.
LINK_SIGNALS = ("marginal", "dd_marginal", "imm_marginal", "total", "pooled")


@dataclass(frozen=True, slots=True)
class SignalOptions:
    """Thresholds of the signals; defaults are generic, not tuned to a style."""

    deviation_regret: float = 2.0  # points: a decision this costly (and > 2 s.e.) is a deviation
    deviation_se: float = 2.0


@dataclass(frozen=True, slots=True)
class SeatEffects:
    """Per decision and seat (rows, 4): the chosen option's value minus a reference option's.

    ``own``/``dd``: against the sensible choice (own information / true deal). ``own_avg`` /
    ``dd_avg``: against the average option, which uses every option the actor passed over, not
    only the best one (more decisions carry information, and less of the deal's luck remains).
    ``imm``: the exact immediate effect on the true deal against the average option (the
    ``imm`` columns; zeros for rows without them).
    """

    own: np.ndarray
    dd: np.ndarray
    own_avg: np.ndarray
    dd_avg: np.ndarray
    imm: np.ndarray


def seat_effects(df: pd.DataFrame, parsed: OptionArrays | None = None) -> SeatEffects:
    """Read every option's values from ``options`` when the rows carry them (``parsed``: the rows' options already
    parsed, by a caller that reads them for something else too).

    The ``dd_delta`` columns compare with the option best under the true deal; the audit needs
    the same reference as the own-information deltas (what a sensible player would have done).
    Without ``options`` the delta columns stand in for everything.
    """
    own = df[[f"delta{s}" for s in range(SEATS)]].to_numpy(np.float64)
    dd = df[[f"dd_delta{s}" for s in range(SEATS)]].to_numpy(np.float64)
    cols = [f"imm{s}" for s in range(SEATS)]
    # rows of a source without the columns (another variant) carry no immediate effect
    imm = df[cols].to_numpy(np.float64) if set(cols) <= set(df.columns) else np.zeros((len(df), SEATS))
    imm = np.nan_to_num(imm)
    if "options" not in df.columns:
        return SeatEffects(own, dd, own, dd, imm)
    dd, own_avg, dd_avg = dd.copy(), own.copy(), dd.copy()
    # the options of a block of rows parsed at once (analysis.options), then array indexing: row by row this was
    # a tenth of a whole audit's CPU; a block at a time, so the parsed texts held at once do not grow with the rows
    # (a caller's own parse is of a bounded frame: a chunk of CHUNK_HANDS hands)
    texts, chosen, best = df["options"].tolist(), df["chosen"].tolist(), df["best"].tolist()
    spans = ([(0, len(texts))] if parsed is not None
             else [(lo, min(lo + OPTION_BLOCK, len(texts))) for lo in range(0, len(texts), OPTION_BLOCK)])
    for lo, hi in spans:
        oa = parsed if parsed is not None else option_arrays(texts[lo:hi])
        c_at, b_at = oa.index_of(chosen[lo:hi]), oa.index_of(best[lo:hi])
        ok = np.flatnonzero((oa.count > 0) & (c_at >= 0) & (b_at >= 0))  # the others keep the delta columns
        if not len(ok):
            continue
        both = np.concatenate([oa.ev, oa.ev_dd], axis=1)
        # per row the sum of its options in order, over their count (the rows with options: reduceat sums
        # from one start to the next, and a row without options has none to add)
        nonempty = np.flatnonzero(oa.count > 0)
        at = np.zeros(len(oa.count), np.int64)
        at[nonempty] = np.arange(len(nonempty))
        mean = np.add.reduceat(both, oa.start[nonempty], axis=0)[at[ok]] / oa.count[ok][:, None]
        c, b = both[oa.start[ok] + c_at[ok]], both[oa.start[ok] + b_at[ok]]
        dd[lo + ok] = c[:, SEATS:] - b[:, SEATS:]
        own_avg[lo + ok] = c[:, :SEATS] - mean[:, :SEATS]
        dd_avg[lo + ok] = c[:, SEATS:] - mean[:, SEATS:]
    return SeatEffects(own, dd, own_avg, dd_avg, imm)


def links(df: pd.DataFrame, eff: SeatEffects | None = None) -> pd.DataFrame:
    """Each decision once per other seat: actor -> other, with the effects seen from that pair.

    ``X_actor``, ``X_other`` and ``X_rest`` (mean of the two remaining seats) for X in
    ``d`` (vs the sensible choice, own information), ``dd`` (the same, true deal), ``a`` and
    ``add`` (vs the average option, own information / true deal), ``imm`` (immediate effect).
    """
    n = len(df)
    seat = df["seat"].to_numpy(np.int64)
    names = df[["p0", "p1", "p2", "p3"]].to_numpy(object)
    eff = seat_effects(df) if eff is None else eff
    rows = np.arange(n)
    parts = []
    for k in (1, 2, 3):
        o = (seat + k) % SEATS
        r1, r2 = (seat + (k % 3) + 1) % SEATS, (seat + ((k + 1) % 3) + 1) % SEATS  # the two remaining seats
        cols: dict[str, object] = {"row": rows, "offset": k, "actor": names[rows, seat], "other": names[rows, o]}
        for tag, m in (("d", eff.own), ("dd", eff.dd), ("a", eff.own_avg), ("add", eff.dd_avg), ("imm", eff.imm)):
            cols[f"{tag}_actor"] = m[rows, seat]
            cols[f"{tag}_other"] = m[rows, o]
            cols[f"{tag}_rest"] = (m[rows, r1] + m[rows, r2]) / 2
        parts.append(pd.DataFrame(cols))
    out = pd.concat(parts, ignore_index=True)
    keep = ["hand_id", "hand_seq", "action", "kind", "chosen", "best", "regret", "regret_se", "think_ms",
            "difficulty"]
    base = df[keep].reset_index(drop=True)
    out = pd.concat([out, base.iloc[out["row"].to_numpy()].reset_index(drop=True)], axis=1)
    out["actor"] = out["actor"].astype(str)
    out["other"] = out["other"].astype(str)
    return out


def _regret_bin(regret: pd.Series) -> pd.Series:
    """0 for (near) free decisions, then quantile bins of the costly ones, room-wide."""
    out = pd.Series(0, index=regret.index, dtype=np.int64)
    pos = regret > 1e-9
    if pos.sum() >= REGRET_BINS * 10:
        out[pos] = 1 + pd.qcut(regret[pos], REGRET_BINS, labels=False, duplicates="drop").astype(np.int64)
    else:
        out[pos] = 1
    return out


def _centred(value: pd.Series, groups: np.ndarray, use: np.ndarray, covariate: pd.Series | None = None
             ) -> pd.Series:
    """Value minus what the room does in the same situation, clipped (see CLIP_QUANTILE).

    ``groups``: integer situation codes. The room's expectation is the mean of the links in
    ``use`` (suspect pairs are left out, so a strong pair cannot shift everyone's baseline), or
    with ``covariate`` a straight line in it fitted per situation.
    """
    y = value.to_numpy(np.float64)
    w = use.astype(np.float64)
    n = int(groups.max()) + 1 if len(groups) else 0

    def mean_of(v: np.ndarray) -> np.ndarray:
        return (np.bincount(groups, w * v, n) / np.maximum(np.bincount(groups, w, n), 1e-12))[groups]

    my = mean_of(y)
    fit = my
    if covariate is not None:
        x = covariate.to_numpy(np.float64)
        mx = mean_of(x)
        sxx = mean_of((x - mx) ** 2)
        slope = np.where(sxx > 1e-12, mean_of((x - mx) * (y - my)) / np.where(sxx > 1e-12, sxx, 1.0), 0.0)
        fit = my + slope * (x - mx)
    res = y - fit
    cap = float(np.nanquantile(np.abs(res[use]), CLIP_QUANTILE)) if use.any() else 0.0
    return pd.Series(np.clip(res, -cap, cap) if cap > 0 else res, index=value.index)


def _without_habit(lk: pd.DataFrame, value: pd.Series, use: np.ndarray) -> pd.Series:
    """Value minus the actor's own habit towards the seat at that offset (say, never releasing
    cards to the next player), learnt from the actor's hands without this other player.

    Hands with the other player are left out of the habit (not only the links to them: favour for a
    partner also shows as disfavour for the two others of that hand), so a colluder's favour stays
    in the signal, while an honest player whose friend often sits after them is not taken for one.
    A habit seen in fewer than HABIT_LINKS links is shrunk towards none (a player seen little in
    hands without the other is judged by the room alone); above that it is taken whole, since any
    shrinking would leave a fixed share of a real habit to pile up over hands together.
    """
    v = pd.Series(np.where(use, value.to_numpy(np.float64), 0.0), index=value.index)
    n = pd.Series(use.astype(np.float64), index=value.index)
    per = pd.DataFrame({"actor": lk["actor"], "hand_id": lk["hand_id"], "offset": lk["offset"], "v": v, "n": n})
    by_offset = per.groupby(["actor", "offset"])[["v", "n"]].sum()
    per_hand = per.groupby(["actor", "hand_id", "offset"], sort=False)[["v", "n"]].sum().reset_index()
    co = lk[["actor", "hand_id", "other"]].drop_duplicates()
    with_other = co.merge(per_hand, on=["actor", "hand_id"]).groupby(["actor", "other", "offset"])[["v", "n"]].sum()
    keys = pd.MultiIndex.from_arrays([lk["actor"], lk["offset"]])
    keys3 = pd.MultiIndex.from_arrays([lk["actor"], lk["other"], lk["offset"]])
    tot = by_offset.reindex(keys).to_numpy()
    mine = with_other.reindex(keys3).fillna(0.0).to_numpy()
    habit = (tot[:, 0] - mine[:, 0]) / np.maximum(tot[:, 1] - mine[:, 1], HABIT_LINKS)
    return value - habit


def link_statistics(lk: pd.DataFrame, use: np.ndarray | None = None) -> pd.DataFrame:
    """Per link: raw effects in points and the centred statistic of each directed signal.

    ``use`` marks the links the room's baselines are fitted on (default: all).
    """
    lk = lk.copy()
    use = np.ones(len(lk), bool) if use is None else use
    lk["rbin"] = _regret_bin(lk["regret"])
    situation = pd.MultiIndex.from_arrays([lk["offset"], lk["kind"], lk["rbin"]]).factorize()[0]
    # how the actor treats this seat compared with the two others (Bowling's marginal impact),
    # the chosen option against the average one, by the actor's own information
    lk["marginal_raw"] = lk["a_other"] - lk["a_rest"]
    # the same judged with the true deal: favour that only someone who saw the partner's hand
    # could aim (an honest actor's choice is blind to it, so it averages out like the above)
    lk["dd_marginal_raw"] = lk["add_other"] - lk["add_rest"]
    # the same favour measured exactly and at once (cards made live or dead in each hand, no
    # rollouts): none of the deal's later luck, so far less noise per decision
    lk["imm_marginal_raw"] = lk["imm_other"] - lk["imm_rest"]
    # what the decision did for the pair against the sensible choice (total impact); weak
    # players lose more, so the room's line in regret is the baseline, not zero
    lk["total_raw"] = lk["d_actor"] + lk["d_other"]
    # true-deal value for the pair beyond what the actor's own information promised: zero on
    # average for anyone deciding from their own hand (a martingale), positive with pooled hands
    lk["pooled_raw"] = (lk["add_actor"] + lk["add_other"]) - (lk["a_actor"] + lk["a_other"])
    for name in HABIT_CHECKED:
        lk[name] = _centred(lk[f"{name}_raw"], situation, use)
        lk[f"{name}_habit_free"] = _without_habit(lk, lk[name], use)
    lk["total"] = _centred(lk["total_raw"], situation, use, covariate=lk["regret"])
    lk["pooled"] = _centred(lk["pooled_raw"], situation, use)
    return lk


def _directed(lk: pd.DataFrame, name: str) -> pd.DataFrame:
    """Per directed pair: per-hand sums of a signal, their mean, s.e. and z (hands as the unit).

    For the favour signals the z is the smaller of the plain one and the one with the actor's own
    seat-offset habit removed: favour must survive both readings to count, so a habit cannot pass
    for favour and a noisy habit estimate cannot create any.
    """
    out, se_sum, total = _per_hand_z(lk, name, with_raw=True)
    out["per_hand"] = total / out["hands"]
    out["se_per_hand"] = se_sum / out["hands"]
    if f"{name}_habit_free" in lk.columns:
        z_free = _per_hand_z(lk, f"{name}_habit_free")[0]["z"].reindex(out.index)
        out["z"] = np.minimum(out["z"], z_free)
    return out


def _per_hand_z(lk: pd.DataFrame, col: str, with_raw: bool = False) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """z of a directed pair's sum of ``col`` over its hands together, with the actor's spread per hand."""
    agg = {"s": (col, "sum"), "n": (col, "size")}
    if with_raw:
        agg["raw"] = (f"{col}_raw", "sum")
    per_hand = lk.groupby(["actor", "other", "hand_id"], sort=False).agg(**agg)
    per_hand["s2"] = per_hand["s"] ** 2
    actor_mean_sq = per_hand.groupby(level="actor")["s2"].mean()  # null mean is 0: second moment, not variance
    g = per_hand.groupby(level=["actor", "other"])
    out = pd.DataFrame({"hands": g.size(), "decisions": g["n"].sum()})
    if with_raw:
        out["raw_per_hand"] = g["raw"].mean()
    total, mean_sq = g["s"].sum(), g["s2"].mean()
    actor_sq = actor_mean_sq.reindex(out.index.get_level_values("actor")).to_numpy()
    var = (out["hands"] * mean_sq + SHRINK_HANDS * actor_sq) / (out["hands"] + SHRINK_HANDS)
    se_sum = np.sqrt(out["hands"] * var)
    out["z"] = np.where(se_sum > 0, total / se_sum.where(se_sum > 0, 1.0), 0.0)
    return out, se_sum, total


def _codeviation(lk: pd.DataFrame, opts: SignalOptions) -> pd.DataFrame:
    """The seed's test: hands where both partners deviated, each in the other's favour.

    A deviation is a costly choice by the actor's own information; its favour is judged with
    the true deal (which is where a partner's hand shows).
    Conditioned on both deviating in a hand, whether each favoured the other is close to a coin
    flip for honest players (weak ones deviate more, not more towards a friend), so the count of
    mutual-favour hands is tested against the room's own favour rate: a Poisson tail.
    """
    return codeviation_of(deviation_hands(lk, opts))


def deviation_hands(lk: pd.DataFrame, opts: SignalOptions) -> pd.DataFrame:
    """Per (actor, other, hand) with a deviation: the true-deal favour of the deviations, plain (``m``) and
    without the actor's seat habit (``m_free``), and the seat offset (``off``). Hands are whole in any
    batch of whole hands, so batches' tables concatenate (see :mod:`analyzer.audit.stream`)."""
    dev = lk[(lk["regret"] > opts.deviation_regret) & (lk["regret"] > opts.deviation_se * lk["regret_se"])]
    free = "dd_marginal_habit_free" if "dd_marginal_habit_free" in dev.columns else "dd_marginal"
    h = dev.groupby(["actor", "other", "hand_id"], sort=False).agg(
        m=("dd_marginal", "sum"), m_free=(free, "sum"), off=("offset", "first"))
    return h.reset_index()


def codeviation_of(h: pd.DataFrame) -> pd.DataFrame:
    """The co-deviation test from :func:`deviation_hands`' table."""
    h = h.copy()
    h["fav"] = (h["m"] > 0) & (h["m_free"] > 0)  # favour with and without the actor's seat habit
    rate = h.groupby("off")["fav"].mean()
    h["q"] = h["off"].map(rate).astype(float)
    a, b = h["actor"].to_numpy(object), h["other"].to_numpy(object)
    h["pa"] = np.where(a < b, a, b)
    h["pb"] = np.where(a < b, b, a)
    both = h.groupby(["pa", "pb", "hand_id"], sort=False).agg(k=("fav", "size"), fav=("fav", "sum"), q=("q", "prod"))
    both = both[both["k"] == 2]
    g = both.groupby(level=["pa", "pb"])
    out = pd.DataFrame({"both_deviated": g.size(), "observed": g["fav"].apply(lambda f: int((f == 2).sum())),
                        "expected": g["q"].sum()})
    logp = poisson_logsf(out["observed"].to_numpy() - 1, out["expected"].clip(lower=1e-12).to_numpy())
    out["logp"] = np.where(out["observed"] > 0, logp, 0.0)
    out["p"] = np.exp(out["logp"])
    # the z of the tail computed from its logarithm: no ceiling however strong the case
    out["z"] = -special.ndtri_exp(np.minimum(out["logp"].to_numpy(np.float64), np.log(P_MAX)))
    return out


def _separable(gram: np.ndarray) -> np.ndarray:
    """Per co-player, from the Gram matrix of the co-player columns of a design (hands, co-players; the
    intercept is left out: the three co-players of a hand always sum to it): the residual sum of
    squares of the column on the other co-players' columns, in hands. Near 0 when the co-player always
    sat with the same others (early in a room): then no regression can tell whose presence made the
    actor slow, and the pseudo-inverse would hand a partner's effect to a bystander with a tiny
    standard error.

    From the Gram matrix alone (its size is the co-players', whatever the hands): a column lies in the
    span of the others exactly when some null vector of the Gram matrix has a non-zero entry there
    (residual 0); otherwise its residual is 1 / (pseudo-inverse)_jj (the row of X+ for that column is
    orthogonal to the other columns and has squared norm (G+)_jj = 1 / residual).
    """
    n = len(gram)
    if n == 0:
        return np.zeros(0)
    e, v = np.linalg.eigh(gram)
    tol = max(float(e.max()), 0.0) * n * np.finfo(np.float64).eps * 10
    keep = e > tol
    null_weight = (v[:, ~keep] ** 2).sum(axis=1)
    pinv_diag = ((v[:, keep] ** 2) / e[keep]).sum(axis=1)
    out = np.where((null_weight > 1e-9) | (pinv_diag <= 0), 0.0, 1.0 / np.where(pinv_diag > 0, pinv_diag, 1.0))
    return np.asarray(out, np.float64)


def _normal_equations(hi: np.ndarray, oi: np.ndarray, n_hands: int, n_others: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """X'X of the design (hands, co-player indicators + intercept) and the design itself (sparse), built
    from the (hand, co-player) pairs: cost linear in hands, memory (co-players + 1)^2 for X'X."""
    from scipy import sparse

    rows = np.concatenate([hi, np.arange(n_hands)])
    cols = np.concatenate([oi, np.full(n_hands, n_others)])
    x = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_hands, n_others + 1))
    x.sum_duplicates()
    x.data[:] = 1.0  # an indicator, however many links name the pair in a hand
    return np.asarray((x.T @ x).toarray(), np.float64), x


class ThinkStats:
    """The think-time model's sufficient statistics, added batch by batch (whole hands a batch): per
    actor its pace fit (sums over its timed decisions of 1, x, log time, x^2, x log time) and, over the
    hands it timed, the normal equations of the per-hand regression on who sat with it (X'X and X'a,
    X'b for the hand's mean log time a and mean difficulty b, and their sums and cross-products).
    The per-hand residual is a - slope b - c with the actor's pace line (slope, c), linear in a and b,
    so X'y and y'y follow at the end without a second pass. Memory: co-players squared per actor,
    whatever the hands."""

    def __init__(self) -> None:
        self.pace: dict[str, np.ndarray] = {}  # n, sum x, sum lt, sum x^2, sum x lt
        self.others: dict[str, dict[str, int]] = {}
        self.xtx: dict[str, np.ndarray] = {}  # co-players + intercept (last), grown as co-players appear
        self.xta: dict[str, np.ndarray] = {}
        self.xtb: dict[str, np.ndarray] = {}
        self.sums: dict[str, np.ndarray] = {}  # hands, sum a, sum b, sum a^2, sum b^2, sum ab
        #: per actor, per table (its three co-players, sorted): hands, sum a, sum b (the between-table spread)
        self.tables: dict[str, dict[tuple[str, ...], list[float]]] = {}
        self.overflow: set[str] = set()  # actors whose tables passed MAX_TABLES: no longer kept

    def add_decisions(self, df: pd.DataFrame) -> None:
        """Add decision rows (``player``, ``seat``, ``p0..p3``, ``hand_id``, ``think_ms``, ``difficulty``)."""
        t = df.dropna(subset=["think_ms"])
        if t.empty:
            return
        lt = np.log1p(t["think_ms"].clip(lower=0).to_numpy(np.float64))
        x = t["difficulty"].fillna(0.0).to_numpy(np.float64)
        actor_code, actors = pd.factorize(t["player"].astype(str).to_numpy(object))
        hand_code, _ = pd.factorize(t["hand_id"].astype(str).to_numpy(object))
        n_a = len(actors)
        # per actor its pace line's sums (timed decisions, x, log time, x^2, x log time): integer codes and
        # bincounts, not a groupby on names (this ran once per batch and was a fifth of the pair signals)
        pace = np.stack([np.bincount(actor_code, minlength=n_a).astype(np.float64),
                         *(np.bincount(actor_code, v, n_a) for v in (x, lt, x * x, x * lt))], axis=1)
        for k, a in enumerate(actors):
            self.pace[a] = self.pace.get(a, np.zeros(5)) + pace[k]
        # per (actor, hand): mean log time and difficulty, and the table read from its first decision
        key = actor_code.astype(np.int64) * (int(hand_code.max()) + 1) + hand_code
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        inv = inv.ravel()
        cnt = np.bincount(inv, minlength=len(uniq)).astype(np.float64)
        m_lt, m_x = np.bincount(inv, lt, len(uniq)) / cnt, np.bincount(inv, x, len(uniq)) / cnt
        order = np.argsort(first, kind="stable")  # the (actor, hand) pairs in order of appearance
        first, m_lt, m_x = first[order], m_lt[order], m_x[order]
        names = t[["p0", "p1", "p2", "p3"]].astype(str).to_numpy(object)[first]
        who = actor_code[first]
        by = np.argsort(who, kind="stable")
        bounds = np.searchsorted(who[by], np.arange(n_a + 1))
        for k, a in enumerate(actors):
            i = by[bounds[k]:bounds[k + 1]]
            nm = names[i]
            self._hands(str(a), nm[nm != a].reshape(len(i), 3), m_lt[i], m_x[i])

    def _hands(self, actor: str, co: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        """Add an actor's hands: co-players (hands, 3), mean log time and mean difficulty per hand."""
        from scipy import sparse

        idx = self.others.setdefault(actor, {})
        for o in pd.unique(co.ravel()):
            if o not in idx:
                idx[o] = len(idx)
        k = len(idx) + 1
        old = self.xtx.get(actor)
        if old is None or len(old) < k:  # grow, keeping the intercept last
            m = max(k, 2 * (0 if old is None else len(old) - 1) + 1)
            xtx, xta, xtb = np.zeros((m, m)), np.zeros(m), np.zeros(m)
            if old is not None:
                n = len(old) - 1
                xtx[:n, :n], xtx[:n, -1], xtx[-1, :n], xtx[-1, -1] = old[:n, :n], old[:n, -1], old[-1, :n], old[-1, -1]
                xta[:n], xta[-1] = self.xta[actor][:n], self.xta[actor][-1]
                xtb[:n], xtb[-1] = self.xtb[actor][:n], self.xtb[actor][-1]
            self.xtx[actor], self.xta[actor], self.xtb[actor] = xtx, xta, xtb
        xtx, xta, xtb = self.xtx[actor], self.xta[actor], self.xtb[actor]
        h = len(a)
        cols = np.concatenate([np.vectorize(idx.__getitem__, otypes=[np.int64])(co).ravel(),
                               np.full(h, len(xtx) - 1)])
        rows = np.concatenate([np.repeat(np.arange(h), 3), np.arange(h)])
        d = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(h, len(xtx)))
        xtx += (d.T @ d).toarray()
        xta += d.T @ a
        xtb += d.T @ b
        self.sums[actor] = self.sums.get(actor, np.zeros(6)) + np.array(
            [h, a.sum(), b.sum(), a @ a, b @ b, a @ b], np.float64)
        if actor in self.overflow:
            return
        tables = self.tables.setdefault(actor, {})
        for key, ai, bi in zip(map(tuple, np.sort(co.astype(str), axis=1).tolist()), a.tolist(), b.tolist()):
            cell = tables.get(key)
            if cell is None:
                tables[key] = [1.0, ai, bi]
            else:
                cell[0] += 1.0
                cell[1] += ai
                cell[2] += bi
        if len(tables) > MAX_TABLES:
            self.overflow.add(actor)
            del self.tables[actor]

    def merge(self, later: ThinkStats) -> ThinkStats:
        """These sums and ``later``'s (sums of the rows that came after these) as one, as if every row had been
        added to one accumulator in that order: each actor's co-players keep their order of appearance
        (``later``'s new ones after), so the fit is the same one (to float rounding). Per-batch sums made
        apart (e.g. on Dask workers, next to each batch's rows) merge in a tree of these."""
        out = ThinkStats()
        for actor in [*self.others, *(a for a in later.others if a not in self.others)]:
            mine, theirs = self.others.get(actor, {}), later.others.get(actor, {})
            idx = dict(mine)
            for o in theirs:
                idx.setdefault(o, len(idx))
            k = len(idx) + 1
            xtx, xta, xtb = np.zeros((k, k)), np.zeros(k), np.zeros(k)
            for part, own in ((self, mine), (later, theirs)):
                if actor not in part.xtx:
                    continue
                m = len(part.xtx[actor])
                src = np.array([*own.values(), m - 1], np.int64)  # own codes, intercept last
                dst = np.array([*(idx[o] for o in own), k - 1], np.int64)
                xtx[np.ix_(dst, dst)] += part.xtx[actor][np.ix_(src, src)]
                xta[dst] += part.xta[actor][src]
                xtb[dst] += part.xtb[actor][src]
            out.others[actor], out.xtx[actor], out.xta[actor], out.xtb[actor] = idx, xtx, xta, xtb
            out.sums[actor] = self.sums.get(actor, np.zeros(6)) + later.sums.get(actor, np.zeros(6))
            if actor in self.overflow or actor in later.overflow:
                out.overflow.add(actor)
                continue
            tables = {key: list(cell) for key, cell in self.tables.get(actor, {}).items()}
            for key, cell in later.tables.get(actor, {}).items():
                mine_cell = tables.get(key)
                tables[key] = list(cell) if mine_cell is None else [x + y for x, y in zip(mine_cell, cell)]
            if len(tables) > MAX_TABLES:
                out.overflow.add(actor)
            else:
                out.tables[actor] = tables
        for actor in [*self.pace, *(a for a in later.pace if a not in self.pace)]:
            out.pace[actor] = self.pace.get(actor, np.zeros(5)) + later.pace.get(actor, np.zeros(5))
        return out

    def result(self) -> pd.DataFrame:
        """Per (actor, co-player): z of the co-player's coefficient, hands together, slower ratio."""
        cols = ["actor", "other", "z", "hands_with", "slower_ms_ratio"]
        rows: list[tuple[str, str, float, float, float]] = []
        for actor, idx in self.others.items():
            n, sx, sl, sxx_, sxl = self.pace[actor]
            mx, my = sx / n, sl / n
            sxx, sxy = sxx_ - n * mx * mx, sxl - n * mx * my
            slope = sxy / sxx if (sxx > 1e-12 and n > 2) else 0.0
            c = my - slope * mx
            p = len(idx)
            keep = list(range(p)) + [len(self.xtx[actor]) - 1]
            xtx = self.xtx[actor][np.ix_(keep, keep)]
            xta, xtb = self.xta[actor][keep], self.xtb[actor][keep]
            hands, sa, sb, saa, sbb, sab = self.sums[actor]
            xty = xta - slope * xtb - c * xtx[:, -1]
            yty = saa + slope * slope * sbb + hands * c * c - 2 * slope * sab - 2 * c * sa + 2 * slope * c * sb
            others = sorted(idx, key=idx.__getitem__)
            rows.extend(_think_fit(actor, others, xtx, xty, yty, int(hands), None if actor in self.overflow else
                                   _table_means(self.tables.get(actor, {}), idx, slope, c)))
        return pd.DataFrame(rows, columns=cols)


def _table_means(tables: dict[tuple[str, ...], list[float]], idx: dict[str, int], slope: float, c: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """An actor's tables (each set of three co-players it sat with): hands, the mean residual from its pace line
    (``slope``, ``c``) and the co-players' columns in the design (tables, 3); None without tables."""
    if not tables:
        return None
    cells = np.array(list(tables.values()), np.float64)
    n = cells[:, 0]
    mean = (cells[:, 1] - slope * cells[:, 2]) / n - c
    cols = np.array([[idx[o] for o in key] for key in tables], np.int64).reshape(len(tables), -1)
    return n, mean, cols


def _think_fit(actor: str, others: list[str], xtx: np.ndarray, xty: np.ndarray, yty: float, hands: int,
               tables: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
               ) -> list[tuple[str, str, float, float, float]]:
    """One actor's regression on its co-players, from its normal equations; with the actor's ``tables``
    (:func:`_table_means`), each table one observation with a spread of its own (:func:`_between_tables`), unless
    its tables hold about a hand each (then the hand-level fit is that model)."""
    counts = np.diag(xtx)[:-1]
    rank = int(np.linalg.matrix_rank(xtx, hermitian=True))
    dof = hands - rank
    if dof < 3 or not yty > hands * FLAT_THINK ** 2:  # too few hands, or times that do not move (FLAT_THINK)
        return [(actor, o, 0.0, float(c), 1.0) for o, c in zip(others, counts)]
    xtx_inv = np.linalg.pinv(xtx, hermitian=True)
    beta = xtx_inv @ xty
    # ||y - X beta||^2 from the normal equations: y'y - 2 beta'X'y + beta'X'X beta
    rss = float(yty - 2 * beta @ xty + beta @ xtx @ beta)
    sigma2 = max(rss, MIN_RSS_SHARE * yty) / dof
    var = np.diag(xtx_inv)[:-1] * sigma2
    mixed = _between_tables(xtx_inv, beta, yty, hands, rank, tables) if tables is not None else None
    alone = False  # each co-player read on its own: its tables with and without it tell it apart
    if mixed is not None:  # each table one observation, with its own spread (a slow table, a drifting pace)
        beta, var, dof, alone = mixed
        if dof == 0:  # too few tables to tell a co-player from a slow table: no evidence either way
            return [(actor, o, 0.0, float(c), 1.0) for o, c in zip(others, counts)]
    p = t_sf(beta[:-1] / np.sqrt(np.maximum(var, 1e-300)), dof)
    ok = (counts >= 2) & (hands - counts >= 2) & np.isfinite(var) & (
        alone | (_separable(xtx[:-1, :-1]) >= MIN_SEPARATE_HANDS))
    z = norm_isf(np.clip(p, 1e-300, P_MAX))
    return [(actor, o, float(zz) if k else 0.0, float(cnt), float(np.exp(bb)) if k else 1.0)
            for o, zz, cnt, bb, k in zip(others, z, counts, beta[:-1], ok)]


def _between_tables(xtx_inv: np.ndarray, beta: np.ndarray, yty: float, hands: int, rank: int,
                    tables: tuple[np.ndarray, np.ndarray, np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray, int, bool] | None:
    """The co-players' coefficients, their variances and degrees of freedom with each table (set of co-players) as
    one observation that has a spread of its own; None when every table holds about one hand (the hand-level fit is
    then the same model). No degrees of freedom (0) when the actor sat at too few tables to tell a co-player's effect
    from a slow table's.

    The hand-level fit takes every hand as independent. Think times are not: a table can be slow as a whole (a
    laggy connection, a long discussion) and a player's pace drifts over a session, and the hands of one table share
    that. A co-player's effect is only seen between tables (who sits is the same within one), so the hands of a
    table count as far fewer than their number, and honest pairs that sat at a few slow tables looked "slower
    together" with z's of 4-9. Here each table's mean residual y_t over n_t hands has variance sigma^2 / n_t +
    tau^2, with sigma^2 from the spread of hands within tables and tau^2, the tables' own, from DerSimonian and
    Laird's moments (a meta-regression: Cochran's Q of the tables' means about the plain fit); the fit is weighted
    by 1 / (sigma^2 / n_t + tau^2), its variances scaled by the tables' own scatter about it when that is larger
    (Knapp and Hartung's adjustment, which holds its level with few tables) and read on a t with tables - rank
    degrees of freedom. With tau^2 = 0 the coefficients are the plain fit's. When the co-players outnumber what the
    tables can tell apart (fewer than MIN_TABLE_DOF degrees of freedom left), each co-player is read on its own
    (:func:`_one_at_a_time`)."""
    n, mean, cols = tables
    k = len(n)
    dof_w = hands - k
    if dof_w < 2:
        return None  # a hand or so a table: the tables are the hands
    dof_t = k - rank
    within = yty - float(n @ (mean * mean))
    sigma2 = max(within, MIN_RSS_SHARE * yty) / dof_w
    p = len(beta)
    if dof_t < MIN_TABLE_DOF:  # more co-players than tables can tell apart together: each one on its own
        return (*_one_at_a_time(n, mean, cols, p, sigma2, hands), True)
    x = np.zeros((k, p))
    np.put_along_axis(x, cols, 1.0, axis=1)
    x[:, -1] = 1.0
    fit, var = _random_tables(x, n, mean, sigma2, hands, dof_t, xtx_inv, beta)
    return fit, var, dof_t, False


def _random_tables(x: np.ndarray, n: np.ndarray, mean: np.ndarray, sigma2: float, hands: int, dof_t: int,
                   xtx_inv: np.ndarray | None = None, beta: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The random-effects meta-regression of the tables' mean residuals ``mean`` (over ``n`` hands each, within
    variance ``sigma2``) on the design ``x`` (tables x coefficients, the intercept last): the coefficients and their
    Knapp-Hartung variances (but the intercept's). ``xtx_inv``, ``beta``: the plain fit's, when known (weights
    n_t / sigma^2; the hand-level fit's, as a table's hands share its row)."""
    if xtx_inv is None or beta is None:
        xtx_inv = np.linalg.pinv((x * n[:, None]).T @ x, hermitian=True)
        beta = xtx_inv @ (x.T @ (n * mean))
    q = float(n @ (mean - x @ beta) ** 2) / sigma2  # Cochran's Q about the plain (weights n_t / sigma^2) fit
    g2 = (x * (n * n)[:, None]).T @ x
    denom = (hands - float(np.trace(xtx_inv @ g2))) / sigma2
    tau2 = max(q - dof_t, 0.0) / denom if denom > 0 else 0.0
    w = 1.0 / (sigma2 / n + tau2)
    m_inv = np.linalg.pinv((x * w[:, None]).T @ x, hermitian=True)
    fit = m_inv @ (x.T @ (w * mean))
    scatter = float(w @ (mean - x @ fit) ** 2) / dof_t
    return fit, np.diag(m_inv)[:-1] * max(1.0, scatter)


def _one_at_a_time(n: np.ndarray, mean: np.ndarray, cols: np.ndarray, p: int, sigma2: float, hands: int
                   ) -> tuple[np.ndarray, np.ndarray, int]:
    """Each co-player's coefficient on its own (tables with it against tables without it, the others' effects left
    in the tables' spread), read on a t with tables - 2 degrees of freedom: for an actor who sat with more co-players
    than tables (long sittings in a big room), where the joint fit has none. A co-player needs 2 tables with it and 2
    without; too few tables in all (fewer than MIN_TABLE_DOF + 2): no evidence (0 degrees of freedom).

    :func:`_random_tables` of each co-player's design (its tables' indicator and the intercept), for every co-player
    at once: with two columns the fits have closed forms (a co-player's coefficient is the weighted mean of its
    tables less that of the others), so the room's actors x co-players fits are a few array operations each actor,
    not a Python loop of small solves (the same figures to rounding, ``tests/test_think_linear.py``)."""
    k = len(n)
    fit, var = np.zeros(p), np.full(p - 1, np.inf)
    dof = k - 2
    if dof < MIN_TABLE_DOF:
        return fit, var, 0
    seated = np.unique(np.arange(k)[:, None] * p + cols)  # (table, co-player) once each
    m = np.bincount(seated % p, minlength=p)[:p - 1]  # tables with each co-player
    ok = np.flatnonzero((m >= 2) & (k - m >= 2))
    step = max(1, BLOCK_CELLS // k)  # co-players a block: its arrays of co-players x tables stay a few MB
    for at in range(0, len(ok), step):
        js = ok[at:at + step]
        h = np.zeros((len(js), k))  # co-player x table: 1 where the co-player sat at the table
        where = np.full(p - 1, -1)
        where[js] = np.arange(len(js))
        t, s = np.nonzero(where[cols] >= 0)
        h[where[cols[t, s]], t] = 1.0
        fit[js], var[js] = _tables_with(h, n, mean, sigma2, hands, dof)
    return fit, var, dof


#: Cells (co-players x tables) of one block of :func:`_one_at_a_time`'s fits.
BLOCK_CELLS = 1 << 19


def _tables_with(h: np.ndarray, n: np.ndarray, mean: np.ndarray, sigma2: float, hands: int, dof: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_random_tables` of each row's design (``h``: co-players x tables, 1 where it sat; and the intercept):
    each co-player's coefficient and its Knapp-Hartung variance, by the two-column design's closed forms."""

    def line(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per co-player, the fit of ``mean`` on (its indicator, 1) with table weights ``w`` (co-players x tables,
        or tables): its coefficient and intercept, and the inverse normal matrix' first diagonal element."""
        w = np.broadcast_to(w, h.shape)
        with_ = (w * h).sum(axis=1)
        all_ = w.sum(axis=1)
        u, v = (w * h) @ mean, w @ mean
        intercept = (v - u) / (all_ - with_)  # the tables without it
        return u / with_ - intercept, intercept, all_ / (with_ * (all_ - with_))

    b, c, _ = line(n)  # the plain fit (weights n_t / sigma^2)
    q = ((mean - b[:, None] * h - c[:, None]) ** 2) @ n / sigma2  # Cochran's Q about it
    with_, all_ = h @ n, float(n.sum())
    nn_with, nn_all = h @ (n * n), float(n @ n)
    trace = (all_ * nn_with - 2.0 * with_ * nn_with + with_ * nn_all) / (with_ * (all_ - with_))
    denom = (hands - trace) / sigma2
    tau2 = np.where(denom > 0, np.maximum(q - dof, 0.0) / np.where(denom > 0, denom, 1.0), 0.0)
    w = 1.0 / (sigma2 / n[None, :] + tau2[:, None])
    b, c, inv00 = line(w)
    scatter = (w * (mean - b[:, None] * h - c[:, None]) ** 2).sum(axis=1) / dof
    return b, inv00 * np.maximum(1.0, scatter)


def _think(lk: pd.DataFrame) -> pd.DataFrame:
    """Secondary: is the actor slower, for the difficulty, in hands with this seat than without?

    Each actor's log think time is fitted on difficulty (its own pace); per hand the mean
    residual, regressed on who else sat at the table (one indicator per co-player); the z of a
    co-player's coefficient. Solved from sufficient statistics (:class:`ThinkStats`, which can also
    be fed batch by batch): cost linear in hands, memory the number of co-players squared.
    """
    t = lk[lk["offset"] == 1]  # one copy of each decision; its row in the decisions gives the table
    base = t.rename(columns={"actor": "player"})[["player", "hand_id", "think_ms", "difficulty"]]
    seats = t[["row"]].merge(_table_of(lk), on="row", how="left")
    stats_ = ThinkStats()
    stats_.add_decisions(pd.concat([base.reset_index(drop=True), seats[["p0", "p1", "p2", "p3"]]], axis=1))
    return stats_.result()


def _table_of(lk: pd.DataFrame) -> pd.DataFrame:
    """Per decision row: the four players at its table (the actor and the three others of its links)."""
    first = lk.drop_duplicates("row").set_index("row")
    out = pd.DataFrame({"row": first.index, "p0": first["actor"].to_numpy()})
    for k in (1, 2, 3):
        at = lk[lk["offset"] == k].drop_duplicates("row").set_index("row")["other"]
        out[f"p{k}"] = at.reindex(first.index).to_numpy()
    return out


def hands_together(seating: pd.DataFrame) -> pd.Series:
    """Hands each unordered pair sat at one table, from a frame with hand_id, p0..p3."""
    names = seating[["p0", "p1", "p2", "p3"]].to_numpy(object)
    pairs: dict[tuple[str, str], int] = {}
    for row in names:
        ps = sorted(map(str, row))
        for i in range(SEATS):
            for j in range(i + 1, SEATS):
                key = (ps[i], ps[j])
                pairs[key] = pairs.get(key, 0) + 1
    idx = pd.MultiIndex.from_tuples(list(pairs), names=["a", "b"]) if pairs else pd.MultiIndex.from_tuples(
        [], names=["a", "b"])
    return pd.Series(list(pairs.values()), index=idx, dtype=np.int64, name="hands_together")


@dataclass(frozen=True)
class Signals:
    """The pair table and the links it was computed from (the evidence reads the links)."""

    pairs: pd.DataFrame
    links: pd.DataFrame
    effects: SeatEffects


def _fit_links(df: pd.DataFrame, eff: SeatEffects) -> pd.DataFrame:
    """Centred links in two passes: the second fits the room's baselines without the decisions
    of directed pairs that already stand out (robust to a strong pair in a small room)."""
    lk = link_statistics(links(df, eff))
    suspect = np.zeros(len(lk), bool)
    for name in LINK_SIGNALS:
        d = _directed(lk, name)
        hot = d.index[d["z"] > SUSPECT_Z]
        if len(hot):
            suspect |= pd.MultiIndex.from_arrays([lk["actor"], lk["other"]]).isin(hot)
    if not suspect.any():
        return lk
    bad_rows = np.unique(lk["row"].to_numpy()[suspect])
    return link_statistics(lk, use=~np.isin(lk["row"].to_numpy(), bad_rows))


def _by_direction(out: pd.DataFrame, table: pd.DataFrame, prefix: str, fields: dict[str, str]) -> None:
    """Copy a directed (actor, other) table into the pair table as ``prefix_ab_*`` and ``prefix_ba_*``."""
    for tag, (x, y) in (("ab", ("a", "b")), ("ba", ("b", "a"))):
        idx = pd.MultiIndex.from_arrays([out.index.get_level_values(x), out.index.get_level_values(y)])
        sub = table.reindex(idx)
        for src, dst in fields.items():
            out[f"{prefix}_{tag}_{dst}"] = sub[src].to_numpy(np.float64)


def pair_signals(df: pd.DataFrame, *, seating: pd.DataFrame | None = None,
                 options: SignalOptions = SignalOptions()) -> Signals:
    """One row per unordered pair (a < b) that sat together: every signal in both directions.

    Columns: ``a, b, hands_together``; for each signal S in LINK_SIGNALS ``S_ab_*`` (a acting
    towards b) and ``S_ba_*``; ``think_ab_*``/``think_ba_*``; co-deviation ``codev_*``.
    ``burst_ab_*``/``burst_ba_*``: occasional collusion (see :func:`_burst`).
    ``seating`` (hand_id, p0..p3 per hand) gives exact hands together; by default the hands
    with decision rows.
    """
    if seating is None:
        seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    out = hands_together(seating).to_frame()
    eff = seat_effects(df)
    lk = _fit_links(df, eff)
    fields = ("hands", "decisions", "z", "per_hand", "se_per_hand", "raw_per_hand")
    for name in LINK_SIGNALS:
        _by_direction(out, _directed(lk, name), name, {f: f for f in fields})
    _by_direction(out, _think(lk).set_index(["actor", "other"]), "think",
                  {"z": "z", "hands_with": "hands", "slower_ms_ratio": "ratio"})
    # burst reads each decision's favour weighted by how little the actor's own choice model foresaw it
    finish_pairs(out, _burst(weighted_links(lk, choice_weights(df))), _codeviation(lk, options))
    return Signals(out.reset_index(), lk, eff)


def finish_pairs(out: pd.DataFrame, burst: pd.DataFrame, codev: pd.DataFrame) -> None:
    """The pair table's last columns, the same for the in-memory and the streamed signals: the burst
    statistic by direction, co-deviation, and 0 for the z's and log p's of pairs a signal never saw."""
    burst = burst.copy()
    for z, logp in (("z", "logp"), ("z_count", "logp_count")):
        burst[z] = -special.ndtri_exp(np.minimum(burst[logp].to_numpy(np.float64), np.log(P_MAX)))
    _by_direction(out, burst, "burst", {"z": "z", "logp": "logp", "hands": "hands", "above": "above",
                                         "expected": "expected", "level": "level", "z_mean": "z_mean",
                                         "z_count": "z_count", "mean_percentile": "mean_percentile",
                                         "percentile_se": "percentile_se"})
    cd = codev.reindex(out.index)
    out["codev_both_deviated"] = cd["both_deviated"].fillna(0).to_numpy(np.int64)
    out["codev_observed"] = cd["observed"].fillna(0).to_numpy(np.int64)
    out["codev_expected"] = cd["expected"].fillna(0.0).to_numpy(np.float64)
    out["codev_z"] = cd["z"].fillna(0.0).to_numpy(np.float64)
    z_cols = [c for c in out.columns if c.endswith("_z")]
    out[z_cols] = out[z_cols].fillna(0.0)
    logp_cols = [c for c in out.columns if c.endswith("_logp")]
    out[logp_cols] = out[logp_cols].fillna(0.0)
