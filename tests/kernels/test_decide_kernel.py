"""The compiled decision scan (kernels/decide.py) equals the Python engine's replay and information sets."""

from __future__ import annotations

import random
import zlib

import msgspec
import numpy as np
import pytest

from analyzer.analysis.decisions import (
    MODEL_UNTIL,
    _Batch,
    _count,
    _hand,
    _scan,
    analyse,
    decision_seed,
)
from analyzer.analysis.infoset import InfoSet, Observer
from analyzer.kernels.decide import CRC_TABLE, crc32_extend
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck
from analyzer.variants.bieqi import DEFAULT_RULES, SEATS, Rules, make_record, play_random, random_deal

HOUSE = Rules(dutou="replace", cover_doubling=(30,))
_UNSAMPLED = InfoSet(0, 0, 0, 0, 0, (0,) * SEATS, (0,) * SEATS, (0,) * SEATS, 0, ())


def _records(n: int, seed: int) -> list:
    """Random legal hands: some under house rules, times missing here and there, ids of any text."""
    rng = random.Random(seed)
    out = []
    for h in range(n):
        rules = HOUSE if h % 5 == 3 else DEFAULT_RULES
        deal = random_deal(rng)
        st = play_random(deal, rng, rules)
        t, ms = 0, []
        for _ in range(52):
            t += rng.randrange(3000)
            ms.append(t)
        rec = make_record(st, deal, hand_id=f"r{seed}-{h}-é", players=[f"q{h % 7}", "a", "b", f"c{h}"], ms=ms)
        if h % 4 == 1:  # some actions without a time
            acts = [msgspec.structs.replace(a, ms=None) if i % 3 == 0 else a for i, a in enumerate(rec.actions)]
            rec = msgspec.structs.replace(rec, actions=acts)
        out.append(rec)
    return out


def _reference(recs: list, seed: int, policy: str) -> tuple[_Batch, list[tuple[int, int, float]]]:
    """The Python engine's batch (Observer's replay and information sets, as the analysis built it before)."""
    batch = _Batch()
    extra = []
    for x, rec in enumerate(recs):
        rules = rec.rules or DEFAULT_RULES
        obs = Observer([sum(1 << c for c in _hand(rec, 0).cards[13 * s:13 * s + 13]) for s in range(SEATS)], rules)
        sampled = policy != "model" or rules != DEFAULT_RULES
        prev = None
        for i, a in enumerate(rec.actions):
            act = _hand(rec, 0).actions[i]
            st = obs.state
            legal = st.legal_actions()
            if len(legal) > 1:
                think = float(a.ms - prev) if a.ms is not None and prev is not None else np.nan
                k = legal.index(act)
                info = obs.info() if sampled or i >= MODEL_UNTIL else _UNSAMPLED
                batch.add(st, info, legal, decision_seed(seed, rec.hand_id, i), k)
                extra.append((x, i, think))
            prev = a.ms
            obs.push(act)
    return batch, extra


@pytest.mark.parametrize("policy", ["model", "strategy"])
def test_scan_equals_the_python_replay(policy: str) -> None:
    seed = 0xDEADBEEF7
    recs = _records(30, 5)
    ref, extra = _reference(recs, seed, policy)
    group = [_hand(r, q) for q, r in enumerate(recs)]
    _count(group, seed, policy)
    a, rule_sets, rows = _scan(group, seed, policy)
    want = ref.arrays()
    for name in ("hands", "cov", "last7", "live", "table", "turn", "n", "opts", "nopt", "chosen"):
        np.testing.assert_array_equal(a[name], want[name], err_msg=name)
    sl = np.array(ref.slots, np.int64).reshape(-1, 4)
    np.testing.assert_array_equal(a["hidden"], ref.hidden)
    np.testing.assert_array_equal(a["slot_off"], ref.slot_off)
    for j, name in enumerate(("slot_seat", "slot_cover", "slot_allowed", "slot_size")):
        np.testing.assert_array_equal(a[name], sl[:, j].astype(a[name].dtype), err_msg=name)
    np.testing.assert_array_equal(a["seeds"], np.array(ref.seeds, np.uint64))
    assert [rule_sets[i] for i in a["rule_idx"]] == [list(ref.rules)[i] for i in ref.rule_idx]
    assert HOUSE in rule_sets
    np.testing.assert_array_equal(rows.hand, [x for x, _, _ in extra])
    np.testing.assert_array_equal(rows.action, [i for _, i, _ in extra])
    np.testing.assert_array_equal(rows.think, [t for _, _, t in extra])  # NaN where a time is missing
    assert np.isnan(rows.think).any() and not np.isnan(rows.think).all()
    assert [h.decisions for h in group] == np.bincount(rows.hand, minlength=len(group)).tolist()
    if policy == "strategy":
        assert (np.diff(a["slot_off"]) > 0).all()  # every decision's information set sampled
        assert any(sl[:, 1])  # covers proved something somewhere


