"""The rules engine of standard 憋七: legal actions at known positions, scoring and every multiplier."""

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.cards import ACE, KING, card, parse_card, scan
from analyzer.logs import decoder
from analyzer.variants.bieqi import COVER, NEXT_LIVE, Rules, State, format_action, play_random, random_deal, settle

FIXTURES = json.loads((Path(__file__).parent / "fixtures" / "legal_actions.json").read_text())
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _action(text: str) -> int:
    kind, code = text.split()
    return parse_card(code) + (COVER if kind == "cover" else 0)


@pytest.mark.parametrize("fx", FIXTURES, ids=[f["name"] for f in FIXTURES])
def test_legal_actions_at_known_positions(fx):
    s = State([sum(1 << parse_card(c) for c in seat) for seat in fx["deal"]])
    for text in fx["actions"]:
        a = _action(text)
        assert s.is_legal(a), text
        s.push(a)
    assert s.current_player() == fx["to_act"]
    assert sorted(format_action(a) for a in s.legal_actions()) == sorted(fx["legal"])
    everything = range(2 * 52)
    assert {a for a in everything if s.is_legal(a)} == set(s.legal_actions())


def test_a_is_low_and_k_is_high_with_no_wrap():
    for suit in range(4):
        assert NEXT_LIVE[card(KING, suit)] == 0 and NEXT_LIVE[card(ACE, suit)] == 0
        assert NEXT_LIVE[card(ACE + 1, suit)] == 1 << card(ACE, suit)
        assert NEXT_LIVE[card(KING - 1, suit)] == 1 << card(KING, suit)


def test_the_seed_scoring_example():
    # 扣牌分 A 5, B 8, C 1, D 12 -> 6, -6, 22, -22 (nobody 通, so no multiplier)
    out = settle([5, 8, 1, 12], [False] * 4, [48, 49, 50, 51])
    assert out.scores == (6, -6, 22, -22)
    assert out.ranking == (2, 0, 1, 3)


def _expected_scores(final):
    return tuple(sum(f - mine for f in final) for mine in final)


@pytest.mark.parametrize("points,last7,rules,factor", [
    ([0, 8, 1, 12], [False] * 4, Rules(), 2),                      # 通: the others doubled
    ([0, 0, 1, 12], [False] * 4, Rules(), 4),                      # 双通: the other two x4
    ([0, 0, 0, 12], [False] * 4, Rules(), 8),                      # 三通: the last one x8
    ([0, 8, 1, 12], [True, False, False, False], Rules(), 16),     # 通 that is a 独头七: x2 x8
    ([0, 8, 1, 12], [True, False, False, False], Rules(dutou="replace"), 8),
    ([0, 0, 1, 12], [True, True, False, False], Rules(), 4 * 64),  # two 独头七 on a 双通
    ([0, 0, 1, 12], [True, True, False, False], Rules(dutou="replace"), 64),
    ([0, 8, 1, 12], [False, True, False, False], Rules(), 2),      # a 7 last by a player who covered is nothing
])
def test_multipliers(points, last7, rules, factor):
    out = settle(points, last7, [48, 49, 50, 51], rules)
    final = [p * factor for p in points]
    assert list(out.final_points) == final
    assert out.scores == _expected_scores(final)
    assert sum(out.scores) == 0
    assert all(m == (1 if p == 0 else factor) for p, m in zip(points, out.multipliers))


def test_house_rule_cover_doubling():
    out = settle([31, 51, 10, 0], [False] * 4, [48, 49, 50, 51], Rules(cover_doubling=(30, 50)))
    assert out.final_points == (31 * 2 * 2, 51 * 2 * 4, 10 * 2, 0)


def test_ties_go_to_who_finished_first():
    assert settle([5, 5, 5, 5], [False] * 4, [51, 48, 49, 50]).ranking == (1, 2, 3, 0)


def test_sample_hands_cover_every_multiplier_and_score_by_the_formula():
    dec = decoder()
    seen = set()
    for line in (SAMPLES / "legal.jsonl").read_bytes().splitlines():
        rec = dec.decode(line)
        deal = [sum(1 << parse_card(c) for c in seat) for seat in rec.deal]
        s = State(deal, rec.rules or Rules())
        for a in rec.actions:
            act = parse_card(a.card) + (COVER if a.kind == "cover" else 0)
            assert s.is_legal(act)
            s.push(act)
        pts = [sum(c % 13 + 1 for c in scan(m)) for m in s.covered]
        tong = [p == 0 for p in pts]
        k = sum(tong)
        dutou = [t and s.last_seven[i] for i, t in enumerate(tong)]
        d = sum(dutou)
        rules = rec.rules or Rules()
        factor = {0: 1, 1: 2, 2: 4, 3: 8, 4: 1}[k]
        factor = (8 ** d if rules.dutou == "replace" else factor * 8 ** d) if d else factor
        final = [p * factor for p in pts]
        assert list(rec.result.scores) == list(_expected_scores(final))
        seen.add((k, d, rules.dutou))
    assert {(0, 0, "stack"), (1, 0, "stack"), (2, 0, "stack"), (3, 0, "stack"), (1, 1, "stack"),
            (1, 1, "replace")} <= seen


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32))
def test_random_games_are_legal_complete_and_zero_sum(seed):
    rng = random.Random(seed)
    deal = random_deal(rng)
    s = play_random(deal, rng)
    assert s.is_terminal() and len(s.history) == 52
    assert all(h == 0 for h in s.hands)
    assert sum(s.returns()) == 0
    again, per_seat = State(deal), [0] * 4
    for a in s.history:
        assert again.is_legal(a)
        per_seat[again.current_player()] += 1
        again.push(a)
    assert per_seat == [13] * 4 and again.returns() == s.returns()
    covered = 0
    for m in s.covered:
        covered |= m
    assert covered | s.table == (1 << 52) - 1 and covered & s.table == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([Rules(), Rules(dutou="replace"), Rules(cover_doubling=(20, 40)),
                                               Rules(tong_factors=(1, 3, 9, 27, 1), dutou_factor=5)]))
def test_compiled_settlement_agrees_with_settle(seed, rules):
    import numpy as np

    from analyzer.kernels.bieqi import settle_batch as _settle_batch
    from analyzer.variants.bieqi import make_record

    rng = random.Random(seed)
    states, recs = [], []
    for k in range(8):
        deal = random_deal(rng)
        s = play_random(deal, rng, rules)
        states.append(s)
        recs.append(make_record(s, deal, hand_id=f"h{k}", players=["a", "b", "c", "d"]))
    pts = np.array([s.points() for s in states], np.int64)
    l7 = np.array([s.last_seven for s in states], np.bool_)
    points, _, mult, scores, ranking = _settle_batch(recs, pts, l7)
    for j, s in enumerate(states):
        out = s.outcome()
        assert (points[j], mult[j], scores[j], ranking[j]) == (
            list(out.points), list(out.multipliers), list(out.scores), list(out.ranking))
