"""信阳黑七 fixtures as data: tractors, card order, follow obligations, trick winners, 摳底, settlement, bidding."""

from __future__ import annotations

import pytest

from analyzer.cards import CLUBS, DIAMONDS, HEARTS, SPADES, parse_card
from analyzer.variants.heiqi import (
    KINDS,
    ORDERS,
    TRUMP,
    Bidding,
    HeiqiRules,
    State,
    bid_action,
    bottom_factor,
    bury_action,
    follow_error,
    format_action,
    lead_error,
    play_action,
    play_cards,
    settle,
    shape_of,
    trick_winner,
    trump_action,
)


def cards(text: str) -> list[int]:
    return [parse_card(code, jokers=True) for code in text.split()]


def counts(text: str) -> list[int]:
    out = [0] * KINDS
    for c in cards(text):
        out[c] += 1
    return out


# --------------------------------------------------------------------------- tractors (every example of the seed)

TRACTORS = [  # (trump suit, cards, kind): spades trump unless it matters
    (SPADES, "5H 5H 6H 6H", "tractor"),  # seed: 5566
    (SPADES, "JH JH QH QH", "tractor"),  # seed: JJQQ
    (SPADES, "6H 6H 8H 8H", "tractor"),  # seed: 6688, the 7 is gone
    (SPADES, "5H 5H 6H 6H 8H 8H", "tractor"),
    (SPADES, "BJ BJ SJ SJ", "tractor"),  # seed: 大王小王
    (SPADES, "7S 7S 7H 7H", "tractor"),  # seed: 主7副7
    (SPADES, "7S 7S 7C 7C", "tractor"),
    (SPADES, "2S 2S 2D 2D", "tractor"),  # seed: 主2副2
    (SPADES, "AS AS KS KS", "tractor"),  # seed: AAKK in trumps
    (HEARTS, "AH AH KH KH QH QH", "tractor"),
    (SPADES, "6S 6S 8S 8S", "tractor"),  # 6688 in trumps too
    (SPADES, "SJ SJ 7S 7S", "throw"),  # seed: 小王主7 is not
    (SPADES, "7H 7H 2S 2S", "throw"),  # seed: 副7主2 is not
    (SPADES, "2H 2H AS AS", "throw"),  # seed: 22AA is not (other 2 + trump A)
    (SPADES, "2S 2S AS AS", "throw"),  # nor trump 2 + trump A
    (SPADES, "2H 2H 3H 3H", "throw"),  # seed: 2233 is not (2 is trump)
    (SPADES, "7H 7H 7D 7D", "throw"),  # other 7s are equal in rank, not adjacent
    (SPADES, "2H 2H 2C 2C", "throw"),
    (SPADES, "5H 5H 8H 8H", "throw"),
    (SPADES, "9H 9H", "pair"),
    (SPADES, "7H 7H", "pair"),
    (SPADES, "7H 7D", "throw"),  # equal 7s are two singles: a pair needs identical cards
    (SPADES, "BJ", "single"),
]


@pytest.mark.parametrize(("trump", "text", "kind"), TRACTORS)
def test_tractors_and_non_tractors(trump: int, text: str, kind: str) -> None:
    assert shape_of(cards(text), ORDERS[trump]).kind == kind


@pytest.mark.parametrize("text", ["6H 6H 7H 7H", "7H 7H 8H 8H"])  # seed: 6677 and 7788 are not
def test_seven_with_its_plain_neighbours_is_not_one_suit(text: str) -> None:
    assert lead_error(cards(text), ORDERS[SPADES]) == f"led {text}, which mixes hearts and trumps"


def test_shape_splits_long_runs_greedily() -> None:
    sh = shape_of(cards("3H 3H 4H 4H 5H 5H 9H 9H TH TH KH"), ORDERS[SPADES])
    assert sh.signature == ((3, 2), 0, 1)
    assert sh.pair_count == 5


# --------------------------------------------------------------------------- card order

