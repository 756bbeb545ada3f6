"""信阳黑七 (xinyang-heiqi): two-deck 1-vs-3 trick taking with bids, a buried bottom, pairs and tractors.

A card is an int 0..53 (jokers 52 SJ, 53 BJ); the two decks hold two copies of each, so a hand is a
54-long list of counts. A play is a sorted tuple of cards. Engine actions are ints whose low two bits
say the kind (bid, bury one card, name trump, play) and whose other bits carry the payload.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

import msgspec
from msgspec import Meta

from analyzer.cards import (
    NUM_CARDS,
    RANKS,
    SEVEN,
    SMALL_JOKER,
    SUITS,
    CardError,
    format_card,
    parse_card,
    rank_of,
    suit_of,
)
from analyzer.problems import Problem
from analyzer.variants.record import MAX_INT, Int
from analyzer.variants.base import HandCheck, Offers, VariantBase, players_problems, result_problems, rng_of
from analyzer.variants.record import CardOrJoker as Card
from analyzer.variants.record import HandHeader, Seat, player_of

NAME = "xinyang-heiqi"
SEATS = 4
HAND_SIZE = 25
BOTTOM_SIZE = 8
KINDS = NUM_CARDS + 2  # distinct cards: 52 + two jokers
COPIES = 2
TRUMP = 4  # the effective suit of every trump
TWO = 1  # rank index of the 2 (A=0)
BIDS = (80, 90, 100, 110)
SUIT_WORDS = ("spades", "hearts", "diamonds", "clubs", "trumps")

# Rank levels, low to high. 7 is trump, so 6 and 8 are adjacent in every plain suit.
_PLAIN_ORDER = "345689TJQKA"
OTHER_TWO, TRUMP_TWO, OTHER_SEVEN, TRUMP_SEVEN, SJ_LEVEL, BJ_LEVEL = 11, 12, 13, 14, 15, 16
# Tractors never cross these groups: the seed's 小王主7, 副7主2 and 22AA are not tractors.
_SEGMENT = tuple(0 if lv <= 10 else 1 if lv <= TRUMP_TWO else 2 if lv <= TRUMP_SEVEN else 3
                 for lv in range(BJ_LEVEL + 1))

BID, BURY, NAME_TRUMP, PLAY = range(4)  # action kinds (low two bits)
BidValue = Literal[80, 90, 100, 110]
TrumpCode = Literal["S", "H", "D", "C"]


# --------------------------------------------------------------------------- rule options

#: Bound of every rule factor: settlements stay far inside 2**53 (points <= 200 + a bottom x factor).
MAX_FACTOR = 1 << 10


class HeiqiRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Rule options of 信阳黑七; a log may name any of them in ``rules``, the rest keep defaults."""

    throws: Annotated[bool, Meta(
        description="Allow multi-part leads (甩牌): any cards of one suit. A throw is won by its leader "
        "unless a player out of the suit trumps it with the same shape")] = False
    redeal_first_bidder: Annotated[Literal["same", "next"], Meta(
        description="Who bids first after a hand that all four passed: the same seat, or the next clockwise")] = "same"
    units: Annotated[tuple[Annotated[int, Meta(ge=0, le=MAX_FACTOR)], ...], Meta(
        min_length=4, max_length=4,
        description="Settlement units per full 10 points of difference at contracts 80, 90, 100, 110")] = (3, 2, 2, 1)
    bottom_factors: Annotated[tuple[Annotated[int, Meta(ge=0, le=MAX_FACTOR)], ...], Meta(
        min_length=3, max_length=3,
        description="摳底 factor on the bottom's points when the last lead was a single, a pair, a tractor")] = (1, 2, 4)
    bald_factor: Annotated[int, Meta(ge=1, le=MAX_FACTOR,
                                     description="Factor on the settlement when the defenders score 0 (光头)")] = 2


DEFAULT_RULES = HeiqiRules()


# --------------------------------------------------------------------------- cards under a trump suit

@dataclass(frozen=True, slots=True)
class Order:
    """Effective suit (0..3 plain, 4 trump) and rank level of every card under one trump suit."""

    trump: int
    suit: tuple[int, ...]
    level: tuple[int, ...]


def _order(trump: int) -> Order:
    suit, level = [], []
    for c in range(KINDS):
        if c >= NUM_CARDS:
            suit.append(TRUMP)
            level.append(SJ_LEVEL if c == SMALL_JOKER else BJ_LEVEL)
            continue
        r, s = rank_of(c), suit_of(c)
        if r == SEVEN or r == TWO:
            suit.append(TRUMP)
            level.append((TRUMP_SEVEN if s == trump else OTHER_SEVEN) if r == SEVEN else
                         (TRUMP_TWO if s == trump else OTHER_TWO))
        else:
            suit.append(TRUMP if s == trump else s)
            level.append(_PLAIN_ORDER.index(RANKS[r]))
    return Order(trump, tuple(suit), tuple(level))


#: ORDERS[trump]: the card order once the trump suit is named.
ORDERS = tuple(_order(t) for t in range(4))


