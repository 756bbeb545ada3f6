"""Compiled batch replay of standard 憋七 hands: the validator's fast path for legal hands.

The kernel answers only "legal or not" (and scores what is legal); the Python engine in
:mod:`analyzer.variants.bieqi` explains what is wrong, so every hand the kernel rejects, and every
hand it cannot read, goes to the engine's ``check``. Both move cards with
:func:`analyzer.rules.apply_action`; tests compare the kernel's own verdict with the engine's.
Cards arrive as the raw ASCII of their 2-character codes, so no Python loop decodes them.
This module reads records by their fields only (duck typing), so it imports no variant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from analyzer.cards import NUM_CARDS, RANKS_PER_SUIT, SEVEN_OF_SPADES
from analyzer.kernels.scoring import rule_table, settle_into
from analyzer.kernels.tables import NEXT, RANK_OF, SUIT_OF, apply, mask_points
from analyzer.rules import (
    ACTIONS_PER_HAND,
    CODE_CHARS,
    COVER,
    COVER_CHARS,
    DEAL_CHARS,
    DEFAULT_RULES,
    HAND_SIZE,
    PLAY_BYTE,
    PLAY_CHARS,
    SEATS,
    Rules,
)

#: Kernel verdicts (``check_hands``' status).
LEGAL, ILLEGAL = 0, 1


@njit(cache=True, nogil=True)
def _card(chars, k, rank_of, suit_of):  # pragma: no cover - compiled
    r = rank_of[chars[k]]
    s = suit_of[chars[k + 1]]
    if r < 0 or s < 0:
        return -1
    return s * RANKS_PER_SUIT + r


@njit(cache=True, nogil=True)
def check_hands(deal, offsets, cards, seats, kinds, nxt, rank_of, suit_of, points, last7):  # pragma: no cover
    """Replay B hands.

    deal: (B*104,) ASCII of 52 codes a hand, 13 by seat; cards: ASCII of the actions' codes (2 a card);
    seats: (n,) actor seats; kinds: the actions' kinds concatenated ("playcover..."); offsets: (B+1,)
    action offsets. (Times are checked before, in Python: a sort of a sorted list costs nothing.)
    Writes cover points (B, 4) and whether each seat's last action was a play of a 7 (B, 4).
    Returns status (B,): LEGAL for a legal, complete hand, ILLEGAL for anything wrong.
    """
    nh = offsets.shape[0] - 1
    status = np.zeros(nh, np.int8)
    kp = 0
    hands = np.zeros(SEATS, np.int64)
    covered = np.zeros(SEATS, np.int64)
    for h in range(nh):
        start = offsets[h]
        end = offsets[h + 1]
        kp_next = kp
        for _ in range(start, end):  # advance the kinds cursor whatever happens to this hand
            kp_next += PLAY_CHARS if kinds[kp_next] == PLAY_BYTE else COVER_CHARS
        hands[:] = 0
        covered[:] = 0
        seen = np.int64(0)
        bad = False
        turn = -1
        for j in range(NUM_CARDS):
            c = _card(deal, h * DEAL_CHARS + CODE_CHARS * j, rank_of, suit_of)
            if c < 0:
                bad = True
                break
            b = np.int64(1) << c
            if seen & b:
                bad = True
                break
            seen |= b
            s = j // HAND_SIZE
            hands[s] |= b
            if c == SEVEN_OF_SPADES:
                turn = s
        if bad or turn < 0 or end - start != ACTIONS_PER_HAND:
            status[h] = ILLEGAL
            kp = kp_next
            continue
        live = np.int64(1) << SEVEN_OF_SPADES
        table = np.int64(0)
        for i in range(start, end):
            s = seats[i]
            c = _card(cards, CODE_CHARS * i, rank_of, suit_of)
            cover = kinds[kp] != PLAY_BYTE
            kp += COVER_CHARS if cover else PLAY_CHARS
            if s != turn or c < 0:
                bad = True
                break
            b = np.int64(1) << c
            if hands[s] & b == 0:
                bad = True
                break
            lv = hands[s] & live
            if cover and lv != 0 or not cover and lv & b == 0:
                bad = True
                break
            live, table = apply(COVER + c if cover else c, nxt, hands, covered, last7[h], live, table, s)
            turn = (turn + 1) % SEATS
        if bad:
            status[h] = ILLEGAL
        else:
            for s in range(SEATS):
                points[h, s] = mask_points(covered[s])
        kp = kp_next
    return status


@njit(cache=True, nogil=True)
def settle_hands(points, last7, first, rule_idx, rules, mult, scores, ranking):  # pragma: no cover - compiled
    """The rules of :func:`analyzer.variants.bieqi.settle` for B legal hands, into mult, scores and
    ranking (B, 4). ``rules`` rows are laid out as :func:`analyzer.rules.rule_rows`;
    ``first`` is the seat that acted first (ties go to whoever finished earlier in the rotation)."""
    final = np.empty(SEATS, np.int64)
    for h in range(points.shape[0]):
        settle_into(points[h], last7[h], rules[rule_idx[h]], mult[h], scores[h])
        for s in range(SEATS):
            final[s] = points[h, s] * mult[h, s]
        for r in range(SEATS):  # fewer points first; equal points: earlier in the rotation from the first seat
            ranking[h, r] = (first[h] + r) % SEATS
        for r in range(1, SEATS):
            x = ranking[h, r]
            q = r
            while q > 0 and final[ranking[h, q - 1]] > final[x]:
                ranking[h, q] = ranking[h, q - 1]
                q -= 1
            ranking[h, q] = x


# --------------------------------------------------------------------------- the fast path over records

@dataclass(slots=True)
class FastPathStats:
    """What the last batches did: hands the kernel read, how many it found legal, and how many went to
    the engine (``fallbacks``: a legal hand should never be one; the tests assert so)."""

    kernel: int = 0
    legal: int = 0
    fallbacks: int = 0


#: Counters over every :func:`check_records` call in this process (tests reset them).
STATS = FastPathStats()


def kernel_verdicts(records: Sequence[Any]) -> list[int | None]:
    """The kernel's own verdict on each record (LEGAL, ILLEGAL; None when it cannot read it and the
    engine must), before any fallback: what the tests compare with the engine's verdict."""
    verdicts: list[int | None] = [None] * len(records)
    fast, status, _pts, _l7 = _run_kernel(records)
    for j, k in enumerate(fast):
        verdicts[k] = int(status[j])
    return verdicts


