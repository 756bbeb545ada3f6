"""Card codes <-> small ints, card sets as bit masks, cover points.

A card is an int: ``suit * 13 + rank`` with rank 0..12 for A..K and suit 0..3 for S H D C, so the
52 ordinary cards are 0..51. The two jokers are 52 (small, ``SJ``) and 53 (big, ``BJ``). A set of
distinct cards is an int bit mask (bit ``c`` set when card ``c`` is in the set).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

RANKS = "A23456789TJQK"
SUITS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"

SPADES, HEARTS, DIAMONDS, CLUBS = range(4)
ACE, SEVEN, KING = 0, 6, 12
SMALL_JOKER, BIG_JOKER = 52, 53
NUM_CARDS = 52
RANKS_PER_SUIT = 13
#: The 13 bits of one suit in a card mask (shift by ``13 * suit``).
SUIT_BITS = (1 << RANKS_PER_SUIT) - 1

SEVEN_OF_SPADES = SPADES * RANKS_PER_SUIT + SEVEN
FULL_DECK = (1 << NUM_CARDS) - 1
SEVENS = sum(1 << (s * RANKS_PER_SUIT + SEVEN) for s in range(4))


def card(rank: int, suit: int) -> int:
    """The card int for a rank (0=A .. 12=K) and a suit (0=S .. 3=C)."""
    return suit * RANKS_PER_SUIT + rank


def rank_of(c: int) -> int:
    return c % RANKS_PER_SUIT


def suit_of(c: int) -> int:
    return c // RANKS_PER_SUIT


def points(c: int) -> int:
    """Cover points of an ordinary card: A=1, 2..10 face value, J=11, Q=12, K=13."""
    return c % RANKS_PER_SUIT + 1


def suit_mask(suit: int) -> int:
    return SUIT_BITS << (RANKS_PER_SUIT * suit)


def format_card(c: int) -> str:
    """Canonical code of a card: rank then suit letter (``7S``, ``TD``), ``SJ``/``BJ`` for jokers."""
    if c == SMALL_JOKER:
        return "SJ"
    if c == BIG_JOKER:
        return "BJ"
    return RANKS[c % 13] + SUITS[c // 13]


def pretty_card(c: int) -> str:
    """Card with its suit symbol for people: ``7♠``, ``10♦``."""
    if c >= NUM_CARDS:
        return format_card(c)
    r = RANKS[c % 13]
    return ("10" if r == "T" else r) + SUIT_SYMBOLS[c // 13]


def _lenient_codes() -> dict[str, int]:
    """Every spelling the reader accepts, mapped to its card: any case, ``10`` for T, suit symbols."""
    codes: dict[str, int] = {}
    for c in range(NUM_CARDS):
        r, s = RANKS[c % 13], c // 13
        for rr in {r, r.lower()} | ({"10"} if r == "T" else set()):
            for ss in (SUITS[s], SUITS[s].lower(), SUIT_SYMBOLS[s]):
                codes[rr + ss] = c
    for code, c in (("SJ", SMALL_JOKER), ("BJ", BIG_JOKER)):
        codes[code] = codes[code.lower()] = c
    return codes


#: Accepted card spellings -> card int.
CARD_CODES: dict[str, int] = _lenient_codes()
#: Canonical codes of the 52 ordinary cards, indexed by card int.
CANONICAL = tuple(format_card(c) for c in range(NUM_CARDS))


class CardError(ValueError):
    """A card code that names no card."""


def parse_card(code: str, *, jokers: bool = False) -> int:
    """The card int of a code, read leniently; raises :class:`CardError` for anything else."""
    c = CARD_CODES.get(code) if isinstance(code, str) else None
    if c is None or (c >= NUM_CARDS and not jokers):
        raise CardError(f"{code!r} is not a card code (rank A23456789TJQK or 10, then suit SHDC or ♠♥♦♣)")
    return c


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def scan(mask: int) -> Iterator[int]:
    """The cards of a mask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_points(mask: int) -> int:
    """Sum of cover points of the ordinary cards in a mask."""
    return sum(c % RANKS_PER_SUIT + 1 for c in scan(mask & FULL_DECK))
