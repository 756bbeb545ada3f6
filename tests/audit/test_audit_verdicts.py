"""Verdict tiers, log-space scores, the burst statistic of occasional collusion, evidence order, outcomes."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from analyzer.audit.burst import BURST_LEVELS, _burst_one, _logsumexp_rows, betabinom_logsf
from analyzer.audit.calibrate import (
    DIRECTED,
    Alarm,
    calibrate,
    hands_to_alarm,
    log_combine_directions,
    q_values,
    rank_pairs,
    z_of_logp,
)
from analyzer.audit.combine import contrasts, multiplicity, shipped
from analyzer.audit.evidence import directions, edge, pair_evidence
from analyzer.audit.outcomes import SEATING_COLUMNS, pair_outcomes


def test_scores_have_no_ceiling_and_keep_strong_cases_ordered() -> None:
    logp = log_combine_directions(np.array([40.0, 50.0, 60.0]), np.array([0.0, 0.0, 0.0]))
    assert np.all(np.isfinite(logp)) and logp[0] > logp[1] > logp[2]  # 1e-300 would have tied all three
    z = z_of_logp(logp)
    assert z[0] < z[1] < z[2] and z[2] > 55
    # the log-space p agrees with the plain one where the plain one is representable
    plain = 2 * min(1 - (1 - stats.norm.sf(3.0)) ** 2, stats.norm.sf(3.0 / math.sqrt(2)))
    assert math.isclose(math.exp(log_combine_directions(np.array([3.0]), np.array([0.0]))[0]), plain, rel_tol=1e-9)


def test_q_values_are_benjamini_hochberg() -> None:
    p = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205])
    q = q_values(p)
    m = len(p)
    manual = np.minimum.accumulate((p * m / np.arange(1, m + 1))[::-1])[::-1]
    assert np.allclose(q, np.minimum(manual, 1))


def test_a_q_below_double_precision_is_written_from_its_log_never_as_0() -> None:
    """A pair at p = 1e-454 among 119 (the demo room's): q underflows to 0, its log10 keeps it (-451.9), and the
    verdict sentence writes it from there; representable values are written as before."""
    from analyzer.audit.case import p_text, verdict_line

    assert p_text(0.0, -451.85) == "1.4e-452" and p_text(8.1e-99, -98.09) == "8.1e-99" and p_text(0.43) == "0.43"
    assert p_text(0.0, -2.0001) == "1e-2" and p_text(0.0, None) == "0"  # no log: what there is
    row = pd.Series({"verdict": "flagged", "score": 453.93, "q_value": 0.0, "log10_q": -451.85, "hands_to_alarm": 0.0})
    assert verdict_line(row)["args"][:2] == ["453.93", "1.4e-452"]
    assert verdict_line(row.drop("log10_q"))["args"][1] == "0"  # an older table without the column


def test_benjamini_hochberg_counts_only_the_pairs_that_can_be_marked() -> None:
    # 20 pairs with enough hands (3 of them with a strong exact favour) and 40 that sat together 3 hands:
    # the 40 are no hypothesis the audit tests, so they must not make the review threshold stricter
    rng = np.random.default_rng(4)
    n = 60
    t = pd.DataFrame({"a": [f"a{i:02d}" for i in range(n)], "b": [f"b{i:02d}" for i in range(n)],
                      "hands_together": [200] * 20 + [3] * 40, "codev_z": 0.0})
    for name in DIRECTED:
        for tag in ("ab", "ba"):
            t[f"{name}_{tag}_z"] = rng.normal(0.0, 1.0, n)
            t[f"burst_{tag}_z_mean"] = rng.normal(0.0, 1.0, n)
    t.loc[:2, ["imm_marginal_ab_z", "burst_ab_z_mean"]] = 4.0
    out = calibrate(t, Alarm())
    enough = out["hands_together"] >= 10
    assert (out.loc[~enough, "q_value"] == 1.0).all()
    assert np.allclose(out.loc[enough, "q_value"], q_values(out.loc[enough, "p_value"].to_numpy()))
    # the same three pairs are read against a family of 20, not 60: a smaller q than over all the pairs
    all_pairs = q_values(out["p_value"].to_numpy())[:3]
    assert np.all(out["q_value"].to_numpy()[:3] < all_pairs)
    assert set(out.loc[out["verdict"] != "clear", "a"]) <= set(out.loc[enough, "a"])


def test_the_pairs_z_is_the_normal_score_of_p_floored_at_zero() -> None:
    # most honest pairs end at p = 1 (five signals' best p times 5, capped): their z is 0, not the clamp's -7.03
    rng = np.random.default_rng(5)
    n = 60
    t = pd.DataFrame({"a": [f"a{i:02d}" for i in range(n)], "b": [f"b{i:02d}" for i in range(n)],
                      "hands_together": 200, "codev_z": 0.0})
    for name in DIRECTED:
        for tag in ("ab", "ba"):
            t[f"{name}_{tag}_z"] = rng.normal(0.0, 1.0, n) - 1.0
    t.loc[:2, "imm_marginal_ab_z"] = 5.0
    out = calibrate(t, Alarm())
    p = out["p_value"].to_numpy()
    assert (p >= 1.0).any() and (p < 0.5).any()
    assert (out.loc[p >= 0.5, "z"] == 0.0).all()
    low = p < 0.5
    assert np.allclose(out.loc[low, "z"], stats.norm.isf(p[low]))


def test_think_time_alone_is_review_at_most_and_counts_when_play_backs_it() -> None:
    """Slower together has innocent causes: a pair whose only signal is think time (z 20 both ways) is for review,
    never flagged, and says why; with a play signal that backs it (exact favour and its per-hand ranks, z 3.5 both
    ways) the same pair is flagged."""
    from analyzer.audit.case import verdict_line

    rng = np.random.default_rng(8)
    n = 80
    t = pd.DataFrame({"a": [f"a{i:02d}" for i in range(n)], "b": [f"b{i:02d}" for i in range(n)],
                      "hands_together": [300] * n, "codev_z": 0.0})
    play = [f"{name}_{tag}_z" for name in DIRECTED if name != "think" for tag in ("ab", "ba")]
    play += ["burst_ab_z_mean", "burst_ba_z_mean"]
    for name in play + ["think_ab_z", "think_ba_z"]:
        t[name] = rng.normal(0.0, 1.0, n)
    t.loc[0, ["think_ab_z", "think_ba_z"]] = 20.0  # chatty friends: slower together, nothing in the play
    t.loc[0, play] = 0.0
    t.loc[1, ["think_ab_z", "think_ba_z"]] = 20.0  # colluders: slower together and favouring each other
    t.loc[1, play] = 0.0
    t.loc[1, ["imm_marginal_ab_z", "imm_marginal_ba_z", "burst_ab_z_mean", "burst_ba_z_mean"]] = 3.5
    out = calibrate(t, Alarm())
    friends, colluders = out.iloc[0], out.iloc[1]
    assert friends["main_signal"] == "think" and friends["p_value"] < 1e-5  # strong enough for the alarm ...
    assert friends["verdict"] == "review" and bool(friends["corroboration_only"])  # ... but it is not raised
    assert np.isnan(friends["hands_to_alarm"])
    assert verdict_line(friends)["key"] == "verdict_review_corroboration"
    assert colluders["verdict"] == "flagged" and not colluders["corroboration_only"]
    assert verdict_line(colluders)["key"] == "verdict_flagged"


def test_hands_to_alarm_follows_the_square_root_law() -> None:
    alpha, k = 1e-5, multiplicity()
    assert k == pytest.approx(len(contrasts(shipped())) / shipped().weights["linear"])
    z_alpha = stats.norm.isf(alpha / k)
    # a pair whose single-contrast z is half the alarm's needs 4x the hands: 3x more
    log_p = np.array([stats.norm.logsf(z_alpha / 2) + math.log(k), stats.norm.logsf(z_alpha) + math.log(k)])
    more = hands_to_alarm(log_p, np.array([100, 100]), alpha)
    assert abs(more[0] - 300) <= 1 and more[1] == 0
    assert np.isnan(hands_to_alarm(np.array([0.0]), np.array([100]), alpha)[0])  # no effect: never


def test_ties_are_broken_by_effect_size() -> None:
    t = pd.DataFrame({"a": ["p1", "p2", "p3"], "b": ["q1", "q2", "q3"], "score": [0.0, 0.0, 2.0],
                      "effect_size": [0.01, 0.30, 0.0]})
    assert rank_pairs(t)["a"].tolist() == ["p3", "p2", "p1"]


def _scores(rng: np.random.Generator, extreme_share: float, shift: float, hands: int = 500) -> pd.DataFrame:
    """Per-hand favour of actor A towards B (with extreme hands) and towards 9 honest others."""
    rows = []
    for o in ["B", *[f"o{i}" for i in range(9)]]:
        x = rng.standard_normal(hands)
        if o == "B":
            hot = rng.random(hands) < extreme_share
            x[hot] += shift
        rows.append(pd.DataFrame({"actor": "A", "other": o, "hand_id": np.arange(hands), "x": x}))
    return pd.concat(rows, ignore_index=True)


def test_burst_finds_a_few_extreme_hands_that_barely_move_the_mean() -> None:
    rng = np.random.default_rng(3)
    df = _scores(rng, extreme_share=0.1, shift=4.0)
    b = _burst_one(df)
    partner = b.loc[("A", "B")]
    mean_z = df[df["other"] == "B"]["x"].mean() * math.sqrt(500)  # the always-on reading of the same hands
    assert partner["logp"] < math.log(1e-8) and partner["logp"] < stats.norm.logsf(mean_z)
    honest = b.drop(index=("A", "B"))["logp"]
    assert (honest > math.log(1e-3)).all()
    assert partner["above"] > partner["expected"] * 3


def test_burst_has_power_on_an_occasional_pair() -> None:
    # one hand in ten 2.5 actor-spreads out, the partner a third of the actor's hands: found far beyond
    # anything the honest seats show, and by a wide margin over the mean's reading alone
    rng = np.random.default_rng(8)
    found = []
    for _ in range(5):
        rows = [pd.DataFrame({"actor": "A", "other": "B", "hand_id": np.arange(500), "x": rng.standard_normal(500)})]
        hot = rng.random(500) < 0.1
        rows[0].loc[hot, "x"] += 2.5
        rows += [pd.DataFrame({"actor": "A", "other": f"o{k}", "hand_id": np.arange(250),
                               "x": rng.standard_normal(250)}) for k in range(4)]
        b = _burst_one(pd.concat(rows, ignore_index=True))
        found.append(b.loc[("A", "B"), "logp"])
        assert (b.drop(index=("A", "B"))["logp"] > math.log(1e-3)).all()
    assert np.median(found) < math.log(1e-6)


def _null_pvalues(rng: np.random.Generator, reps: int, partner_hands: int, others: int, other_hands: int,
                  draw: Callable[[int], np.ndarray]) -> np.ndarray:
    out = []
    for _ in range(reps):
        rows = [pd.DataFrame({"actor": "A", "other": "B", "hand_id": np.arange(partner_hands),
                              "x": draw(partner_hands)})]
        rows += [pd.DataFrame({"actor": "A", "other": f"o{k}", "hand_id": np.arange(other_hands), "x": draw(other_hands)})
                 for k in range(others)]
        out.append(_burst_one(pd.concat(rows, ignore_index=True)).loc[("A", "B"), "logp"])
    return np.exp(np.array(out))


def test_burst_is_calibrated_on_honest_hands() -> None:
    rng = np.random.default_rng(11)
    logs = np.concatenate([_burst_one(_scores(rng, 0.0, 0.0, hands=300))["logp"].to_numpy() for _ in range(20)])
    # a valid p-value: P(p <= u) <= u (Bonferroni over the looks makes it conservative)
    for u in (0.01, 0.05, 0.2):
        assert (np.exp(logs) <= u).mean() <= u + 0.03


def test_burst_stays_calibrated_for_a_friend_who_holds_a_third_of_the_hands() -> None:
    # Heavy tails (t, 3 d.f.) and a partner who sits in 2 of the actor's 3 directed hands' worth: the pool
    # of the others is then small next to the pair, and a count read against the pool's rate as if it were
    # exact rejects 4 times too often at 1% (the previous statistic); the beta-binomial tail does not.
    rng = np.random.default_rng(5)
    p = _null_pvalues(rng, 150, 300, 4, 150, lambda n: rng.standard_t(3, n))
    for u in (0.01, 0.05, 0.1):
        assert (p <= u).mean() <= u + 0.02


def test_beta_binomial_tail_stays_finite_far_out() -> None:
    v = betabinom_logsf(np.array([199]), 200, np.array([1.0]), np.array([99.0]))[0]  # all above the pool's max
    assert np.isfinite(v) and math.isclose(v, float(stats.betabinom.logpmf(200, 200, 1.0, 99.0)), rel_tol=1e-9)
    # the summed pmf (scipy's own logsf, 1 - cdf, is already 2% off in log at 5e-11 here)
    k, a, b = np.array([3, 12, 30]), np.array([11.0, 11.0, 6.0]), np.array([990.0, 990.0, 995.0])
    ref = [special.logsumexp(stats.betabinom.logpmf(np.arange(kk + 1, 501), 500, aa, bb)) for kk, aa, bb in zip(k, a, b)]
    assert np.allclose(betabinom_logsf(k, 500, a, b), ref, rtol=1e-9)



def test_row_logsumexp_is_scipys() -> None:
    rng = np.random.default_rng(5)
    t = rng.normal(0, 30, (40, 17))
    t[3] = -np.inf  # an empty tail
    t[4, 5:] = -np.inf
    t[5, :] = 2.5  # ties at the top
    t[6, 0] = 1e300
    assert np.array_equal(_logsumexp_rows(t), special.logsumexp(t, axis=1))


def test_burst_counts_each_pairs_hands_above_the_pools_levels() -> None:
    """The count look's pool quantiles and counts (taken from the actor's hands sorted once) are those of the
    definition: the pair's hands above the pool's order statistic, the pool sorted on its own; ties included."""
    rng = np.random.default_rng(11)
    x = np.round(rng.normal(0, 1, 400), 1)  # many ties
    other = rng.choice(["p1", "p2", "p3", "p4", "p5"], 400)
    scores = pd.DataFrame({"actor": "A", "other": other, "hand_id": np.arange(400), "x": x})
    out = _burst_one(scores, 0.0)
    levels = np.array(BURST_LEVELS)
    for o in np.unique(other):
        mine, pool = x[other == o], np.sort(x[other != o])
        j = np.minimum(np.floor(levels * len(pool)).astype(np.int64), len(pool) - 1)
        above = np.array([int((mine > c).sum()) for c in pool[len(pool) - 1 - j]])
        row = out.loc[("A", o)]
        assert row["hands"] == len(mine)
        assert row["above"] == above[BURST_LEVELS.index(row["level"])]
        lp = np.where(above > 0, betabinom_logsf(above - 1, len(mine), j + 1.0, len(pool) - j.astype(np.float64)), 0.0)
        assert row["logp_count"] == pytest.approx(min(0.0, lp.min() + math.log(len(BURST_LEVELS))))
        assert row["logp_mean"] == pytest.approx(float(stats.norm.logsf(row["z_mean"])))

def _decision(hand: str, action: int, seat: int, players: list[str], dd: list[float], imm: list[float],
              chosen: str = "8H", best: str = "6H") -> dict:
    return {"hand_id": hand, "hand_seq": 0, "action": action, "seat": seat, "player": players[seat],
            **{f"p{k}": players[k] for k in range(4)}, "kind": "play", "chosen": chosen, "best": best,
            "regret": 1.0, "regret_se": 0.1, **{f"delta{k}": 0.0 for k in range(4)},
            **{f"dd_delta{k}": dd[k] for k in range(4)}, **{f"imm{k}": imm[k] for k in range(4)},
            "think_ms": 900.0, "difficulty": 0.5, "reasons": ""}


def test_point_evidence_is_ranked_by_the_true_deal_edge_and_drops_rows_without_one() -> None:
    seats = ["F", "x", "R", "y"]  # feeder F at seat 0, receiver R at seat 2
    rows = pd.DataFrame([
        _decision("h1", 3, 0, seats, [0, -2, 10, -2], [0, 0, 1, 0]),   # edge 12
        _decision("h1", 7, 0, seats, [0, 1, 30, -1], [0, 0, 2, -1]),   # edge 30 (uncapped: first)
        _decision("h2", 5, 0, seats, [0, 0, 0, 0], [0, 0, 0, 0], chosen="6H"),  # the sensible choice: no edge
        _decision("h2", 9, 0, seats, [0, 5, -3, 5], [0, 1, 0, 1]),     # helped the opponents: dropped
        _decision("h3", 2, 2, seats, [0, 0, 0, 50], [0, 0, 0, 0]),     # the receiver's move
        _decision("h3", 4, 2, seats, [20, 0, 0, 0], [1, 0, 0, 0]),     # the receiver helping the feeder: edge 20
    ])
    both = pair_evidence(rows, "F", "R", signal="dd_marginal")  # a true-deal points signal fired
    assert [(e["hand_id"], e["action"]) for e in both] == [("h1", 7), ("h3", 4), ("h1", 3)]
    assert [e["edge"] for e in both] == [30.0, 20.0, 12.0]
    assert both[0]["direction"] == "F -> R" and both[0]["effect_true_deal"]["partner"] == 30.0
    only_feeder = pair_evidence(rows, "F", "R", actors=["F"], signal="dd_marginal")
    assert [e["actor"] for e in only_feeder] == ["F", "F"]


def test_directions_keep_only_the_actor_who_could_know() -> None:
    assert directions(8.0, 0.3) == [0]
    assert directions(-0.5, 6.0) == [1]
    assert directions(5.0, 4.0) == [0, 1]


def test_edge_is_partner_minus_mean_of_the_opponents() -> None:
    v = np.array([[1.0, 4.0, 0.0, 2.0]])
    assert edge(v, np.array([0]), np.array([1]))[0] == 3.0


def test_outcomes_together_apart_and_room() -> None:
    rows = []
    for h in range(40):  # A and B together in the even hands, A with others in the odd ones
        together = h % 2 == 0
        players = ["A", "B", "C", "D"] if together else ["A", "E", "C", "D"]
        scores = [10, 10, -10, -10] if together else [-5, 5, 0, 0]
        tong = [1.0, 0.0, 0.0, 0.0] if together else [0.0, 0.0, 0.0, 0.0]
        rows.append((f"h{h}", *players, *map(float, scores), *tong))
    seating = pd.DataFrame(rows, columns=list(SEATING_COLUMNS))
    o = pair_outcomes(seating, "A", "B")
    assert o["hands_together"] == 20 and o["score_together"] == 20.0 and o["score_together_se"] == 0.0
    assert o["score_apart"] is None  # B never sat without A: no "apart" figure for B
    assert o["tong_together"] == 0.5 and o["tong_apart"] == 0.0
    assert o["typical"] == 0.0 and o["typical_sd"] is not None and o["typical_sd"] > 0


def test_case_labels_cover_every_key_the_case_data_names() -> None:
    from analyzer.audit.calibrate import DIRECTED, VERDICTS
    from analyzer.audit.case import ROWS
    from analyzer.report.common import LABELS

    signals = {s for s, _, _ in ROWS} | {"codev"}
    keys = {f"{p}{s}" for s in signals for p in ("sig_", "meaning_")}
    keys |= {f"lead_{s}" for s in (*DIRECTED, "burst", "codev") if s != "think"} | {"lead_think", "lead_burst_mean"}
    keys |= {f"verdict_{v}" for v in VERDICTS} | {f"verdict_{v}_short" for v in VERDICTS}
    keys |= {f"unit_{u}" for _, _, u in ROWS if u} | {f"gl_term_{k}" for k in ("score", "z", "p", "q", "flagged", "review")}
    keys |= {f"gl_{k}" for k in ("score", "z", "p", "q", "flagged", "review")}
    for lang in ("en", "zh"):
        assert keys <= set(LABELS[lang]), keys - set(LABELS[lang])


def _pair_row(scores: pd.DataFrame) -> pd.Series:
    """The pair table's row of A and B from directed per-hand scores (both directions), as the audit builds it."""
    from analyzer.audit.calibrate import burst_logp
    from analyzer.audit.signals import finish_pairs

    out = pd.DataFrame({"hands_together": [int((scores["actor"].eq("A") & scores["other"].eq("B")).sum())]},
                       index=pd.MultiIndex.from_tuples([("A", "B")], names=["a", "b"]))
    finish_pairs(out, _burst_one(scores), pd.DataFrame(columns=["both_deviated", "observed", "expected", "z"]))
    row = out.reset_index().iloc[0].copy()
    row["main_signal"] = "burst"
    row["burst_logp"] = float(burst_logp(out.reset_index())[0])
    return row


