"""The one hidden-hand sampler: it deals exactly the hidden cards, keeps every slot in its mask, is seeded."""

from __future__ import annotations

import random

import numpy as np

from analyzer.cards import FULL_DECK
from analyzer.kernels.hidden import mix, sample_hidden

SEATS = 4


def _case(rng: random.Random) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """A random true split of some hidden cards into slots, and masks that allow the truth and more."""
    cards = rng.sample(range(52), 52)
    known = set(cards[:rng.randrange(4, 20)])
    hidden = sum(1 << c for c in cards if c not in known)
    rest = [c for c in cards if c not in known]
    seat, cover, allowed, size, truth = [], [], [], [], []
    while rest:
        k = min(len(rest), rng.randrange(1, 9))
        part, rest = rest[:k], rest[k:]
        m = sum(1 << c for c in part)
        extra = sum(1 << c for c in rng.sample(rest, min(len(rest), rng.randrange(0, 10))))
        seat.append(rng.randrange(1, SEATS))
        cover.append(rng.random() < 0.4)
        allowed.append(m | extra if rng.random() < 0.7 else hidden)
        size.append(k)
        truth.append(m)
    return (hidden, len(seat), np.array(seat, np.int64), np.array(cover, np.bool_), np.array(allowed, np.int64),
            np.array(size, np.int64), truth)


def _deal(case, seed: int, i: int = 0) -> tuple[bool, np.ndarray, np.ndarray]:
    hidden, n, seat, cover, allowed, size, _ = case
    hands = np.zeros(SEATS, np.int64)
    cov = np.zeros(SEATS, np.int64)
    hands[0] = FULL_DECK & ~hidden  # the known part stays as it is
    rng = np.array([mix(seed, i) | np.uint64(1)], np.uint64)
    ok = sample_hidden(np.int64(hidden), 0, n, seat, cover, allowed, size, hands, cov, rng)
    return bool(ok), hands, cov


def test_deals_exactly_the_hidden_cards_within_the_masks() -> None:
    rng = random.Random(5)
    strict = 0
    for _ in range(300):
        case = _case(rng)
        hidden, n, seat, cover, allowed, size, _ = case
        ok, hands, cov = _deal(case, rng.randrange(1 << 40))
        assert int(hands[0]) == FULL_DECK & ~hidden  # the known part is left as it was
        dealt = (int(hands[1]) | int(hands[2]) | int(hands[3]) | int(cov[1]) | int(cov[2]) | int(cov[3]))
        assert dealt == hidden and int(cov[0]) == 0
        assert sum(bin(int(x)).count("1") for x in (*hands[1:], *cov[1:])) == bin(hidden).count("1")
        for s in range(1, SEATS):  # each seat holds its slots' counts
            assert bin(int(hands[s])).count("1") == int(size[(seat == s) & ~cover].sum())
            assert bin(int(cov[s])).count("1") == int(size[(seat == s) & cover].sum())
            if ok:  # a strict deal keeps every card of a seat's hand in one of its hand slots' masks
                for c in range(52):
                    if hands[s] >> c & 1:
                        assert any(allowed[j] >> c & 1 for j in range(n) if seat[j] == s and not cover[j])
        strict += ok
    # the truth fits every case; arbitrary masks are far harsher than what covers prove (nested per seat,
    # where test_rollout finds a strict deal every time), yet most are still dealt strictly
    assert strict > 0.75 * 300


def test_slot_masks_are_respected_slot_by_slot() -> None:
    # one slot per seat and kind, so a seat's cards are exactly its slot's: each must lie in its mask
    rng = random.Random(8)
    for _ in range(200):
        cards = rng.sample(range(52), 24)
        parts = [cards[i:i + 4] for i in range(0, 24, 4)]
        hidden = sum(1 << c for c in cards)
        slots = [(s, cv) for s in (1, 2, 3) for cv in (False, True)]
        allowed = [sum(1 << c for c in p) | (hidden if rng.random() < 0.3 else 0) for p in parts]
        case = (hidden, 6, np.array([s for s, _ in slots], np.int64), np.array([c for _, c in slots], np.bool_),
                np.array(allowed, np.int64), np.full(6, 4, np.int64), [])
        ok, hands, cov = _deal(case, rng.randrange(1 << 40))
        assert ok
        for j, (s, cv) in enumerate(slots):
            got = int(cov[s] if cv else hands[s])
            assert got & ~allowed[j] == 0 and bin(got).count("1") == 4


def test_seeded_reproducible_and_seeds_differ() -> None:
    case = _case(random.Random(2))
    a = [_deal(case, 17, i) for i in range(30)]
    b = [_deal(case, 17, i) for i in range(30)]
    assert all((x[1] == y[1]).all() and (x[2] == y[2]).all() for x, y in zip(a, b, strict=True))
    assert len({(tuple(x[1]), tuple(x[2])) for x in a}) > 20


def test_an_impossible_view_is_dealt_ignoring_the_masks_and_says_so() -> None:
    hidden = (1 << 8) - 1
    seat = np.array([1, 2], np.int64)
    cover = np.array([False, False])
    allowed = np.array([0b11, hidden], np.int64)  # seat 1 needs 4 cards but may hold only 2
    size = np.array([4, 4], np.int64)
    hands = np.zeros(SEATS, np.int64)
    cov = np.zeros(SEATS, np.int64)
    rng = np.array([mix(1, 0) | np.uint64(1)], np.uint64)
    assert not sample_hidden(np.int64(hidden), 0, 2, seat, cover, allowed, size, hands, cov, rng)
    assert int(hands[1]) | int(hands[2]) == hidden and bin(int(hands[1])).count("1") == 4


def test_only_the_slots_lo_to_hi_are_dealt() -> None:
    hidden = (1 << 12) - 1
    seat = np.array([1, 2, 3, 1], np.int64)
    cover = np.zeros(4, np.bool_)
    allowed = np.full(4, hidden, np.int64)
    size = np.array([5, 3, 4, 4], np.int64)  # slot 0 belongs to another decision
    hands = np.zeros(SEATS, np.int64)
    cov = np.zeros(SEATS, np.int64)
    rng = np.array([mix(3, 0) | np.uint64(1)], np.uint64)
    assert sample_hidden(np.int64(hidden), 1, 4, seat, cover, allowed, size, hands, cov, rng)
    assert [bin(int(x)).count("1") for x in hands] == [0, 4, 3, 4]