def test_trump_order_high_to_low() -> None:
    order = ORDERS[SPADES]
    high_to_low = cards("BJ SJ 7S 7H 2S 2D AS KS QS JS TS 9S 8S 6S 5S 4S 3S")
    levels = [order.level[c] for c in high_to_low]
    assert levels == sorted(levels, reverse=True)
    assert order.level[parse_card("7H")] == order.level[parse_card("7C")] == order.level[parse_card("7D")]
    assert order.level[parse_card("2H")] == order.level[parse_card("2C")]
    assert len(set(levels)) == len(levels) == 17  # 17 levels; the other 7s (and 2s) share one
    assert sum(order.suit[c] == TRUMP for c in range(KINDS)) * 2 == 42  # 主牌 are 42 cards


def test_plain_order_and_suits() -> None:
    order = ORDERS[HEARTS]
    diamonds = cards("AD KD QD JD TD 9D 8D 6D 5D 4D 3D")
    levels = [order.level[c] for c in diamonds]
    assert levels == sorted(levels, reverse=True) and len(set(levels)) == 11
    assert {order.suit[c] for c in diamonds} == {DIAMONDS}
    assert order.suit[parse_card("7D")] == order.suit[parse_card("2C")] == order.suit[parse_card("5H")] == TRUMP


# --------------------------------------------------------------------------- following

FOLLOWS = [  # (hand before the play, lead, play, expected message or None); spades trump
    ("9H 9H 4H 3H KC", "JH JH", "9H 4H", "held the pair 9H9H but followed a pair lead with 9H 4H"),
    ("9H 9H 4H 3H KC", "JH JH", "9H 9H", None),
    ("9H 4H 3H KC", "JH JH", "9H 4H", None),  # no pair: any two hearts
    ("9H 4H 3H KC", "JH JH", "9H KC", "held 3 hearts (3H 4H 9H) but followed a pair lead with 9H KC"),
    ("4H KC KC", "JH JH", "4H KC", None),  # one heart: it and anything
    ("4H KC KC", "JH JH", "KC KC", "held 1 hearts (4H) but followed a pair lead with KC KC"),
    ("KC 3S 4S", "JH JH", "3S 4S", None),  # void: two trumps that are not a pair are allowed
    ("KC 3S 3S", "JH", "KC", None),  # void: a discard is allowed
    ("7H AH", "JH", "7H", "held 1 hearts (AH) but followed a single lead with 7H"),  # 7H is a trump
    ("7H 3D", "2S", "7H", None),  # trumps led: the other 7 is a trump
    ("7H 3D", "2S", "3D", "held 1 trumps (7H) but followed a single lead with 3D"),
    ("3H 3H 4H 4H 9H 9H QH", "JH JH QH QH", "3H 3H 9H 9H",
     "held the tractor 4H4H3H3H but followed a tractor lead with 3H 3H 9H 9H"),
    ("3H 3H 4H 4H 9H 9H QH", "JH JH QH QH", "3H 3H 4H 4H", None),
    ("3H 3H 5H 5H 9H QH", "JH JH QH QH", "3H 3H 9H QH",
     "held the pairs 3H3H 5H5H but followed a tractor lead with 3H 3H 9H QH"),  # no tractor: both pairs
    ("3H 3H 5H 5H 9H QH", "JH JH QH QH", "3H 3H 5H 5H", None),
    ("7S 7S 7D 7D 3S", "BJ BJ SJ SJ", "7S 7S 7D 7D", None),
    ("7S 7S 7D 7D 3S", "BJ BJ SJ SJ", "7S 7S 7D 3S",
     "held the tractor 7S7S7D7D but followed a tractor lead with 7S 7S 7D 3S"),
    ("9H 9H 4H", "JH JH", "9H 9H 4H", "played 3 card(s) (9H 9H 4H) to a lead of 2"),
]


@pytest.mark.parametrize(("hand", "lead", "play", "expected"), FOLLOWS)
def test_follow_obligations(hand: str, lead: str, play: str, expected: str | None) -> None:
    assert follow_error(counts(hand), cards(lead), cards(play), ORDERS[SPADES]) == expected


