"""Scored strategy features of a 憋七 decision: what the bots weigh and what reports say in words.

The features themselves are compiled code shared with the kernels (:mod:`analyzer.kernels.features`,
re-exported here); this module adds the collusion styles' weight vectors and the Python view for
reports (:func:`score`, :func:`explain`) over an engine :class:`~analyzer.variants.bieqi.State`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analyzer.cards import FULL_DECK, points, pretty_card, scan
from analyzer.kernels.features import (
    F_BIG_FIRST,
    F_COVER_BLOCKS,
    F_COVER_BLOCKS_POINTS,
    F_COVER_KILLS_OWN,
    F_COVER_POINTS,
    F_FEEDS_PARTNER,
    F_FREES_OWN_PATH,
    F_FREES_PARTNER_PATH,
    F_GIVES_UP_BLOCK,
    F_KILLS_PARTNER,
    F_OPENS_OTHERS,
    F_OPENS_OWN,
    F_PLAYS_SEVEN,
    F_SEVEN_FOR_LOW,
    F_SMALL_FIRST,
    FEATURES,
    HONEST,
    NF,
    decision_features,
    option_values,
    score_options,
)
from analyzer.kernels.tables import BEYOND_MASK as BEYOND
from analyzer.kernels.tables import NEXT, mask_count, mask_points
from analyzer.kernels.tables import mask_points as mask_pts
from analyzer.rules import COVER, MAX_OPTIONS, NEXT_LIVE, SEATS
from analyzer.variants.bieqi import State

__all__ = [
    "BEYOND", "FEATURES", "F_COVER_BLOCKS", "F_SEVEN_FOR_LOW", "HONEST", "NEXT", "NF", "STYLES", "Scored",
    "decision_features", "explain", "features", "mask_count", "mask_points", "mask_pts", "option_values",
    "score", "style_weights",
]

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
    opts = np.zeros(MAX_OPTIONS, np.int64)
    feats = np.zeros((MAX_OPTIONS, NF))
    vals = np.zeros(MAX_OPTIONS)
    k = score_options(state.hands[t], state.live, state.table, state.covered[t], ph, pc, tongable,
                      np.asarray(weights, np.float64), opts, feats, vals)
    return Scored([int(a) for a in opts[:k]], feats[:k].copy(), vals[:k].copy())


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
        F_COVER_POINTS: f"covering {name} costs {points(c)} points",
        F_COVER_KILLS_OWN: f"covering {name} strands own {_cards(b & hand)}",
        F_COVER_BLOCKS: f"covering {name} blocks {_cards(b & others)} still out, against a tong",
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

