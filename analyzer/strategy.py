"""Scored strategy features of a 憋七 decision: what the bots weigh and what reports say in words.

The seed's advice (如何扣牌, 如何放牌, 要敢于放弃, 促成双通三通) is written as a few features of each
option (play or cover a card), seen from the actor's own information; a policy is a weight vector
over them. The feature and value functions are ``register_jitable``: plain Python for reports,
compiled inline when the simulator's and the analysis layer's numba loops call them, so both read
one definition.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba.extending import register_jitable

from analyzer.cards import FULL_DECK, NUM_CARDS, SEVEN, SEVEN_OF_SPADES, pretty_card, scan
from analyzer.variants.bieqi import COVER, NEXT_LIVE, SEATS, State

# --------------------------------------------------------------------------- tables (compile-time constants)


def _beyond(c: int) -> int:
    """Cards of c's suit that can only be played after c (further from the 7; the whole suit for a 7)."""
    s, r = divmod(c, 13)
    if r == SEVEN:
        ranks = [x for x in range(13) if x != SEVEN]
    elif r < SEVEN:
        ranks = list(range(r))
    else:
        ranks = list(range(r + 1, 13))
    return sum(1 << (s * 13 + x) for x in ranks)


def _behind(c: int) -> int:
    """Cards of c's suit that must be played before c (from the 7 up to, not including, c)."""
    s, r = divmod(c, 13)
    ranks = range(r + 1, SEVEN + 1) if r < SEVEN else range(SEVEN, r)
    return sum(1 << (s * 13 + x) for x in ranks)


BEYOND = np.array([_beyond(c) for c in range(NUM_CARDS)], np.int64)
BEHIND = np.array([_behind(c) for c in range(NUM_CARDS)], np.int64)
NEXT = np.array(NEXT_LIVE, np.int64)
#: popcount and cover points of every 13-bit suit pattern (masks are read a suit at a time).
SUIT_COUNT = np.array([bin(m).count("1") for m in range(1 << 13)], np.int64)
SUIT_POINTS = np.array([sum(r + 1 for r in range(13) if m >> r & 1) for m in range(1 << 13)], np.int64)

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


@register_jitable
def mask_count(m: int) -> int:
    return (SUIT_COUNT[m & 8191] + SUIT_COUNT[(m >> 13) & 8191] + SUIT_COUNT[(m >> 26) & 8191]
            + SUIT_COUNT[(m >> 39) & 8191])


@register_jitable
def mask_pts(m: int) -> int:
    return (SUIT_POINTS[m & 8191] + SUIT_POINTS[(m >> 13) & 8191] + SUIT_POINTS[(m >> 26) & 8191]
            + SUIT_POINTS[(m >> 39) & 8191])


@register_jitable
def hand_hope(hand: int, table: int, own_covered: int) -> float:
    """How likely the hand is to go 通, 0..1: 0 once it has covered, else 1 / (1 + gap cards).

    A gap card is one we do not hold between the table (or the suit's 7) and our farthest card
    in that direction: someone else must play it before we can finish.
    """
    if own_covered != 0:
        return 0.0
    gaps = 0
    for s in range(4):
        base = s * 13
        need = 0  # cards we need played, as a suit mask
        lo = -1
        for r in range(SEVEN):  # farthest own card below the 7
            if hand >> (base + r) & 1:
                lo = r
                break
        if lo >= 0:
            for r in range(lo, SEVEN + 1):
                need |= 1 << r
        hi = -1
        for r in range(12, SEVEN, -1):
            if hand >> (base + r) & 1:
                hi = r
                break
        if hi >= 0:
            for r in range(SEVEN, hi + 1):
                need |= 1 << r
        have = ((hand | table) >> base) & 8191
        gaps += SUIT_COUNT[need & ~have & 8191]
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
    b = BEYOND[c]
    r = c % 13
    if cover:
        # a card stuck behind others' cards would probably end covered anyway: it costs less to cover now
        out[F_COVER_POINTS] = (r + 1) / (1.0 + mask_count(BEHIND[c] & ~hand & ~table))
        out[F_COVER_KILLS_OWN] = mask_pts(b & hand)
        out[F_COVER_BLOCKS] = mask_count(b & others) * danger
        out[F_COVER_BLOCKS_POINTS] = mask_pts(b & others)
        out[F_KILLS_PARTNER] = mask_pts(b & partner)
        return
    nxt = NEXT[c]
    pw = (r + 1) / 13.0
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
    danger = tongable * (1.0 - hope) * (mask_pts(hand) + mask_pts(own_covered)) / 20.0
    k = 0
    for c in range(NUM_CARDS):
        if pool >> c & 1:
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


# --------------------------------------------------------------------------- policies (weight vectors)

STYLES = ("share", "feed", "block")


def style_weights(style: str, strength: float) -> np.ndarray:
    """Weights of a colluder playing ``style`` with strength lambda (own value + lambda x partner's).

    share: both know both hands and favour the partner; feed: the feeder releases what the partner
    needs and never strands the partner's cards (the receiver plays honestly);
    block: hold back 7s and cover what shuts the opponents' suits.
    """
    w = HONEST.copy()
    lam = float(strength)
    if style == "share":
        w[F_FEEDS_PARTNER] += 3.0 * lam
        w[F_FREES_PARTNER_PATH] += 1.5 * lam
        w[F_KILLS_PARTNER] -= 2.0 * lam
    elif style == "feed":
        w[F_FEEDS_PARTNER] += 6.0 * lam
        w[F_FREES_PARTNER_PATH] += 3.0 * lam
        w[F_KILLS_PARTNER] -= 4.0 * lam
    elif style == "block":
        w[F_COVER_BLOCKS] *= 1.0 + 2.0 * lam
        w[F_COVER_BLOCKS_POINTS] += 1.5 * lam
        w[F_GIVES_UP_BLOCK] *= 1.0 + 2.0 * lam
        w[F_OPENS_OTHERS] *= 1.0 + lam
        w[F_PLAYS_SEVEN] -= 6.0 * lam
        w[F_FEEDS_PARTNER] += 1.0 * lam
        w[F_KILLS_PARTNER] -= 1.0 * lam
    else:
        raise ValueError(f"unknown collusion style {style!r}; expected one of {', '.join(STYLES)}")
    return w


