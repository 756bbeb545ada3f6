"""Compiled strategy features of a 憋七 decision: the one definition the bots, rollouts and reports read.

The seed's advice (如何扣牌, 如何放牌, 要敢于放弃, 促成双通三通) is written as a few features of each
option (play or cover a card), seen from the actor's own information; a policy is a weight vector
over them. The functions are ``register_jitable``: plain Python for reports (through
:mod:`analyzer.strategy`), compiled inline when the simulator's and the analysis layer's numba
loops call them.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from analyzer.cards import FULL_DECK, RANKS_PER_SUIT, SEVEN, SEVEN_OF_SPADES, SUIT_BITS
from analyzer.kernels.tables import BEHIND_MASK, BEYOND_MASK, NEXT, SUIT_COUNT, mask_count, mask_points
from analyzer.rules import COVER, SEATS

# --------------------------------------------------------------------------- the features

#: Feature names, in column order of :func:`option_features`.
FEATURES = (
    "cover_points",        # points of the covered card, less when it was stuck behind others' cards anyway
    "cover_kills_own",     # points of own cards behind the covered card: they can never be played
    "cover_blocks",        # others' cards behind the covered card, times the danger of a 通 against us
    "cover_blocks_points",  # points of others' cards behind the covered card (someone must cover them)
    "opens_others",        # others' cards this play makes live at once
    "opens_own",           # own cards this play makes live at once
    "gives_up_block",      # others' cards behind the played card, when our hand is weak
    "big_first",           # points of the played card, when our hand is weak (放大牌)
    "small_first",         # points of the played card, when our hand is strong (先放小牌)
    "seven_for_low",       # a 7 played while our only cards of its suit are A-2-3 (要敢于放弃)
    "frees_own_path",      # own cards behind the played card
    "feeds_partner",       # partner's cards this play makes live (known only by sharing hands)
    "frees_partner_path",  # partner's cards behind the played card
    "kills_partner",       # points of partner's cards behind the covered card
    "plays_seven",         # a 7 released (blocking colluders hold them back)
)
NF = len(FEATURES)
(F_COVER_POINTS, F_COVER_KILLS_OWN, F_COVER_BLOCKS, F_COVER_BLOCKS_POINTS, F_OPENS_OTHERS, F_OPENS_OWN,
 F_GIVES_UP_BLOCK, F_BIG_FIRST, F_SMALL_FIRST, F_SEVEN_FOR_LOW, F_FREES_OWN_PATH, F_FEEDS_PARTNER,
 F_FREES_PARTNER_PATH, F_KILLS_PARTNER, F_PLAYS_SEVEN) = range(NF)

#: The sensible honest player, in rough points of own score per unit of each feature.
HONEST = np.array([-3.0, -1.5, 2.0, 0.4, -2.0, 2.0, -1.5, 12.0, -8.0, -6.0, 1.5, 0.0, 0.0, 0.0, 0.0])
LOW_RANKS = 3  # A, 2, 3: the cards not worth opening a suit with its 7 for
# Suit masks of hand_hope: the ranks below the 7, and those up to the 7 included.
_BELOW_SEVEN = (1 << SEVEN) - 1
_TO_SEVEN = (1 << (SEVEN + 1)) - 1


@register_jitable
def hand_hope(hand: int, table: int, own_covered: int) -> float:
    """How likely the hand is to go 通, 0..1: 0 once it has covered, else 1 / (1 + gap cards).

    A gap card is one we do not hold between the table (or the suit's 7) and our farthest card
    in that direction: someone else must play it before we can finish.
    """
    if own_covered != 0:
        return 0.0
    gaps = 0
    for s in range(SEATS):
        base = s * RANKS_PER_SUIT
        h13 = (hand >> base) & SUIT_BITS
        need = 0  # cards we need played, as a suit mask
        below = h13 & _BELOW_SEVEN
        if below:  # from the farthest own card below the 7 up to the 7
            need |= _TO_SEVEN & ~((below & -below) - 1)
        above = h13 >> (SEVEN + 1)
        if above:  # from the 7 up to the farthest own card above it
            while above & (above - 1):
                above &= above - 1
            need |= ((above << (SEVEN + 2)) - 1) & ~_BELOW_SEVEN
        have = ((hand | table) >> base) & SUIT_BITS
        gaps += SUIT_COUNT[need & ~have & SUIT_BITS]
    return 1.0 / (1.0 + gaps)


@register_jitable
def option_features(c: int, cover: bool, hand: int, table: int, others: int, partner: int, hope: float,
                    danger: float, out: np.ndarray) -> None:
    """Fill ``out[:NF]`` with the features of playing (or covering) card ``c``.

    ``others``: cards the actor believes are held or covered by the opponents (all unseen cards when
    it knows no partner's hand); ``partner``: the partner's hand when known, else 0.
    """
    for k in range(NF):
        out[k] = 0.0
    b = BEYOND_MASK[c]
    r = c % RANKS_PER_SUIT
    if cover:
        # a card stuck behind others' cards would probably end covered anyway: it costs less to cover now
        out[F_COVER_POINTS] = (r + 1) / (1.0 + mask_count(BEHIND_MASK[c] & ~hand & ~table))
        out[F_COVER_KILLS_OWN] = mask_points(b & hand)
        out[F_COVER_BLOCKS] = mask_count(b & others) * danger
        out[F_COVER_BLOCKS_POINTS] = mask_points(b & others)
        out[F_KILLS_PARTNER] = mask_points(b & partner)
        return
    nxt = NEXT[c]
    pw = (r + 1) / RANKS_PER_SUIT
    out[F_OPENS_OTHERS] = mask_count(nxt & others)
    out[F_OPENS_OWN] = mask_count(nxt & hand)
    out[F_GIVES_UP_BLOCK] = mask_count(b & others) * (1.0 - hope)
    out[F_BIG_FIRST] = pw * (1.0 - hope)
    out[F_SMALL_FIRST] = pw * hope
    out[F_FREES_OWN_PATH] = mask_count(b & hand)
    out[F_FEEDS_PARTNER] = mask_count(nxt & partner)
    out[F_FREES_PARTNER_PATH] = mask_count(b & partner)
    if r == SEVEN and c != SEVEN_OF_SPADES:
        out[F_PLAYS_SEVEN] = 1.0
        mine = b & hand
        low = ((1 << LOW_RANKS) - 1) << (c - SEVEN)
        if mine != 0 and mine & ~low == 0:
            out[F_SEVEN_FOR_LOW] = 1.0


@register_jitable
def decision_features(hand: int, live: int, table: int, own_covered: int, partner: int, partner_covered: int,
                      tongable: int, options: np.ndarray, feats: np.ndarray) -> int:
    """Features of every legal option of the actor; returns the number of options written to
    ``options`` (cards, ``COVER + card`` for covers) and ``feats`` (one row each).

    ``tongable``: how many opponents have covered nothing yet (public), the 通 that blocking prevents.
    """
    lv = hand & live
    cover = lv == 0
    pool = hand if cover else lv
    unseen = FULL_DECK & ~hand & ~table & ~own_covered
    others = unseen & ~partner & ~partner_covered
    hope = hand_hope(hand, table, own_covered)
    danger = tongable * (1.0 - hope) * (mask_points(hand) + mask_points(own_covered)) / 20.0
    k = 0
    m = pool
    while m:  # the options' cards, lowest first
        low = m & -m
        m ^= low
        c = mask_count(low - 1)
        options[k] = COVER + c if cover else c
        option_features(c, cover, hand, table, others, partner, hope, danger, feats[k])
        k += 1
    return k


@register_jitable
def option_values(feats: np.ndarray, k: int, weights: np.ndarray, values: np.ndarray) -> None:
    for i in range(k):
        v = 0.0
        for j in range(NF):
            v += feats[i, j] * weights[j]
        values[i] = v


@njit(cache=True, nogil=True)
def score_options(hand, live, table, own_covered, partner, partner_covered, tongable, weights, options, feats,
                  values):  # pragma: no cover - compiled
    """:func:`decision_features` then :func:`option_values`, compiled: the Python callers' fast path
    (``analyzer.strategy.score``, which the decision rows' reasons call for thousands of decisions)."""
    k = decision_features(hand, live, table, own_covered, partner, partner_covered, tongable, options, feats)
    option_values(feats, k, weights, values)
    return k
