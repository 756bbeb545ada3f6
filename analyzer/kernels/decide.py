"""Compiled replay of valid hands into the decision analysis' batch arrays: positions, options, cover proofs.

The decision analysis (:mod:`analyzer.analysis.decisions`) asks, at every decision with two or more
legal options, for the position (hands, covers, live and table masks, seat to act), the options in
card order, the index of the one chosen, the think time, the decision's random stream and the actor's
information set as the hidden-hand sampler's slots (:class:`analyzer.analysis.infoset.InfoSet`).
:func:`scan_decisions` makes all of them for a batch of hands in one compiled pass, the Python engine's
replay (:class:`analyzer.analysis.infoset.Observer`) being the reference a test compares it with; the
decision's stream is :func:`analyzer.analysis.decisions.decision_seed`, the CRC-32 finished here from
each hand's prefix (:func:`crc32_extend`, zlib's polynomial).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from analyzer.cards import FULL_DECK, SEVEN_OF_SPADES
from analyzer.kernels.tables import NEXT, apply, popcount
from analyzer.rules import ACTIONS_PER_HAND, COVER, HAND_SIZE, MAX_OPTIONS, SEATS

#: An action without a recorded time (``ms`` null): recorded times are never negative.
NO_MS = -1


def _crc_table() -> np.ndarray:
    """zlib's CRC-32 table (the reflected polynomial 0xEDB88320)."""
    out = np.zeros(256, np.int64)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        out[n] = c
    return out


CRC_TABLE = _crc_table()


