"""The rules of standard 憋七 as data: named constants, the live-card and cards-beyond tables, rule options.

The one definition every layer reads: the Python engine (:mod:`analyzer.variants.bieqi`), the
table variant, the compiled kernels (:mod:`analyzer.kernels`, which turn these tuples into arrays)
and the strategy features. It imports only :mod:`analyzer.cards` (itself a leaf) and msgspec, so
nothing here can pull in a layer above. :func:`apply_action` is plain Python over indexable
state, so the engine calls it on lists and the kernels compile it over int arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from analyzer.cards import NUM_CARDS, RANKS_PER_SUIT, SEVEN, SEVEN_OF_SPADES, SEVENS, SUIT_BITS

SEATS = 4
HAND_SIZE = 13
ACTIONS_PER_HAND = 52
#: Engine action ``COVER + card`` covers the card; an action below COVER plays it.
COVER = 52
#: A hand never holds more than 13 cards, so a decision never has more options than that.
MAX_OPTIONS = HAND_SIZE
#: A log's card code is two ASCII characters (rank, suit) when written canonically.
CODE_CHARS = 2
#: ASCII characters of a whole deal in canonical codes (52 codes).
DEAL_CHARS = NUM_CARDS * CODE_CHARS
#: First byte of the log kinds "play" / "cover", and their lengths (the kernels read kinds as bytes).
PLAY_BYTE = ord("p")
PLAY_CHARS = len("play")
COVER_CHARS = len("cover")


def is_seven(c: int) -> bool:
    """Whether card ``c`` is a 7 (written out so numba compiles it inline too)."""
    return c % RANKS_PER_SUIT == SEVEN


# --------------------------------------------------------------------------- tables

def _next_live(c: int) -> int:
    """The cards that become live when c is played (A low, K high, no wrap)."""
    r = c % RANKS_PER_SUIT
    if r == SEVEN:
        m = (1 << (c - 1)) | (1 << (c + 1))
        if c == SEVEN_OF_SPADES:  # the opening 7 makes the other three 7s live
            m |= SEVENS & ~(1 << c)
        return m
    if 0 < r < SEVEN:
        return 1 << (c - 1)
    if SEVEN < r < RANKS_PER_SUIT - 1:
        return 1 << (c + 1)
    return 0


def _beyond_in_suit(c: int) -> int:
    """13-bit rank mask of c's suit: the ranks only playable after c (for a 7: the rest of the suit)."""
    r = c % RANKS_PER_SUIT
    if r == SEVEN:
        return SUIT_BITS & ~(1 << r)
    if r < SEVEN:
        return (1 << r) - 1
    return SUIT_BITS & ~((2 << r) - 1)


def _behind(c: int) -> int:
    """Cards of c's suit that must be played before c (from the 7 up to, not including, c)."""
    s, r = divmod(c, RANKS_PER_SUIT)
    ranks = range(r + 1, SEVEN + 1) if r < SEVEN else range(SEVEN, r)
    return sum(1 << (s * RANKS_PER_SUIT + x) for x in ranks)


#: NEXT_LIVE[c]: the cards made live by playing c — the one definition of 活牌.
NEXT_LIVE: tuple[int, ...] = tuple(_next_live(c) for c in range(NUM_CARDS))
#: BEYOND_IN_SUIT[c]: as a 13-bit mask of c's suit, the ranks that only become playable after c.
BEYOND_IN_SUIT: tuple[int, ...] = tuple(_beyond_in_suit(c) for c in range(NUM_CARDS))
#: BEYOND[c]: the same as a card mask (covering c leaves these unplayable for the rest of the hand).
BEYOND: tuple[int, ...] = tuple(BEYOND_IN_SUIT[c] << (c - c % RANKS_PER_SUIT) for c in range(NUM_CARDS))
#: BEHIND[c]: the cards of c's suit that must be played before c.
BEHIND: tuple[int, ...] = tuple(_behind(c) for c in range(NUM_CARDS))


def dead_cards(covered: Sequence[int]) -> int:
    """The cards already unplayable (beyond some covered card) given each seat's covered cards, as a mask."""
    dead = 0
    for m in covered:
        while m:
            low = m & -m
            dead |= BEYOND[low.bit_length() - 1]
            m ^= low
    return dead


