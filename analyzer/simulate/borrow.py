"""Simulated tables of the borrowing variant: honest players, cheats who borrow holding a live card, lending pairs.

Players sit at tables of ``hands_per_table`` consecutive hands; each hand's dealer is the previous
hand's loser, so the logs pass the cross-hand check. Everything is drawn from one seeded generator.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from analyzer.cards import BIG_JOKER, FULL_DECK, SMALL_JOKER, parse_card, scan
from analyzer.simulate import Simulation
from analyzer.rules import NEXT_LIVE, SEATS
from analyzer.variants.borrow import (
    BORROW,
    DEFAULT_RULES,
    LEND,
    NAME,
    BorrowRecord,
    BorrowRules,
    State,
    make_record,
    random_deal,
    steps_to_live,
)

Style = Literal["lend", "borrow", "both"]
STYLES: tuple[str, ...] = ("lend", "borrow", "both")


@dataclass(frozen=True, slots=True)
class Cast:
    """Who cheats how: seats' players are looked up here at every decision."""

    cheats: frozenset[str]  # borrow while holding a live card
    partner: dict[str, str]  # lending pairs, both directions
    cheat_rate: float
    cheat_limit: int  # illegal borrows per cheat per hand: sparing, so the hand does not drag on


def play_score(st: State, c: int) -> int:
    """How much playing live card ``c`` helps the player: own cards it frees, minus others' cards it frees."""
    opened = NEXT_LIVE[c]
    own = st.hands[st.turn]
    return 2 * (opened & own).bit_count() - (opened & ~own & ~st.table & FULL_DECK).bit_count()


def choose_play(st: State, rng: random.Random) -> int:
    """The live card that frees most of one's own cards and fewest of others' (random among equals)."""
    options = list(scan(st.live_in_hand()))
    best = max(play_score(st, c) for c in options)
    return rng.choice([c for c in options if play_score(st, c) == best])


def choose_lend(st: State, rng: random.Random, *, favour: bool) -> int:
    """The card to hand over: honestly the least useful (the joker first: it is never live), or, for a
    partner, the most useful one the lender can spare (never the joker while there is another card)."""
    lendable = st.lendable(st.lender)
    own_live = lendable & st.live
    if favour and own_live.bit_count() == 1 and lendable != own_live:
        # keep one's only live card: the lender plays next, and lending it would bounce it back and forth
        lendable &= ~own_live
    options = list(scan(lendable))
    sign = -1 if favour else 1
    best = max(sign * steps_to_live(st.table, c) for c in options)
    return LEND + rng.choice([c for c in options if sign * steps_to_live(st.table, c) == best])


def wants_illegal_borrow(st: State, cast: Cast, player: str, done: int, rng: random.Random) -> bool:
    """A cheat holding live cards borrows instead when every play would free more of others' cards
    than of their own (憋人: squeeze the next player), at the cast's rate, ``done`` times so far.
    Never at the opening 7♠, which no one may refuse."""
    return (player in cast.cheats and st.n > 0 and done < cast.cheat_limit and st.next_holder(st.turn) != st.turn
            and max(play_score(st, c) for c in scan(st.live_in_hand())) <= 0 and rng.random() < cast.cheat_rate)


def play_hand(deal: Sequence[int], players: Sequence[str], cast: Cast, rng: random.Random,
              rules: BorrowRules = DEFAULT_RULES) -> State:
    """Play one hand to the end with the cast's policies."""
    st = State(deal, rules)
    illegal = [0] * SEATS
    while not st.is_terminal():
        t = st.turn
        if st.lender >= 0:
            st.push(choose_lend(st, rng, favour=cast.partner.get(players[st.lender]) == players[t]))
        elif not st.live_in_hand():
            st.push(BORROW)
        elif wants_illegal_borrow(st, cast, players[t], illegal[t], rng):
            illegal[t] += 1
            st.push(BORROW)
        else:
            st.push(choose_play(st, rng))
    return st


