"""Compiled inputs of the learned value model: what the actor knows after each option, as one float vector.

The value model (:mod:`analyzer.analysis.valuemodel`) predicts every seat's expected final score
after each option of a decision from these inputs alone, so they read only the actor's information
set: its own hand and covers, the table, the live cards, the public history's counts (hand sizes,
how many cards each seat has covered, who can still go 通). Never another seat's hidden cards.

Per option (``NV`` values): the strategy features (:mod:`analyzer.kernels.features`, the seed's
advice) and a few facts about the position after the option. The model reads each option's inputs
minus the mean over the decision's options (what sets this option apart) next to that mean (what
kind of position it is), so one network serves decisions of any number of options.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from analyzer.cards import FULL_DECK, RANKS_PER_SUIT, SEVEN
from analyzer.kernels.features import NF, hand_hope, option_features
from analyzer.kernels.tables import BEHIND_MASK, BEYOND_MASK, NEXT, mask_count, mask_points
from analyzer.rules import COVER, MAX_OPTIONS, SEATS

#: Names of the per-option inputs after the NF strategy features (kept in the weight file and checked on load).
EXTRA = ("is_cover", "rank", "card_points", "move", "own_cards", "own_points", "own_covers", "own_cover_points",
         "own_can_tong", "cards1", "cards2", "cards3", "covers1", "covers2", "covers3", "can_tong1", "can_tong2",
         "can_tong3", "own_live", "live", "hope", "unseen_points", "own_dead_points", "is_seven", "dutou_chance",
         "own_blocked", "tongable")
NV = NF + len(EXTRA)
#: Inputs of the per-option network: centred option inputs, their mean over options, and the number of options.
N_IN = 2 * NV + 1


@njit(cache=True, nogil=True)
def option_inputs(hands, cov, live, table, turn, n, opts, nopt, out):  # pragma: no cover - compiled
    """Fill ``out`` (D, MAX_OPTIONS, NV) with the inputs of every option of D decisions (zero padding).

    ``hands``/``cov`` (D, 4) are read only for the actor's own row and the other seats' card counts."""
    f = np.zeros(NF)
    for d in range(hands.shape[0]):
        _decision_inputs(hands, cov, live, table, turn, n, opts, nopt, d, f, out[d])


@njit(cache=True, nogil=True)
def network_rows(hands, cov, live, table, turn, n, opts, nopt, opt_in, level, rows):  # pragma: no cover - compiled
    """:func:`option_inputs` then :func:`network_inputs` in one pass, without the (D, 13, NV) array: writes the
    per-option network's rows ``opt_in`` (sum of nopt, N_IN), the level network's rows ``level`` (D, NV + 1) and
    each option row's decision ``rows``. The same floats as the two steps: the mean over a decision's 13 slots
    (zero padding included) is added in slot order, as numpy's sum over that axis adds them."""
    f = np.zeros(NF)
    x = np.zeros((MAX_OPTIONS, NV))
    mean = np.zeros(NV)
    r = 0
    for d in range(hands.shape[0]):
        _decision_inputs(hands, cov, live, table, turn, n, opts, nopt, d, f, x)
        k = nopt[d]
        for v in range(NV):
            m = x[0, v]
            for j in range(1, MAX_OPTIONS):
                m += x[j, v]
            mean[v] = m / k
        kk = k / MAX_OPTIONS
        for v in range(NV):
            level[d, v] = mean[v]
        level[d, NV] = kk
        for j in range(k):
            for v in range(NV):
                opt_in[r, v] = x[j, v] - mean[v]
                opt_in[r, NV + v] = mean[v]
            opt_in[r, 2 * NV] = kk
            rows[r] = d
            r += 1


@register_jitable
def _decision_inputs(hands, cov, live, table, turn, n, opts, nopt, d, f, out):  # pragma: no cover - compiled
    """The inputs (MAX_OPTIONS, NV) of decision ``d``'s options into ``out`` (zero padding); ``f``: scratch (NF,)."""
    a = turn[d]
    hand = hands[d, a]
    own_cov = cov[d, a]
    tb = table[d]
    lv = live[d]
    tongable = 0
    for s in range(SEATS):
        if s != a and cov[d, s] == 0:
            tongable += 1
    hope = hand_hope(hand, tb, own_cov)
    danger = tongable * (1.0 - hope) * (mask_points(hand) + mask_points(own_cov)) / 20.0
    unseen = FULL_DECK & ~hand & ~tb & ~own_cov
    for j in range(MAX_OPTIONS):
        for x in range(NV):
            out[j, x] = 0.0
    for j in range(nopt[d]):
        act = opts[d, j]
        c = act % COVER
        cover = act >= COVER
        bit = np.int64(1) << c
        option_features(c, cover, hand, tb, unseen, 0, hope, danger, f)
        h2 = hand & ~bit
        c2 = own_cov | bit if cover else own_cov
        t2 = tb if cover else tb | bit
        l2 = lv if cover else (lv & ~bit) | NEXT[c]
        r = c % RANKS_PER_SUIT
        dead = np.int64(0)  # own cards beyond one of our covers: they will be covered too
        m = c2
        while m:
            low = m & -m
            m ^= low
            dead |= BEYOND_MASK[mask_count(low - 1)]
        blocked = 0  # own cards that wait on a card we cannot see
        m = h2
        while m:
            low = m & -m
            m ^= low
            if BEHIND_MASK[mask_count(low - 1)] & unseen:
                blocked += 1
        o = out[j]
        for x in range(NF):
            o[x] = f[x]
        i = NF
        o[i] = 1.0 if cover else 0.0
        o[i + 1] = r / 12.0
        o[i + 2] = (r + 1) / 13.0
        o[i + 3] = n[d] / 52.0
        o[i + 4] = mask_count(h2) / 13.0
        o[i + 5] = mask_points(h2) / 91.0
        o[i + 6] = mask_count(c2) / 13.0
        o[i + 7] = mask_points(c2) / 50.0
        o[i + 8] = 1.0 if c2 == 0 else 0.0
        for t in range(1, SEATS):
            s = (a + t) % SEATS
            o[i + 8 + t] = mask_count(hands[d, s]) / 13.0
            o[i + 11 + t] = mask_count(cov[d, s]) / 13.0
            o[i + 14 + t] = 1.0 if cov[d, s] == 0 else 0.0
        o[i + 18] = mask_count(h2 & l2) / 13.0
        o[i + 19] = mask_count(l2) / 8.0
        o[i + 20] = hand_hope(h2, t2, c2)
        o[i + 21] = mask_points(unseen) / 273.0
        o[i + 22] = mask_points(h2 & dead) / 91.0
        o[i + 23] = 1.0 if (not cover and r == SEVEN) else 0.0
        o[i + 24] = 1.0 if (not cover and r == SEVEN and h2 == 0 and c2 == 0) else 0.0
        o[i + 25] = blocked / 13.0
        o[i + 26] = tongable / 3.0


def network_inputs(x: np.ndarray, nopt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From option inputs (D, 13, NV): the per-option network's rows (sum of nopt, N_IN), the level
    network's rows (D, NV + 1) and the decision index of each option row."""
    d = x.shape[0]
    mask = np.arange(MAX_OPTIONS)[None, :] < nopt[:, None]
    mean = x.sum(axis=1) / nopt[:, None]
    k = (nopt / MAX_OPTIONS)[:, None]
    level = np.concatenate([mean, k], axis=1)
    rows = np.repeat(np.arange(d), nopt)
    opt = x[mask]  # row-major: decision by decision, options in order
    return np.concatenate([opt - mean[rows], mean[rows], k[rows]], axis=1), level, rows