def _two_way(rng: np.random.Generator, shift: Callable[[int], np.ndarray], hands: int = 500) -> pd.DataFrame:
    """A and B each with 4 honest others (and each other); A's hands towards B shifted by ``shift``."""
    rows = []
    for actor, partner in (("A", "B"), ("B", "A")):
        for o in [partner, *[f"{actor}{k}" for k in range(4)]]:
            x = rng.standard_normal(hands)
            if (actor, o) == ("A", "B"):
                x = x + shift(hands)
            rows.append(pd.DataFrame({"actor": actor, "other": o, "hand_id": np.arange(hands), "x": x,
                                      "offset": rng.integers(1, 4, hands)}))
    return pd.concat(rows, ignore_index=True)


def test_case_lead_states_the_burst_look_that_fired() -> None:
    from analyzer.audit.case import burst_look, case_details, lead

    rng = np.random.default_rng(21)
    # many hands a little favoured: the mean look fires; the lead counts the hands above the level (more than a
    # typical pair's) and the detail below it gives the hands' mean percentile
    row = _pair_row(_two_way(rng, lambda n: np.full(n, 0.4)))
    assert burst_look(row) == "mean"
    sentence = lead(row)
    assert sentence["key"] == "lead_burst" and sentence["actor"] == "A" and sentence["partner"] == "B"
    assert int(sentence["args"][2]) > float(sentence["args"][5]) + 2 * float(sentence["args"][6])
    detail = case_details(row, ["A"])["detail"]
    assert detail["key"] == "detail_burst_mean"
    pct, hands, se = float(detail["args"][2]), int(detail["args"][3]), float(detail["args"][4])
    assert hands == 500 and pct > 50 + 4 * se and 0 < se < 2  # N(0.4, 1) vs N(0, 1): about the 61st percentile
    # a few hands far out: the count look fires, and the sentence counts the hands above the actor's top level
    row = _pair_row(_two_way(rng, lambda n: np.where(rng.random(n) < 0.05, 8.0, 0.0)))
    assert burst_look(row) == "count"
    sentence = lead(row)
    assert sentence["key"] == "lead_burst" and sentence["actor"] == "A"
    assert int(sentence["args"][2]) > 3 * float(sentence["args"][5])  # above vs expected