def think_times(n: int, rng: random.Random) -> list[int]:
    """Cumulative ms of ``n`` actions with log-normal thinking (median 1.5 s)."""
    out, t = [], 0
    for _ in range(n):
        t += int(rng.lognormvariate(7.3, 0.6))
        out.append(t)
    return out


def simulate(*, hands: int, players: int | Sequence[str], seed: int, colluders: int = 0, style: Style | None = None,
             hands_per_table: int = 10, cheat_rate: float = 0.5, cheat_limit: int = 2, joker: str = "BJ",
             rules: BorrowRules | None = None) -> Simulation:
    """A room of ``hands`` hands among a pool of players (a count, or their ids).

    ``colluders`` pairs of players cheat in ``style``: "lend" (they lend each other their most useful
    card; default), "borrow" (each borrows while holding a live card: invalid logs by design), or
    "both". The truth names the ``cheats`` (illegal borrowers) and the lending ``pairs``.
    """
    pool = [f"p{k + 1:02d}" for k in range(players)] if isinstance(players, int) else list(players)
    style = style or "lend"
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, not {style!r}")
    if len(pool) < SEATS or 2 * colluders > len(pool):
        raise ValueError(f"need at least 4 players and 2 per colluding pair (got {len(pool)} for {colluders} pairs)")
    if isinstance(hands_per_table, bool) or not isinstance(hands_per_table, int) or hands_per_table < 1:
        raise ValueError(f"hands_per_table must be a whole number >= 1, not {hands_per_table!r}")
    if isinstance(cheat_rate, bool) or not isinstance(cheat_rate, (int, float)) or not 0 <= cheat_rate <= 1:
        raise ValueError(f"cheat_rate must be between 0 and 1, not {cheat_rate!r}")
    if isinstance(cheat_limit, bool) or not isinstance(cheat_limit, int) or cheat_limit < 0:
        raise ValueError(f"cheat_limit must be a whole number >= 0, not {cheat_limit!r}")
    if rules is not None and not isinstance(rules, BorrowRules):
        raise ValueError(f"rules cannot be given as an option value ({rules!r}); the simulator uses the seed texts' rules")
    if not isinstance(joker, str):
        raise ValueError(f"joker must be SJ or BJ, not {joker!r}")
    j = parse_card(joker, jokers=True)
    if j not in (SMALL_JOKER, BIG_JOKER):
        raise ValueError(f"joker must be SJ or BJ, not {joker!r}")
    rng = random.Random(seed)
    bad = rng.sample(pool, 2 * colluders)
    pairs = [sorted(bad[k:k + 2]) for k in range(0, len(bad), 2)] if style != "borrow" else []
    cast = Cast(cheats=frozenset(bad if style != "lend" else ()),
                partner={a: b for x, y in pairs for a, b in ((x, y), (y, x))}, cheat_rate=cheat_rate,
                cheat_limit=cheat_limit)
    truth: dict[str, Any] = {"variant": NAME, "seed": seed, "style": style, "colluders": sorted(bad),
                             "cheats": sorted(cast.cheats), "pairs": pairs}
    return Simulation(_records(hands, pool, cast, rng, hands_per_table, j, rules or DEFAULT_RULES), truth)


def _records(hands: int, pool: list[str], cast: Cast, rng: random.Random, hands_per_table: int, joker: int,
             rules: BorrowRules) -> Iterator[BorrowRecord]:
    seated: list[str] = []
    dealer = 0
    for k in range(hands):
        if k % hands_per_table == 0:  # a new table: four players from the pool, the first dealer at random
            seated = rng.sample(pool, SEATS)
            dealer = rng.randrange(SEATS)
        table = f"t{k // hands_per_table + 1:05d}"
        deal = random_deal(rng, dealer, joker)
        st = play_hand(deal, seated, cast, rng, rules)
        yield make_record(st, deal, hand_id=f"{table}-{k % hands_per_table + 1:03d}", players=seated, dealer=dealer,
                          table_id=table, ms=think_times(st.n, rng))
        dealer = st.outcome().loser
