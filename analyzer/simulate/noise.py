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
from numba import njit

from analyzer.cards import SEVEN_OF_SPADES
from analyzer.kernels.hidden import mix
from analyzer.kernels.scoring import rule_table
from analyzer.simulate.kernel import _search_values
from analyzer.strategy import (
    F_BIG_FIRST,
    F_COVER_BLOCKS,
    F_GIVES_UP_BLOCK,
    F_SEVEN_FOR_LOW,
    F_SMALL_FIRST,
    HONEST,
    NF,
    decision_features,
    option_values,
)
from analyzer.variants.bieqi import ACTIONS_PER_HAND, COVER, DEFAULT_RULES, NEXT_LIVE, SEATS, Record, State, \
    make_record

MODELS = ("softmax", "blunder", "rankcover", "no_tong", "other_softmax")
#: Levels drawn for each model: (low, high, log-uniform?). Softmax temperatures in the strategy's points.
LEVEL_RANGES: dict[str, tuple[float, float, bool]] = {
    "softmax": (0.2, 20.0, True),
    "blunder": (0.0, 0.5, False),
    "rankcover": (0.0, 1.0, False),
    "no_tong": (0.0, 1.0, False),
    "other_softmax": (0.2, 20.0, True),
}
NEXT = np.array(NEXT_LIVE, np.int64)
MAX_OPTIONS = 13
#: Another engine's judgement (cheap covers, own paths first, little fear of others' 通), for
#: ``other_softmax``: its greedy choice differs from the reference policy's in many decisions.
OTHER = np.array([-4.0, -2.5, 0.5, 0.0, -0.5, 1.0, 0.0, 4.0, -2.0, -2.0, 3.0, 0.0, 0.0, 0.0, 0.0])
NO_TONG = HONEST.copy()
for _f in (F_COVER_BLOCKS, F_GIVES_UP_BLOCK, F_BIG_FIRST, F_SMALL_FIRST, F_SEVEN_FOR_LOW):
    NO_TONG[_f] = 0.0


@njit(cache=True)
def _argmax(vals, k):  # pragma: no cover - compiled
    best = 0
    for i in range(1, k):
        if vals[i] > vals[best]:
            best = i
    return best


@njit(cache=True)
def _pick(model, level, opts, feats, vals, k, honest, no_tong, other):  # pragma: no cover - compiled
    """Index of the option a seat of ``model`` at ``level`` picks, given the greedy values in ``vals``."""
    if model == 4:
        option_values(feats, k, other, vals)
    if model == 0 or model == 4:
        best = _argmax(vals, k)
        if level <= 0.0:
            return best
        total = 0.0
        w = np.empty(k)
        for i in range(k):
            w[i] = np.exp((vals[i] - vals[best]) / level)
            total += w[i]
        u = np.random.random() * total
        for i in range(k):
            u -= w[i]
            if u <= 0.0:
                return i
        return k - 1
    if model == 1:
        if np.random.random() < level:
            return np.random.randint(0, k)
        return _argmax(vals, k)
    if model == 2:
        if opts[0] >= COVER and np.random.random() < level:
            low = 0
            for i in range(1, k):
                if opts[i] % 13 < opts[low] % 13:
                    low = i
            return low
        return _argmax(vals, k)
    if np.random.random() < level:
        option_values(feats, k, no_tong, vals)
    return _argmax(vals, k)


@njit(cache=True)
def play_noisy(deals, models, levels, search, rv, seed, actions):  # pragma: no cover - compiled
    """Play B hands: deals (B, 4) masks; per hand and seat the noise model (B, 4), its level (B, 4)
    and the base player's rollout samples (B, 4; 0 = greedy heuristic). Writes actions (B, 52)."""
    np.random.seed(seed)
    deal_rng = np.empty(1, np.uint64)  # the search players' hidden-hand deals: a stream of the same seed
    deal_rng[0] = mix(seed, 0) | np.uint64(1)
    hands = np.empty(SEATS, np.int64)
    covered = np.empty(SEATS, np.int64)
    notheld = np.empty(SEATS, np.int64)
    last7 = np.empty(SEATS, np.bool_)
    last_act = np.empty(SEATS, np.int64)
    opts = np.empty(MAX_OPTIONS, np.int64)
    feats = np.empty((MAX_OPTIONS, NF))
    vals = np.empty(MAX_OPTIONS)
    honest = HONEST.copy()
    no_tong = NO_TONG.copy()
    other = OTHER.copy()
    for b in range(deals.shape[0]):
        turn = 0
        for s in range(SEATS):
            hands[s] = deals[b, s]
            covered[s] = 0
            notheld[s] = 0
            last7[s] = False
            last_act[s] = -1
            if (deals[b, s] >> SEVEN_OF_SPADES) & 1:
                turn = s
        live = np.int64(1) << SEVEN_OF_SPADES
        table = np.int64(0)
        for n in range(ACTIONS_PER_HAND):
            tongable = 0
            for s in range(SEATS):
                if s != turn and covered[s] == 0:
                    tongable += 1
            k = decision_features(hands[turn], live, table, covered[turn], 0, 0, tongable, opts, feats)
            i = 0
            if k > 1:
                if search[b, turn] > 0:
                    _search_values(hands, covered, notheld, last7, last_act, live, table, n, turn, -1, 0.0, opts, k,
                                   search[b, turn], honest, rv, vals, deal_rng)
                else:
                    option_values(feats, k, honest, vals)
                i = _pick(models[b, turn], levels[b, turn], opts, feats, vals, k, honest, no_tong, other)
            a = opts[i]
            actions[b, n] = a
            c = a % COVER
            bit = np.int64(1) << c
            hands[turn] &= ~bit
            if a >= COVER:
                covered[turn] |= bit
                notheld[turn] |= live
                last7[turn] = False
            else:
                table |= bit
                live = (live & ~bit) | NEXT[c]
                last7[turn] = c % 13 == 6
            last_act[turn] = n
            turn = (turn + 1) % SEATS


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
    code = {m: i for i, m in enumerate(MODELS)}
    st = np.array(seats, np.int64)
    models = np.array([[code[per[p]] for p in row] for row in seats], np.int64).reshape(b, SEATS)
    actions = np.zeros((b, ACTIONS_PER_HAND), np.int64)
    play_noisy(deals, models, lv[st], np.full((b, SEATS), search, np.int64), rule_table([DEFAULT_RULES])[0],
               int(rng.integers(2**31)), actions)
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