def card_points(c: int) -> int:
    """Points of a card: 5 scores 5, 10 and K score 10 (200 in the two decks)."""
    if c >= NUM_CARDS:
        return 0
    return {4: 5, 9: 10, 12: 10}.get(rank_of(c), 0)


def play_points(cards: Sequence[int]) -> int:
    return sum(card_points(c) for c in cards)


def format_cards(cards: Sequence[int]) -> str:
    return " ".join(format_card(c) for c in cards) or "nothing"


# --------------------------------------------------------------------------- shapes: singles, pairs, tractors

def _runs(pairs_at: Counter[int]) -> tuple[int, int]:
    """Longest run of consecutive levels holding a pair, within one tractor group: (length, top level)."""
    best = (0, -1)
    for top in sorted(pairs_at):
        if pairs_at[top] <= 0:
            continue
        n = 1
        while pairs_at.get(top - n, 0) > 0 and _SEGMENT[top - n] == _SEGMENT[top]:
            n += 1
        best = max(best, (n, top))
    return best


@dataclass(frozen=True, slots=True)
class Shape:
    """A set of cards of one suit split greedily into tractors (longest first), pairs and singles."""

    tractors: tuple[tuple[int, int], ...]  # (pairs, top level)
    pairs: tuple[int, ...]  # levels, high first
    singles: tuple[int, ...]

    @property
    def signature(self) -> tuple[tuple[int, ...], int, int]:
        """What two plays must share to compete for a trick."""
        return tuple(n for n, _ in self.tractors), len(self.pairs), len(self.singles)

    @property
    def parts(self) -> int:
        return len(self.tractors) + len(self.pairs) + len(self.singles)

    @property
    def pair_count(self) -> int:
        return sum(n for n, _ in self.tractors) + len(self.pairs)

    @property
    def longest_tractor(self) -> int:
        return self.tractors[0][0] if self.tractors else 0

    @property
    def top(self) -> int:
        """Level of the part that decides a contest: the longest tractor, else the highest pair or single."""
        if self.tractors:
            return self.tractors[0][1]
        return self.pairs[0] if self.pairs else self.singles[0]

    @property
    def kind(self) -> str:
        """'single', 'pair', 'tractor' for one-part plays, 'throw' otherwise."""
        if self.parts != 1:
            return "throw"
        return "tractor" if self.tractors else "pair" if self.pairs else "single"


def shape_of(cards: Sequence[int], order: Order) -> Shape:
    counts = Counter(cards)
    pairs_at = Counter(order.level[c] for c, n in counts.items() if n >= 2)
    tractors = []
    while True:
        n, top = _runs(pairs_at)
        if n < 2:
            break
        tractors.append((n, top))
        for lv in range(top - n + 1, top + 1):
            pairs_at[lv] -= 1
    tractors.sort(reverse=True)
    pairs = tuple(sorted((lv for lv, k in pairs_at.items() for _ in range(k)), reverse=True))
    singles = tuple(sorted((order.level[c] for c, n in counts.items() if n == 1), reverse=True))
    return Shape(tuple(tractors), pairs, singles)


def suit_cards(hand: Sequence[int], suit: int, order: Order) -> list[int]:
    """The cards of one effective suit in a hand of counts, each copy listed, sorted by card."""
    return [c for c in range(KINDS) if hand[c] and order.suit[c] == suit for _ in range(hand[c])]


def shaped_plays(cards: Sequence[int], order: Order) -> list[tuple[int, ...]]:
    """Every single, pair and tractor among some cards of one suit (the leads when throws are off)."""
    counts = Counter(cards)
    out: list[tuple[int, ...]] = [(c,) for c in sorted(counts)]
    doubled = sorted((c for c, n in counts.items() if n >= COPIES), key=lambda c: (order.level[c], c))
    out += [(c, c) for c in sorted(doubled)]
    for i, low in enumerate(doubled):  # grow a run up from each pair, skipping equal-level pairs
        run = [low]
        for c in doubled[i + 1:]:
            play = tuple(sorted((run + [c]) * 2))
            if shape_of(play, order).kind == "tractor":
                run.append(c)
                out.append(play)
    return out


def _pairs_text(cards: Sequence[int]) -> str:
    pairs = sorted({c for c, n in Counter(cards).items() if n >= 2})
    return ("the pair " if len(pairs) == 1 else "the pairs ") + " ".join(format_card(c) * 2 for c in pairs)


def _tractor_text(cards: Sequence[int], order: Order) -> str:
    """The cards of the longest tractor in ``cards`` (all of one suit), for messages."""
    n, top = shape_of(cards, order).tractors[0]
    levels = range(top - n + 1, top + 1)
    picked = sorted({c for c, k in Counter(cards).items() if k >= 2 and order.level[c] in levels},
                    key=lambda c: -order.level[c])
    return "the tractor " + "".join(format_card(c) * 2 for c in picked)


# --------------------------------------------------------------------------- leads, follows, winners

def lead_error(cards: Sequence[int], order: Order, rules: HeiqiRules = DEFAULT_RULES) -> str | None:
    """Why a lead is not allowed (the cards are known to be held), or None."""
    if not cards:
        return "led no cards"
    suits = {order.suit[c] for c in cards}
    if len(suits) > 1:
        return f"led {format_cards(cards)}, which mixes {' and '.join(SUIT_WORDS[s] for s in sorted(suits))}"
    if not rules.throws and shape_of(cards, order).parts != 1:
        return f"led {format_cards(cards)}, which is not a single, a pair or a tractor (throws are off)"
    return None