def test_burst_mean_look_reads_the_seat_habit_within_each_seat() -> None:
    # A always treats the seat after it better (+0.8 a hand) and its friend F sits there in most of their hands
    # together, with no favour at all: an unstratified mean of ranks would call that favour, the look by seat not
    rng = np.random.default_rng(4)
    ps = []
    for _ in range(30):
        rows = []
        for o, hands, p_next in (("F", 300, 0.8), *((f"o{k}", 150, 1 / 3) for k in range(4))):
            off = np.where(rng.random(hands) < p_next, 1, rng.integers(2, 4, hands))
            rows.append(pd.DataFrame({"actor": "A", "other": o, "hand_id": np.arange(hands), "offset": off,
                                      "x": rng.standard_normal(hands) + 0.8 * (off == 1)}))
        b = _burst_one(pd.concat(rows, ignore_index=True))
        ps.append(float(stats.norm.sf(b.loc[("A", "F"), "z_mean"])))
        plain = _burst_one(pd.concat(rows, ignore_index=True).drop(columns="offset"))
        assert plain.loc[("A", "F"), "z_mean"] > 2.5  # the habit, read as favour without the seats
    assert (np.array(ps) <= 0.05).mean() <= 0.05 + 0.1


def test_burst_pair_p_adds_both_directions_of_the_mean_look() -> None:
    from analyzer.audit.calibrate import burst_logp

    # sharing in both directions, each a little: the Stouffer sum of the two mean looks beats either alone
    t = pd.DataFrame({"burst_ab_z_mean": [3.0], "burst_ba_z_mean": [3.0], "burst_ab_z_count": [0.0],
                      "burst_ba_z_count": [0.0]})
    both = float(burst_logp(t)[0])
    one = float(burst_logp(t.assign(burst_ba_z_mean=0.0))[0])
    assert both < one - 3 and math.isclose(both, math.log(2 * 2) + stats.norm.logsf(6 / math.sqrt(2)), rel_tol=1e-9)
    # older tables (one directed z each) still read
    assert math.isclose(float(burst_logp(pd.DataFrame({"burst_ab_z": [3.0], "burst_ba_z": [0.0]}))[0]),
                        float(log_combine_directions(3.0, 0.0)), rel_tol=1e-12)


