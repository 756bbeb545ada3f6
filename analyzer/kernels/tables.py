"""The rule tables of :mod:`analyzer.rules` as int64 arrays, and the small compiled helpers every kernel shares.

Built once here so no kernel builds its own copy: the live-card table, the cards-beyond tables,
per-suit popcounts and cover points (masks are read 13 bits at a time), the code-character
tables, and the one move (:func:`apply` is :func:`analyzer.rules.apply_action`). The helpers are
``register_jitable``: plain Python when called from Python, compiled inline into the kernels.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from analyzer.cards import RANKS, RANKS_PER_SUIT, SUIT_BITS, SUITS
from analyzer.rules import BEHIND, BEYOND, BEYOND_IN_SUIT, NEXT_LIVE, apply_action, suit_points

NEXT = np.array(NEXT_LIVE, np.int64)
BEYOND_MASK = np.array(BEYOND, np.int64)
BEYOND13 = np.array(BEYOND_IN_SUIT, np.int64)
BEHIND_MASK = np.array(BEHIND, np.int64)
#: popcount and cover points of every 13-bit suit pattern (built as arrays: a Python loop over the 8192
#: patterns cost every process that loads a kernel ~20 ms; a pattern's points are its cards' points summed).
_RANK_BITS = (np.arange(SUIT_BITS + 1, dtype=np.int64)[:, None] >> np.arange(RANKS_PER_SUIT)) & 1
SUIT_COUNT = _RANK_BITS.sum(1)
SUIT_POINTS = (_RANK_BITS * np.array([suit_points(1 << r) for r in range(RANKS_PER_SUIT)], np.int64)).sum(1)
S1, S2, S3 = RANKS_PER_SUIT, 2 * RANKS_PER_SUIT, 3 * RANKS_PER_SUIT


def _char_table(chars: str) -> np.ndarray:
    """Byte -> index in ``chars`` (either case), -1 for anything else."""
    t = np.full(256, -1, np.int64)
    for i, ch in enumerate(chars):
        t[ord(ch)] = i
        t[ord(ch.lower())] = i
    return t


RANK_OF = _char_table(RANKS)
SUIT_OF = _char_table(SUITS)

#: The move, compiled: ``apply(action, NEXT, hands, covered, last7, live, table, turn) -> (live, table)``.
apply = register_jitable(apply_action)


@register_jitable
def popcount(x: int) -> int:
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


@register_jitable
def mask_count(m: int) -> int:
    """Number of cards in a mask of the 52."""
    return SUIT_COUNT[m & SUIT_BITS] + SUIT_COUNT[(m >> S1) & SUIT_BITS] + SUIT_COUNT[(m >> S2) & SUIT_BITS] \
        + SUIT_COUNT[(m >> S3) & SUIT_BITS]


@register_jitable
def mask_points(m: int) -> int:
    """Cover points of the cards in a mask of the 52."""
    return SUIT_POINTS[m & SUIT_BITS] + SUIT_POINTS[(m >> S1) & SUIT_BITS] + SUIT_POINTS[(m >> S2) & SUIT_BITS] \
        + SUIT_POINTS[(m >> S3) & SUIT_BITS]
