"""Compiled batch replay of standard 憋七 hands: is each hand legal, and its cover points.

The kernel answers only "legal or not"; the Python engine in :mod:`analyzer.variants.bieqi`
explains what is wrong. Both use the same live-card rule (``NEXT_LIVE``); tests check they agree.
Cards arrive as the raw ASCII of their 2-character codes, so no Python loop decodes them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from analyzer.cards import RANKS, SUITS
from analyzer.kernels.scoring import settle_into
from analyzer.variants.bieqi import NEXT_LIVE

NEXT = np.array(NEXT_LIVE, dtype=np.int64)


def _char_table(chars: str) -> np.ndarray:
    t = np.full(256, -1, np.int64)
    for i, ch in enumerate(chars):
        t[ord(ch)] = i
        t[ord(ch.lower())] = i
    return t


RANK_OF = _char_table(RANKS)
SUIT_OF = _char_table(SUITS)


@njit(cache=True, nogil=True)
def _card(chars, k, rank_of, suit_of):  # pragma: no cover - compiled
    r = rank_of[chars[k]]
    s = suit_of[chars[k + 1]]
    if r < 0 or s < 0:
        return -1
    return s * 13 + r


@njit(cache=True, nogil=True)
def check_hands(deal, offsets, cards, seats, kinds, nxt, rank_of, suit_of, points, last7):  # pragma: no cover
    """Replay B hands.

    deal: (B*104,) ASCII of 52 codes a hand, 13 by seat; cards: ASCII of the actions' codes (2 a card);
    seats: (n,) actor seats; kinds: the actions' kinds concatenated ("playcover..."); offsets: (B+1,)
    action offsets. (Times are checked before, in Python: a sort of a sorted list costs nothing.) Writes cover points (B, 4) and whether each seat's last
    action was a play of a 7 (B, 4). Returns status (B,): 0 legal and complete, 1 anything wrong.
    """
    nh = offsets.shape[0] - 1
    status = np.zeros(nh, np.int8)
    one = np.int64(1)
    kp = 0
    for h in range(nh):
        start = offsets[h]
        end = offsets[h + 1]
        kp_next = kp
        for _ in range(start, end):  # advance the kinds cursor whatever happens to this hand
            kp_next += 4 if kinds[kp_next] == 112 else 5  # 'p'lay / 'c'over
        hands = np.zeros(4, np.int64)
        seen = np.int64(0)
        bad = False
        turn = -1
        for j in range(52):
            c = _card(deal, h * 104 + 2 * j, rank_of, suit_of)
            if c < 0:
                bad = True
                break
            b = one << c
            if seen & b:
                bad = True
                break
            seen |= b
            s = j // 13
            hands[s] |= b
            if c == 6:
                turn = s
        if bad or turn < 0 or end - start != 52:
            status[h] = 1
            kp = kp_next
            continue
        live = one << 6
        for i in range(start, end):
            s = seats[i]
            c = _card(cards, 2 * i, rank_of, suit_of)
            cover = kinds[kp] != 112
            kp += 5 if cover else 4
            if s != turn or c < 0:
                bad = True
                break
            b = one << c
            hs = hands[s]
            if hs & b == 0:
                bad = True
                break
            lv = hs & live
            if cover:
                if lv != 0:
                    bad = True
                    break
                points[h, s] += c % 13 + 1
                last7[h, s] = False
            else:
                if lv & b == 0:
                    bad = True
                    break
                live = (live & ~b) | nxt[c]
                last7[h, s] = c % 13 == 6
            hands[s] = hs & ~b
            turn = (turn + 1) & 3
        if bad:
            status[h] = 1
        kp = kp_next
    return status


@njit(cache=True, nogil=True)
def settle_hands(points, last7, first, rule_idx, rules, mult, scores, ranking):  # pragma: no cover - compiled
    """The rules of :func:`analyzer.variants.bieqi.settle` for B legal hands, into mult, scores and
    ranking (B, 4). ``rules`` rows are laid out as :func:`analyzer.kernels.scoring.rule_table`;
    ``first`` is the seat that acted first (ties go to whoever finished earlier in the rotation)."""
    final = np.empty(4, np.int64)
    for h in range(points.shape[0]):
        settle_into(points[h], last7[h], rules[rule_idx[h]], mult[h], scores[h])
        for s in range(4):
            final[s] = points[h, s] * mult[h, s]
        for r in range(4):  # fewer points first; equal points: earlier in the rotation from the first seat
            ranking[h, r] = (first[h] + r) % 4
        for r in range(1, 4):
            x = ranking[h, r]
            q = r
            while q > 0 and final[ranking[h, q - 1]] > final[x]:
                ranking[h, q] = ranking[h, q - 1]
                q -= 1
            ranking[h, q] = x
