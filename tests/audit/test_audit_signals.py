"""Pair signals and calibration on synthetic decision rows: colluders stand out, honest pairs do not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room
from signals_reference import links, reference_pair_signals

from analyzer.analysis.decisions import analyse, immediate_effects
from analyzer.audit.calibrate import (
    Alarm,
    calibrate,
    combine_directions,
    empirical_null,
    stouffer_variance,
)
from analyzer.audit.signals import SignalOptions, hands_together
from analyzer.audit.stream import pair_signals
from analyzer.cards import mask_of, parse_card
from analyzer.simulate.room import simulate
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck
from analyzer.variants.bieqi import COVER, SEVEN_OF_SPADES, VARIANT, State


@pytest.fixture(scope="module")
def colluding_room() -> pd.DataFrame:
    return calibrate(pair_signals(synthetic_room(
        players=16, hands=240, colluders=(("p00", "p01"),), friends=(("p02", "p03"),), weak=("p02", "p03"), decisions=6,
        favour=2.0, share=0.4, seed=11)))


@pytest.fixture(scope="module")
def honest_room() -> pd.DataFrame:
    return calibrate(pair_signals(synthetic_room(players=20, hands=200, decisions=6, friends=(("p02", "p03"), ("p04", "p05")),
                                                 weak=("p02", "p03", "p04", "p05"), seed=12)))


def _row(pairs: pd.DataFrame, a: str, b: str) -> pd.Series:
    return pairs[(pairs["a"] == a) & (pairs["b"] == b)].iloc[0]


def test_colluders_rank_first_and_are_flagged(colluding_room: pd.DataFrame) -> None:
    top = colluding_room.sort_values("score", ascending=False).iloc[0]
    assert (top["a"], top["b"]) == ("p00", "p01")
    assert top["flagged"] and top["q_value"] < 1e-3
    assert colluding_room["flagged"].sum() == 1


def test_weak_friends_who_sit_together_are_not_flagged(colluding_room: pd.DataFrame, honest_room: pd.DataFrame) -> None:
    friends = _row(colluding_room, "p02", "p03")
    assert friends["hands_together"] >= 150  # they really did sit together a lot
    assert not friends["flagged"] and friends["p_value"] > 1e-3
    assert not honest_room["flagged"].any()


def test_honest_z_are_close_to_standard_normal(honest_room: pd.DataFrame) -> None:
    for name in ("marginal", "dd_marginal", "imm_marginal", "pooled", "favour"):
        z = np.r_[honest_room[f"{name}_ab_z"], honest_room[f"{name}_ba_z"]]
        assert abs(z.mean()) < 0.35, name
        assert 0.7 < z.std() < 1.35, name


def test_one_way_help_is_seen_in_its_direction() -> None:
    # p00 favours p01; p01 plays honestly (one-way feeding)
    df = synthetic_room(players=12, hands=200, colluders=(("p00", "p01"),), favour=2.0, share=0.5, one_way=True,
                        seed=3)
    pairs = pair_signals(df)
    row = _row(pairs, "p00", "p01")
    assert row["marginal_ab_z"] > 4 and row["marginal_ba_z"] < 3  # no favour back from the receiver
    assert calibrate(pairs).sort_values("score").iloc[-1][["a", "b"]].tolist() == ["p00", "p01"]


def test_links_see_each_decision_from_every_other_seat() -> None:
    df = synthetic_room(players=4, hands=2, decisions=1, seed=1)
    lk = links(df)
    assert len(lk) == 3 * len(df)
    first = lk[lk["row"] == 0].sort_values("offset")
    assert first["other"].tolist() == [df.loc[0, f"p{(df.loc[0, 'seat'] + k) % 4}"] for k in (1, 2, 3)]
    # the two remaining seats' mean, plus the other, plus the actor: the deltas sum to zero
    total = first["d_actor"] + first["d_other"] + 2 * first["d_rest"]
    assert np.allclose(total, df.loc[0, [f"delta{s}" for s in range(4)]].sum())


def test_hands_together_counts_every_pair_of_a_table() -> None:
    seating = pd.DataFrame({"hand_id": ["h1", "h2"], "p0": ["a", "a"], "p1": ["b", "b"], "p2": ["c", "e"],
                            "p3": ["d", "f"]})
    ht = hands_together(seating)
    assert ht[("a", "b")] == 2 and ht[("c", "d")] == 1 and len(ht) == 11


def test_calibration_pieces() -> None:
    # a room wider than N(0, 1) widens the null; a narrow one does not narrow it
    rng = np.random.default_rng(0)
    assert empirical_null(pd.Series(rng.normal(0, 2, 500)))[1] == pytest.approx(2, rel=0.15)
    assert empirical_null(pd.Series(rng.normal(0, 0.5, 500)))[1] == 1.0
    assert empirical_null(pd.Series(rng.normal(0, 3, 10))) == (0.0, 1.0)  # too few pairs to read a null
    p = combine_directions(np.array([6.0, 4.2, 0.0]), np.array([0.0, 4.2, 0.0]))
    assert p[0] < 1e-7 and p[1] < 1e-7 and p[2] > 0.5


def test_alarm_threshold_is_an_option(colluding_room: pd.DataFrame) -> None:
    strict = calibrate(colluding_room[[c for c in colluding_room.columns if c.endswith("_z") or "_ab_" in c
                                       or "_ba_" in c or c.startswith("codev") or c in ("a", "b", "hands_together")]],
                       Alarm(alpha=1e-300))
    assert not strict["flagged"].any()


def test_deviation_threshold_changes_codeviation() -> None:
    df = synthetic_room(players=8, hands=60, seed=5)
    loose = pair_signals(df, options=SignalOptions(deviation_regret=0.0))
    strict = pair_signals(df, options=SignalOptions(deviation_regret=50.0))
    assert loose["codev_both_deviated"].sum() > 0 and strict["codev_both_deviated"].sum() == 0


# --------------------------------------------------------------------------- immediate effects

def _deal(**fixed: list[str]) -> list[int]:
    """A deal with the named cards in the named seats (``s0=[...]``), the rest filling seats in order."""
    seats = [[parse_card(c) for c in fixed.get(f"s{k}", [])] for k in range(4)]
    rest = [c for c in range(52) if all(c not in h for h in seats)]
    for h in seats:
        while len(h) < 13:
            h.append(rest.pop(0))
    return [mask_of(h) for h in seats]


def test_immediate_effect_of_a_play_feeds_the_seat_holding_the_next_card() -> None:
    # after 7S, seat 1 may play 8S (makes 9S live: seat 2 holds it) or 7H (makes 6H, 8H live: seat 3)
    live = ["6S", "7D", "7C"]
    deal = _deal(s0=["7S", *live], s1=["8S", "7H"], s2=["9S"], s3=["6H", "8H"])
    st = State(deal)
    st.push(SEVEN_OF_SPADES)
    opts = st.legal_actions()
    assert sorted(opts) == sorted([parse_card("8S"), parse_card("7H")])
    feed2 = immediate_effects(st, opts, opts.index(parse_card("8S")))
    feed3 = immediate_effects(st, opts, opts.index(parse_card("7H")))
    # 8S frees one card of seat 2 (9S); 7H frees two of seat 3 (6H, 8H); each against the average option
    assert feed2 == pytest.approx([0.0, 0.0, 0.5, -1.0])
    assert feed3 == pytest.approx([0.0, 0.0, -0.5, 1.0])


def test_immediate_effect_of_a_cover_costs_the_cards_it_strands() -> None:
    # seat 1 holds nothing live after 7S and must cover; covering 5H strands AH-4H: 2H, 4H (seat 2), AH, 3H (seat 3)
    live = ["6S", "8S", "7H", "7D", "7C"]
    deal = _deal(s0=["7S", *live], s1=["5H", "KC"], s2=["2H", "4H", "KD"], s3=["AH", "3H"])
    st = State(deal)
    st.push(SEVEN_OF_SPADES)
    opts = st.legal_actions()
    assert all(a >= COVER for a in opts)
    five, king = (immediate_effects(st, opts, opts.index(COVER + parse_card(c))) for c in ("5H", "KC"))
    assert five[2] - king[2] == pytest.approx(-2.0)  # KC strands nothing: beyond a king is empty
    assert five[3] - king[3] == pytest.approx(-2.0)
    assert five[1] - king[1] == pytest.approx(0.0)  # either way the actor gives up one card of its own
    # once 5H is covered, covering 4H strands nothing new (AH, 3H were already dead)
    st.push(COVER + parse_card("5H"))
    opts = st.legal_actions()
    assert st.turn == 2 and all(a >= COVER for a in opts)
    four, king = (immediate_effects(st, opts, opts.index(COVER + parse_card(c))) for c in ("4H", "KD"))
    assert four[3] - king[3] == pytest.approx(0.0)
    assert four[2] - king[2] == pytest.approx(0.0)


@pytest.fixture(scope="module")
def simulated() -> dict[str, pd.DataFrame]:
    """Pair signals of a small honest room and of a room with a feeding pair (real decision rows)."""
    out = {}
    for name, colluders in (("honest", 0), ("feed", 1)):
        sim = simulate(hands=160, players=8, seed=5, colluders=colluders, friends=1, style="feed", seek=1.0)
        recs = list(sim.records)
        df = analyse((Checked("room", k + 1, r.hand_id, r, HandCheck()) for k, r in enumerate(recs)), samples=4,
                     dd_samples=1, seed=1, reasons=False)
        out[name] = df
        out[name + "_pairs"] = calibrate(pair_signals(df))
        out[name + "_truth"] = sim.truth  # type: ignore[assignment]
    return out


def test_imm_columns_replay_exactly(simulated: dict[str, pd.DataFrame]) -> None:
    df = simulated["honest"]
    first = df[df["hand_id"] == df["hand_id"].iloc[0]]
    rec = next(r for r in simulate(hands=160, players=8, seed=5, colluders=0, friends=1, style="feed",
                                   seek=1.0).records if r.hand_id == first["hand_id"].iloc[0])
    st = State(VARIANT.deal_masks(rec, []))
    got = []
    for a in rec.actions:
        c = parse_card(a.card)
        act = COVER + c if a.kind == "cover" else c
        legal = st.legal_actions()
        if len(legal) > 1:
            got.append(immediate_effects(st, legal, legal.index(act)))
        st.push(act)
    assert np.allclose(first[[f"imm{k}" for k in range(4)]].to_numpy(), np.array(got))
    assert df[[f"imm{k}" for k in range(4)]].abs().sum(axis=1).gt(0).mean() > 0.25  # not silently zero


def test_imm_marginal_is_null_for_honest_play_and_high_for_a_feeder(simulated: dict[str, pd.DataFrame]) -> None:
    honest = simulated["honest_pairs"]
    z = np.r_[honest["imm_marginal_ab_z"], honest["imm_marginal_ba_z"]]
    # the spread robustly (1.4826 x MAD): one honest pair's strong disfavour, a large negative z that never
    # flags, must not decide it (seed 5 has one at -5.4 since the search bots share the analysis' sampler);
    # the false-alarm side is held by the maximum
    spread = 1.4826 * np.median(np.abs(z - np.median(z)))
    assert abs(z.mean()) < 0.4 and spread < 1.4 and z.max() < 3.5
    assert not honest["flagged"].any()
    feed = simulated["feed_pairs"]
    truth = simulated["feed_truth"]["colluding_pairs"][0]  # type: ignore[index]
    a, b = sorted(truth["players"])
    row = _row(feed, a, b)
    z_feeder = row["imm_marginal_ab_z"] if truth["feeder"] == a else row["imm_marginal_ba_z"]
    assert z_feeder > 5
    assert feed.sort_values("score").iloc[-1][["a", "b"]].tolist() == [a, b]


def test_stouffer_variance_counts_correlation_upwards_only() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 1))
    same = np.hstack([x, x, x])  # perfectly correlated: the sum has variance 9
    assert stouffer_variance(same) == pytest.approx(9.0)
    indep = rng.normal(size=(400, 3))
    assert 2.7 < stouffer_variance(indep) < 3.6
    anti = np.hstack([x, -x, rng.normal(size=(400, 1))])  # a negative correlation is not allowed to shrink it
    assert stouffer_variance(anti) >= 3.0 - 0.3
    assert stouffer_variance(indep[:10]) == 9.0  # too few pairs: as if all were the same signal


def test_think_time_is_not_handed_to_bystanders_who_always_sat_with_the_pair() -> None:
    # tables re-form once: each bystander sat in one sitting with the same two others, so none is separable
    fixed = pair_signals(synthetic_room(players=8, hands=60, run=30, colluders=(("p00", "p01"),), seed=4))
    assert (fixed[["think_ab_z", "think_ba_z"]] == 0).all().all()
    # tables re-form every 10 hands: the partner is separable and the slowness is seen towards it, and towards
    # nobody else (each table one observation, think._between_tables: ~10 tables an actor, so z's are modest)
    moving = pair_signals(synthetic_room(players=8, hands=200, colluders=(("p00", "p01"),), seed=4))
    row = _row(moving, "p00", "p01")
    assert min(row["think_ab_z"], row["think_ba_z"]) > 2
    others = moving[(moving["a"] != "p00") | (moving["b"] != "p01")]
    assert others[["think_ab_z", "think_ba_z"]].max().max() < min(row["think_ab_z"], row["think_ba_z"]) - 1


def test_a_seat_habit_is_not_taken_for_favour_to_the_friend_who_sits_there() -> None:
    """p01 always treats the next seat better (whoever sits there) and its friend p02 sits there in
    most hands: plain favour signals see p01 -> p02 favour; read without p01's habit it is gone,
    while a colluding pair in the same room still stands out."""
    df = synthetic_room(colluders=(("p03", "p07"),), friends=(("p01", "p02"),), habits={"p01": 2.0, "p05": -2.0},
                        seed=4)
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    lk = reference_pair_signals(df, seating=seating).links
    plain = lk[(lk["actor"] == "p01") & (lk["other"] == "p02")]
    assert plain["imm_marginal"].mean() > 1.0  # the habit shows as favour when read plainly
    pairs = calibrate(pair_signals(df, seating)).set_index(["a", "b"])
    assert not pairs.loc[("p01", "p02"), "flagged"] and pairs.loc[("p01", "p02"), "score"] < 3
    assert pairs.loc[("p03", "p07"), "flagged"]
    assert not pairs.drop(index=[("p03", "p07")])["flagged"].any()


def test_a_favour_signals_per_hand_mean_is_read_as_its_z_is() -> None:
    """The z of a favour signal is the smaller of two readings (plain, habit removed); the per-hand mean and its
    error shown beside it are that reading's, so a habit's positive plain mean never sits beside a negative z."""
    df = synthetic_room(friends=(("p01", "p02"),), habits={"p01": 2.0, "p05": -2.0}, seed=4)
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    pairs = pair_signals(df, seating)
    for name in ("marginal", "dd_marginal", "imm_marginal"):
        for t in ("ab", "ba"):
            z, mean, se = (pairs[f"{name}_{t}_{c}"].to_numpy() for c in ("z", "per_hand", "se_per_hand"))
            moved = np.abs(z) > 1e-9
            assert moved.sum() > 20
            assert (np.sign(z[moved]) == np.sign(mean[moved])).all(), name
            np.testing.assert_allclose(mean[moved] / se[moved], z[moved], rtol=1e-9)
