"""The rollout kernel agrees with the Python engine: scoring, legal play-outs, and hidden-hand sampling."""

from __future__ import annotations

import random

import numpy as np
import pytest

from analyzer.analysis.infoset import Observer
from analyzer.kernels.rollout import BEYOND, mix, rollout
from analyzer.kernels.scoring import rule_table, settle_into
from analyzer.strategy import HONEST
from analyzer.variants.bieqi import COVER, Rules, State, play_random, random_deal

RULES = [Rules(), Rules(dutou="replace"), Rules(tong_factors=(1, 3, 5, 9, 2), dutou_factor=4),
         Rules(cover_doubling=(10, 30, 50))]


def _random_state(rng: random.Random, rules: Rules, upto: int) -> State:
    st = State(random_deal(rng), rules)
    while st.n < upto:
        st.push(rng.choice(st.legal_actions()))
    return st


@pytest.mark.parametrize("k", range(len(RULES)))
def test_kernel_scores_equal_settle_on_random_games(k: int) -> None:
    rules = RULES[k]
    table = rule_table([rules])
    out = np.zeros(4, np.int64)
    rng = random.Random(k)
    kinds = set()
    for _ in range(300):
        st = play_random(random_deal(rng), rng, rules)
        if rng.random() < 0.5:  # force 通 and 独头七 patterns random play rarely reaches
            st.covered = [m if rng.random() < 0.5 else 0 for m in st.covered]
            st.last_seven = [rng.random() < 0.5 for _ in range(4)]
        o = st.outcome()
        kinds.add((len(o.tong), len(o.dutou)))
        settle_into(np.array(st.points(), np.int64), np.array(st.last_seven), table[0], np.zeros(4, np.int64), out)
        assert out.tolist() == list(o.scores)
    assert len(kinds) >= 6  # many combinations of 通 and 独头七 were scored


def test_rollout_plays_legally_and_scores_like_the_engine() -> None:
    rng = random.Random(7)
    table = rule_table([Rules(cover_doubling=(20,))])
    for g in range(60):
        st = _random_state(rng, Rules(cover_doubling=(20,)), rng.randrange(0, 50))
        hands = np.array(st.hands, np.int64)
        cov = np.array(st.covered, np.int64)
        pts = np.array(st.points(), np.int64)
        l7 = np.array(st.last_seven)
        trace = np.full(52, -1, np.int64)
        state = np.array([mix(np.uint64(g), 0) | np.uint64(1)], np.uint64)
        weights = HONEST if g % 2 else np.zeros(0)  # both reference policies
        rollout(hands, cov, pts, l7, st.live, st.table, st.turn, st.n, state, 1.0, weights, trace)
        for a in trace[st.n:].tolist():
            assert st.is_legal(a)
            st.push(a)
        assert st.is_terminal()
        assert pts.tolist() == st.points() and hands.tolist() == [0] * 4
        out = np.zeros(4, np.int64)
        settle_into(pts, l7, table[0], np.zeros(4, np.int64), out)
        assert out.tolist() == st.returns()


def test_beyond_table_matches_the_live_rule() -> None:
    # BEYOND[c] are exactly the cards that can only become live through c
    for c in range(52):
        s, r = divmod(c, 13)
        ranks = [x for x in range(13) if BEYOND[c] >> x & 1]
        expect = [x for x in range(13) if (x != 6 and r == 6) or (r < 6 and x < r) or (r > 6 and x > r)]
        assert ranks == expect, (s, r)


def test_sampled_hidden_hands_respect_what_covers_prove() -> None:
    rng = random.Random(11)
    checked = proofs = 0
    for _ in range(40):
        deal = random_deal(rng)
        obs = Observer(deal)
        while not obs.state.is_terminal():
            st = obs.state
            legal = st.legal_actions()
            if len(legal) > 1 and rng.random() < 0.3:
                info = obs.info()
                true_cov = list(st.covered)
                assert info.is_consistent(st.hands, true_cov)  # the truth is always one of the deals
                proofs += sum(m != 0 for m in info.not_held)
                for hands, cov in info.sample(5, rng.randrange(1 << 30)):
                    assert info.is_consistent(hands, cov)
                    checked += 1
            obs.push(rng.choice(legal))
    assert checked > 300 and proofs > 50


def test_a_cover_proves_the_live_cards_were_not_held() -> None:
    rng = random.Random(3)
    for _ in range(200):
        obs = Observer(random_deal(rng))
        while not obs.state.is_terminal():
            st = obs.state
            if st.must_cover():
                live, seat = st.live, st.turn
                obs.push(COVER + next(c for c in range(52) if st.hands[seat] >> c & 1))
                info = obs.info((seat + 1) % 4)
                assert info.not_held[seat] & live == info.not_held[seat]
                assert info.not_held[seat] == live & info.hidden
                return
            obs.push(rng.choice(st.legal_actions()))
    pytest.fail("no cover in 200 random hands")