def _choice_room(seed: int, *, hands: int = 300, others: int = 5, share: float = 0.0, friend_spread: float = 1.0,
                 a: float = 3.0, decisions: int = 8) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic decisions of one actor: 3 options a decision with losses and the other seat's gain g of each.
    The actor picks by P(k) ∝ exp(-a loss_k); with the partner p0, in ``share`` of its hands it picks the option
    best for p0 (largest g). ``friend_spread`` scales the gains in p0's hands (a friend whose seat the
    actor's choices can give more or less to), without any favour. Returns the per-link frame (actor, other,
    hand_id, offset, imm_marginal = g_chosen - mean g) and the decisions' losses, gains and choices."""
    rng = np.random.default_rng(seed)
    n = (others * hands) * decisions
    loss = rng.exponential(1.0, (n, 3))
    loss -= loss.min(axis=1, keepdims=True)
    other = np.repeat(np.arange(others), hands * decisions)
    hand = np.repeat(np.arange(others * hands), decisions)
    g = rng.normal(0.0, 1.0, (n, 3)) * np.where(other == 0, friend_spread, 1.0)[:, None]
    p = np.exp(-a * loss)
    p /= p.sum(axis=1, keepdims=True)
    chosen = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    colluding = (other == 0) & np.isin(hand, rng.choice(hands, int(share * hands), replace=False))
    chosen = np.where(colluding, np.argmax(g, axis=1), chosen)
    x = g[np.arange(n), chosen] - g.mean(axis=1)
    lk = pd.DataFrame({"actor": "A", "other": [f"p{o}" for o in other], "hand_id": hand, "offset": 1 + other % 3,
                       "imm_marginal": x, "row": np.arange(n)})
    return lk, loss, chosen, g


