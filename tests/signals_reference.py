"""The pair signals written plainly, every link of a room in one pandas frame: the reference the audit's
chunked passes (``analyzer.audit.signals``, run by ``analyzer.audit.stream`` and ``analyzer.audit.on_dask``) are
checked against. The same definitions in another form: links centred with groupbys over the whole room, the seat
habit with merges, the directed z's from per-hand groupbys. Slow and memory-hungry; for tests only."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analyzer.audit.burst import _burst, choice_weights, weighted_links
from analyzer.audit.signals import (
    CLIP_QUANTILE,
    HABIT_CHECKED,
    HABIT_LINKS,
    LINK_SIGNALS,
    REGRET_BINS,
    SEATS,
    SHRINK_HANDS,
    SUSPECT_Z,
    SeatEffects,
    SignalOptions,
    _by_direction,
    codeviation_of,
    deviation_hands,
    finish_pairs,
    hands_together,
    seat_effects,
)
from analyzer.audit.think import think_table


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
    for favour and a noisy habit estimate cannot create any. The per-hand mean and its error are
    the reading's whose z counts.
    """
    out, se_sum, total = _per_hand_z(lk, name, with_raw=True)
    out["per_hand"] = total / out["hands"]
    out["se_per_hand"] = se_sum / out["hands"]
    if f"{name}_habit_free" in lk.columns:  # the smaller reading's z, and its per-hand mean and error with it
        free_out, free_se, free_total = _per_hand_z(lk, f"{name}_habit_free")
        free = (free_out["z"].reindex(out.index) < out["z"]).to_numpy()
        out["z"] = np.where(free, free_out["z"].reindex(out.index), out["z"])
        out["per_hand"] = np.where(free, free_total.reindex(out.index) / out["hands"], out["per_hand"])
        out["se_per_hand"] = np.where(free, free_se.reindex(out.index) / out["hands"], out["se_per_hand"])
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


@dataclass(frozen=True)
class Signals:
    """The pair table and the links it was computed from."""

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


def reference_pair_signals(df: pd.DataFrame, *, seating: pd.DataFrame | None = None,
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
    _by_direction(out, think_table(df).set_index(["actor", "other"]), "think",
                  {"z": "z", "hands_with": "hands", "slower_ms_ratio": "ratio"})
    # burst reads each decision's favour weighted by how little the actor's own choice model foresaw it
    finish_pairs(out, _burst(weighted_links(lk, choice_weights(df))), _codeviation(lk, options))
    return Signals(out.reset_index(), lk, eff)