def test_crc_continues_zlib() -> None:
    for text in ("", "h1", "s3-000001", "日本-é"):
        pre = zlib.crc32(f"{text}\x00".encode())
        for i in (0, 1, 9, 10, 51, 99, 123456):
            assert crc32_extend(pre, i, CRC_TABLE) == zlib.crc32(f"{text}\x00{i}".encode())


def test_batches_close_where_they_did() -> None:
    """Small batches (a few hands each) give the same rows as one batch: cut at whole hands, the same streams."""
    recs = _records(12, 9)
    items = [Checked("x", i + 1, r.hand_id, r, HandCheck()) for i, r in enumerate(recs)]
    kw = dict(samples=2, max_samples=4, dd_samples=1, seed=3, policy="strategy", reasons=False)
    one = analyse(items, batch_decisions=1 << 20, **kw)
    small = analyse(items, batch_decisions=50, **kw)
    assert len(one) > 12 * 20 and one.equals(small)
    assert one.action.between(0, 51).all() and (one.chosen.str.len() == 2).all()


def test_illegal_action_is_refused() -> None:
    rec = _records(1, 2)[0]
    acts = list(rec.actions)
    acts[5] = msgspec.structs.replace(acts[5], kind="cover" if acts[5].kind == "play" else "play")
    bad = msgspec.structs.replace(rec, actions=acts)
    group = [_hand(bad, 0)]
    with pytest.raises(ValueError, match="not legal"):
        _count(group, 0, "model")


def _hope_loops(hand: int, table: int, own_covered: int) -> float:
    """hand_hope as first written (rank loops): the reference for the bit-mask version."""
    if own_covered != 0:
        return 0.0
    gaps = 0
    for s in range(SEATS):
        base = s * 13
        need = 0
        lo = next((r for r in range(6) if hand >> (base + r) & 1), -1)
        if lo >= 0:
            for r in range(lo, 7):
                need |= 1 << r
        hi = next((r for r in range(12, 6, -1) if hand >> (base + r) & 1), -1)
        if hi >= 0:
            for r in range(6, hi + 1):
                need |= 1 << r
        have = ((hand | table) >> base) & 0x1FFF
        gaps += bin(need & ~have & 0x1FFF).count("1")
    return 1.0 / (1.0 + gaps)


def test_hand_hope_and_option_order_equal_the_loops() -> None:
    """The features' bit-mask shortcuts (hand_hope, options lowest card first) give what the loops gave,
    in Python and compiled (the simulator's and the rollouts' kernels inline them)."""
    from analyzer.kernels.features import NF, decision_features, hand_hope, score_options

    rng = random.Random(4)
    for _ in range(3000):
        hand = rng.getrandbits(52) & rng.getrandbits(52)
        table = rng.getrandbits(52) & ~hand
        cov = 0 if rng.random() < 0.7 else 1 << rng.randrange(52)
        assert hand_hope(hand, table, cov) == _hope_loops(hand, table, cov)
    # options lowest card first; compiled: the same options and features as the Python path
    for _ in range(300):
        cards = rng.sample(range(52), 13)
        hand = sum(1 << c for c in cards[:rng.randrange(1, 14)])
        table, live = rng.getrandbits(52) & ~hand, rng.getrandbits(52) & rng.getrandbits(52)
        pool = hand & live or hand
        want = [c if hand & live else 52 + c for c in range(52) if pool >> c & 1]
        o1, f1, v1 = np.zeros(13, np.int64), np.zeros((13, NF)), np.zeros(13)
        k1 = score_options(hand, live, table, 0, 0, 0, 2, np.ones(NF), o1, f1, v1)
        o2, f2 = np.zeros(13, np.int64), np.zeros((13, NF))
        k2 = decision_features(hand, live, table, 0, 0, 0, 2, o2, f2)
        assert o2[:k2].tolist() == want
        assert k1 == k2 and (o1 == o2).all() and (f1 == f2).all()