def test_choice_weight_is_the_score_residual_with_two_options() -> None:
    from analyzer.audit.burst import weights_of

    rng = np.random.default_rng(3)
    loss = np.c_[np.zeros(50), rng.exponential(1.0, 50), np.full(50, np.inf)]
    chosen = rng.integers(0, 2, 50)
    g = rng.normal(size=(50, 2))
    w = weights_of(loss, np.zeros_like(loss), chosen, np.full(50, 2.0), np.zeros(50), floor=0.0)
    p = np.exp(-2.0 * loss[:, :2])
    p /= p.sum(axis=1, keepdims=True)
    ar = np.arange(50)
    # (1 - P(chosen)) n / (n - 1) times "chosen minus the options' mean" is "chosen minus its expectation"
    assert np.allclose(w * (g[ar, chosen] - g.mean(axis=1)), g[ar, chosen] - (p * g).sum(axis=1))
    one = weights_of(np.c_[np.zeros(3), np.full((3, 2), np.inf)], np.zeros((3, 3)), np.zeros(3, np.int64),
                     np.ones(3), np.zeros(3))
    assert np.allclose(one, 1.0)  # a forced decision: nothing to weigh, nothing changed


def test_choice_model_grid_fit_recovers_the_sensitivity() -> None:
    from analyzer.audit.burst import CHOICE_GRID, choice_loglik, grid_fit

    _lk, loss, chosen, _g = _choice_room(1, hands=100, a=3.0)
    a, b = grid_fit(choice_loglik(loss, np.zeros_like(loss), chosen, np.zeros(len(loss), np.int64), 1))
    assert a[0] == 3.0 and b[0] == 0.0  # the grid point nearest the truth; no reference losses: b stays 0
    # chunks add up: the sums over two halves are the sum over the whole
    half = len(loss) // 2
    parts = sum(choice_loglik(loss[s], np.zeros_like(loss[s]), chosen[s], np.zeros(len(loss[s]), np.int64), 1)
                for s in (slice(0, half), slice(half, None)))
    assert np.allclose(parts, choice_loglik(loss, np.zeros_like(loss), chosen, np.zeros(len(loss), np.int64), 1))
    assert len(CHOICE_GRID) ** 2 == parts.shape[1]


