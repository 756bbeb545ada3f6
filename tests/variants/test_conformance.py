"""Every registered game against the one contract (OpenSpiel's random_sim_test, walked over the registry).

Random legal play from seeded random deals: legal actions sorted, distinct and legal, and nothing
else legal; copies independent of the original; returns of the declared length summing as
declared; the hand never longer than declared; the record of the hand surviving a JSON round trip,
replaying to the same actions and returns, and passing the variant's own check, one by one and in
a batch. A new variant added to the registry is covered without touching this file.
"""

from __future__ import annotations

import random
from importlib import import_module

import msgspec
import pytest

from analyzer.logs import decoder
from analyzer.variants import registry
from analyzer.variants.base import Offers

GAMES = sorted(registry())
SEEDS = range(6)
PLAYERS = ["ann", "bo", "cy", "di"]


def _play(game, seed: int):
    """A random legal hand from a seeded deal, checking the state contract at every step."""
    rng = random.Random(seed)
    deal = game.random_deal(seed)
    state = game.new_initial_state(deal)
    seen: set[int] = set()
    while not state.is_terminal():
        legal = state.legal_actions()
        assert legal, "a state that is not terminal has a legal action"
        assert legal == sorted(legal) and len(set(legal)) == len(legal)
        assert 0 <= state.current_player() < game.num_players
        seen.update(legal)
        allowed = set(legal)
        for a in rng.sample(sorted(seen), min(len(seen), 40)):
            assert state.is_legal(a) == (a in allowed), f"is_legal({a}) disagrees with legal_actions()"
        before = list(state.history)
        twin = state.copy()
        twin.push(legal[-1])
        while not twin.is_terminal() and len(twin.history) < len(before) + 3:
            twin.push(twin.legal_actions()[0])
        assert state.history == before and state.legal_actions() == legal, "a copy shares state with its original"
        state.push(rng.choice(legal))
        if game.max_game_length is not None:
            assert len(state.history) <= game.max_game_length
    assert state.legal_actions() == []
    return deal, state


@pytest.mark.parametrize("name", GAMES)
def test_the_game_states_its_facts(name):
    game = registry()[name]
    assert game.name == name and game.num_players >= 2
    assert game.utility in ("zero-sum", "constant-sum", "general-sum")
    assert isinstance(game.offers, Offers)
    for field in Offers.__dataclass_fields__:
        path = getattr(game.offers, field)
        if path is not None:
            assert import_module(path) is game.offer(field)


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("seed", SEEDS)
def test_random_play_follows_the_contract(name, seed):
    game = registry()[name]
    deal, state = _play(game, seed)
    returns = state.returns()
    assert len(returns) == game.num_players
    if game.utility in ("zero-sum", "constant-sum"):
        assert sum(returns) == game.utility_sum
    assert game.random_deal(seed) == deal, "the same seed deals the same cards"

    record = game.make_record(state, deal, hand_id=f"{name}-{seed}", players=PLAYERS)
    line = msgspec.json.encode(record)
    back = decoder().decode(line)
    assert back == record and msgspec.json.encode(back) == line
    assert game.actions_of(back) == state.history
    assert game.deal_of(back) == deal
    replayed = [a for _, a in game.replay(back)]
    assert replayed == state.history
    assert game.final_state(back).returns() == returns
    check = game.check(back)
    assert check.ok, [p.message for p in check.problems]
    assert [c.ok for c in game.check_batch([back, back])] == [True, True]


@pytest.mark.parametrize("name", GAMES)
def test_a_broken_record_fails_its_check(name):
    """The check above can fail: the same hand with its actions cut short is not ok."""
    game = registry()[name]
    seed = 0
    deal, state = _play(game, seed)
    while len(state.history) < 10:  # e.g. a hand all four passed
        seed += 1
        deal, state = _play(game, seed)
    short = game.new_initial_state(deal)
    for a in state.history[: len(state.history) // 2]:
        short.push(a)
    broken = game.make_record(short, deal, hand_id="x", players=PLAYERS, with_result=False)
    assert not game.check(broken).ok