# --------------------------------------------------------------------------- Python view for reports


@dataclass(frozen=True)
class Scored:
    """Every legal option of a decision with its features and value under a policy."""

    actions: list[int]
    features: np.ndarray  # (options, NF)
    values: np.ndarray  # (options,)

    def best(self) -> int:
        return self.actions[int(np.argmax(self.values))]


def score(state: State, *, partner: int | None = None, weights: np.ndarray = HONEST) -> Scored:
    """Features and values of the options of the seat to act, from its own information (plus the
    hand of ``partner`` when given: what a colluder sharing hands would see)."""
    t = state.turn
    ph = state.hands[partner] if partner is not None else 0
    pc = state.covered[partner] if partner is not None else 0
    tongable = sum(1 for s in range(SEATS) if s not in (t, partner) and not state.covered[s])
    opts = np.zeros(13, np.int64)
    feats = np.zeros((13, NF))
    k = decision_features(state.hands[t], state.live, state.table, state.covered[t], ph, pc, tongable, opts, feats)
    vals = np.zeros(k)
    option_values(feats, k, weights, vals)
    return Scored([int(a) for a in opts[:k]], feats[:k].copy(), vals)


def features(state: State, *, partner: int | None = None) -> tuple[list[int], np.ndarray]:
    """The legal actions of the seat to act and their feature rows (see ``FEATURES``)."""
    s = score(state, partner=partner)
    return s.actions, s.features


def _cards(mask: int) -> str:
    return " ".join(pretty_card(c) for c in scan(mask)) or "none"


def _describe(state: State, action: int) -> dict[int, str]:
    """A sentence for each feature of an option, naming the cards involved."""
    t = state.turn
    c = action % COVER
    hand = state.hands[t]
    others = FULL_DECK & ~hand & ~state.table & ~state.covered[t]
    b = int(BEYOND[c])
    name = pretty_card(c)
    return {
        F_COVER_POINTS: f"covering {name} costs {c % 13 + 1} points",
        F_COVER_KILLS_OWN: f"covering {name} strands own {_cards(b & hand)}",
        F_COVER_BLOCKS: f"covering {name} blocks {_cards(b & others)} still out, against a 通",
        F_COVER_BLOCKS_POINTS: f"covering {name} leaves {_cards(b & others)} for others to cover",
        F_OPENS_OTHERS: f"playing {name} makes {_cards(NEXT_LIVE[c] & others)} live for others",
        F_OPENS_OWN: f"playing {name} makes own {_cards(NEXT_LIVE[c] & hand)} live",
        F_GIVES_UP_BLOCK: f"playing {name} gives up blocking {_cards(b & others)} with a weak hand",
        F_BIG_FIRST: f"a weak hand sheds the big card {name} first",
        F_SMALL_FIRST: f"a strong hand plays the small card first, not {name}",
        F_SEVEN_FOR_LOW: f"opened with {name} while holding only {_cards(b & hand)} of the suit",
        F_FREES_OWN_PATH: f"playing {name} frees own {_cards(b & hand)}",
        F_FEEDS_PARTNER: f"playing {name} makes the partner's cards live",
        F_FREES_PARTNER_PATH: f"playing {name} frees the partner's cards behind it",
        F_KILLS_PARTNER: f"covering {name} strands the partner's cards",
        F_PLAYS_SEVEN: f"released the 7 {name}",
    }


def explain(state: State, action: int, *, weights: np.ndarray = HONEST, top: int = 3) -> list[str]:
    """Readable reasons for choosing ``action`` at ``state``: what it did and, when it was not the
    sensible choice, where it lost against the best option (e.g. "covered 2♣ rather than Q♦ ...")."""
    s = score(state, weights=weights)
    if action not in s.actions:
        raise ValueError(f"action {action} is not legal here")
    i = s.actions.index(action)
    contrib = s.features[i] * weights
    words = _describe(state, action)
    verb = "covered" if action >= COVER else "played"
    if len(s.actions) == 1:
        return [f"{verb} {pretty_card(action % COVER)}: the only legal option"]
    best = s.best()
    if best == action:
        order = np.argsort(-np.abs(contrib))
        return [words[j] for j in order[:top] if contrib[j] != 0] or [f"{verb} {pretty_card(action % COVER)}"]
    j_best = s.actions.index(best)
    diff = contrib - s.features[j_best] * weights
    best_words = _describe(state, best)
    lead = (f"{verb} {pretty_card(action % COVER)} rather than {pretty_card(best % COVER)} "
            f"(about {s.values[j_best] - s.values[i]:.1f} points worse by the sensible policy)")
    reasons = [lead]
    j_pro = int(np.argmax(contrib))
    if contrib[j_pro] > 0:  # what the choice did achieve, then where it lost
        reasons.append(words[j_pro])
    for j in np.argsort(diff)[:top]:
        if diff[j] >= 0:
            break
        reasons.append(best_words[j] if s.features[j_best, j] * weights[j] > 0 else words[j])
    return reasons