def test_leads_without_and_with_throws() -> None:
    order = ORDERS[SPADES]
    assert lead_error(cards("AH KH"), order) == "led AH KH, which is not a single, a pair or a tractor (throws are off)"
    assert lead_error(cards("AH KH"), order, HeiqiRules(throws=True)) is None
    assert lead_error(cards("AH AS"), order, HeiqiRules(throws=True)) == "led AH AS, which mixes hearts and trumps"
    assert lead_error(cards("SJ SJ BJ BJ"), order) is None


# --------------------------------------------------------------------------- trick winners

WINNERS = [  # (trump, plays in turn order, index of the winner)
    (SPADES, ["7H", "7D", "7C", "3S"], 0),  # equal other 7s: the first played wins
    (SPADES, ["3S", "7D", "7C", "7H"], 1),
    (SPADES, ["7H", "7D", "7S", "7C"], 2),  # the trump-suit 7 is above the other 7s
    (SPADES, ["2H", "2D", "AS", "2C"], 0),  # equal other 2s, all above the trump ace
    (SPADES, ["2H", "2D", "2S", "SJ"], 3),
    (SPADES, ["AH", "AH", "KH", "3D"], 0),  # identical cards: the first wins
    (SPADES, ["KH", "AH", "3S", "AD"], 2),  # a ruff beats the led suit
    (SPADES, ["KH", "AD", "AC", "QH"], 0),  # other plain suits never win
    (SPADES, ["9H 9H", "3S 3S", "AH AH", "4S 5S"], 1),  # a trump pair beats a plain pair
    (SPADES, ["9H 9H", "3S 4S", "TH TH", "BJ SJ"], 2),  # two trumps that are not a pair do not
    (SPADES, ["7H 7H", "7D 7D", "7C 7C", "4S 4S"], 0),  # pairs of equal 7s: the first wins
    (SPADES, ["7H 7H", "7D 7D", "7S 7S", "2S 2S"], 2),
    (SPADES, ["3H 3H 4H 4H", "5H 5H 6H 6H", "3S 3S 4S 4S", "AH AH KH KH"], 2),  # trump tractor beats all
    (SPADES, ["3H 3H 4H 4H", "5H 5H 9H 9H", "BJ BJ AS AS", "6H 6H 8H 8H"], 3),  # 6688 is a tractor
    (HEARTS, ["7H 7H 7S 7S", "BJ BJ SJ SJ", "2H 2H 2C 2C", "3D 4D 5D 6D"], 1),
]


@pytest.mark.parametrize(("trump", "plays", "winner"), WINNERS)
def test_trick_winner(trump: int, plays: list[str], winner: int) -> None:
    assert trick_winner([cards(p) for p in plays], ORDERS[trump]) == winner


def test_a_throw_falls_only_to_a_trump_of_its_shape() -> None:
    order = ORDERS[SPADES]
    throw = ["AH AH KH", "3S 3S 4S", "QH QH JH", "3S 4S 5S"]
    assert trick_winner([cards(p) for p in throw], order) == 1
    assert trick_winner([cards(p) for p in (throw[0], throw[2], throw[3], "4H 5H 6H")], order) == 0


# --------------------------------------------------------------------------- 摳底 and settlement

@pytest.mark.parametrize(("lead", "factor"), [("AH", 1), ("3D 3D", 2), ("5C 5C 6C 6C", 4), ("7H 7H 7S 7S", 4),
                                              ("7H 7H 7D 7D", 2)])
def test_bottom_factor(lead: str, factor: int) -> None:
    assert bottom_factor(cards(lead), ORDERS[SPADES]) == factor
    assert bottom_factor(cards(lead), ORDERS[SPADES], HeiqiRules(bottom_factors=(1, 3, 9))) == {1: 1, 2: 3, 4: 9}[factor]