def test_choice_weights_raise_burst_power_on_an_occasional_pair() -> None:
    from analyzer.audit.burst import hand_scores, weighted_links, weights_of

    z_plain, z_weighted = [], []
    for seed in range(8):  # a decisive actor (a = 8), colluding in 1 of 10 hands with p0
        lk, loss, chosen, _g = _choice_room(seed, share=0.1, a=8.0)
        w = weights_of(loss, np.zeros_like(loss), chosen, np.full(len(loss), 8.0), np.zeros(len(loss)))
        z_plain.append(_burst_one(hand_scores(lk)).loc[("A", "p0"), "z_mean"])
        z_weighted.append(_burst_one(hand_scores(weighted_links(lk, w))).loc[("A", "p0"), "z_mean"])
    # a sure choice says nothing about the partner: leaving (most of) its luck out makes the colluding hands stand
    # out (the unmixed weights gain more, +0.42 here, but trust the fitted model fully: see the next test)
    assert np.mean(z_weighted) > np.mean(z_plain) + 0.15
    assert (np.array(z_weighted) > np.array(z_plain)).sum() >= 7


def test_choice_weights_are_mixed_with_one_so_no_decision_outweighs_another_sevenfold() -> None:
    from analyzer.audit.burst import CHOICE_WEIGHT_FLOOR, weights_of

    rng = np.random.default_rng(4)
    loss = np.c_[np.zeros(400), rng.exponential(1.0, (400, 2))]
    chosen = rng.integers(0, 3, 400)
    # a near-deterministic actor (a = 50): almost every weight would be 0 or the 1.5 of a surprising choice
    raw = weights_of(loss, np.zeros_like(loss), chosen, np.full(400, 50.0), np.zeros(400), floor=0.0)
    w = weights_of(loss, np.zeros_like(loss), chosen, np.full(400, 50.0), np.zeros(400))
    assert raw.min() < 1e-6 and raw.max() > 1.4
    f = CHOICE_WEIGHT_FLOOR
    assert f > 0 and np.allclose(w, f + (1 - f) * raw)
    assert w.min() >= f and w.max() <= 2 - f and w.max() / w.min() <= (2 - f) / f


def test_choice_fit_rows_do_not_depend_on_the_chunking(monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.audit import burst

    df = pd.DataFrame({"hand_id": [f"h{k // 30}" for k in range(3000)], "action": np.arange(3000) % 30})
    monkeypatch.setattr(burst, "FIT_EVERY", 4)
    m = burst.fit_rows(df)
    assert 0.2 < m.mean() < 0.3  # about one in FIT_EVERY
    shuffled = df.sample(frac=1.0, random_state=2)
    parts = np.concatenate([burst.fit_rows(shuffled.iloc[i:i + 700]) for i in range(0, 3000, 700)])
    assert np.array_equal(parts, m[shuffled.index.to_numpy()])  # a row's place in the fit is its own
    assert np.array_equal(burst.fit_rows(df.astype({"action": np.int32})), m)
    monkeypatch.setattr(burst, "FIT_EVERY", 1)
    assert burst.fit_rows(df).all()


def test_choice_weighted_burst_is_calibrated_with_a_friend_who_changes_what_the_choices_give() -> None:
    from analyzer.audit.burst import hand_scores, weighted_links, weights_of

    p = []
    for seed in range(100):
        # no favour; in the friend's hands (a fifth of the actor's) the gains spread twice as wide
        lk, loss, chosen, _g = _choice_room(100 + seed, hands=100, friend_spread=2.0)
        w = weights_of(loss, np.zeros_like(loss), chosen, np.full(len(loss), 3.0), np.zeros(len(loss)))
        p.append(math.exp(_burst_one(hand_scores(weighted_links(lk, w))).loc[("A", "p0"), "logp_mean"]))
    p = np.array(p)
    assert (p <= 0.05).mean() <= 0.09 and (p <= 0.2).mean() <= 0.27


def test_choice_loglik_takes_each_decisions_own_options_and_equals_the_padded_softmax() -> None:
    """The grid log-likelihoods, computed per number of options (finite entries anywhere in the padded row), equal
    the plain log-softmax over each padded row at every grid point, summed per group."""
    from analyzer.audit.burst import CHOICE_GRID, choice_loglik

    rng = np.random.default_rng(5)
    d = 700
    loss = rng.gamma(1.0, 1.0, (d, 13))
    ref = rng.normal(0.0, 1.0, (d, 13))
    n_opt = rng.integers(1, 8, d)
    for i, n in enumerate(n_opt):  # finite options at scattered places, inf elsewhere
        keep = rng.choice(13, n, replace=False)
        mask = np.ones(13, bool)
        mask[keep] = False
        loss[i, mask] = np.inf
    chosen = np.array([rng.choice(np.flatnonzero(np.isfinite(row))) for row in loss])
    groups = rng.integers(0, 4, d)
    got = choice_loglik(loss, ref, chosen, groups, 4)
    want = np.zeros_like(got)
    g = len(CHOICE_GRID)
    fin = np.isfinite(loss)
    for i, a in enumerate(CHOICE_GRID):
        for j, b in enumerate(CHOICE_GRID):
            z = np.where(fin, -(a * np.where(fin, loss, 0.0) + b * np.where(fin, ref, 0.0)), -np.inf)
            ll = z[np.arange(d), chosen] - special.logsumexp(z, axis=1)
            want[:, i * g + j] = np.bincount(groups, ll, 4)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-8)


