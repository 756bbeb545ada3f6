"""Simulated tables of 信阳黑七 with legal heuristic (or random) players, as log v1 records."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Literal, cast

import msgspec

from analyzer.cards import SUITS, format_card
from analyzer.simulate import Simulation
from analyzer.variants.heiqi import (
    BOTTOM_SIZE,
    BidValue,
    TrumpCode,
    KINDS,
    ORDERS,
    SEATS,
    TRUMP,
    DEFAULT_RULES,
    HeiqiBid,
    HeiqiRecord,
    HeiqiResult,
    HeiqiRules,
    HeiqiTrick,
    Order,
    State,
    bid_action,
    bury_action,
    card_points,
    deal_to_codes,
    play_action,
    random_deal,
    shape_of,
    shaped_plays,
    suit_cards,
    trick_winner,
    trump_action,
)

Policy = Literal["heuristic", "random"]
#: Trump-count strength needed to bid each contract, lowest (boldest) contract first.
BID_THRESHOLDS = ((80, 17.0), (90, 15.0), (100, 13.0), (110, 11.5))


#: Shuffle the 108 cards: 4 hands of 25 as counts, and the 8-card bottom (the variant's one definition).
deal = random_deal


def strength(hand: Sequence[int], trump: int) -> float:
    """How well a hand plays with a trump suit: its trumps, trump pairs, and plain aces."""
    order = ORDERS[trump]
    trumps = suit_cards(hand, TRUMP, order)
    aces = sum(hand[s * 13] for s in range(4) if s != trump)
    return len(trumps) + 0.5 * shape_of(trumps, order).pair_count + 0.5 * aces


class Player:
    """A legal player: 'heuristic' bids on trump strength, wins cheaply and feeds points to partners;
    'random' picks among legal choices at random."""

    def __init__(self, rng: random.Random, policy: Policy = "heuristic"):
        self.rng = rng
        self.policy = policy

    def bid(self, st: State) -> int | None:
        legal = [b for b in st.bidding.legal() if b is not None]
        if self.policy == "random":
            return self.rng.choice([None, *legal]) if self.rng.random() < 0.5 or not legal else None
        hand = st.hands[st.current_player()]
        s = max(strength(hand, t) for t in range(4)) + self.rng.uniform(-1.0, 1.0)
        willing = next((b for b, need in BID_THRESHOLDS if s >= need), None)
        ok = [b for b in legal if willing is not None and b >= willing]
        return max(ok) if ok else None

    def trump(self, st: State) -> int:
        hand = st.hands[st.dealer]
        return self.rng.randrange(4) if self.policy == "random" else max(range(4), key=lambda t: strength(hand, t))

    def bury(self, st: State, trump: int) -> list[int]:
        hand = st.hands[st.dealer]
        cards = [c for c in range(KINDS) for _ in range(hand[c])]
        if self.policy == "random":
            return self.rng.sample(cards, BOTTOM_SIZE)
        order = ORDERS[trump]
        # keep trumps, points and pairs; bury low plain cards
        return sorted(cards, key=lambda c: (order.suit[c] == TRUMP, card_points(c) > 0, hand[c] > 1,
                                            order.level[c]))[:BOTTOM_SIZE]

    def play(self, st: State) -> tuple[int, ...]:
        assert st.order is not None
        order = st.order
        seat = st.current_player()
        hand = st.hands[seat]
        if not st.trick:
            leads = [p for s in range(5) for p in shaped_plays(suit_cards(hand, s, order), order)]
            if self.policy == "random":
                return self.rng.choice(leads)
            return max(leads, key=lambda p: (len(p), order.suit[p[0]] != TRUMP, order.level[p[0]]))
        lead = st.trick[0]
        suit, n = order.suit[lead[0]], len(lead)
        leader = st.leader
        best = (leader + trick_winner(st.trick, order)) % SEATS
        friendly = (best == st.dealer) == (seat == st.dealer)
        held = suit_cards(hand, suit, order)
        if len(held) >= n:
            return self._follow_in_suit(st, held, friendly)
        others = [c for c in range(KINDS) if order.suit[c] != suit for _ in range(hand[c])]
        if not held and not friendly and suit != TRUMP:
            ruff = self._ruff(st, suit_cards(hand, TRUMP, order))
            if ruff is not None:
                return ruff
        return tuple(sorted(held + self._pick(others, n - len(held), order, friendly)))

    def _ruff(self, st: State, trumps: list[int]) -> tuple[int, ...] | None:
        """The cheapest trump play of the lead's shape that would take the trick, if any."""
        assert st.order is not None
        order = st.order
        sig = shape_of(st.trick[0], order).signature
        winners = []
        for p in shaped_plays(trumps, order):
            if shape_of(p, order).signature == sig and trick_winner([*st.trick, p], order) == len(st.trick):
                winners.append(p)
        if not winners or (self.policy == "random" and self.rng.random() < 0.5):
            return None
        return min(winners, key=lambda p: shape_of(p, order).top)

    def _pick(self, cards: list[int], k: int, order: Order, friendly: bool) -> list[int]:
        """k cards to discard: points when a partner is winning, else the least useful."""
        if self.policy == "random":
            return self.rng.sample(cards, k)
        sign = -1 if friendly else 1
        return sorted(cards, key=lambda c: (order.suit[c] == TRUMP, sign * card_points(c), order.level[c]))[:k]

    def _follow_in_suit(self, st: State, held: list[int], friendly: bool) -> tuple[int, ...]:
        """n cards of the led suit meeting the tractor and pair obligations, high to win or low to save."""
        assert st.order is not None
        order = st.order
        lead = st.trick[0]
        n = len(lead)
        lead_shape, held_shape = shape_of(lead, order), shape_of(held, order)
        high = not friendly and self.policy == "heuristic"
        pieces = shaped_plays(held, order)
        if self.policy == "random":
            self.rng.shuffle(pieces)
        else:
            pieces.sort(key=lambda p: (sum(card_points(c) for c in p) * (-1 if friendly else 0),
                                       -shape_of(p, order).top if high else shape_of(p, order).top))
        left = Counter(held)
        chosen: list[int] = []

        def take(p: Sequence[int]) -> None:
            chosen.extend(p)
            left.subtract(p)

        def fits(p: Sequence[int]) -> bool:
            return len(chosen) + len(p) <= n and all(left[c] >= k for c, k in Counter(p).items())

        if lead_shape.tractors and held_shape.longest_tractor >= 2:
            need = min(lead_shape.longest_tractor, held_shape.longest_tractor)
            take(next(p for p in pieces if len(p) == 2 * need and shape_of(p, order).kind == "tractor"))
        pairs_needed = min(lead_shape.pair_count, held_shape.pair_count)
        for p in pieces:
            if shape_of(chosen, order).pair_count >= pairs_needed:
                break
            if len(p) == 2 and p[0] == p[1] and fits(p):
                take(p)
        singles = sorted((c for c in left for _ in range(left[c])), key=lambda c: order.level[c], reverse=high)
        if self.policy == "random":
            self.rng.shuffle(singles)
        chosen.extend(singles[: n - len(chosen)])
        return tuple(sorted(chosen))