def touched_cards(action: int, dead: int) -> int:
    """The cards an action makes live (a play) or unplayable for the rest of the hand (a cover), in any hand, as
    a mask: what the decisions' exact immediate effect counts (``dead``: :func:`dead_cards` before the action)."""
    c = action % COVER
    return NEXT_LIVE[c] if action < COVER else BEYOND[c] & ~dead


def suit_points(m13: int) -> int:
    """Cover points of a 13-bit rank mask of one suit (the kernels tabulate this for all 8192)."""
    return sum(r + 1 for r in range(RANKS_PER_SUIT) if m13 >> r & 1)


def apply_action(action: int, next_live: Any, hands: Any, covered: Any, last7: Any, live: int, table: int,
                 turn: int) -> tuple[int, int]:
    """Push one action of seat ``turn`` without checking it; returns the new (live, table).

    The one definition of a move: the engine calls it on lists of Python ints, the kernels compile
    it (``numba.njit``) over int64 arrays with ``next_live = np.array(NEXT_LIVE)``. ``hands``,
    ``covered`` (masks) and ``last7`` (last action played a 7) are updated in place.
    """
    c = action % COVER
    b = 1 << c
    hands[turn] &= ~b
    if action >= COVER:
        covered[turn] |= b
        last7[turn] = False
        return live, table
    last7[turn] = c % RANKS_PER_SUIT == SEVEN
    return (live & ~b) | next_live[c], table | b


# --------------------------------------------------------------------------- rule options

#: Bounds of the rule options. With them every legal combination scores within 2**53 (so the compiled
#: scorer's 64-bit ints never wrap, and JSON readers using doubles read every score exactly): points
#: <= 364 (2**9), x4 players, tong factor <= 2**10, at most 3 独头七 of <= 2**8 each, at most 8 doublings.
MAX_TONG_FACTOR = 1 << 10
MAX_DUTOU_FACTOR = 1 << 8
MAX_THRESHOLDS = 8
MAX_POINTS = 364  # every card covered


class Rules(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Rule options. A log may name any of them in its ``rules`` object; the rest keep defaults."""

    dutou: Annotated[Literal["stack", "replace"], Meta(
        description="How a 独头七 combines with the 通 factor: 'stack' multiplies both (x2 x8 = x16), "
        "'replace' uses the 独头七 factor instead of the 通 factor")] = "stack"
    tong_factors: Annotated[tuple[Annotated[int, Meta(ge=1, le=MAX_TONG_FACTOR)], ...], Meta(
        min_length=5, max_length=5,
        description="Factor on the points of players who are not 通, by the number of 通 players 0..4")] = (1, 2, 4, 8, 1)
    dutou_factor: Annotated[int, Meta(ge=1, le=MAX_DUTOU_FACTOR,
                                      description="Factor per 独头七 on every player who is not 通")] = 8
    cover_doubling: Annotated[tuple[Annotated[int, Meta(ge=0, le=MAX_POINTS)], ...], Meta(
        max_length=MAX_THRESHOLDS,
        description="House rule: each threshold a player's raw cover points exceed doubles that player's points "
        "(e.g. [30, 50, 70]); empty by default")] = ()


DEFAULT_RULES = Rules()

# Layout of one row of the rule table the kernels score with (:func:`rule_rows`).
R_TONG = 0  # 5 factors by number of 通 players
R_DUTOU = 5  # factor per 独头七
R_REPLACE = 6  # 1 when 独头七 replaces the 通 factor
R_NTHRESH = 7  # number of cover-doubling thresholds, which follow
R_THRESH = 8


def rule_rows(rules: Sequence[Rules]) -> list[list[int]]:
    """One int row per rule set in the layout above, all as wide as the longest threshold list."""
    width = R_THRESH + max((len(r.cover_doubling) for r in rules), default=0)
    rows = []
    for r in rules or [DEFAULT_RULES]:
        row = [0] * width
        row[R_TONG:R_TONG + 5] = r.tong_factors
        row[R_DUTOU] = r.dutou_factor
        row[R_REPLACE] = int(r.dutou == "replace")
        row[R_NTHRESH] = len(r.cover_doubling)
        row[R_THRESH:R_THRESH + len(r.cover_doubling)] = r.cover_doubling
        rows.append(row)
    return rows
