"""The pair signals' statistics merge: each pass over chunks of a room, merged, equals the pass over the room as one
chunk (the contract every way of running the passes, and a ledger added day by day, rests on)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room

from analyzer.audit.signals import (
    HabitSums,
    LargestResiduals,
    PairSums,
    Room,
    RoomCodes,
    SignalOptions,
    SituationSpread,
    SituationSums,
    build_chunk,
    chunk_pairs,
    fit_baselines,
    hot_pairs,
    pass_habits,
    pass_means,
    pass_pairs,
    pass_spread,
    pass_top,
    positive_regrets,
    recode,
    regret_edges,
)
from analyzer.audit.stream import hand_chunks


@pytest.fixture(scope="module")
def room() -> dict:
    """One room as one chunk and as chunks of 17 hands, in the same codes (players, kinds, hands)."""
    df = synthetic_room(players=12, hands=120, colluders=(("p00", "p01"),), habits={"p03": 1.5}, decisions=5,
                        favour=2.0, share=0.4, seed=9)
    codes = RoomCodes()
    whole = build_chunk(df)
    one = recode(whole, *codes.add(whole.pop("names"), whole.pop("kinds")), 0)
    parts, base = [], 0
    for part in hand_chunks(df, 17):
        ch = build_chunk(part)
        parts.append(recode(ch, *codes.add(ch.pop("names"), ch.pop("kinds")), base))
        base += int(ch["n_hands"][0])
    hands = df["hand_id"].nunique()
    assert len(parts) == -(-hands // 17) > 3 and base == hands
    pairs = chunk_pairs(one)
    assert np.array_equal(functools.reduce(np.union1d, map(chunk_pairs, parts)), pairs)
    edges = regret_edges([positive_regrets(one)])
    assert edges is not None and np.array_equal(edges, regret_edges([positive_regrets(p) for p in parts]))
    r = Room(len(codes.players), len(codes.kinds), edges, pairs, SignalOptions())
    return {"one": one, "parts": parts, "room": r}


def _fold(merge, items):  # noqa: ANN001, ANN202
    return functools.reduce(merge, items)


def _tree(merge, items):  # noqa: ANN001, ANN202
    """Merged three adjacent ones at a time, level by level (as a tree of tasks groups them)."""
    while len(items) > 1:
        items = [_fold(merge, items[i:i + 3]) for i in range(0, len(items), 3)]
    return items[0]


def _close(a: np.ndarray, b: np.ndarray) -> None:
    assert a.shape == b.shape
    assert np.allclose(a, b, rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("order", [_fold, _tree])
def test_every_pass_over_chunks_merges_to_the_pass_over_the_room(room: dict, order) -> None:  # noqa: ANN001
    one, parts, r = room["one"], room["parts"], room["room"]

    def over(fn, merge, *args):  # noqa: ANN001, ANN202
        return fn(one, r, *args), order(merge, [fn(p, r, *args) for p in parts])

    for hot in (None, np.arange(len(r.pair_codes)) % 7 == 0):  # the first fit, and one without some pairs
        a, b = over(pass_means, SituationSums.merge, hot)
        assert a.used == b.used > 0
        for x, y in ((a.w, b.w), (a.x, b.x), *((a.y[s], b.y[s]) for s in a.y)):
            _close(x, y)
        fit = fit_baselines(a, lambda mx, mt, hot=hot: pass_spread(one, r, hot, mx, mt),
                            lambda f, keep, hot=hot: pass_top(one, r, hot, f, keep))
        s1, s2 = over(pass_spread, SituationSpread.merge, hot, fit.mean_x, fit.mean_y["total"])
        _close(s1.sxx, s2.sxx)
        _close(s1.sxy, s2.sxy)
        keep = 50
        t1, t2 = over(pass_top, LargestResiduals.merge, hot, fit, keep)
        for s in t1.top:  # the largest values are the same values, whatever the chunks
            assert t1.finite[s] == t2.finite[s] and len(t2.top[s]) == keep
            assert np.array_equal(np.sort(t1.top[s]), np.sort(t2.top[s]))
        h1, h2 = over(pass_habits, HabitSums.merge, hot, fit)
        for s in h1.tot:
            _close(h1.tot[s], h2.tot[s])
            _close(h1.mine[s], h2.mine[s])
        e1, e2 = over(pass_pairs, PairSums.merge, fit, h1, True)
        _close(e1.hands, e2.hands)
        _close(e1.decisions, e2.decisions)
        for c in e1.acc:
            _close(e1.acc[c], e2.acc[c])
        assert e1.acc["marginal"][:, 1].sum() > 0  # the sums of squares are there, not zeros
        # the per-hand pieces: the same (pair, hand) rows, the chunks' in chunk order
        b1, b2 = pd.concat(e1.burst, ignore_index=True), pd.concat(e2.burst, ignore_index=True)
        key = ["actor", "other", "hand_id"]
        b1, b2 = b1.sort_values(key, ignore_index=True), b2.sort_values(key, ignore_index=True)
        assert b1[key].equals(b2[key]) and len(b1) > 1000
        _close(b1.drop(columns=key).to_numpy(np.float64), b2.drop(columns=key).to_numpy(np.float64))
        d1, d2 = (pd.concat(e.deviations, ignore_index=True).sort_values(key, ignore_index=True) for e in (e1, e2))
        assert d1[key].equals(d2[key]) and len(d1)
    assert hot_pairs(e2, r).any()  # the strong pair stands out: the second fit's pass is not idle


def test_a_merge_leaves_its_operands_as_they_were(room: dict) -> None:
    """Merging makes a new statistic: the operands stay as they were (a ledger keeps both); the burst pieces kept
    apart (on Dask) are counted per actor in the merged sums."""
    parts, r = room["parts"], room["room"]
    a, b = pass_means(parts[0], r, None), pass_means(parts[1], r, None)
    before = a.w.copy(), a.y["total"].copy()
    merged = a.merge(b)
    assert np.array_equal(a.w, before[0]) and np.array_equal(a.y["total"], before[1])
    assert merged.used == a.used + b.used
    fit = fit_baselines(a, lambda mx, mt: pass_spread(parts[0], r, None, mx, mt),
                        lambda f, k: pass_top(parts[0], r, None, f, k))
    habits = pass_habits(parts[0], r, None, fit)
    e = [pass_pairs(p, r, fit, habits, True) for p in parts[:2]]
    both = e[0].merge(e[1])
    assert len(both.burst) == 2 and len(e[0].burst) == 1 and both.burst[0] is e[0].burst[0]
    (k0, p0), (k1, p1) = (x.without_burst(r.n_players) for x in e)
    assert k0.burst == [] and len(e[0].burst) == 1  # the piece taken out of a new statistic, not of e[0]
    assert k0.burst_links is not None and int(k0.burst_links.sum()) == len(p0)
    assert int(k0.merge(k1).burst_links.sum()) == len(p0) + len(p1)