def test_burst_reads_a_colluders_other_pairs_without_the_partners_hands() -> None:
    """A colluder disfavours the two others in the hands with the partner; his ordinary hands with a bystander who
    never sits with both must not read as favour: the second reading leaves the partner's hands out."""
    from analyzer.audit.burst import BURST_HOT_Z, _burst, _burst_read

    rng = np.random.default_rng(8)
    rows = []
    for h in range(600):
        with_partner = h % 3 == 0
        table = ["P", "o1", "o2"] if with_partner else (["o3", "B", "o2"] if h % 3 == 1 else ["o3", "o1", "o2"])
        for k, other in enumerate(table):
            x = rng.normal()
            if with_partner:
                x += 2.0 if other == "P" else -1.0
            rows.append(("A", other, h, k + 1, x))
    lk = pd.DataFrame(rows, columns=["actor", "other", "hand_id", "offset", "imm_marginal"])
    once, twice = _burst_read(lk), _burst(lk)
    assert once.loc[("A", "P"), "z_mean"] > BURST_HOT_Z  # the partner stands out ...
    assert once.loc[("A", "B"), "z_mean"] > 3.0  # ... and makes the bystander look favoured against that pool
    assert abs(twice.loc[("A", "B"), "z_mean"]) < 2.0  # read on A's hands without P: nothing
    # the bystander passed BURST_HOT_Z too, so the partner is read without its hands: still far out
    assert twice.loc[("A", "P"), "z_mean"] > BURST_HOT_Z and twice.loc[("A", "P"), "logp"] < -100


def _habit_room(seed: int) -> pd.DataFrame:
    """Per-hand favour scores of a room of seat-habit players, with one table that never re-forms and one colluder.

    16 players at mixed tables (3 others drawn at random, random seats), each with a personal habit towards each
    seat offset (N(0, 0.4) a hand); A and B sit at one table with C and D for all of their 60 hands (B always at
    A's offset 1, A at B's offset 3), each with a habit of +0.6 towards that seat and no favour at all; E colludes
    with F (+0.8 a hand together, F in about a third of E's hands, at random seats)."""
    rng = np.random.default_rng(seed)
    names = [f"p{k:02d}" for k in range(16)]
    rows: list[tuple[str, str, int, int, float]] = []
    for actor in names + ["E"]:
        habit = rng.normal(0.0, 0.4, 4)
        for h in range(240):
            if actor == "E" and h % 3 == 0:
                others = ["F", *rng.choice(names, 2, replace=False)]
            else:
                others = list(rng.choice(names + ["F"] * 0, 3, replace=False))
            others = [o for o in others if o != actor][:3]
            offsets = rng.permutation([1, 2, 3])[:len(others)]
            for o, k in zip(others, offsets):
                x = rng.normal() + habit[k] + (0.8 if (actor, o) == ("E", "F") else 0.0)
                rows.append((actor, o, h, int(k), x))
    for actor, table, habit_at in (("A", {"B": 1, "C": 2, "D": 3}, 1), ("B", {"C": 1, "D": 2, "A": 3}, 3)):
        for h in range(60):
            for o, k in table.items():
                rows.append((actor, o, 1000 + h, k, rng.normal() + (0.6 if k == habit_at else 0.0)))
    return pd.DataFrame(rows, columns=["actor", "other", "hand_id", "offset", "x"])


