"""A simulated room of standard 憋七: honest players, friends and colluding pairs, tables that form and
re-form, and the truth about who colluded.

``simulate(hands=..., players=..., seed=...)`` plans the whole room first (who sits where, for how
many hands, which hands a pair colludes in), then plays it in compiled batches and yields log v1
records lazily. Everything random comes from one ``numpy`` generator seeded with ``seed``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from itertools import islice
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from analyzer.cards import CANONICAL
from analyzer.simulate import Simulation
from analyzer.simulate.kernel import Batch, play_batch
from analyzer.simulate.players import DEFAULT_SKILL_MIX, LEVELS, Player, draw_levels, make_player, \
    parse_skill_mix, think_times
from analyzer.strategy import (
    F_COVER_BLOCKS,
    F_COVER_BLOCKS_POINTS,
    F_GIVES_UP_BLOCK,
    F_OPENS_OTHERS,
    HONEST,
    NF,
    STYLES,
    style_weights,
)
from analyzer.variants.bieqi import ACTIONS_PER_HAND, COVER, HAND_SIZE, SEATS, Action, Record, Result, \
    deal_to_codes, settle

START = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)
BATCH = 512
GAP_BETWEEN_HANDS_MS = 8_000
CONSULT_MS = 1_500.0  # median extra think time of a slow colluder talking to its partner
#: Styles this simulator adds to the strategy's: ``harm`` knows the partner's hand (so which unseen
#: cards are the opponents') and spends it on hurting both opponents, not on feeding the partner.
ROOM_STYLES = ("harm",)


def harm_weights(strength: float) -> np.ndarray:
    """Weights of a colluder who harms the opponents: shut their suits, never open cards for them."""
    w = HONEST.copy()
    lam = float(strength)
    w[F_COVER_BLOCKS] *= 1.0 + 2.0 * lam
    w[F_COVER_BLOCKS_POINTS] += 2.0 * lam
    w[F_GIVES_UP_BLOCK] *= 1.0 + 2.0 * lam
    w[F_OPENS_OTHERS] *= 1.0 + 2.0 * lam
    return w


def colluder_weights(style: str, strength: float) -> np.ndarray:
    """A colluding style's weights: the strategy's styles, or this simulator's own (ROOM_STYLES)."""
    return harm_weights(strength) if style == "harm" else style_weights(style, strength)


@dataclass(frozen=True)
class Pair:
    """Two players bound together: honest friends, or colluders with a style."""

    a: int
    b: int
    together: float  # chance they make sure to sit at one table when tables form
    style: str | None = None  # None for friends
    share: float = 0.0
    strength: float = 0.0
    slow: bool = False
    decisions: float = 1.0  # share of its decisions in which a colluder uses the partner's hand


@dataclass
class Sitting:
    """One table's run of hands between re-formations."""

    round: int
    table_id: str
    seats: list[int]
    hands: int