def _run_kernel(records: Sequence[Any]) -> tuple[list[int], Any, Any, Any]:
    """Marshal the records the kernel can read (canonical 2-character codes, 13 cards a seat, times
    in order) into byte arrays and run it: (their indices, status, points, last7)."""
    fast: list[int] = []
    deal: list[str] = []
    cards: list[str] = []
    kinds: list[str] = []
    seats: list[bytes] = []
    offsets = [0]
    sizes = [HAND_SIZE] * SEATS
    for k, rec in enumerate(records):
        acts = rec.actions
        d = rec.deal
        ds = "".join(["".join(x) for x in d])
        cs = "".join([a.card for a in acts])
        n = len(acts)
        if (len(ds) != DEAL_CHARS or len(cs) != CODE_CHARS * n or [len(x) for x in d] != sizes
                or not (ds.isascii() and cs.isascii()) or len(set(rec.players)) != SEATS):
            continue
        t = [a.ms for a in acts]
        if None in t:
            t = [x for x in t if x is not None]
        if t != sorted(t):  # time going backwards: the engine reports where
            continue
        fast.append(k)
        deal.append(ds)
        cards.append(cs)
        kinds += [a.kind for a in acts]
        seats.append(bytes([a.seat for a in acts]))
        offsets.append(offsets[-1] + n)
    m = len(fast)
    pts = np.zeros((m, SEATS), np.int64)
    l7 = np.zeros((m, SEATS), np.bool_)
    if not fast:
        return fast, np.zeros(0, np.int8), pts, l7
    status = check_hands(
        np.frombuffer("".join(deal).encode(), np.uint8), np.array(offsets, np.int64),
        np.frombuffer("".join(cards).encode(), np.uint8), np.frombuffer(b"".join(seats), np.uint8),
        np.frombuffer("".join(kinds).encode(), np.uint8), NEXT, RANK_OF, SUIT_OF, pts, l7)
    return fast, status, pts, l7


def check_records(records: Sequence[Any], check: Callable[[Any], Any], passed: Callable[[], Any]) -> list[Any]:
    """``check(record)`` (the engine's, which explains) for every record the kernel cannot read, rejects,
    or whose recorded result disagrees; ``passed()`` for the rest (the variant's empty HandCheck:
    a legal hand's outcome is not kept, the engine gives it on demand)."""
    checks: list[Any] = [None] * len(records)
    fast, status, pts, l7 = _run_kernel(records)
    STATS.kernel += len(fast)
    scored = [j for j, k in enumerate(fast) if status[j] == LEGAL and records[k].result is not None]
    settled = settle_batch([records[fast[j]] for j in scored], pts[scored], l7[scored])
    agrees = {j: _result_agrees(records[fast[j]].result, settled, i) for i, j in enumerate(scored)}
    for j, k in enumerate(fast):
        if status[j] == LEGAL and agrees.get(j, True):
            checks[k] = passed()
            STATS.legal += 1
    for k, c in enumerate(checks):
        if c is None:
            checks[k] = check(records[k])
            STATS.fallbacks += 1
    return checks


def settle_batch(records: Sequence[Any], pts: Any, l7: Any) -> tuple[list[list[int]], ...]:
    """points, last-play-was-a-7, multipliers, scores, ranking of legal hands, compiled (``settle`` is
    the reference; a test checks they agree)."""
    rule_sets: dict[Rules, int] = {DEFAULT_RULES: 0}
    idx = np.array([rule_sets.setdefault(r.rules or DEFAULT_RULES, len(rule_sets)) for r in records], np.int64)
    first = np.array([r.actions[0].seat for r in records], np.int64)
    mult, scores, ranking = (np.zeros_like(pts) for _ in range(3))
    if len(records):
        settle_hands(pts, l7, first, idx, rule_table(list(rule_sets)), mult, scores, ranking)
    return pts.tolist(), l7.tolist(), mult.tolist(), scores.tolist(), ranking.tolist()


def _result_agrees(res: Any, settled: tuple[list[list[int]], ...], j: int) -> bool:
    points, last7, mult, scores, ranking = (x[j] for x in settled)
    return res is not None and (res.scores == scores and (res.points is None or res.points == points)
            and (res.multipliers is None or res.multipliers == mult)
            and (res.ranking is None or res.ranking == ranking)
            and (res.tong is None or sorted(res.tong) == [s for s in range(SEATS) if not points[s]])
            and (res.dutou is None or sorted(res.dutou) == [s for s in range(SEATS) if not points[s] and last7[s]]))