def follow_error(hand: Sequence[int], lead: Sequence[int], cards: Sequence[int], order: Order) -> str | None:
    """Why ``cards`` (known to be held) may not follow ``lead`` from ``hand`` (counts before the play), or None."""
    n = len(lead)
    if len(cards) != n:
        return f"played {len(cards)} card(s) ({format_cards(cards)}) to a lead of {n}"
    suit = order.suit[lead[0]]
    held = suit_cards(hand, suit, order)
    played = [c for c in cards if order.suit[c] == suit]
    lead_shape = shape_of(lead, order)
    what = f"followed a {lead_shape.kind} lead with {format_cards(cards)}"
    if len(played) < min(n, len(held)):
        return f"held {len(held)} {SUIT_WORDS[suit]} ({format_cards(held)}) but {what}"
    if not lead_shape.pair_count:
        return None  # singles only: following suit was the whole duty
    held_shape, played_shape = shape_of(held, order), shape_of(played, order)
    if lead_shape.tractors and held_shape.longest_tractor >= 2:
        need = min(lead_shape.longest_tractor, held_shape.longest_tractor)
        if played_shape.longest_tractor < need:
            return f"held {_tractor_text(held, order)} but {what}"
    if played_shape.pair_count < min(lead_shape.pair_count, held_shape.pair_count):
        return f"held {_pairs_text(held)} but {what}"
    return None


def trick_winner(plays: Sequence[Sequence[int]], order: Order) -> int:
    """Index (in play order) of the play that wins a trick; equal plays: the first played wins."""
    suit = order.suit[plays[0][0]]
    shape = shape_of(plays[0], order)
    best, best_key = 0, (suit == TRUMP, shape.top)
    for i in range(1, len(plays)):
        suits = {order.suit[c] for c in plays[i]}
        if len(suits) != 1:
            continue
        s = suits.pop()
        # a throw claims every part is top in its suit: only a player out of the suit trumping it with the same shape
        # beats it, so nobody beats a throw of trumps (a higher trump play of its shape follows suit, as a higher
        # plain play follows a plain throw)
        if not (s == suit and shape.parts == 1 or s == TRUMP and suit != TRUMP):
            continue
        sh = shape_of(plays[i], order)
        key = (s == TRUMP, sh.top)
        if sh.signature == shape.signature and key > best_key:
            best, best_key = i, key
    return best


def bottom_factor(last_lead: Sequence[int], order: Order, rules: HeiqiRules = DEFAULT_RULES) -> int:
    """摳底 factor from the shape of the last trick's lead: single, pair or tractor (a throw: its best part)."""
    sh = shape_of(last_lead, order)
    return rules.bottom_factors[2 if sh.tractors else 1 if sh.pairs else 0]


# --------------------------------------------------------------------------- bidding

class Bidding:
    """The auction: in turn, bid below the lowest bid so far or pass for good; 80 or a lone bidder ends it."""

    __slots__ = ("turn", "passed", "lowest", "bidder", "over")

    def __init__(self, first_bidder: int):
        self.turn = first_bidder
        self.passed = [False] * SEATS
        self.lowest: int | None = None
        self.bidder: int | None = None
        self.over = False

    def legal(self) -> list[int | None]:
        """None is a pass."""
        if self.over:
            return []
        return [None, *(b for b in BIDS if self.lowest is None or b < self.lowest)]

    def push(self, bid: int | None) -> None:
        if bid is None:
            self.passed[self.turn] = True
        else:
            self.lowest, self.bidder = bid, self.turn
        others_out = all(self.passed[s] for s in range(SEATS) if s != self.bidder)
        if bid == BIDS[0] or others_out:
            self.over = True
            return
        self.turn = (self.turn + 1) % SEATS
        while self.passed[self.turn]:
            self.turn = (self.turn + 1) % SEATS


# --------------------------------------------------------------------------- outcome and settlement

