"""What one seat knows at a decision, what covers prove, and seeded deals of the hidden cards consistent with it.

A seat sees its own hand, the table, the public history (who played what; covers face down) and how
many cards each seat has covered. A cover is proof: the coverer held no card that was live at that
moment, so none of those cards was in their hand then; that hand then held their current cards and
every card they covered later. The hidden cards are dealt into *slots* (a seat's current hand, and
runs of its covers) each with the mask of cards it may hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from analyzer.cards import FULL_DECK
from analyzer.variants.bieqi import COVER, DEFAULT_RULES, SEATS, Rules, State


class Slot(NamedTuple):
    """Some hidden cards of one seat: its current hand (``cover`` False) or a run of its covers."""

    seat: int
    cover: bool
    allowed: int
    size: int


@dataclass(frozen=True, slots=True)
class InfoSet:
    """A seat's view of a position. Masks are card bit masks; per-seat tuples are indexed by seat."""

    seat: int
    hand: int
    table: int
    live: int
    own_covered: int
    hand_sizes: tuple[int, ...]
    covers: tuple[int, ...]
    not_held: tuple[int, ...]  # hidden cards each seat's covers prove it does not hold now
    hidden: int  # the cards this seat cannot see: others' hands and all others' covers
    slots: tuple[Slot, ...]  # by seat; the sampler deals the most constrained first

    @classmethod
    def observe(cls, state: State, seat: int, cover_live: Sequence[Sequence[int]]) -> InfoSet:
        """The view of ``seat``; ``cover_live[s]``: the live mask at each of seat s's covers, in order."""
        hidden = FULL_DECK & ~state.hands[seat] & ~state.table & ~state.covered[seat]
        slots: list[Slot] = []
        not_held = [0] * SEATS
        for s in range(SEATS):
            if s == seat:
                continue
            proven = 0
            run_allowed, run = -1, 0
            for live in cover_live[s]:
                proven |= live & hidden  # the card covered now, and every later one, was not live now
                if hidden & ~proven != run_allowed and run:
                    slots.append(Slot(s, True, run_allowed, run))
                    run = 0
                run_allowed = hidden & ~proven
                run += 1
            if run:
                slots.append(Slot(s, True, run_allowed, run))
            not_held[s] = proven
            slots.append(Slot(s, False, hidden & ~proven, state.hands[s].bit_count()))
        return cls(seat, state.hands[seat], state.table, state.live, state.covered[seat],
                   tuple(h.bit_count() for h in state.hands), tuple(m.bit_count() for m in state.covered),
                   tuple(not_held), hidden, tuple(slots))

    def sample(self, n: int, seed: int) -> list[tuple[list[int], list[int]]]:
        """``n`` seeded deals (hands, covered masks by seat) of the hidden cards consistent with this view."""
        from analyzer.kernels.hidden import mix, sample_hidden

        seat, cover, allowed, size = self.slot_arrays()
        rng = np.zeros(1, np.uint64)
        out = []
        for i in range(n):
            hands = np.zeros(SEATS, np.int64)
            cov = np.zeros(SEATS, np.int64)
            hands[self.seat] = self.hand
            cov[self.seat] = self.own_covered
            rng[0] = mix(np.uint64(seed), i) | np.uint64(1)
            sample_hidden(self.hidden, 0, len(self.slots), seat, cover, allowed, size, hands, cov, rng)
            out.append(([int(x) for x in hands], [int(x) for x in cov]))
        return out

    def slot_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The slots as the kernel's parallel arrays (seat, cover, allowed, size)."""
        sl = self.slots
        return (np.array([x.seat for x in sl], np.int64), np.array([x.cover for x in sl], np.bool_),
                np.array([x.allowed for x in sl], np.int64), np.array([x.size for x in sl], np.int64))

    def is_consistent(self, hands: Sequence[int], covered: Sequence[int]) -> bool:
        """Whether a full deal agrees with everything this view knows (sizes, own cards, cover proofs)."""
        if hands[self.seat] != self.hand or covered[self.seat] != self.own_covered:
            return False
        seen = self.hand | self.own_covered | self.table
        for s in range(SEATS):
            if s == self.seat:
                continue
            if hands[s].bit_count() != self.hand_sizes[s] or covered[s].bit_count() != self.covers[s]:
                return False
            if hands[s] & self.not_held[s] or (hands[s] | covered[s]) & seen:
                return False
            seen |= hands[s] | covered[s]
        return seen == FULL_DECK


class Observer:
    """Replays a hand and remembers what every cover proved, so any seat's view can be asked for."""

    __slots__ = ("state", "cover_live")

    def __init__(self, deal: Sequence[int], rules: Rules = DEFAULT_RULES):
        self.state = State(deal, rules)
        self.cover_live: list[list[int]] = [[] for _ in range(SEATS)]

    def push(self, action: int) -> None:
        if action >= COVER:
            self.cover_live[self.state.turn].append(self.state.live)
        self.state.push(action)

    def info(self, seat: int | None = None) -> InfoSet:
        """The view of ``seat`` (default: the seat to act)."""
        return InfoSet.observe(self.state, self.state.turn if seat is None else seat, self.cover_live)
