"""Noise players: each model is a choice rule of the one play loop, and plays as its level says."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from analyzer.simulate.kernel import BLUNDER, NO_TONG, OTHER_SOFTMAX, RANKCOVER, SOFTMAX, play_batch
from analyzer.simulate.noise import ALT, KINDS, LEVEL_RANGES, MODELS, OTHER, noisy_room
from analyzer.simulate.noise import NO_TONG as NO_TONG_WEIGHTS
from analyzer.simulate.room import _deals
from analyzer.strategy import HONEST, NF, score
from analyzer.variants.bieqi import COVER, VARIANT, State

B = 150
DEALS = _deals(B, np.random.default_rng(21))


def _play(kind: int, level: float, seed: int = 4) -> np.ndarray:
    """Actions of B hands with every seat of one choice rule at one level (the model's other weights)."""
    model = MODELS[kind]
    alt = np.broadcast_to(ALT.get(model, HONEST), (B, 4, NF))
    return play_batch(DEALS, np.broadcast_to(HONEST, (B, 4, NF)), np.full((B, 4), level),
                      kinds=np.full((B, 4), kind), alt=alt, seed=seed).actions


def _decisions(actions: np.ndarray, weights: np.ndarray = HONEST):
    """(legal options, chosen action, best action under ``weights``) of every decision with a choice."""
    for b in range(len(actions)):
        st = State(DEALS[b].tolist())
        for a in actions[b].tolist():
            assert st.is_legal(a), (b, a)
            s = score(st, weights=weights)
            if len(s.actions) > 1:
                yield s.actions, a, s.best()
            st.push(a)


def _off_greedy(actions: np.ndarray, weights: np.ndarray = HONEST) -> float:
    """Share of the decisions with a choice in which the seat did not take the best option."""
    picks = [(a, best) for _, a, best in _decisions(actions, weights)]
    return sum(a != best for a, best in picks) / len(picks)


def test_models_are_the_kernels_choice_rules() -> None:
    assert [KINDS[m] for m in MODELS] == [SOFTMAX, BLUNDER, RANKCOVER, NO_TONG, OTHER_SOFTMAX]


@pytest.mark.parametrize("kind", [SOFTMAX, BLUNDER, RANKCOVER, NO_TONG])
def test_level_zero_is_the_greedy_honest_player(kind: int) -> None:
    assert _off_greedy(_play(kind, 0.0)) == 0.0


@pytest.mark.parametrize("kind", [SOFTMAX, BLUNDER, OTHER_SOFTMAX])
def test_a_higher_level_leaves_the_best_option_more_often(kind: int) -> None:
    ref = OTHER if kind == OTHER_SOFTMAX else HONEST  # other_softmax is greedy by its own judgement
    lo, hi = LEVEL_RANGES[MODELS[kind]][:2]
    rates = [_off_greedy(_play(kind, x), ref) for x in (0.0, lo + 0.3 * (hi - lo), hi)]
    assert rates[0] == 0.0 < rates[1] < rates[2]


def test_blunders_are_uniform_draws_at_the_given_rate() -> None:
    # a blunder is a uniform draw among k options: it misses the best with probability level x (1 - 1/k)
    level = 0.4
    picks = list(_decisions(_play(BLUNDER, level)))
    expected = np.mean([level * (1 - 1 / len(opts)) for opts, _, _ in picks])
    rate = np.mean([a != best for _, a, best in picks])
    assert abs(rate - expected) < 4 * np.sqrt(expected * (1 - expected) / len(picks))


def test_rankcover_at_one_covers_the_lowest_rank_and_plays_like_the_greedy_player() -> None:
    covers = 0
    for opts, a, best in _decisions(_play(RANKCOVER, 1.0)):
        if opts[0] >= COVER:
            covers += 1
            assert a % 13 == min(o % 13 for o in opts)
        else:
            assert a == best
    assert covers > B  # the rule was exercised


def test_no_tong_at_one_judges_every_decision_without_the_tong_features() -> None:
    assert _off_greedy(_play(NO_TONG, 1.0), NO_TONG_WEIGHTS) == 0.0
    assert _off_greedy(_play(NO_TONG, 1.0)) > 0.0  # and that judgement differs from the reference's


def test_other_softmax_at_zero_is_greedy_by_the_other_engine() -> None:
    actions = _play(OTHER_SOFTMAX, 0.0)
    assert _off_greedy(actions, OTHER) == 0.0
    assert _off_greedy(actions) > 0.05


def test_a_batch_is_a_function_of_its_seed() -> None:
    assert (_play(BLUNDER, 0.3, seed=1) == _play(BLUNDER, 0.3, seed=1)).all()
    assert (_play(BLUNDER, 0.3, seed=1) != _play(BLUNDER, 0.3, seed=2)).any()


@pytest.mark.parametrize("model", MODELS)
def test_noisy_rooms_are_legal_reproducible_and_tell_the_truth(model: str) -> None:
    room = noisy_room(model, players=8, hands_per_player=12, seed=2)
    again = noisy_room(model, players=8, hands_per_player=12, seed=2)
    other = noisy_room(model, players=8, hands_per_player=12, seed=3)
    assert room == again
    assert [r.hand_id for r in room.records] != [r.hand_id for r in other.records]
    assert [VARIANT.actions_of(r) for r in room.records] != [VARIANT.actions_of(r) for r in other.records]
    assert len(room.records) == 8 * 12 // 4
    assert all(VARIANT.check(r).ok for r in room.records)
    assert set(room.model.values()) == {model}
    lo, hi, _ = LEVEL_RANGES[model]
    assert all(lo <= x <= hi for x in room.level.values())


def test_in_a_blunder_room_higher_levels_leave_the_best_option_more_often() -> None:
    room = noisy_room("blunder", players=8, hands_per_player=40, seed=5)
    off = {p: [0, 0] for p in room.level}
    for r in room.records:
        st = State(VARIANT.deal_of(r))
        for a in VARIANT.actions_of(r):
            s = score(st)
            if len(s.actions) > 1:
                who = r.players[st.turn]
                off[who][0] += a != s.best()
                off[who][1] += 1
            st.push(a)
    ids = sorted(room.level)
    rho = spearmanr([room.level[p] for p in ids], [off[p][0] / off[p][1] for p in ids]).statistic
    assert rho > 0.6
