"""Strategy features: known positions, readable reasons, and one definition for Python and the kernel."""

from __future__ import annotations

import numpy as np

from analyzer.cards import parse_card
from analyzer.simulate.kernel import play_batch
from analyzer.simulate.room import _deals
from analyzer.strategy import F_COVER_BLOCKS, F_SEVEN_FOR_LOW, FEATURES, HONEST, NF, explain, features, score, style_weights
from analyzer.variants.bieqi import COVER, State


def _mask(codes: str) -> int:
    return sum(1 << parse_card(c) for c in codes.split())


def _position(hand: str, table: str, live: str) -> State:
    """A state where seat 0 is to act with ``hand``; the other cards are spread over seats 1..3."""
    mine, on_table = _mask(hand), _mask(table)
    rest = [c for c in range(52) if not (mine | on_table) >> c & 1]
    st = State([_mask("7S")] + [0, 0, 0])
    st.hands = [mine] + [sum(1 << c for c in rest[i::3]) for i in range(3)]
    st.table, st.live, st.turn = on_table, _mask(live), 0
    return st


def test_features_cover_every_legal_action() -> None:
    st = _position("7H 2H AH QD AC", "7S", "6S 8S 7H 7D 7C")
    actions, feats = features(st)
    assert actions == st.legal_actions()
    assert feats.shape == (len(actions), NF) and len(FEATURES) == NF


def test_seven_opened_for_low_cards_is_named() -> None:
    st = _position("7H 2H AH 8S KC", "7S", "6S 8S 7H 7D 7C")
    s = score(st)
    i = s.actions.index(parse_card("7H"))
    assert s.features[i, F_SEVEN_FOR_LOW] == 1.0
    assert s.best() != parse_card("7H")  # 要敢于放弃: do not open hearts for A-2
    assert any("opened with 7♥ while holding only A♥ 2♥" in r for r in explain(st, parse_card("7H")))


def test_ruthless_cover_blocks_what_others_still_hold() -> None:
    # no live card: covering Q♦ shuts K♦ (still out); covering A♣ blocks nothing
    st = _position("QD AC 3C 2D", "7S 6S 8S 7D 8D 9D TD JD 7C 6C 5C 4C", "5S 9S 7H 6D QD 3C")
    st.live = _mask("5S 9S 7H 6D")  # nothing of ours is live
    s = score(st)
    q, a = s.actions.index(COVER + parse_card("QD")), s.actions.index(COVER + parse_card("AC"))
    assert s.features[q, F_COVER_BLOCKS] > 0 == s.features[a, F_COVER_BLOCKS]
    reasons = explain(st, COVER + parse_card("QD"))
    assert any("K♦" in r for r in reasons)


def test_explain_says_what_the_sensible_choice_was() -> None:
    st = _position("7H 2H AH 8S KC", "7S", "6S 8S 7H 7D 7C")
    s = score(st)
    worst = s.actions[int(np.argmin(s.values))]
    assert explain(st, worst)[0].startswith("played ") and "rather than" in explain(st, worst)[0]
    opening = State(_deals(1, np.random.default_rng(0))[0].tolist())
    assert explain(opening, parse_card("7S")) == ["played 7♠: the only legal option"]


def test_kernel_plays_what_the_python_features_choose() -> None:
    deals = _deals(40, np.random.default_rng(3))
    w = np.broadcast_to(HONEST, (40, 4, NF))
    played = play_batch(deals, w, np.zeros((40, 4)), seed=1)
    for b in range(40):
        st = State(deals[b].tolist())
        for a in played.actions[b].tolist():
            assert score(st).best() == a
            st.push(a)


def test_unknown_style_is_a_clear_error() -> None:
    try:
        style_weights("telepathy", 1.0)
    except ValueError as e:
        assert "share" in str(e)
    else:
        raise AssertionError("expected ValueError")
