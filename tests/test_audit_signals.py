"""Pair signals and calibration on synthetic decision rows: colluders stand out, honest pairs do not."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room

from analyzer.audit.calibrate import (
    Alarm,
    calibrate,
    combine_directions,
    empirical_null,
)
from analyzer.audit.signals import SignalOptions, hands_together, links, pair_signals


@pytest.fixture(scope="module")
def colluding_room() -> pd.DataFrame:
    return calibrate(pair_signals(synthetic_room(
        players=16, hands=240, colluders=(("p00", "p01"),), friends=(("p02", "p03"),), weak=("p02", "p03"), decisions=6,
        favour=2.0, share=0.4, seed=11)).pairs)


@pytest.fixture(scope="module")
def honest_room() -> pd.DataFrame:
    return calibrate(pair_signals(synthetic_room(players=20, hands=200, decisions=6, friends=(("p02", "p03"), ("p04", "p05")),
                                                 weak=("p02", "p03", "p04", "p05"), seed=12)).pairs)


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
    for name in ("marginal", "dd_marginal", "pooled"):
        z = np.r_[honest_room[f"{name}_ab_z"], honest_room[f"{name}_ba_z"]]
        assert abs(z.mean()) < 0.35, name
        assert 0.7 < z.std() < 1.35, name


def test_one_way_help_is_seen_in_its_direction() -> None:
    # p00 favours p01; p01 plays honestly (one-way feeding)
    df = synthetic_room(players=12, hands=200, colluders=(("p00", "p01"),), favour=2.0, share=0.5, one_way=True,
                        seed=3)
    pairs = pair_signals(df).pairs
    row = _row(pairs, "p00", "p01")
    assert row["marginal_ab_z"] > 4 and abs(row["marginal_ba_z"]) < 3
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
    loose = pair_signals(df, options=SignalOptions(deviation_regret=0.0)).pairs
    strict = pair_signals(df, options=SignalOptions(deviation_regret=50.0)).pairs
    assert loose["codev_both_deviated"].sum() > 0 and strict["codev_both_deviated"].sum() == 0
