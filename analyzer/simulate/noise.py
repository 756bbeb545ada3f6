"""Honest players with a known amount of noise (softmax, blunders, rank covers, ignoring 通): rooms for validating skill figures.

Each seat follows one noise model with one level; a higher level is a worse player in every model:

- ``softmax``: picks option k with probability ∝ exp(value_k / level), values being the strategy
  module's honest option values (the player's own judgement, in rough points);
- ``blunder``: a strong base player (greedy honest policy, or a search player when ``search`` > 0)
  that picks a uniformly random legal option with probability ``level``;
- ``rankcover``: the greedy honest player, except that at a cover it covers its lowest card by rank
  with probability ``level`` (ignores what the cover blocks and strands);
- ``no_tong``: the greedy honest player, except that with probability ``level`` a decision is taken
  without the 通-related features (blocking a 通, big/small-first by the hope of going 通, 7 for A-2-3);
- ``other_softmax``: a softmax like ``softmax`` but over another engine's values (``OTHER``, a
  differently weighted heuristic): players whose judgement is not the analysis' reference policy.

``noisy_room`` seats N such players at random tables and returns log v1 records and the truth
(player -> level). Everything random comes from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analyzer.simulate.kernel import BLUNDER, NO_TONG as NO_TONG_RULE, OTHER_SOFTMAX, RANKCOVER, SOFTMAX, \
    play_batch
from analyzer.strategy import (
    F_BIG_FIRST,
    F_COVER_BLOCKS,
    F_GIVES_UP_BLOCK,
    F_SEVEN_FOR_LOW,
    F_SMALL_FIRST,
    HONEST,
    NF,
)
from analyzer.variants.bieqi import ACTIONS_PER_HAND, SEATS, Record, State, make_record

MODELS = ("softmax", "blunder", "rankcover", "no_tong", "other_softmax")
#: Levels drawn for each model: (low, high, log-uniform?). Softmax temperatures in the strategy's points.
LEVEL_RANGES: dict[str, tuple[float, float, bool]] = {
    "softmax": (0.2, 20.0, True),
    "blunder": (0.0, 0.5, False),
    "rankcover": (0.0, 1.0, False),
    "no_tong": (0.0, 1.0, False),
    "other_softmax": (0.2, 20.0, True),
}
#: Another engine's judgement (cheap covers, own paths first, little fear of others' 通), for
#: ``other_softmax``: its greedy choice differs from the reference policy's in many decisions.
OTHER = np.array([-4.0, -2.5, 0.5, 0.0, -0.5, 1.0, 0.0, 4.0, -2.0, -2.0, 3.0, 0.0, 0.0, 0.0, 0.0])
NO_TONG = HONEST.copy()
for _f in (F_COVER_BLOCKS, F_GIVES_UP_BLOCK, F_BIG_FIRST, F_SMALL_FIRST, F_SEVEN_FOR_LOW):
    NO_TONG[_f] = 0.0
#: Each model's choice rule in the one play loop (:mod:`analyzer.simulate.kernel`), and the other
#: weights of the rules that judge by them.
KINDS = {"softmax": SOFTMAX, "blunder": BLUNDER, "rankcover": RANKCOVER, "no_tong": NO_TONG_RULE,
         "other_softmax": OTHER_SOFTMAX}
ALT = {"no_tong": NO_TONG, "other_softmax": OTHER}


@dataclass(frozen=True)
class NoisyRoom:
    """A room of noisy honest players: the records and each player's model and level."""

    records: list[Record]
    model: dict[str, str]
    level: dict[str, float]


def draw_levels(model: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n levels of ``model`` spread over its range (stratified, shuffled: every room spans the range)."""
    lo, hi, log = LEVEL_RANGES[model]
    u = (np.arange(n) + rng.random(n)) / n
    x = np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo))) if log else lo + u * (hi - lo)
    return x[rng.permutation(n)]


def noisy_room(model: str | list[str], *, players: int = 40, hands_per_player: int = 150, seed: int = 0,
               levels: np.ndarray | None = None, search: int = 0, run_length: int = 5) -> NoisyRoom:
    """Players p01.. of one noise model (or one model each), seated four at a time at random tables
    for runs of ``run_length`` hands (seats rotating), until each has played about ``hands_per_player``."""
    if players < SEATS:
        raise ValueError("a room needs at least 4 players")
    rng = np.random.default_rng(seed)
    per = [model] * players if isinstance(model, str) else list(model)
    if len(per) != players or any(m not in MODELS for m in per):
        raise ValueError(f"models must be one of {', '.join(MODELS)} (one per player)")
    lv = np.asarray(levels, float) if levels is not None else np.concatenate(
        [draw_levels(m, per.count(m), rng) for m in dict.fromkeys(per)])
    if levels is None:  # levels were drawn model by model: give them back to the players in order
        order = np.concatenate([[i for i, m in enumerate(per) if m == x] for x in dict.fromkeys(per)]).astype(int)
        tmp = np.empty(players)
        tmp[order] = lv
        lv = tmp
    ids = [f"p{i + 1:02d}" for i in range(players)]
    total = players * hands_per_player // SEATS
    seats: list[list[int]] = []
    while len(seats) < total:
        perm = rng.permutation(players)
        for t in range(players // SEATS):
            table = [int(x) for x in perm[SEATS * t:SEATS * (t + 1)]]
            for j in range(run_length):
                seats.append(table[j % SEATS:] + table[:j % SEATS])
    seats = seats[:total]
    b = len(seats)
    perm = rng.permuted(np.tile(np.arange(52, dtype=np.int64), (b, 1)), axis=1).reshape(b, SEATS, 13)
    deals = np.bitwise_or.reduce(np.left_shift(np.int64(1), perm), axis=2)
    st = np.array(seats, np.int64)
    kinds = np.array([KINDS[m] for m in per], np.int64)[st]
    alt = np.array([ALT.get(m, HONEST) for m in per])[st]  # (B, 4, NF): each seat's other judgement
    shape = (b, SEATS)
    actions = play_batch(deals, np.broadcast_to(HONEST, (*shape, NF)), lv[st], kinds=kinds, alt=alt,
                         samples=np.full(shape, search, np.int64), seed=int(rng.integers(2**31))).actions
    records = []
    for h in range(b):
        deal = [int(x) for x in deals[h]]
        state = State(deal)
        for a in actions[h].tolist():
            state.push(a)
        ms = np.cumsum(rng.integers(300, 3000, ACTIONS_PER_HAND)).tolist()
        records.append(make_record(state, deal, hand_id=f"n{seed}-{h + 1:05d}", players=[ids[p] for p in seats[h]],
                                   table_id=f"t{h // run_length + 1}", ms=ms))
    return NoisyRoom(records, dict(zip(ids, per)), {i: float(x) for i, x in zip(ids, lv)})
