"""The pairs' audit.json entries made from the pair table's columns at once equal the per-row ones they replace:
the burst statistic's look, a number's NaN/inf handling, a case pair's outcomes read from its players' hands."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room

from analyzer.audit.calibrate import Alarm, calibrate, rank_pairs
from analyzer.audit.case import burst_look
from analyzer.audit.core import _burst_looks, _finite, _pair_entry, _Record, _Seated
from analyzer.audit.outcomes import pair_outcomes, room_outcomes
from analyzer.audit.stream import pair_signals


@pytest.fixture(scope="module")
def room() -> tuple[pd.DataFrame, pd.DataFrame]:
    df = synthetic_room(players=14, hands=160, colluders=(("p00", "p01"),), decisions=6, favour=2.0, share=0.4, seed=5)
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]].reset_index(drop=True)
    rng = np.random.default_rng(1)
    for s in range(4):  # scores and 通 flags, for the outcomes
        seating[f"score{s}"] = rng.integers(-40, 40, len(seating)).astype(float)
        seating[f"tong{s}"] = (rng.random(len(seating)) < 0.1).astype(float)
    return rank_pairs(calibrate(pair_signals(df), Alarm())), seating


@pytest.mark.parametrize("x", [0, 3, 7.5, -2.25, math.nan, math.inf, -math.inf, np.float64("nan"), np.int64(12),
                               np.float32(1.5), 1e308])
def test_finite_is_numpys_nan_to_num_of_one_number(x: float) -> None:
    for nan in (0.0, 1.0, 50.0):
        want = np.nan_to_num(x, nan=nan)
        got = _finite(x, nan)
        assert type(got) is float and got == float(want)
        assert int(got) == int(want) if math.isfinite(got) else True


def test_the_burst_looks_of_every_pair_at_once_are_the_per_row_ones(room: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    pairs = room[0]
    looks = _burst_looks(pairs)
    assert looks == [burst_look(_Record(r)) for r in pairs.to_dict("records")]
    assert len(looks) == len(pairs) > 50 and set(looks) <= {"mean", "count"}
    bare = pairs.drop(columns=[c for c in pairs.columns if c.startswith("burst_") and c.endswith(("_mean", "_count"))])
    assert _burst_looks(bare) == [burst_look(r) for _, r in bare.iterrows()] == ["count"] * len(bare)


def test_an_entry_with_its_look_given_equals_the_one_made_from_its_row(room: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    pairs = room[0].copy()
    pairs.loc[pairs.index[:5], "burst_ab_hands"] = np.nan  # missing counts read as 0, a missing level as 1
    pairs.loc[pairs.index[:5], "burst_ab_level"] = np.nan
    records = pairs.to_dict("records")
    for rec, look, (_, row) in zip(records, _burst_looks(pairs), pairs.iterrows()):
        assert _pair_entry(_Record(rec), look) == _pair_entry(row)
    first = _pair_entry(_Record(records[0]))["signals"]["burst"]["ab"]
    assert first["hands"] == 0 and first["level"] == 1.0


def test_a_pairs_outcomes_from_its_players_hands_equal_those_from_the_room(room: tuple[pd.DataFrame, pd.DataFrame]
                                                                          ) -> None:
    pairs, seating = room
    base = room_outcomes(seating)
    sat = _Seated(seating)
    for a, b in [*zip(pairs["a"][:15], pairs["b"][:15]), ("p00", "nobody"), ("nobody", "none")]:
        assert pair_outcomes(sat.hands_of(a, b), a, b, base) == pair_outcomes(seating, a, b, base)
    assert len(sat.hands_of("p00", "p01")) < len(seating)
    assert len(_Seated(seating.iloc[:0]).hands_of("p00", "p01")) == 0