@pytest.mark.parametrize(("points", "contract", "dealer", "name", "settlement"), [
    (0, 80, 0, "dealer_double", (144, -48, -48, -48)),  # 光头: 8 tens x 3 units x 2
    (0, 110, 2, "dealer_double", (-22, -22, 66, -22)),  # 11 tens x 1 unit x 2
    (75, 80, 1, "dealer", (0, 0, 0, 0)),  # under the contract but not a full 10 below
    (55, 80, 1, "dealer", (-6, 18, -6, -6)),  # 2 full tens x 3
    (41, 90, 3, "dealer", (-8, -8, -8, 24)),  # 4 full tens x 2
    (100, 100, 0, "draw", (0, 0, 0, 0)),
    (129, 110, 0, "defenders", (-3, 1, 1, 1)),  # 1 full ten x 1
    (230, 100, 1, "defenders", (26, -78, 26, 26)),  # 13 tens x 2 (points above 200 come from 摳底)
])
def test_settlement(points: int, contract: int, dealer: int, name: str, settlement: tuple[int, ...]) -> None:
    assert settle(points, contract, dealer) == (name, settlement)
    assert sum(settlement) == 0


# --------------------------------------------------------------------------- bidding

@pytest.mark.parametrize(("first", "bids", "over", "dealer", "contract"), [
    (0, [None, None, None, None], True, None, None),  # all pass: a redeal
    (2, [110, None, None, None], True, 2, 110),  # the others all passed after a bid
    (1, [None, 90, 80], True, 3, 80),  # 80 ends it at once
    (0, [110, 100, None, None, 90, None], True, 0, 90),  # 1 passed, so 0 speaks after 3
    (0, [110, 100, None, None], False, None, None),  # seat 0 may still bid under 100
])
def test_bidding(first: int, bids: list[int | None], over: bool, dealer: int | None, contract: int | None) -> None:
    b = Bidding(first)
    for bid in bids:
        assert bid in b.legal()
        b.push(bid)
    assert b.over is over
    if over:
        assert (b.bidder, b.lowest) == (dealer, contract)
    else:
        assert b.turn == 0 and b.legal() == [None, 80, 90]


# --------------------------------------------------------------------------- the engine

def test_play_actions_round_trip_and_lead_counts() -> None:
    hand = counts("3H 3H 4H 4H 6H 6H 8H 8H KH BJ 7C 7C 7S 7S")  # hearts: 5 distinct; trumps: BJ 7C 7S
    deal = [hand] + [counts("")] * 3
    st = State(deal, [], 0)
    st.dealer, st.phase, st.order, st.leader = 0, "play", ORDERS[SPADES], 0
    plays = [play_cards(a) for a in st.legal_actions()]
    assert all(play_cards(play_action(p)) == tuple(sorted(p)) for p in plays)
    assert format_action(play_action(cards("7S 7C 7C 7S"))) == "play 7S 7S 7C 7C"
    assert [format_action(a) for a in (bid_action(None), bid_action(90), bury_action(53), trump_action(2))] == [
        "pass", "bid 90", "bury BJ", "trump D"]
    # 8 singles, 6 pairs, tractors 3344 6688 7S7S7C7C (4466 is not: the 5 lies between)
    assert len(plays) == 8 + 6 + 3
    assert all(st.is_legal(play_action(p)) for p in plays)
    assert not st.is_legal(play_action(cards("3H 4H")))
    assert not st.is_legal(play_action(cards("KH KH")))


def test_follow_enumeration_matches_the_rule() -> None:
    deal = [counts("JH JH QH QH"), counts("3H 3H 4H 4H 9H 9H QH"), counts("5C 6C 3S 4D"), counts("AD")]
    st = State(deal, [], 0)
    st.dealer, st.phase, st.order, st.leader = 0, "play", ORDERS[CLUBS], 0
    st.push(play_action(cards("JH JH QH QH")))
    follows = {play_cards(a) for a in st.legal_actions()}
    assert follows == {tuple(cards("3H 3H 4H 4H"))}  # the only tractor it holds
    st.push(play_action(cards("3H 3H 4H 4H")))
    assert [play_cards(a) for a in st.legal_actions()] == [tuple(sorted(cards("3S 5C 6C 4D")))]  # void: its only 4 cards