@njit(cache=True, nogil=True)
def crc32_extend(crc, digits, table):  # pragma: no cover - compiled
    """zlib.crc32(str(digits).encode(), crc): the CRC-32 of a prefix (``crc``) continued by a number's digits."""
    buf = np.empty(20, np.int64)
    k = 0
    v = digits
    while True:
        buf[k] = 48 + v % 10
        k += 1
        v //= 10
        if v == 0:
            break
    c = np.int64(crc) ^ 0xFFFFFFFF
    for i in range(k - 1, -1, -1):
        c = table[(c ^ buf[i]) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


@njit(cache=True, nogil=True)
def _put_slot(seat, cover, allowed, size, at, s, is_cover, cards, n):  # pragma: no cover - compiled
    """Write one proof slot: seat ``s``'s covered run (``is_cover``) or its hand, the cards it may hold, how many."""
    seat[at] = s
    cover[at] = is_cover
    allowed[at] = cards
    size[at] = n


@njit(cache=True, nogil=True)
def scan_decisions(deal, actions, act_off, ms, sampled, model_until, prefix_crc, seed_hi, crc_table,
                   per_hand, fill, hand, action, hands, cov, last7, live, table, turn, opts, nopt, chosen, think, seeds,
                   hidden, slot_off, slot_seat, slot_cover, slot_allowed, slot_size):  # pragma: no cover - compiled
    """Replay H valid hands and, at each decision with two or more legal options, write its row; returns
    (decisions, slots, the first hand whose recorded action is not legal or -1).

    ``deal`` (H, 4) masks; ``actions`` the hands' engine actions concatenated (``act_off`` (H + 1,) where each
    hand's start); ``ms`` each action's recorded time (NO_MS: none); ``sampled`` (H,) whether a hand's
    decisions get their information set's slots at every action (else only from ``model_until`` on, where
    the learned model hands over to rollouts; before, none: hidden 0, no slots); ``prefix_crc`` (H,) zlib's
    CRC-32 of each hand's ``hand_id + "\\0"``; ``seed_hi`` the run's seed shifted into the high 32 bits.
    Writes each hand's number of decisions into ``per_hand`` (H,). With ``fill`` False only counts (the
    caller sizes the outputs from them; the other outputs may be empty); with ``fill`` True also writes:
    the hand's index and the action's, the position (hands, cov, last7 (D, 4), live, table, turn), the
    options (D, 13, zero-padded) in card order, their count, the chosen one's index, the think time (NaN
    when either time is missing), the decision's seed, and the actor's information set: hidden mask and
    slots ``slot_off[d]:slot_off[d + 1]`` (seat, cover, allowed, size) as :meth:`InfoSet.observe` orders them.
    """
    nh = deal.shape[0]
    h = np.zeros(SEATS, np.int64)
    c = np.zeros(SEATS, np.int64)
    l7 = np.zeros(SEATS, np.bool_)
    cover_live = np.zeros((SEATS, HAND_SIZE), np.int64)
    ncov = np.zeros(SEATS, np.int64)
    legal = np.zeros(MAX_OPTIONS, np.int64)
    d = 0
    ns = 0
    if fill:
        slot_off[0] = 0
    for x in range(nh):
        for s in range(SEATS):
            h[s] = deal[x, s]
            c[s] = 0
            l7[s] = False
            ncov[s] = 0
        lv = np.int64(1) << SEVEN_OF_SPADES
        tb = np.int64(0)
        t = 0
        for s in range(SEATS):
            if h[s] >> SEVEN_OF_SPADES & 1:
                t = s
        prev = NO_MS
        per_hand[x] = 0
        for i in range(act_off[x + 1] - act_off[x]):
            if i >= ACTIONS_PER_HAND:
                return d, ns, x
            act = actions[act_off[x] + i]
            mine = h[t]
            m = mine & lv
            base = 0
            if m == 0:
                m = mine
                base = COVER
            k = 0
            pick = -1
            while m:
                low = m & -m
                m ^= low
                a = base + popcount(low - 1)
                if a == act:
                    pick = k
                legal[k] = a
                k += 1
            if pick < 0:
                return d, ns, x
            if k > 1:
                slots = 0
                if sampled[x] or i >= model_until:
                    hid = FULL_DECK & ~h[t] & ~tb & ~c[t]
                    for s in range(SEATS):
                        if s == t:
                            continue
                        proven = np.int64(0)
                        run_allowed = np.int64(-1)
                        run = 0
                        for j in range(ncov[s]):
                            proven |= cover_live[s, j] & hid
                            if hid & ~proven != run_allowed and run:
                                if fill:
                                    _put_slot(slot_seat, slot_cover, slot_allowed, slot_size, ns + slots, s, True,
                                              run_allowed, run)
                                slots += 1
                                run = 0
                            run_allowed = hid & ~proven
                            run += 1
                        if run:
                            if fill:
                                _put_slot(slot_seat, slot_cover, slot_allowed, slot_size, ns + slots, s, True,
                                          run_allowed, run)
                            slots += 1
                        if fill:
                            _put_slot(slot_seat, slot_cover, slot_allowed, slot_size, ns + slots, s, False,
                                      hid & ~proven, popcount(h[s]))
                        slots += 1
                else:
                    hid = np.int64(0)
                if fill:
                    hand[d] = x
                    action[d] = i
                    for s in range(SEATS):
                        hands[d, s] = h[s]
                        cov[d, s] = c[s]
                        last7[d, s] = l7[s]
                    live[d] = lv
                    table[d] = tb
                    turn[d] = t
                    for j in range(MAX_OPTIONS):
                        opts[d, j] = legal[j] if j < k else 0
                    nopt[d] = k
                    chosen[d] = pick
                    now = ms[act_off[x] + i]
                    think[d] = float(now - prev) if now != NO_MS and prev != NO_MS else np.nan
                    seeds[d] = np.uint64(seed_hi) | np.uint64(crc32_extend(prefix_crc[x], i, crc_table))
                    hidden[d] = hid
                    slot_off[d + 1] = ns + slots
                d += 1
                ns += slots
                per_hand[x] += 1
            prev = ms[act_off[x] + i]
            if act >= COVER:
                cover_live[t, ncov[t]] = lv
                ncov[t] += 1
            lv, tb = apply(act, NEXT, h, c, l7, lv, tb, t)
            t = (t + 1) % SEATS
    return d, ns, -1