def _room_pairs(directed: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """A pair table from directed burst readings only (every other signal z 0), as the audit builds it."""
    from analyzer.audit.signals import finish_pairs

    hands = scores.groupby(["actor", "other"])["hand_id"].nunique()
    keys = sorted({tuple(sorted(k)) for k in hands.index})
    out = pd.DataFrame({"hands_together": [int(hands.get(k, hands.get(k[::-1], 0))) for k in keys]},
                       index=pd.MultiIndex.from_tuples(keys, names=["a", "b"]))
    finish_pairs(out, directed, pd.DataFrame(columns=["both_deviated", "observed", "expected", "z"]))
    out = out.reset_index().fillna(0.0)  # a player who never acts (C, D, F here) has one direction only
    for name in DIRECTED:
        for tag in ("ab", "ba"):
            out[f"{name}_{tag}_z"] = 0.0
    return out


def test_burst_counts_a_seat_habit_nobody_could_learn_as_a_typical_one() -> None:
    """A pair whose every hand together is at one table (the partner always in the same seat) cannot tell favour from
    a habit towards that seat. Read as if the habit were none, such an honest pair was marked for review (share
    at 100 hands, seed 102: docs/audit.md); read with a habit of the room's typical size, it is clear. A colluder
    with hands without the partner at every seat is read within each seat as before, and still flagged."""
    from analyzer.audit.burst import habit_variance

    for seed in (1, 2, 3):
        scores = _habit_room(seed)
        tau2 = habit_variance(scores)
        assert 0.03 < tau2 < 0.4  # the room's habits (sd 0.4 a hand) are seen; the colluder's favour cannot carry it
        old, new = _burst_one(scores, habit_var=0.0), _burst_one(scores)
        for d in (("A", "B"), ("B", "A")):
            assert old.loc[d, "z_mean"] > 2.5 and new.loc[d, "z_mean"] < old.loc[d, "z_mean"] / 2
        assert new.loc[("E", "F"), "z_mean"] == pytest.approx(old.loc[("E", "F"), "z_mean"]) and \
            new.loc[("E", "F"), "z_mean"] > 5
        v_old = calibrate(_room_pairs(old, scores), Alarm()).set_index(["a", "b"])["verdict"]
        v_new = calibrate(_room_pairs(new, scores), Alarm()).set_index(["a", "b"])["verdict"]
        assert v_old[("A", "B")] != "clear" and v_new[("A", "B")] == "clear"
        assert v_old[("E", "F")] == v_new[("E", "F")] == "flagged"
        assert (v_new.drop(index=[("E", "F")]) == "clear").all()


def test_habit_variance_is_zero_without_seats_or_habits() -> None:
    from analyzer.audit.burst import habit_variance

    rng = np.random.default_rng(2)
    s = _scores(rng, 0.0, 0.0, hands=200)
    assert habit_variance(s) == 0.0  # no offsets
    room = pd.concat([s.assign(actor=f"a{k}", offset=rng.integers(1, 4, len(s)), x=rng.standard_normal(len(s)))
                      for k in range(10)], ignore_index=True)
    assert habit_variance(room) < 0.01  # no habits: nothing beyond the sampling noise (up to the median's noise)


def test_room_habit_variance_leaves_out_the_actors_who_stand_out() -> None:
    """Colluders favour the partner's seat and disfavour the others: no habit. Their strata inflated the room's habit
    spread (2-7 fold on the evaluation's rooms), which cost early detection; the room's estimate leaves them out."""
    from analyzer.audit.burst import habit_variance, hand_scores, room_habit_variance

    rng = np.random.default_rng(6)
    names = [f"p{k:02d}" for k in range(12)]
    rows: list[tuple[str, str, int, int, float]] = []
    for i, actor in enumerate(names):
        habit = rng.normal(0.0, 0.15, 4)
        partner = names[i ^ 1] if i < 6 else None  # p00-p05: three colluding pairs, the partner in every other hand
        for h in range(300):
            pool = [n for n in names if n not in (actor, partner)]
            others = list(rng.choice(pool, 3, replace=False))
            if partner is not None and h % 2 == 0:
                others[0] = partner
            for o, k in zip(others, (1, 2, 3)):  # tables that never re-seat: the first other always at offset 1
                favour = (2.0 if o == partner else -1.0) if partner is not None and h % 2 == 0 else 0.0
                rows.append((actor, o, h, k, rng.normal() + habit[k] + favour))
    lk = pd.DataFrame(rows, columns=["actor", "other", "hand_id", "offset", "imm_marginal"])
    everyone = habit_variance(hand_scores(lk))
    honest_only = habit_variance(hand_scores(lk[~lk["actor"].isin(names[:6])]))
    assert everyone > 2 * honest_only
    assert room_habit_variance(lk) == pytest.approx(honest_only)


def _room_links(seed: int, hands: int = 600, players: int = 8) -> pd.DataFrame:
    """Links of a room of four-seat tables: every seated ordered pair, one to three links a hand, normal favour; p0
    and p1 favour each other in a sixth of their hands (so some actors stand out and are read again)."""
    from analyzer.audit.burst import BURST_SIGNAL

    rng = np.random.default_rng(seed)
    rows = []
    for h in range(hands):
        seats = rng.choice(players, 4, replace=False)
        boost = 2.5 if {0, 1} <= set(seats.tolist()) and rng.random() < 1 / 6 else 0.0
        for i, a in enumerate(seats):
            for j, o in enumerate(seats):
                if a == o:
                    continue
                for _ in range(int(rng.integers(1, 4))):
                    x = rng.standard_normal() + (boost if {a, o} == {0, 1} else 0.0)
                    rows.append((f"p{a}", f"p{o}", h, (j - i) % 4, x, x - 0.1 * (j - i) % 4))
    return pd.DataFrame(rows, columns=["actor", "other", "hand_id", "offset", BURST_SIGNAL,
                                       f"{BURST_SIGNAL}_habit_free"])


def test_burst_read_by_parts_of_the_actors_is_the_whole_rooms_bit_for_bit() -> None:
    """burst read in parts of whole actors (as the Dask audit reads it: ``on_dask.DaskSignals._start_burst``): the
    standing-out actors of each part, the room's habit spread from them, each part's readings with it, put back in the
    room's order.
    The same frame as the whole room's reading, to the last bit, however the actors are cut."""
    from analyzer.audit.burst import _burst, by_actors, hot_actors, in_room_order, room_habit_variance

    lk = _room_links(5)
    whole = _burst(lk)
    for k in (1, 2, 3, 5, 8):
        parts = by_actors(lk, k)
        assert len(parts) == k and sorted(a for p in parts for a in p["actor"].unique()) == sorted(lk["actor"].unique())
        hot = set().union(*(hot_actors(p) for p in parts))
        assert hot  # the colluders stand out: the re-reading without them is exercised
        tau2 = room_habit_variance(lk, hot)
        assert tau2 == room_habit_variance(lk)
        got = in_room_order(lk, [_burst(p, tau2) for p in parts])
        pd.testing.assert_frame_equal(got, whole, check_exact=True)
    shuffled = by_actors(lk, 3)[::-1]  # parts in any order: the room's order comes back
    pd.testing.assert_frame_equal(in_room_order(lk, [_burst(p, room_habit_variance(lk)) for p in shuffled]), whole,
                                  check_exact=True)


def test_the_room_habit_spread_from_its_parts_terms_is_the_rooms_bit_for_bit() -> None:
    """The Dask audit reads burst's habit spread from each part's terms (``burst.part_look``: the part's actors who
    stand out left out, as the room leaves them out) and puts the readings in order by each actor's first link: the
    room's habit spread and order, to the last bit, however the actors are cut."""
    from analyzer.audit.burst import (
        BURST_SIGNAL,
        _burst,
        actor_parts,
        by_actors,
        habit_variance_of,
        in_order_of,
        part_look,
        room_habit_variance,
    )

    lk = _room_links(5)
    habit = np.random.default_rng(6).normal(0.0, 0.6, (8, 4))  # each actor's own leaning towards each seat
    lean = habit[lk["actor"].str[1:].astype(int).to_numpy(), lk["offset"].to_numpy()]
    lk[BURST_SIGNAL] += lean
    whole, tau2 = _burst(lk), room_habit_variance(lk)
    assert tau2 > 0
    for k in (1, 2, 4, 7):
        parts = by_actors(lk, k)
        looks = [part_look(p) for p in parts]
        assert habit_variance_of(np.concatenate([m for m, _, _ in looks]), np.concatenate([v for _, v, _ in looks])) == tau2
        first = {a: i for _, _, f in looks for a, i in f.items()}
        assert first == {a: int(lk.index[lk["actor"] == a][0]) for a in lk["actor"].unique()}
        got = in_order_of([_burst(p, tau2) for p in parts[::-1]], first)
        pd.testing.assert_frame_equal(got, whole, check_exact=True)
    # the parts' sizes: whole actors, the largest first to the lightest part; an actor without links in none
    group = actor_parts(np.array([5, 0, 9, 1, 4]), 2)
    assert group.tolist() == [1, -1, 0, 0, 1] and actor_parts(np.array([3, 3]), 5).tolist() == [0, 1]
