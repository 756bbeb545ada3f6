"""The one hidden-hand sampler: seeded deals of the cards a seat cannot see into *slots*, compiled.

A slot is some hidden cards of one seat, a current hand or a run of covers, with the mask of cards it
may hold (what covers proved) and how many it holds. The analysis rollouts
(:mod:`analyzer.kernels.rollout`, :class:`analyzer.analysis.infoset.InfoSet`) and the simulator's search
bots (:mod:`analyzer.simulate.kernel`) both deal through :func:`sample_hidden`, from the seeded streams
:func:`mix` / :func:`next_uniform`, so one retry limit and one order hold everywhere.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from analyzer.cards import NUM_CARDS
from analyzer.kernels.tables import mask_count

#: Strict attempts (every slot within its allowed mask) before one last deal that ignores the masks.
MAX_TRIES = 64

_GOLDEN = 0x9E3779B97F4A7C15  # splitmix64's increment
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_STAR = 0x2545F4914F6CDD1D  # xorshift64*'s multiplier
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53: 53 random bits to a double in [0, 1)


@njit(cache=True, nogil=True)
def mix(seed, i):  # pragma: no cover - compiled
    """splitmix64 of seed + i: independent streams from one seed (uint64 arithmetic)."""
    z = np.uint64(seed) + np.uint64(i + 1) * np.uint64(_GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def next_uniform(state):  # pragma: no cover - compiled
    """xorshift64*: a uniform in [0, 1) from state[0] (never 0), which it advances."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return float((x * np.uint64(_STAR)) >> np.uint64(11)) * _TO_UNIT


@njit(cache=True, nogil=True)
def _fill_order(hidden, lo, hi, slot_allowed, slot_size, order):  # pragma: no cover - compiled
    """Slots lo..hi into ``order``, least slack first (allowed hidden cards minus size; ties keep their
    order): the most constrained slots are dealt while the most cards are left, so dead ends are rare."""
    n = hi - lo
    slack = np.empty(n, np.int64)
    for i in range(n):
        j = lo + i
        slack[i] = mask_count(hidden & slot_allowed[j]) - slot_size[j]
        order[i] = j
        k = i  # insertion sort: a handful of slots
        while k > 0 and slack[k - 1] > slack[k]:
            slack[k - 1], slack[k] = slack[k], slack[k - 1]
            order[k - 1], order[k] = order[k], order[k - 1]
            k -= 1


@njit(cache=True, nogil=True)
def sample_hidden(hidden, lo, hi, slot_seat, slot_cover, slot_allowed, slot_size, hands, cov, rng):  # pragma: no cover
    """Deal the ``hidden`` cards to the slots lo..hi, each slot ``slot_size`` cards within its allowed mask.

    Hand slots OR into ``hands[seat]``, cover slots into ``cov[seat]`` (both start as the known part).
    Slots are dealt most constrained first, each a uniform draw from the cards still free for it; a dead
    end restarts. After MAX_TRIES strict attempts the masks are ignored: returns False then, else True.
    ``rng``: a one-element uint64 state for :func:`next_uniform` (seed it with :func:`mix`).
    """
    base_h = hands.copy()
    base_c = cov.copy()
    bits = np.empty(NUM_CARDS, np.int64)
    order = np.empty(hi - lo, np.int64)
    _fill_order(hidden, lo, hi, slot_allowed, slot_size, order)
    for attempt in range(MAX_TRIES + 1):
        strict = attempt < MAX_TRIES
        hands[:] = base_h
        cov[:] = base_c
        rest = hidden
        ok = True
        for j in order:
            avail = rest & slot_allowed[j] if strict else rest
            k = slot_size[j]
            cnt = 0
            m = avail
            while m:
                low = m & -m
                m ^= low
                bits[cnt] = low
                cnt += 1
            if cnt < k:
                ok = False
                break
            got = np.int64(0)
            for t in range(k):  # partial Fisher-Yates
                u = t + int(next_uniform(rng) * (cnt - t))
                bits[t], bits[u] = bits[u], bits[t]
                got |= bits[t]
            rest &= ~got
            if slot_cover[j]:
                cov[slot_seat[j]] |= got
            else:
                hands[slot_seat[j]] |= got
        if ok:
            return strict
    return False
