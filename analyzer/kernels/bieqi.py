"""Compiled batch replay of standard 憋七 hands: the validator's fast path for legal hands.

The kernels answer only "legal or not" (and score what is legal); the Python engine in
:mod:`analyzer.variants.bieqi` explains what is wrong, so every hand a kernel rejects, and every
hand it cannot read, goes to the engine's ``check``. Both move cards with
:func:`analyzer.rules.apply_action` (:func:`_replay` is the one compiled replay); tests compare the
kernels' own verdicts with the engine's. Two ways in: :func:`check_lines` reads the deal and the
actions straight from the records' JSON lines (:func:`scan_hands`, which also looks for repeated
keys), the validator's path; :func:`check_records` marshals decoded records' codes as raw ASCII
(:func:`check_hands`), for records without their lines. This module reads records by their fields
only (duck typing), so it imports no variant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
from numba import njit, types

from analyzer.cards import NUM_CARDS, RANKS_PER_SUIT, SEVEN_OF_SPADES
from analyzer.kernels import Ready
from analyzer.kernels.jsonkeys import read_string
from analyzer.kernels.scoring import rule_table, settle_into
from analyzer.kernels.tables import NEXT, RANK_OF, SUIT_OF, apply, mask_points
from analyzer.problems import blank_hand_id, blank_id, lookalike_ids
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
def _replay(dealt, seats, actions, start, end, nxt, hands, covered, last7, points):  # pragma: no cover
    """One hand: ``dealt`` 52 card numbers, 13 by seat (-1: unreadable); ``seats[start:end]`` and
    ``actions[start:end]`` its moves (COVER + card for a cover; -1: unreadable). True for a legal,
    complete hand, whose cover points and last-play-was-a-7 by seat it writes."""
    hands[:] = 0
    covered[:] = 0
    seen = np.int64(0)
    turn = -1
    for j in range(NUM_CARDS):
        c = dealt[j]
        if c < 0:
            return False
        b = np.int64(1) << c
        if seen & b:
            return False
        seen |= b
        s = j // HAND_SIZE
        hands[s] |= b
        if c == SEVEN_OF_SPADES:
            turn = s
    if turn < 0 or end - start != ACTIONS_PER_HAND:
        return False
    live = np.int64(1) << SEVEN_OF_SPADES
    table = np.int64(0)
    for i in range(start, end):
        s = seats[i]
        a = actions[i]
        if s != turn or a < 0:
            return False
        cover = a >= COVER
        b = np.int64(1) << (a - COVER if cover else a)
        if hands[s] & b == 0:
            return False
        lv = hands[s] & live
        if cover and lv != 0 or not cover and lv & b == 0:
            return False
        live, table = apply(a, nxt, hands, covered, last7, live, table, s)
        turn = (turn + 1) % SEATS
    for s in range(SEATS):
        points[s] = mask_points(covered[s])
    return True


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
    n = seats.shape[0]
    actions = np.empty(n, np.int64)
    kp = 0
    for i in range(n):
        c = _card(cards, CODE_CHARS * i, rank_of, suit_of)
        cover = kinds[kp] != PLAY_BYTE
        kp += COVER_CHARS if cover else PLAY_CHARS
        actions[i] = -1 if c < 0 else (COVER + c if cover else c)
    dealt = np.empty(NUM_CARDS, np.int64)
    hands = np.zeros(SEATS, np.int64)
    covered = np.zeros(SEATS, np.int64)
    for h in range(nh):
        for j in range(NUM_CARDS):
            dealt[j] = _card(deal, h * DEAL_CHARS + CODE_CHARS * j, rank_of, suit_of)
        legal = _replay(dealt, seats, actions, offsets[h], offsets[h + 1], nxt, hands, covered, last7[h], points[h])
        status[h] = LEGAL if legal else ILLEGAL
    return status


#: ``scan_hands`` verdicts beyond LEGAL and ILLEGAL: the bytes are not in the plain form it reads (an
#: escape, a 3-character or non-ASCII code, a value of another type or range, a key no action has, a seat
#: without 13 codes, times going backwards), or a key may repeat inside one object.
UNREAD, REPEATS = 2, 3
_DEAL = np.frombuffer(b"deal", np.uint8).copy()
_ACTIONS = np.frombuffer(b"actions", np.uint8).copy()
_SEAT = np.frombuffer(b"seat", np.uint8).copy()
_KIND = np.frombuffer(b"kind", np.uint8).copy()
_CARD = np.frombuffer(b"card", np.uint8).copy()
_MS = np.frombuffer(b"ms", np.uint8).copy()
_PLAY = np.frombuffer(b"play", np.uint8).copy()
_COVER = np.frombuffer(b"cover", np.uint8).copy()
_NULL = np.frombuffer(b"null", np.uint8).copy()
_MAX_DEPTH = 16
_MAX_KEYS = 64
#: The largest time a record may hold (:data:`analyzer.variants.record.MAX_INT`, a layer above; a test checks).
MAX_INT = 2**53 - 1
_MAX_DIGITS = len(str(MAX_INT))


@njit(cache=True, nogil=True)
def _is(blob, i, j, word):  # pragma: no cover - compiled
    """Whether ``blob[i:j]`` is ``word``."""
    if j - i != word.shape[0]:
        return False
    for k in range(word.shape[0]):
        if blob[i + k] != word[k]:
            return False
    return True


@njit(cache=True, nogil=True)
def _number(blob, i, end):  # pragma: no cover - compiled
    """The plain non-negative integer at ``blob[i:]`` (digits only, at most 2**53 - 1) and where it ends;
    -1 for anything else (a sign, a fraction, an exponent, too many digits)."""
    j = i
    v = np.int64(0)
    while j < end and 48 <= blob[j] <= 57 and j - i <= _MAX_DIGITS:
        v = v * 10 + (blob[j] - 48)
        j += 1
    if j == i or j - i > _MAX_DIGITS or v > MAX_INT or (j < end and (blob[j] == 46 or blob[j] == 101
                                                                    or blob[j] == 69 or 48 <= blob[j] <= 57)):
        return np.int64(-1), j
    return v, j


def scan_hands(blob: Any, offsets: Any, nxt: Any, rank_of: Any, suit_of: Any, points: Any, last7: Any,
               first: Any) -> Any:
    """Replay B records straight from their JSON lines ``blob[offsets[h]:offsets[h + 1]]``: lines that
    decoded as a :class:`~analyzer.variants.bieqi.LineRecord` (valid JSON; every field but the deal and
    the actions checked by the decoder).

    One pass a line: it looks for keys repeated inside one object (as
    :func:`analyzer.kernels.jsonkeys.maybe_duplicate_keys`: a hash a key, "maybe" for anything it cannot
    rule out), and reads the deal and the actions from the bytes, checking everything the full record's
    decoder checks there (4 seats of 13 codes; actions of exactly the keys seat 0..3, kind "play" or
    "cover", a code, ms null or 0..2**53-1), then replays. Anything it does not read is UNREAD, so a
    LEGAL line is one the full decoder accepts. Returns status (B,): LEGAL, ILLEGAL, UNREAD or REPEATS;
    writes points and last7 (B, 4) as :func:`check_hands` does, and the first actor's seat.

    The compiled pass (:func:`_scan`) gets every array it writes from here, so it allocates nothing: a
    kernel that calls ``np.zeros`` carries the code of numba's array module with it, which its load from
    the cache then imports (~0.05 s of a process's start).
    """
    nl = offsets.shape[0] - 1
    status = np.zeros(nl, np.int8)
    _ready("_scan")
    _scan(blob, offsets, nxt, rank_of, suit_of, points, last7, first, status,
          np.zeros((_MAX_DEPTH, _MAX_KEYS), np.int64), np.zeros((2, _MAX_DEPTH), np.bool_),
          np.full(NUM_CARDS, -1, np.int64), np.zeros((5, ACTIONS_PER_HAND), np.int64))
    return status


@njit(cache=True, nogil=True)
def _scan(blob, offsets, nxt, rank_of, suit_of, points, last7, first, status, keys, flags, dealt,
          work):  # pragma: no cover - compiled
    """:func:`scan_hands`' pass, into ``status``; ``keys``, ``flags``, ``dealt`` and ``work`` are scratch."""
    nl = offsets.shape[0] - 1
    nkeys = work[0, :_MAX_DEPTH]
    is_obj = flags[0]
    want_key = flags[1]
    dcount = work[1, :SEATS]
    seats = work[2]
    actions = work[3]
    hands = work[4, :SEATS]
    covered = work[4, SEATS:2 * SEATS]
    for line in range(nl):
        i = offsets[line]
        end = offsets[line + 1]
        depth = -1
        flag = False
        unread = False
        section = 0  # 1: inside the top-level "deal" value, 2: inside "actions"
        value = False  # a top-level deal or actions key was read: its value comes next
        dseat = -1
        dcount[:] = 0
        na = 0
        last_ms = np.int64(-1)
        got = 0  # the keys of the current action read so far: 1 seat, 2 kind, 4 card, 8 ms
        a_seat = -1
        a_card = -1
        a_cover = False
        a_ms = np.int64(-1)
        while i < end and not flag:
            c = blob[i]
            if c == 32 or c == 9 or c == 10 or c == 13 or c == 58:  # whitespace, ':'
                i += 1
                continue
            if value and c != 91:  # the deal or the actions, not an array
                unread = True
            value = False
            if c == 34:  # '"'
                key = depth >= 0 and is_obj[depth] and want_key[depth]
                # an action's keys are told apart by their bytes: only the others are hashed
                hashed = key and not (depth == 2 and section == 2)
                j, h, esc = read_string(blob, i, end, hashed)
                if key:
                    if esc or nkeys[depth] >= _MAX_KEYS:
                        flag = True
                        break
                    want_key[depth] = False
                    if hashed:
                        for k in range(nkeys[depth]):
                            if keys[depth, k] == h:
                                flag = True
                        keys[depth, nkeys[depth]] = h
                        nkeys[depth] += 1
                    if depth == 0:
                        section = 1 if _is(blob, i + 1, j, _DEAL) else 2 if _is(blob, i + 1, j, _ACTIONS) else 0
                        value = section != 0
                        i = j + 1
                        continue
                    if depth == 2 and section == 2:  # an action's key, then its value
                        bit = 1 if _is(blob, i + 1, j, _SEAT) else 2 if _is(blob, i + 1, j, _KIND) else \
                            4 if _is(blob, i + 1, j, _CARD) else 8 if _is(blob, i + 1, j, _MS) else 0
                        if bit == 0:  # a key no action has: the decoder did not look inside
                            unread = True
                            break
                        if got & bit:
                            flag = True
                            break
                        got |= bit
                        k = j + 1
                        while k < end and (blob[k] == 32 or blob[k] == 9 or blob[k] == 10 or blob[k] == 13
                                           or blob[k] == 58):
                            k += 1
                        if k >= end:
                            unread = True
                            break
                        if bit == 1 or bit == 8:
                            if bit == 8 and _is(blob, k, min(k + 4, end), _NULL):
                                i = k + 4
                                continue
                            v, k2 = _number(blob, k, end)
                            if v < 0:
                                unread = True
                                break
                            if bit == 1:
                                if v >= SEATS:
                                    unread = True
                                    break
                                a_seat = v
                            else:
                                a_ms = v
                            i = k2
                            continue
                        if blob[k] != 34:  # a kind or a code that is not a string
                            unread = True
                            break
                        e = k + 1
                        while e < end and blob[e] != 34 and blob[e] != 92:
                            e += 1
                        if e >= end or blob[e] != 34:  # an escape
                            unread = True
                            break
                        if bit == 2:
                            if _is(blob, k + 1, e, _PLAY):
                                a_cover = False
                            elif _is(blob, k + 1, e, _COVER):
                                a_cover = True
                            else:
                                unread = True
                                break
                        else:
                            if e - k - 1 != CODE_CHARS:
                                unread = True
                                break
                            a_card = _card(blob, k + 1, rank_of, suit_of)
                        i = e + 1
                        continue
                elif section == 1 and depth == 2 and not is_obj[2]:  # one of a seat's codes
                    if esc or j - i - 1 != CODE_CHARS or dseat < 0 or dseat >= SEATS or dcount[dseat] >= HAND_SIZE:
                        unread = True
                        break
                    dealt[dseat * HAND_SIZE + dcount[dseat]] = _card(blob, i + 1, rank_of, suit_of)
                    dcount[dseat] += 1
                elif section != 0 and depth >= 1:  # a string anywhere else in the deal or the actions
                    unread = True
                    break
                i = j + 1
                continue
            if c == 123 or c == 91:  # '{' '['
                depth += 1
                if depth >= _MAX_DEPTH:
                    flag = True
                    break
                is_obj[depth] = c == 123
                want_key[depth] = c == 123
                nkeys[depth] = 0
                if section != 0 and depth >= 1:
                    # the deal: arrays of arrays; the actions: an array of objects
                    if depth >= 3 or (depth == 2 and (section == 1) == (c == 123)) or (depth == 1 and c == 123):
                        unread = True
                        break
                    if depth == 2 and section == 1:
                        dseat += 1
                    elif depth == 2:
                        got = 0
                        a_seat = -1
                        a_card = -1
                        a_cover = False
                        a_ms = -1
            elif c == 125 or c == 93:  # '}' ']'
                if depth == 2 and section == 2:  # an action ends
                    if got & 7 != 7:  # without a seat, a kind or a code
                        unread = True
                        break
                    if na < ACTIONS_PER_HAND:
                        seats[na] = a_seat
                        actions[na] = -1 if a_card < 0 else (COVER + a_card if a_cover else a_card)
                    na += 1
                    if a_ms >= 0:
                        if a_ms < last_ms:  # time going backwards: the engine reports where
                            unread = True
                            break
                        last_ms = a_ms
                depth -= 1
            elif c == 44:  # ','
                if depth >= 0 and is_obj[depth]:  # in an object: a key comes next
                    want_key[depth] = True
            elif section != 0 and depth >= 1:  # a number, true, false or null in the deal or the actions
                unread = True
                break
            i += 1
        if flag:
            status[line] = REPEATS
            continue
        if unread or dseat != SEATS - 1:
            status[line] = UNREAD
            continue
        for s in range(SEATS):
            if dcount[s] != HAND_SIZE:
                unread = True
        if unread:
            status[line] = UNREAD
            continue
        first[line] = seats[0] if na else -1
        # more than 52 actions: only the first 52 were kept, and the count alone makes the hand illegal
        legal = _replay(dealt, seats, actions, 0, na, nxt, hands, covered, last7[line], points[line])
        status[line] = LEGAL if legal else ILLEGAL


@njit(cache=True, nogil=True)
def settle_hands(points, last7, first, rule_idx, rules, mult, scores, ranking, final):  # pragma: no cover
    """The rules of :func:`analyzer.variants.bieqi.settle` for B legal hands, into mult, scores and
    ranking (B, 4). ``rules`` rows are laid out as :func:`analyzer.rules.rule_rows`;
    ``first`` is the seat that acted first (ties go to whoever finished earlier in the rotation);
    ``final`` (4,) is scratch (passed in: see :func:`scan_hands`)."""
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


# --------------------------------------------------------------------------- loading the kernels

def _array(dtype: Any, ndim: int, readonly: bool = False) -> Any:
    return types.Array(dtype, ndim, "C", readonly=readonly)


_I64, _I64_2D, _BOOL_2D = _array(types.int64, 1), _array(types.int64, 2), _array(types.bool_, 2)
_BYTES = _array(types.uint8, 1, readonly=True)  # np.frombuffer of bytes: read-only
#: The exact argument types the calls below pass (so the first call finds its code loaded; see load_cached).
SIGNATURES = {
    "_scan": (_BYTES, _I64, _I64, _I64, _I64, _I64_2D, _BOOL_2D, _I64, _array(types.int8, 1), _I64_2D, _BOOL_2D,
              _I64, _I64_2D),
    "settle_hands": (_I64_2D, _BOOL_2D, _I64, _I64, _I64_2D, _I64_2D, _I64_2D, _I64_2D, _I64),
    "check_hands": (_BYTES, _I64, _BYTES, _BYTES, _BYTES, _I64, _I64, _I64, _I64_2D, _BOOL_2D),
}
#: Loads the named kernels for the calls below, once a process (from numba's cache when it holds them).
_ready = Ready(globals(), SIGNATURES)


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
        codes = [a.card for a in acts]
        cs = "".join(codes)
        n = len(acts)
        if (len(ds) != DEAL_CHARS or len(cs) != CODE_CHARS * n or [len(x) for x in d] != sizes
                or not (ds.isascii() and cs.isascii()) or len(set(rec.players)) != SEATS):
            continue
        # the kernel reads the codes joined: each must be exactly 2 characters ("7", "S8S" joins like "7S", "8S");
        # with the lengths above, no code longer than 2 means every one is 2
        if max(map(len, chain.from_iterable(d))) != CODE_CHARS or (n and max(map(len, codes)) != CODE_CHARS):
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
    _ready("check_hands")
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
    legal = [k for j, k in enumerate(fast) if status[j] == LEGAL]
    rows = [j for j, k in enumerate(fast) if status[j] == LEGAL]
    first = np.array([records[k].actions[0].seat for k in legal], np.int64)
    for k, ok in zip(legal, _results_agree(records, legal, pts[rows], l7[rows], first)):
        if ok:
            checks[k] = passed()
            STATS.legal += 1
    for k, c in enumerate(checks):
        if c is None:
            checks[k] = check(records[k])
            STATS.fallbacks += 1
    return checks


def check_lines(records: Sequence[Any], lines: Sequence[bytes], passed: Callable[[], Any]) -> list[Any]:
    """``passed()`` for each record whose JSON line :func:`scan_hands` reads, finds legal, and whose
    recorded result (if any) is the settled one; None for every other line (illegal, unread, a key that
    may repeat): the caller checks those the long way. ``records`` need only the fields the scan does
    not read (players, rules, result): :class:`analyzer.variants.bieqi.LineRecord` or the full record."""
    n = len(records)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum([len(x) for x in lines], out=offsets[1:])
    pts = np.zeros((n, SEATS), np.int64)
    l7 = np.zeros((n, SEATS), np.bool_)
    first = np.zeros(n, np.int64)
    status = scan_hands(np.frombuffer(b"".join(lines), np.uint8), offsets, NEXT, RANK_OF, SUIT_OF, pts, l7, first)
    checks: list[Any] = [None] * n
    legal = np.flatnonzero(status == LEGAL)
    STATS.kernel += len(legal) + int(np.count_nonzero(status == ILLEGAL))
    ks = legal.tolist()
    for k, ok in zip(ks, _results_agree(records, ks, pts[legal], l7[legal], first[legal])):
        if ok:
            checks[k] = passed()
            STATS.legal += 1
        else:
            STATS.fallbacks += 1
    STATS.fallbacks += int(np.count_nonzero(status == ILLEGAL))
    return checks


#: The seats of each 4-bit mask, in order: the tong and dutou lists a result records, sorted.
_SEATS_OF = [[s for s in range(SEATS) if m >> s & 1] for m in range(1 << SEATS)]
_SEAT_BITS = np.array([1 << s for s in range(SEATS)], np.int64)


def _results_agree(records: Sequence[Any], ks: list[int], pts: Any, l7: Any, first: Any) -> list[bool]:
    """For the legal hands ``records[k]`` (k in ``ks``): distinct players that do not look alike nor are blank, a hand id
    that is not blank, and a recorded result (if any) equal to the settled one. Compared a batch at a time (a hand's
    fields as rows of arrays)."""
    recs = [records[k] for k in ks]
    ok = [len(r.players) == SEATS and lookalike_ids(r.players) is None and blank_id(r.players) is None
          and not blank_hand_id(r.hand_id) for r in recs]
    scored = [j for j, r in enumerate(recs) if r.result is not None]
    if not scored:
        return ok
    recs = [recs[j] for j in scored]
    res = [r.result for r in recs]
    pts, l7 = pts[scored], l7[scored]
    mult, scores, ranking = _settle(recs, pts, l7, first[scored])
    good = (np.array([x.scores for x in res], np.int64) == scores).all(1)
    for name, mine in (("points", pts), ("multipliers", mult), ("ranking", ranking)):
        got = [getattr(x, name) for x in res]
        rows = [i for i, v in enumerate(got) if v is not None]
        if rows:
            same = np.array([got[i] for i in rows], np.int64) == mine[rows]
            if name == "multipliers":  # a 通 seat's entry is not compared (no factor applies to no points)
                same |= pts[rows] == 0
            good[rows] &= same.all(1)
    zero = pts == 0
    tong = (zero * _SEAT_BITS).sum(1).tolist()
    dutou = ((zero & l7) * _SEAT_BITS).sum(1).tolist()
    for i, (x, g) in enumerate(zip(res, good.tolist())):
        ok[scored[i]] = ok[scored[i]] and g and (x.tong is None or sorted(x.tong) == _SEATS_OF[tong[i]]) \
            and (x.dutou is None or sorted(x.dutou) == _SEATS_OF[dutou[i]])
    return ok


def _settle(records: Sequence[Any], pts: Any, l7: Any, first: Any) -> tuple[Any, Any, Any]:
    """Multipliers, scores and ranking (B, 4) of legal hands under each record's rules."""
    rule_sets: dict[Rules, int] = {DEFAULT_RULES: 0}
    # (most records name no rules: hashing the default rule set for each would cost more than the rest)
    idx = np.array([0 if r.rules is None else rule_sets.setdefault(r.rules, len(rule_sets)) for r in records],
                   np.int64)
    mult, scores, ranking = (np.zeros_like(pts) for _ in range(3))
    if len(records):
        _ready("settle_hands")
        settle_hands(pts, l7, first, idx, rule_table(list(rule_sets)), mult, scores, ranking, np.zeros(SEATS, np.int64))
    return mult, scores, ranking


def settle_batch(records: Sequence[Any], pts: Any, l7: Any) -> tuple[list[list[int]], ...]:
    """points, last-play-was-a-7, multipliers, scores, ranking of legal hands, compiled (``settle`` is
    the reference; a test checks they agree)."""
    first = np.array([r.actions[0].seat for r in records], np.int64)
    mult, scores, ranking = _settle(records, pts, l7, first)
    return pts.tolist(), l7.tolist(), mult.tolist(), scores.tolist(), ranking.tolist()