OutcomeName = Literal["dealer_double", "dealer", "draw", "defenders"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished hand. ``dealer`` is None when all four passed (then everything else is zero)."""

    first_bidder: int
    dealer: int | None
    contract: int | None
    defender_points: int  # including the bottom's points times the 摳底 factor
    bottom_points: int  # points of the buried cards
    bottom_factor: int  # 0 when the dealer won the last trick
    outcome: OutcomeName | None
    settlement: tuple[int, ...]


def settle(defender_points: int, contract: int, dealer: int,
           rules: HeiqiRules = DEFAULT_RULES) -> tuple[OutcomeName, tuple[int, ...]]:
    """步步高: units per full 10 points between the defenders' points and the contract; the dealer x3."""
    unit = rules.units[BIDS.index(contract)]
    name: OutcomeName
    if defender_points == 0:
        name, each = "dealer_double", contract // 10 * unit * rules.bald_factor
    elif defender_points < contract:
        name, each = "dealer", (contract - defender_points) // 10 * unit
    elif defender_points == contract:
        name, each = "draw", 0
    else:
        name, each = "defenders", -((defender_points - contract) // 10 * unit)
    return name, tuple((SEATS - 1) * each if s == dealer else -each for s in range(SEATS))


# --------------------------------------------------------------------------- actions

def bid_action(bid: int | None) -> int:
    return BID | (bid or 0) << 2


def bury_action(card: int) -> int:
    return BURY | card << 2


def trump_action(suit: int) -> int:
    return NAME_TRUMP | suit << 2


def play_action(cards: Sequence[int]) -> int:
    """A play as one int: 6 bits per card (card + 1), sorted, above the kind bits."""
    packed = 0
    for c in sorted(cards, reverse=True):
        packed = packed << 6 | (c + 1)
    return PLAY | packed << 2


def play_cards(action: int) -> tuple[int, ...]:
    out = []
    x = action >> 2
    while x:
        out.append((x & 63) - 1)
        x >>= 6
    return tuple(out)


def format_action(action: int) -> str:
    kind, payload = action & 3, action >> 2
    if kind == BID:
        return f"bid {payload}" if payload else "pass"
    if kind == BURY:
        return f"bury {format_card(payload)}"
    if kind == NAME_TRUMP:
        return f"trump {SUITS[payload]}"
    return "play " + format_cards(play_cards(action))


def _sub_multisets(cards: Sequence[int], k: int) -> Iterator[tuple[int, ...]]:
    """Every distinct multiset of k cards drawn from ``cards`` (a list with repeats)."""
    counts = sorted(Counter(cards).items())

    def rec(i: int, left: int) -> Iterator[tuple[int, ...]]:
        if left == 0:
            yield ()
            return
        if i == len(counts):
            return
        c, n = counts[i]
        for take in range(min(n, left), -1, -1):
            for rest in rec(i + 1, left - take):
                yield (c,) * take + rest

    return rec(0, k)


# --------------------------------------------------------------------------- the game state

class State:
    """One hand from the deal: bidding, burying, naming trump, then tricks. ``push`` does not check."""

    __slots__ = ("hands", "bottom", "first_bidder", "rules", "bidding", "phase", "dealer", "contract", "buried", "order",
                 "leader", "trick", "tricks", "defender_points", "last_lead", "last_winner", "n", "history", "bids")

    def __init__(self, deal: Sequence[Sequence[int]], bottom: Sequence[int], first_bidder: int,
                 rules: HeiqiRules = DEFAULT_RULES):
        """``deal``: 4 count lists (54 long) by seat; ``bottom``: the 8 bottom cards."""
        self.hands = [list(h) for h in deal]
        self.bottom = tuple(bottom)
        self.first_bidder = first_bidder
        self.rules = rules
        self.bidding = Bidding(first_bidder)
        self.phase = "bid"
        self.dealer = -1
        self.contract = 0
        self.buried: list[int] = []
        self.order: Order | None = None
        self.leader = -1
        self.trick: list[tuple[int, ...]] = []
        self.tricks: list[tuple[int, list[tuple[int, ...]]]] = []  # (leader, plays in turn order)
        self.defender_points = 0
        self.last_lead: tuple[int, ...] = ()
        self.last_winner = -1
        self.n = 0
        self.history: list[int] = []
        self.bids: list[tuple[int, int | None]] = []  # (seat, bid or None for a pass)

    def copy(self) -> State:
        """An independent copy (lists copied, immutable parts shared)."""
        s = State.__new__(State)
        for name in State.__slots__:
            setattr(s, name, getattr(self, name))
        s.hands = [h[:] for h in self.hands]
        b = Bidding.__new__(Bidding)
        b.turn, b.passed, b.lowest, b.bidder, b.over = (self.bidding.turn, self.bidding.passed[:], self.bidding.lowest,
                                                        self.bidding.bidder, self.bidding.over)
        s.bidding = b
        s.buried, s.trick, s.history, s.bids = self.buried[:], self.trick[:], self.history[:], self.bids[:]
        s.tricks = [(ld, ps[:]) for ld, ps in self.tricks]
        return s

    def current_player(self) -> int:
        if self.phase == "bid":
            return self.bidding.turn
        if self.phase in ("bury", "trump"):
            return self.dealer
        if self.phase == "play":
            return (self.leader + len(self.trick)) % SEATS
        return -1

    def is_terminal(self) -> bool:
        return self.phase == "done"

    def generate_plays(self) -> Iterator[tuple[int, ...]]:
        """Every legal play of the seat to act (distinct multisets); with throws on, leads can be many."""
        assert self.order is not None
        hand = self.hands[self.current_player()]
        order = self.order
        if not self.trick:
            for suit in range(5):
                cards = suit_cards(hand, suit, order)
                if self.rules.throws:
                    for k in range(1, len(cards) + 1):
                        yield from _sub_multisets(cards, k)
                    continue
                yield from shaped_plays(cards, order)
            return
        lead = self.trick[0]
        n = len(lead)
        held = suit_cards(hand, order.suit[lead[0]], order)
        if len(held) <= n:
            others = [c for c in range(KINDS) if order.suit[c] != order.suit[lead[0]] for _ in range(hand[c])]
            for rest in _sub_multisets(others, n - len(held)):
                yield tuple(sorted(held + list(rest)))
            return
        for p in _sub_multisets(held, n):
            if follow_error(hand, lead, p, order) is None:
                yield p

    def legal_actions(self) -> list[int]:
        if self.phase == "bid":
            return [bid_action(b) for b in self.bidding.legal()]
        if self.phase == "bury":
            return [bury_action(c) for c in range(KINDS) if self.hands[self.dealer][c]]
        if self.phase == "trump":
            return [trump_action(s) for s in range(4)]
        if self.phase == "play":
            return sorted(play_action(p) for p in self.generate_plays())
        return []

    def play_problem(self, cards: Sequence[int]) -> tuple[str, str] | None:
        """(problem code, why) when the seat to act may not play ``cards`` now, or None. The code is
        ``card-not-held``, ``bad-lead`` or ``bad-follow`` (see :mod:`analyzer.problems`)."""
        assert self.order is not None
        hand = self.hands[self.current_player()]
        for c, k in Counter(cards).items():
            if not 0 <= c < KINDS or hand[c] < k:
                return "card-not-held", (f"does not hold {'two of ' if k > 1 else ''}"
                                         f"{format_card(c) if 0 <= c < KINDS else c}")
        if not self.trick:
            why = lead_error(cards, self.order, self.rules)
            return None if why is None else ("bad-lead", why)
        why = follow_error(hand, self.trick[0], cards, self.order)
        return None if why is None else ("bad-follow", why)

    def play_error(self, cards: Sequence[int]) -> str | None:
        """Why the seat to act may not play ``cards`` now, or None."""
        found = self.play_problem(cards)
        return None if found is None else found[1]

    def is_legal(self, action: int) -> bool:
        kind, payload = action & 3, action >> 2
        if self.phase == "bid":
            return kind == BID and (payload or None) in self.bidding.legal()
        if self.phase == "bury":
            return kind == BURY and 0 <= payload < KINDS and self.hands[self.dealer][payload] > 0
        if self.phase == "trump":
            return kind == NAME_TRUMP and 0 <= payload < 4
        return self.phase == "play" and kind == PLAY and self.play_error(play_cards(action)) is None

    def push(self, action: int) -> None:
        kind, payload = action & 3, action >> 2
        self.n += 1
        self.history.append(action)
        if kind == BID:
            self.bids.append((self.bidding.turn, payload or None))
            self.bidding.push(payload or None)
            if self.bidding.over:
                if self.bidding.bidder is None:
                    self.phase = "done"
                else:
                    self.dealer, self.contract = self.bidding.bidder, self.bidding.lowest or 0
                    for c in self.bottom:
                        self.hands[self.dealer][c] += 1
                    self.phase = "bury"
        elif kind == BURY:
            self.hands[self.dealer][payload] -= 1
            self.buried.append(payload)
            if len(self.buried) == BOTTOM_SIZE:
                self.phase = "trump"
        elif kind == NAME_TRUMP:
            self.order = ORDERS[payload]
            self.leader = self.dealer
            self.phase = "play"
        else:
            self._play(play_cards(action))

    def _play(self, cards: tuple[int, ...]) -> None:
        assert self.order is not None
        hand = self.hands[self.current_player()]
        for c in cards:
            hand[c] -= 1
        self.trick.append(cards)
        if len(self.trick) < SEATS:
            return
        winner = (self.leader + trick_winner(self.trick, self.order)) % SEATS
        if winner != self.dealer:
            self.defender_points += sum(play_points(p) for p in self.trick)
        self.tricks.append((self.leader, self.trick))
        self.last_lead, self.last_winner = self.trick[0], winner
        self.leader, self.trick = winner, []
        if not any(self.hands[self.dealer]):
            self.phase = "done"

    def outcome(self) -> Outcome:
        if self.bidding.bidder is None:
            return Outcome(self.first_bidder, None, None, 0, 0, 0, None, (0,) * SEATS)
        assert self.order is not None
        bottom = play_points(self.buried)
        factor = 0
        if self.last_winner != self.dealer:
            factor = bottom_factor(self.last_lead, self.order, self.rules)
        points = self.defender_points + bottom * factor
        name, settlement = settle(points, self.contract, self.dealer, self.rules)
        return Outcome(self.first_bidder, self.dealer, self.contract, points, bottom, factor, name, settlement)

    def returns(self) -> list[int]:
        return list(self.outcome().settlement)


# --------------------------------------------------------------------------- log record (v1)



class HeiqiBid(msgspec.Struct, forbid_unknown_fields=True):
    seat: Annotated[Seat, Meta(description="Seat that speaks")]
    bid: Annotated[BidValue | None, Meta(description="The bid, or null for a (final) pass")]


class HeiqiTrick(msgspec.Struct, forbid_unknown_fields=True):
    leader: Annotated[Seat, Meta(description="Seat that leads: the dealer first, then each trick's winner")]
    plays: Annotated[list[list[Card]], Meta(min_length=4, max_length=4,
                                            description="The 4 plays in turn order from the leader")]


class HeiqiResult(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    settlement: Annotated[list[Int], Meta(min_length=4, max_length=4,
                                          description="Units won (+) or lost (-) by each seat; sums to zero")]
    defender_points: Annotated[int, Meta(ge=0, le=MAX_INT, description="Defenders' points including the 摳底 bottom")] | None = None
    bottom_points: Annotated[int, Meta(ge=0, le=MAX_INT, description="Points of the 8 buried cards")] | None = None
    bottom_factor: Annotated[int, Meta(ge=0, le=MAX_INT, description="摳底 factor on the bottom (0: dealer won the last trick)")] \
        | None = None
    outcome: OutcomeName | None = None


class HeiqiRecord(HandHeader, tag=NAME, kw_only=True):
    """One hand of 信阳黑七 in log format v1."""

    rules: HeiqiRules | None = None
    deal: Annotated[list[list[Card]], Meta(min_length=4, max_length=4, description="25 cards for each seat")]
    bottom: Annotated[list[Card], Meta(description="The 8 cards of the bottom (底牌) as dealt")]
    first_bidder: Annotated[Seat, Meta(description="Seat that bids first")]
    bids: Annotated[list[HeiqiBid], Meta(description="Every bid and pass in order")]
    dealer: Annotated[Seat | None, Meta(description="The lowest bidder (庄家), or null when all four passed")]
    buried: Annotated[list[Card], Meta(description="The 8 cards the dealer buried")] | None = None
    trump: Annotated[TrumpCode, Meta(description="Trump suit named by the dealer")] | None = None
    tricks: Annotated[list[HeiqiTrick], Meta(description="Every trick in order")] | None = None
    result: HeiqiResult | None = None


# --------------------------------------------------------------------------- replay check

def _parse_cards(codes: Sequence[str]) -> tuple[list[int], str | None]:
    """Card ints of some codes, or the first code's error."""
    out = []
    for code in codes:
        try:
            out.append(parse_card(code, jokers=True))
        except CardError as e:
            return out, str(e)
    return out, None


def _counts(cards: Sequence[int]) -> list[int]:
    counts = [0] * KINDS
    for c in cards:
        counts[c] += 1
    return counts


def _result_problems(rec: HeiqiRecord, out: Outcome) -> list[Problem]:
    res = rec.result
    if res is None:
        return []
    why = (f"(contract {out.contract}, defenders {out.defender_points} points incl. bottom {out.bottom_points} "
           f"x{out.bottom_factor})")
    checks: list[tuple[str, Any, Any]] = [
        ("settlement", res.settlement, list(out.settlement)),
        ("defender_points", res.defender_points, out.defender_points),
        ("bottom_points", res.bottom_points, out.bottom_points),
        ("bottom_factor", res.bottom_factor, out.bottom_factor),
        ("outcome", res.outcome, out.outcome),
    ]
    return result_problems(rec.hand_id, checks, why, zero_sum=("settlement", res.settlement))


@dataclass(frozen=True, slots=True)
class HeiqiDeal:
    """A deal of 信阳黑七: 4 hands of 25 as count lists, the 8-card bottom, and the seat that bids first."""

    hands: list[list[int]]
    bottom: list[int]
    first_bidder: int


def random_deal(rng: random.Random) -> tuple[list[list[int]], list[int]]:
    """Shuffle the 108 cards: 4 hands of 25 as counts, and the 8-card bottom."""
    cards = [c for c in range(KINDS) for _ in range(COPIES)]
    rng.shuffle(cards)
    hands = [[0] * KINDS for _ in range(SEATS)]
    for i, c in enumerate(cards[: SEATS * HAND_SIZE]):
        hands[i // HAND_SIZE][c] += 1
    return hands, sorted(cards[SEATS * HAND_SIZE:])


class HeiqiVariant(VariantBase):
    name = NAME
    record_type = HeiqiRecord
    description = "信阳黑七: two decks, 1 dealer against 3, bids 80-110, buried bottom, pairs and tractors"
    num_players = SEATS
    #: At most 4 bids and 4 passes, the 8 buried cards, the trump, and 25 tricks of 4 plays.
    max_game_length = 2 * len(BIDS) + BOTTOM_SIZE + 1 + SEATS * HAND_SIZE
    offers = Offers(hand_view="analyzer.report.hand_heiqi", simulator="analyzer.simulate.heiqi")

    def new_initial_state(self, deal: HeiqiDeal, rules: HeiqiRules | None = None) -> State:
        return State(deal.hands, deal.bottom, deal.first_bidder, rules or DEFAULT_RULES)

    def random_deal(self, seed: int | random.Random) -> HeiqiDeal:
        rng = rng_of(seed)
        hands, bottom = random_deal(rng)
        return HeiqiDeal(hands, bottom, rng.randrange(SEATS))

    def deal_of(self, rec: HeiqiRecord) -> HeiqiDeal:
        return HeiqiDeal([_counts([parse_card(c, jokers=True) for c in h]) for h in rec.deal],
                         [parse_card(c, jokers=True) for c in rec.bottom], rec.first_bidder)

    def actions_of(self, rec: HeiqiRecord) -> list[int]:
        out = [bid_action(b.bid) for b in rec.bids]
        if rec.buried is not None and rec.trump is not None:
            out += [bury_action(parse_card(c, jokers=True)) for c in rec.buried]
            out.append(trump_action(SUITS.index(rec.trump)))
        for tr in rec.tricks or ():
            out += [play_action([parse_card(c, jokers=True) for c in p]) for p in tr.plays]
        return out

    def make_record(self, state: State, deal: HeiqiDeal, *, hand_id: str, players: Sequence[str],
                    table_id: str | None = None, with_result: bool = True, **fields: Any) -> HeiqiRecord:
        out = state.outcome()
        played = out.dealer is not None
        done = played and state.is_terminal()
        return HeiqiRecord(
            format="bieqi-log", version=1, hand_id=hand_id, table_id=table_id, players=list(players),
            rules=None if state.rules == DEFAULT_RULES else state.rules, **fields,
            deal=deal_to_codes(deal.hands), bottom=[format_card(c) for c in deal.bottom],
            first_bidder=deal.first_bidder, bids=[HeiqiBid(seat=s, bid=cast(BidValue | None, b)) for s, b in state.bids],
            dealer=state.bidding.bidder if state.bidding.over else None,
            buried=[format_card(c) for c in state.buried] if played else None,
            trump=cast(TrumpCode, SUITS[state.order.trump]) if played and state.order is not None else None,
            tricks=[HeiqiTrick(leader=ld, plays=[[format_card(c) for c in p] for p in ps]) for ld, ps in state.tricks]
            if played else None,
            result=HeiqiResult(settlement=list(out.settlement), defender_points=out.defender_points,
                               bottom_points=out.bottom_points, bottom_factor=out.bottom_factor, outcome=out.outcome)
            if done and with_result else None)

    def deal_counts(self, rec: HeiqiRecord, problems: list[Problem]) -> tuple[list[list[int]], list[int]] | None:
        """Hands as counts and the bottom, or None after adding bad-card / bad-deal problems."""
        hand = rec.hand_id
        hands = []
        for s, codes in enumerate(rec.deal):
            cards, err = _parse_cards(codes)
            if err:
                problems.append(Problem("bad-card", f"deal[{s}]: {err}", hand_id=hand, seat=s, player=player_of(rec, s)))
            hands.append(cards)
        bottom, err = _parse_cards(rec.bottom)
        if err:
            problems.append(Problem("bad-card", f"bottom: {err}", hand_id=hand))
        if any(p.code == "bad-card" for p in problems):
            return None
        sizes = [len(h) for h in hands]
        total = _counts([c for h in hands for c in h] + bottom)
        what = []
        if sizes != [HAND_SIZE] * SEATS or len(bottom) != BOTTOM_SIZE:
            what.append(f"seat sizes {sizes} and bottom {len(bottom)}, expected 25 each and 8")
        extra = [format_card(c) for c in range(KINDS) if total[c] > COPIES]
        missing = [format_card(c) for c in range(KINDS) if total[c] < COPIES]
        if extra:
            what.append(f"more than two copies: {' '.join(extra)}")
        if missing:
            what.append(f"fewer than two copies: {' '.join(missing)}")
        if what:
            problems.append(Problem("bad-deal", "the deal is not the 108 cards 25 a seat and 8 in the bottom: "
                                    + "; ".join(what), hand_id=hand))
            return None
        return [_counts(h) for h in hands], bottom

    def check(self, rec: HeiqiRecord) -> HandCheck:
        hand = rec.hand_id
        problems = players_problems(rec)
        dealt = self.deal_counts(rec, problems)
        if dealt is None:
            return HandCheck(problems)
        st = State(dealt[0], dealt[1], rec.first_bidder, rec.rules or DEFAULT_RULES)

        def add(code: str, msg: str, seat: int | None = None, trick: int | None = None) -> HandCheck:
            problems.append(Problem(code, msg, hand_id=hand, seat=seat,
                                    player=None if seat is None else player_of(rec, seat), trick=trick))
            return HandCheck(problems)

        for i, b in enumerate(rec.bids):
            said = "pass" if b.bid is None else f"bid {b.bid}"
            if st.phase != "bid":
                return add("bad-bidding", f"bid {i} ({said}) comes after the bidding ended", b.seat)
            turn = st.bidding.turn
            if b.seat != turn:
                return add("bad-bidding", f"bid {i}: it is seat {turn}'s turn to bid; found seat {b.seat} {said}",
                           b.seat)
            if b.bid not in st.bidding.legal():
                return add("bad-bidding", f"bid {i}: seat {b.seat} bid {b.bid}, not lower than the lowest bid so far "
                           f"({st.bidding.lowest})", b.seat)
            st.push(bid_action(b.bid))
        if st.phase == "bid":
            turn = st.bidding.turn
            return add("bad-bidding", f"the bidding stops after {len(rec.bids)} bid(s) with seat {turn} still to "
                       f"speak", turn)
        bidder = st.bidding.bidder
        if rec.dealer != bidder:
            who = "nobody: all four passed" if bidder is None else f"seat {bidder}, the lowest bidder ({st.contract})"
            recorded = "null (nobody: a pass-out)" if rec.dealer is None else f"seat {rec.dealer}"
            return add("bad-dealer-choice", f"the dealer is recorded as {recorded}, but it is {who}", rec.dealer)
        if bidder is None:  # a redeal: empty lists and a result of nothing (0 each) say the same as no field
            if rec.buried or rec.trump is not None or rec.tricks:
                return add("extra-actions", "all four passed, so the cards are dealt again: the hand has no "
                           "buried cards, trump or tricks")
            res = rec.result
            if res is not None and (any(res.settlement) or res.outcome is not None or any(
                    getattr(res, f) for f in ("defender_points", "bottom_points", "bottom_factor"))):
                return add("result-mismatch", "all four passed, so the cards are dealt again: the hand has no "
                           "result, or a settlement of 0 for each seat and nothing else")
            return HandCheck(problems, st.outcome())
        for field_name in ("buried", "trump", "tricks"):
            if getattr(rec, field_name) is None:
                return add("missing-field", f"seat {bidder} is the dealer, but the hand has no {field_name!r}")
        return self._check_play(rec, st, problems, add)

    def _check_play(self, rec: HeiqiRecord, st: State, problems: list[Problem],
                    add: Callable[..., HandCheck]) -> HandCheck:
        dealer = st.dealer
        assert rec.buried is not None and rec.trump is not None and rec.tricks is not None
        buried, err = _parse_cards(rec.buried)
        if err:
            return add("bad-card", f"buried: {err}", dealer)
        held = st.hands[dealer]
        over = [c for c, k in Counter(buried).items() if held[c] < k]
        if len(buried) != BOTTOM_SIZE or over:
            why = f"buried {len(buried)} cards, expected 8" if len(buried) != BOTTOM_SIZE else \
                f"buried {' '.join(format_card(c) for c in over)} more often than held after taking the bottom"
            return add("bad-bury", f"seat {dealer} {why}", dealer)
        for c in buried:
            st.push(bury_action(c))
        st.push(trump_action(SUITS.index(rec.trump)))
        for t, tr in enumerate(rec.tricks):
            if st.is_terminal():
                return add("extra-actions", f"{len(rec.tricks) - t} trick(s) after every card is played", tr.leader, t)
            if tr.leader != st.leader:
                why = "the dealer leads the first trick" if t == 0 else "the winner of the trick before leads"
                return add("wrong-leader", f"trick led by seat {tr.leader}, expected seat {st.leader}: {why}",
                           tr.leader, t)
            for codes in tr.plays:
                seat = st.current_player()
                cards, err = _parse_cards(codes)
                if err:
                    return add("bad-card", f"seat {seat}: {err}", seat, t)
                found = st.play_problem(cards)
                if found is not None:
                    return add(found[0], f"seat {seat} {found[1]}", seat, t)
                st.push(play_action(cards))
        if not st.is_terminal():
            seat = st.current_player()
            left = sum(st.hands[seat])
            return add("missing-actions", f"the hand ends after {len(rec.tricks)} trick(s) with {left} card(s) still "
                       f"in each hand", seat, len(rec.tricks))
        out = st.outcome()
        problems.extend(_result_problems(rec, out))
        return HandCheck(problems, out)

    def table_key(self, record: HeiqiRecord) -> str | None:
        return record.table_id

    def check_sequence(self, previous: HandCheck, record: HeiqiRecord) -> list[Problem]:
        """The first bid passes clockwise from hand to hand (after a redeal, per the rule option)."""
        prev: Outcome | None = previous.outcome
        if prev is None:
            return []
        rules = record.rules or DEFAULT_RULES
        step = 0 if prev.dealer is None and rules.redeal_first_bidder == "same" else 1
        expected = (prev.first_bidder + step) % SEATS
        if record.first_bidder == expected:
            return []
        return [Problem("bad-first-bidder", f"seat {record.first_bidder} bids first, but after the table's previous "
                        f"hand (first bidder seat {prev.first_bidder}"
                        f"{', passed out' if prev.dealer is None else ''}) it is seat {expected}"
                        + (_redeal_rule_text(record) if prev.dealer is None else ""),
                        hand_id=record.hand_id, seat=record.first_bidder, player=player_of(record, record.first_bidder))]


def _redeal_rule_text(record: HeiqiRecord) -> str:
    """After a pass-out the expected seat is the house rule's: the message names the option, its value, and how
    to set the other (a log's ``rules``, docs/rules/heiqi.md)."""
    value = (record.rules or DEFAULT_RULES).redeal_first_bidder
    given = "the default" if value == DEFAULT_RULES.redeal_first_bidder else "this hand's rules"
    other = "next" if value == "same" else "same"
    return (f", by the rule option redeal_first_bidder: \"{value}\" ({given}); tables whose redeal passes the first "
            f"bid {'on clockwise' if other == 'next' else 'back to the same seat'} set "
            f"\"rules\": {{\"redeal_first_bidder\": \"{other}\"}} in each hand")


def deal_to_codes(hands: Sequence[Sequence[int]]) -> list[list[str]]:
    """Hands as count lists -> the log's ``deal`` (codes sorted by card, copies adjacent)."""
    return [[format_card(c) for c in range(KINDS) for _ in range(h[c])] for h in hands]


VARIANT = HeiqiVariant()