@dataclass
class Options:
    """Room options (``simulate``'s keyword options); see docs/guide/simulate.md."""

    colluders: int = 1
    style: str = "share"
    share: float = 0.7
    strength: float = 1.0
    decisions: float = 1.0
    slow: str = "auto"
    friends: int = 1
    skill_mix: str = DEFAULT_SKILL_MIX
    friend_skill: str = "novice"
    colluder_skill: str = "regular"
    run_length: float = 30.0
    presence: float = 0.85
    seek: float = 0.85
    friend_together: float = 0.75
    prefix: str = ""  # hand-id prefix; "" means "s<seed>-"
    extra: dict[str, Any] = field(default_factory=dict)

    def check(self, players: int) -> None:
        styles = (*STYLES, *ROOM_STYLES, "mixed")
        if self.style not in styles:
            raise ValueError(f"--style {self.style!r}: expected one of {', '.join(styles)}")
        if self.slow not in ("auto", "yes", "no"):
            raise ValueError(f"--slow {self.slow!r}: expected auto, yes or no")
        for name in ("friend_skill", "colluder_skill"):
            if getattr(self, name) not in LEVELS:
                raise ValueError(f"{name} {getattr(self, name)!r}: expected one of {', '.join(LEVELS)}")
        for name in ("share", "decisions", "presence", "seek", "friend_together", "strength", "run_length",
                     "colluders", "friends"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, not {value!r}")
        for name in ("share", "decisions", "presence", "seek", "friend_together"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {getattr(self, name)}")
        if self.strength < 0 or self.run_length < 1 or self.colluders < 0 or self.friends < 0:
            raise ValueError("strength, colluders and friends must be >= 0 and run_length >= 1")
        if players < SEATS or 2 * (self.colluders + self.friends) > players:
            raise ValueError(f"{players} players cannot hold {self.colluders} colluding and {self.friends} friend "
                             f"pairs (need at least 4 players and 2 per pair)")
        if self.extra:
            raise ValueError(f"unknown option(s) for the bieqi simulator: {', '.join(sorted(self.extra))}")


def _population(n: int, opts: Options, rng: np.random.Generator) -> tuple[list[Player], list[Pair]]:
    """Players p01.. with skills; the first pairs collude, the next are friends, the rest are honest."""
    width = max(2, len(str(n)))
    ids = [f"p{i + 1:0{width}d}" for i in range(n)]
    order = rng.permutation(n)  # pair members are not numbered next to each other
    levels = draw_levels(n, parse_skill_mix(opts.skill_mix), rng)
    pairs: list[Pair] = []
    for k in range(opts.colluders):
        a, b = int(order[2 * k]), int(order[2 * k + 1])
        style = STYLES[k % len(STYLES)] if opts.style == "mixed" else opts.style
        slow = bool(rng.random() < 0.5) if opts.slow == "auto" else opts.slow == "yes"
        pairs.append(Pair(a, b, opts.seek, style, opts.share, opts.strength, slow, opts.decisions))
        levels[a] = levels[b] = opts.colluder_skill
    for k in range(opts.colluders, opts.colluders + opts.friends):
        a, b = int(order[2 * k]), int(order[2 * k + 1])
        pairs.append(Pair(a, b, opts.friend_together))
        levels[a] = levels[b] = opts.friend_skill
    return [make_player(ids[i], levels[i], rng) for i in range(n)], pairs


def _table_chance(players: int, presence: float) -> float:
    """The chance that at least a table's worth of ``players`` is present in a round (each there with ``presence``)."""
    from math import comb

    return 1.0 - sum(comb(players, k) * presence**k * (1.0 - presence) ** (players - k) for k in range(SEATS))


def _form_tables(n: int, pairs: list[Pair], opts: Options, rng: np.random.Generator) -> list[list[int]]:
    """Tables of 4 for one round: present players, bound pairs placed first, seats shuffled."""
    present = rng.random(n) < opts.presence
    units: list[list[int]] = []
    bound = np.zeros(n, bool)
    for p in pairs:
        if (present[p.a] or present[p.b]) and rng.random() < p.together:
            present[p.a] = present[p.b] = True
            bound[p.a] = bound[p.b] = True
            units.append([p.a, p.b])
    singles = [[i] for i in range(n) if present[i] and not bound[i]]
    units = [units[i] for i in rng.permutation(len(units))] + [singles[i] for i in rng.permutation(len(singles))]
    tables = first_fit(units)
    return [[t[i] for i in rng.permutation(SEATS)] for t in tables if len(t) == SEATS]


def first_fit(units: Iterable[list[int]]) -> list[list[int]]:
    """The units (players who sit together) in tables of SEATS, in order, each in the first table with room
    for it, else in a new one. The tables with 1..SEATS-1 free seats are kept by their free count, in heaps of
    their indices: the first with room is the least index at the tops of the heaps of enough free seats (a
    scan of every table for each unit took O(players²) a round, over 100 s for 100,000 players)."""
    tables: list[list[int]] = []
    free: list[list[int]] = [[] for _ in range(SEATS)]  # free[f]: a heap of the indices of tables with f seats free
    for u in units:
        best, where = len(tables), 0
        for f in range(len(u), SEATS):
            if free[f] and free[f][0] < best:
                best, where = free[f][0], f
        if best == len(tables):
            tables.append(list(u))
        else:
            heapq.heappop(free[where])
            tables[best].extend(u)
        left = SEATS - len(tables[best])
        if left > 0:
            heapq.heappush(free[left], best)
    return tables


def _schedule(hands: int, n: int, pairs: list[Pair], opts: Options, rng: np.random.Generator) -> Iterator[Sitting]:
    """Who sits where for how many hands, lazily (a room of 10**9 hands is never held in memory)."""
    total = 0
    rnd = 0
    while total < hands:
        for k, seats in enumerate(_form_tables(n, pairs, opts, rng)):
            length = min(int(rng.geometric(1.0 / opts.run_length)), hands - total)
            if length <= 0:
                break
            yield Sitting(rnd, f"t{rnd + 1:04d}-{k + 1}", seats, length)
            total += length
        rnd += 1


@dataclass
class _Hand:
    """One planned hand: where it is, who sits in each seat, which pairs collude in it."""

    index: int
    sitting: Sitting
    seats: list[int]
    colluding: list[Pair]


def _plan_hands(sittings: Iterable[Sitting], pairs: list[Pair], rng: np.random.Generator) -> Iterator[_Hand]:
    colluders = [p for p in pairs if p.style is not None]
    n = 0
    for st in sittings:
        for j in range(st.hands):
            seats = st.seats[j % SEATS:] + st.seats[:j % SEATS]  # seats rotate one place a hand
            active = [p for p in colluders if p.a in seats and p.b in seats and rng.random() < p.share]
            yield _Hand(n, st, seats, active)
            n += 1


def _copy(rng: np.random.Generator) -> np.random.Generator:
    out = np.random.Generator(type(rng.bit_generator)())
    out.bit_generator.state = rng.bit_generator.state
    return out


class _Plan:
    """The room's plan, replayable in constant memory with exactly the random draws of planning it whole
    (every schedule draw, then every per-hand draw, then the play's): the draws are replayed from saved
    generator states instead of keeping every hand."""

    def __init__(self, hands: int, n: int, pairs: list[Pair], opts: Options, rng: np.random.Generator):
        self.args = (hands, n, pairs, opts)
        self.start = _copy(rng)
        for _ in _schedule(hands, n, pairs, opts, rng):  # where the per-hand draws start
            pass
        self.after_schedule = _copy(rng)

    def __iter__(self) -> Iterator[_Hand]:
        hands, n, pairs, opts = self.args
        return _plan_hands(_schedule(hands, n, pairs, opts, _copy(self.start)), pairs, _copy(self.after_schedule))

    def consume(self, rng: np.random.Generator) -> None:
        """Advance ``rng`` past every per-hand draw (``rng`` is at the end of the schedule's draws)."""
        hands, n, pairs, opts = self.args
        for _ in _plan_hands(_schedule(hands, n, pairs, opts, _copy(self.start)), pairs, rng):
            pass


def _deals(b: int, rng: np.random.Generator) -> np.ndarray:
    """b shuffled deals as (b, 4) card masks."""
    perm = rng.permuted(np.tile(np.arange(52, dtype=np.int64), (b, 1)), axis=1).reshape(b, SEATS, HAND_SIZE)
    return np.bitwise_or.reduce(np.left_shift(np.int64(1), perm), axis=2)


def _weights_cache(pairs: list[Pair]) -> dict[tuple[str, float], np.ndarray]:
    return {(p.style, p.strength): colluder_weights(p.style, p.strength) for p in pairs if p.style is not None}


@dataclass
class _Played:
    """A played batch with its deals and think times."""

    deals: np.ndarray
    batch: Batch
    ms: np.ndarray
    first: np.ndarray  # seat holding 7S


def _play_batch(batch: list[_Hand], people: list[Player], styles: dict[tuple[str, float], np.ndarray],
                rng: np.random.Generator) -> _Played:
    """Deal and play a batch of planned hands."""
    b = len(batch)
    deals = _deals(b, rng)
    weights = np.broadcast_to(HONEST, (b, SEATS, NF)).copy()
    temps = np.empty((b, SEATS))
    partners = np.full((b, SEATS), -1, np.int64)
    lams = np.zeros((b, SEATS))
    samples = np.zeros((b, SEATS), np.int64)
    pace = np.empty((b, SEATS))
    extra = np.zeros((b, SEATS))
    use = np.ones((b, SEATS))
    for i, h in enumerate(batch):
        for s, pi in enumerate(h.seats):
            pl = people[pi]
            temps[i, s], samples[i, s], pace[i, s] = pl.temperature, pl.samples, pl.pace_ms
        for p in h.colluding:
            sa, sb = h.seats.index(p.a), h.seats.index(p.b)
            assert p.style is not None
            # in one-way feeding only the feeder (the pair's first player) knows the other's hand;
            # the receiver plays honestly
            roles = [(sa, sb)] + ([] if p.style == "feed" else [(sb, sa)])
            for me, other in roles:
                weights[i, me] = styles[(p.style, p.strength)]
                partners[i, me] = other
                lams[i, me] = p.strength
                use[i, me] = p.decisions
                if p.slow:
                    extra[i, me] = CONSULT_MS
    played = play_batch(deals, weights, temps, partners=partners, lams=lams, samples=samples,
                        seed=int(rng.integers(2**31)), use=use)
    # the actor of action n is (first + n) % 4, first being the seat holding 7S
    first = np.argmax((deals >> 6) & 1, axis=1)
    actor = (first[:, None] + np.arange(ACTIONS_PER_HAND)[None, :]) % SEATS
    rows = np.arange(b)[:, None]
    ms = think_times(played.nopts, played.diffs, pace[rows, actor], extra[rows, actor], rng)
    return _Played(deals, played, ms, first)


#: Log action fields of every engine action (kind, card code), built once: the hot path of writing.
_KIND = ["play"] * COVER + ["cover"] * COVER
_CODE = list(CANONICAL) * 2


def _record(h: _Hand, played: _Played, i: int, people: list[Player], hand_id: str,
            started_at: datetime) -> Record:
    """The log record of hand i of a played batch, scored by ``settle``."""
    first = int(played.first[i])
    finish = [ACTIONS_PER_HAND - SEATS + (s - first) % SEATS for s in range(SEATS)]
    out = settle(played.batch.points[i].tolist(), played.batch.last7[i].tolist(), finish)
    acts = [Action((first + n) % SEATS, _KIND[a], _CODE[a], t)
            for n, (a, t) in enumerate(zip(played.batch.actions[i].tolist(), played.ms[i].tolist()))]
    return Record(format="bieqi-log", version=1, hand_id=hand_id, table_id=h.sitting.table_id, started_at=started_at,
                  players=[people[p].id for p in h.seats], deal=deal_to_codes(played.deals[i].tolist()),
                  actions=acts, result=Result(scores=list(out.scores), points=list(out.points),
                                              multipliers=list(out.multipliers), tong=list(out.tong),
                                              dutou=list(out.dutou), ranking=list(out.ranking)))


def _records(plan: Iterable[_Hand], people: list[Player], pairs: list[Pair], prefix: str,
             rng: np.random.Generator) -> Iterator[Record]:
    """Play the plan batch by batch, yielding each hand's record."""
    styles = _weights_cache(pairs)
    clock: dict[str, int] = {}  # table -> ms after START when its next hand starts
    current_round, round_start, round_end = -1, 0, 0
    hands = iter(plan)
    lo = 0
    while batch := list(islice(hands, BATCH)):
        if current_round >= 0:
            clock = {k: v for k, v in clock.items() if v >= round_start}  # tables of past rounds: done
        played = _play_batch(batch, people, styles, rng)
        for i, h in enumerate(batch):
            st = h.sitting
            if st.round != current_round:  # tables re-form once every table of the last round is done
                current_round = st.round
                round_start = round_end + 60_000 if lo + i else 0
            t0 = clock.get(st.table_id, round_start)
            yield _record(h, played, i, people, f"{prefix}{h.index + 1:06d}", START + timedelta(milliseconds=t0))
            clock[st.table_id] = t0 + int(played.ms[i, -1]) + GAP_BETWEEN_HANDS_MS
            round_end = max(round_end, clock[st.table_id])
        lo += len(batch)


def _truth(seed: int, hands: int, opts: Options, people: list[Player], pairs: list[Pair],
           plan: Iterable[_Hand]) -> dict[str, Any]:
    together: dict[tuple[int, int], int] = {}
    colluded: dict[tuple[int, int], int] = {}
    for h in plan:
        for p in pairs:
            if p.a in h.seats and p.b in h.seats:
                together[(p.a, p.b)] = together.get((p.a, p.b), 0) + 1
        for p in h.colluding:
            colluded[(p.a, p.b)] = colluded.get((p.a, p.b), 0) + 1
    role = {i: "honest" for i in range(len(people))}
    colluding, friends = [], []
    for p in pairs:
        entry: dict[str, Any] = {"players": sorted([people[p.a].id, people[p.b].id]),
                                 "hands_together": together.get((p.a, p.b), 0)}
        if p.style is None:
            role[p.a] = role[p.b] = "friend"
            friends.append(entry)
            continue
        role[p.a] = role[p.b] = "colluder"
        entry.update(style=p.style, share=p.share, strength=p.strength, decisions=p.decisions, slow=p.slow,
                     colluding_hands=colluded.get((p.a, p.b), 0))
        if p.style == "feed":
            entry["feeder"] = people[p.a].id
        colluding.append(entry)
    opt = {k: v for k, v in vars(opts).items() if k != "extra"}
    return {"variant": "bieqi", "seed": seed, "hands": hands, "options": opt,
            "players": {pl.id: {**pl.to_dict(), "role": role[i]} for i, pl in enumerate(people)},
            "colluding_pairs": colluding, "friend_pairs": friends}


def simulate(*, hands: int, players: int, seed: int, **options: Any) -> Simulation:
    """A room of ``players`` playing ``hands`` hands of standard 憋七 (options: see :class:`Options`).

    Raises ValueError for options that make no room. The records are produced lazily.
    """
    known = set(Options.__dataclass_fields__) - {"extra"}
    opts = Options(**{k: v for k, v in options.items() if k in known and v is not None},
                   extra={k: v for k, v in options.items() if k not in known and v is not None})
    opts.check(players)
    if hands < 0:
        raise ValueError("hands must be >= 0")
    if _table_chance(players, opts.presence) < 1e-3:  # else the room would take forever, or never end
        raise ValueError(f"presence {opts.presence} of {players} players: fewer than one round in 1,000 would seat a "
                         f"table of {SEATS}; give a larger presence")
    rng = np.random.default_rng(seed)
    people, pairs = _population(players, opts, rng)
    plan = _Plan(hands, players, pairs, opts, rng)  # rng: now past the schedule's draws
    truth = _truth(seed, hands, opts, people, pairs, plan)
    plan.consume(rng)  # ... and past the per-hand draws: the play's draws follow
    prefix = opts.prefix or f"s{seed}-"
    return Simulation(_records(plan, people, pairs, prefix, rng), truth)