def play_hand(st: State, players: Sequence[Player]) -> tuple[list[HeiqiBid], list[int], int | None]:
    """Play one hand to the end through ``push``; the bids, the buried cards and the trump suit."""
    bids: list[HeiqiBid] = []
    while st.phase == "bid":
        seat = st.current_player()
        b = players[seat].bid(st)
        bids.append(HeiqiBid(seat=seat, bid=cast(BidValue | None, b)))
        st.push(bid_action(b))
    if st.is_terminal():
        return bids, [], None
    dealer = players[st.dealer]
    trump = dealer.trump(st)
    buried = dealer.bury(st, trump)
    for c in buried:
        st.push(bury_action(c))
    st.push(trump_action(trump))
    while not st.is_terminal():
        st.push(play_action(players[st.current_player()].play(st)))
    return bids, buried, trump


def simulate(*, hands: int, players: int | Sequence[str] = 4, seed: int = 0, policy: Policy = "heuristic",
             run_length: float | None = None, rules: HeiqiRules | dict[str, Any] | None = None,
             **options: Any) -> Simulation:
    """``hands`` hands of 信阳黑七: tables of 4 drawn from the room sit ``run_length`` hands each (default 8).

    Rule options may come as ``rules`` or one by one (``throws=1``). No one colludes here, so the
    truth names no colluders; a collusion option raises ValueError rather than being ignored.
    """
    ids = [f"p{i:02d}" for i in range(1, players + 1)] if isinstance(players, int) else list(players)
    if len(ids) < SEATS or len(set(ids)) != len(ids):
        raise ValueError("a room needs at least 4 distinct players")
    fields = set(HeiqiRules.__struct_fields__)
    given = {k: v for k, v in options.items() if k in fields and v is not None}
    unsupported = sorted(k for k, v in options.items() if k not in fields and v is not None)
    if unsupported:
        raise ValueError(f"xinyang-heiqi simulates honest tables only; unsupported option(s): {', '.join(unsupported)}")
    if policy not in ("heuristic", "random"):
        raise ValueError(f"policy {policy!r}: expected heuristic or random")
    if isinstance(rules, HeiqiRules):
        rules = msgspec.structs.asdict(rules)
    try:
        rule_set = msgspec.convert({**(rules or {}), **given}, HeiqiRules, strict=False) if rules or given else None
    except msgspec.ValidationError as e:
        raise ValueError(f"rule options: {e}") from e
    hands_per_table = max(1, round(run_length or 8))

    def records() -> Iterator[HeiqiRecord]:
        rng = random.Random(seed)
        bots = [Player(rng, policy) for _ in range(SEATS)]
        first = 0
        seated: list[str] = []
        for h in range(hands):
            if h % hands_per_table == 0:
                seated = rng.sample(ids, SEATS)
                first = rng.randrange(SEATS)  # the card turned face up at random
            table = f"t{h // hands_per_table}"
            dealt, bottom = deal(rng)
            st = State(dealt, bottom, first, rule_set or DEFAULT_RULES)
            bids, buried, trump = play_hand(st, bots)
            yield _record(f"{table}-h{h % hands_per_table}", table, seated, dealt, bottom, first, bids, buried,
                          trump, st, rule_set)
            passed_out = st.bidding.bidder is None
            same = passed_out and (rule_set or DEFAULT_RULES).redeal_first_bidder == "same"
            first = first if same else (first + 1) % SEATS

    return Simulation(records(), {"variant": "xinyang-heiqi", "colluders": [], "seed": seed, "policy": policy})


def _record(hand_id: str, table: str, seated: list[str], dealt: list[list[int]], bottom: list[int], first: int,
            bids: list[HeiqiBid], buried: list[int], trump: int | None, st: State,
            rules: HeiqiRules | None) -> HeiqiRecord:
    out = st.outcome()
    played = out.dealer is not None
    return HeiqiRecord(
        format="bieqi-log", version=1, hand_id=hand_id, table_id=table, rules=rules, players=list(seated),
        deal=deal_to_codes(dealt), bottom=[format_card(c) for c in bottom], first_bidder=first,
        bids=bids, dealer=out.dealer,
        buried=[format_card(c) for c in buried] if played else None,
        trump=cast(TrumpCode, SUITS[trump]) if trump is not None else None,
        tricks=[HeiqiTrick(leader=ld, plays=[[format_card(c) for c in p] for p in ps]) for ld, ps in st.tricks]
        if played else None,
        result=HeiqiResult(settlement=list(out.settlement), defender_points=out.defender_points,
                           bottom_points=out.bottom_points, bottom_factor=out.bottom_factor, outcome=out.outcome)
        if played else None)
